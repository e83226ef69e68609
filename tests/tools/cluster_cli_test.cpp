// salus-sim's cluster options: the README's worked example on two GPUs (computed by hand there),
// the summary's cluster fields, the per-GPU --out files (a gpu column) on a hand-computed gang
// trace, and bad options with exit status 2.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "support/programs.h"
#include "support/temp_files.h"

namespace {

salus::test::ProgramResult sim(const std::string& args) {
  return salus::test::run_program(SALUS_SOURCE_DIR, SALUS_SIM_BIN, args);
}

}  // namespace

TEST_CASE("salus-sim --gpus 2: the README's worked cluster example") {
  const std::string json = (salus::test::scratch() / "cluster.json").string();
  const auto r = sim("--trace traces/examples/hand.csv --interference none --switch-cost-ms 0 --gpus 2 "
                     "--policy fifo,srtf,pack --summary-json '" + json + "'");
  REQUIRE(r.code == 0);
  CHECK(r.out ==
        "salus-sim: traces/examples/hand.csv (native, 3 jobs), cluster of 2 GPUs of 16 GiB, placement per policy "
        "(fifo first-fit, srtf least-loaded, pack util-pack), queue backfill, interference none, switch cost 0 ms\n"
        "Policy   Lanes          Makespan   Avg. Queuing     Avg. JCT      95% JCT   Done  Rejected  Failed  Interrupted\n"
        "fifo     exclusive        1.30 s         0.00 s       0.63 s       1.00 s      3         0       0            0\n"
        "srtf     single           1.30 s         0.00 s       0.63 s       1.00 s      3         0       0            0\n"
        "pack     auto             1.30 s         0.00 s       0.63 s       1.00 s      3         0       0            0\n"
        "fifo     placement first-fit, GPUs busy at most 2, busy GPU-time 1.90 s for 1.90 s of work; JCT by size: 1 GPU: 3 jobs, avg 0.63 s\n"
        "srtf     placement least-loaded, GPUs busy at most 2, busy GPU-time 1.90 s for 1.90 s of work; JCT by size: 1 GPU: 3 jobs, avg 0.63 s\n"
        "pack     placement util-pack, GPUs busy at most 2, busy GPU-time 1.90 s for 1.90 s of work; JCT by size: 1 GPU: 3 jobs, avg 0.63 s\n");
  const nlohmann::json s = nlohmann::json::parse(salus::test::slurp(json));
  CHECK(s["cluster"]["gpus"] == 2);
  CHECK(s["cluster"]["placement"] == "per policy");
  CHECK(s["results"][1]["cluster"]["placement"] == "least-loaded");
  const auto& fifo = s["results"][0]["cluster"];
  CHECK(fifo["placement"] == "first-fit");
  CHECK(fifo["job_gpus"] == nlohmann::json::parse("[[0], [1], [1]]"));
  CHECK(fifo["gpus_busy"] == nlohmann::json::parse("[[0, 1], [0.25, 2], [0.35, 1], [0.5, 2], [1.0, 1], [1.3, 0]]"));
  REQUIRE(fifo["jct_by_size"].size() == 1);
  CHECK(fifo["jct_by_size"][0]["gpus"] == 1);
  CHECK(fifo["jct_by_size"][0]["jobs"] == 3);
  CHECK(fifo["jct_by_size"][0]["avg_jct_s"].get<double>() == doctest::Approx((1.0 + 0.1 + 0.8) / 3));
  // PACK with first-fit named: b and c open lanes of their own beside a on GPU 0, as on one GPU.
  const auto ff = sim("--trace traces/examples/hand.csv --interference none --switch-cost-ms 0 --gpus 2 "
                      "--policy pack --placement first-fit --summary-json '" + json + "'");
  REQUIRE(ff.code == 0);
  const nlohmann::json f = nlohmann::json::parse(salus::test::slurp(json));
  CHECK(f["cluster"]["placement"] == "first-fit");
  CHECK(f["results"][0]["cluster"]["job_gpus"] == nlohmann::json::parse("[[0], [0], [0]]"));
  // The one-GPU path writes no cluster fields.
  const auto one = sim("--trace traces/examples/hand.csv --policy fifo --summary-json '" + json + "'");
  REQUIRE(one.code == 0);
  CHECK_FALSE(nlohmann::json::parse(salus::test::slurp(json)).contains("cluster"));
}

