#include "traces/csv.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/errors.h"

namespace salus::traces {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }

}  // namespace

namespace {

// Appends the compact text of `value` to `out` until it holds `limit` bytes or more; true when the
// whole value was written. Backwards (`forward` false), the tokens come last to first and each
// token's bytes reversed, so that reversing `out` gives the value's end. An explicit stack: the
// value may be nested as deep as an input is allowed to be.
bool append_json_text(const nlohmann::json& value, bool forward, std::size_t limit, std::string& out) {
  const auto put = [&](std::string_view token) {
    if (forward) {
      out += token;
    } else {
      out.append(token.rbegin(), token.rend());
    }
  };
  struct Frame {
    const nlohmann::json* container;
    std::size_t next;         // elements begun so far
    std::string pending_key;  // backwards: the key written once its value is
  };
  std::vector<Frame> stack;
  const nlohmann::json* current = &value;
  for (;;) {
    if (out.size() >= limit) return false;
    if (current != nullptr) {
      if (current->is_array() || current->is_object()) {
        put(current->is_array() ? (forward ? "[" : "]") : (forward ? "{" : "}"));
        stack.push_back({current, 0, {}});
      } else {
        put(current->dump());
      }
      current = nullptr;
      continue;
    }
    if (stack.empty()) return true;
    Frame& top = stack.back();
    if (!top.pending_key.empty()) {
      put(":");
      put(top.pending_key);
      top.pending_key.clear();
      continue;
    }
    const nlohmann::json& c = *top.container;
    if (top.next == c.size()) {
      put(c.is_array() ? (forward ? "]" : "[") : (forward ? "}" : "{"));
      stack.pop_back();
      continue;
    }
    if (top.next > 0) put(",");
    // Elements at most `limit` from the end walked, since each writes a byte: stepping an
    // iterator there is cheap.
    const auto step = static_cast<std::ptrdiff_t>(top.next++);
    const auto take = [&](auto it) {
      std::advance(it, step);
      if (c.is_object()) {
        std::string key = nlohmann::json(it.key()).dump();
        if (forward) {
          put(key);
          put(":");
        } else {
          top.pending_key = std::move(key);
        }
      }
      current = &*it;
    };
    if (forward) {
      take(c.cbegin());
    } else {
      take(c.crbegin());
    }
  }
}

}  // namespace

std::string json_excerpt(const nlohmann::json& value, std::size_t max_chars) {
  std::string whole;
  if (append_json_text(value, true, max_chars + 1, whole) && whole.size() <= max_chars) return whole;
  const std::size_t half = max_chars > 3 ? (max_chars - 3) / 2 : 1;
  std::string head = whole.substr(0, std::min(whole.size(), half));
  std::string tail;
  append_json_text(value, false, half, tail);
  std::reverse(tail.begin(), tail.end());
  if (tail.size() > half) tail = tail.substr(tail.size() - half);
  return core::whole_characters(std::move(head), true) + "..." + core::whole_characters(std::move(tail), false);
}

CsvReader::CsvReader(std::string_view text, const std::string& path) : text_(text), path_(path) {
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // UTF-8 byte order mark
}

CsvReader::CsvReader(core::InputFile& file) : path_(file.path()), file_(&file), eof_(false) {
  refill();
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
}

// At a row's start: keeps the window holding at least a whole row past pos_ (or the rest of the
// file), so that a row that reaches the window's end is one past the bound.
void CsvReader::refill() {
  if (file_ == nullptr) return;
  text_ = buffer_;  // the buffer may have moved with the reader
  constexpr std::size_t kRow = kMaxLineBytes + 3;  // a row at the bound, its CR LF, one more byte
  if (eof_ || text_.size() - pos_ >= kRow) return;
  const std::size_t keep = std::min(line_start_, pos_);  // columns count from the line's start
  buffer_.erase(0, keep);
  pos_ -= keep;
  line_start_ -= keep;
  while (!eof_ && buffer_.size() - pos_ < 3 * kRow) {
    if (core::append_from(*file_, buffer_, std::size_t{4} << 20) == 0) eof_ = true;
  }
  // What is buffered past pos_ is checked again with what came: the line of a bad byte counts
  // from pos_, the start of line_.
  const std::string_view ahead = std::string_view(buffer_).substr(pos_);
  check_utf8(eof_ ? ahead : ahead.substr(0, core::complete_utf8_prefix(ahead)), path_, line_);
  text_ = buffer_;
}

