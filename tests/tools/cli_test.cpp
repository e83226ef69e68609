// salus-sim as a user runs it: exit codes, exact error messages, golden output, determinism.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/programs.h"
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

using Result = salus::test::ProgramResult;
using salus::test::scratch;
using salus::test::slurp;

/// Runs salus-sim from the source directory (so relative paths in outputs are stable).
Result sim(const std::string& args) { return salus::test::run_program(SALUS_SOURCE_DIR, SALUS_SIM_BIN, args); }

fs::path write_file(const std::string& name, const std::string& text) { return salus::test::temp_file(name, text); }

const std::string kHand = "--trace traces/examples/hand.csv --profiles traces/profiles/catalog.json";

/// Checks that every file of folder `a` has the same bytes in folder `b`; returns how many.
int same_files(const fs::path& a, const fs::path& b) {
  int files = 0;
  for (const auto& e : fs::directory_iterator(a)) {
    CAPTURE(e.path().filename().string());
    CHECK(slurp(e.path()) == slurp(b / e.path().filename()));
    ++files;
  }
  return files;
}

}  // namespace

TEST_CASE("help exits 0 and lists the policies") {
  const Result r = sim("--help");
  CHECK(r.code == 0);
  CHECK(r.out.find("--switch-cost-ms") != std::string::npos);
  // The policy and interference tables, as the registries print them.
  CHECK(r.out.find("  fair      time sharing") != std::string::npos);
  CHECK(r.out.find("  profiled  each workload's utilisation") != std::string::npos);
}

