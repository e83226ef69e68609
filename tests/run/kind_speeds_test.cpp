// Gavel's throughputs per worker type on a cluster of named kinds: load_jobs keeps each job's own
// speeds on the kinds the cluster has (names matched case aside, renamed to the cluster's), drops
// the rest, and says so; the simulated cluster then runs each job at its own speed there. Worked
// out from tests/data/traces/import/gavel_throughputs.json (ResNet-50: 1 step/s on k80, 4 on v100).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cluster/cluster_file.h"
#include "core/errors.h"
#include "run/load.h"
#include "run/sim_runner.h"
#include "support/import.h"
#include "support/temp_files.h"

namespace core = salus::core;
namespace traces = salus::traces;
namespace cluster = salus::cluster;

namespace {

constexpr core::TimeNs ms = core::kNsPerMs;

// One GPU of each named kind, 16 GiB, speed 1.
cluster::ClusterSpec named(const std::vector<std::string>& kinds) {
  cluster::ClusterSpec c = cluster::ClusterSpec::uniform(static_cast<std::int32_t>(kinds.size()), 16 * core::kGiB);
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    c.kinds.push_back({kinds[k], 16 * core::kGiB, cluster::kSpeedOne});
    c.gpus[k].kind = static_cast<std::int32_t>(k);
  }
  return c;
}

std::string note_with(const std::vector<std::string>& notes, const std::string& part) {
  for (const std::string& n : notes) {
    if (n.find(part) != std::string::npos) return n;
  }
  return "";
}

// Two ResNet-50 jobs of 40 steps on one GPU each, arriving at 0 and 100 s.
const std::string kTrace =
    "ResNet-50 (batch size 64)\tcd x && python3 main.py\t/data\t--num_steps\t1\t40\t1\t1\t-1\t0\n"
    "ResNet-50 (batch size 64)\tcd x && python3 main.py\t/data\t--num_steps\t1\t40\t1\t1\t-1\t100\n";

traces::LoadOptions throughputs() {
  traces::LoadOptions o;
  o.throughputs = salus::test::kImportDir + "gavel_throughputs.json";
  return o;
}

}  // namespace

