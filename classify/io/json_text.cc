// autocat's number and string spelling around nlohmann::json, and the JSON
// Lines record reader on its SAX interface.
#include "classify/io/json_text.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <utility>
#include <vector>

namespace autocat::internal {

namespace {

// Nesting deeper than this is refused.
constexpr size_t kMaxDepth = 256;

void append_utf8(uint32_t code_point, std::string* out) {
  if (code_point < 0x80) {
    out->push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The 4 hex digits at text[pos], or -1.
long hex4_at(std::string_view text, size_t pos) {
  if (pos + 4 > text.size()) return -1;
  long unit = 0;
  for (size_t i = 0; i < 4; ++i) {
    const int digit = hex_digit(text[pos + i]);
    if (digit < 0) return -1;
    unit = unit * 16 + digit;
  }
  return unit;
}

// The length of the well-formed UTF-8 sequence starting at text[pos] (a
// non-ASCII lead byte), or 0 if it is not one (RFC 3629, Table 3-7 of
// Unicode: no overlong forms, surrogates or values beyond U+10FFFF).
size_t utf8_sequence_length(std::string_view text, size_t pos) {
  const auto byte = [&](size_t i) {
    return pos + i < text.size() ? static_cast<unsigned char>(text[pos + i]) : 0u;
  };
  const unsigned lead = byte(0);
  const auto continuation = [&](size_t i, unsigned low = 0x80, unsigned high = 0xBF) {
    const unsigned b = byte(i);
    return pos + i < text.size() && b >= low && b <= high;
  };
  if (lead >= 0xC2 && lead <= 0xDF) return continuation(1) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    const unsigned low = lead == 0xE0 ? 0xA0 : 0x80;
    const unsigned high = lead == 0xED ? 0x9F : 0xBF;
    return continuation(1, low, high) && continuation(2) ? 3 : 0;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    const unsigned low = lead == 0xF0 ? 0x90 : 0x80;
    const unsigned high = lead == 0xF4 ? 0x8F : 0xBF;
    return continuation(1, low, high) && continuation(2) && continuation(3) ? 4 : 0;
  }
  return 0;
}

// nlohmann's reader refuses bytes that are not UTF-8 and lone surrogate
// escapes; autocat reads the first unchanged and the second as U+FFFD. A
// text with either is rewritten before parsing: a lone surrogate escape
// becomes \ufffd, an invalid byte B the marker U+10FFFF followed by
// U+10FE00 + B, and a U+10FFFF of the input the marker twice (raw or
// escaped, as it came), so that restore_bytes() undoes it exactly.
constexpr uint32_t kByteBase = 0x10FE00;
const std::string_view kMarkerUtf8("\xF4\x8F\xBF\xBF", 4);

bool needs_rewrite(std::string_view text) {
  for (size_t i = text.find("\\u"); i != std::string_view::npos; i = text.find("\\u", i + 1)) {
    if (i + 3 < text.size() && (text[i + 2] == 'd' || text[i + 2] == 'D') &&
        hex_digit(text[i + 3]) >= 8) {
      return true;
    }
  }
  return !is_valid_utf8(text);
}

std::string rewrite(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\\') {
      const long unit = i + 1 < text.size() && text[i + 1] == 'u' ? hex4_at(text, i + 2) : -1;
      if (unit < 0xD800 || unit > 0xDFFF) {
        // Another escape (or a broken one, left for the parser to report).
        const size_t length = unit >= 0 ? 6 : std::min<size_t>(2, text.size() - i);
        out.append(text.substr(i, length));
        i += length;
        continue;
      }
      const long low = unit <= 0xDBFF && text.substr(i + 6, 2) == "\\u" ? hex4_at(text, i + 8) : -1;
      if (low >= 0xDC00 && low <= 0xDFFF) {
        const std::string_view pair = text.substr(i, 12);
        out.append(pair);
        if (unit == 0xDBFF && low == 0xDFFF) out.append(pair);  // U+10FFFF
        i += 12;
      } else {
        out.append("\\ufffd");
        i += 6;
      }
      continue;
    }
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    const size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      out.append(kMarkerUtf8);
      append_utf8(kByteBase + c, &out);
      ++i;
      continue;
    }
    out.append(text.substr(i, length));
    if (text.substr(i, length) == kMarkerUtf8) out.append(kMarkerUtf8);
    i += length;
  }
  return out;
}

