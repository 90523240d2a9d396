// A strict RFC 8259 JSON reader and a compact writer.
#include "classify/io/json.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <system_error>
#include <utility>

#include "autocat/error.h"

namespace autocat::internal {

namespace {

// Nesting deeper than this is refused, so hostile input cannot overflow the
// stack of the recursive parser.
constexpr int kMaxDepth = 256;

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

bool is_digit(char c) { return c >= '0' && c <= '9'; }

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

}  // namespace

// Recursive-descent parser; a friend of JsonValue.
class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : text_(text) {}

  bool parse(JsonValue* value, std::string* error) {
    skip_whitespace();
    if (!parse_value(value, 0)) {
      if (error != nullptr) *error = error_;
      return false;
    }
    skip_whitespace();
    if (pos_ != text_.size()) {
      fail("unexpected trailing characters");
      if (error != nullptr) *error = error_;
      return false;
    }
    return true;
  }

 private:
  // Records the first error at the current offset; always returns false.
  bool fail(const std::string& what) { return fail_at(what, pos_); }
  bool fail_at(const std::string& what, size_t offset) {
    if (error_.empty()) error_ = what + " at byte " + std::to_string(offset);
    return false;
  }
  bool fail_unexpected(const char* expected) {
    if (pos_ >= text_.size())
      return fail(std::string("unexpected end of input, expected ") + expected);
    return fail(std::string("expected ") + expected);
  }

  void skip_whitespace() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++pos_;
    }
  }

  bool consume_literal(std::string_view literal) {
    if (text_.substr(pos_, literal.size()) != literal) return fail("invalid literal");
    pos_ += literal.size();
    return true;
  }

  bool parse_value(JsonValue* value, int depth) {
    if (pos_ >= text_.size()) return fail("unexpected end of input, expected a value");
    switch (text_[pos_]) {
      case '{':
        return parse_object(value, depth + 1);
      case '[':
        return parse_array(value, depth + 1);
      case '"': {
        std::string s;
        if (!parse_string(&s)) return false;
        *value = JsonValue::string(std::move(s));
        return true;
      }
      case 't':
        if (!consume_literal("true")) return false;
        *value = JsonValue::boolean(true);
        return true;
      case 'f':
        if (!consume_literal("false")) return false;
        *value = JsonValue::boolean(false);
        return true;
      case 'n':
        if (!consume_literal("null")) return false;
        *value = JsonValue();
        return true;
      default:
        if (text_[pos_] == '-' || is_digit(text_[pos_])) return parse_number(value);
        return fail("expected a value");
    }
  }

  bool parse_object(JsonValue* value, int depth) {
    if (depth > kMaxDepth) return fail("nesting deeper than " + std::to_string(kMaxDepth));
    ++pos_;  // '{'
    *value = JsonValue::object();
    skip_whitespace();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return true;
    }
    while (true) {
      skip_whitespace();
      if (pos_ >= text_.size() || text_[pos_] != '"') return fail_unexpected("'\"' (object key)");
      std::string key;
      if (!parse_string(&key)) return false;
      skip_whitespace();
      if (pos_ >= text_.size() || text_[pos_] != ':') return fail_unexpected("':'");
      ++pos_;
      skip_whitespace();
      JsonValue member;
      if (!parse_value(&member, depth)) return false;
      value->members_.emplace_back(std::move(key), std::move(member));
      skip_whitespace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return true;
      }
      return fail_unexpected("',' or '}'");
    }
  }

  bool parse_array(JsonValue* value, int depth) {
    if (depth > kMaxDepth) return fail("nesting deeper than " + std::to_string(kMaxDepth));
    ++pos_;  // '['
    *value = JsonValue::array();
    skip_whitespace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      skip_whitespace();
      JsonValue element;
      if (!parse_value(&element, depth)) return false;
      value->push_back(std::move(element));
      skip_whitespace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return true;
      }
      return fail_unexpected("',' or ']'");
    }
  }

  // Reads 4 hex digits after "\u" at pos_ (pos_ points at the 'u').
  bool parse_hex4(uint32_t* unit) {
    if (pos_ + 5 > text_.size()) {
      pos_ = text_.size();
      return fail("unexpected end of input in \\u escape");
    }
    uint32_t result = 0;
    for (size_t i = 1; i <= 4; ++i) {
      int digit = hex_digit(text_[pos_ + i]);
      if (digit < 0) return fail_at("invalid \\u escape", pos_ - 1);
      result = result * 16 + static_cast<uint32_t>(digit);
    }
    pos_ += 5;
    *unit = result;
    return true;
  }

  bool parse_string(std::string* out) {
    const size_t start = pos_;
    ++pos_;  // opening quote
    while (true) {
      // Copy the run of ordinary bytes in one go.
      size_t run = pos_;
      while (run < text_.size()) {
        unsigned char c = static_cast<unsigned char>(text_[run]);
        if (c == '"' || c == '\\' || c < 0x20) break;
        ++run;
      }
      out->append(text_.data() + pos_, run - pos_);
      pos_ = run;
      if (pos_ >= text_.size()) return fail_at("unterminated string", start);
      char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c != '\\') return fail("unescaped control character in string");
      ++pos_;
      if (pos_ >= text_.size()) return fail_at("unterminated string", start);
      char escape = text_[pos_];
      switch (escape) {
        case '"':
        case '\\':
        case '/':
          out->push_back(escape);
          ++pos_;
          break;
        case 'b':
          out->push_back('\b');
          ++pos_;
          break;
        case 'f':
          out->push_back('\f');
          ++pos_;
          break;
        case 'n':
          out->push_back('\n');
          ++pos_;
          break;
        case 'r':
          out->push_back('\r');
          ++pos_;
          break;
        case 't':
          out->push_back('\t');
          ++pos_;
          break;
        case 'u': {
          uint32_t unit = 0;
          if (!parse_hex4(&unit)) return false;
          if (unit >= 0xD800 && unit <= 0xDBFF) {
            // A high surrogate must be followed by an escaped low surrogate;
            // otherwise it is replaced and what follows is read normally.
            if (pos_ + 1 < text_.size() && text_[pos_] == '\\' && text_[pos_ + 1] == 'u') {
              size_t saved = pos_;
              ++pos_;
              uint32_t low = 0;
              if (!parse_hex4(&low)) return false;
              if (low >= 0xDC00 && low <= 0xDFFF) {
                append_utf8(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00), out);
              } else {
                append_utf8(0xFFFD, out);
                pos_ = saved;
              }
            } else {
              append_utf8(0xFFFD, out);
            }
          } else if (unit >= 0xDC00 && unit <= 0xDFFF) {
            append_utf8(0xFFFD, out);
          } else {
            append_utf8(unit, out);
          }
          break;
        }
        default:
          return fail_at("invalid escape '\\" + std::string(1, escape) + "'", pos_ - 1);
      }
    }
  }

  bool parse_number(JsonValue* value) {
    const size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    if (pos_ >= text_.size() || !is_digit(text_[pos_])) return fail("invalid number");
    if (text_[pos_] == '0') {
      ++pos_;
      if (pos_ < text_.size() && is_digit(text_[pos_])) {
        return fail_at("invalid number (leading zero)", start);
      }
    } else {
      while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    }
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      if (pos_ >= text_.size() || !is_digit(text_[pos_])) {
        return fail("invalid number (digit expected after '.')");
      }
      while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    }
    bool negative_exponent = false;
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) {
        negative_exponent = text_[pos_] == '-';
        ++pos_;
      }
      if (pos_ >= text_.size() || !is_digit(text_[pos_])) {
        return fail("invalid number (digit expected in exponent)");
      }
      while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    }
    double number = 0;
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    auto [ptr, ec] = std::from_chars(first, last, number);
    if (ec == std::errc::result_out_of_range) {
      // Underflow rounds to zero; overflow has no JSON representation.
      if (!negative_exponent) return fail_at("number out of range", start);
      number = *first == '-' ? -0.0 : 0.0;
    } else if (ec != std::errc() || ptr != last) {
      return fail_at("invalid number", start);
    }
    *value = JsonValue::number(number);
    value->string_.assign(first, last);
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

