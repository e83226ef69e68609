// salus-trace as a user runs it: subcommands, exact errors for bad options, byte-identical
// generated traces, the stats summary, and the shipped long trace matching its documented command.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "support/programs.h"

namespace fs = std::filesystem;

namespace {

using Result = salus::test::ProgramResult;
using salus::test::slurp;

/// Runs salus-trace from the source directory (so relative paths in outputs are stable).
Result trace_tool(const std::string& args) { return salus::test::run_program(SALUS_SOURCE_DIR, SALUS_TRACE_BIN, args); }

std::string write_file(const std::string& name, const std::string& text) { return salus::test::temp_file(name, text); }

// Round figures, so the stats below can be computed by hand.
std::string test_catalog() {
  return write_file("salus_trace_catalog.json", R"({"format": "salus-catalog/1", "gpu": "test GPU", "workloads": [
  {"name": "a_10", "persistent_mib": 100, "ephemeral_mib": 200, "iter_ms": 10, "gpu_util": 0.5, "source": "test"},
  {"name": "b_100", "persistent_mib": 100, "ephemeral_mib": 200, "iter_ms": 100, "gpu_util": 0.5, "source": "test"},
  {"name": "b_infer", "persistent_mib": 10, "ephemeral_mib": 20, "iter_ms": 5, "gpu_util": 0.5, "source": "test"}
]}
)");
}

}  // namespace

TEST_CASE("salus-trace: help, and a missing or unknown subcommand lists the valid ones") {
  Result r = trace_tool("--help");
  CHECK(r.code == 0);
  CHECK(r.out.find("salus-trace generate [options]") != std::string::npos);
  CHECK(r.out.find("salus-trace stats FILE") != std::string::npos);

  r = trace_tool("generate --help");
  CHECK(r.code == 0);
  CHECK(r.out.find("--mean-interarrival-s S (=60)") != std::string::npos);
  CHECK(r.out.find("--duration-sigma X (=1.8)") != std::string::npos);

  r = trace_tool("");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-trace: no subcommand given (valid: generate, stats, formats)\n");
  CHECK(r.out.empty());

  r = trace_tool("generat --jobs 3");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-trace: unknown subcommand 'generat' (valid: generate, stats, formats); did you mean 'generate'?\n");
  CHECK(r.out.empty());
}

