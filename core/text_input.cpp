#include "core/text_input.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include <sys/stat.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <unistd.h>

#include "core/errors.h"
#include "core/huge_pages.h"

namespace salus::core {

namespace {

std::string field_too_long_message(const std::string& path, long line, std::size_t column, std::size_t bytes) {
  return path + ":" + std::to_string(line) + ":" + std::to_string(column) + ": a field of " + std::to_string(bytes) +
         " bytes, more than the " + std::to_string(kMaxFieldBytes) + " bytes a field may have (is this the right file?)";
}

}  // namespace

void field_too_long(const std::string& path, long line, std::size_t column, std::size_t bytes) {
  throw InputError(field_too_long_message(path, line, column, bytes));
}

namespace {

// A scanner follows one reader's rules over the bytes as they arrive, keeping none of them: it
// notes the first field past kMaxFieldBytes with the line, column and length that reader would
// report. certain() is true once an error will be reported whatever follows (the rest of the
// field is then only counted); error() holds it once complete. A syntax error the scanner cannot
// follow past (bad quoting) makes it stop checking: the reader reports that error itself.
class Scanner {
 public:
  explicit Scanner(const std::string& path) : path_(path) {}
  virtual ~Scanner() = default;
  /// Feeds the next `n` bytes; does nothing once an error is complete or checking has stopped.
  virtual void feed(const char* p, std::size_t n) = 0;
  /// The end of the file.
  virtual void finish() = 0;
  bool certain() const { return certain_ || error_.has_value(); }
  const std::optional<std::string>& error() const { return error_; }

 protected:
  void fail(long line, std::size_t column, std::size_t bytes) { error_ = field_too_long_message(path_, line, column, bytes); }
  bool stopped() const { return error_.has_value() || off_; }
  const std::string& path_;
  std::optional<std::string> error_;
  bool certain_ = false;
  bool off_ = false;  // a syntax error: no more checking
  std::uint64_t pos_ = 0;  // offset in the file of the next byte
};

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// traces::CsvReader's rules, byte by byte (csv.cpp has the reader; the comments there say why).
class CsvScanner final : public Scanner {
  // The bytes bulk() stops at.
  static constexpr auto kSpecial = [] {
    std::array<bool, 256> t{};
    for (unsigned char c : {',', '\n', '"', '\r', '#'}) t[c] = true;
    return t;
  }();

 public:
  CsvScanner(const std::string& path, bool bom) : Scanner(path) { pos_ = bom ? 3 : 0; row_start(); }

  void feed(const char* p, std::size_t n) override {
    for (std::size_t i = 0; i < n && !stopped(); ++i, ++pos_) step(p, n, i);
  }

  void finish() override {
    if (stopped()) return;
    switch (state_) {
      case kFieldBlanks:
        if (blank_len_ > kMaxFieldBytes) fail(line_, column(field_start_), blank_len_);
        break;
      case kUnquoted:
        if (field_len_ > kMaxFieldBytes) fail(line_, column(field_start_), field_len_);
        break;
      case kCountQuoted: fail(quote_line_, quote_column_, static_cast<std::size_t>(pos_ - quote_start_)); break;
      default: break;  // an unterminated quote inside the bound is the reader's error
    }
  }

 private:
  enum State { kRowStart, kComment, kFieldBlanks, kUnquoted, kQuoted, kQuoteQuote, kCountQuoted, kAfterQuote, kAfterQuoteCr };

  std::size_t column(std::uint64_t at) const { return static_cast<std::size_t>(at - line_start_ + 1); }