TEST_CASE("bad command lines exit 2 with the exact message") {
  struct Case {
    std::string args, err;
  };
  const Case cases[] = {
      {kHand + " --policy fifo,lifo",
       "salus-sim: unknown policy 'lifo' (valid: fifo, srtf, pack, fair, las, priority; cluster policies: dlas-gpu, dlas, max-min, fifo-rounds); did you mean 'fifo'?\n"},
      {kHand + " --policy fifo,xyzzy", "salus-sim: unknown policy 'xyzzy' (valid: fifo, srtf, pack, fair, las, priority; cluster policies: dlas-gpu, dlas, max-min, fifo-rounds)\n"},
      // A size without a unit once meant bytes, and every job was rejected.
      {kHand + " --gpu-mem 16", "salus-sim: --gpu-mem: '16' has no unit (write e.g. 16GiB, 16MiB or 16B)\n"},
      {kHand + " --polcy fifo", "salus-sim: unrecognised option '--polcy' (did you mean --policy?) (see --help)\n"},
      {kHand + " --lane-shrink yes", "salus-sim: --lane-shrink: must be on or off, got 'yes'\n"},
      {kHand + " --paging true", "salus-sim: --paging: must be on or off, got 'true'\n"},
      {kHand + " --format helio",
       "salus-sim: --format: unknown trace format 'helio' (valid: native, json, tiresias, gavel, philly, helios, "
       "alibaba, acme, lucid, pai2020, pollux); did you mean 'helios'?\n"},
      {kHand + " --durations exact", "salus-sim: --durations: unknown source 'exact' (valid: trace, catalog)\n"},
      {kHand + " --window 10", "salus-sim: --window: expected START:END in seconds, got '10'\n"},
      {kHand + " --window 2h:1h", "salus-sim: --window: END must be after START, got '2h:1h'\n"},
      {kHand + " --window 0:1y", "salus-sim: --window: END: unknown time unit 'y' (valid: ms, s, min, h, d)\n"},
      {kHand + " --sample 0", "salus-sim: --sample: must be a fraction in (0, 1]\n"},
      {kHand + " --assumed-iter-ms 0", "salus-sim: --assumed-iter-ms: must be a positive number\n"},
      {kHand + " --policy fifo,fifo", "salus-sim: --policy: 'fifo' is listed twice\n"},
      {kHand + " --policy fifo,,pack",
       "salus-sim: --policy: an empty item in 'fifo,,pack' (valid: fifo, srtf, pack, fair, las, priority; cluster policies: dlas-gpu, dlas, max-min, fifo-rounds)\n"},
      {kHand + " --gpu-mem 16XB",
       "salus-sim: --gpu-mem: unknown size unit 'XB' (valid: B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)\n"},
      {kHand + " --gpu-mem 0GiB", "salus-sim: --gpu-mem: must be positive\n"},
      {kHand + " --lanes many", "salus-sim: --lanes: unknown lane mode 'many' (valid: single, auto, exclusive)\n"},
      {kHand + " --interference mps",
       "salus-sim: --interference: unknown interference model 'mps' (valid: none, profiled, pairs, crowds, shares, capacity, or auto)\n"},
      {kHand + " --switch-cost-ms -1", "salus-sim: --switch-cost-ms: must be a non-negative number\n"},
      {kHand + " --policy dlas-gpu --dlas-thresholds 7200,3250",
       "salus-sim: --dlas-thresholds: '7200,3250' must be seconds, positive and increasing, comma-separated (e.g. 3250,7200)\n"},
      {kHand + " --policy dlas-gpu --dlas-thresholds 60,,120",
       "salus-sim: --dlas-thresholds: '60,,120' must be seconds, positive and increasing, comma-separated (e.g. 3250,7200)\n"},
      {kHand + " --policy dlas --dlas-starvation -1", "salus-sim: --dlas-starvation: must be a number in [0, 1e6] (0: off)\n"},
      {kHand + " --policy dlas --dlas-checks often", "salus-sim: --dlas-checks: unknown value 'often' (valid: exact, tiresias)\n"},
      {kHand + " --policy dlas --restart-cost-ms -5", "salus-sim: --restart-cost-ms: must be a non-negative number\n"},
      {kHand + " --policy dlas-gpu --cluster traces/examples/gavel_cluster.csv",
       "salus-sim: --policy dlas-gpu: this cluster policy runs GPUs of one kind and speed; this cluster names kinds (3): use "
       "max-min or a per-GPU policy there\n"},
      {kHand + " --policy max-min --reset-s -1", "salus-sim: --reset-s: must be a non-negative number of seconds, at most 1e9\n"},
      {kHand + " --profile-noise 100", "salus-sim: --profile-noise: must be in [0, 100)\n"},
      {kHand + " --timeline iterations",
       "salus-sim: --timeline: unknown timeline mode 'iterations' (valid: off, runs, full)\n"},
      {kHand + " --timeline-rows 0", "salus-sim: --timeline-rows: must be an integer in [1, 1000000000000]\n"},
      {kHand + " --bogus", "salus-sim: unrecognised option '--bogus' (see --help)\n"},
      {kHand + " --switch-cost-ms abc",
       "salus-sim: the argument ('abc') for option '--switch-cost-ms' is invalid (see --help)\n"},
      {"--trace no/such/file.csv", "salus-sim: no/such/file.csv: cannot open trace file: No such file or directory\n"},
      {"--trace traces/examples/hand.csv --profiles no/such.json", "salus-sim: no/such.json: cannot open catalog file: No such file or directory\n"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    const Result r = sim(c.args);
    CHECK(r.code == 2);
    CHECK(r.err == c.err);
    CHECK(r.out.empty());
  }
}

TEST_CASE("every program prints its version") {
  const std::string sim_bin = SALUS_SIM_BIN;
  const std::string dir = sim_bin.substr(0, sim_bin.rfind('/') + 1);
  for (const std::string tool : {"salus-sim", "salus-run", "salus-profile", "salus-experiment", "salus-catalog", "salus-trace"}) {
    CAPTURE(tool);
    const Result r = salus::test::run_program(SALUS_SOURCE_DIR, dir + tool, "--version");
    CHECK(r.code == 0);
    CHECK(r.out.rfind(tool + " 0.1.0", 0) == 0);
    CHECK(r.out.back() == '\n');
  }
}

TEST_CASE("a trace that is not UTF-8 exits 2 with file:line before any table is printed") {
  const fs::path t = write_file("latin1.csv",
                                "job_id,arrival_s,iterations,persistent_mib,ephemeral_mib,iter_ms\n"
                                "a,0,1,1,1,1\n"
                                "caf\xE9,0,1,1,1,1\n");
  const Result r = sim("--trace '" + t.string() + "' --summary-json " + (scratch() / "latin1.json").string());
  CHECK(r.code == 2);
  CHECK(r.err == "salus-sim: " + t.string() + ":3: not UTF-8 text (byte 0xE9)\n");
  CHECK(r.out.empty());
}

TEST_CASE("an imported trace prints its mapping as notes") {
  const Result r = sim("--trace tests/data/traces/import/helios.csv --policy fifo --interference none");
  CHECK(r.code == 0);
  CHECK(r.out.find("salus-sim: tests/data/traces/import/helios.csv (helios, 2 jobs)") != std::string::npos);
  CHECK(r.out.find("note: helios: duration = duration, GPUs = gpu_num;") != std::string::npos);
  CHECK(r.out.find("note: skipped 1 job: CPU-only (gpu_num 0)\n") != std::string::npos);
  // Multi-GPU jobs on one GPU: folded, and said so.
  CHECK(r.out.find("note: 2 jobs with more than one GPU replayed on one GPU, iteration time x GPUs (the same "
                   "GPU-time)\n") != std::string::npos);
  // 8 GPUs x 3600 s + 2 GPUs x 2.5 s on one GPU: the makespan is in hours.
  CHECK(r.out.find(" h ") != std::string::npos);
}

TEST_CASE("a bad trace names file:line and exits 2") {
  const fs::path bad = write_file("bad.csv",
                                  "job_id,arrival_s,iterations,persistent_mib,ephemeral_mib,iter_ms\n"
                                  "a,0,10,100,100,5\n"
                                  "b,1,ten,100,100,5\n");
  const Result r = sim("--trace '" + bad.string() + "'");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-sim: " + bad.string() + ":3: iterations must be a positive integer, got 'ten'\n");
}

TEST_CASE("a job larger than the GPU is rejected with a reason and the run goes on") {
  const fs::path t = write_file("big.csv",
                                "job_id,arrival_s,iterations,persistent_mib,ephemeral_mib,iter_ms\n"
                                "small,0,10,100,100,5\n"
                                "huge,0,10,1024,1024,5\n");
  const Result r = sim("--trace '" + t.string() + "' --gpu-mem 1GiB --policy fifo");
  CHECK(r.code == 0);
  CHECK(r.out.find("note: job huge rejected: needs P + E = 1 GiB + 1 GiB = 2 GiB, more than the GPU's 1 GiB (fifo)\n") !=
        std::string::npos);
  // Under several policies the same rejection is one note.
  const Result all = sim("--trace '" + t.string() + "' --gpu-mem 1GiB --policy fifo,srtf,pack");
  CHECK(all.code == 0);
  CHECK(all.out.find("note: job huge rejected: needs P + E = 1 GiB + 1 GiB = 2 GiB, more than the GPU's 1 GiB "
                     "(all policies)\n") != std::string::npos);
  CHECK(all.out.find("note: fifo:") == std::string::npos);
  CHECK(r.out.find("fifo     exclusive        0.05 s         0.00 s       0.05 s       0.05 s      1         1") !=
        std::string::npos);
}

TEST_CASE("every trace format runs under all four policies") {
  for (const char* trace : {"traces/examples/small.csv", "traces/examples/small.json", "traces/examples/tiresias_small.csv"}) {
    CAPTURE(trace);
    const Result r = sim(std::string("--trace ") + trace);
    CHECK(r.code == 0);
    for (const char* row : {"\nfifo     exclusive", "\nsrtf     single", "\npack     auto", "\nfair     single"}) {
      CHECK(r.out.find(row) != std::string::npos);
    }
  }
}

TEST_CASE("fifo ignores --lanes and says so") {
  const Result r = sim(kHand + " --lanes auto --policy fifo,fair");
  CHECK(r.code == 0);
  CHECK(r.out.find("note: fifo runs in exclusive mode; --lanes auto does not apply to it") != std::string::npos);
  CHECK(r.out.find("\nfair     auto") != std::string::npos);
}

// The golden summary of the hand-checkable trace (ideal GPU, no switching cost). Its numbers,
// by hand (a: 10 x 100 ms, arrives 0; b: 2 x 50 ms at 0.25 s; c: 4 x 200 ms at 0.5 s):
//   fifo: a 0-1.0, b 1.0-1.1, c 1.1-1.9; JCT 1.0, 0.85, 1.4.
//   srtf: a 0-0.3 (b arrives, cut at a's boundary), b 0.3-0.4, a 0.4-1.1 (c arrives at 0.5 with
//         800 ms left against a's 600 ms), c 1.1-1.9; JCT 1.1, 0.15, 1.4.
//   pack: three lanes (4000 + 2000 + 8000 MiB + P 3500 MiB <= 16 GiB): a 0-1.0, b 0.25-0.35,
//         c 0.5-1.3; JCT 1.0, 0.1, 0.8.
//   fair: a 0-0.3 (its 0.2-0.3 iteration counts after b joined: a 100 ms, b 0), b 0.3-0.4 (both
//         of its 50 ms iterations: 0 + 50 < 100 keeps it first), a 0.4-0.5; c joins at 0.5, the
//         instant a's iteration ends, so that iteration counts before the join (a 0, c 0, tie ->
//         a): a 0.5-0.6, c 0.6-0.8, a 0.8-1.0, c 1.0-1.2, a 1.2-1.4, c 1.4-1.6, a 1.6-1.7 (done),
//         c 1.7-1.9; JCT 1.7, 0.15, 1.4; queuing 0, 0.05, 0.1.
//   las:  a 0-0.3 (attained 300 when b joins), b 0.3-0.4 (both iterations), a 0.4-0.5 (400); c
//         joins at 0.5: c 0.5-0.9 (0, 200 < 400; at 400 a wins the tie), a 0.9-1.0 (500), c 1.0-1.2
//         (600), a 1.2-1.4 (700), c 1.4-1.6 (done), a 1.6-1.9; JCT 1.9, 0.15, 1.1; queuing 0, 0.05, 0.
//   priority: every level 0, so arrival order in the one lane, each to completion: FIFO's times.
TEST_CASE("golden summary of the hand trace, byte for byte") {
  const fs::path out = scratch() / "hand.json";
  const Result r = sim(kHand + " --interference none --switch-cost-ms 0 --summary-json '" + out.string() + "'");
  REQUIRE(r.code == 0);
  const std::string got = slurp(out);
  const std::string want = slurp(fs::path(SALUS_TEST_DATA_DIR) / "golden" / "hand_summary.json");
  CHECK(got == want);
  const auto j = nlohmann::json::parse(got);
  auto result = [&](const char* p) {
    for (const auto& x : j["results"]) if (x["policy"] == p) return x;
    FAIL("missing policy");
    return nlohmann::json();
  };
  CHECK(result("fifo")["makespan_s"].get<double>() == doctest::Approx(1.9).epsilon(1e-12));
  CHECK(result("fifo")["avg_jct_s"].get<double>() == doctest::Approx((1.0 + 0.85 + 1.4) / 3).epsilon(1e-12));
  CHECK(result("fifo")["avg_queuing_s"].get<double>() == doctest::Approx((0 + 0.75 + 0.6) / 3).epsilon(1e-12));
  CHECK(result("fifo")["p95_jct_s"].get<double>() == doctest::Approx(1.4).epsilon(1e-12));
  CHECK(result("srtf")["avg_jct_s"].get<double>() == doctest::Approx((1.1 + 0.15 + 1.4) / 3).epsilon(1e-12));
  CHECK(result("srtf")["makespan_s"].get<double>() == doctest::Approx(1.9).epsilon(1e-12));
  CHECK(result("pack")["makespan_s"].get<double>() == doctest::Approx(1.3).epsilon(1e-12));
  CHECK(result("pack")["avg_jct_s"].get<double>() == doctest::Approx((1.0 + 0.1 + 0.8) / 3).epsilon(1e-12));
  CHECK(result("pack")["lanes_opened"] == 3);
  CHECK(result("fair")["avg_jct_s"].get<double>() == doctest::Approx((1.7 + 0.15 + 1.4) / 3).epsilon(1e-12));
  CHECK(result("fair")["p95_jct_s"].get<double>() == doctest::Approx(1.7).epsilon(1e-12));
  CHECK(result("fair")["avg_queuing_s"].get<double>() == doctest::Approx(0.05).epsilon(1e-12));
  CHECK(result("las")["avg_jct_s"].get<double>() == doctest::Approx((1.9 + 0.15 + 1.1) / 3).epsilon(1e-12));
  CHECK(result("las")["avg_queuing_s"].get<double>() == doctest::Approx(0.05 / 3).epsilon(1e-12));
  CHECK(result("priority")["avg_jct_s"].get<double>() == doctest::Approx((1.0 + 0.85 + 1.4) / 3).epsilon(1e-12));
  CHECK(j["lane_shrink"] == true);
}

TEST_CASE("same inputs and seed give byte-identical outputs") {
  const fs::path a = scratch() / "run_a", b = scratch() / "run_b";
  const std::string args = "--trace traces/examples/small.csv --profiles traces/profiles/catalog.json --profile-noise 10 --seed 7";
  REQUIRE(sim(args + " --out '" + a.string() + "'").code == 0);
  REQUIRE(sim(args + " --out '" + b.string() + "'").code == 0);
  CHECK(same_files(a, b) == 26);  // summary, JCT CDF, and 4 files for each of the 6 policies
  // A different seed changes the actual iteration times, so the summary changes.
  const fs::path c = scratch() / "run_c";
  REQUIRE(sim("--trace traces/examples/small.csv --profiles traces/profiles/catalog.json --profile-noise 10 --seed 8 --out '" +
              c.string() + "'").code == 0);
  CHECK(slurp(a / "summary.json") != slurp(c / "summary.json"));
}

// --timeline runs (the default): one row per run of one job in one lane, so SRTF's a, cut at 0.5
// when c joined and resumed at once, is one row 0.4-1.1 (7 iterations), and PACK's c, cut at
// 1.1 for its lane's move, one row 0.5-1.3. --timeline off: no timeline file, the other files
// byte-identical.
TEST_CASE("--timeline runs and off") {
  const fs::path runs = scratch() / "timeline_runs", off = scratch() / "timeline_off";
  const std::string args = kHand + " --interference none --switch-cost-ms 0";
  const Result r = sim(args + " --out '" + runs.string() + "'");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("/{summary.json,jct_cdf.csv,<policy>_{jobs,timeline,memory,lane_moves}.csv}\n") != std::string::npos);
  CHECK(slurp(runs / "srtf_timeline.csv") ==
        "lane,job_id,start_s,end_s,iterations,switch_s,rotation\n0,a,0,0.3,3,0,\n0,b,0.3,0.4,2,0,\n0,a,0.4,1.1,7,0,\n0,c,1.1,1.9,4,0,\n");
  CHECK(slurp(runs / "pack_timeline.csv") ==
        "lane,job_id,start_s,end_s,iterations,switch_s,rotation\n0,a,0,1,10,0,\n1,b,0.25,0.35,2,0,\n2,c,0.5,1.3,4,0,\n");
  const Result o = sim(args + " --timeline off --out '" + off.string() + "'");
  REQUIRE(o.code == 0);
  CHECK(o.out.find("/{summary.json,jct_cdf.csv,<policy>_{jobs,memory,lane_moves}.csv}\n") != std::string::npos);
  int files = 0;
  for (const auto& e : fs::directory_iterator(runs)) {
    const std::string name = e.path().filename().string();
    CAPTURE(name);
    if (name.find("_timeline.csv") != std::string::npos) {
      CHECK_FALSE(fs::exists(off / name));
      continue;
    }
    CHECK(slurp(e.path()) == slurp(off / name));
    ++files;
  }
  CHECK(files == 20);  // summary, JCT CDF, and jobs, memory, lane moves for each of the 6 policies
}

