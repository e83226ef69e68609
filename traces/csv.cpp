#include "traces/csv.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/errors.h"

namespace salus::traces {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }

class CsvReader {
 public:
  CsvReader(std::string_view text, const std::string& path) : text_(text), path_(path) {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // UTF-8 byte order mark
  }

  CsvTable read() {
    CsvTable table;
    bool have_header = false;
    while (pos_ < text_.size()) {
      if (skip_ignored_line()) continue;
      CsvRow row = read_row();
      if (!have_header) {
        table.header = std::move(row);
        have_header = true;
      } else {
        table.rows.push_back(std::move(row));
      }
    }
    return table;
  }

 private:
  // A blank line, or one whose first non-blank character is '#', is consumed whole.
  bool skip_ignored_line() {
    std::size_t i = pos_;
    while (i < text_.size() && (is_blank(text_[i]) || text_[i] == '\r')) ++i;
    const bool blank = i == text_.size() || text_[i] == '\n';
    const bool comment = i < text_.size() && text_[i] == '#';
    if (!blank && !comment) return false;
    while (i < text_.size() && text_[i] != '\n') ++i;
    pos_ = i;
    end_line();
    return true;
  }

  // Consumes a '\n' (if any) and counts the line.
  void end_line() {
    if (pos_ < text_.size() && text_[pos_] == '\n') {
      ++pos_;
      ++line_;
    }
  }

  bool at_line_end() const {
    if (pos_ >= text_.size() || text_[pos_] == '\n') return true;
    return text_[pos_] == '\r' && (pos_ + 1 == text_.size() || text_[pos_ + 1] == '\n');
  }

  CsvRow read_row() {
    CsvRow row;
    row.line = line_;
    for (;;) {
      row.fields.push_back(read_field());
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '\r') ++pos_;
      end_line();
      return row;
    }
  }

  std::string read_field() {
    while (pos_ < text_.size() && is_blank(text_[pos_])) ++pos_;
    std::string field;
    if (pos_ < text_.size() && text_[pos_] == '"') {
      const long quote_line = line_;
      ++pos_;
      for (;;) {
        if (pos_ >= text_.size()) throw core::InputError(core::at(path_, quote_line, "unterminated quoted field"));
        const char c = text_[pos_++];
        if (c == '"') {
          if (pos_ < text_.size() && text_[pos_] == '"') {
            field += '"';
            ++pos_;
            continue;
          }
          break;
        }
        if (c == '\n') ++line_;
        field += c;
      }
      while (pos_ < text_.size() && is_blank(text_[pos_])) ++pos_;
      if (!at_line_end() && text_[pos_] != ',') {
        throw core::InputError(core::at(path_, line_, "unexpected text after a closing quote"));
      }
      return field;
    }
    while (!at_line_end() && text_[pos_] != ',') {
      if (text_[pos_] == '"') {
        throw core::InputError(
            core::at(path_, line_, "quote inside an unquoted field (quote the whole field and double inner quotes)"));
      }
      field += text_[pos_++];
    }
    while (!field.empty() && is_blank(field.back())) field.pop_back();
    return field;
  }

  std::string_view text_;
  const std::string& path_;
  std::size_t pos_ = 0;
  long line_ = 1;
};

}  // namespace

CsvTable parse_csv(std::string_view text, const std::string& path) { return CsvReader(text, path).read(); }

std::string read_text_file(const std::string& path, const std::string& kind) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::InputError(path + ": cannot open " + kind);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

nlohmann::json parse_json(std::string_view text, const std::string& path) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the 1-based offset of the last character read (one past the end at end of input).
    const std::size_t last = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    const long line = 1 + static_cast<long>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(last), '\n'));
    // Drop nlohmann's "[json.exception.parse_error.101] parse error at line 3, column 1: " prefix.
    std::string what = e.what();
    const std::size_t prefix = what.find("parse error");
    const std::size_t colon = prefix == std::string::npos ? std::string::npos : what.find(": ", prefix);
    if (colon != std::string::npos) what = what.substr(colon + 2);
    throw core::InputError(core::at(path, line, "invalid JSON: " + what));
  }
}

std::vector<long> json_array_element_lines(std::string_view text, std::string_view key) {
  // A tokeniser just good enough for valid JSON: it tracks nesting, the last key of the top-level
  // object, and where each element of the target array begins.
  std::vector<long> lines;
  std::vector<char> stack;
  long line = 1;
  bool in_target = false;  // the target array has been opened
  std::size_t target_depth = 0;
  bool expect_element = false;
  std::string last_key;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') continue;
    if (expect_element) {
      expect_element = false;
      if (c != ']') lines.push_back(line);
    }
    switch (c) {
      case '"': {
        const std::size_t start = i + 1;
        ++i;
        while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2u : 1u;
        if (stack.size() == 1 && stack.back() == '{') {
          std::size_t j = i + 1;
          while (j < text.size() && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r' || text[j] == '\n')) ++j;
          if (j < text.size() && text[j] == ':') last_key = std::string(text.substr(start, i - start));
        }
        break;
      }
      case '{':
      case '[': {
        const bool target = c == '[' && (key.empty() ? stack.empty()
                                                      : stack.size() == 1 && stack[0] == '{' && last_key == key);
        stack.push_back(c);
        if (target) {
          in_target = true;
          target_depth = stack.size();
          expect_element = true;
        }
        break;
      }
      case '}':
      case ']':
        if (in_target && stack.size() == target_depth) return lines;
        if (!stack.empty()) stack.pop_back();
        break;
      case ',':
        if (in_target && stack.size() == target_depth) expect_element = true;
        break;
      default:
        break;
    }
  }
  return lines;
}

}  // namespace salus::traces