  void row_start() {
    state_ = kRowStart;
    rs_start_ = pos_;
    rs_blank_ = rs_len_ = 0;
    rs_cr_ = false;
  }
  void new_line_after(std::uint64_t newline) {
    ++line_;
    line_start_ = newline + 1;
  }
  void field_blanks_after(std::uint64_t comma) {
    state_ = kFieldBlanks;
    field_start_ = comma + 1;
    blank_len_ = 0;
  }
  // The first byte of a field after `blank_len_` blanks from field_start_.
  void content(char c) {
    if (c == '"') {
      state_ = kQuoted;
      quote_line_ = line_;
      quote_column_ = column(pos_);
      quote_start_ = pos_ + 1;
      return;
    }
    state_ = kUnquoted;
    field_len_ = blank_len_;
    cr_ = false;
    unquoted(c);
  }
  // Ends the unquoted field (its bytes: field_len_); false when it is over the bound.
  bool end_unquoted() {
    if (field_len_ > kMaxFieldBytes) {
      fail(line_, column(field_start_), field_len_);
      return false;
    }
    return true;
  }
  void unquoted(char c) {
    if (cr_) {
      cr_ = false;
      if (c == '\n') {
        if (end_unquoted()) {
          new_line_after(pos_);
          row_start();
          rs_start_ = pos_ + 1;
        }
        return;
      }
      ++field_len_;  // a CR not before a LF is the field's
    }
    switch (c) {
      case ',':
        if (end_unquoted()) field_blanks_after(pos_);
        return;
      case '\n':
        if (end_unquoted()) {
          new_line_after(pos_);
          row_start();
          rs_start_ = pos_ + 1;
        }
        return;
      case '"':
        if (field_len_ > kMaxFieldBytes) {
          error_ = at(path_, line_, kQuoteInUnquotedField);
        } else {
          off_ = true;
        }
        return;
      case '\r': cr_ = true; return;
      default:
        if (++field_len_ > kMaxFieldBytes) certain_ = true;
        return;
    }
  }

  // At the start of a row or field: runs over whole rows and fields in one loop while every field
  // is plainly within the bound (no quote, CR or '#', fewer than kMaxFieldBytes bytes), keeping
  // only the line count; then goes back to where the last row or field began, for step() to take
  // from there byte by byte. A row of blanks ends as a blank line would (the next line).
  void bulk(const char* p, std::size_t n, std::size_t& i) {
    const std::uint64_t base = pos_ - i;  // the file offset of p[0]
    std::size_t start = i;
    bool row = state_ == kRowStart;
    std::size_t j = i;
    bool stop = false;  // at a quote, CR or '#', or a field that may be past the bound
#ifdef __SSE2__
    // Sixteen bytes at a time: the special bytes of a block as a bit mask, taken one by one.
    const __m128i comma = _mm_set1_epi8(','), newline = _mm_set1_epi8('\n'), quote = _mm_set1_epi8('"'),
                  cr = _mm_set1_epi8('\r'), hash = _mm_set1_epi8('#');
    while (j + 16 <= n) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + j));
      const __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, comma), _mm_cmpeq_epi8(v, newline)),
                                     _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, cr)),
                                                  _mm_cmpeq_epi8(v, hash)));
      auto mask = static_cast<unsigned>(_mm_movemask_epi8(m));
      while (mask != 0 && !stop) {
        const std::size_t at = j + static_cast<std::size_t>(__builtin_ctz(mask));
        mask &= mask - 1;
        if (at - start >= kMaxFieldBytes) {
          stop = true;
          j = at;
        } else if (p[at] == ',') {
          start = at + 1;
          row = false;
        } else if (p[at] == '\n') {
          ++line_;
          line_start_ = base + at + 1;
          start = at + 1;
          row = true;
        } else {
          stop = true;  // a quote, CR or '#'
          j = at;
        }
      }
      if (stop) break;
      j += 16;
      if (j - start >= kMaxFieldBytes) {
        stop = true;
        break;
      }
    }