// The rows of --out's timeline, memory and lane-move files wait in memory until the run ends, so
// --timeline-rows bounds them: a run past it stops with exit 2 and writes nothing (a row per
// iteration of a trace of billions would otherwise grow until the machine runs out of memory).
TEST_CASE("--timeline-rows: a run that would keep more rows exits 2 and writes nothing") {
  const fs::path small = scratch() / "rows_small", big = scratch() / "rows_big", plain = scratch() / "rows_default";
  const std::string args = kHand + " --policy fair,las --timeline full";
  const Result r = sim(args + " --timeline-rows 5 --out '" + small.string() + "'");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  const std::string head = "salus-sim: --timeline-rows 5: the run kept more than 5 rows for its files (runs, memory "
                           "samples, lane moves: held in memory until written) by ";
  const std::string tail = " s of simulated time; --timeline runs keeps a rotation as one row per job, off no runs; or "
                           "raise it\n";
  CHECK(r.err.substr(0, head.size()) == head);
  REQUIRE(r.err.size() > head.size() + tail.size());
  CHECK(r.err.substr(r.err.size() - tail.size()) == tail);
  CHECK((!fs::exists(small) || fs::is_empty(small)));
  // Under --timeline runs the advice names off, under off the bound; a bound the run stays within
  // changes nothing.
  const Result runs = sim(kHand + " --policy fair --timeline-rows 3 --out '" + small.string() + "'");
  CHECK(runs.code == 2);
  CHECK(runs.err.find("; --timeline off keeps no runs; or raise --timeline-rows\n") != std::string::npos);
  const Result off = sim(kHand + " --policy fair --timeline off --timeline-rows 3 --out '" + small.string() + "'");
  CHECK(off.code == 2);
  CHECK(off.err.find("; raise --timeline-rows (the memory samples and lane moves are kept)\n") != std::string::npos);
  REQUIRE(sim(args + " --timeline-rows 100000 --out '" + big.string() + "'").code == 0);
  REQUIRE(sim(args + " --out '" + plain.string() + "'").code == 0);
  CHECK(same_files(plain, big) > 5);
}

