// A libFuzzer target for the streaming CSV reader (traces::CsvReader over a core::InputFile): the
// bytes, with short runs expanded so that fields and rows past their bounds are within reach (a
// byte 0x01 followed by n repeats the byte before it (n + 1) x 32 times; 0x02 followed by n
// repeats it (n + 1) x 64 KiB times, past the window's refills), are written to an in-memory file
// and read twice: streamed from the file, and from the whole text in memory. What must hold: for
// UTF-8 text both read the same rows (lines and fields, byte for byte) and stop at the same first
// error, which is core::InputError; read_text_file returns the file's bytes exactly, or refuses a line past the
// bound. Anything else traps.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/errors.h"
#include "core/text_input.h"
#include "traces/csv.h"

namespace {

// Every row's line and fields, then "ok" or the first error.
std::string digest(salus::traces::CsvReader& rows) {
  std::string seen;
  try {
    while (rows.next()) {
      seen += std::to_string(rows.line()) + ":";
      for (auto f : rows.fields()) {
        seen.append(f);
        seen += '\x1f';
      }
      seen += '\x1e';
    }
    return seen + "ok";
  } catch (const salus::core::InputError& e) {
    return seen + e.what();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string bytes;
  for (std::size_t i = 0; i < size; ++i) {
    if ((data[i] == 0x01 || data[i] == 0x02) && i + 1 < size && !bytes.empty()) {
      const std::size_t unit = data[i] == 0x01 ? 32 : std::size_t{1} << 16;
      bytes.append((static_cast<std::size_t>(data[i + 1]) + 1) * unit, bytes.back());
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
  if (done != bytes.size()) {
    ::close(fd);
    return 0;
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  std::string streamed;
  try {
    salus::core::InputFile file(path, "fuzz input");
    salus::traces::CsvReader rows(file);
    streamed = digest(rows);
  } catch (const salus::core::InputError& e) {
    streamed = e.what();
  }
  // Text that is not UTF-8 is compared only where the whole text is: streaming checks each window
  // as it comes, so a row's error before a bad byte further on comes first there.
  if (salus::core::first_invalid_utf8(bytes) == std::string::npos) {
    salus::traces::CsvReader rows(bytes, path);
    if (streamed != digest(rows)) __builtin_trap();
  }
  std::string read;
  bool ok = true;
  try {
    read = salus::core::read_text_file(path, "fuzz input", salus::core::TextBound::kLines);
  } catch (const salus::core::InputError& e) {
    ok = false;
    if (std::string(e.what()).find("a line longer than") == std::string::npos) __builtin_trap();
  }
  ::close(fd);
  if (ok && read != bytes) __builtin_trap();
  return 0;
}
