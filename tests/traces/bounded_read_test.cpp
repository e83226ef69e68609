// read_text_file's bound on fields (core/text_input.h): the scanner that runs as the file is read
// must report the first field past kMaxFieldBytes exactly as the reader of the whole text does
// (same file:line:column, same byte count, same message), and a file without one must read back
// byte for byte. Each case compares the two on the same text: read_text_file and then the reader
// on what it returned, against the reader on the whole text.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "support/temp_files.h"
#include "traces/csv.h"
#include "traces/reader_steps.h"
#include "traces/trace.h"

namespace {

using salus::core::InputError;
using salus::core::kMaxFieldBytes;
using salus::core::TextSyntax;
namespace traces = salus::traces;

const std::string kPath = "bounded.txt";

// What the reader of `syntax` says about the whole of `text`: its first error, or "" (plus, for
// valid text, a digest of what it read, so that a wrong result also differs).
std::string whole_reader(const std::string& text, TextSyntax syntax, const std::string& path) {
  try {
    switch (syntax) {
      case TextSyntax::kCsv: {
        std::string seen;
        traces::CsvReader rows(text, path);
        while (rows.next()) {
          seen += std::to_string(rows.line()) + ":";
          for (auto f : rows.fields()) seen += std::to_string(f.size()) + ",";
        }
        return "ok " + seen;
      }
      case TextSyntax::kTsv: {
        std::string seen;
        traces::steps::GavelRows rows(text, path);
        while (rows.next()) seen += std::to_string(rows.line()) + ":" + std::to_string(rows.fields().size()) + ",";
        return "ok " + seen;
      }
      case TextSyntax::kJson: traces::check_utf8(text, path); return "ok " + traces::parse_json(text, path).dump();
      default: break;
    }
  } catch (const InputError& e) {
    return e.what();
  }
  return "?";
}

// The syntax a trace of this text is read with (traces::detect_format, as the scanner follows it).
TextSyntax trace_syntax(const std::string& text) {
  const TextSyntax s = traces::text_syntax(traces::detect_format(text));
  return s == TextSyntax::kTrace ? TextSyntax::kCsv : s;
}

// read_text_file on `text` in a file, then the reader on what came back.
std::string streamed_reader(const std::string& text, TextSyntax syntax, const std::string& name = kPath) {
  const std::string path = salus::test::temp_file(name, text);
  std::string got;
  try {
    got = salus::core::read_text_file(path, "test file", syntax);
  } catch (const InputError& e) {
    return e.what();
  }
  if (got != text) return "read back " + std::to_string(got.size()) + " bytes of " + std::to_string(text.size());
  return whole_reader(got, syntax == TextSyntax::kTrace ? trace_syntax(text) : syntax, path);
}

std::string expected(const std::string& text, TextSyntax syntax, const std::string& name = kPath) {
  const std::string path = (salus::test::temp_dir() / name).string();
  return whole_reader(text, syntax == TextSyntax::kTrace ? trace_syntax(text) : syntax, path);
}

std::string message(const std::string& name, long line, std::size_t column, std::size_t bytes) {
  return (salus::test::temp_dir() / name).string() + ":" + std::to_string(line) + ":" + std::to_string(column) +
         ": a field of " + std::to_string(bytes) + " bytes, more than the 4096 bytes a field may have (is this the right file?)";
}

void check_same(const std::string& text, TextSyntax syntax) {
  const std::string want = expected(text, syntax);
  CHECK(streamed_reader(text, syntax) == want);
}

const std::string big(kMaxFieldBytes + 1, 'x');
const std::string at_bound(kMaxFieldBytes, 'x');

}  // namespace

