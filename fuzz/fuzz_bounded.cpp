// A libFuzzer target for the bounded file reader (core::read_text_file, issue 32): the bytes,
// with short runs expanded so that fields past the 4,096-byte bound are within reach (a byte 0x01
// followed by n repeats the byte before it (n + 1) x 32 times), are written to an in-memory file
// and read with the syntax the first byte picks. What must hold: a read that succeeds returns the
// file's bytes exactly; a refusal is core::InputError; for CSV, the bounded read refuses a field as
// too long exactly when reading the whole text with traces::CsvReader does (the scanner follows
// the reader's rules), unless the reader stops earlier at another mistake. Anything else traps.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/errors.h"
#include "core/text_input.h"
#include "traces/csv.h"

namespace {

bool too_long(const std::string& what) { return what.find("more than the 4096 bytes") != std::string::npos; }

// The whole-text reader's verdict on CSV: "" when it reads, else its message.
std::string whole_csv(const std::string& text, const std::string& path) {
  try {
    salus::core::check_utf8(text, path);
    (void)salus::traces::parse_csv(text, path);
  } catch (const salus::core::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  using salus::core::TextSyntax;
  constexpr TextSyntax kSyntaxes[] = {TextSyntax::kCsv, TextSyntax::kTsv, TextSyntax::kJson, TextSyntax::kLines,
                                      TextSyntax::kTrace};
  const TextSyntax syntax = kSyntaxes[data[0] % 5];
  std::string bytes;
  for (std::size_t i = 1; i < size; ++i) {
    if (data[i] == 0x01 && i + 1 < size && !bytes.empty()) {
      bytes.append((static_cast<std::size_t>(data[i + 1]) + 1) * 32, bytes.back());
      ++i;
    } else {
      bytes.push_back(static_cast<char>(data[i]));
    }
  }
  const int fd = ::memfd_create("salus-fuzz", 0);
  if (fd < 0) return 0;
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  std::string read, error;
  bool ok = true;
  try {
    read = salus::core::read_text_file(path, "fuzz input", syntax);
  } catch (const salus::core::InputError& e) {
    ok = false;
    error = e.what();
  }
  ::close(fd);
  if (done != bytes.size()) return 0;
  if (ok && read != bytes) __builtin_trap();
  if (syntax == TextSyntax::kCsv) {
    const std::string whole = whole_csv(bytes, path);
    if (ok && too_long(whole)) __builtin_trap();       // the scanner let through what the reader refuses
    if (!ok && too_long(error) && whole.empty()) __builtin_trap();  // it refused what the reader reads
  }
  return 0;
}
