#include "core/text_input.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <unistd.h>

#include "core/errors.h"

namespace salus::core {

void field_too_long(const std::string& path, long line, std::size_t column, std::size_t bytes) {
  throw InputError(path + ":" + std::to_string(line) + ":" + std::to_string(column) + ": a field of " + std::to_string(bytes) +
                   " bytes, more than the " + std::to_string(kMaxFieldBytes) + " bytes a field may have (is this the right file?)");
}

void line_too_long(const std::string& path, long line) {
  throw InputError(at(path, line, "a line longer than " + std::to_string(kMaxLineBytes) +
                                      " bytes, more than a line may have (is this the right file?)"));
}

void too_many_fields(const std::string& path, long line) {
  throw InputError(at(path, line, "more than " + std::to_string(kMaxFieldsPerLine) +
                                      " fields in one row, more than a row may have (is this the right file?)"));
}

InputFile::InputFile(const std::string& path, const std::string& kind)
    : path_(path), kind_(kind), fd_(open_input_file(path, kind)) {}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t InputFile::read(char* dst, std::size_t n) {
  for (;;) {
    const ssize_t got = ::read(fd_, dst, n);
    if (got >= 0) return static_cast<std::size_t>(got);
    if (errno == EINTR) continue;
    throw InputError(path_ + ": cannot read " + kind_ + ": " + std::strerror(errno));
  }
}

void InputFile::rewind() {
  if (::lseek(fd_, 0, SEEK_SET) != 0) throw InputError(path_ + ": cannot read " + kind_ + ": " + std::strerror(errno));
}

std::size_t append_from(InputFile& file, std::string& out, std::size_t n) {
  // 64 KiB at a time: the string's zero fill (resize_and_overwrite is C++23) touches no more than
  // a step past what the file holds, so a small file costs its size, not `n`.
  constexpr std::size_t kStep = std::size_t{1} << 16;
  std::size_t have = 0;
  while (have < n) {
    const std::size_t old = out.size();
    const std::size_t want = std::min(kStep, n - have);
    out.resize(old + want);
    const std::size_t got = file.read(out.data() + old, want);
    out.resize(old + got);
    if (got == 0) break;
    have += got;
  }
  return have;
}

std::string read_text_file(const std::string& path, const std::string& kind, TextBound bound) {
  InputFile file(path, kind);
  return read_rest(file, bound);
}

std::string read_rest(InputFile& file, TextBound bound) {
  const std::string& path = file.path();
  std::string text;
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  long line = 1;
  std::size_t line_start = 0;  // where `line` starts in text
  for (;;) {
    // The buffer grows with what is read (std::string doubles its capacity), never by the size the
    // file claims: a sparse file of 100 GB reserves nothing before its bytes prove a line too long.
    const std::size_t from = text.size();
    if (append_from(file, text, kChunk) == 0) break;
    if (bound == TextBound::kJson) {
      const void* nul = std::memchr(text.data() + from, '\0', text.size() - from);
      if (nul != nullptr) {
        text.resize(static_cast<std::size_t>(static_cast<const char*>(nul) - text.data()) + 1);
        break;
      }
    }
    if (bound == TextBound::kLines) {
      for (std::size_t i = from;;) {
        const void* nl = std::memchr(text.data() + i, '\n', text.size() - i);
        if (nl == nullptr) break;
        i = static_cast<std::size_t>(static_cast<const char*>(nl) - text.data());
        if (i - line_start > kMaxLineBytes) line_too_long(path, line);
        ++line;
        line_start = ++i;
      }
      if (text.size() - line_start > kMaxLineBytes) line_too_long(path, line);
    }
  }
  return text;
}

std::size_t complete_utf8_prefix(std::string_view text) {
  // Back over up to 3 continuation bytes to a lead byte; keep its character only if all of it is there.
  std::size_t n = text.size();
  for (std::size_t back = 1; back <= 4 && back <= n; ++back) {
    const auto c = static_cast<unsigned char>(text[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte
    if (c < 0x80) return n;
    const std::size_t length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    return back < length ? n - back : n;
  }
  return n;
}

std::size_t first_invalid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    // ASCII fast path, 8 bytes at a time: traces are almost all ASCII.
    while (i + 8 <= n) {
      std::uint64_t word;
      std::memcpy(&word, s + i, 8);
      if (word & 0x8080808080808080ULL) break;
      i += 8;
    }
    if (i >= n) break;
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c == 0xE0) len = 3, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEC) len = 3;
    else if (c == 0xED) len = 3, hi = 0x9F;  // no surrogates
    else if (c >= 0xEE && c <= 0xEF) len = 3;
    else if (c == 0xF0) len = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3) len = 4;
    else if (c == 0xF4) len = 4, hi = 0x8F;
    else return i;
    if (i + len > n) return i;
    if (s[i + 1] < lo || s[i + 1] > hi) return i;
    for (std::size_t k = 2; k < len; ++k) {
      if (s[i + k] < 0x80 || s[i + k] > 0xBF) return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

void check_utf8(std::string_view text, const std::string& path, long first_line) {
  const std::size_t bad = first_invalid_utf8(text);
  if (bad == std::string_view::npos) return;
  const long line = first_line + static_cast<long>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad), '\n'));
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned>(static_cast<unsigned char>(text[bad])));
  throw InputError(at(path, line, std::string("not UTF-8 text (byte ") + byte + ")"));
}

}  // namespace salus::core