// FAIR time-shares its lane iteration by iteration. --timeline full has a row per run (here per
// iteration); the default runs, where the simulator ran a rotation in one go, one row per job of
// it (its rotation column numbering the plan) with that job's iterations and switching cost in
// it. Summary, jobs, JCT CDF and lane moves are byte-identical; every job's iterations add up
// to the same in both timelines, each rotation's rows span the rows of full they replace, and the
// memory series keeps one row per rotation instead of one per switch.
TEST_CASE("--timeline runs: FAIR's rotations are rows of their own, everything else as with full") {
  const fs::path runs = scratch() / "fair_runs", full = scratch() / "fair_full";
  const std::string args = kHand + " --policy fair,las";
  REQUIRE(sim(args + " --out '" + runs.string() + "'").code == 0);
  REQUIRE(sim(args + " --timeline full --out '" + full.string() + "'").code == 0);
  for (const char* f : {"summary.json", "jct_cdf.csv", "fair_jobs.csv", "fair_lane_moves.csv", "las_jobs.csv",
                        "las_lane_moves.csv"}) {
    CAPTURE(f);
    CHECK(slurp(runs / f) == slurp(full / f));
  }
  struct Row {
    std::string job;
    double start, end;
    long long iterations;
    double switch_s;
    long long rotation;
  };
  auto rows = [](const fs::path& file) {
    std::istringstream in(slurp(file));
    std::string line;
    std::getline(in, line);
    CHECK(line == "lane,job_id,start_s,end_s,iterations,switch_s,rotation");
    std::vector<Row> out;
    while (std::getline(in, line)) {
      std::vector<std::string> f;
      std::istringstream ls(line);
      for (std::string cell; std::getline(ls, cell, ',');) f.push_back(cell);
      if (line.back() == ',') f.emplace_back();
      REQUIRE(f.size() == 7);
      out.push_back({f[1], std::stod(f[2]), std::stod(f[3]), std::stoll(f[4]), std::stod(f[5]),
                     f[6].empty() ? 0 : std::stoll(f[6])});
    }
    return out;
  };
  for (const char* policy : {"fair", "las"}) {
    CAPTURE(policy);
    const std::vector<Row> compact = rows(runs / (std::string(policy) + "_timeline.csv"));
    const std::vector<Row> every = rows(full / (std::string(policy) + "_timeline.csv"));
    CHECK(compact.size() < every.size());
    int rotation_rows = 0;
    for (const Row& r : every) CHECK(r.rotation == 0);
    std::map<std::string, long long> iters_compact, iters_every;
    std::map<std::string, double> switch_compact, switch_every;
    for (const Row& r : compact) {
      iters_compact[r.job] += r.iterations;
      switch_compact[r.job] += r.switch_s;
      if (r.rotation == 0) continue;
      ++rotation_rows;
      // The rows of full inside the rotation's span hold at most this job's iterations in it
      // (a row of full may run on past the rotation's end; tests/sim/loop_stress_test.cpp
      // checks rotations against single runs exactly).
      long long inside = 0;
      for (const Row& e : every) {
        if (e.job == r.job && e.start >= r.start && e.end <= r.end) inside += e.iterations;
      }
      CHECK(inside <= r.iterations);
    }
    for (const Row& r : every) {
      iters_every[r.job] += r.iterations;
      switch_every[r.job] += r.switch_s;
    }
    CHECK(rotation_rows > 0);
    CHECK(iters_compact == iters_every);
    for (const auto& [job, s] : switch_every) CHECK(switch_compact[job] == doctest::Approx(s));
    const std::string memory = std::string(policy) + "_memory.csv";
    const std::string m_runs = slurp(runs / memory), m_full = slurp(full / memory);
    CHECK(std::count(m_runs.begin(), m_runs.end(), '\n') < std::count(m_full.begin(), m_full.end(), '\n'));
  }
}