TEST_CASE("bounded read: a CSV field past the bound in each position, as the whole-text reader says it") {
  struct Case {
    const char* what;
    std::string text;
    long line;
    std::size_t column, bytes;
  };
  const std::vector<Case> cases = {
      {"first field of the first line", big + ",b\n1,2\n", 1, 1, 4097},
      {"after valid rows", "a,b\n1,2\n3," + big + "\n", 3, 3, 4097},
      {"last field of a CRLF row", "a,b\r\n1,2\r\n3," + big + "\r\n4,5\r\n", 3, 3, 4097},
      {"quoted, with doubled quotes and a newline", "a,b\n1,\"x\"\"y\n" + big + "\"\n", 2, 3, 4102},
      // The line is the quote's; the column counts from the row's first line, as CsvReader counts it.
      {"quoted, on a later line of the row", "a,b\n\"two\nlines\",\"" + big + "\"\n", 3, 13, 4097},
      {"leading blanks", "a,b\n1," + std::string(5000, ' ') + "2\n", 2, 3, 5000},
      {"blanks at the start of a row", "a,b\n" + std::string(4200, ' ') + "1,2\n", 2, 1, 4200},
      {"blanks, a CR, then text", "a,b\n  \r" + big + ",2\n", 2, 1, 4100},
      {"with a byte order mark", "\xEF\xBB\xBF" "a," + big + "\n", 1, 6, 4097},
      {"unterminated quote past the bound", "a,b\n1,\"" + big + "\n", 2, 3, 4098},
      {"at the end without a newline", "a,b\n1," + big, 2, 3, 4097},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    CHECK(expected(c.text, TextSyntax::kCsv) == message(kPath, c.line, c.column, c.bytes));
    CHECK(streamed_reader(c.text, TextSyntax::kCsv) == message(kPath, c.line, c.column, c.bytes));
    CHECK(streamed_reader(c.text, TextSyntax::kTrace) == message(kPath, c.line, c.column, c.bytes));
  }
}

TEST_CASE("bounded read: what is not a field past the bound reads as before") {
  // A field of exactly the bound, a long comment, a long blank line, many short fields.
  std::string many;
  for (int i = 0; i < 3000; ++i) many += (i ? "," : "") + std::to_string(i);
  for (const std::string& text :
       {"a,b\n1," + at_bound + "\n", "a,b\n1,\"" + at_bound + "\"\n", "# " + big + big + "\na,b\n1,2\n",
        "a,b\n" + std::string(9000, ' ') + "\n1,2\n", "a,b\n" + many + "\n", std::string("a,b\n1,\"x\"y\n"),
        "a,b\n1," + big + "\"\n" /* a quote in a long field: the quoting error */, std::string(""),
        "a,b\n1,\"" + at_bound + "\n" /* unterminated */}) {
    CAPTURE(text.substr(0, 60));
    check_same(text, TextSyntax::kCsv);
  }
  CHECK(streamed_reader("a,b\n1," + big + "\"\n", TextSyntax::kCsv) ==
        (salus::test::temp_dir() / kPath).string() + ":2: " + salus::core::kQuoteInUnquotedField);
}

TEST_CASE("bounded read: JSON strings and numbers past the bound") {
  CHECK(streamed_reader("{\"jobs\": [\n  {\"job_id\": \"" + big + "\"}\n]}\n", TextSyntax::kJson) == message(kPath, 2, 14, 4099));
  CHECK(streamed_reader("[1, -" + std::string(5000, '7') + "]", TextSyntax::kJson) == message(kPath, 1, 5, 5001));
  CHECK(streamed_reader("[\"a\\\"b" + big + "\"]", TextSyntax::kTrace) == message(kPath, 1, 2, 4103));
  CHECK(streamed_reader("\xEF\xBB\xBF[\"" + big + "\"]", TextSyntax::kJson) == message(kPath, 1, 5, 4099));
  for (const std::string& text : {"[\"" + at_bound + "\"]", "{\"k\": " + std::string(4098, '1') + "}",
                                  "[\"" + big + "\\", "[\"" + big + "\n\"]"}) {
    CAPTURE(text.substr(0, 20));
    check_same(text, TextSyntax::kJson);
  }
}

