// Tests of the JSON reader and writer.
#include "classify/io/json_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "autocat/error.h"

namespace autocat::internal {
namespace {

class JsonTest : public testing::Test {
 protected:
  static JsonValue parse(std::string_view text) {
    JsonValue value;
    std::string error;
    EXPECT_TRUE(parse_json(text, &value, &error)) << text << ": " << error;
    return value;
  }

  // The error message for `text`, which must fail to parse.
  static std::string error_of(std::string_view text) {
    JsonValue value = JsonValue::string("untouched");
    std::string error;
    EXPECT_FALSE(parse_json(text, &value, &error)) << text;
    EXPECT_EQ(value.as_string(), "untouched") << "value changed on failure";
    return error;
  }

  static std::string round_trip(std::string_view text) { return parse(text).dump(); }
};

TEST_F(JsonTest, ParsesScalars) {
  EXPECT_TRUE(parse("null").is_null());
  EXPECT_EQ(parse("true").type(), JsonValue::Type::kBool);
  EXPECT_TRUE(parse("true").as_bool());
  EXPECT_FALSE(parse(" false ").as_bool());
  EXPECT_EQ(parse("42").as_number(), 42.0);
  EXPECT_EQ(parse("-0.5e2").as_number(), -50.0);
  EXPECT_EQ(parse("1E-2").as_number(), 0.01);
  EXPECT_EQ(parse("\"hi\"").as_string(), "hi");
  EXPECT_EQ(parse("1e-400").as_number(), 0.0);  // underflow rounds to zero
}

TEST_F(JsonTest, ParsesObjectsInOrder) {
  JsonValue value = parse(R"( { "id" : "a/1", "labels": ["x", "y"], "n": 3, "o": {} } )");
  ASSERT_TRUE(value.is_object());
  ASSERT_EQ(value.members().size(), 4u);
  EXPECT_EQ(value.members()[0].first, "id");
  EXPECT_EQ(value.members()[3].first, "o");
  ASSERT_NE(value.find("labels"), nullptr);
  ASSERT_TRUE(value.find("labels")->is_array());
  EXPECT_EQ(value.find("labels")->as_array().at(1).as_string(), "y");
  EXPECT_EQ(value.find("missing"), nullptr);
  EXPECT_EQ(parse("[1]").find("id"), nullptr);
  // With duplicate keys the last one wins.
  EXPECT_EQ(parse(R"({"k":1,"k":2})").find("k")->as_number(), 2.0);
}

TEST_F(JsonTest, RoundTripsCompactly) {
  const char* texts[] = {
      R"({"a":[1,2.5,-3,true,false,null],"b":{"c":"d"},"e":[],"f":{}})",
      R"(["caf\u00e9 is café","tab\tnew\nline","q\"b\\"])",
      R"([0.1,1e+300,-1e-300,123456789012345680000,0])",
  };
  for (const char* text : texts) {
    std::string dumped = round_trip(text);
    EXPECT_EQ(round_trip(dumped), dumped);
  }
  EXPECT_EQ(round_trip("[ 1 , 2.0 , 3.25 ]"), "[1,2,3.25]");
  EXPECT_EQ(round_trip(R"({ "a" : [ ] })"), R"({"a":[]})");
}

TEST_F(JsonTest, NumbersUseShortestRoundTripForm) {
  EXPECT_EQ(JsonValue::number(3).dump(), "3");
  EXPECT_EQ(JsonValue::number(-17).dump(), "-17");
  EXPECT_EQ(JsonValue::number(0.1).dump(), "0.1");
  EXPECT_EQ(JsonValue::number(0.30000000000000004).dump(), "0.30000000000000004");
  EXPECT_EQ(JsonValue::number(1e21).dump(), "1e+21");
  EXPECT_EQ(JsonValue::number(std::nan("")).dump(), "null");
  EXPECT_EQ(JsonValue::number(std::numeric_limits<double>::infinity()).dump(), "null");
  for (double x : {0.1, 2.0 / 3.0, 1e-7, 123456.789, 5e-324, 1.7976931348623157e308}) {
    EXPECT_EQ(parse(JsonValue::number(x).dump()).as_number(), x);
  }
}