// What salus-sim takes from a measured catalog: a pairs table makes "shares" the default
// interference model and allows "pairs", "switch_ms" is the default switching cost,
// "first_iter_ms" lengthens each job's first dispatch.
namespace {

// Two workloads of 100 ms iterations at u = 0.6 (100 + 100 MiB); `top` adds top-level members
// (with their trailing comma), `a_extra` members of w_a.
std::string measured_catalog(const std::string& top, const std::string& a_extra = "") {
  return "{\n  \"format\": \"salus-catalog/1\",\n  \"gpu\": \"test\",\n" + top +
         "  \"workloads\": [\n"
         "    {\"name\": \"w_a\", \"persistent_mib\": 100, \"ephemeral_mib\": 100, \"iter_ms\": 100, \"gpu_util\": 0.6, "
         "\"source\": \"t\"" + a_extra + "},\n"
         "    {\"name\": \"w_b\", \"persistent_mib\": 100, \"ephemeral_mib\": 100, \"iter_ms\": 100, \"gpu_util\": 0.6, "
         "\"source\": \"t\"}\n  ]\n}\n";
}

// w_a beside w_b is slowed 1.25x, w_b beside w_a 1.5x.
const std::string kPairs =
    "  \"pairs\": [{\"a\": \"w_a\", \"b\": \"w_b\", \"slowdown_a\": 1.25, \"slowdown_b\": 1.5}],\n";

std::string first_line(const std::string& out) { return out.substr(0, out.find('\n') + 1); }

nlohmann::json summary_of(const fs::path& p) { return nlohmann::json::parse(slurp(p)); }

double finish_s(const nlohmann::json& summary, std::size_t job) {
  return summary["results"][0]["jobs"][job]["finish_s"].get<double>();
}

}  // namespace

TEST_CASE("a catalog with a pairs table: auto picks shares, --interference pairs runs the measured pairs") {
  // PACK, a (w_a, 5 x 100 ms) and b (w_b, 2 x 100 ms) in two lanes from 0, no switching cost.
  //   pairs: b's 200 ms of work at 1.5 -> 300 ms; a has done 300 / 1.25 = 240 ms, 260 ms left
  //          alone -> 560 ms.
  //   profiled (u 0.6 + 0.6 = 1.2 for both): b 240 ms; a has done 200 ms, 300 left -> 540 ms.
  const fs::path cat = write_file("pairs_catalog.json", measured_catalog(kPairs));
  const fs::path trace = write_file("pairs_trace.csv", "job_id,workload,arrival_s,iterations\na,w_a,0,5\nb,w_b,0,2\n");
  const fs::path json = scratch() / "pairs_summary.json";
  const std::string args = "--trace '" + trace.string() + "' --profiles '" + cat.string() +
                           "' --policy pack --switch-cost-ms 0 --summary-json '" + json.string() + "'";
  auto line = [&](const char* model) {
    return "salus-sim: " + trace.string() + " (native, 2 jobs), GPU 16 GiB, interference " + model +
           ", switch cost 0 ms\n";
  };
  // --interference not given: shares (weights fitted to the table), the same run as asking for it.
  const Result r = sim(args);
  REQUIRE(r.code == 0);
  CHECK(first_line(r.out) == line("shares"));
  const nlohmann::json by_default = summary_of(json);
  CHECK(by_default["interference"] == "shares");
  const Result shares = sim(args + " --interference shares");
  REQUIRE(shares.code == 0);
  CHECK(summary_of(json) == by_default);
  // --interference pairs: the table's figures.
  const Result pairs = sim(args + " --interference pairs");
  REQUIRE(pairs.code == 0);
  CHECK(first_line(pairs.out) == line("pairs"));
  nlohmann::json s = summary_of(json);
  CHECK(s["interference"] == "pairs");
  CHECK(finish_s(s, 0) == doctest::Approx(0.56).epsilon(1e-12));
  CHECK(finish_s(s, 1) == doctest::Approx(0.30).epsilon(1e-12));
  // --interference profiled given explicitly wins over the table.
  const Result p = sim(args + " --interference profiled");
  REQUIRE(p.code == 0);
  CHECK(first_line(p.out) == line("profiled"));
  s = summary_of(json);
  CHECK(s["interference"] == "profiled");
  CHECK(finish_s(s, 0) == doctest::Approx(0.54).epsilon(1e-12));
  CHECK(finish_s(s, 1) == doctest::Approx(0.24).epsilon(1e-12));
}

TEST_CASE("a catalog with crowds and \"interference\": \"crowds\": auto runs the pairs times the crowd factor") {
  // PACK, a (w_a), b and c (w_b), 3 x 100 ms each, in three lanes from 0, no switching cost.
  //   pairs: a 1 + 2 x 0.25 = 1.5, b and c 1 + 0.5 + 0.2 (w_b beside w_b: u + u = 1.2) = 1.7;
  //          each at least sum u = 1.8: all at 1.8, 300 ms of work -> 540 ms.
  //   crowds: the crowd of (w_a, w_b, w_b) measured 2.7 a lane, 8.1 over the pairs' 5.4: c(3) = 1.5;
  //          all at 2.7 -> 810 ms.
  const std::string crowds =
      kPairs + "  \"crowds\": [{\"workloads\": [\"w_a\", \"w_b\", \"w_b\"], \"slowdowns\": [2.7, 2.7, 2.7]}],\n";
  const fs::path cat = write_file("crowds_catalog.json", measured_catalog(crowds + "  \"interference\": \"crowds\",\n"));
  const fs::path trace =
      write_file("crowds_trace.csv", "job_id,workload,arrival_s,iterations\na,w_a,0,3\nb,w_b,0,3\nc,w_b,0,3\n");
  const fs::path json = scratch() / "crowds_summary.json";
  const std::string args = "--trace '" + trace.string() + "' --profiles '" + cat.string() +
                           "' --policy pack --switch-cost-ms 0 --summary-json '" + json.string() + "'";
  const Result r = sim(args);
  REQUIRE(r.code == 0);
  CHECK(first_line(r.out) == "salus-sim: " + trace.string() + " (native, 3 jobs), GPU 16 GiB, interference crowds, switch cost 0 ms\n");
  nlohmann::json s = summary_of(json);
  CHECK(s["interference"] == "crowds");
  for (std::size_t j = 0; j < 3; ++j) CHECK(finish_s(s, j) == doctest::Approx(0.81).epsilon(1e-12));
  const Result pairs = sim(args + " --interference pairs");
  REQUIRE(pairs.code == 0);
  s = summary_of(json);
  for (std::size_t j = 0; j < 3; ++j) CHECK(finish_s(s, j) == doctest::Approx(0.54).epsilon(1e-12));
  // Without crowds, --interference crowds exits 2 with the message.
  const fs::path no_crowds = write_file("no_crowds_catalog.json", measured_catalog(kPairs));
  const Result bad = sim("--trace '" + trace.string() + "' --profiles '" + no_crowds.string() + "' --interference crowds");
  CHECK(bad.code == 2);
  CHECK(bad.err == "salus-sim: interference model 'crowds' needs a catalog with a \"pairs\" table and \"crowds\" "
                   "(salus-profile --crowds measures them)\n");
}