#endif
    while (!stop) {  // the bytes the blocks left, one by one
      const std::size_t limit = std::min(n, start + kMaxFieldBytes);
      while (j < limit && !kSpecial[static_cast<unsigned char>(p[j])]) ++j;
      if (j == limit) break;  // the end of the bytes, or a field that may be past the bound
      if (p[j] == ',') {
        start = ++j;
        row = false;
      } else if (p[j] == '\n') {
        ++line_;
        line_start_ = base + j + 1;
        start = ++j;
        row = true;
      } else {
        break;  // a quote, CR or '#'
      }
    }
    no_bulk_before_ = base + j + (j < n ? 1 : 0);
    pos_ = base + start;
    i = start;
    if (row) {
      row_start();
    } else {
      field_blanks_after(pos_ - 1);
    }
  }

  void step(const char* p, std::size_t n, std::size_t& i) {
    if (pos_ >= no_bulk_before_ && ((state_ == kRowStart && rs_len_ == 0) || (state_ == kFieldBlanks && blank_len_ == 0))) {
      bulk(p, n, i);
      if (i == n) {
        --i;  // the loop's ++i, ++pos_ step past the end
        --pos_;
        return;
      }
    }
    const char c = p[i];
    switch (state_) {
      case kRowStart:
        if (is_blank(c)) {
          if (!rs_cr_) ++rs_blank_;
          ++rs_len_;
        } else if (c == '\r') {
          rs_cr_ = true;
          ++rs_len_;
        } else if (c == '\n') {
          new_line_after(pos_);
          row_start();
          rs_start_ = pos_ + 1;
        } else if (c == '#') {
          state_ = kComment;
        } else {
          field_start_ = rs_start_;
          if (rs_blank_ > kMaxFieldBytes) return fail(line_, column(field_start_), rs_blank_);
          if (!rs_cr_) {
            blank_len_ = rs_blank_;
            return content(c);
          }
          state_ = kUnquoted;  // blanks, CRs: the field's first bytes
          field_len_ = rs_len_;
          cr_ = false;
          unquoted(c);
        }
        return;
      case kComment: {
        const void* nl = std::memchr(p + i, '\n', n - i);
        if (!nl) {
          pos_ += n - 1 - i;
          i = n - 1;
          return;
        }
        const std::size_t j = static_cast<std::size_t>(static_cast<const char*>(nl) - p);
        pos_ += j - i;
        i = j;
        new_line_after(pos_);
        row_start();
        rs_start_ = pos_ + 1;
        return;
      }
      case kFieldBlanks:
        if (is_blank(c)) {
          if (++blank_len_ > kMaxFieldBytes) certain_ = true;
          return;
        }
        if (blank_len_ > kMaxFieldBytes) return fail(line_, column(field_start_), blank_len_);
        return content(c);
      case kUnquoted:
        // Plain bytes, the common case, counted in one go.
        if (!cr_) {
          std::size_t j = i;
          while (j < n && p[j] != ',' && p[j] != '\n' && p[j] != '"' && p[j] != '\r') ++j;
          field_len_ += j - i;
          if (field_len_ > kMaxFieldBytes) certain_ = true;
          pos_ += j - i;
          i = j;
          if (i == n) {
            --i;  // the loop's ++i, ++pos_ step past the end
            --pos_;
            return;
          }
        }
        return unquoted(p[i]);
      case kQuoted:
        if (pos_ - quote_start_ > kMaxFieldBytes) {
          certain_ = true;
          state_ = kCountQuoted;
          return step(p, n, i);
        }
        if (c == '"') state_ = kQuoteQuote;
        else if (c == '\n') ++line_;
        return;
      case kQuoteQuote:
        if (c == '"') {
          state_ = kQuoted;  // a doubled quote
          return;
        }
        state_ = kAfterQuote;
        return step(p, n, i);
      case kCountQuoted: {
        const void* q = std::memchr(p + i, '"', n - i);
        if (!q) {
          pos_ += n - 1 - i;
          i = n - 1;
          return;
        }
        pos_ += static_cast<std::size_t>(static_cast<const char*>(q) - p) - i;
        return fail(quote_line_, quote_column_, static_cast<std::size_t>(pos_ - quote_start_));
      }
      case kAfterQuote:
        if (is_blank(c)) return;
        if (c == ',') return field_blanks_after(pos_);
        if (c == '\n') {
          new_line_after(pos_);
          row_start();
          rs_start_ = pos_ + 1;
          return;
        }
        if (c == '\r') {
          state_ = kAfterQuoteCr;
          return;
        }
        off_ = true;  // "unexpected text after a closing quote": the reader's error
        return;
      case kAfterQuoteCr:
        if (c == '\n') {
          new_line_after(pos_);
          row_start();
          rs_start_ = pos_ + 1;
          return;
        }
        off_ = true;
        return;
    }
  }

  State state_ = kRowStart;
  long line_ = 1;
  std::uint64_t line_start_ = 0;
  std::uint64_t rs_start_ = 0;  // the row's first byte
  std::size_t rs_blank_ = 0;    // its leading blanks (before any CR)
  std::size_t rs_len_ = 0;      // its blanks and CRs
  bool rs_cr_ = false;
  std::uint64_t field_start_ = 0;  // the field's first byte, blanks included
  std::size_t blank_len_ = 0;
  std::size_t field_len_ = 0;
  bool cr_ = false;  // an unquoted field's last byte was a CR, not yet counted
  long quote_line_ = 0;
  std::size_t quote_column_ = 0;
  std::uint64_t quote_start_ = 0;  // the byte after the opening quote
  std::uint64_t no_bulk_before_ = 0;  // where bulk() stopped last: step() takes the bytes to there
};