void append_csv_field(std::string& out, std::string_view s) {
  const bool plain = s.find_first_of(",\"\r\n") == std::string_view::npos &&
                     (s.empty() || (!is_blank(s.front()) && !is_blank(s.back())));
  if (plain) {
    out += s;
    return;
  }
  out += '"';
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

bool CsvReader::next() {
  for (;;) {
    refill();
    if (pos_ >= text_.size()) return false;
    if (!skip_ignored_line()) break;
  }
  row_line_ = line_;
  cells_.clear();
  scratch_.clear();
  row_start_ = pos_;
  for (;;) {
    read_field();
    if (cells_.size() > kMaxFieldsPerLine) core::too_many_fields(path_, row_line_);
    if (pos_ < text_.size() && text_[pos_] == ',') {
      ++pos_;
      continue;
    }
    if (pos_ < text_.size() && text_[pos_] == '\r') ++pos_;
    end_line();
    break;
  }
  // The row with its line break; streaming, a row that ran to the window's end is past the bound.
  if (pos_ - row_start_ > kMaxLineBytes + 2 || (cut_short() && pos_ >= text_.size())) {
    core::line_too_long(path_, row_line_);
  }
  // Views into scratch_ are made only now: it may have moved while the row was read.
  views_.resize(cells_.size());
  for (std::size_t i = 0; i < cells_.size(); ++i) {
    const Cell& c = cells_[i];
    views_[i] = c.unescaped ? std::string_view(scratch_).substr(c.pos, c.len) : text_.substr(c.pos, c.len);
  }
  return true;
}

// A blank line, or one whose first non-blank character is '#', is consumed whole.
bool CsvReader::skip_ignored_line() {
  std::size_t i = pos_;
  while (i < text_.size() && (is_blank(text_[i]) || text_[i] == '\r')) ++i;
  const bool blank = i == text_.size() || text_[i] == '\n';
  const bool comment = i < text_.size() && text_[i] == '#';
  if (!blank && !comment) return false;
  while (i < text_.size() && text_[i] != '\n') ++i;
  if (i - pos_ > kMaxLineBytes + 1 || (cut_short() && i >= text_.size())) core::line_too_long(path_, line_);
  pos_ = i;
  end_line();
  return true;
}

// Consumes a '\n' (if any) and counts the line.
void CsvReader::end_line() {
  if (pos_ < text_.size() && text_[pos_] == '\n') {
    ++pos_;
    ++line_;
    line_start_ = pos_;
  }
}

bool CsvReader::at_line_end() const {
  if (pos_ >= text_.size() || text_[pos_] == '\n') return true;
  return text_[pos_] == '\r' && (pos_ + 1 == text_.size() || text_[pos_ + 1] == '\n');
}

// A field past kMaxFieldBytes that ends at `end`: reported as such when its row is within the
// bound on a row, else as a row too long (streaming, the field's end may not have been read).
void CsvReader::past_bound(long line, std::size_t column, std::size_t end, std::size_t bytes) const {
  if (end - row_start_ > kMaxLineBytes + 1 || (cut_short() && end >= text_.size())) core::line_too_long(path_, row_line_);
  field_too_long(path_, line, column, bytes);
}

void CsvReader::read_field() {
  const std::size_t raw_start = pos_;  // the bound counts the blanks around a field too
  while (pos_ < text_.size() && is_blank(text_[pos_])) ++pos_;
  if (pos_ - raw_start > kMaxFieldBytes) past_bound(line_, raw_start - line_start_ + 1, pos_, pos_ - raw_start);
  if (pos_ < text_.size() && text_[pos_] == '"') {
    const long quote_line = line_;
    const std::size_t column = pos_ - line_start_ + 1;
    ++pos_;
    const std::size_t start = pos_;
    bool doubled = false;  // a "" inside: the field is unescaped into scratch_
    for (;;) {
      if (pos_ >= text_.size()) {
        if (cut_short()) core::line_too_long(path_, row_line_);
        throw core::InputError(core::at(path_, quote_line, "unterminated quoted field"));
      }
      if (pos_ - start > kMaxFieldBytes) {
        // Its length, up to the closing quote (or the end): counted, not kept.
        const std::size_t close = text_.find('"', pos_);
        past_bound(quote_line, column, close == std::string_view::npos ? text_.size() : close,
                   (close == std::string_view::npos ? text_.size() : close) - start);
      }
      const char c = text_[pos_++];
      if (c == '"') {
        if (pos_ < text_.size() && text_[pos_] == '"') {
          doubled = true;
          ++pos_;
          continue;
        }
        break;
      }
      if (c == '\n') ++line_;
    }
    const std::size_t end = pos_ - 1;  // the closing quote
    if (!doubled) {
      cells_.push_back({start, end - start, false});
    } else {
      const std::size_t at = scratch_.size();
      for (std::size_t i = start; i < end; ++i) {
        scratch_ += text_[i];
        if (text_[i] == '"') ++i;  // the second quote of a pair
      }
      cells_.push_back({at, scratch_.size() - at, true});
    }
    while (pos_ < text_.size() && is_blank(text_[pos_])) ++pos_;
    if (!at_line_end() && text_[pos_] != ',') {
      throw core::InputError(core::at(path_, line_, "unexpected text after a closing quote"));
    }
    return;
  }
  const std::size_t start = pos_;
  while (!at_line_end() && text_[pos_] != ',') {
    if (pos_ - raw_start > kMaxFieldBytes) {
      // Past the bound: where it ends, without looking into it further (streaming may not hold
      // its end, and a quote past the bound is the bound's error in memory as in a stream).
      std::size_t e = pos_;
      while (e < text_.size() && text_[e] != ',' && text_[e] != '\n' &&
             !(text_[e] == '\r' && (e + 1 == text_.size() || text_[e + 1] == '\n'))) {
        ++e;
      }
      past_bound(line_, raw_start - line_start_ + 1, e, e - raw_start);
    }
    if (text_[pos_] == '"') {
      throw core::InputError(
          core::at(path_, line_, core::kQuoteInUnquotedField));
    }
    ++pos_;
  }
  std::size_t end = pos_;
  if (end - raw_start > kMaxFieldBytes) past_bound(line_, raw_start - line_start_ + 1, end, end - raw_start);
  while (end > start && is_blank(text_[end - 1])) --end;
  cells_.push_back({start, end - start, false});
}

CsvReader TraceInput::rows() {
  if (file_ == nullptr) return CsvReader(text_, path_);
  file_->rewind();
  return CsvReader(*file_);
}

std::string_view TraceInput::text(core::TextBound bound) {
  if (file_ == nullptr || have_text_) return file_ == nullptr ? text_ : std::string_view(read_);
  file_->rewind();
  read_ = core::read_rest(*file_, bound);
  check_utf8(read_, path_);
  have_text_ = true;
  return read_;
}

long find_row_line(const std::string& path, const std::vector<std::string_view>& values) {
  try {
    core::InputFile file(path, "trace file");
    CsvReader rows(file);
    while (rows.next()) {
      bool all = true;
      for (std::string_view v : values) {
        all = all && std::find(rows.fields().begin(), rows.fields().end(), v) != rows.fields().end();
      }
      if (all) return rows.line();
    }
  } catch (const core::InputError&) {
  }
  return 0;
}

CsvTable parse_csv(std::string_view text, const std::string& path) {
  CsvTable table;
  CsvReader reader(text, path);
  bool have_header = false;
  while (reader.next()) {
    CsvRow row;
    row.line = reader.line();
    row.fields.assign(reader.fields().begin(), reader.fields().end());
    if (!have_header) {
      table.header = std::move(row);
      have_header = true;
    } else {
      table.rows.push_back(std::move(row));
    }
  }
  return table;
}

namespace {

// One pass over the text before the parser sees it, refusing what nlohmann's parser would accept
// or choke on, each with file:line:
// - a string or number longer than kMaxFieldBytes (the same bound as a CSV field), before the
//   parser copies it;
// - nesting deeper than kMaxJsonDepth: the parser itself keeps a stack, but copying, comparing
//   or printing a value recurses, and 100,000 levels overflow the thread's stack;
// - a key given twice in one object (the parser keeps the last, silently);
// - a NUL byte (the parser takes it for the end of the input and ignores what follows) and any
//   token after the top-level value.
// Valid JSON is tokenised exactly (strings with their escapes); in invalid JSON a string stops at
// the end of its line (a raw line break is refused by the parser) so that lines stay counted.
struct JsonKey {
  std::string text;
  long line;
  std::size_t order;
};

std::string decoded_key(std::string_view token) {
  if (token.find('\\') == std::string_view::npos) return std::string(token.substr(1, token.size() - 2));
  try {
    return nlohmann::json::parse(token).get<std::string>();
  } catch (const nlohmann::json::exception&) {
    return std::string(token);  // a bad escape: the parser refuses it
  }
}

// The key repeated first in one object's keys (by where its second occurrence is), or null.
const JsonKey* first_repeated(std::vector<JsonKey>& keys) {
  if (keys.size() < 2) return nullptr;
  if (keys.size() <= 16) {
    for (std::size_t j = 1; j < keys.size(); ++j) {
      for (std::size_t i = 0; i < j; ++i) {
        if (keys[i].text == keys[j].text) return &keys[j];
      }
    }
    return nullptr;
  }
  std::sort(keys.begin(), keys.end(),
            [](const JsonKey& a, const JsonKey& b) { return a.text != b.text ? a.text < b.text : a.order < b.order; });
  const JsonKey* best = nullptr;
  for (std::size_t j = 1; j < keys.size(); ++j) {
    const bool second = keys[j].text == keys[j - 1].text && (j < 2 || keys[j - 2].text != keys[j].text);
    if (second && (best == nullptr || keys[j].order < best->order)) best = &keys[j];
  }
  return best;
}

void check_json_tokens(std::string_view text, const std::string& path) {
  long line = 1;
  std::size_t line_start = 0;
  std::vector<char> stack;                 // '{' or '[' of each open container
  std::vector<std::vector<JsonKey>> keys;  // the keys of each open container (objects only)
  bool expect_key = false;                 // the next string is a key of the innermost object
  bool seen_value = false;                 // a top-level value has begun
  const auto fail = [&](std::size_t at, const std::string& what) {
    throw core::InputError(core::at(path, line, what + " (column " + std::to_string(at - line_start + 1) + ")"));
  };
  // A value that begins at the top level: the document, or bytes after it.
  const auto top_level_value = [&](std::size_t at) {
    if (!stack.empty()) return;
    if (seen_value) fail(at, "bytes after the JSON document");
    seen_value = true;
  };
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '\0') fail(i, "a NUL byte, which JSON text never holds");
    if (stack.empty() && seen_value) fail(i, "bytes after the JSON document");
    const std::size_t start = i;
    if (c == '"') {
      top_level_value(i);
      for (++i; i < text.size() && text[i] != '"' && text[i] != '\n'; ++i) {
        if (text[i] == '\0') fail(i, "a NUL byte, which JSON text never holds");
        // An escape takes the next byte with it, whatever it is.
        if (text[i] == '\\') ++i;
      }
      if (i < text.size() && text[i] == '"') ++i;
      if (i - start > kMaxFieldBytes + 2) field_too_long(path, line, start - line_start + 1, i - start);
      if (expect_key && !stack.empty() && stack.back() == '{') {
        std::vector<JsonKey>& mine = keys[stack.size() - 1];
        mine.push_back({decoded_key(text.substr(start, i - start)), line, mine.size()});
      }
      expect_key = false;
      continue;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      top_level_value(i);
      while (i < text.size() && (text[i] == '-' || text[i] == '+' || text[i] == '.' || text[i] == 'e' ||
                                 text[i] == 'E' || (text[i] >= '0' && text[i] <= '9'))) {
        ++i;
      }
      if (i - start > kMaxFieldBytes + 2) field_too_long(path, line, start - line_start + 1, i - start);
      expect_key = false;
      continue;
    }
    ++i;
    switch (c) {
      case '{':
      case '[':
        top_level_value(start);
        stack.push_back(c);
        if (stack.size() > kMaxJsonDepth) {
          fail(start, "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
        }
        if (keys.size() < stack.size()) keys.resize(stack.size());
        keys[stack.size() - 1].clear();
        expect_key = c == '{';
        break;
      case '}':
      case ']':
        if (stack.empty()) break;  // the parser names it
        if (stack.back() == '{') {
          if (const JsonKey* k = first_repeated(keys[stack.size() - 1])) {
            throw core::InputError(core::at(path, k->line, "duplicate key " + json_excerpt(nlohmann::json(k->text)) +
                                                               " in one object (a key is given once)"));
          }
        }
        stack.pop_back();
        expect_key = false;
        break;
      case ',':
        expect_key = !stack.empty() && stack.back() == '{';
        break;
      case ':':
        expect_key = false;
        break;
      default: {
        // true, false, null, or bytes the parser names.
        while (i < text.size() && text[i] >= 'a' && text[i] <= 'z') ++i;
        const std::string_view word = text.substr(start, i - start);
        if (word == "true" || word == "false" || word == "null") top_level_value(start);
        expect_key = false;
        break;
      }
    }
  }
}

}  // namespace

nlohmann::json parse_json(std::string_view text, const std::string& path) {
  check_utf8(text, path);
  check_json_tokens(text, path);
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
  } catch (const nlohmann::json::out_of_range& e) {
    // A number too large for a double ("number overflow parsing '1e400'", found by fuzzing): the
    // parser gives no position, so the line is that of the first occurrence of the number.
    std::string what = e.what();
    const std::size_t prefix = what.find("] ");
    if (prefix != std::string::npos) what = what.substr(prefix + 2);
    long line = 1;
    const std::size_t open = what.find('\''), close = what.rfind('\'');
    if (open != std::string::npos && close > open + 1) {
      const std::size_t at = text.find(std::string_view(what).substr(open + 1, close - open - 1));
      if (at != std::string_view::npos) {
        line += static_cast<long>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
      }
    }
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