TEST_CASE("a catalog without pairs: profiled by default, and --interference pairs or shares exits 2 with the message") {
  const fs::path cat = write_file("plain_catalog.json", measured_catalog(""));
  const fs::path trace = write_file("plain_trace.csv", "job_id,workload,arrival_s,iterations\na,w_a,0,5\nb,w_b,0,2\n");
  const fs::path json = scratch() / "plain_summary.json";
  const std::string args = "--trace '" + trace.string() + "' --profiles '" + cat.string() + "' --policy pack";
  const Result r = sim(args + " --summary-json '" + json.string() + "'");
  REQUIRE(r.code == 0);
  CHECK(first_line(r.out) ==
        "salus-sim: " + trace.string() + " (native, 2 jobs), GPU 16 GiB, interference profiled, switch cost 1 ms\n");
  CHECK(summary_of(json)["interference"] == "profiled");
  const Result bad = sim(args + " --interference pairs");
  CHECK(bad.code == 2);
  CHECK(bad.err ==
        "salus-sim: interference model 'pairs' needs a catalog with a \"pairs\" table (salus-profile measures one)\n");
  CHECK(bad.out.empty());
  const Result bad_shares = sim(args + " --interference shares");
  CHECK(bad_shares.code == 2);
  CHECK(bad_shares.err ==
        "salus-sim: interference model 'shares' needs a catalog with a \"pairs\" table (salus-profile measures one)\n");
  CHECK(bad_shares.out.empty());
  // An empty table is no table.
  const fs::path empty = write_file("empty_pairs_catalog.json", measured_catalog("  \"pairs\": [],\n"));
  const Result e = sim("--trace '" + trace.string() + "' --profiles '" + empty.string() + "' --policy pack");
  REQUIRE(e.code == 0);
  CHECK(first_line(e.out).find(", interference profiled, ") != std::string::npos);
}

TEST_CASE("the catalog's switch_ms is the default switching cost, an entry's its own, --switch-cost-ms wins") {
  // SRTF, one lane: a (w_a, 5 x 100 ms) at 0, b (w_b, 2 x 100 ms) at 50 ms. a is cut at 100 ms;
  // b (200 ms left < 400) runs 100 + sw + 200; a resumes: + sw + 400. Finishes with a cost sw:
  //   0.25 ms (the catalog's): b 300.25 ms, a 700.5 ms
  //   2 ms (given): b 302, a 704;  0 (given): b 300, a 700;  no switch_ms, none given (1 ms): b 301, a 702.
  //   w_a's own 3 ms, b the catalog's 0.25: b 300.25, a 703.25; given 2 ms: every job's, b 302, a 704.
  const fs::path cat = write_file("switch_catalog.json", measured_catalog("  \"switch_ms\": 0.25,\n"));
  const fs::path own = write_file("switch_own_catalog.json", measured_catalog("  \"switch_ms\": 0.25,\n", ", \"switch_ms\": 3"));
  const fs::path plain = write_file("switch_plain_catalog.json", measured_catalog(""));
  const fs::path trace = write_file("switch_trace.csv", "job_id,workload,arrival_s,iterations\na,w_a,0,5\nb,w_b,0.05,2\n");
  const fs::path json = scratch() / "switch_summary.json";
  struct Case {
    fs::path catalog;
    std::string extra;
    std::string shown;
    double switch_ms, a_s, b_s;
  };
  const Case cases[] = {
      {cat, "", "0.25", 0.25, 0.7005, 0.30025},
      {cat, " --switch-cost-ms 2", "2", 2, 0.704, 0.302},
      {cat, " --switch-cost-ms 0", "0", 0, 0.7, 0.3},
      {plain, "", "1", 1, 0.702, 0.301},
      {own, "", "0.25", 0.25, 0.70325, 0.30025},
      {own, " --switch-cost-ms 2", "2", 2, 0.704, 0.302},
  };
  for (const Case& c : cases) {
    CAPTURE(c.catalog.string());
    CAPTURE(c.extra);
    const Result r = sim("--trace '" + trace.string() + "' --profiles '" + c.catalog.string() +
                         "' --policy srtf --summary-json '" + json.string() + "'" + c.extra);
    REQUIRE(r.code == 0);
    CHECK(first_line(r.out) == "salus-sim: " + trace.string() +
                                   " (native, 2 jobs), GPU 16 GiB, interference profiled, switch cost " + c.shown + " ms\n");
    const nlohmann::json s = summary_of(json);
    CHECK(s["switch_cost_ms"].get<double>() == doctest::Approx(c.switch_ms).epsilon(1e-12));
    CHECK(finish_s(s, 0) == doctest::Approx(c.a_s).epsilon(1e-12));
    CHECK(finish_s(s, 1) == doctest::Approx(c.b_s).epsilon(1e-12));
    CHECK(s["results"][0]["switches"] == 2);
  }
}

TEST_CASE("auto is the model the catalog names, and an unknown name in the catalog exits 2 naming the valid ones") {
  const fs::path trace = write_file("named_trace.csv", "job_id,workload,arrival_s,iterations\na,w_a,0,5\nb,w_b,0,2\n");
  const fs::path named = write_file("named_catalog.json", measured_catalog(kPairs + "  \"interference\": \"pairs\",\n"));
  const Result r = sim("--trace '" + trace.string() + "' --profiles '" + named.string() + "' --policy pack");
  REQUIRE(r.code == 0);
  CHECK(first_line(r.out).find(", interference pairs, ") != std::string::npos);
  // --interference still wins over the catalog's.
  const Result given = sim("--trace '" + trace.string() + "' --profiles '" + named.string() + "' --policy pack --interference profiled");
  REQUIRE(given.code == 0);
  CHECK(first_line(given.out).find(", interference profiled, ") != std::string::npos);
  const fs::path bad = write_file("bad_named_catalog.json", measured_catalog("  \"interference\": \"pair\",\n"));
  const Result b = sim("--trace '" + trace.string() + "' --profiles '" + bad.string() + "' --policy pack");
  CHECK(b.code == 2);
  CHECK(b.err == "salus-sim: " + bad.string() +
                     ":1: \"interference\": unknown interference model 'pair' (valid: none, profiled, pairs, crowds, shares, capacity); "
                     "did you mean 'pairs'?\n");
}

TEST_CASE("the catalog's first_iter_ms lengthens each job's first dispatch in salus-sim") {
  // FIFO, no switching cost, no interference: a (w_a, 5 x 100 ms, first iteration 130 ms: 30 ms
  // extra) 0 - 530 ms; b (w_b, no first_iter_ms) 530 - 730 ms.
  const fs::path cat = write_file("first_catalog.json", measured_catalog("", ", \"first_iter_ms\": 130"));
  const fs::path trace = write_file("first_trace.csv", "job_id,workload,arrival_s,iterations\na,w_a,0,5\nb,w_b,0,2\n");
  const fs::path json = scratch() / "first_summary.json";
  const Result r = sim("--trace '" + trace.string() + "' --profiles '" + cat.string() +
                       "' --policy fifo --interference none --switch-cost-ms 0 --summary-json '" + json.string() + "'");
  REQUIRE(r.code == 0);
  const nlohmann::json s = summary_of(json);
  CHECK(finish_s(s, 0) == doctest::Approx(0.53).epsilon(1e-12));
  CHECK(finish_s(s, 1) == doctest::Approx(0.73).epsilon(1e-12));
}