// Lines of fields between separators, no quoting: a Gavel trace (traces::GavelRows: tabs; blank
// rows are spaces and tabs, a comment starts with '#'; columns count from after a byte order
// mark) or the cluster file (commas; blank rows are white space, a comment's first non-blank is
// '#'; the byte order mark is the first field's). A row's last field loses a CR before the LF.
class LineScanner final : public Scanner {
 public:
  LineScanner(const std::string& path, bool bom, char sep) : Scanner(path), sep_(sep), cluster_(sep != '\t') {
    if (bom && cluster_) {
      row_pos_ = field_len_ = 3;
      all_blank_ = false;
    }
  }

  void feed(const char* p, std::size_t n) override {
    for (std::size_t i = 0; i < n && !stopped(); ++i) step(p, n, i);
  }
  void finish() override {
    if (stopped()) return;
    if (!comment_) end_row();
  }

 private:
  bool blank(char c) const {
    return c == ' ' || (cluster_ && (c == '\t' || c == '\r' || c == '\v' || c == '\f'));
  }
  void end_field() {
    if (field_len_ > kMaxFieldBytes && !pending_) {
      pending_ = true;
      pending_column_ = field_start_ + 1;
      pending_len_ = field_len_;
    }
    field_start_ = row_pos_ + 1;
    field_len_ = 0;
  }
  void report_if_due() {
    if (pending_ && !all_blank_) fail(line_, pending_column_, pending_len_);
    else if ((pending_ || field_len_ > kMaxFieldBytes) && !all_blank_) certain_ = true;
  }
  void end_row() {
    end_field();
    report_if_due();
  }
  void step(const char* p, std::size_t n, std::size_t& i) {
    const char c = p[i];
    if (comment_) {
      const void* nl = std::memchr(p + i, '\n', n - i);
      if (!nl) {
        i = n - 1;
        return;
      }
      i = static_cast<std::size_t>(static_cast<const char*>(nl) - p);
      next_line();
      return;
    }
    if (!cr_ && !all_blank_) {
      // Plain bytes of a row that is not blank, the common case, counted in one go.
      std::size_t j = i;
      while (j < n && p[j] != sep_ && p[j] != '\n' && p[j] != '\r') ++j;
      if (j > i) {
        field_len_ += j - i;
        row_pos_ += j - i;
        report_if_due();
        i = j - 1;  // the loop's ++i comes to p[j]
        return;
      }
    }
    if (cr_) {
      cr_ = false;
      if (c == '\n') {
        end_row();
        if (!stopped()) next_line();
        return;
      }
      ++field_len_;  // not the row's last byte: the field's
      ++row_pos_;
      if (!cluster_) all_blank_ = false;
    }
    if (c == '\n') {
      end_row();
      if (!stopped()) next_line();
      return;
    }
    if (c == '\r') {
      cr_ = true;
      return;
    }
    if (all_blank_ && c == '#' && (cluster_ || row_pos_ == 0)) {
      comment_ = true;
      return;
    }
    if (c == sep_) {
      end_field();
    } else {
      ++field_len_;
      if (!blank(c)) all_blank_ = false;
    }
    ++row_pos_;
    report_if_due();
  }
  void next_line() {
    ++line_;
    row_pos_ = field_start_ = field_len_ = 0;
    all_blank_ = true;
    comment_ = cr_ = pending_ = false;
  }

