// Alibaba GPU-sharing pods on one simulated GPU under PACK: pods whose gpu_milli fit together run
// in lanes of their own at the speed `profiled` gives them, a pod of a whole GPU takes
// --assumed-memory, and salus-sim refuses bad values of it. Finish times are worked out by hand.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cluster/cluster_file.h"
#include "run/cli.h"
#include "run/load.h"
#include "run/sim_runner.h"
#include "support/programs.h"
#include "support/temp_files.h"

namespace core = salus::core;
namespace traces = salus::traces;

namespace {

constexpr core::TimeNs s = core::kNsPerS;

const std::string kHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";

// A pod created and scheduled at `created`, running `seconds`, asking for `milli` of one GPU.
std::string pod(const std::string& name, int milli, int created, int seconds) {
  return name + ",4000,8192,1," + std::to_string(milli) + ",,LS,Succeeded," + std::to_string(created) + "," +
         std::to_string(created + seconds) + "," + std::to_string(created) + "\n";
}

struct Run {
  std::vector<core::JobSpec> jobs;
  salus::run::PolicyRun run;
};

// PACK on one 16 GiB GPU, interference `profiled` (lanes at 1 / max(1, sum u)), no switching cost.
Run pack(const std::string& name, const std::string& csv, const std::string& assumed = "1") {
  traces::LoadOptions load;
  load.assumed_memory = traces::parse_assumed_memory(assumed);
  const std::string path = salus::test::temp_file(name, kHeader + csv);
  auto t = salus::run::load_jobs(path, traces::Catalog::default_path(), 16 * core::kGiB, 1.0, load);
  salus::run::SimConfig cfg;
  cfg.switch_cost_ns = 0;
  cfg.interference = "profiled";
  Run r{t.jobs, salus::run::simulate(t.jobs, "pack", cfg)};
  for (const core::JobState& st : r.run.outcome.jobs) REQUIRE(st.status == core::JobStatus::kDone);
  return r;
}

}  // namespace