TEST_F(JsonTest, DecodesEscapes) {
  EXPECT_EQ(parse(R"("\"\\\/\b\f\n\r\t")").as_string(), "\"\\/\b\f\n\r\t");
  EXPECT_EQ(parse(R"("\u0041\u00e9\u20AC")").as_string(), "A\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(parse(R"("a\u0000b")").as_string(), std::string("a\0b", 3));
  // Non-ASCII bytes pass through unchanged.
  EXPECT_EQ(parse("\"\xE5\x8C\x97\xE4\xBA\xAC\"").as_string(), "\xE5\x8C\x97\xE4\xBA\xAC");
}

TEST_F(JsonTest, DecodesSurrogatePairs) {
  EXPECT_EQ(parse(R"("\ud83d\ude00")").as_string(), "\xF0\x9F\x98\x80");  // U+1F600
  EXPECT_EQ(parse(R"("\uD834\uDD1E")").as_string(), "\xF0\x9D\x84\x9E");  // U+1D11E
  const std::string kReplacement = "\xEF\xBF\xBD";
  EXPECT_EQ(parse(R"("\ud83dx")").as_string(), kReplacement + "x");       // lone high
  EXPECT_EQ(parse(R"("\ude00")").as_string(), kReplacement);              // lone low
  EXPECT_EQ(parse(R"("\ud83d")").as_string(), kReplacement);              // high at end
  EXPECT_EQ(parse(R"("\ud83d\u0041")").as_string(), kReplacement + "A");  // high + non-low
  EXPECT_EQ(parse(R"("\ud83d\ud83d\ude00")").as_string(), kReplacement + "\xF0\x9F\x98\x80");
}

TEST_F(JsonTest, WritesEscapedStrings) {
  std::string out;
  append_json_string(std::string("a\"b\\c\nd\te\x01\x1f\0f", 13), &out);
  EXPECT_EQ(out, R"("a\"b\\c\nd\te\u0001\u001f\u0000f")");
  out.clear();
  EXPECT_TRUE(append_json_string("caf\xC3\xA9 / \xE2\x82\xAC", &out));
  EXPECT_EQ(out, "\"caf\xC3\xA9 / \xE2\x82\xAC\"");  // valid UTF-8 passes through
  JsonValue object = JsonValue::object();
  object.set("k\"ey", JsonValue::string("line\nbreak"));
  EXPECT_EQ(object.dump(), R"({"k\"ey":"line\nbreak"})");
}