  char sep_;
  bool cluster_;
  long line_ = 1;
  std::size_t row_pos_ = 0;  // bytes of the row so far (the byte order mark not counted, for Gavel)
  std::size_t field_start_ = 0;
  std::size_t field_len_ = 0;
  bool all_blank_ = true;
  bool comment_ = false;
  bool cr_ = false;  // the last byte was a CR, not yet counted
  bool pending_ = false;  // an over-long field in a row that may yet prove blank
  std::size_t pending_column_ = 0;
  std::size_t pending_len_ = 0;
};

// The JSON bound (traces::parse_json): every string, from its quote to the closing one or the end
// of the line (a backslash takes the next byte with it), and every number, longer than
// kMaxFieldBytes + 2.
class JsonScanner final : public Scanner {
 public:
  JsonScanner(const std::string& path, bool bom) : Scanner(path) { pos_ = bom ? 3 : 0; }

  void feed(const char* p, std::size_t n) override {
    for (std::size_t i = 0; i < n && !stopped(); ++i, ++pos_) step(p, n, i);
  }
  void finish() override {
    if (stopped()) return;
    if (state_ == kString || state_ == kNumber) end_token(pos_);
    else if (state_ == kEscape) end_token(pos_ + 1);  // the reader's index steps past the end
  }

 private:
  enum State { kOutside, kString, kEscape, kNumber };
  static bool number_byte(char c) {
    return c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' || (c >= '0' && c <= '9');
  }
  void end_token(std::uint64_t end) {
    state_ = kOutside;
    if (end - start_ > kMaxFieldBytes + 2) fail(line_, static_cast<std::size_t>(start_ - line_start_ + 1), static_cast<std::size_t>(end - start_));
  }
  void step(const char* p, std::size_t n, std::size_t& i) {
    const char c = p[i];
    switch (state_) {
      case kOutside:
        if (c == '\n') {
          ++line_;
          line_start_ = pos_ + 1;
        } else if (c == '"') {
          state_ = kString;
          start_ = pos_;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
          state_ = kNumber;
          start_ = pos_;
        }
        return;
      case kString: {
        std::size_t j = i;
        while (j < n && p[j] != '"' && p[j] != '\n' && p[j] != '\\') ++j;
        pos_ += j - i;
        i = j;
        if (i == n) {
          --i;
          --pos_;
        } else if (p[i] == '\\') {
          state_ = kEscape;
        } else if (p[i] == '"') {
          end_token(pos_ + 1);
        } else {
          end_token(pos_);
          if (!stopped()) step(p, n, i);
        }
        if (state_ != kOutside && pos_ + 1 - start_ > kMaxFieldBytes + 2) certain_ = true;
        return;
      }
      case kEscape:
        state_ = kString;
        return;
      case kNumber:
        if (number_byte(c)) {
          if (pos_ + 1 - start_ > kMaxFieldBytes + 2) certain_ = true;
          return;
        }
        end_token(pos_);
        if (!stopped()) step(p, n, i);
        return;
    }
  }