TEST_CASE("gpu sharing: three pods of 300 gpu_milli run in three lanes at once, at full speed (sum u = 0.9)") {
  // d (a whole GPU, E = 16 GiB by default) finds no room beside the three and no lane as large: it
  // waits for them, then runs alone in a lane of its own.
  const Run r = pack("three.csv", pod("a", 300, 100, 1000) + pod("b", 300, 100, 1000) + pod("c", 300, 100, 1000) +
                                      pod("d", 1000, 100, 500));
  const auto& jobs = r.run.outcome.jobs;
  CHECK(r.jobs[0].gpu_util_ppm == 300'000);
  CHECK(r.jobs[3].gpu_util_ppm == 1'000'000);
  CHECK(jobs[0].lane != jobs[1].lane);
  CHECK(jobs[1].lane != jobs[2].lane);
  CHECK(jobs[0].lane != jobs[2].lane);
  for (int i = 0; i < 3; ++i) {
    CHECK(jobs[i].first_start_ns == 0);
    CHECK(jobs[i].finish_ns == 1000 * s);
  }
  CHECK(jobs[3].first_start_ns == 1000 * s);
  CHECK(jobs[3].finish_ns == 1500 * s);
  CHECK(r.run.outcome.max_concurrent_lanes == 3);
}

TEST_CASE("gpu sharing: with --assumed-memory 0.1 the whole-GPU pod gets a fourth lane and all four share the GPU") {
  // u = 0.3 x 3 + 1 = 1.9: every lane runs at 1/1.9 until d's 500 s of work is done at 950 s; a, b
  // and c have then done 500 s of theirs and finish the other 500 s at full speed (sum u = 0.9).
  const Run r = pack("four.csv",
                     pod("a", 300, 100, 1000) + pod("b", 300, 100, 1000) + pod("c", 300, 100, 1000) +
                         pod("d", 1000, 100, 500),
                     "0.1");
  const auto& jobs = r.run.outcome.jobs;
  CHECK(r.jobs[3].ephemeral == traces::share_of(16 * core::kGiB, 100'000));
  CHECK(r.jobs[3].gpu_util_ppm == 1'000'000);
  CHECK(r.run.outcome.max_concurrent_lanes == 4);
  CHECK(jobs[3].first_start_ns == 0);
  CHECK(jobs[3].finish_ns == 950 * s);
  for (int i = 0; i < 3; ++i) CHECK(jobs[i].finish_ns == 1450 * s);
}

TEST_CASE("gpu sharing: a whole-GPU pod that arrives first takes every later pod into its lane unless less is assumed") {
  // Algorithm 1: no new lane fits beside a lane of the whole GPU, so the pods join it and run one
  // after another (PACK runs a lane's jobs in admission order). Arrivals count from the earliest
  // creation_time, so d arrives at 0 and the others at 50 s: they finish at 500, 800, 1100, 1400 s.
  const std::string csv = pod("d", 1000, 50, 500) + pod("a", 300, 100, 300) + pod("b", 300, 100, 300) +
                          pod("c", 300, 100, 300);
  const Run whole = pack("first.csv", csv);
  const auto& w = whole.run.outcome.jobs;
  for (int i = 1; i < 4; ++i) CHECK(w[i].lane == w[0].lane);
  CHECK(w[0].finish_ns == 500 * s);
  CHECK(w[1].finish_ns == 800 * s);
  CHECK(w[2].finish_ns == 1100 * s);
  CHECK(w[3].finish_ns == 1400 * s);
  CHECK(whole.run.outcome.max_concurrent_lanes == 1);
  // Assumed 0.1 of the GPU: d's lane is too small for a 0.3 pod and a new lane fits, so each pod
  // opens its own: from 50 s four lanes at sum u = 1.9 (d started alone at 0).
  const Run tenth = pack("first_tenth.csv", csv, "0.1");
  const auto& t = tenth.run.outcome.jobs;
  CHECK(tenth.run.outcome.max_concurrent_lanes == 4);
  for (int i = 1; i < 4; ++i) {
    CHECK(t[i].lane != t[0].lane);
    CHECK(t[i].first_start_ns == 50 * s);
  }
}

TEST_CASE("gpu sharing: pods of 300, 300 and 400 gpu_milli fill one GPU together, each at full speed") {
  const Run r = pack("fill.csv", pod("a", 300, 0, 600) + pod("b", 300, 0, 600) + pod("c", 400, 0, 600));
  CHECK(r.run.outcome.max_concurrent_lanes == 3);
  for (const core::JobState& st : r.run.outcome.jobs) CHECK(st.finish_ns == 600 * s);
}

TEST_CASE("gpu sharing: salus-sim refuses a bad --assumed-memory with exit 2 and prints the assumption it takes") {
  const std::string trace = "--trace tests/data/traces/import/alibaba.csv --policy fifo ";
  auto sim = [](const std::string& args) { return salus::test::run_program(SALUS_SOURCE_DIR, SALUS_SIM_BIN, args); };
  salus::test::ProgramResult r = sim(trace + "--assumed-memory 2");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-sim: --assumed-memory: a fraction of the GPU's memory must be in (0, 1], got '2' (a size "
                 "needs a unit, e.g. 8GiB)\n");
  r = sim(trace + "--assumed-memory 8GB/2");
  CHECK(r.code == 2);
  CHECK(r.err.starts_with("salus-sim: --assumed-memory: expected a fraction in (0, 1] of the GPU's memory or a size "
                          "with a unit (8GiB), got '8GB/2' ("));
  r = sim(trace + "--assumed-memory 0GiB");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-sim: --assumed-memory: a size must be positive, got '0GiB'\n");
  r = sim(trace + "--assumed-memory 4GiB");
  CHECK(r.code == 0);
  CHECK(r.out.find("\nnote: 2 jobs have no memory figure: assumed 4GiB of the GPU's memory (P = 0, E = 4GiB, at most "
                   "the capacity, u = 1; --assumed-memory 4GiB)\n") != std::string::npos);
  r = sim(trace);
  CHECK(r.code == 0);
  CHECK(r.out.find("\nnote: 2 jobs have no memory figure: assumed the whole GPU (P = 0, E = capacity, u = 1), as Salus "
                   "assumes for a job that sends no estimates (--assumed-memory FRACTION|SIZE sets another)\n") !=
        std::string::npos);
}

TEST_CASE("gpu sharing on GPUs of mixed memory: a pod's share is of the largest GPU of the kinds it names") {
  // Two T4s of 16 GiB and one V100M32 of 32 GiB. A whole-GPU pod naming T4 is sized on a T4 (it
  // used to be sized on the largest GPU, 32 GiB, and was rejected: no T4 is that large); half a T4
  // is 8 GiB; a pod naming no kind, or only a kind the cluster lacks, is sized on the largest GPU.
  salus::cluster::ClusterSpec c = salus::cluster::ClusterSpec::uniform(3, 16 * core::kGiB);
  c.kinds = {{"T4", 16 * core::kGiB, salus::cluster::kSpeedOne}, {"V100M32", 32 * core::kGiB, salus::cluster::kSpeedOne}};
  c.gpus[0].kind = c.gpus[1].kind = 0;
  c.gpus[2].kind = 1;
  c.gpus[2].capacity = 32 * core::kGiB;
  CHECK(c.capacity_for_kinds("T4") == 16 * core::kGiB);
  CHECK(c.capacity_for_kinds("T4|V100M32") == 32 * core::kGiB);
  CHECK(c.capacity_for_kinds("") == 32 * core::kGiB);
  CHECK(c.capacity_for_kinds("A100") == 32 * core::kGiB);
  auto with_spec = [](const std::string& name, int milli, const std::string& spec) {
    return name + ",4000,8192,1," + std::to_string(milli) + "," + spec + ",LS,Succeeded,100,1100,100\n";
  };
  const std::string path = salus::test::temp_file(
      "mixed.csv", kHeader + with_spec("t4", 1000, "T4") + with_spec("half", 500, "T4") + with_spec("any", 1000, "") +
                       with_spec("v100", 250, "V100M32") + with_spec("gone", 1000, "A100"));
  const auto t = salus::run::load_jobs(path, traces::Catalog::default_path(), c, 1.0);
  REQUIRE(t.jobs.size() == 5);
  CHECK(t.jobs[0].ephemeral == 16 * core::kGiB);
  CHECK(t.jobs[1].ephemeral == 8 * core::kGiB);
  CHECK(t.jobs[2].ephemeral == 32 * core::kGiB);
  CHECK(t.jobs[3].ephemeral == 8 * core::kGiB);
  CHECK(t.jobs[4].ephemeral == 32 * core::kGiB);
  bool noted = false;
  for (const std::string& n : t.trace.notes) noted = noted || n.find("GPUs of mixed memory") != std::string::npos;
  CHECK(noted);
  // Every pod naming a kind the cluster has runs there (none rejected for its size).
  salus::run::SimConfig cfg;
  cfg.cluster = c;
  const salus::run::PolicyRun r = salus::run::simulate(t.jobs, "fifo", cfg);
  for (std::size_t i = 0; i < 4; ++i) CHECK(r.outcome.jobs[i].status == core::JobStatus::kDone);
}
