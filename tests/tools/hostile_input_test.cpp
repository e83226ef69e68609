// Hostile input and hostile output paths, through every program that takes them: exit 2 with one
// line naming the file (file:line where it applies) and what is wrong, nothing replaced, nothing
// left behind (tests/README.md, "Hostile input"). Only this process's scratch folder is touched:
// its FIFOs, sockets and (as root) its own character device.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/programs.h"

namespace fs = std::filesystem;

namespace {

using Result = salus::test::ProgramResult;
using salus::test::scratch;
using salus::test::slurp;

Result tool(const std::string& name, const std::string& args) {
  return salus::test::run_program(SALUS_SOURCE_DIR, salus::test::beside(SALUS_SIM_BIN, name), args);
}

std::string write_file(const std::string& name, const std::string& text) { return salus::test::temp_file(name, text); }

const std::string kHand = "--trace traces/examples/hand.csv";
const std::string kImport = "tests/data/traces/import/";

// A folder of its own in the scratch folder, emptied.
fs::path fresh(const std::string& name) {
  const fs::path d = scratch() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string make_fifo(const fs::path& p) {
  REQUIRE(::mkfifo(p.c_str(), 0644) == 0);
  return p.string();
}

std::string make_socket(const fs::path& p) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  REQUIRE(p.string().size() < sizeof addr.sun_path);
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", p.c_str());
  REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
  ::close(fd);  // the socket file stays
  return p.string();
}

mode_t type_of(const std::string& p) {
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st.st_mode & S_IFMT;
}

mode_t permissions_of(const std::string& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// The rules every refusal here follows: exit 2, one line of at most 300 characters, nothing on
// standard output (nothing ran).
void check_refused(const Result& r, const std::string& err) {
  CHECK(r.code == 2);
  CHECK(r.err == err);
  CHECK(r.err.size() <= 301);
  CHECK(r.err.find('\n') == r.err.size() - 1);
  CHECK(r.out.empty());
}

struct Case {
  std::string tool, args, err;
};

const std::string kNotRegular = ", not a regular file (an output replaces only a regular file)\n";

}  // namespace

TEST_CASE("hostile outputs: a FIFO, socket or device is refused before the run and stays as it was") {
  const fs::path d = fresh("special");
  const std::string fifo = make_fifo(d / "fifo"), sock = make_socket(d / "sock");
  const fs::path out = fresh("special_out");
  const std::string in_out = make_fifo(out / "summary.json");
  const fs::path out2 = fresh("special_out2");
  const std::string jobs2 = make_fifo(out2 / "fifo_jobs.csv");
  const Case cases[] = {
      {"salus-sim", kHand + " --summary-json " + fifo, "salus-sim: --summary-json: '" + fifo + "' is a FIFO" + kNotRegular},
      {"salus-sim", kHand + " --summary-json " + sock, "salus-sim: --summary-json: '" + sock + "' is a socket" + kNotRegular},
      {"salus-sim", kHand + " --out " + fifo, "salus-sim: --out: '" + fifo + "' is a FIFO, not a folder\n"},
      {"salus-sim", kHand + " --out " + sock, "salus-sim: --out: '" + sock + "' is a socket, not a folder\n"},
      // Inside an --out folder, under a name the run writes: refused before the run too.
      {"salus-sim", kHand + " --out " + out.string(), "salus-sim: --out: '" + in_out + "' is a FIFO" + kNotRegular},
      {"salus-sim", kHand + " --policy fifo --out " + out2.string(), "salus-sim: --out: '" + jobs2 + "' is a FIFO" + kNotRegular},
      {"salus-run", kHand + " --summary-json " + fifo, "salus-run: --summary-json: '" + fifo + "' is a FIFO" + kNotRegular},
      {"salus-run", kHand + " --out " + fifo, "salus-run: --out: '" + fifo + "' is a FIFO, not a folder\n"},
      {"salus-catalog", "--out " + fifo, "salus-catalog: --out: '" + fifo + "' is a FIFO" + kNotRegular},
      {"salus-catalog", "--out " + sock, "salus-catalog: --out: '" + sock + "' is a socket" + kNotRegular},
      {"salus-trace", "generate --jobs 3 --out " + fifo, "salus-trace: --out: '" + fifo + "' is a FIFO" + kNotRegular},
      {"salus-profile", "--workloads lenet_32 --out " + fifo, "salus-profile: --out: '" + fifo + "' is a FIFO" + kNotRegular},
      {"salus-experiment", "long_trace --plots off --out " + fifo, "salus-experiment: --out: '" + fifo + "' is a FIFO, not a folder\n"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.tool);
    CAPTURE(c.args);
    const Result r = tool(c.tool, c.args);
    check_refused(r, c.err);
  }
  for (const std::string& p : {fifo, in_out, jobs2}) CHECK(type_of(p) == S_IFIFO);
  CHECK(type_of(sock) == S_IFSOCK);
  // Nothing was written beside them either.
  for (const fs::path& dir : {d, out, out2}) {
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      CHECK_MESSAGE((name == "fifo" || name == "sock" || name == "summary.json" || name == "fifo_jobs.csv"), name);
    }
  }
}

