// The CSV reader and the JSON line bookkeeping shared by the trace and catalog readers.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "traces/csv.h"

using salus::core::InputError;
using salus::traces::json_array_element_lines;
using salus::traces::parse_csv;
using salus::traces::parse_json;

TEST_CASE("csv: header, rows and their file lines, with comments and blank lines skipped") {
  const auto t = parse_csv("# a comment\n\njob_id,arrival_s\n  # indented comment\na,1\n\n b , 2 \n", "t.csv");
  CHECK(t.header.line == 3);
  CHECK(t.header.fields == std::vector<std::string>{"job_id", "arrival_s"});
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0].line == 5);
  CHECK(t.rows[0].fields == std::vector<std::string>{"a", "1"});
  CHECK(t.rows[1].line == 7);
  CHECK(t.rows[1].fields == std::vector<std::string>{"b", "2"});  // unquoted fields are trimmed
}

TEST_CASE("csv: CRLF line ends, quoted fields, doubled quotes, empty fields") {
  const auto t = parse_csv("x,y,z\r\n\"a,b\",\"say \"\"hi\"\"\",\r\n\" padded \",,last\r\n", "t.csv");
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0].fields == std::vector<std::string>{"a,b", "say \"hi\"", ""});
  CHECK(t.rows[1].fields == std::vector<std::string>{" padded ", "", "last"});
  CHECK(t.rows[1].line == 3);
}

TEST_CASE("csv: a quoted field may span lines and the next row keeps its own line number") {
  const auto t = parse_csv("x,y\n\"two\nlines\",1\nb,2", "t.csv");
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0].fields[0] == "two\nlines");
  CHECK(t.rows[0].line == 2);
  CHECK(t.rows[1].line == 4);
  CHECK(t.rows[1].fields == std::vector<std::string>{"b", "2"});  // no trailing newline needed
}

TEST_CASE("csv: empty text has no header and a byte order mark is skipped") {
  CHECK(parse_csv("", "t.csv").header.fields.empty());
  CHECK(parse_csv("\n# only a comment\n", "t.csv").header.fields.empty());
  CHECK(parse_csv("\xEF\xBB\xBFjob_id\na\n", "t.csv").header.fields == std::vector<std::string>{"job_id"});
}

TEST_CASE("csv: malformed quoting is reported with its line") {
  CHECK_THROWS_WITH_AS(parse_csv("x,y\na,\"open\n", "t.csv"), "t.csv:2: unterminated quoted field", InputError);
  CHECK_THROWS_WITH_AS(parse_csv("x,y\n\"a\"b,1\n", "t.csv"), "t.csv:2: unexpected text after a closing quote",
                       InputError);
  CHECK_THROWS_WITH_AS(parse_csv("x,y\nab\"c,1\n", "t.csv"),
                       "t.csv:2: quote inside an unquoted field (quote the whole field and double inner quotes)",
                       InputError);
}

TEST_CASE("json: a syntax error names the line of the offending character") {
  CHECK_THROWS_WITH_AS(parse_json("{\n  \"a\": 1,\n}\n", "t.json"),
                       "t.json:3: invalid JSON: syntax error while parsing object key - unexpected '}'; expected string "
                       "literal",
                       InputError);
  CHECK_THROWS_WITH_AS(parse_json("[\n{\"a\": 1}\n", "t.json"),
                       "t.json:3: invalid JSON: syntax error while parsing array - unexpected end of input; expected ']'",
                       InputError);
  CHECK(parse_json("[1, 2]", "t.json").size() == 2);
}

TEST_CASE("json: lines where the elements of the records array start") {
  const std::string top = "[\n  {\"a\": [1, {\"b\": 2}]},\n\n  {\"s\": \"}],{\\\"\"}\n  , 7\n]\n";
  CHECK(json_array_element_lines(top, "") == std::vector<long>{2, 4, 5});
  const std::string keyed = "{\"other\": [1, 2],\n \"jobs\": [\n  {\"a\": 1},\n  {\"a\": [\n2]}, {\"a\": 3}]}";
  CHECK(json_array_element_lines(keyed, "jobs") == std::vector<long>{3, 4, 5});
  CHECK(json_array_element_lines("{\"jobs\": []}", "jobs").empty());
  CHECK(json_array_element_lines("{\"x\": {\"jobs\": [1]}}", "jobs").empty());  // only top-level keys count
}