// What a terminal or message may show: no control character nor invalid byte
// of the input (ESC [ ... would drive the terminal).
TEST_F(JsonTest, PrintableEscapesControlsAndInvalidBytes) {
  const struct {
    std::string input;
    std::string shown;
  } cases[] = {
      {"plain caf\xC3\xA9 \xE6\x96\x99", "plain caf\xC3\xA9 \xE6\x96\x99"},
      {"red\x1B[31m", "red\\x1b[31m"},
      {std::string("nul\0x", 5), "nul\\x00x"},
      {"bell\a del\x7F", "bell\\x07 del\\x7f"},
      {"tab\tline\n", "tab\\x09line\\x0a"},
      {"csi\xC2\x9B"
       "2J",
       "csi\\u009b2J"},  // U+009B, the one-byte CSI
      {"nbsp\xC2\xA0", "nbsp\xC2\xA0"},
      {"latin1 caf\xE9", "latin1 caf\\xe9"},
      {"raw\x9B", "raw\\x9b"},
      {"back\\slash", "back\\slash"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(printable(c.input), c.shown) << c.input;
    EXPECT_TRUE(is_valid_utf8(printable(c.input)));
  }
}

TEST_F(JsonTest, ReplacesInvalidUtf8SoOutputParses) {
  const std::string kReplacement = "\xEF\xBF\xBD";
  struct Case {
    std::string input;
    std::string written;  // between the quotes
  };
  const Case cases[] = {
      {"a\xFF", "a" + kReplacement},                                 // never valid
      {"\x80x", kReplacement + "x"},                                 // lone continuation
      {"\xC0\xAF", kReplacement + kReplacement},                     // overlong '/'
      {"\xED\xA0\x80", kReplacement + kReplacement + kReplacement},  // surrogate U+D800
      {"\xF4\x90\x80\x80", std::string() + kReplacement + kReplacement + kReplacement +
                               kReplacement},     // beyond U+10FFFF
      {"\xE2\x82", kReplacement + kReplacement},  // truncated at the end
      {"\xE2\x82x", kReplacement + kReplacement + "x"},
      {"ok \xF0\x9F\x98\x80", "ok \xF0\x9F\x98\x80"},  // 4-byte sequence kept
  };
  for (const Case& c : cases) {
    std::string out;
    const bool valid = append_json_string(c.input, &out);
    EXPECT_EQ(out, "\"" + c.written + "\"") << c.input;
    EXPECT_EQ(valid, c.input == c.written) << c.input;
    EXPECT_EQ(is_valid_utf8(c.input), valid) << c.input;
  }
  // Keys and values of a dumped document: what a label read from raw bytes
  // becomes in --json output.
  JsonValue object = JsonValue::object();
  object.set("id\xFE", JsonValue::string("label \xC3"));
  EXPECT_EQ(object.dump(), "{\"id" + kReplacement + "\":\"label " + kReplacement + "\"}");
  EXPECT_TRUE(is_valid_utf8(object.dump()));
}

TEST_F(JsonTest, WritesIntegersWithoutExponent) {
  EXPECT_EQ(JsonValue::number(100000).dump(), "100000");  // to_chars alone gives 1e+05
  EXPECT_EQ(JsonValue::number(1e15).dump(), "1000000000000000");
  EXPECT_EQ(JsonValue::number(-2e6).dump(), "-2000000");
  EXPECT_EQ(JsonValue::number(9007199254740992.0).dump(), "9007199254740992");  // 2^53
  EXPECT_EQ(JsonValue::number(-0.0).dump(), "0");
  EXPECT_EQ(JsonValue::number(2.5e5).dump(), "250000");
  EXPECT_EQ(JsonValue::number(1e-5).dump(), "1e-05");  // not an integer: shortest form
  EXPECT_EQ(round_trip(R"({"documents":1e5})"), R"({"documents":100000})");
}

TEST_F(JsonTest, KeepsNumbersAsWritten) {
  // Beyond 2^53 two ids would become the same double.
  EXPECT_EQ(parse("9007199254740993").number_text(), "9007199254740993");
  EXPECT_EQ(parse("9007199254740992").number_text(), "9007199254740992");
  EXPECT_EQ(parse(" -1.50e3 ").number_text(), "-1.50e3");
  EXPECT_EQ(parse("-1.50e3").as_number(), -1500.0);
  EXPECT_TRUE(JsonValue::number(7).number_text().empty());
}

TEST_F(JsonTest, BuildsValues) {
  JsonValue object = JsonValue::object();
  object.set("name", JsonValue::string("x"));
  JsonValue& list = object.set("list", JsonValue::array());
  list.push_back(JsonValue::number(1));
  list.push_back(JsonValue::boolean(true));
  list.push_back(JsonValue());
  object.set("name", JsonValue::string("y"));  // replaces
  EXPECT_EQ(object.dump(), R"({"name":"y","list":[1,true,null]})");
  JsonValue number = JsonValue::number(1);
  EXPECT_THROW(number.push_back(JsonValue()), InvalidArgumentError);
  EXPECT_THROW(number.set("k", JsonValue()), InvalidArgumentError);
}

TEST_F(JsonTest, ReportsErrorsWithByteOffsets) {
  EXPECT_EQ(error_of(R"({"a" 1})"), "expected ':' at byte 5");
  EXPECT_EQ(error_of("[1,2"), "unexpected end of input, expected ',' or ']' at byte 4");
  EXPECT_EQ(error_of(""), "unexpected end of input, expected a value at byte 0");
  EXPECT_EQ(error_of("{\"a\":1} x"), "unexpected trailing characters at byte 8");
  EXPECT_EQ(error_of("[1,]"), "expected a value at byte 3");
  EXPECT_EQ(error_of("{\"a\":1,}"), "expected '\"' (object key) at byte 7");
  EXPECT_EQ(error_of("\"abc"), "unterminated string at byte 0");
  EXPECT_EQ(error_of("[\"a\nb\"]"), "unescaped control character in string at byte 3");
  EXPECT_EQ(error_of(R"(["\x"])"), "invalid escape '\\x' at byte 2");
  EXPECT_EQ(error_of(R"(["\u12G4"])"), "invalid \\u escape at byte 2");
  EXPECT_EQ(error_of("01"), "invalid number (leading zero) at byte 0");
  EXPECT_EQ(error_of("1e999"), "number out of range at byte 0");
  EXPECT_NE(error_of("1.").find("at byte 2"), std::string::npos);
  EXPECT_NE(error_of("-").find("at byte 1"), std::string::npos);
  EXPECT_NE(error_of("tru").find("at byte 0"), std::string::npos);
  EXPECT_NE(error_of("NaN").find("at byte 0"), std::string::npos);
  EXPECT_NE(error_of("{'a':1}").find("at byte 1"), std::string::npos);
  EXPECT_NE(error_of("[1 2]").find("at byte 3"), std::string::npos);
}

TEST_F(JsonTest, LimitsNestingDepth) {
  std::string ok = std::string(256, '[') + std::string(256, ']');
  EXPECT_TRUE(parse(ok).is_array());
  std::string deep = std::string(257, '[') + std::string(257, ']');
  EXPECT_EQ(error_of(deep), "nesting deeper than 256 at byte 256");
  // Hostile input far deeper than any stack could recurse.
  std::string hostile(1000000, '[');
  EXPECT_NE(error_of(hostile).find("nesting deeper than 256"), std::string::npos);
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += "{\"a\":";
  EXPECT_NE(error_of(objects).find("nesting deeper than 256"), std::string::npos);
}

TEST_F(JsonTest, ParsesLargeStrings) {
  std::string big(200000, 'x');
  big[100000] = '\n';
  std::string text;
  append_json_string(big, &text);
  EXPECT_EQ(parse(text).as_string(), big);
}

}  // namespace
}  // namespace autocat::internal