TEST_CASE("hostile outputs: a character device (root only: its own, made with mknod in the scratch folder)") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: making a character device needs root");
    return;
  }
  const fs::path d = fresh("device");
  const std::string dev = (d / "full").string();
  if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0) {
    MESSAGE("skipped: mknod refused here (no CAP_MKNOD)");
    return;
  }
  const Case cases[] = {
      {"salus-sim", kHand + " --summary-json " + dev, "salus-sim: --summary-json: '" + dev + "' is a character device" + kNotRegular},
      {"salus-run", kHand + " --summary-json " + dev, "salus-run: --summary-json: '" + dev + "' is a character device" + kNotRegular},
      {"salus-catalog", "--out " + dev, "salus-catalog: --out: '" + dev + "' is a character device" + kNotRegular},
      {"salus-trace", "generate --out " + dev, "salus-trace: --out: '" + dev + "' is a character device" + kNotRegular},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    check_refused(tool(c.tool, c.args), c.err);
    CHECK(type_of(dev) == S_IFCHR);
  }
  // Through a link, the same.
  const std::string link = (d / "link.json").string();
  fs::create_symlink(dev, link);
  check_refused(tool("salus-sim", kHand + " --summary-json " + link),
                "salus-sim: --summary-json: '" + link + "' is a character device" + kNotRegular);
  CHECK(type_of(dev) == S_IFCHR);
}

TEST_CASE("hostile outputs: an output that is an input (by name, hard link or symbolic link) is refused") {
  const fs::path d = fresh("same");
  const std::string trace = (d / "t.csv").string();
  fs::copy_file(fs::path(SALUS_SOURCE_DIR) / "traces/examples/hand.csv", trace);
  const std::string original = slurp(trace);
  const std::string hard = (d / "hard.json").string(), soft = (d / "soft.csv").string();
  fs::create_hard_link(trace, hard);
  fs::create_symlink(trace, soft);
  const std::string catalog = (d / "c.json").string();
  fs::copy_file(fs::path(SALUS_SOURCE_DIR) / "traces/profiles/catalog.json", catalog);
  const std::string catalog_text = slurp(catalog);
  const std::string cluster = write_file("same_cluster.csv", "nodes,gpus_per_node,gpu_mem\n1,2,16GiB\n");
  const std::string throughputs = (d / "tp.json").string();
  fs::copy_file(fs::path(SALUS_SOURCE_DIR) / (kImport + "gavel_throughputs.json"), throughputs);
  // An --out folder holding the trace under a name the run writes there.
  const fs::path out = fresh("same_out");
  const std::string inside = (out / "summary.json").string();
  fs::copy_file(trace, inside);
  const std::string never = " (an output never replaces an input)\n";
  const Case cases[] = {
      {"salus-sim", "--trace " + trace + " --summary-json " + trace,
       "salus-sim: --summary-json: '" + trace + "' is the same file as --trace '" + trace + "'" + never},
      {"salus-sim", "--trace " + trace + " --summary-json " + hard,
       "salus-sim: --summary-json: '" + hard + "' is the same file as --trace '" + trace + "'" + never},
      {"salus-sim", "--trace " + soft + " --summary-json " + trace,
       "salus-sim: --summary-json: '" + trace + "' is the same file as --trace '" + soft + "'" + never},
      {"salus-sim", kHand + " --profiles " + catalog + " --summary-json " + catalog,
       "salus-sim: --summary-json: '" + catalog + "' is the same file as --profiles '" + catalog + "'" + never},
      {"salus-sim", kHand + " --cluster " + cluster + " --summary-json " + cluster,
       "salus-sim: --summary-json: '" + cluster + "' is the same file as --cluster '" + cluster + "'" + never},
      {"salus-sim", "--trace " + kImport + "gavel.tsv --throughputs " + throughputs + " --summary-json " + throughputs,
       "salus-sim: --summary-json: '" + throughputs + "' is the same file as --throughputs '" + throughputs + "'" + never},
      {"salus-sim", "--trace " + inside + " --out " + out.string(),
       "salus-sim: --out: '" + inside + "' is the same file as --trace '" + inside + "'" + never},
      {"salus-run", "--trace " + trace + " --summary-json " + hard,
       "salus-run: --summary-json: '" + hard + "' is the same file as --trace '" + trace + "'" + never},
      {"salus-trace", "generate --jobs 3 --profiles " + catalog + " --out " + catalog,
       "salus-trace: --out: '" + catalog + "' is the same file as --profiles '" + catalog + "'" + never},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    check_refused(tool(c.tool, c.args), c.err);
  }
  CHECK(slurp(trace) == original);
  CHECK(slurp(inside) == original);
  CHECK(slurp(catalog) == catalog_text);
  CHECK(type_of(soft) == S_IFLNK);
}