// Undoes rewrite() in a decoded string.
void restore_bytes(std::string* text) {
  size_t found = text->find(kMarkerUtf8);
  if (found == std::string::npos) return;
  std::string out(*text, 0, found);
  for (size_t i = found; i < text->size();) {
    if (text->compare(i, 4, kMarkerUtf8) != 0 || i + 8 > text->size()) {
      out.push_back((*text)[i++]);
      continue;
    }
    const std::string_view next(text->data() + i + 4, 4);
    if (next == kMarkerUtf8) {
      out.append(kMarkerUtf8);
    } else {
      // F4 8F BA/BB xx: U+10FE80..U+10FEFF.
      const uint32_t code_point = ((static_cast<unsigned char>(next[2]) & 0x3Fu) << 6) |
                                  (static_cast<unsigned char>(next[3]) & 0x3Fu);
      out.push_back(static_cast<char>((kByteBase + code_point) & 0xFF));
    }
    i += 8;
  }
  *text = std::move(out);
}

// An iterator over the text that publishes how far nlohmann's reader has
// read, so that the SAX handler can find the text of a number and the
// offset of an error of its own.
class TrackingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackingIterator(const char* position, size_t* read) : position_(position), read_(read) {}
  reference operator*() const { return *position_; }
  TrackingIterator& operator++() {
    ++position_;
    ++*read_;
    return *this;
  }
  TrackingIterator operator++(int) {
    TrackingIterator before = *this;
    ++*this;
    return before;
  }
  bool operator==(const TrackingIterator& other) const { return position_ == other.position_; }
  bool operator!=(const TrackingIterator& other) const { return position_ != other.position_; }

 private:
  const char* position_;
  size_t* read_;
};

