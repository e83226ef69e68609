#pragma once
/// Text-level helpers shared by the readers of input files (traces, catalogs, the experiments'
/// configurations): reading a file, a small CSV reader, and the line bookkeeping that lets JSON
/// errors name "file:line".
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace salus::traces {

struct CsvRow {
  long line = 0;                    ///< 1-based line in the file where the row starts
  std::vector<std::string> fields;
};

struct CsvTable {
  /// The header row; `header.line` is 0 and `header.fields` empty when the text has no rows.
  CsvRow header;
  std::vector<CsvRow> rows;
};

/// Splits `text` into a header and data rows. Understands quoted fields ("a,b", "say ""hi"""),
/// LF and CRLF line ends, a UTF-8 byte order mark, and skips blank lines and lines whose first
/// non-blank character is '#'. Unquoted fields are trimmed of spaces and tabs. `path` only names
/// the file in errors; throws core::InputError "path:line: what" on malformed quoting.
CsvTable parse_csv(std::string_view text, const std::string& path);

/// The whole file as bytes; a file that cannot be opened throws core::InputError
/// "path: cannot open <kind>" (e.g. kind "trace file").
std::string read_text_file(const std::string& path, const std::string& kind);

/// Parses JSON; a syntax error becomes core::InputError "path:line: invalid JSON: <what>".
nlohmann::json parse_json(std::string_view text, const std::string& path);

/// The 1-based line on which each element of an array in valid JSON `text` starts. With an
/// empty `key` the array is the top-level value; otherwise it is the value of `key` in the
/// top-level object. Empty when there is no such array.
std::vector<long> json_array_element_lines(std::string_view text, std::string_view key);

}  // namespace salus::traces