TEST_CASE("salus-sim: bad cluster options exit 2 naming what is wrong") {
  auto r = sim("--gpus 0");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-sim: --gpus: must be an integer in [1, 1000000]\n");
  r = sim("--gpus 2 --placement worst-fit");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-sim: unknown placement 'worst-fit' (valid: first-fit, best-fit, least-loaded, util-pack); did you mean 'first-fit'?\n");
  const std::string file = salus::test::temp_file("cl.csv", "nodes,gpus_per_node,gpu_mem\n2,4,16\n");
  r = sim("--cluster '" + file + "'");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-sim: " + file + ":2: gpu_mem: needs a unit (e.g. 16GiB, 80GB), got '16'\n");
  r = sim("--cluster '" + file + "' --gpus 3");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-sim: --gpus and --cluster: give one of them\n");
}

TEST_CASE("salus-sim --cluster with GPU kinds: the summary's cluster header lists the kinds and each GPU's") {
  const std::string file =
      salus::test::temp_file("kinds.csv", "nodes,gpus_per_node,gpu_mem,kind,speed\n1,2,16GiB,P100,1\n1,1,32GiB,V100,2\n");
  const std::string json = (salus::test::scratch() / "kinds.json").string();
  const auto r = sim("--trace traces/examples/hand.csv --cluster '" + file + "' --kind-speed V100=2.5 "
                     "--policy fifo --quiet --summary-json '" + json + "'");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const nlohmann::json c = nlohmann::json::parse(salus::test::slurp(json))["cluster"];
  CHECK(c["gpus"] == 3);
  REQUIRE(c["kinds"].size() == 2);
  CHECK(c["kinds"][0] == nlohmann::json{{"name", "P100"}, {"gpu_mem_bytes", 16LL << 30}, {"speed", 1.0}, {"gpus", 2}});
  CHECK(c["kinds"][1] == nlohmann::json{{"name", "V100"}, {"gpu_mem_bytes", 32LL << 30}, {"speed", 2.5}, {"gpus", 1}});
  CHECK(c["gpu_kinds"] == nlohmann::json{0, 0, 1});
  // A cluster without kinds keeps the header it had.
  const auto u = sim("--trace traces/examples/hand.csv --gpus 2 --policy fifo --quiet --summary-json '" + json + "'");
  REQUIRE(u.code == 0);
  const nlohmann::json cu = nlohmann::json::parse(salus::test::slurp(json))["cluster"];
  CHECK_FALSE(cu.contains("kinds"));
  CHECK_FALSE(cu.contains("gpu_kinds"));
}

