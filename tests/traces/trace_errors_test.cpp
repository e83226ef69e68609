// Bad traces: every error names the file, the line and what is wrong, in exactly these words.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/errors.h"
#include "support/temp_files.h"
#include "traces/catalog.h"
#include "traces/csv.h"
#include "traces/trace.h"

using salus::core::InputError;
using salus::traces::Catalog;
using salus::traces::load_trace;

namespace {

using salus::test::temp_file;

const Catalog& test_catalog() {
  static const Catalog catalog = Catalog::load(temp_file("catalog.json", R"({
  "format": "salus-catalog/1",
  "gpu": "test",
  "workloads": [
    {"name": "alpha_10", "persistent_mib": 100, "ephemeral_mib": 1000, "iter_ms": 10, "gpu_util": 0.5, "source": "t"},
    {"name": "alpha_20", "persistent_mib": 100, "ephemeral_mib": 2000, "iter_ms": 20, "gpu_util": 0.75, "source": "t"},
    {"name": "beta", "persistent_mib": 1.5, "ephemeral_mib": 2.25, "iter_ms": 0.5, "gpu_util": 1, "source": "t"}
  ]
})"));
  return catalog;
}

// Loads `text` as a trace file named `name`; the error must read "<path><expected>".
void check_error(const std::string& name, const std::string& text, const std::string& expected) {
  const std::string path = temp_file(name, text);
  const std::string message = path + expected;
  CHECK_THROWS_WITH_AS(load_trace(path, test_catalog()), message.c_str(), InputError);
}

const std::string kHeader = "job_id,workload,arrival_s,iterations,persistent_mib,ephemeral_mib,iter_ms,gpu_util\n";

// A native trace with one good job on line 2 and `row` on line 3.
void check_row(const std::string& row, const std::string& expected) {
  check_error("row.csv", kHeader + "ok,alpha_10,0,1,,,,\n" + row + "\n", ":3: " + expected);
}

}  // namespace

TEST_CASE("errors: missing file") {
  CHECK_THROWS_WITH_AS(load_trace("/nonexistent/trace.csv", test_catalog()),
                       "/nonexistent/trace.csv: cannot open trace file: No such file or directory", InputError);
}

TEST_CASE("errors: a directory or a FIFO as a trace or catalog is named, not read") {
  const std::string dir = salus::test::temp_dir().string() + "/a_folder";
  std::filesystem::create_directories(dir);
  CHECK_THROWS_WITH_AS(load_trace(dir, test_catalog()), (dir + ": is a directory, not a trace file").c_str(), InputError);
  CHECK_THROWS_WITH_AS(Catalog::load(dir), (dir + ": is a directory, not a catalog file").c_str(), InputError);
  // A FIFO with no writer: refused at once (reading it would block for ever).
  const std::string fifo = salus::test::temp_dir().string() + "/a_fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH_AS(load_trace(fifo, test_catalog()),
                       (fifo + ": is not a regular file (a FIFO, device or socket), not a trace file").c_str(), InputError);
}

TEST_CASE("errors: a field longer than the bound is refused at file:line:column with a short message") {
  const std::string big(salus::traces::kMaxFieldBytes + 1, 'x');
  // Unquoted, quoted, padded with blanks, in a Gavel TSV and in JSON.
  check_error("long_id.csv", kHeader + "ok,alpha_10,0,1,,,,\n" + big + ",alpha_10,0,1,,,,\n",
              ":3:1: a field of 4097 bytes, more than the 4096 bytes a field may have (is this the right file?)");
  check_error("long_quoted.csv", kHeader + "ok,\"" + big + "\",0,1,,,,\n",
              ":2:4: a field of 4097 bytes, more than the 4096 bytes a field may have (is this the right file?)");
  check_error("long_blanks.csv", kHeader + "ok,alpha_10," + std::string(5000, ' ') + "0,1,,,,\n",
              ":2:13: a field of 5000 bytes, more than the 4096 bytes a field may have (is this the right file?)");
  check_error("long.tsv", "A\tcmd\tdir\t-s\t1\t" + big + "\t1\t1\t-1\t0\n",
              ":1:16: a field of 4097 bytes, more than the 4096 bytes a field may have (is this the right file?)");
  check_error("long.json", "{\"jobs\": [\n  {\"job_id\": \"" + big + "\"}\n]}\n",
              ":2:14: a field of 4099 bytes, more than the 4096 bytes a field may have (is this the right file?)");
  // Under the bound, a bad value is quoted cut short: the message stays a line.
  const std::string long_number(3000, '9');
  const std::string path = temp_file("long_value.csv", kHeader + "ok,alpha_10,0," + long_number + ",,,,\n");
  try {
    load_trace(path, test_catalog());
    FAIL("no error");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.size() - path.size() < 300);
    CHECK(what.find("(3000 bytes)") != std::string::npos);
  }
}