namespace {

void dump_value(const JsonValue& value, std::string* out) {
  switch (value.type()) {
    case JsonValue::Type::kNull:
      out->append("null");
      return;
    case JsonValue::Type::kBool:
      out->append(value.as_bool() ? "true" : "false");
      return;
    case JsonValue::Type::kNumber: {
      double number = value.as_number();
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
      return;
    }
    case JsonValue::Type::kString:
      append_json_string(value.as_string(), out);
      return;
    case JsonValue::Type::kArray: {
      out->push_back('[');
      bool first = true;
      for (const JsonValue& element : value.as_array()) {
        if (!first) out->push_back(',');
        first = false;
        dump_value(element, out);
      }
      out->push_back(']');
      return;
    }
    case JsonValue::Type::kObject: {
      out->push_back('{');
      bool first = true;
      for (const auto& member : value.members()) {
        if (!first) out->push_back(',');
        first = false;
        append_json_string(member.first, out);
        out->push_back(':');
        dump_value(member.second, out);
      }
      out->push_back('}');
      return;
    }
  }
}

}  // namespace

JsonValue JsonValue::boolean(bool value) {
  JsonValue result;
  result.type_ = Type::kBool;
  result.bool_ = value;
  return result;
}

JsonValue JsonValue::number(double value) {
  JsonValue result;
  result.type_ = Type::kNumber;
  result.number_ = value;
  return result;
}

JsonValue JsonValue::string(std::string value) {
  JsonValue result;
  result.type_ = Type::kString;
  result.string_ = std::move(value);
  return result;
}

JsonValue JsonValue::array() {
  JsonValue result;
  result.type_ = Type::kArray;
  return result;
}

JsonValue JsonValue::object() {
  JsonValue result;
  result.type_ = Type::kObject;
  return result;
}

const JsonValue* JsonValue::find(std::string_view key) const {
  if (type_ != Type::kObject) return nullptr;
  // With duplicate keys the last one wins, as in JavaScript.
  for (auto it = members_.rbegin(); it != members_.rend(); ++it) {
    if (it->first == key) return &it->second;
  }
  return nullptr;
}

JsonValue& JsonValue::push_back(JsonValue value) {
  if (type_ != Type::kArray) {
    throw InvalidArgumentError("JsonValue::push_back on a value that is not an array");
  }
  array_.push_back(std::move(value));
  return array_.back();
}

JsonValue& JsonValue::set(std::string key, JsonValue value) {
  if (type_ != Type::kObject) {
    throw InvalidArgumentError("JsonValue::set on a value that is not an object");
  }
  for (auto& member : members_) {
    if (member.first == key) {
      member.second = std::move(value);
      return member.second;
    }
  }
  members_.emplace_back(std::move(key), std::move(value));
  return members_.back().second;
}

std::string JsonValue::dump() const {
  std::string out;
  dump_value(*this, &out);
  return out;
}

bool parse_json(std::string_view text, JsonValue* value, std::string* error) {
  JsonValue result;
  JsonParser parser(text);
  if (!parser.parse(&result, error)) return false;
  *value = std::move(result);
  return true;
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