TEST_CASE("kind speeds: a job runs at its own speed on the kind of its worker type, with a note") {
  const std::string path = salus::test::temp_file("kind_speeds.tsv", kTrace);
  // Kinds named like Gavel's worker types in another case: matched, and renamed to the cluster's.
  const cluster::ClusterSpec c = named({"K80", "V100"});
  const auto t = salus::run::load_jobs(path, traces::Catalog::default_path(), c, 1.0, throughputs());
  REQUIRE(t.jobs.size() == 2);
  CHECK(t.jobs[0].iter_ns == 250 * ms);
  CHECK(t.jobs[0].kind_speeds() == std::vector<core::KindSpeed>{{"K80", 250'000}, {"V100", 1'000'000}});
  CHECK(note_with(t.trace.notes, "per-workload speeds") ==
        "per-workload speeds: on GPUs of kind K80, V100 a job runs at its own speed from the trace (2 jobs; Gavel: its "
        "steps per second on that worker type over those its iteration time came from), not the kind's");
  // first-fit: the first job takes the K80 (GPU 0) and runs 40 x 1 s there; the second, arriving
  // at 100 s, takes it again: 40 x 1 s. On the V100 alone they would take 40 x 250 ms.
  salus::run::SimConfig cfg;
  cfg.cluster = c;
  const salus::run::PolicyRun r = salus::run::simulate(t.jobs, "fifo", cfg);
  CHECK(r.outcome.jobs[0].finish_ns == 40'000 * ms);
  CHECK(r.outcome.jobs[1].finish_ns == 140'000 * ms);
  salus::run::SimConfig v100;
  v100.cluster = named({"V100"});
  const auto on_v100 = salus::run::load_jobs(path, traces::Catalog::default_path(), *v100.cluster, 1.0, throughputs());
  CHECK(salus::run::simulate(on_v100.jobs, "fifo", v100).outcome.jobs[0].finish_ns == 10'000 * ms);
  CHECK(note_with(on_v100.trace.notes, "per-workload speeds").find("on GPUs of kind V100 a job") != std::string::npos);
}

TEST_CASE("kind speeds: kinds the trace does not name run at the kind's speed, and the note says which") {
  const std::string path = salus::test::temp_file("kind_speeds_other.tsv", kTrace);
  const auto some = salus::run::load_jobs(path, traces::Catalog::default_path(), named({"v100", "T4"}), 1.0, throughputs());
  CHECK(some.jobs[0].kind_speeds() == std::vector<core::KindSpeed>{{"v100", 1'000'000}});
  CHECK(note_with(some.trace.notes, "per-workload speeds").ends_with("not the kind's; on T4 at the kind's speed"));
  const auto none = salus::run::load_jobs(path, traces::Catalog::default_path(), named({"A100", "T4"}), 1.0, throughputs());
  CHECK(none.jobs[0].kind_speeds().empty());
  CHECK(note_with(none.trace.notes, "jobs' own speeds") ==
        "the trace gives jobs' own speeds on k80, v100; the cluster has no GPU kind of those names (kinds: A100, T4): "
        "every job runs at its kind's speed");
  // A cluster of unnamed GPUs reads no kind speeds and says nothing about them.
  const auto plain =
      salus::run::load_jobs(path, traces::Catalog::default_path(), cluster::ClusterSpec::uniform(2, 16 * core::kGiB), 1.0,
                            throughputs());
  CHECK(note_with(plain.trace.notes, "speeds").empty());
}

TEST_CASE("kind speeds: a throughput of 0 on a worker type keeps the job off GPUs of that kind") {
  // Gavel writes 0 where a job cannot run (e.g. out of memory on a k80).
  const std::string path = salus::test::temp_file("kind_speeds_zero.tsv", kTrace);
  traces::LoadOptions o;
  o.throughputs = salus::test::temp_file(
      "kind_speeds_zero.json",
      R"j({"k80": {"('ResNet-50 (batch size 64)', 1)": {"null": 0.0}}, "v100": {"('ResNet-50 (batch size 64)', 1)": {"null": 4.0}}})j");
  const cluster::ClusterSpec c = named({"k80", "v100"});
  const auto t = salus::run::load_jobs(path, traces::Catalog::default_path(), c, 1.0, o);
  REQUIRE(t.jobs.size() == 2);
  CHECK(t.jobs[0].gpu_kinds() == "v100");
  CHECK(t.jobs[0].kind_speeds() == std::vector<core::KindSpeed>{{"v100", 1'000'000}});
  CHECK(note_with(t.trace.notes, "throughput 0") ==
        "throughput 0 (Gavel: the job cannot run on that worker type): 2 jobs on k80; kept off those GPUs");
  // first-fit would take the k80 (GPU 0); the job runs on the v100 instead, 40 x 250 ms.
  salus::run::SimConfig cfg;
  cfg.cluster = c;
  const salus::run::PolicyRun r = salus::run::simulate(t.jobs, "fifo", cfg);
  CHECK(r.outcome.jobs[0].finish_ns == 10'000 * ms);
  // On a cluster of k80s alone, no GPU can take it: rejected at arrival, with the reason.
  const auto only_k80 = salus::run::load_jobs(path, traces::Catalog::default_path(), named({"k80"}), 1.0, o);
  CHECK(only_k80.jobs[0].gpu_kinds() == "none (throughput 0 on k80)");
  salus::run::SimConfig k80;
  k80.cluster = named({"k80"});
  const salus::run::PolicyRun rk = salus::run::simulate(only_k80.jobs, "fifo", k80);
  CHECK(rk.outcome.jobs[0].status == core::JobStatus::kRejected);
  // A throughput of 0 on the worker type the iteration time comes from is still an error.
  o.worker_type = "k80";
  CHECK_THROWS_AS(salus::run::load_jobs(path, traces::Catalog::default_path(), c, 1.0, o), core::InputError);
}