TEST_CASE("errors: columns of a native trace") {
  // An unknown column is a note (below); when a required one is missing, a near miss is named.
  check_error("unknown_column.csv", "job_id,workload,arrival,iterations\na,alpha_10,0,1\n",
              ":1: missing required column 'arrival_s' (did you misspell it as 'arrival'?)");
  check_error("missing_column.csv", "# comment\njob_id,workload,iterations\na,alpha_10,5\n",
              ":2: missing required column 'arrival_s'");
  check_error("missing_workload.csv", "job_id,arrival_s,iterations,persistent_mib,iter_ms\na,0,1,1,1\n",
              ":1: missing column 'workload' (without it, persistent_mib, ephemeral_mib and iter_ms are all required)");
  check_error("duplicate_column.csv", "job_id,workload,arrival_s,iterations,workload\na,alpha_10,0,1,beta\n",
              ":1: duplicate column 'workload'");
  check_error("empty_column.csv", "job_id,workload,,arrival_s,iterations\na,alpha_10,,0,1\n",
              ":1: column 3 has no name");
}

TEST_CASE("errors: empty traces have no jobs") {
  check_error("empty.csv", "", ":1: no jobs");
  check_error("blank.csv", "\n  \n# just a comment\n", ":1: no jobs");
  check_error("header_only.csv", "# a comment\n" + kHeader, ":2: no jobs");
  check_error("empty.json", "[]", ":1: no jobs");
  check_error("empty_jobs.json", "{\"jobs\": []}", ":1: no jobs");
}

TEST_CASE("errors: field values of a native trace") {
  check_row("x,gamma,0,1,,,,", "unknown workload 'gamma' (valid: alpha_10, alpha_20, beta)");
  check_row("x,alpha_10,0,2.5,,,,", "iterations must be a positive integer, got '2.5'");
  check_row("x,alpha_10,0,0,,,,", "iterations must be a positive integer, got '0'");
  check_row("x,alpha_10,0,1e3,,,,", "iterations must be a positive integer, got '1e3'");
  check_row("x,alpha_10,0,-4,,,,", "iterations must be a positive integer, got '-4'");
  check_row("x,alpha_10,0,99999999999999999999,,,,", "iterations is too large, got '99999999999999999999'");
  check_row("x,alpha_10,-1,1,,,,", "arrival_s must be a number >= 0, got '-1'");
  check_row("x,alpha_10,soon,1,,,,", "arrival_s must be a number >= 0, got 'soon'");
  check_row("x,alpha_10,inf,1,,,,", "arrival_s must be a number >= 0, got 'inf'");
  check_row("x,alpha_10,1e300,1,,,,", "arrival_s is too large, got '1e300'");
  check_row("x,alpha_10,0,1,,,,0", "gpu_util must be a number in (0, 1], got '0'");
  check_row("x,alpha_10,0,1,,,,1.5", "gpu_util must be a number in (0, 1], got '1.5'");
  check_row("x,alpha_10,0,1,-1,,,", "persistent_mib must be a number >= 0, got '-1'");
  check_row("x,alpha_10,0,1,,-0.5,,", "ephemeral_mib must be a number >= 0, got '-0.5'");
  check_row("x,alpha_10,0,1,,,0,", "iter_ms must be a number > 0, got '0'");
  check_row("x,alpha_10,0,1,,,0.0000001,", "iter_ms rounds to 0 ns, got '0.0000001'");
  check_row("x,,0,1,1,2,,", "no workload, so persistent_mib, ephemeral_mib and iter_ms are all required (missing: iter_ms)");
  check_row("x,,0,1,,,,",
            "no workload, so persistent_mib, ephemeral_mib and iter_ms are all required (missing: persistent_mib, "
            "ephemeral_mib, iter_ms)");
  check_row(",alpha_10,0,1,,,,", "job_id is missing");
  check_row("x,alpha_10,,1,,,,", "arrival_s is missing");
  check_row("x,alpha_10,0,,,,,", "iterations is missing");
  check_row("x,alpha_10,0,9223372036854775807,,,,", "iterations * iteration time does not fit in 64-bit nanoseconds");
}

TEST_CASE("errors: duplicate job_id names the earlier line") {
  check_error("duplicate.csv", kHeader + "a,alpha_10,0,1,,,,\n\nb,beta,0,1,,,,\na,beta,1,1,,,,\n",
              ":5: duplicate job_id 'a' (first at line 2)");
}