TEST_CASE("hostile outputs: a file written again keeps its permissions, a new one the umask's") {
  const fs::path d = fresh("modes");
  const std::string summary = (d / "s.json").string();
  const fs::path out = d / "out";
  REQUIRE(tool("salus-sim", kHand + " --policy fifo --summary-json " + summary + " --out " + out.string()).code == 0);
  const mode_t fresh_mode = permissions_of(summary);
  CHECK((fresh_mode & 0600) == 0600);
  for (const mode_t mode : {mode_t{0600}, mode_t{0640}, mode_t{0604}}) {
    CAPTURE(mode);
    fs::permissions(summary, static_cast<fs::perms>(mode));
    fs::permissions(out / "fifo_jobs.csv", static_cast<fs::perms>(mode));
    const Result r = tool("salus-sim", kHand + " --policy fifo --summary-json " + summary + " --out " + out.string());
    CHECK(r.code == 0);
    CHECK(permissions_of(summary) == mode);
    CHECK(permissions_of((out / "fifo_jobs.csv").string()) == mode);
  }
  const std::string catalog = (d / "c.json").string();
  std::ofstream(catalog) << "old\n";
  fs::permissions(catalog, static_cast<fs::perms>(0600));
  CHECK(tool("salus-catalog", "--out " + catalog).code == 0);
  CHECK(permissions_of(catalog) == 0600);
  CHECK(slurp(catalog).substr(0, 1) == "{");
}

TEST_CASE("hostile outputs: SIGTERM or SIGINT while outputs are written removes the temporaries") {
  const fs::path d = fresh("signals");
  const fs::path trace = d / "trace.csv";
  {
    std::ofstream f(trace);
    f << "job_id,workload,arrival_s,iterations\n";
    std::mt19937 rng(7);
    for (int i = 0; i < 6000; ++i) f << "j" << i << ",alexnet_25," << i * 0.05 << "," << 5 + rng() % 150 << "\n";
  }
  const fs::path out = d / "out";
  const std::vector<std::string> args = {SALUS_SIM_BIN, "--trace", trace.string(), "--policy", "fifo,pack,fair",
                                         "--out", out.string(), "--summary-json", (d / "s.json").string(), "--quiet"};
  const auto temporaries = [&] {
    int n = 0;
    for (const fs::path& dir : {d, out}) {
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(dir, ec)) n += e.path().filename().string().find(".tmp-") != std::string::npos;
    }
    return n;
  };
  int caught = 0;  // runs that a signal ended while a temporary was there
  for (int k = 0; k < 12 && caught < 4; ++k) {
    const int sig = k % 2 == 0 ? SIGTERM : SIGINT;
    const pid_t pid = salus::test::spawn_silent(args);
    REQUIRE(pid >= 0);
    // Signalled as soon as a temporary shows up (a few files later each time).
    const int skip = k / 2;
    int seen = 0;
    int status = 0;
    bool ended = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (std::chrono::steady_clock::now() < deadline) {
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        ended = true;
        break;
      }
      if (temporaries() > 0 && seen++ >= skip) {
        ::kill(pid, sig);
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (!ended) ::waitpid(pid, &status, 0);
    CAPTURE(k);
    if (WIFSIGNALED(status)) {
      CHECK(WTERMSIG(status) == sig);  // the handler ends the program as the signal would have
      ++caught;
    } else {
      CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));  // finished before the signal
    }
    CHECK(temporaries() == 0);
  }
  MESSAGE(caught << " runs ended by a signal while a temporary was there");
  CHECK(caught > 0);
}

