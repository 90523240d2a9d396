// What autocat adds to nlohmann::json: how its --json output spells numbers
// and strings, and how a JSON Lines record is read.
//
// Output (dump_json): compact, keys in insertion order (Json is
// nlohmann::ordered_json). Every number is written as the double it holds:
// integral values within 2^53 as integers (100000, never 1e+05 or 100000.0),
// others in the shortest form that reads back as the same double (to_chars),
// NaN and infinities as null. Strings escape '"', '\\' and control characters
// (\b \f \n \r \t, others \u00XX) and write each byte that is not part of
// well-formed UTF-8 as U+FFFD, so the output always parses.
//
// Input (parse_json): strict RFC 8259 by nlohmann's reader, with what JSON
// Lines corpora need beyond it: bytes that are not UTF-8 pass through strings
// unchanged (a Latin-1 text is read as it is; labels are checked later), a
// lone surrogate escape (\ud83d without its pair) reads as U+FFFD, numbers
// out of the range of a double are an error and their underflow reads as 0,
// nesting is limited to 256 levels, and the text of numbers at the top level
// is kept as written (an "id": 12345678901234567890 or -0 keeps its digits).
//
// Thread safety: free functions on caller-owned data.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>

namespace autocat::internal {

using Json = nlohmann::ordered_json;

// The text of numbers as written in the input, by JSON Pointer ("" for a
// number at the root, "/id" for the member "id" of the root object). Only
// the root and the members of a root object are recorded.
using JsonNumberTexts = std::unordered_map<std::string, std::string>;

// Parses one JSON text into `value` (left unchanged on failure). On failure
// returns false and sets `error` to a short description with the byte offset
// ("... at byte 17"). `number_texts`, if given, receives the numbers' texts.
bool parse_json(std::string_view text, Json* value, std::string* error,
                JsonNumberTexts* number_texts = nullptr);

// `value` written compactly, as described above.
std::string dump_json(const Json& value);
void dump_json(const Json& value, std::string* out);

// Appends `number` as dump_json writes it.
void append_json_number(double number, std::string* out);

// Appends `text` as a quoted JSON string: control characters escaped, each
// invalid UTF-8 byte replaced by U+FFFD. Returns false if any was.
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