TEST_CASE("errors: duplicate job_id in a trace large enough to grow the id table several times") {
  // 5,000 distinct ids (the table of seen ids grows past its first size), then job 1234 again.
  std::string text = kHeader;
  for (int i = 0; i < 5000; ++i) text += "job" + std::to_string(i) + ",alpha_10,0,1,,,,\n";
  // A quoted id is the same id: "job5000" is new, "job1234" (line 1236) is not.
  CHECK(load_trace(temp_file("large_ok.csv", text + "\"job5000\",beta,0,1,,,,\n"), test_catalog()).jobs.size() == 5001);
  check_error("large_dup.csv", text + "\"job1234\",beta,0,1,,,,\n", ":5002: duplicate job_id 'job1234' (first at line 1236)");
}

TEST_CASE("errors: wrong field count") {
  check_error("fields.csv", "job_id,workload,arrival_s,iterations\na,alpha_10,0,1\nb,alpha_10,0\n",
              ":3: expected 4 fields, found 3");
  check_error("fields_extra.csv", "job_id,workload,arrival_s,iterations\na,alpha_10,0,1,\n",
              ":2: expected 4 fields, found 5");
}

TEST_CASE("errors: JSON syntax errors name the line") {
  check_error("syntax.json", "[\n  {\"job_id\": \"a\", \"workload\": \"alpha_10\",\n   \"arrival_s\": 0 \"iterations\": 1}\n]\n",
              ":3: invalid JSON: syntax error while parsing object - unexpected string literal; expected '}'");
  check_error("truncated.json", "{\"jobs\": [\n  {\"job_id\": \"a\"}\n",
              ":3: invalid JSON: syntax error while parsing array - unexpected end of input; expected ']'");
}

TEST_CASE("errors: JSON records name the line where the record starts") {
  const std::string good = "  {\"job_id\": \"a\", \"workload\": \"alpha_10\", \"arrival_s\": 0, \"iterations\": 1},\n";
  auto check_record = [&](const std::string& name, const std::string& record, const std::string& expected) {
    check_error(name, "{\n \"jobs\": [\n" + good + "  " + record + "\n ]\n}\n", ":4: " + expected);
  };
  check_record("workload.json", R"({"job_id": "b", "workload": "gamma", "arrival_s": 0, "iterations": 1})",
               "unknown workload 'gamma' (valid: alpha_10, alpha_20, beta)");
  check_record("key.json", R"({"job_id": "b", "workload": "beta", "arrival": 0, "iterations": 1})",
               "arrival_s is missing");
  check_record("string_number.json", R"({"job_id": "b", "workload": "beta", "arrival_s": "0", "iterations": 1})",
               "arrival_s must be a JSON number, got \"0\"");
  check_record("float_iterations.json", R"({"job_id": "b", "workload": "beta", "arrival_s": 0, "iterations": 2.0})",
               "iterations must be a positive integer, got '2.0'");
  check_record("util.json", R"({"job_id": "b", "workload": "beta", "arrival_s": 0, "iterations": 1, "gpu_util": 1.5})",
               "gpu_util must be a number in (0, 1], got '1.5'");
  check_record("job_id_type.json", R"({"job_id": 1.5, "workload": "beta", "arrival_s": 0, "iterations": 1})",
               "job_id must be a string or an integer, got 1.5");
  check_record("workload_type.json", R"({"job_id": "b", "workload": 3, "arrival_s": 0, "iterations": 1})",
               "workload must be a string, got 3");
  check_record("missing.json", R"({"job_id": "b", "workload": "beta", "iterations": 1})", "arrival_s is missing");
  check_record("not_object.json", "[1, 2]", "a job must be a JSON object, got [1,2]");
  check_record("duplicate.json", R"({"job_id": "a", "workload": "beta", "arrival_s": 0, "iterations": 1})",
               "duplicate job_id 'a' (first at line 3)");
}

TEST_CASE("errors: JSON top-level structure") {
  check_error("scalar.json", "{\"jobs\": 3}", ":1: missing \"jobs\" array");
  check_error("other_key.json", "{\"job\": []}", ":1: unknown key 'job' (valid: jobs)");
}

