#include "core/errors.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace salus::core {

// Cuts back to a whole UTF-8 character at the end (`at_end`) or the start of `s`.
std::string whole_characters(std::string s, bool at_end) {
  const auto continuation = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; };
  if (at_end) {
    std::size_t n = s.size();
    while (n > 0 && continuation(s[n - 1])) --n;
    if (n > 0 && static_cast<unsigned char>(s[n - 1]) >= 0xC0) {
      // A lead byte: keep its character only if all of it is there.
      const unsigned char lead = static_cast<unsigned char>(s[n - 1]);
      const std::size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
      if (s.size() - (n - 1) < length) s.resize(n - 1);
    }
    return s;
  }
  std::size_t k = 0;
  while (k < s.size() && continuation(s[k])) ++k;
  return s.substr(k);
}

namespace {

// A NUL byte would end the message where it is printed (what() is a C string): written \x00.
std::string without_nul(std::string s) {
  if (s.find('\0') == std::string::npos) return s;
  std::string out;
  for (char c : s) {
    if (c == '\0') out += "\\x00";
    else out += c;
  }
  return out;
}

}  // namespace

std::string text_excerpt(std::string_view text, std::size_t max_chars) {
  if (text.size() <= max_chars) return without_nul(std::string(text));
  const std::size_t half = max_chars > 3 ? (max_chars - 3) / 2 : 1;
  return without_nul(whole_characters(std::string(text.substr(0, half)), true) + "..." +
                     whole_characters(std::string(text.substr(text.size() - half)), false));
}

void invariant_failed(const char* invariant, const char* file, int line, const std::string& detail) {
  throw std::logic_error(std::string("internal invariant '") + invariant + "' broken at " + file + ":" +
                         std::to_string(line) + (detail.empty() ? "" : ": " + detail));
}

int open_input_file(const std::string& path, const std::string& kind) {
  // O_NONBLOCK: opening a FIFO without a writer must not hang before fstat can refuse it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw InputError(path + ": cannot open " + kind + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    throw InputError(path + ": cannot open " + kind + ": " + std::strerror(e));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw InputError(path + ": is a directory, not a " + kind);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError(path + ": is not a regular file (a FIFO, device or socket), not a " + kind);
  }
  // Regular files never block; reads go back to blocking for clarity.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

}  // namespace salus::core