bool is_number_char(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

// Builds a Json from nlohmann's SAX events (as its own DOM parser does),
// with the additions described in json_text.h.
class Builder {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

  Builder(std::string_view text, const size_t* read, bool restore, JsonNumberTexts* number_texts)
      : text_(text), read_(read), restore_(restore), number_texts_(number_texts) {}

  bool null() { return add(Json()); }
  bool boolean(bool value) { return add(Json(value)); }
  bool number_integer(number_integer_t value) { return add_integer(Json(value)); }
  bool number_unsigned(number_unsigned_t value) { return add_integer(Json(value)); }
  bool number_float(number_float_t value, const string_t& text) {
    const size_t end = number_end();
    if (!std::isfinite(value)) {
      // Underflow already reads as 0; overflow has no JSON representation.
      return fail("number out of range", end - text.size());
    }
    return add_number(Json(value), text);
  }
  bool string(string_t& value) {
    if (restore_) restore_bytes(&value);
    return add(Json(std::move(value)));
  }
  bool binary(binary_t& /*value*/) { return fail("binary value", *read_); }
  bool start_object(std::size_t /*size*/) { return open(Json::object()); }
  bool key(string_t& value) {
    if (restore_) restore_bytes(&value);
    key_ = std::move(value);
    return true;
  }
  bool end_object() {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t /*size*/) { return open(Json::array()); }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& error) {
    if (error.id == 406) {
      // Overflow has no JSON representation (underflow reads as 0).
      const std::string_view number = scan_number();
      return fail("number out of range", static_cast<size_t>(number.data() - text_.data()));
    }
    // "[json.exception.parse_error.101] parse error at line 1, column 6:
    // syntax error ..." without what a one-line text does not need.
    std::string what = error.what();
    if (what.compare(0, 1, "[") == 0) what.erase(0, what.find("] ") + 2);
    if (what.compare(0, 12, "parse error ") == 0) what.erase(0, what.find(": ") + 2);
    // The token read so far may be a whole megabyte-long string.
    if (const size_t last = what.find("; last read: "); last != std::string::npos) what.erase(last);
    return fail(what, position == 0 ? 0 : position - 1);
  }

  Json& root() { return root_; }
  const std::string& error() const { return error_; }

 private:
  bool fail(const std::string& what, size_t offset) {
    if (error_.empty()) error_ = what + " at byte " + std::to_string(offset);
    return false;
  }

  // Where the number just read ends: the reader has read one character past
  // it, unless it ended the text.
  size_t number_end() const {
    size_t end = std::min(*read_, text_.size());
    if (end > 0 && !is_number_char(text_[end - 1])) --end;
    return end;
  }

  std::string_view scan_number() const {
    const size_t end = number_end();
    size_t start = end;
    while (start > 0 && is_number_char(text_[start - 1])) --start;
    return text_.substr(start, end - start);
  }

  bool add_integer(Json value) {
    const std::string_view text = scan_number();
    // nlohmann reads "00123" as 0 followed by 0123, a syntax error that
    // says less than this.
    const std::string_view digits = text.substr(text.compare(0, 1, "-") == 0 ? 1 : 0);
    if (digits.size() > 1 && digits[0] == '0' && digits[1] >= '0' && digits[1] <= '9') {
      return fail("invalid number (leading zero)", static_cast<size_t>(text.data() - text_.data()));
    }
    return add_number(std::move(value), text);
  }

  bool add_number(Json value, std::string_view text) {
    if (number_texts_ != nullptr && stack_.empty()) {
      (*number_texts_)[""] = std::string(text);
    } else if (number_texts_ != nullptr && stack_.size() == 1 && stack_.back()->is_object()) {
      std::string pointer = "/";
      for (char c : key_) {
        if (c == '~') {
          pointer += "~0";
        } else if (c == '/') {
          pointer += "~1";
        } else {
          pointer += c;
        }
      }
      (*number_texts_)[pointer] = std::string(text);
    }
    return add(std::move(value));
  }

  // Places `value` in the container being read (or at the root); returns a
  // pointer to it, or nullptr if it was the root.
  Json* place(Json&& value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Json& container = *stack_.back();
    if (container.is_array()) {
      container.push_back(std::move(value));
      return &container.back();
    }
    // With duplicate keys the last one wins, as in JavaScript.
    Json& slot = container[key_];
    slot = std::move(value);
    return &slot;
  }

  bool add(Json&& value) {
    place(std::move(value));
    return true;
  }

  bool open(Json&& container) {
    if (stack_.size() >= kMaxDepth) {
      return fail("nesting deeper than " + std::to_string(kMaxDepth), *read_ - 1);
    }
    stack_.push_back(place(std::move(container)));
    return true;
  }

  std::string_view text_;
  const size_t* read_;
  bool restore_;
  JsonNumberTexts* number_texts_;
  Json root_;
  std::vector<Json*> stack_;
  std::string key_;
  std::string error_;
};

}  // namespace

bool parse_json(std::string_view text, Json* value, std::string* error,
                JsonNumberTexts* number_texts) {
  std::string rewritten;
  const bool restore = needs_rewrite(text);
  if (restore) {
    rewritten = rewrite(text);
    text = rewritten;
  }
  size_t read = 0;
  JsonNumberTexts texts;
  Builder builder(text, &read, restore, number_texts != nullptr ? &texts : nullptr);
  const bool ok = Json::sax_parse(TrackingIterator(text.data(), &read),
                                  TrackingIterator(text.data() + text.size(), &read), &builder);
  if (!ok) {
    if (error != nullptr) {
      *error = builder.error().empty() ? "invalid JSON at byte " + std::to_string(read)
                                       : builder.error();
    }
    return false;
  }
  *value = std::move(builder.root());
  if (number_texts != nullptr) *number_texts = std::move(texts);
  return true;
}