TEST_CASE("csv: the row reader hands out views, unescaping doubled quotes, with each row's line") {
  const std::string text = "x,y\n\"say \"\"hi\"\"\",\"a\"\"b\"\n\n\"two\nlines\", plain \n";
  salus::traces::CsvReader r(text, "t.csv");
  REQUIRE(r.next());
  CHECK(r.line() == 1);
  REQUIRE(r.next());
  CHECK(r.line() == 2);
  REQUIRE(r.fields().size() == 2);
  CHECK(r.fields()[0] == "say \"hi\"");  // both unescaped fields of a row stay valid together
  CHECK(r.fields()[1] == "a\"b");
  REQUIRE(r.next());
  CHECK(r.line() == 4);
  REQUIRE(r.fields().size() == 2);
  CHECK(r.fields()[0] == "two\nlines");
  CHECK(r.fields()[0].data() == text.data() + text.find("two"));  // a view into the text, not a copy
  CHECK(r.fields()[1] == "plain");
  CHECK_FALSE(r.next());
}

TEST_CASE("csv: the row reader reports malformed quoting with the file and line") {
  salus::traces::CsvReader r("x,y\na,1\nb,\"open\n", "dir/t.csv");
  REQUIRE(r.next());
  REQUIRE(r.next());
  CHECK_THROWS_WITH_AS(r.next(), "dir/t.csv:3: unterminated quoted field", InputError);
}

TEST_CASE("csv: append_csv_field writes what the row reader reads back, quoting only when it must") {
  const std::vector<std::string> values = {"plain", "", "a,b", "say \"hi\"", "two\nlines", "cr\r", " lead", "trail\t",
                                           "in side"};
  std::string text = "h1,h2,h3,h4,h5,h6,h7,h8,h9\n";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ',';
    salus::traces::append_csv_field(text, values[i]);
  }
  text += '\n';
  salus::traces::CsvReader r(text, "t.csv");
  REQUIRE(r.next());
  REQUIRE(r.next());
  REQUIRE(r.fields().size() == values.size());
  for (std::size_t i = 0; i < values.size(); ++i) CHECK(r.fields()[i] == values[i]);
  std::string plain;
  salus::traces::append_csv_field(plain, "in side");
  salus::traces::append_csv_field(plain, "");
  CHECK(plain == "in side");  // neither needs quotes
}

// ---- Hostile JSON: depth, duplicate keys, bytes after the document (tests/README.md, "Hostile input")

TEST_CASE("json: nesting up to kMaxJsonDepth is read, one level more is refused at its line and column") {
  using salus::traces::kMaxJsonDepth;
  const std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  CHECK(parse_json(ok, "t.json").is_array());
  const std::string deep = "\n" + std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']');
  CHECK_THROWS_WITH_AS(parse_json(deep, "t.json"), "t.json:2: JSON nested deeper than 256 levels (column 257)", InputError);
  // Objects count as arrays do; brackets inside strings do not count.
  std::string objects;
  for (std::size_t k = 0; k <= kMaxJsonDepth; ++k) objects += "{\"k\":";
  objects += "1" + std::string(kMaxJsonDepth + 1, '}');
  CHECK_THROWS_WITH_AS(parse_json(objects, "t.json"), "t.json:1: JSON nested deeper than 256 levels (column 1281)",
                       InputError);
  const std::string in_string = "[\"" + std::string(1000, '[') + "\\\"[{\"]";
  CHECK(parse_json(in_string, "t.json").size() == 1);
  // 100,000 levels: refused before the parser, which would build a value no code here can walk.
  const std::string huge = std::string(100'000, '[') + std::string(100'000, ']');
  CHECK_THROWS_WITH_AS(parse_json(huge, "t.json"), "t.json:1: JSON nested deeper than 256 levels (column 257)", InputError);
}

TEST_CASE("json: a key given twice in one object is refused at the second one's line") {
  CHECK_THROWS_WITH_AS(parse_json("{\"a\": 1,\n \"b\": 2,\n \"a\": 3}", "t.json"),
                       "t.json:3: duplicate key \"a\" in one object (a key is given once)", InputError);
  // Written with an escape, the same key.
  CHECK_THROWS_WITH_AS(parse_json("[{\"a\": 1, \"\\u0061\": 2}]", "t.json"),
                       "t.json:1: duplicate key \"a\" in one object (a key is given once)", InputError);
  // Nested objects have keys of their own; the same key in two objects is fine.
  CHECK(parse_json("{\"a\": {\"a\": 1}, \"b\": [{\"a\": 1}, {\"a\": 2}]}", "t.json").size() == 2);
  // A wide object (sorted, not compared pairwise): the first repeat by position is named.
  std::string wide = "{";
  for (int k = 0; k < 40; ++k) wide += "\"k" + std::to_string(k) + "\": " + std::to_string(k) + ",\n";
  wide += "\"k7\": 0, \"k3\": 0}";
  CHECK_THROWS_WITH_AS(parse_json(wide, "t.json"), "t.json:41: duplicate key \"k7\" in one object (a key is given once)",
                       InputError);
  // A string value equal to a key is not a key.
  CHECK(parse_json("{\"a\": \"a\", \"b\": [\"a\", \"b\"]}", "t.json").size() == 2);
}