TEST_CASE("salus-sim --out on a cluster of several GPUs: every GPU's lanes, memory and lane moves, a gpu column") {
  // Hand-computed (FIFO, first-fit, 100 ms iterations, no switching cost, as
  // tests/cluster/cluster_timeline_test.cpp): a on GPU 0 from 0 to 0.5 s; g (2 GPUs) waits for
  // both; c on GPU 1 from 0.2 to 0.4 s; g on GPUs 0 and 1 from 0.5 to 0.8 s, in a lane of its own
  // on each (FIFO: one lane per job, lane ids per GPU).
  const std::string trace = salus::test::temp_file("gang_out.csv",
                                                   "job_id,arrival_s,iterations,persistent_mib,ephemeral_mib,iter_ms,gpus\n"
                                                   "a,0,5,1000,1000,100,1\n"
                                                   "g,0.1,3,1000,1000,100,2\n"
                                                   "c,0.2,2,1000,1000,100,1\n");
  const std::string dir = (salus::test::scratch() / "gang_out").string();
  const std::string args = "--trace '" + trace + "' --interference none --switch-cost-ms 0 --gpus 2 --placement first-fit ";
  const auto r = sim(args + "--policy fifo,fair --out '" + dir + "'");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("note: a cluster of several GPUs: --out writes every GPU's timeline, memory and lane moves, each "
                   "row led by its gpu (lane ids are per GPU)") != std::string::npos);
  auto file = [&](const std::string& name) { return salus::test::slurp(dir + "/" + name); };
  CHECK(file("fifo_timeline.csv") ==
        "gpu,lane,job_id,start_s,end_s,iterations,switch_s,rotation\n"
        "0,0,a,0,0.5,5,0,\n"
        "0,1,g,0.5,0.8,3,0,\n"
        "1,0,c,0.2,0.4,2,0,\n"
        "1,1,g,0.5,0.8,3,0,\n");
  CHECK(file("fifo_job_gpus.csv") == "id,gpus\na,0\ng,0+1\nc,1\n");
  // Memory: each GPU's samples, GPU by GPU, in time order; GPU 1 holds nothing before c.
  const std::string mem = file("fifo_memory.csv");
  CHECK(mem.rfind("gpu,time_s,persistent_mib,lanes_reserved_mib,ephemeral_active_mib,lanes\n0,0,", 0) == 0);
  CHECK(mem.find("\n1,0,0,0,0,0\n1,0.2,") != std::string::npos);
  CHECK(file("fifo_lane_moves.csv").rfind("gpu,time_s,lane,from_offset_mib,from_size_mib,to_offset_mib,to_size_mib\n0,0,0,,", 0) == 0);
  // FAIR's rows lie on the GPUs of each job too, and the files are the same on a second run.
  const std::string fair = file("fair_timeline.csv");
  CHECK(fair.find("\n0,") != std::string::npos);
  CHECK(fair.find("\n1,") != std::string::npos);
  const std::string again = (salus::test::scratch() / "gang_out2").string();
  REQUIRE(sim(args + "--policy fifo,fair --out '" + again + "'").code == 0);
  for (const char* name : {"fifo_timeline.csv", "fifo_memory.csv", "fifo_lane_moves.csv", "fair_timeline.csv",
                           "fair_memory.csv", "fair_lane_moves.csv"}) {
    CAPTURE(name);
    CHECK(file(name) == salus::test::slurp(again + "/" + name));
  }
  // --timeline off: no timeline, memory still per GPU; --timeline full: FAIR's row per run.
  const std::string off = (salus::test::scratch() / "gang_off").string();
  REQUIRE(sim(args + "--policy fair --timeline off --out '" + off + "'").code == 0);
  CHECK_FALSE(std::filesystem::exists(off + "/fair_timeline.csv"));
  CHECK(salus::test::slurp(off + "/fair_memory.csv") == file("fair_memory.csv"));
  const std::string full = (salus::test::scratch() / "gang_full").string();
  REQUIRE(sim(args + "--policy fair --timeline full --out '" + full + "'").code == 0);
  const std::string rows = salus::test::slurp(full + "/fair_timeline.csv");
  CHECK(rows.rfind("gpu,lane,job_id,", 0) == 0);
  CHECK(rows.find(",\n") != std::string::npos);  // runs: an empty rotation field
  std::size_t lines = 0, rotations = 0;
  for (std::size_t at = rows.find('\n'); at + 1 < rows.size(); at = rows.find('\n', at + 1)) {
    ++lines;
    const std::size_t end = rows.find('\n', at + 1);
    if (rows[end - 1] != ',') ++rotations;
  }
  CHECK(lines >= 4);        // a, c and g on each of its GPUs at least
  CHECK(rotations == 0);    // full: no plans, so no rotation rows
  // A one-GPU cluster keeps the one-GPU columns.
  const std::string one = (salus::test::scratch() / "gang_one").string();
  REQUIRE(sim("--trace '" + trace + "' --gpus 1 --policy fifo --out '" + one + "'").code == 0);
  CHECK(salus::test::slurp(one + "/fifo_timeline.csv").rfind("lane,job_id,", 0) == 0);
}