TEST_CASE("salus-trace: bad generate and stats options exit 2 with the exact message") {
  const std::string cat = "--profiles '" + test_catalog() + "'";
  struct Case {
    std::string args, err;
  };
  const Case cases[] = {
      {"generate --jobs 0", "salus-trace: --jobs: must be a positive integer, got 0\n"},
      {"generate --jobs -5", "salus-trace: --jobs: must be a positive integer, got -5\n"},
      {"generate --jobs 20000000", "salus-trace: --jobs: must be at most 10000000, got 20000000\n"},
      {"generate --jobs many", "salus-trace: the argument ('many') for option '--jobs' is invalid (see --help)\n"},
      {"generate --seed -1", "salus-trace: --seed: must be an integer in [0, 18446744073709551615], got '-1'\n"},
      {"generate --seed 18446744073709551616",
       "salus-trace: --seed: must be an integer in [0, 18446744073709551615], got '18446744073709551616'\n"},
      {"generate --mean-interarrival-s nan", "salus-trace: --mean-interarrival-s: must be a finite number >= 0\n"},
      {"generate --mean-interarrival-s -1", "salus-trace: --mean-interarrival-s: must be a finite number >= 0\n"},
      {"generate --median-duration-s 0", "salus-trace: --median-duration-s: must be a finite number > 0\n"},
      {"generate --duration-sigma=-0.1", "salus-trace: --duration-sigma: must be a finite number >= 0\n"},
      {"generate --min-duration-s -1", "salus-trace: --min-duration-s: must be a finite number >= 0\n"},
      {"generate --max-duration-s inf", "salus-trace: --max-duration-s: must be a finite number > 0\n"},
      {"generate --min-duration-s 600 --max-duration-s 60",
       "salus-trace: --min-duration-s (600) must not exceed --max-duration-s (60)\n"},
      {"generate " + cat + " --workloads a_10,resnet50_25",
       "salus-trace: --workloads: unknown workload 'resnet50_25' (valid: a_10, b_100, b_infer)\n"},
      {"generate " + cat + " --workloads 'a_10, a_10'", "salus-trace: --workloads: 'a_10' is listed twice\n"},
      {"generate " + cat + " --workloads a_10,", "salus-trace: --workloads: empty workload name\n"},
      {"generate --gang-sizes 1:0.5,,2:0.5", "salus-trace: --gang-sizes: empty item in '1:0.5,,2:0.5'\n"},
      {"generate --gang-sizes 0:1", "salus-trace: --gang-sizes: size '0' must be an integer in [1, 2147483647]\n"},
      {"generate --gang-sizes 1:1,2:-1", "salus-trace: --gang-sizes: weight '-1' of size 2 must be a finite number > 0\n"},
      {"generate --gang-sizes 2:1,2:1", "salus-trace: --gang-sizes: size 2 is listed twice\n"},
      {"generate --shape helio", "salus-trace: --shape: unknown trace shape 'helio' (valid: helios); did you mean 'helios'?\n"},
      {"generate --shape helios --jobs 0", "salus-trace: --jobs: must be a positive integer, got 0\n"},
      {"generate --layout csv", "salus-trace: --layout: unknown trace layout 'csv' (valid: native, helios)\n"},
      {"generate --profiles no/such.json", "salus-trace: no/such.json: cannot open catalog file: No such file or directory\n"},
      {"generate trace.csv", "salus-trace: unexpected argument 'trace.csv' (did you mean --out trace.csv?)\n"},
      {"generate --bogus", "salus-trace: unrecognised option '--bogus' (see --help)\n"},
      {"stats", "salus-trace: stats: no trace file given (usage: salus-trace stats FILE [--profiles P])\n"},
      {"stats no/such.csv", "salus-trace: no/such.csv: cannot open trace file: No such file or directory\n"},
      {"stats a.csv b.csv", "salus-trace: unexpected argument 'b.csv' (at most 1 argument; see --help)\n"},
      // Exact option names only: Boost would take --sampl as --sample.
      {"stats traces/examples/hand.csv --sampl 0.5",
       "salus-trace: unrecognised option '--sampl' (did you mean --sample?) (see --help)\n"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    const Result r = trace_tool(c.args);
    CHECK(r.code == 2);
    CHECK(r.err == c.err);
    CHECK(r.out.empty());
  }
}

TEST_CASE("salus-trace: generate writes the same bytes to a file, again, and to stdout") {
  const std::string cat = test_catalog();
  const fs::path dir = salus::test::scratch();
  const std::string args = "generate --jobs 50 --seed 3 --profiles '" + cat + "' --mean-interarrival-s=45.0";
  const std::string f1 = (dir / "gen1.csv").string(), f2 = (dir / "sub" / "gen2.csv").string();

  Result r = trace_tool(args + " --out '" + f1 + "'");
  REQUIRE(r.code == 0);
  CHECK(r.out == "wrote " + f1 + " (50 jobs)\n");
  CHECK(r.err.empty());
  r = trace_tool(args + " --out '" + f2 + "'");
  REQUIRE(r.code == 0);
  const std::string text = slurp(f1);
  CHECK(text == slurp(f2));
  r = trace_tool(args);
  REQUIRE(r.code == 0);
  CHECK(r.out == text);

  // The header records the canonical command (without --out) and the parameters.
  CHECK(text.starts_with("# Generated by: salus-trace generate --jobs 50 --seed 3 --profiles " + cat +
                         " --mean-interarrival-s 45\n# salus-trace generator: 50 jobs, seed 3\n"));
  CHECK(text.find("\n# workloads, uniform over 2: a_10, b_100\n") != std::string::npos);
  CHECK(text.find("\njob_id,arrival_s,workload,iterations\njob000,0.000,") != std::string::npos);

  r = trace_tool("generate --jobs 50 --seed 4 --profiles '" + cat + "' --mean-interarrival-s=45.0");
  REQUIRE(r.code == 0);
  CHECK(r.out != text);

  // Unwritable output is the user's mistake too.
  r = trace_tool(args + " --out /proc/no/such/dir/x.csv");
  CHECK(r.code == 2);
  CHECK(r.err == "salus-trace: --out: '/proc/no/such/dir/x.csv': cannot write in '/proc' (No such file or directory)\n");
}

TEST_CASE("salus-trace: generate --shape helios in both layouts: the same bytes to a file and to stdout, read back") {
  const fs::path dir = salus::test::scratch();
  for (const std::string layout : {"native", "helios"}) {
    CAPTURE(layout);
    const std::string args = "generate --shape helios --jobs 2000 --seed 4 --median-duration-s 300 --layout " + layout;
    const std::string file = (dir / ("helios_" + layout + ".csv")).string();
    Result r = trace_tool(args + " --out '" + file + "'");
    REQUIRE(r.code == 0);
    CHECK(r.err.empty());
    // The summary line repeats the header's "# drawn:" line: 1-GPU share and load of 3.8 GPUs.
    CHECK(r.out.starts_with("wrote " + file + " (2000 jobs)\ndrawn: "));
    CHECK(r.out.find(" of 3.81905 GPUs\n") != std::string::npos);
    const std::string text = slurp(file);
    CHECK(text.find("\n# drawn: " + r.out.substr(r.out.find("drawn: ") + 7)) != std::string::npos);
    // The given --median-duration-s overrides the shape's; the command reproduces the file.
    CHECK(text.starts_with("# Generated by: salus-trace generate --jobs 2000 --seed 4 --shape helios "
                           "--median-duration-s 300 --layout " + layout + "\n"));
    CHECK(text.find("# solo duration: log-normal, median 300 s, sigma 2.2, clipped to [1 s, 1209600 s]") !=
          std::string::npos);
    CHECK(text.find(layout == "helios" ? "\njob_id,gpu_num,submit_time,duration\njob0000,"
                                       : "\njob_id,arrival_s,workload,iterations,gpus\njob0000,") != std::string::npos);
    r = trace_tool(args);
    REQUIRE(r.code == 0);
    CHECK(r.out == text);
    r = trace_tool("stats '" + file + "'");
    CHECK(r.code == 0);
    CHECK(r.out.find("(" + std::string(layout == "helios" ? "helios" : "native") + ", 2000 jobs)") != std::string::npos);
  }
}

TEST_CASE("salus-trace: stats of a hand-made trace") {
  const std::string cat = test_catalog();
  const std::string trace = write_file("salus_trace_stats.csv",
                                       "# solo times 10 s, 30 s, 60 s, 120 s\n"
                                       "job_id,arrival_s,workload,iterations\n"
                                       "j1,0,a_10,1000\n"
                                       "j2,30,b_100,300\n"
                                       "j3,60.5,a_10,6000\n"
                                       "j4,90,a_10,12000\n");
  const Result r = trace_tool("stats '" + trace + "' --profiles '" + cat + "'");
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(r.out == "trace: " + trace + " (native, 4 jobs)\n"
                 "arrivals: first 0 s, last 90 s, span 90.0 s (1.5 min), mean inter-arrival 30.0 s\n"
                 "solo duration (iterations x iteration time):\n"
                 "  median 45.0 s (0.8 min)\n"
                 "  mean   55.0 s (0.9 min)\n"
                 "  p95    120.0 s (2.0 min)\n"
                 "  min    10.0 s (0.2 min)\n"
                 "  max    120.0 s (2.0 min)\n"
                 "  total  220.0 s (3.7 min), 2.44 x the arrival span\n"
                 "workloads: 2 distinct\n"
                 "  a_10      3   75.0%\n"
                 "  b_100     1   25.0%\n");
}

TEST_CASE("salus-trace: traces/long_trace_100.csv is what its documented command generates") {
  // traces/README.md: salus-trace generate --jobs 100 --seed 1 --out traces/long_trace_100.csv
  // with the shipped catalog. Fails when the catalog or the generator changed and the file was not
  // regenerated.
  const Result r = trace_tool("generate --jobs 100 --seed 1");
  REQUIRE(r.code == 0);
  CHECK(r.out == slurp(fs::path(SALUS_SOURCE_DIR) / "traces" / "long_trace_100.csv"));

  const Result s = trace_tool("stats traces/long_trace_100.csv");
  CHECK(s.code == 0);
  CHECK(s.out.starts_with("trace: traces/long_trace_100.csv (native, 100 jobs)\narrivals: first 0 s, last "));
  CHECK(s.out.find("\nworkloads: ") != std::string::npos);
}

TEST_CASE("salus-trace formats: every format with its mapping, and stats reads them") {
  Result r = trace_tool("formats");
  CHECK(r.code == 0);
  for (const char* name : {"native", "json", "tiresias", "gavel", "philly", "helios", "alibaba", "pollux"}) {
    CAPTURE(name);
    const bool listed = r.out.find(std::string("\n") + name + ": ") != std::string::npos || r.out.rfind(std::string(name) + ": ", 0) == 0;
    CHECK(listed);
  }
  CHECK(r.out.find("  arrival = creation_time (seconds after the earliest in the file); duration = deletion_time - "
                   "scheduled_time;") != std::string::npos);
  // Every subcommand answers --help, as `salus-trace --help` says; formats takes nothing else.
  for (const char* sub : {"formats", "stats", "generate"}) {
    CAPTURE(sub);
    const Result h = trace_tool(std::string(sub) + " --help");
    CHECK(h.code == 0);
    CHECK(h.out.rfind("salus-trace", 0) == 0);
  }
  CHECK(trace_tool("formats --help").out.find("it takes no options") != std::string::npos);
  CHECK(trace_tool("formats x").code == 2);
  r = trace_tool("stats tests/data/traces/import/gavel.tsv --throughputs tests/data/traces/import/gavel_throughputs.json");
  CHECK(r.code == 0);
  CHECK(r.out.find("trace: tests/data/traces/import/gavel.tsv (gavel, 3 jobs)\n") != std::string::npos);
  r = trace_tool("stats tests/data/traces/import/alibaba.csv --window 0:301");
  CHECK(r.code == 0);
  CHECK(r.out.find("note: kept 2 of 3 jobs: arriving in [0 s, 301 s), shifted to start at 0\n") !=
        std::string::npos);
}
