// A small JSON reader and writer: enough for JSON Lines input and the CLI's
// --json output. Strict RFC 8259 syntax; strings are byte strings (\u escapes
// are decoded to UTF-8, other bytes pass through unchanged). Output is always
// valid JSON: invalid UTF-8 is written as U+FFFD, and integral numbers within
// 2^53 are written as integers, never in exponent form.
//
// Thread safety: values are plain data.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace autocat::internal {

class JsonValue {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };

  JsonValue() = default;
  static JsonValue boolean(bool value);
  static JsonValue number(double value);
  static JsonValue string(std::string value);
  static JsonValue array();
  static JsonValue object();

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_object() const { return type_ == Type::kObject; }

  bool as_bool() const { return bool_; }
  double as_number() const { return number_; }
  // A parsed number exactly as written ("9007199254740993"); empty for
  // numbers built with number().
  const std::string& number_text() const { return string_; }
  const std::string& as_string() const { return string_; }
  const std::vector<JsonValue>& as_array() const { return array_; }
  // Object members in the order they were added or parsed.
  const std::vector<std::pair<std::string, JsonValue>>& members() const { return members_; }

  // Object lookup; nullptr if absent (or not an object).
  const JsonValue* find(std::string_view key) const;
  // Builders (REQUIRES: matching type).
  JsonValue& push_back(JsonValue value);
  JsonValue& set(std::string key, JsonValue value);

  // Compact serialization (no spaces), non-finite numbers written as null.
  std::string dump() const;

 private:
  friend class JsonParser;  // appends parsed members without a lookup per key

  Type type_ = Type::kNull;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;
  std::vector<JsonValue> array_;
  std::vector<std::pair<std::string, JsonValue>> members_;
};

// Parses one JSON text. On failure returns false and sets `error` to a short
// description with the byte offset ("expected ':' at byte 17").
bool parse_json(std::string_view text, JsonValue* value, std::string* error);

// Appends `text` as a quoted JSON string: control characters escaped, each
// invalid UTF-8 sequence replaced by U+FFFD. Returns false if any was.
bool append_json_string(std::string_view text, std::string* out);

// True if `text` is well-formed UTF-8 (no overlong forms, surrogates or code
// points beyond U+10FFFF).
bool is_valid_utf8(std::string_view text);

// `text` safe to show on a terminal or in a message: control characters
// (C0, DEL, C1) and bytes that are not valid UTF-8 become \xHH (C1 code
// points \u0080..\u009f), a backslash stays as it is. No escape sequence of
// the input reaches the terminal.
std::string printable(std::string_view text);

}  // namespace autocat::internal
