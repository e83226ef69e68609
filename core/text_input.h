#pragma once
/// Reading input files (traces, catalogs, cluster files, throughputs, configurations) with a bound
/// on their fields: read_text_file reads in chunks and scans each as it comes, so a field longer
/// than kMaxFieldBytes stops the reading there, with memory bounded by what precedes the field
/// plus a chunk, not by the field or the file.
#include <cstddef>
#include <string>
#include <string_view>

namespace salus::core {

/// The longest field a reader accepts: a trace's ids, names and numbers are tens of bytes; a field
/// of megabytes is a wrong file or a broken one, refused before it costs memory or a message of
/// its size.
inline constexpr std::size_t kMaxFieldBytes = 4096;

/// Throws InputError "path:line:column: a field of N bytes, more than the 4096 bytes a field may
/// have (is this the right file?)" (column 1-based, in bytes).
[[noreturn]] void field_too_long(const std::string& path, long line, std::size_t column, std::size_t bytes);

/// The CSV reader's messages for a quote where none may be (traces::CsvReader and the scanner).
inline constexpr const char* kQuoteInUnquotedField =
    "quote inside an unquoted field (quote the whole field and double inner quotes)";

/// How read_text_file finds the fields of a file, each the rules of the reader that will parse it.
enum class TextSyntax {
  kCsv,    ///< traces::CsvReader: quoted fields with doubled quotes, LF or CRLF, '#' comments, BOM
  kTsv,    ///< a Gavel trace (traces::GavelRows): fields between tabs, lines, '#' comments, BOM
  kJson,   ///< JSON: each string and number token (traces::parse_json's bound)
  kLines,  ///< comma-separated lines without quoting (the cluster file, Alibaba's node list)
  kTrace,  ///< a trace of unknown format: JSON, Gavel or CSV as traces::detect_format tells them
};

/// The whole file as bytes. Throws InputError "path: cannot open <kind>: ..." (open_input_file's
/// errors) for a file that cannot be opened, and field_too_long's error, with the line and column
/// and byte count the reader of `syntax` would report, for the first field longer than
/// kMaxFieldBytes: reading stops keeping bytes once that error is certain (the rest of the field
/// is counted, not kept, for the message). Where the bytes before that field are not UTF-8, the
/// error is check_utf8's instead, as the readers (which check UTF-8 first) would report.
std::string read_text_file(const std::string& path, const std::string& kind, TextSyntax syntax);

/// The first byte of `text` that is not part of valid UTF-8 (overlong forms and surrogates
/// included), or npos.
std::size_t first_invalid_utf8(std::string_view text);
/// Throws InputError "path:line: not UTF-8 text (byte 0xNN)" at the first invalid byte.
void check_utf8(std::string_view text, const std::string& path);

}  // namespace salus::core
