#pragma once
/// A growable array of trivially copyable T that grows with realloc: a large block (glibc: one of
/// 128 KiB or more, mapped on its own) is moved by remapping its pages, so growing never holds the
/// old and the new array at once, where std::vector's doubling copies into a second array (the
/// old one's pages and the copy's pages at once: 1.5x to 2x the array at each growth). Used for
/// arrays with a row per waiting job (core::PendingQueue), which reach tens of millions of rows.
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

namespace salus::core {

template <class T>
class GrowInPlace {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "GrowInPlace moves its rows with realloc");

 public:
  // What std::priority_queue asks of its container.
  using value_type = T;
  using size_type = std::size_t;
  using reference = T&;
  using const_reference = const T&;

  GrowInPlace() = default;
  GrowInPlace(const GrowInPlace& o) { *this = o; }
  GrowInPlace(GrowInPlace&& o) noexcept : data_(o.data_), size_(o.size_), cap_(o.cap_) { o.forget(); }
  GrowInPlace& operator=(const GrowInPlace& o) {
    if (this != &o) {
      clear();
      reserve(o.size_);
      if (o.size_ > 0) std::memcpy(data_, o.data_, o.size_ * sizeof(T));
      size_ = o.size_;
    }
    return *this;
  }
  GrowInPlace& operator=(GrowInPlace&& o) noexcept {
    if (this != &o) {
      std::free(data_);
      data_ = o.data_;
      size_ = o.size_;
      cap_ = o.cap_;
      o.forget();
    }
    return *this;
  }
  ~GrowInPlace() { std::free(data_); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T& front() { return data_[0]; }
  const T& front() const { return data_[0]; }
  T& back() { return data_[size_ - 1]; }

  void push_back(const T& v) {
    if (size_ == cap_) reserve(cap_ < 16 ? 16 : cap_ * 2);
    data_[size_++] = v;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  void reserve(std::size_t n) {
    if (n <= cap_) return;
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    void* p = std::realloc(data_, n * sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    data_ = static_cast<T*>(p);
    cap_ = n;
  }

 private:
  void forget() {
    data_ = nullptr;
    size_ = 0;
    cap_ = 0;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t cap_ = 0;
};

}  // namespace salus::core