  State state_ = kOutside;
  long line_ = 1;
  std::uint64_t line_start_ = 0;
  std::uint64_t start_ = 0;
};

// traces::detect_format's choice between JSON, Gavel's tabs and CSV, made as the bytes arrive:
// JSON by a leading '{' or '['; otherwise the first line that is not a comment, Gavel when it has
// 9 or 6 tabs (CSV as soon as it has more).
class SyntaxDetector {
 public:
  std::optional<TextSyntax> decided() const { return decided_; }
  /// The first byte that is not white space has come, and it opens no JSON.
  bool not_json() const { return state_ != kLead && decided_ != TextSyntax::kJson; }
  void feed(const char* p, std::size_t n) {
    for (std::size_t i = 0; i < n && !decided_; ++i) {
      const char c = p[i];
      switch (state_) {
        case kLead:
          if (c == ' ' || c == '\t' || c == '\r' || c == '\n') break;
          if (c == '{' || c == '[') decided_ = TextSyntax::kJson;
          else if (c == '#') state_ = kComment;
          else first_line(c);
          break;
        case kComment:
          if (c == '\n') state_ = kAfterComment;
          break;
        case kAfterComment:
          if (c == ' ' || c == '\r' || c == '\n') break;
          if (c == '#') state_ = kComment;
          else first_line(c);
          break;
        case kFirstLine:
          while (i < n && p[i] != '\t' && p[i] != '\n') ++i;
          if (i < n) first_line(p[i]);
          break;
      }
    }
  }
  void finish() {
    if (!decided_) decided_ = tabs_ == 9 || tabs_ == 6 ? TextSyntax::kTsv : TextSyntax::kCsv;
  }

 private:
  void first_line(char c) {
    state_ = kFirstLine;
    if (c == '\n') finish();
    else if (c == '\t' && ++tabs_ > 9) decided_ = TextSyntax::kCsv;
  }
  enum State { kLead, kComment, kAfterComment, kFirstLine };
  State state_ = kLead;
  int tabs_ = 0;
  std::optional<TextSyntax> decided_;
};

std::unique_ptr<Scanner> make_scanner(TextSyntax syntax, const std::string& path, bool bom) {
  switch (syntax) {
    case TextSyntax::kCsv: return std::make_unique<CsvScanner>(path, bom);
    case TextSyntax::kTsv: return std::make_unique<LineScanner>(path, bom, '\t');
    case TextSyntax::kJson: return std::make_unique<JsonScanner>(path, bom);
    case TextSyntax::kLines: return std::make_unique<LineScanner>(path, bom, ',');
    case TextSyntax::kTrace: break;
  }
  return nullptr;
}

// Reads fd in chunks; each chunk is scanned before it is kept.
class BoundedReader {
 public:
  BoundedReader(const std::string& path, const std::string& kind, TextSyntax syntax)
      : path_(path), kind_(kind), syntax_(syntax) {}