// ---- JSON input ---------------------------------------------------------------------------------

TEST_CASE("hostile JSON: nesting past 256 levels is refused at file:line, through every program and reader") {
  const std::string deep = write_file("deep.json", std::string(100'000, '[') + std::string(100'000, ']') + "\n");
  const std::string msg = ":1: JSON nested deeper than 256 levels (column 257)\n";
  // A catalog entry, a throughputs file and a Philly attempt nested that deep.
  const std::string catalog_prefix = "  {\"name\": \"a\", \"x\": ";
  const std::string catalog = write_file(
      "deep_catalog.json", "{\n \"workloads\": [\n" + catalog_prefix + std::string(300, '[') + std::string(300, ']') + "}]}\n");
  const std::string catalog_msg =
      catalog + ":3: JSON nested deeper than 256 levels (column " + std::to_string(catalog_prefix.size() + 254) + ")\n";
  const std::string tp = write_file("deep_tp.json", "{\"v100\": " + std::string(300, '[') + std::string(300, ']') + "}");
  const std::string philly_prefix = "  \"attempts\": [";
  const std::string philly = write_file(
      "deep_philly.json", "[{\"jobid\": \"a\", \"status\": \"Pass\", \"submitted_time\": \"2017-10-03 02:40:00\",\n" +
                              philly_prefix + std::string(300, '[') + std::string(300, ']') + "]}]\n");
  const std::string philly_msg =
      philly + ":2: JSON nested deeper than 256 levels (column " + std::to_string(philly_prefix.size() + 254) + ")\n";
  const fs::path out = fresh("deep_out");
  const Case cases[] = {
      {"salus-sim", "--trace " + deep, "salus-sim: " + deep + msg},
      {"salus-sim", "--trace " + deep + " --format philly", "salus-sim: " + deep + msg},
      {"salus-sim", "--trace " + deep + " --format json", "salus-sim: " + deep + msg},
      {"salus-trace", "stats " + deep, "salus-trace: " + deep + msg},
      {"salus-run", "--trace " + deep, "salus-run: " + deep + msg},
      {"salus-experiment", "gpus_needed --plots off --quiet --trace " + deep + " --out " + out.string(),
       "salus-experiment: " + deep + msg},
      {"salus-sim", kHand + " --profiles " + deep, "salus-sim: " + deep + msg},
      {"salus-sim", kHand + " --profiles " + catalog, "salus-sim: " + catalog_msg},
      {"salus-trace", "generate --jobs 3 --profiles " + catalog, "salus-trace: " + catalog_msg},
      {"salus-sim", "--trace " + kImport + "gavel.tsv --throughputs " + tp,
       "salus-sim: " + tp + ":1: JSON nested deeper than 256 levels (column 265)\n"},
      {"salus-sim", "--trace " + philly, "salus-sim: " + philly_msg},
      {"salus-trace", "stats " + philly + " --format philly", "salus-trace: " + philly_msg},
  };
  for (const Case& c : cases) {
    CAPTURE(c.tool);
    CAPTURE(c.args);
    check_refused(tool(c.tool, c.args), c.err);
  }
}

TEST_CASE("hostile JSON: a bad value nested or wide is quoted in at most ~80 characters") {
  // Within the depth bound: the value reaches the reader, whose message quotes it elided.
  const std::string deep_value = std::string(200, '[') + std::string(200, ']');
  std::string wide_value = "[";
  for (int k = 0; k < 100'000; ++k) wide_value += std::to_string(k) + (k + 1 < 100'000 ? "," : "]");
  for (const std::string& value : {deep_value, wide_value}) {
    const std::string trace = write_file(
        "value.json", "[{\"job_id\": \"a\", \"arrival_s\": 0, \"iterations\": 1, \"workload\": " + value + "}]\n");
    const Result r = tool("salus-sim", "--trace " + trace);
    CHECK(r.code == 2);
    CHECK(r.err.size() <= 300);
    CHECK(r.err.rfind("salus-sim: " + trace + ":1: workload must be a string, got [", 0) == 0);
    CHECK(r.err.find("...") != std::string::npos);
    const std::string philly = write_file(
        "value_philly.json", "[{\"jobid\": \"a\", \"status\": \"Pass\", \"submitted_time\": \"2017-10-03 02:40:00\", "
                             "\"attempts\": [" + value + "]}]\n");
    const Result p = tool("salus-sim", "--trace " + philly);
    CHECK(p.code == 2);
    CHECK(p.err.size() <= 300);
    CHECK(p.err.rfind("salus-sim: " + philly + ":1: an attempt must be a JSON object, got [", 0) == 0);
  }
  // A key of 4,000 bytes (within the bound on a field) named in a message: elided the same way.
  const std::string long_key = write_file("long_key.json", "{\"" + std::string(4000, 'k') + "\": []}\n");
  check_refused(tool("salus-sim", "--trace " + long_key),
                "salus-sim: " + long_key + ":1: unknown key '" + std::string(38, 'k') + "..." + std::string(38, 'k') +
                    "' (valid: jobs)\n");
  const std::string wide_trace = write_file("wide_value.json", "[{\"job_id\": \"a\", \"arrival_s\": 0, \"iterations\": 1, "
                                                               "\"workload\": " + wide_value + "}]\n");
  check_refused(tool("salus-sim", "--trace " + wide_trace),
                "salus-sim: " + wide_trace + ":1: workload must be a string, got "
                "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15...3,99994,99995,99996,99997,99998,99999]\n");
}

TEST_CASE("hostile JSON: a duplicate key is refused at its line in traces, catalogs, throughputs, Philly logs") {
  const std::string trace = write_file("dup.json", "[{\"job_id\": \"a\", \"arrival_s\": 0,\n \"iterations\": 1,\n"
                                                   " \"workload\": \"resnet50_25\", \"job_id\": \"b\"}]\n");
  std::string catalog_text = slurp(fs::path(SALUS_SOURCE_DIR) / "traces/profiles/catalog.json");
  const std::size_t at = catalog_text.find("\"name\": \"alexnet_25\"");
  REQUIRE(at != std::string::npos);
  catalog_text.insert(at, "\"name\": \"x\", ");
  const long catalog_line = 1 + static_cast<long>(std::count(catalog_text.begin(), catalog_text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
  const std::string catalog = write_file("dup_catalog.json", catalog_text);
  std::string tp_text = slurp(fs::path(SALUS_SOURCE_DIR) / (kImport + "gavel_throughputs.json"));
  const std::size_t last = tp_text.rfind('}');
  tp_text.insert(last, ", \"v100\": {}");
  const long tp_line = 1 + static_cast<long>(std::count(tp_text.begin(), tp_text.begin() + static_cast<std::ptrdiff_t>(last), '\n'));
  const std::string tp = write_file("dup_tp.json", tp_text);
  const std::string philly = write_file(
      "dup_philly.json", "[{\"jobid\": \"a\", \"status\": \"Pass\", \"submitted_time\": \"2017-10-03 02:40:00\",\n"
                         " \"attempts\": [{\"start_time\": \"2017-10-03 02:41:00\", \"end_time\": \"2017-10-03 02:51:00\",\n"
                         "   \"end_time\": \"2017-10-03 09:51:00\", \"detail\": []}]}]\n");
  const std::string once = " in one object (a key is given once)\n";
  const Case cases[] = {
      {"salus-sim", "--trace " + trace, "salus-sim: " + trace + ":3: duplicate key \"job_id\"" + once},
      {"salus-trace", "stats " + trace, "salus-trace: " + trace + ":3: duplicate key \"job_id\"" + once},
      {"salus-run", "--trace " + trace, "salus-run: " + trace + ":3: duplicate key \"job_id\"" + once},
      {"salus-sim", kHand + " --profiles " + catalog,
       "salus-sim: " + catalog + ":" + std::to_string(catalog_line) + ": duplicate key \"name\"" + once},
      {"salus-sim", "--trace " + kImport + "gavel.tsv --throughputs " + tp,
       "salus-sim: " + tp + ":" + std::to_string(tp_line) + ": duplicate key \"v100\"" + once},
      {"salus-sim", "--trace " + philly, "salus-sim: " + philly + ":3: duplicate key \"end_time\"" + once},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    check_refused(tool(c.tool, c.args), c.err);
  }
}

TEST_CASE("hostile JSON: a NUL byte or a second document after the first is refused, not ignored") {
  const std::string records = "[{\"job_id\": \"a\", \"arrival_s\": 0, \"iterations\": 1, \"workload\": \"resnet50_25\"}]";
  const std::string nul = write_file("nul.json", records + std::string("\0[{\"job_id\": \"b\"}]\n", 19));
  const std::string second = write_file("second.json", records + "\n\n" + records + "\n");
  const std::string catalog_text = slurp(fs::path(SALUS_SOURCE_DIR) / "traces/profiles/catalog.json");
  const long catalog_lines = static_cast<long>(std::count(catalog_text.begin(), catalog_text.end(), '\n'));
  const std::string catalog = write_file("nul_catalog.json", catalog_text + std::string("\0{}", 3));
  const std::string tp = write_file("after_tp.json", slurp(fs::path(SALUS_SOURCE_DIR) / (kImport + "gavel_throughputs.json")) + "x");
  const std::string tp_text = slurp(tp);
  const long tp_line = 1 + static_cast<long>(std::count(tp_text.begin(), tp_text.end(), '\n'));
  const std::size_t tp_column = tp_text.size() - 1 - tp_text.rfind('\n');
  const std::string column = std::to_string(records.size() + 1);
  const Case cases[] = {
      {"salus-sim", "--trace " + nul, "salus-sim: " + nul + ":1: a NUL byte, which JSON text never holds (column " + column + ")\n"},
      {"salus-trace", "stats " + nul, "salus-trace: " + nul + ":1: a NUL byte, which JSON text never holds (column " + column + ")\n"},
      {"salus-sim", "--trace " + second, "salus-sim: " + second + ":3: bytes after the JSON document (column 1)\n"},
      {"salus-run", "--trace " + second, "salus-run: " + second + ":3: bytes after the JSON document (column 1)\n"},
      {"salus-sim", kHand + " --profiles " + catalog,
       "salus-sim: " + catalog + ":" + std::to_string(catalog_lines + 1) + ": a NUL byte, which JSON text never holds (column 1)\n"},
      {"salus-sim", "--trace " + kImport + "gavel.tsv --throughputs " + tp,
       "salus-sim: " + tp + ":" + std::to_string(tp_line) + ": bytes after the JSON document (column " +
           std::to_string(tp_column) + ")\n"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    check_refused(tool(c.tool, c.args), c.err);
  }
}

TEST_CASE("hostile rows: a line past 4 MiB, a row of 50,000 fields, a sparse file of 100 GB, refused at file:line") {
  const std::string header = "job_id,arrival_s,iterations,workload\n";
  const std::string wide = write_file("wide.csv", header + std::string(50'000, ',') + "\n");
  const std::string fields = ":2: more than 10000 fields in one row, more than a row may have (is this the right file?)\n";
  const std::string line = write_file("long_line.csv", header + "j1,0,10,resnet50_25\nj2," + std::string(5 << 20, 'x') + "\n");
  const std::string too_long = ":3: a line longer than 4194304 bytes, more than a line may have (is this the right file?)\n";
  const std::string cluster = write_file("wide_cluster.csv", "nodes,gpus_per_node,gpu_mem\n" + std::string(20'000, ',') + "\n");
  const std::string gavel = write_file("wide_gavel.tsv", "ResNet-50 (batch size 64)" + std::string(20'000, '\t') + "\n");
  // A sparse file: 100 GB that the file system does not hold (it was reserved whole, bad_alloc).
  const std::string sparse = write_file("sparse.csv", "");
  fs::resize_file(sparse, std::uintmax_t{100} << 30);
  const fs::path out = fresh("rows_out");
  const Case cases[] = {
      {"salus-sim", "--trace " + wide, "salus-sim: " + wide + fields},
      {"salus-trace", "stats " + wide, "salus-trace: " + wide + fields},
      {"salus-run", "--trace " + wide, "salus-run: " + wide + fields},
      {"salus-experiment", "gpus_needed --plots off --quiet --trace " + wide + " --out " + out.string(),
       "salus-experiment: " + wide + fields},
      {"salus-sim", "--trace " + line, "salus-sim: " + line + too_long},
      {"salus-trace", "stats " + line, "salus-trace: " + line + too_long},
      {"salus-sim", "--trace " + sparse + " --format native",
       "salus-sim: " + sparse + ":1: a line longer than 4194304 bytes, more than a line may have (is this the right file?)\n"},
      {"salus-sim", "--trace " + gavel + " --format gavel",
       "salus-sim: " + gavel + ":1: more than 10000 fields in one row, more than a row may have (is this the right file?)\n"},
      {"salus-sim", kHand + " --cluster " + cluster, "salus-sim: " + cluster + fields},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    check_refused(tool(c.tool, c.args), c.err);
  }
  // Read as JSON (a trace, a catalog), it is read to its first byte, a NUL, and refused there.
  const std::string nul_at_1 = ":1: a NUL byte, which JSON text never holds (column 1)\n";
  check_refused(tool("salus-sim", "--trace " + sparse + " --format json"), "salus-sim: " + sparse + nul_at_1);
  check_refused(tool("salus-sim", kHand + " --profiles " + sparse), "salus-sim: " + sparse + nul_at_1);
  check_refused(tool("salus-trace", "stats " + sparse + " --format philly"), "salus-trace: " + sparse + nul_at_1);
  // Its format found from its text, the same (its first line is no CSV header either).
  check_refused(tool("salus-sim", "--trace " + sparse),
                "salus-sim: " + sparse + ":1: a line longer than 4194304 bytes, more than a line may have (is this the right file?)\n");
  fs::remove(sparse);
  // Blank lines and comments are not rows: 300,000 of them before a trace cost nothing and run.
  const std::string blank = write_file("blank_lines.csv", std::string(300'000, '\n') + "# c\n" + header + "j1,0,10,resnet50_25\n");
  const Result ok = tool("salus-sim", "--trace " + blank + " --policy fifo");
  CHECK(ok.code == 0);
  CHECK(ok.out.find("(native, 1 job)") != std::string::npos);
}

TEST_CASE("hostile messages: one bounded line, control bytes escaped, the nearest workloads, the right missing column") {
  const std::string header = "job_id,arrival_s,iterations,workload\n";
  // A misspelt workload: the nearest three and where the rest are, not the catalog's 62 names.
  const std::string near = write_file("near.csv", header + "j1,0,10,resnet50_26\n");
  check_refused(tool("salus-sim", "--trace " + near),
                "salus-sim: " + near +
                    ":2: unknown workload 'resnet50_26' (nearest: resnet50_25, resnet50_50, resnet50_75; the catalog's 62 "
                    "workloads: its file, docs/traces.md \"The workload catalog\"); did you mean 'resnet50_25'?\n");
  // Bytes that would drive the terminal (an OSC sequence setting its title) are escaped.
  const std::string osc = write_file("osc.csv", header + "j1,0,10,a\x1b]0;pwned\x07z\n");
  const Result r = tool("salus-sim", "--trace " + osc);
  CHECK(r.code == 2);
  CHECK(r.err.find("unknown workload 'a\\x1b]0;pwned\\x07z'") != std::string::npos);
  CHECK(r.err.find('\x1b') == std::string::npos);
  CHECK(r.err.find('\x07') == std::string::npos);
  // A NUL byte inside a field no longer ends the message where it stands.
  const std::string nul = write_file("nul_field.csv", header + std::string("j1,0,10,a\0b\n", 13));
  const Result n = tool("salus-sim", "--trace " + nul);
  CHECK(n.code == 2);
  CHECK(n.err.find(nul + ":2: unknown workload 'a\\x00b' (nearest: ") != std::string::npos);
  CHECK(n.err.find("docs/traces.md \"The workload catalog\")\n") != std::string::npos);
  // A value of 100,000 characters: one line of at most 300, its beginning and end.
  const std::string x(100'000, 'x');
  const Case long_values[] = {
      {"salus-sim", "--policy " + x, ""},
      {"salus-run", "--trace traces/examples/real_small.csv --policy " + x, ""},
      {"salus-trace", "stats traces/examples/hand.csv --format " + x, ""},
      {"salus-experiment", x, ""},
      {"salus-profile", "--device cpu --out " + (scratch() / "long_profile.json").string() + " --workloads " + x, ""},
      {"salus-catalog", "--" + x, ""},
  };
  for (const Case& c : long_values) {
    CAPTURE(c.tool);
    const Result p = tool(c.tool, c.args);
    CHECK(p.code == 2);
    CHECK(p.err.size() <= 301);
    CHECK(p.err.find('\n') == p.err.size() - 1);
    CHECK(p.err.find("...") != std::string::npos);
  }
  // A Helios log missing its duration is read as a Helios log and names duration.
  const std::string helios =
      write_file("helios_no_duration.csv", "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time\n1,u,v,1,1,1,COMPLETED,10\n");
  check_refused(tool("salus-sim", "--trace " + helios),
                "salus-sim: " + helios + ":1: missing required column 'duration' in a Helios trace\n");
}

TEST_CASE("hostile options: an option with no effect is refused or noted, never silent") {
  check_refused(tool("salus-sim", kHand + " --summary-json ''"),
                "salus-sim: --summary-json: an empty path (name a file, or leave the option out)\n");
  check_refused(tool("salus-run", "--trace traces/examples/real_small.csv --device cpu --summary-json ''"),
                "salus-run: --summary-json: an empty path (name a file, or leave the option out)\n");
  check_refused(tool("salus-sim", kHand + " --out ''"), "salus-sim: --out: an empty path (name a file, or leave the option out)\n");
  const Result r = tool("salus-sim", kHand + " --policy fifo --placement first-fit --timeline full --throughputs " + kImport +
                                         "gavel_throughputs.json");
  CHECK(r.code == 0);
  CHECK(r.out.find("note: --placement has no effect on one GPU") != std::string::npos);
  CHECK(r.out.find("note: --timeline has no effect without --out") != std::string::npos);
  CHECK(r.out.find("note: --throughputs has no effect: the trace is native") != std::string::npos);
  // Where they do act, no such note.
  const fs::path out = fresh("notes_out");
  const Result used = tool("salus-sim", kHand + " --policy fifo --gpus 2 --placement first-fit --timeline full --out " + out.string());
  CHECK(used.code == 0);
  CHECK(used.out.find("has no effect") == std::string::npos);
}

TEST_CASE("hostile outputs: a full disk is named (root only: a 64 KiB tmpfs of its own in the scratch folder)") {
  const fs::path tiny = fresh("tiny_fs");
  if (std::system(("mount -t tmpfs -o size=64k tmpfs '" + tiny.string() + "' 2>/dev/null").c_str()) != 0) {
    MESSAGE("skipped: cannot mount a tmpfs here (not root, or no mount permission)");
    return;
  }
  const fs::path trace = scratch() / "full_disk_trace.csv";
  const Result g = tool("salus-trace", "generate --jobs 2000 --seed 2 --out " + trace.string());
  const std::string json = (tiny / "s.json").string();
  const Result r = tool("salus-sim", "--trace " + trace.string() + " --policy fifo --summary-json " + json);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(tiny)) left.push_back(e.path().string());
  std::system(("umount '" + tiny.string() + "'").c_str());
  CHECK(g.code == 0);
  CHECK(r.code == 2);
  CHECK(r.err == "salus-sim: " + json + ": cannot write: No space left on device (the old file, if any, is as it was)\n");
  CHECK(left.empty());  // no temporary left behind
}
