#include "run/json_writer.h"

#include <cerrno>

#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace salus::run {

namespace {
constexpr std::size_t kFlushBytes = 1 << 20;
constexpr int kIndent = 2;  // dump(2)
}  // namespace

JsonWriter::JsonWriter(std::FILE* out) : out_(out) { buf_.reserve(kFlushBytes + 4096); }

JsonWriter::JsonWriter() = default;

JsonWriter::~JsonWriter() {
  if (out_ != nullptr && !buf_.empty()) std::fwrite(buf_.data(), 1, buf_.size(), out_);
}

void JsonWriter::flush_if_full() {
  if (out_ == nullptr || buf_.size() < kFlushBytes) return;
  if (std::fwrite(buf_.data(), 1, buf_.size(), out_) != buf_.size()) fail();
  buf_.clear();
}

void JsonWriter::fail() {
  if (!failed_) error_ = errno;
  failed_ = true;
}

void JsonWriter::newline_indent() {
  buf_ += '\n';
  buf_.append(stack_.size() * kIndent, ' ');
}

// Separators and indentation as nlohmann's pretty printer writes them: a container's first
// element on a new line one level in, the next ones after ",\n", a key's value after ": ".
void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (stack_.empty()) return;
  Level& l = stack_.back();
  if (!l.array) throw std::logic_error("JsonWriter: a value inside an object needs a key first");
  if (!l.empty) buf_ += ',';
  l.empty = false;
  newline_indent();
}

void JsonWriter::key(std::string_view k) {
  if (stack_.empty() || stack_.back().array || after_key_) throw std::logic_error("JsonWriter: a key outside an object");
  Level& l = stack_.back();
  if (!l.empty) buf_ += ',';
  l.empty = false;
  newline_indent();
  write_string(k);
  buf_ += ": ";
  after_key_ = true;
}

void JsonWriter::begin_object() {
  before_value();
  buf_ += '{';
  stack_.push_back({false, true});
}

void JsonWriter::begin_array() {
  before_value();
  buf_ += '[';
  stack_.push_back({true, true});
}

void JsonWriter::end_object() {
  if (stack_.empty() || stack_.back().array || after_key_) throw std::logic_error("JsonWriter: unbalanced end_object");
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) newline_indent();
  buf_ += '}';
  flush_if_full();
}

void JsonWriter::end_array() {
  if (stack_.empty() || !stack_.back().array) throw std::logic_error("JsonWriter: unbalanced end_array");
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) newline_indent();
  buf_ += ']';
  flush_if_full();
}

void JsonWriter::write_string(std::string_view s) {
  // Printable ASCII without '"' or '\\' is written as it is (ids, workload names, statuses).
  // Anything else goes through nlohmann's own serialiser, so escapes and the UTF-8 check (it
  // throws on invalid UTF-8) are exactly dump()'s.
  bool plain = true;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f || c == '"' || c == '\\') {
      plain = false;
      break;
    }
  }
  if (plain) {
    buf_ += '"';
    buf_ += s;
    buf_ += '"';
    return;
  }
  buf_ += nlohmann::json(std::string(s)).dump();
}

void JsonWriter::value(std::string_view s) {
  before_value();
  write_string(s);
}

void JsonWriter::value(std::int64_t v) {
  before_value();
  std::array<char, 24> b;
  const auto r = std::to_chars(b.data(), b.data() + b.size(), v);
  buf_.append(b.data(), r.ptr);
}

void JsonWriter::value(std::uint64_t v) {
  before_value();
  std::array<char, 24> b;
  const auto r = std::to_chars(b.data(), b.data() + b.size(), v);
  buf_.append(b.data(), r.ptr);
}

void JsonWriter::value(double v) {
  before_value();
  if (!std::isfinite(v)) {
    buf_ += "null";
    return;
  }
  // nlohmann's Grisu2 formatter (what dump() calls for every double): the digits can differ
  // from std::to_chars's shortest form, and the summary's bytes must not change.
  std::array<char, 64> b;
  char* end = nlohmann::detail::to_chars(b.data(), b.data() + b.size(), v);
  buf_.append(b.data(), end);
}

void JsonWriter::value(bool v) {
  before_value();
  buf_ += v ? "true" : "false";
}

void JsonWriter::null() {
  before_value();
  buf_ += "null";
}

void JsonWriter::value(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::object:
      begin_object();
      for (const auto& item : v.items()) {
        key(item.key());
        value(item.value());
      }
      end_object();
      return;
    case nlohmann::json::value_t::array:
      begin_array();
      for (const auto& x : v) value(x);
      end_array();
      return;
    case nlohmann::json::value_t::string: value(std::string_view(v.get_ref<const std::string&>())); return;
    case nlohmann::json::value_t::boolean: value(v.get<bool>()); return;
    case nlohmann::json::value_t::number_integer: value(v.get<std::int64_t>()); return;
    case nlohmann::json::value_t::number_unsigned: value(v.get<std::uint64_t>()); return;
    case nlohmann::json::value_t::number_float: value(v.get<double>()); return;
    case nlohmann::json::value_t::null: null(); return;
    case nlohmann::json::value_t::binary:
    case nlohmann::json::value_t::discarded: break;
  }
  throw std::logic_error("JsonWriter: a JSON value of a kind the summary never holds");
}

bool JsonWriter::finish() {
  if (!stack_.empty() || after_key_) throw std::logic_error("JsonWriter: finish inside a container");
  buf_ += '\n';
  if (out_ == nullptr) return true;
  if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), out_) != buf_.size()) fail();
  buf_.clear();
  if (std::fflush(out_) != 0) fail();
  return !failed_;
}

}  // namespace salus::run