TEST_CASE("json: a NUL byte and bytes after the document are refused, not ignored") {
  CHECK_THROWS_WITH_AS(parse_json(std::string("[1]\0[2]", 7), "t.json"),
                       "t.json:1: a NUL byte, which JSON text never holds (column 4)", InputError);
  CHECK_THROWS_WITH_AS(parse_json(std::string("[\"a\0b\"]", 7), "t.json"),
                       "t.json:1: a NUL byte, which JSON text never holds (column 4)", InputError);
  CHECK_THROWS_WITH_AS(parse_json("[1]\n\n  [2]", "t.json"), "t.json:3: bytes after the JSON document (column 3)",
                       InputError);
  CHECK_THROWS_WITH_AS(parse_json("{\"a\": 1}}", "t.json"), "t.json:1: bytes after the JSON document (column 9)",
                       InputError);
  CHECK_THROWS_WITH_AS(parse_json("\"s\" 1", "t.json"), "t.json:1: bytes after the JSON document (column 5)", InputError);
  CHECK_THROWS_WITH_AS(parse_json("null x", "t.json"), "t.json:1: bytes after the JSON document (column 6)", InputError);
  // Blank space after the document, and a byte order mark before it, are fine.
  CHECK(parse_json("[1]\n\r\n\t \n", "t.json").size() == 1);
  CHECK(parse_json("\xEF\xBB\xBF[1]", "t.json").size() == 1);
  CHECK(parse_json("7", "t.json") == 7);
}

TEST_CASE("json: an excerpt of a value is short, whole characters, its beginning and end") {
  using salus::traces::json_excerpt;
  CHECK(json_excerpt(nlohmann::json::parse("{\"a\": [1, 2, {\"b\": null}]}")) == "{\"a\":[1,2,{\"b\":null}]}");
  CHECK(json_excerpt(nlohmann::json("text")) == "\"text\"");
  nlohmann::json wide = nlohmann::json::array();
  for (int k = 0; k < 100'000; ++k) wide.push_back(k);
  const std::string w = json_excerpt(wide);
  CHECK(w.size() <= 80);
  CHECK(w.substr(0, 8) == "[0,1,2,3");
  CHECK(w.substr(w.size() - 7) == ",99999]");
  CHECK(w.find("...") != std::string::npos);
  // Deep: built without recursion, as deep as an input may be and far deeper.
  nlohmann::json deep = 1;
  for (int k = 0; k < 5000; ++k) deep = nlohmann::json::array({std::move(deep)});
  const std::string d = json_excerpt(deep);
  CHECK(d == std::string(38, '[') + "..." + std::string(38, ']'));
  nlohmann::json keyed = nlohmann::json::object();
  for (int k = 0; k < 50; ++k) keyed["key" + std::to_string(k)] = k;
  const std::string o = json_excerpt(keyed);
  CHECK(o.substr(0, 11) == "{\"key0\":0,\"");
  CHECK(o.substr(o.size() - 9) == "\"key9\":9}");
  // Multi-byte characters are never cut.
  std::string accents;
  for (int k = 0; k < 100; ++k) accents += "\xC3\xA9";
  const std::string a = json_excerpt(nlohmann::json(accents), 20);
  CHECK(a.size() <= 20);
  CHECK(salus::traces::first_invalid_utf8(a) == std::string::npos);
  CHECK(json_excerpt(nlohmann::json(accents), 20) == "\"\xC3\xA9\xC3\xA9\xC3\xA9...\xC3\xA9\xC3\xA9\xC3\xA9\"");
  // Text (keys, names) the same way, unquoted.
  using salus::traces::text_excerpt;
  CHECK(text_excerpt("jobs") == "jobs");
  CHECK(text_excerpt(std::string(40, 'a') + std::string(4000, 'b') + std::string(40, 'c')) ==
        std::string(38, 'a') + "..." + std::string(38, 'c'));
  CHECK(text_excerpt(accents, 20) == "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9...\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9");
}
