#pragma once
/// A streaming JSON writer whose output is byte-identical to nlohmann::json::dump(2) of the same
/// document, provided the caller writes each object's keys in sorted order (as nlohmann's
/// std::map-backed objects hold them). It keeps no document: values go to a buffer that is
/// flushed to the file as it fills, so a summary of millions of jobs costs kilobytes, not a
/// tree of hundreds of megabytes.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace salus::run {

class JsonWriter {
 public:
  /// Writes to `out` (not owned, not closed); flushes whenever the buffer holds 1 MiB.
  explicit JsonWriter(std::FILE* out);
  /// Collects the text in a string instead (tests, benchmarks); see text().
  JsonWriter();
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;
  /// Flushes what is buffered (to the file; a string writer keeps it).
  ~JsonWriter();

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  /// The next member's key; the value follows with one of the calls below.
  void key(std::string_view k);

  void value(std::string_view s);
  void value(const char* s) { value(std::string_view(s)); }
  void value(const std::string& s) { value(std::string_view(s)); }
  void value(std::int64_t v);
  void value(std::int32_t v) { value(static_cast<std::int64_t>(v)); }
  void value(std::uint64_t v);
  void value(double v);  ///< as nlohmann prints it: shortest round trip, "1.0" for integers, null if not finite
  void value(bool v);
  void null();
  /// A whole (small) nlohmann value, written with the same layout.
  void value(const nlohmann::json& v);

  /// Writes the final newline and flushes; returns false when a write to the file failed.
  bool finish();
  /// errno of the first write or flush that failed (ENOSPC: the disk is full); 0 when none did.
  int error() const { return error_; }
  /// The text written so far (string writer).
  const std::string& text() const { return buf_; }

 private:
  void before_value();
  void newline_indent();
  void flush_if_full();
  void fail();  // notes the first failure's errno
  void write_string(std::string_view s);

  std::FILE* out_ = nullptr;
  std::string buf_;
  struct Level {
    bool array;
    bool empty;
  };
  std::vector<Level> stack_;
  bool after_key_ = false;
  bool failed_ = false;
  int error_ = 0;
};

}  // namespace salus::run
