#pragma once
/// Text-level helpers shared by the readers of input files (traces, catalogs, the experiments'
/// configurations): reading a file, a small CSV reader, and the line bookkeeping that lets JSON
/// errors name "file:line".
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/errors.h"
#include "core/huge_pages.h"
#include "core/text_input.h"

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

/// core/text_input.h: the bound on a field and its error, read by every reader here.
using core::field_too_long;
using core::kMaxFieldBytes;
using core::kMaxFieldsPerLine;
using core::kMaxLineBytes;

/// Reads CSV text one row at a time, keeping nothing: each field is a view into the text, or
/// into the reader's own buffer for a quoted field with doubled quotes, valid until the next
/// call of next(). No heap allocation per row or cell once the buffers have grown to the widest
/// row. Understands quoted fields ("a,b", "say ""hi"""), LF and CRLF line ends, a UTF-8 byte
/// order mark, and skips blank lines and lines whose first non-blank character is '#'. Unquoted
/// fields are trimmed of spaces and tabs. `path` only names the file in errors; next() throws
/// core::InputError "path:line: what" on malformed quoting, and field_too_long's error on a field
/// longer than kMaxFieldBytes.
///
/// From a file (the second constructor), the reader streams: it keeps a window of a few times
/// core::kMaxLineBytes and reads on as rows are taken, checking each chunk is UTF-8 as it comes
/// (check_utf8's error, with its line). Either way a row longer than kMaxLineBytes (line_too_long)
/// or of more than kMaxFieldsPerLine fields (too_many_fields) is refused where it starts.
class CsvReader {
 public:
  CsvReader(std::string_view text, const std::string& path);
  /// Reads `file` from its current offset; the file outlives the reader.
  explicit CsvReader(core::InputFile& file);
  /// Reads the next row (the first is the header); false at the end of the text.
  bool next();
  /// The 1-based line in the file where the current row starts.
  long line() const { return row_line_; }
  std::span<const std::string_view> fields() const { return views_; }

 private:
  bool skip_ignored_line();
  void refill();
  bool cut_short() const { return file_ != nullptr && !eof_; }
  void end_line();
  bool at_line_end() const;
  void read_field();
  [[noreturn]] void past_bound(long line, std::size_t column, std::size_t end, std::size_t bytes) const;

  struct Cell {
    std::size_t pos, len;
    bool unescaped;  // in scratch_, not in the text
  };
  std::string_view text_;
  std::string path_;
  std::size_t pos_ = 0;
  std::size_t line_start_ = 0;  // where line_ starts in the text, for columns in errors
  long line_ = 1;
  long row_line_ = 0;
  std::size_t row_start_ = 0;
  std::vector<Cell> cells_;
  std::vector<std::string_view> views_;
  std::string scratch_;
  core::InputFile* file_ = nullptr;  // streaming: text_ views buffer_, a window of the file
  std::string buffer_;
  bool eof_ = true;
};

/// A trace's input as its reader asks for it: text already in memory (load_trace_text), or a file
/// (load_trace), read row by row by a streaming CsvReader or whole for the readers that need the
/// whole text (JSON, Gavel's lines).
class TraceInput {
 public:
  TraceInput(std::string_view text, const std::string& path) : text_(text), path_(path) {}
  explicit TraceInput(core::InputFile& file) : path_(file.path()), file_(&file) {}
  /// A reader of the input's rows from its first byte (each call starts again).
  CsvReader rows();
  /// The whole input; from a file, read with `bound` (lines bounded, or to the first NUL: JSON)
  /// and checked to be UTF-8 (check_utf8's error).
  std::string_view text(core::TextBound bound);
  const std::string& path() const { return path_; }

 private:
  std::string_view text_;
  std::string path_;
  core::InputFile* file_ = nullptr;
  std::string read_;  // the file's text, once read
  bool have_text_ = false;
};

/// The line of the first row of CSV file `path` that has every one of `values` as a field (a job's
/// id and workload), for an error found after loading, where the job no longer knows its line;
/// 0 when there is none or the file is not read as CSV.
long find_row_line(const std::string& path, const std::vector<std::string_view>& values);

/// Splits `text` into a header and data rows (CsvReader's rules), keeping them all.
CsvTable parse_csv(std::string_view text, const std::string& path);

/// core/huge_pages.h: huge pages for the trace's text and jobs, as for the loop's job states.
using core::advise_huge_pages;

/// Appends `s` as one CSV field that CsvReader reads back as `s`: as it is, or quoted (quotes
/// doubled) when it holds a comma, a quote, a CR or LF, or blanks at either end (which an unquoted
/// field loses). The one CSV field writer (traces, the programs' CSVs).
void append_csv_field(std::string& out, std::string_view s);

/// core/text_input.h: reading a file in chunks (with its lines bounded, or whole), and the UTF-8
/// check every reader makes first.
using core::check_utf8;
using core::first_invalid_utf8;
using core::InputFile;
using core::read_text_file;
using core::TextBound;

/// The deepest nesting of arrays and objects a JSON input may have: far beyond any trace, catalog,
/// throughputs file or configuration, and shallow enough that code walking a value recursively
/// (copying, comparing, printing it) stays within the stack.
inline constexpr std::size_t kMaxJsonDepth = 256;

/// Parses a JSON input: the one parser of every JSON file the programs read (traces, catalogs,
/// throughputs, configurations). Each is a core::InputError "path:line: what" (", column N"
/// where one helps): text that is not UTF-8 (check_utf8); a string or number past kMaxFieldBytes;
/// nesting deeper than kMaxJsonDepth; a key given twice in one object; a NUL byte; anything after
/// the top-level value; and the parser's syntax errors ("invalid JSON: <what>").
nlohmann::json parse_json(std::string_view text, const std::string& path);

/// A JSON value as an error message quotes it: compact, at most `max_chars` bytes (longer: its
/// beginning and its end with "..." between), built without recursion and without writing the
/// whole value, so any value an input holds can be quoted.
std::string json_excerpt(const nlohmann::json& value, std::size_t max_chars = 80);
/// core/errors.h: text (a key, a name) as an error message quotes it, in at most 80 bytes.
using core::text_excerpt;

/// The 1-based line on which each element of an array in valid JSON `text` starts. With an
/// empty `key` the array is the top-level value; otherwise it is the value of `key` in the
/// top-level object. Empty when there is no such array.
std::vector<long> json_array_element_lines(std::string_view text, std::string_view key);

}  // namespace salus::traces