namespace {

/// Runs `tool args` from the source directory with its standard output sent to `stdout_to`.
Result run_with_stdout(const std::string& tool, const std::string& args, const std::string& stdout_to) {
  const fs::path d = scratch();
  const std::string cmd = "cd '" SALUS_SOURCE_DIR "' && '" + salus::test::beside(SALUS_SIM_BIN, tool) + "' " + args +
                          " >" + stdout_to + " 2>'" + (d / "err").string() + "' </dev/null";
  const int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = slurp(d / "err");
  return r;
}

Result tool(const std::string& name, const std::string& args) {
  return salus::test::run_program(SALUS_SOURCE_DIR, salus::test::beside(SALUS_SIM_BIN, name), args);
}

}  // namespace

TEST_CASE("positional arguments and option prefixes are refused with a suggestion, exit 2") {
  struct Case {
    std::string tool, args, err;
  };
  const Case cases[] = {
      // Once ignored: the shipped trace ran and the exit status was 0.
      {"salus-sim", "mytrace.csv", "salus-sim: unexpected argument 'mytrace.csv' (did you mean --trace mytrace.csv?)\n"},
      {"salus-sim", kHand + " gpus 4", "salus-sim: unexpected argument 'gpus' (did you mean --gpus?)\n"},
      {"salus-sim", kHand + " --policy fifo srtf", "salus-sim: unexpected argument 'srtf' (--policy takes one value; see --help)\n"},
      {"salus-run", "traces/examples/hand.csv", "salus-run: unexpected argument 'traces/examples/hand.csv' (did you mean --trace traces/examples/hand.csv?)\n"},
      {"salus-catalog", "catalog.json", "salus-catalog: unexpected argument 'catalog.json' (did you mean --out catalog.json?)\n"},
      {"salus-profile", "--workloads lenet_32 --out x.json y", "salus-profile: unexpected argument 'y' (--out takes one value; see --help)\n"},
      {"salus-experiment", "long_trace fair_three", "salus-experiment: unexpected argument 'fair_three' (at most 1 argument; see --help)\n"},
      // Once guessed as --device, --policy and --summary-json.
      {"salus-run", "--trace traces/examples/hand.csv --devic cpu",
       "salus-run: unrecognised option '--devic' (did you mean --device?) (see --help)\n"},
      {"salus-sim", kHand + " --polic fifo", "salus-sim: unrecognised option '--polic' (did you mean --policy?) (see --help)\n"},
      {"salus-sim", kHand + " --summary out.json", "salus-sim: unrecognised option '--summary' (see --help)\n"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.tool);
    CAPTURE(c.args);
    const Result r = tool(c.tool, c.args);
    CHECK(r.code == 2);
    CHECK(r.err == c.err);
    CHECK(r.out.empty());
  }
}

TEST_CASE("every output path is checked before anything runs: exit 2 naming the option and the path") {
  const fs::path file = write_file("plain.txt", "x\n");
  const std::string dir = scratch().string();
  const std::string f = file.string();
  struct Case {
    std::string tool, args, err;
  };
  const Case cases[] = {
      {"salus-sim", kHand + " --summary-json " + dir, "salus-sim: --summary-json: '" + dir + "' is a folder, not a file\n"},
      {"salus-sim", kHand + " --out " + f + "/out", "salus-sim: --out: '" + f + "/out': '" + f + "' is a file, not a folder\n"},
      {"salus-sim", kHand + " --out " + f, "salus-sim: --out: '" + f + "' is a file, not a folder\n"},
      {"salus-sim", kHand + " --summary-json " + f + "/a/s.json",
       "salus-sim: --summary-json: '" + f + "/a/s.json': '" + f + "' is a file, not a folder\n"},
      // A folder nobody may write in, root included (access() would say yes to root).
      {"salus-sim", kHand + " --summary-json /proc/s.json",
       "salus-sim: --summary-json: '/proc/s.json': cannot write in '/proc' (No such file or directory)\n"},
      {"salus-run", "--trace traces/examples/hand.csv --summary-json " + dir,
       "salus-run: --summary-json: '" + dir + "' is a folder, not a file\n"},
      {"salus-trace", "generate --out " + dir, "salus-trace: --out: '" + dir + "' is a folder, not a file\n"},
      {"salus-catalog", "--out " + f + "/c.json", "salus-catalog: --out: '" + f + "/c.json': '" + f + "' is a file, not a folder\n"},
      {"salus-profile", "--workloads lenet_32 --out " + dir, "salus-profile: --out: '" + dir + "' is a folder, not a file\n"},
      {"salus-experiment", "long_trace --plots off --out " + f, "salus-experiment: --out: '" + f + "' is a file, not a folder\n"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.tool);
    CAPTURE(c.args);
    const Result r = tool(c.tool, c.args);
    CHECK(r.code == 2);
    CHECK(r.err == c.err);
    CHECK(r.out.empty());  // nothing ran: no header, no table, no progress
  }
  CHECK(slurp(file) == "x\n");
}

TEST_CASE("a failed write to standard output exits non-zero naming it") {
  for (const std::string& t : {std::string("salus-sim ") + kHand + " --policy fifo", std::string("salus-catalog"),
                               std::string("salus-trace generate --jobs 3")}) {
    CAPTURE(t);
    const std::string name = t.substr(0, t.find(' '));
    const std::string args = t.find(' ') == std::string::npos ? "" : t.substr(t.find(' ') + 1);
    const Result full = run_with_stdout(name, args, "/dev/full");
    CHECK(full.code == 1);
    CHECK(full.err == name + ": error: cannot write to standard output (No space left on device)\n");
    const Result ok = run_with_stdout(name, args, "/dev/null");
    CHECK(ok.code == 0);
  }
}

TEST_CASE("counts in the programs' own lines are singular for one") {
  const fs::path one = write_file("one_job.csv",
                                  "job_id,arrival_s,iterations,persistent_mib,ephemeral_mib,iter_ms\n"
                                  "a,0,10,100,100,10\n");
  const Result r = sim("--trace " + one.string() + " --profiles traces/profiles/catalog.json --policy fifo");
  CHECK(r.code == 0);
  CHECK(r.out.find("(native, 1 job), GPU 16 GiB") != std::string::npos);
  const Result s = tool("salus-trace", "stats " + one.string());
  CHECK(s.code == 0);
  CHECK(s.out.find("(native, 1 job)\n") != std::string::npos);
  const Result g = tool("salus-trace", "generate --jobs 1 --out " + (scratch() / "gen1.csv").string());
  CHECK(g.code == 0);
  CHECK(g.out == "wrote " + (scratch() / "gen1.csv").string() + " (1 job)\n");
}