TEST_CASE("bounded read: a Gavel trace's tab-separated fields past the bound") {
  const std::string row = "A\tcmd\tdir\t-s\t1\t";
  CHECK(streamed_reader(row + big + "\t1\t1\t-1\t0\n", TextSyntax::kTsv) == message(kPath, 1, 16, 4097));
  CHECK(streamed_reader(row + big + "\t1\t1\t-1\t0\n", TextSyntax::kTrace) == message(kPath, 1, 16, 4097));
  CHECK(streamed_reader(row + "1\t1\t1\t-1\t0\r\n" + row + "1\t1\t1\t-1\t" + big + "\r\n", TextSyntax::kTrace) ==
        message(kPath, 2, 25, 4097));
  // Blank rows of any length and comments are skipped, as GavelRows skips them.
  for (const std::string& text : {std::string(5000, ' ') + "\n" + row + "1\t1\t1\t-1\t0\n", "#" + big + "\n" + row + "1\t1\t1\t-1\t0\n",
                                  row + "1\t1\t1\t-1\t0\n" + std::string(4500, ' ') + "\tx\n"}) {
    check_same(text, TextSyntax::kTsv);
  }
}

TEST_CASE("bounded read: the cluster file's comma lines") {
  CHECK(streamed_reader("nodes,gpus_per_node,gpu_mem\n1,2," + big + "\n", TextSyntax::kLines) == message(kPath, 2, 5, 4097));
  CHECK(streamed_reader("  # " + big + "\nnodes,gpus_per_node,gpu_mem\n1,2,16GiB\r\n", TextSyntax::kLines).empty() == false);
  const std::string ok = "  # " + big + "\n" + std::string(5000, ' ') + "\nnodes,gpus_per_node,gpu_mem\n1,2,16GiB\r\n";
  const std::string path = salus::test::temp_file("cluster.csv", ok);
  CHECK(salus::core::read_text_file(path, "cluster file", TextSyntax::kLines) == ok);
}

TEST_CASE("bounded read: fields across chunk boundaries, in random texts, as the whole-text readers say") {
  // Texts of runs (long and short) and the bytes the syntaxes care about, placed after a padding
  // that puts them across the reader's 256 KiB chunks. Whatever the whole-text reader says first
  // (a field past the bound, a quoting error, nothing), reading then parsing says the same.
  std::mt19937 rng(7);
  const char specials[] = {',', '"', '\n', '\r', ' ', '\t', '#', '\\', '-', '1', '{', '['};
  auto random_text = [&](TextSyntax syntax) {
    std::string t;
    if (syntax == TextSyntax::kJson) t = "[";
    const int pieces = 1 + static_cast<int>(rng() % 12);
    for (int k = 0; k < pieces; ++k) {
      switch (rng() % 4) {
        case 0: t += std::string(rng() % 5000, 'a'); break;
        case 1: t += std::string(rng() % 4200, rng() % 2 ? ' ' : '1'); break;
        default: t += specials[rng() % sizeof specials]; break;
      }
    }
    return t;
  };
  const std::vector<std::size_t> pads = {0, (std::size_t{1} << 18) - 4100, (std::size_t{1} << 18) - 2, (std::size_t{1} << 19) - 3000};
  int compared = 0, field_errors = 0;
  for (TextSyntax syntax : {TextSyntax::kCsv, TextSyntax::kTsv, TextSyntax::kJson, TextSyntax::kTrace}) {
    for (int n = 0; n < 60; ++n) {
      const std::size_t pad = pads[static_cast<std::size_t>(n) % pads.size()];
      std::string text;
      if (syntax == TextSyntax::kJson) {
        text = std::string(pad, ' ') + random_text(syntax);
      } else {
        text = pad ? "#" + std::string(pad - 2, 'c') + "\n" : "";
        text += random_text(syntax);
      }
      CAPTURE(static_cast<int>(syntax));
      CAPTURE(n);
      const std::string want = expected(text, syntax);
      CHECK(streamed_reader(text, syntax) == want);
      ++compared;
      field_errors += want.find("a field of") != std::string::npos;
    }
  }
  CHECK(compared == 240);
  CHECK(field_errors > 40);  // the texts do reach the bound
}

TEST_CASE("bounded read: valid files read back byte for byte") {
  for (const char* name : {"long_trace_100.csv", "examples/hand.csv", "profiles/catalog.json"}) {
    const std::string path = std::string(SALUS_SOURCE_DIR) + "/traces/" + name;
    CAPTURE(path);
    std::ifstream f(path, std::ios::binary);
    const std::string whole((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    REQUIRE(!whole.empty());
    CHECK(salus::core::read_text_file(path, "test file", TextSyntax::kTrace) == whole);
  }
}
