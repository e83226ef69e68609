#pragma once
/// Error types shared by every folder.
#include <stdexcept>
#include <string>
#include <string_view>

namespace salus::core {

/// The user's mistake in a trace, catalog, config or command line. The message is complete and
/// already names the place, e.g. "trace.csv:7: iterations must be a positive integer".
/// Programs print it and exit with status 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Formats "file:line: what".
inline std::string at(const std::string& file, long line, const std::string& what) {
  return file + ":" + std::to_string(line) + ": " + what;
}

/// Text (a key, a name, a value) as an error message quotes it: as it is up to `max_chars` bytes,
/// else its beginning and end with "..." between, cut at whole UTF-8 characters; a NUL byte written
/// \x00 (it would end the message).
std::string text_excerpt(std::string_view text, std::size_t max_chars = 80);
/// `s` cut back to whole UTF-8 characters at its end (`at_end`) or its start.
std::string whole_characters(std::string s, bool at_end);

/// Opens an input file (a trace, catalog, cluster file, throughputs, node list, configuration) for
/// reading and returns its descriptor, or throws InputError naming it: "path: cannot open <kind>:
/// <reason>" (missing, unreadable), "path: is a directory, not a <kind>", "path: is not a regular
/// file (a FIFO, device or socket), not a <kind>" (a FIFO would block the reader, a device never
/// end). The caller closes the descriptor.
int open_input_file(const std::string& path, const std::string& kind);

/// A broken internal invariant: our bug, never the user's. Throws std::logic_error naming it.
[[noreturn]] void invariant_failed(const char* invariant, const char* file, int line, const std::string& detail);

}  // namespace salus::core

/// Checks an internal invariant in every build type (not compiled out by NDEBUG).
#define SALUS_INVARIANT(cond, name, detail)                                          \
  do {                                                                              \
    if (!(cond)) ::salus::core::invariant_failed(name, __FILE__, __LINE__, (detail)); \
  } while (0)