  std::string read(int fd) {
    // One buffer of the file's size, filled in place: the size is a hint only (the file may grow
    // while it is read; reading goes on to the end). Reserving touches no page: what is resident
    // is what was kept.
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_size > 0) {
      text_.reserve(static_cast<std::size_t>(st.st_size));
      advise_huge_pages(text_.data(), text_.capacity());
    }
    std::vector<char> chunk(std::size_t{1} << 18);
    std::size_t have = 0;  // bytes in chunk not yet scanned (the first chunk waits for 3, the BOM)
    bool first = true;
    for (;;) {
      const ssize_t n = ::read(fd, chunk.data() + have, chunk.size() - have);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int e = errno;
        ::close(fd);
        throw InputError(path_ + ": cannot read " + kind_ + ": " + std::strerror(e));
      }
      have += static_cast<std::size_t>(n);
      const bool end = n == 0;
      if (first && have < 3 && !end) continue;
      if (first) {
        first = false;
        start(have >= 3 && std::memcmp(chunk.data(), "\xEF\xBB\xBF", 3) == 0);
      }
      if (have > 0) take(chunk.data(), have, fd);
      have = 0;
      if (end) break;
    }
    ::close(fd);
    detector_.finish();
    for (auto& s : scanners_) s->finish();
    report(true);
    return std::move(text_);
  }

 private:
  void start(bool bom) {
    bom_ = bom;
    if (syntax_ != TextSyntax::kTrace) {
      scanners_.push_back(make_scanner(syntax_, path_, bom));
      chosen_ = 0;
      return;
    }
    for (TextSyntax s : {TextSyntax::kJson, TextSyntax::kCsv, TextSyntax::kTsv}) {
      scanners_.push_back(make_scanner(s, path_, bom));
      candidates_.push_back(s);
    }
  }

  void take(const char* p, std::size_t n, int fd) {
    bool certain = !scanners_.empty();
    for (const auto& s : scanners_) certain = certain && s->certain();
    if (!certain) text_.append(p, n);
    const std::size_t skip = bom_ && consumed_ == 0 ? 3 : 0;
    consumed_ += n;
    // The detector first: once it has decided, only the chosen scanner reads on.
    if (!chosen_) {
      detector_.feed(p + skip, n - skip);
      if (detector_.decided()) choose(*detector_.decided());
      else if (detector_.not_json()) drop(TextSyntax::kJson);
    }
    for (auto& s : scanners_) s->feed(p + skip, n - skip);
    if (chosen_) {
      try {
        report(false);
      } catch (...) {
        ::close(fd);
        throw;
      }
    }
  }

  void choose(TextSyntax s) {
    for (std::size_t k = 0; k < candidates_.size(); ++k) {
      if (candidates_[k] == s) {
        std::unique_ptr<Scanner> keep = std::move(scanners_[k]);
        scanners_.clear();
        scanners_.push_back(std::move(keep));
        chosen_ = 0;
        return;
      }
    }
  }

  // A candidate the text has ruled out: it no longer holds the bytes back.
  void drop(TextSyntax s) {
    for (std::size_t k = 0; k < candidates_.size(); ++k) {
      if (candidates_[k] == s) {
        candidates_.erase(candidates_.begin() + static_cast<std::ptrdiff_t>(k));
        scanners_.erase(scanners_.begin() + static_cast<std::ptrdiff_t>(k));
        return;
      }
    }
  }

  // Throws the chosen scanner's error, once complete (or the UTF-8 error before it).
  void report(bool at_end) {
    if (!chosen_ && at_end) choose(*detector_.decided());
    if (!chosen_ || !scanners_[0]->error()) return;
    const std::size_t bad = first_invalid_utf8(text_);
    // A chunk may end inside a character: bytes that may be its start are not judged.
    if (bad != std::string_view::npos && (at_end || bad + 4 <= text_.size())) check_utf8(text_, path_);
    throw InputError(*scanners_[0]->error());
  }

  const std::string& path_;
  const std::string& kind_;
  TextSyntax syntax_;
  bool bom_ = false;
  std::uint64_t consumed_ = 0;
  std::string text_;
  SyntaxDetector detector_;
  std::vector<std::unique_ptr<Scanner>> scanners_;
  std::vector<TextSyntax> candidates_;
  std::optional<std::size_t> chosen_;
};

}  // namespace

std::string read_text_file(const std::string& path, const std::string& kind, TextSyntax syntax) {
  const int fd = open_input_file(path, kind);
  return BoundedReader(path, kind, syntax).read(fd);
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

void check_utf8(std::string_view text, const std::string& path) {
  const std::size_t bad = first_invalid_utf8(text);
  if (bad == std::string_view::npos) return;
  const long line = 1 + static_cast<long>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad), '\n'));
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned>(static_cast<unsigned char>(text[bad])));
  throw InputError(at(path, line, std::string("not UTF-8 text (byte ") + byte + ")"));
}

}  // namespace salus::core
