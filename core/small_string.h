#pragma once
/// A string in 16 bytes where std::string takes 32: up to 15 characters in place, longer ones on
/// the heap. JobSpec's id and workload are ones: a Helios-scale trace holds 3.36 M jobs, and a
/// 10 M-row trace 10 M (docs/performance.md, "Memory per job and per GPU").
///
/// It reads as a std::string_view (view(), or the implicit conversion) and converts to a
/// std::string where one is needed (a `const std::string&` parameter, `+`). It is built from text
/// only explicitly or by assignment, so `id == "x"` compares text and never allocates.
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace salus::core {

class SmallString {
 public:
  SmallString() noexcept { set_inline_size(0); }
  explicit SmallString(std::string_view s) { init(s); }
  explicit SmallString(const std::string& s) { init(s); }
  explicit SmallString(const char* s) { init(s); }
  SmallString(const SmallString& o) { init(o.view()); }
  SmallString(SmallString&& o) noexcept {
    std::memcpy(raw_, o.raw_, sizeof raw_);
    o.set_inline_size(0);
  }
  SmallString& operator=(const SmallString& o) {
    if (this != &o) assign(o.view());
    return *this;
  }
  SmallString& operator=(SmallString&& o) noexcept {
    if (this != &o) {
      free_heap();
      std::memcpy(raw_, o.raw_, sizeof raw_);
      o.set_inline_size(0);
    }
    return *this;
  }
  SmallString& operator=(std::string_view s) {
    assign(s);
    return *this;
  }
  SmallString& operator=(const std::string& s) { return *this = std::string_view(s); }
  SmallString& operator=(const char* s) { return *this = std::string_view(s); }
  ~SmallString() { free_heap(); }

  const char* data() const noexcept { return on_heap() ? heap_ptr() : raw_; }
  /// NUL-terminated, as std::string's.
  const char* c_str() const noexcept { return data(); }
  std::size_t size() const noexcept { return on_heap() ? heap_size() : kInline - static_cast<unsigned char>(raw_[kInline]); }
  std::size_t length() const noexcept { return size(); }
  bool empty() const noexcept { return size() == 0; }
  std::string_view view() const noexcept { return {data(), size()}; }
  std::string str() const { return std::string(view()); }
  operator std::string_view() const noexcept { return view(); }
  operator std::string() const { return str(); }

  char operator[](std::size_t i) const noexcept { return data()[i]; }
  const char* begin() const noexcept { return data(); }
  const char* end() const noexcept { return data() + size(); }
  std::size_t find(std::string_view s, std::size_t pos = 0) const noexcept { return view().find(s, pos); }
  std::size_t find(char c, std::size_t pos = 0) const noexcept { return view().find(c, pos); }
  std::size_t rfind(std::string_view s, std::size_t pos = std::string_view::npos) const noexcept {
    return view().rfind(s, pos);
  }
  bool starts_with(std::string_view s) const noexcept { return view().starts_with(s); }
  bool ends_with(std::string_view s) const noexcept { return view().ends_with(s); }
  std::string substr(std::size_t pos, std::size_t n = std::string_view::npos) const {
    return std::string(view().substr(pos, n));
  }

  friend bool operator==(const SmallString& a, const SmallString& b) noexcept { return a.view() == b.view(); }
  friend bool operator==(const SmallString& a, std::string_view b) noexcept { return a.view() == b; }
  friend std::strong_ordering operator<=>(const SmallString& a, const SmallString& b) noexcept {
    return a.view() <=> b.view();
  }
  friend std::strong_ordering operator<=>(const SmallString& a, std::string_view b) noexcept { return a.view() <=> b; }

  friend std::string operator+(const SmallString& a, std::string_view b) {
    std::string r(a.view());
    r += b;
    return r;
  }
  friend std::string operator+(std::string_view a, const SmallString& b) {
    std::string r(a);
    r += b.view();
    return r;
  }
  friend std::string operator+(const SmallString& a, char b) { return a.str() + b; }
  friend std::string operator+(char a, const SmallString& b) { return a + b.str(); }
  friend std::string& operator+=(std::string& a, const SmallString& b) { return a += b.view(); }

 private:
  // In place: the characters, a NUL, and in the last byte 15 - size (0 for 15 characters: their
  // NUL). On the heap: the pointer in bytes 0-7, the size in bytes 8-11, kHeap in the last byte.
  static constexpr std::size_t kInline = 15;
  static constexpr unsigned char kHeap = 0xFF;

  bool on_heap() const noexcept { return static_cast<unsigned char>(raw_[kInline]) == kHeap; }
  const char* heap_ptr() const noexcept {
    const char* p;
    std::memcpy(&p, raw_, sizeof p);
    return p;
  }
  std::size_t heap_size() const noexcept {
    std::uint32_t n;
    std::memcpy(&n, raw_ + sizeof(char*), sizeof n);
    return n;
  }
  void set_inline_size(std::size_t n) noexcept {
    raw_[n] = '\0';
    raw_[kInline] = static_cast<char>(kInline - n);
  }
  void init(std::string_view s) {
    if (s.size() <= kInline) {
      std::memcpy(raw_, s.data(), s.size());
      set_inline_size(s.size());
      return;
    }
    if (s.size() > UINT32_MAX) throw std::length_error("SmallString: longer than 4 GiB");
    char* p = new char[s.size() + 1];
    std::memcpy(p, s.data(), s.size());
    p[s.size()] = '\0';
    const auto n = static_cast<std::uint32_t>(s.size());
    std::memcpy(raw_, &p, sizeof p);
    std::memcpy(raw_ + sizeof p, &n, sizeof n);
    raw_[kInline] = static_cast<char>(kHeap);
  }
  void assign(std::string_view s) {
    // s may point into this string: build the new value first.
    SmallString t(s);
    *this = std::move(t);
  }
  void free_heap() noexcept {
    if (on_heap()) delete[] heap_ptr();
  }

  alignas(8) char raw_[kInline + 1];
};

static_assert(sizeof(SmallString) == 16);

inline std::ostream& operator<<(std::ostream& os, const SmallString& s) { return os << s.view(); }

}  // namespace salus::core

template <>
struct std::hash<salus::core::SmallString> {
  std::size_t operator()(const salus::core::SmallString& s) const noexcept { return std::hash<std::string_view>{}(s.view()); }
};