TEST_CASE("--paging on: the assumed link speed is a note, each policy's page-outs follow the table") {
  const std::string trace = "--trace traces/long_trace_100.csv --profiles traces/profiles/catalog.json --policy srtf,fifo";
  const Result on = sim(trace + " --paging on --paging-gbps 2 --summary-json " + (scratch() / "paging.json").string());
  REQUIRE(on.code == 0);
  CHECK(on.out.find("note: paging: a host link of 2 GB/s assumed (--paging-gbps)") != std::string::npos);
  // SRTF pages (every page-out is paged back in by the end), FIFO never does.
  const std::size_t srtf = on.out.find("srtf     paging: ");
  REQUIRE(srtf != std::string::npos);
  long outs = -1, ins = -1;
  CHECK(std::sscanf(on.out.c_str() + srtf, "srtf     paging: %ld page-outs, %ld page-ins", &outs, &ins) == 2);
  CHECK(outs > 0);
  CHECK(outs == ins);
  CHECK(on.out.find("fifo     paging: 0 page-outs, 0 page-ins") != std::string::npos);
  // The note is in the summary's notes too.
  const nlohmann::json j = nlohmann::json::parse(slurp(scratch() / "paging.json"));
  bool noted = false;
  for (const auto& n : j.at("notes")) noted = noted || n.get<std::string>().rfind("paging: a host link of 2 GB/s", 0) == 0;
  CHECK(noted);
  // Without paging: neither.
  const Result off = sim(trace);
  REQUIRE(off.code == 0);
  CHECK(off.out.find("paging") == std::string::npos);
}

TEST_CASE("options of the cluster policies given where they do nothing are named in a note") {
  const Result lease = sim(kHand + " --gpus 2 --policy dlas-gpu --queue strict");
  CHECK(lease.code == 0);
  CHECK(lease.out.find("note: --queue, --gangs (and --placement, --lanes without --gpu-sharing) have no effect on the "
                       "cluster policies (dlas-gpu, dlas, max-min, fifo-rounds)") != std::string::npos);
  // --placement and --lanes place and run the lanes beneath; --gpu-sharing serves the cluster policies only.
  const Result beneath = sim(kHand + " --gpus 2 --policy dlas-gpu --gpu-sharing fair --placement first-fit --lanes single");
  CHECK(beneath.code == 0);
  CHECK(beneath.out.find("have no effect") == std::string::npos);
  CHECK(beneath.out.find("with lanes beneath (--gpu-sharing fair)") != std::string::npos);
  // A lane mode the per-GPU policy beneath does not run in is named, as for the per-GPU policies.
  const Result mode = sim(kHand + " --gpus 2 --policy dlas-gpu --gpu-sharing pack --lanes exclusive");
  CHECK(mode.code == 0);
  CHECK(mode.out.find("note: pack runs in auto mode; --lanes exclusive does not apply to it") != std::string::npos);
  const Result sharing = sim(kHand + " --gpus 2 --policy pack --gpu-sharing fair");
  CHECK(sharing.out.find("note: --gpu-sharing has no effect without a cluster policy that preempts") != std::string::npos);
  const Result unknown = sim(kHand + " --gpus 2 --policy dlas-gpu --gpu-sharing lanes");
  CHECK(unknown.code == 2);
  CHECK(unknown.err == "salus-sim: --gpu-sharing: unknown value 'lanes' (valid: exclusive, fifo, srtf, pack, fair, las, priority)\n");
  const Result rounds_beneath = sim(kHand + " --gpus 2 --policy max-min,fifo-rounds --gpu-sharing pack");
  CHECK(rounds_beneath.code == 0);
  CHECK(rounds_beneath.out.find("cluster policies (max-min, fifo-rounds) with lanes beneath (--gpu-sharing pack)") != std::string::npos);
  const Result per_gpu = sim(kHand + " --gpus 2 --policy fifo --dlas-starvation 2 --restart-cost-ms 5 --round-s 60");
  CHECK(per_gpu.code == 0);
  CHECK(per_gpu.out.find("note: --dlas-thresholds, --dlas-starvation and --dlas-checks have no effect without dlas-gpu or dlas "
                         "in --policy") != std::string::npos);
  CHECK(per_gpu.out.find("note: --restart-cost-ms has no effect without a cluster policy that preempts (dlas-gpu, dlas, max-min, fifo-rounds) "
                         "in --policy") != std::string::npos);
  CHECK(per_gpu.out.find("note: --round-s and --reset-s have no effect without max-min or fifo-rounds in --policy") != std::string::npos);
  // max-min takes the restart cost and its rounds, not the dlas options.
  const Result max_min = sim(kHand + " --gpus 2 --policy max-min --dlas-checks tiresias --restart-cost-ms 5 --round-s 60");
  CHECK(max_min.code == 0);
  CHECK(max_min.out.find("--dlas-thresholds, --dlas-starvation and --dlas-checks have no effect") != std::string::npos);
  CHECK(max_min.out.find("--restart-cost-ms has no effect") == std::string::npos);
  CHECK(max_min.out.find("--round-s and --reset-s have no effect") == std::string::npos);
  CHECK(max_min.out.find("note: max-min: rounds of 60 s") != std::string::npos);
  const Result bad = sim(kHand + " --gpus 2 --policy max-min --round-s 0");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--round-s: must be a number of seconds from 1 to 1e9") != std::string::npos);
  // Rounds that would run for ever are refused: a job of 1e9 one-second iterations in 2.5 s rounds.
  const std::string years = salus::test::temp_file("years.csv", "job_id,arrival_s,iterations,iter_ms,persistent_mib,ephemeral_mib,gpus\n"
                                                                 "short,0,10,1000,100,100,1\nlong,5,1000000000,1000,100,100,2\n");
  const Result rounds = sim("--trace '" + years + "' --gpus 2 --policy fifo,fifo-rounds --round-s 2.5");
  CHECK(rounds.code == 2);
  CHECK(rounds.out.empty());
  CHECK(rounds.err == "salus-sim: --round-s 2.5: fifo-rounds would run at least 400000002 rounds (job 'long' alone runs "
                      "1000000000 s at its fastest), more than 100000000: give a longer --round-s\n");
  CHECK(sim("--trace '" + years + "' --gpus 2 --policy fifo-rounds --round-s 100").code == 0);
  const Result both = sim(kHand + " --gpus 2 --policy fifo,dlas-gpu --dlas-starvation 2 --queue strict");
  CHECK(both.code == 0);
  CHECK(both.out.find("have no effect") == std::string::npos);
}
