// The bounds on what a reader takes in (core/text_input.h): a field of at most kMaxFieldBytes, a
// row of at most kMaxLineBytes and kMaxFieldsPerLine fields. traces::CsvReader streams a file
// through a window of a few times the bound on a row; what it reads, and the first error it
// reports, must be exactly what it says of the same text in memory, wherever the window's edges
// fall. Gavel's rows and read_text_file's lines hold the same bounds on text read whole (the cluster
// file's: tests/tools/hostile_input_test.cpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/errors.h"
#include "support/temp_files.h"
#include "traces/csv.h"
#include "traces/reader_steps.h"
#include "traces/trace.h"

namespace {

using salus::core::InputError;
using salus::core::kMaxFieldBytes;
using salus::core::kMaxFieldsPerLine;
using salus::core::kMaxLineBytes;
namespace traces = salus::traces;

// What a CsvReader says: each row's line and field sizes, then "ok", or its first error.
std::string digest(traces::CsvReader& rows) {
  std::string seen;
  try {
    while (rows.next()) {
      seen += std::to_string(rows.line()) + ":";
      for (auto f : rows.fields()) seen += std::to_string(f.size()) + ",";
      seen += ";";
    }
    return seen + "ok";
  } catch (const InputError& e) {
    return seen + e.what();
  }
}

// The reader on `text` in memory, named `path` in errors.
std::string in_memory(const std::string& text, const std::string& path) {
  try {
    traces::check_utf8(text, path);
  } catch (const InputError& e) {
    return e.what();
  }
  traces::CsvReader rows(text, path);
  return digest(rows);
}

// The reader streaming `text` from a file; `path` receives the file's name.
std::string streamed(const std::string& text, std::string& path) {
  path = salus::test::temp_file("bounded.csv", text);
  try {
    salus::core::InputFile file(path, "test file");
    traces::CsvReader rows(file);
    return digest(rows);
  } catch (const InputError& e) {
    return e.what();
  }
}

// Streamed and in memory agree on `text`; returns what they said.
std::string same(const std::string& text) {
  std::string path;
  const std::string got = streamed(text, path);
  CHECK(got == in_memory(text, path));
  return got;
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

const std::string big(kMaxFieldBytes + 1, 'x');

}  // namespace

TEST_CASE("bounded read: a field past the bound, with its line, column and bytes, streamed as in memory") {
  CHECK(has(same("a,b\n1," + big + "\n"), ":2:3: a field of 4097 bytes, more than the 4096 bytes"));
  CHECK(has(same("a,b\n1,\"" + big + "\"\n"), ":2:3: a field of 4097 bytes"));
  CHECK(has(same(big + ",b\n"), ":1:1: a field of 4097 bytes"));
  CHECK(has(same("a,b\n1," + std::string(kMaxFieldBytes, 'x') + "\n"), "ok"));
}

TEST_CASE("bounded read: a row past the bound on a line, or of too many fields, at its line") {
  // One field of 5 MiB: past the line's bound before its own end is read (the window holds one row).
  const std::string line_error = "a line longer than " + std::to_string(kMaxLineBytes) + " bytes";
  std::string r = same("a,b\n1,2\n" + std::string(kMaxLineBytes + 10, 'x') + ",2\n");
  CHECK(has(r, ":3: " + line_error));
  CHECK(has(r, "2:1,1,;"));  // the rows before it were read
  // Fields within their bound, too many of them: 50,000 empty fields.
  r = same("a,b\n" + std::string(50'000, ',') + "\n");
  CHECK(has(r, ":2: more than " + std::to_string(kMaxFieldsPerLine) + " fields in one row"));
  // Exactly the most fields a row may have reads.
  CHECK(has(same(std::string(kMaxFieldsPerLine - 1, ',') + "\n"), "ok"));
  // A comment or a quoted field that never ends is a line past the bound too.
  CHECK(has(same("#" + std::string(kMaxLineBytes + 5, 'c') + "\na\n"), ":1: " + line_error));
  // A row of 4 MiB of short fields (each within the bound, fewer than the most fields) is past it.
  std::string wide;
  while (wide.size() <= kMaxLineBytes) wide += std::string(900, 'y') + ",";
  CHECK(has(same("a\n" + wide + "\n"), ":2: " + line_error));
}

TEST_CASE("bounded read: rows across the window's edges read as in memory") {
  // Rows of every length near the window's refills (which come every few MiB): each text is
  // ~14 MiB of rows, then bytes that end a field, a row or a quote, or break one.
  std::mt19937 rng(11);
  const char specials[] = {',', '"', '\n', '\r', ' ', '\t', '#', 'a'};
  int compared = 0, errors = 0;
  for (int n = 0; n < 6; ++n) {
    std::string text = "job,x\n";
    while (text.size() < (std::size_t{14} << 20)) {
      const std::size_t len = rng() % 3000;
      text += std::string(len, 'a') + "," + std::to_string(len) + "\n";
      if (rng() % 4000 == 0) {
        for (int k = 0; k < 8; ++k) text += specials[rng() % sizeof specials];
        if (rng() % 2) text += std::string(rng() % 5000, 'b');
      }
    }
    CAPTURE(n);
    const std::string r = same(text);
    ++compared;
    errors += !has(r, "ok");
  }
  CHECK(compared == 6);
  CHECK(errors > 0);  // the broken bytes do reach the reader
}

TEST_CASE("bounded read: bytes that are not UTF-8, streamed, at their line") {
  std::string text = "a,b\n";
  for (int i = 0; i < 400'000; ++i) text += "row" + std::to_string(i) + ",1\n";
  text += "bad\xC3,1\n";
  const std::string r = same(text);
  CHECK(has(r, ":400002: not UTF-8 text (byte 0xC3)"));
}

TEST_CASE("bounded read: Gavel rows and read_text_file's lines hold the bounds") {
  const std::string row = "ResNet-50 (batch size 64)\tcmd\t";
  const std::string text = row + std::string(kMaxFieldsPerLine + 5, '\t') + "\n", gavel = "g.tsv";
  traces::steps::GavelRows wide(text, gavel);
  CHECK_THROWS_WITH_AS(wide.next(), ("g.tsv:1: more than " + std::to_string(kMaxFieldsPerLine) +
                                     " fields in one row, more than a row may have (is this the right file?)").c_str(),
                       InputError);
  // JSON is read to its first NUL byte (included, for the parser to name), no further.
  const std::string nul = salus::test::temp_file("bounded_nul.json", std::string("[1,\n2]\0", 7) + std::string(1 << 20, 'x'));
  CHECK(salus::core::read_text_file(nul, "test file", salus::core::TextBound::kJson) == std::string("[1,\n2]\0", 7));
  CHECK_THROWS_WITH_AS(traces::parse_json(salus::core::read_text_file(nul, "test file", salus::core::TextBound::kJson), nul),
                       (nul + ":2: a NUL byte, which JSON text never holds (column 3)").c_str(), InputError);
  // A file of one endless line is refused after the bound, whatever its size.
  const std::string line = salus::test::temp_file("bounded_line.txt", std::string(kMaxLineBytes + 2, '\0'));
  CHECK_THROWS_WITH_AS(salus::core::read_text_file(line, "test file", salus::core::TextBound::kLines),
                       (line + ":1: a line longer than 4194304 bytes, more than a line may have (is this the right file?)").c_str(),
                       InputError);
}

TEST_CASE("bounded read: valid files read back byte for byte") {
  for (const char* name : {"long_trace_100.csv", "examples/hand.csv", "profiles/catalog.json"}) {
    const std::string path = std::string(SALUS_SOURCE_DIR) + "/traces/" + name;
    CAPTURE(path);
    std::ifstream f(path, std::ios::binary);
    const std::string whole((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    REQUIRE(!whole.empty());
    CHECK(salus::core::read_text_file(path, "test file", salus::core::TextBound::kNone) == whole);
    CHECK(salus::core::read_text_file(path, "test file", salus::core::TextBound::kJson) == whole);
    CHECK(salus::core::read_text_file(path, "test file", salus::core::TextBound::kLines) == whole);
  }
}