void append_json_number(double number, std::string* out) {
  if (!std::isfinite(number)) {
    out->append("null");
    return;
  }
  // Integral values that a double holds exactly are written as integers
  // (to_chars would write 100000 as "1e+05"); others in the shortest form
  // that reads back as the same double.
  constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
  char buffer[64];
  std::to_chars_result result{};
  if (std::trunc(number) == number && std::fabs(number) <= kExactIntegers) {
    result = std::to_chars(buffer, buffer + sizeof(buffer), static_cast<int64_t>(number));
  } else {
    result = std::to_chars(buffer, buffer + sizeof(buffer), number);
  }
  out->append(buffer, result.ptr);
}

void dump_json(const Json& value, std::string* out) {
  switch (value.type()) {
    case Json::value_t::boolean:
      out->append(value.get<bool>() ? "true" : "false");
      return;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      // Every number as the double it holds: counts and scores alike.
      append_json_number(value.get<double>(), out);
      return;
    case Json::value_t::string:
      append_json_string(value.get_ref<const std::string&>(), out);
      return;
    case Json::value_t::array: {
      out->push_back('[');
      bool first = true;
      for (const Json& element : value) {
        if (!first) out->push_back(',');
        first = false;
        dump_json(element, out);
      }
      out->push_back(']');
      return;
    }
    case Json::value_t::object: {
      out->push_back('{');
      bool first = true;
      for (const auto& member : value.items()) {
        if (!first) out->push_back(',');
        first = false;
        append_json_string(member.key(), out);
        out->push_back(':');
        dump_json(member.value(), out);
      }
      out->push_back('}');
      return;
    }
    case Json::value_t::null:
    case Json::value_t::binary:
    case Json::value_t::discarded:
      out->append("null");
      return;
  }
}

std::string dump_json(const Json& value) {
  std::string out;
  dump_json(value, &out);
  return out;
}

bool append_json_string(std::string_view text, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  bool replaced = false;
  out->reserve(out->size() + text.size() + 2);
  out->push_back('"');
  size_t run_start = 0;
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const size_t length = utf8_sequence_length(text, i);
      if (length != 0) {
        i += length;
        continue;
      }
      // One U+FFFD per invalid byte, so the output parses.
      out->append(text.data() + run_start, i - run_start);
      out->append("\xEF\xBF\xBD");
      replaced = true;
      run_start = ++i;
      continue;
    }
    if (c >= 0x20 && c != '"' && c != '\\') {
      ++i;
      continue;
    }
    out->append(text.data() + run_start, i - run_start);
    run_start = ++i;
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        out->append("\\u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 0xF]);
        break;
    }
  }
  out->append(text.data() + run_start, text.size() - run_start);
  out->push_back('"');
  return !replaced;
}

bool is_valid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t length = utf8_sequence_length(text, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::string printable(std::string_view text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  auto escape = [&](const char* lead, unsigned value) {
    out += lead;
    if (lead[1] == 'u') out += "00";
    out.push_back(kHex[(value >> 4) & 0xF]);
    out.push_back(kHex[value & 0xF]);
  };
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7F) {
        escape("\\x", c);
      } else {
        out.push_back(static_cast<char>(c));
      }
      ++i;
      continue;
    }
    const size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      escape("\\x", c);
      ++i;
      continue;
    }
    // U+0080..U+009F, the C1 controls, are C2 80..C2 9F.
    const unsigned char next = static_cast<unsigned char>(text[i + 1]);
    if (c == 0xC2 && next < 0xA0) {
      escape("\\u", next);
    } else {
      out.append(text.data() + i, length);
    }
    i += length;
  }
  return out;
}

}  // namespace autocat::internal
