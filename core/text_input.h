#pragma once
/// Reading input files (traces, catalogs, cluster files, throughputs, configurations) in chunks,
/// with the bounds every reader enforces: on a field, on a line and on the fields of a line. No
/// format's grammar lives here: each reader (traces::CsvReader, the Gavel rows, the cluster file,
/// traces::parse_json) applies the bounds by its own rules as it reads; this file gives them the
/// bytes, the lines, the numbers and the messages.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace salus::core {

/// The longest field a reader accepts: a trace's ids, names and numbers are tens of bytes; a field
/// of megabytes is a wrong file or a broken one, refused before it costs memory or a message of
/// its size.
inline constexpr std::size_t kMaxFieldBytes = 4096;
/// The longest line (a CSV record, a Gavel row, a cluster file's row) a line-based reader
/// accepts, its line break not counted: 4 MiB. A reader streams a file through a window of a few
/// times this, so a file of one endless line (a sparse file, a file of commas) costs no more.
inline constexpr std::size_t kMaxLineBytes = std::size_t{4} << 20;
/// The most fields a row may have: the widest public trace has about 30 columns.
inline constexpr std::size_t kMaxFieldsPerLine = 10'000;

/// Throws InputError "path:line:column: a field of N bytes, more than the 4096 bytes a field may
/// have (is this the right file?)" (column 1-based, in bytes).
[[noreturn]] void field_too_long(const std::string& path, long line, std::size_t column, std::size_t bytes);
/// Throws InputError "path:line: a line longer than 4194304 bytes (is this the right file?)".
[[noreturn]] void line_too_long(const std::string& path, long line);
/// Throws InputError "path:line: more than 10000 fields in one row (is this the right file?)".
[[noreturn]] void too_many_fields(const std::string& path, long line);

/// The CSV reader's messages for a quote where none may be (traces::CsvReader).
inline constexpr const char* kQuoteInUnquotedField =
    "quote inside an unquoted field (quote the whole field and double inner quotes)";

/// An input file open for reading in chunks (open_input_file's checks: a regular file). Closes
/// it when destroyed.
class InputFile {
 public:
  /// Throws InputError "path: cannot open <kind>: ..." (open_input_file's errors).
  InputFile(const std::string& path, const std::string& kind);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  /// Reads up to `n` bytes into `dst` from the current offset; 0 at the end of the file. Throws
  /// InputError "path: cannot read <kind>: <strerror>".
  std::size_t read(char* dst, std::size_t n);
  /// Back to the first byte (an input is a regular file, so it can be read again).
  void rewind();
  const std::string& path() const { return path_; }
  const std::string& kind() const { return kind_; }

 private:
  std::string path_;
  std::string kind_;
  int fd_ = -1;
};

/// Appends up to `n` more bytes of `file` to `out` (fewer at its end); returns how many.
std::size_t append_from(InputFile& file, std::string& out, std::size_t n);

/// How read_text_file checks what it reads.
enum class TextBound {
  kNone,   ///< nothing: the reader checks the whole text
  kLines,  ///< no line longer than kMaxLineBytes: reading stops at the first (line_too_long)
  /// JSON (whose lines may be long): reading stops after the first NUL byte, which JSON text never
  /// holds and traces::parse_json refuses at its line and column (a sparse file is all NULs).
  kJson,
};

/// The whole file as bytes, read in chunks into a buffer that grows with what is read (never
/// sized by the file's size). Throws InputError for a file that cannot be opened or read, and for
/// kLines line_too_long's error as soon as a line passes the bound.
std::string read_text_file(const std::string& path, const std::string& kind, TextBound bound);
/// The same for the rest of a file already open, from its current offset.
std::string read_rest(InputFile& file, TextBound bound);

/// The first byte of `text` that is not part of valid UTF-8 (overlong forms and surrogates
/// included), or npos.
std::size_t first_invalid_utf8(std::string_view text);
/// Throws InputError "path:line: not UTF-8 text (byte 0xNN)" at the first invalid byte, the line
/// counted from `first_line` at the start of `text`.
void check_utf8(std::string_view text, const std::string& path, long first_line = 1);
/// The length of `text` less a UTF-8 character cut short at its end (at most 3 bytes): what can be
/// checked before the next chunk comes.
std::size_t complete_utf8_prefix(std::string_view text);

}  // namespace salus::core