TEST_CASE("errors: Tiresias traces") {
  const std::string header = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n";
  auto check_tiresias = [&](const std::string& row, const std::string& expected) {
    check_error("tiresias.csv", header + "1,1,0,10,alpha,5,1\n" + row + "\n", ":3: " + expected);
  };
  check_tiresias("2,0,0,10,alpha,5,1", "num_gpu must be a positive integer, got '0'");
  check_tiresias("2,1.5,0,10,alpha,5,1", "num_gpu must be a positive integer, got '1.5'");
  check_tiresias("2,1,0,10,alpha,0,1", "duration must be a number > 0, got '0'");
  check_tiresias("2,1,-3,10,alpha,5,1", "submit_time must be a number >= 0, got '-3'");
  check_tiresias("2,1,0,ten,alpha,5,1", "iterations must be a positive integer, got 'ten'");
  check_tiresias("2,1,0,10,,5,1", "model_name is missing");
  // A repeated job_id is made unique ("1#2"), as Tiresias keeps jobs by their order (import_test).
  check_tiresias("2,1,0,10,alpha,5", "expected 7 fields, found 6");
  check_error("tiresias_columns.csv", "job_id,num_gpu,submit_time,iterations,model_name,duration,gpu_type\n",
              ":1: no jobs");
  // Without iterations the trace is duration-only (tf_job.csv); without a duration it is not read.
  check_error("tiresias_missing.csv", "job_id,num_gpu,submit_time,model_name,iterations\n1,1,0,alpha,5\n",
              ":1: missing required column 'duration' in a Tiresias trace");
}

TEST_CASE("errors: the fixtures in tests/data/traces") {
  const std::string dir = SALUS_TEST_DATA_DIR "/traces/";
  const Catalog& c = test_catalog();
  auto check_fixture = [&](const std::string& name, const std::string& expected) {
    const std::string message = dir + name + expected;
    CHECK_THROWS_WITH_AS(load_trace(dir + name, c), message.c_str(), InputError);
  };
  // unknown_column.csv loads: its 'memory_mib' column is kept as a note.
  const salus::traces::Trace unknown = load_trace(dir + "unknown_column.csv", c);
  CHECK(unknown.jobs.size() == 1);
  CHECK(unknown.notes == std::vector<std::string>{
                             "column 'memory_mib' is not a native column, ignored (valid: job_id, workload, arrival_s, "
                             "iterations, persistent_mib, ephemeral_mib, iter_ms, gpu_util, priority, gpus)"});
  const salus::traces::Trace misspelt =
      load_trace(salus::test::temp_file("misspelt.csv", "job_id,workload,arrival_s,iterations,gpu_utl\na,alpha_10,0,1,0.5\n"), c);
  CHECK(misspelt.notes == std::vector<std::string>{
                              "column 'gpu_utl' is not a native column, ignored (valid: job_id, workload, arrival_s, "
                              "iterations, persistent_mib, ephemeral_mib, iter_ms, gpu_util, priority, gpus); did you "
                              "mean 'gpu_util'?"});
  const salus::traces::Trace json_key = load_trace(
      salus::test::temp_file("key_note.json", R"([{"job_id": "a", "workload": "beta", "arrival_s": 0, "iterations": 1, "prio": 2}])"), c);
  CHECK(json_key.notes == std::vector<std::string>{
                              "key 'prio' is not a native key, ignored (valid: job_id, workload, arrival_s, iterations, "
                              "persistent_mib, ephemeral_mib, iter_ms, gpu_util, priority, gpus)"});
  check_fixture("duplicate_job.csv", ":5: duplicate job_id 'b' (first at line 3)");
  check_fixture("bad_syntax.json",
                ":4: invalid JSON: syntax error while parsing object key - unexpected '}'; expected string literal");
  check_fixture("bad_value.json", ":6: gpu_util must be a number in (0, 1], got '0'");
}

TEST_CASE("errors: the optional priority column takes signed integers only") {
  const std::string header = "job_id,workload,arrival_s,iterations,priority\n";
  auto check_priority = [&](const std::string& value, const std::string& expected) {
    check_error("priority.csv", header + "ok,alpha_10,0,1,1\nx,alpha_10,0,1," + value + "\n", ":3: " + expected);
  };
  check_priority("high", "priority must be an integer (higher runs first), got 'high'");
  check_priority("1.5", "priority must be an integer (higher runs first), got '1.5'");
  check_priority("1e2", "priority must be an integer (higher runs first), got '1e2'");
  check_priority("+1", "priority must be an integer (higher runs first), got '+1'");
  check_priority("-", "priority must be an integer (higher runs first), got '-'");
  check_priority("2147483648", "priority is out of range (at most 2147483647 either way), got '2147483648'");
  check_priority("-99999999999999999999", "priority is out of range (at most 2147483647 either way), got '-99999999999999999999'");
  check_error("priority.json",
              "[\n {\"job_id\": \"a\", \"workload\": \"beta\", \"arrival_s\": 0, \"iterations\": 1, \"priority\": 0.5}\n]\n",
              ":2: priority must be an integer (higher runs first), got '0.5'");
}
