// Tests of what autocat adds to nlohmann::json: number and string spelling
// of the output, and the JSON Lines record reader.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>

#include "autocat/error.h"
#include "classify/io/json_text.h"

namespace autocat::internal {
namespace {

class JsonTest : public testing::Test {
 protected:
  static Json parse(std::string_view text) {
    Json value;
    std::string error;
    EXPECT_TRUE(parse_json(text, &value, &error)) << text << ": " << error;
    return value;
  }

  // The text of the number `text` as parse_json keeps it.
  static std::string number_text(std::string_view text) {
    Json value;
    std::string error;
    JsonNumberTexts texts;
    EXPECT_TRUE(parse_json(text, &value, &error, &texts)) << text << ": " << error;
    return texts[""];
  }

  // The error message for `text`, which must fail to parse.
  static std::string error_of(std::string_view text) {
    Json value = "untouched";
    std::string error;
    EXPECT_FALSE(parse_json(text, &value, &error)) << text;
    EXPECT_EQ(value, "untouched") << "value changed on failure";
    return error;
  }

  static std::string dump(const Json& value) { return dump_json(value); }
  static std::string round_trip(std::string_view text) { return dump(parse(text)); }
};

TEST_F(JsonTest, ParsesScalars) {
  EXPECT_TRUE(parse("null").is_null());
  EXPECT_TRUE(parse("true").is_boolean());
  EXPECT_TRUE(parse("true").get<bool>());
  EXPECT_FALSE(parse(" false ").get<bool>());
  EXPECT_EQ(parse("42").get<double>(), 42.0);
  EXPECT_EQ(parse("-0.5e2").get<double>(), -50.0);
  EXPECT_EQ(parse("1E-2").get<double>(), 0.01);
  EXPECT_EQ(parse("\"hi\"").get<std::string>(), "hi");
  EXPECT_EQ(parse("1e-400").get<double>(), 0.0);  // underflow rounds to zero
}

TEST_F(JsonTest, ParsesObjectsInOrder) {
  Json value = parse(R"( { "id" : "a/1", "labels": ["x", "y"], "n": 3, "o": {} } )");
  ASSERT_TRUE(value.is_object());
  ASSERT_EQ(value.size(), 4u);
  EXPECT_EQ(value.begin().key(), "id");
  EXPECT_EQ(std::prev(value.end()).key(), "o");
  ASSERT_TRUE(value.contains("labels"));
  ASSERT_TRUE(value.at("labels").is_array());
  EXPECT_EQ(value.at("labels").at(1).get<std::string>(), "y");
  EXPECT_FALSE(value.contains("missing"));
  EXPECT_FALSE(parse("[1]").contains("id"));
  // With duplicate keys the last one wins.
  EXPECT_EQ(parse(R"({"k":1,"k":2})").at("k").get<double>(), 2.0);
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
  EXPECT_EQ(dump(3), "3");
  EXPECT_EQ(dump(-17), "-17");
  EXPECT_EQ(dump(0.1), "0.1");
  EXPECT_EQ(dump(0.30000000000000004), "0.30000000000000004");
  EXPECT_EQ(dump(1e21), "1e+21");
  EXPECT_EQ(dump(std::nan("")), "null");
  EXPECT_EQ(dump(std::numeric_limits<double>::infinity()), "null");
  for (double x : {0.1, 2.0 / 3.0, 1e-7, 123456.789, 5e-324, 1.7976931348623157e308}) {
    EXPECT_EQ(parse(dump(x)).get<double>(), x);
  }
}

TEST_F(JsonTest, DecodesEscapes) {
  EXPECT_EQ(parse(R"("\"\\\/\b\f\n\r\t")").get<std::string>(), "\"\\/\b\f\n\r\t");
  EXPECT_EQ(parse(R"("\u0041\u00e9\u20AC")").get<std::string>(), "A\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(parse(R"("a\u0000b")").get<std::string>(), std::string("a\0b", 3));
  // Non-ASCII bytes pass through unchanged, UTF-8 or not.
  EXPECT_EQ(parse("\"\xE5\x8C\x97\xE4\xBA\xAC\"").get<std::string>(), "\xE5\x8C\x97\xE4\xBA\xAC");
  EXPECT_EQ(parse("\"caf\xE9 \xFF\xC3\"").get<std::string>(), "caf\xE9 \xFF\xC3");
  EXPECT_EQ(parse("{\"k\xFE\":[\"\xE2\x82\"]}").at("k\xFE").at(0).get<std::string>(), "\xE2\x82");
  // ... even beside the code point that marks them while nlohmann reads them.
  const std::string kMax = "\xF4\x8F\xBF\xBF";  // U+10FFFF
  EXPECT_EQ(parse("\"" + kMax + "\xFF" + kMax + kMax + "\"").get<std::string>(),
            kMax + "\xFF" + kMax + kMax);
  EXPECT_EQ(parse(R"(["\udbff\udfff)"
                  "\xFF\"]")
                .at(0)
                .get<std::string>(),
            kMax + "\xFF");
  EXPECT_EQ(parse("\"\xF4\x8F\xBA\x80\"").get<std::string>(), "\xF4\x8F\xBA\x80");
}

TEST_F(JsonTest, DecodesSurrogatePairs) {
  EXPECT_EQ(parse(R"("\ud83d\ude00")").get<std::string>(), "\xF0\x9F\x98\x80");  // U+1F600
  EXPECT_EQ(parse(R"("\uD834\uDD1E")").get<std::string>(), "\xF0\x9D\x84\x9E");  // U+1D11E
  const std::string kReplacement = "\xEF\xBF\xBD";
  EXPECT_EQ(parse(R"("\ud83dx")").get<std::string>(), kReplacement + "x");       // lone high
  EXPECT_EQ(parse(R"("\ude00")").get<std::string>(), kReplacement);              // lone low
  EXPECT_EQ(parse(R"("\ud83d")").get<std::string>(), kReplacement);              // high at end
  EXPECT_EQ(parse(R"("\ud83d\u0041")").get<std::string>(), kReplacement + "A");  // high + non-low
  EXPECT_EQ(parse(R"("\ud83d\ud83d\ude00")").get<std::string>(), kReplacement + "\xF0\x9F\x98\x80");
  EXPECT_EQ(parse(R"("\\ud83d")").get<std::string>(), "\\ud83d");  // an escaped backslash
}

TEST_F(JsonTest, WritesEscapedStrings) {
  std::string out;
  append_json_string(std::string("a\"b\\c\nd\te\x01\x1f\0f", 13), &out);
  EXPECT_EQ(out, R"("a\"b\\c\nd\te\u0001\u001f\u0000f")");
  out.clear();
  EXPECT_TRUE(append_json_string("caf\xC3\xA9 / \xE2\x82\xAC", &out));
  EXPECT_EQ(out, "\"caf\xC3\xA9 / \xE2\x82\xAC\"");  // valid UTF-8 passes through
  Json object = Json::object();
  object["k\"ey"] = "line\nbreak";
  EXPECT_EQ(dump(object), R"({"k\"ey":"line\nbreak"})");
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
    EXPECT_EQ(dump(Json(c.input)), out) << c.input;
  }
  // Keys and values of a dumped document: what a label read from raw bytes
  // becomes in --json output.
  Json object = Json::object();
  object["id\xFE"] = "label \xC3";
  EXPECT_EQ(dump(object), "{\"id" + kReplacement + "\":\"label " + kReplacement + "\"}");
  EXPECT_TRUE(is_valid_utf8(dump(object)));
}

TEST_F(JsonTest, WritesIntegersWithoutExponent) {
  EXPECT_EQ(dump(100000.0), "100000");  // to_chars alone gives 1e+05, nlohmann 100000.0
  EXPECT_EQ(dump(1e15), "1000000000000000");
  EXPECT_EQ(dump(-2e6), "-2000000");
  EXPECT_EQ(dump(9007199254740992.0), "9007199254740992");  // 2^53
  EXPECT_EQ(dump(-0.0), "0");
  EXPECT_EQ(dump(2.5e5), "250000");
  EXPECT_EQ(dump(1e-5), "1e-05");  // not an integer: shortest form
  EXPECT_EQ(round_trip(R"({"documents":1e5})"), R"({"documents":100000})");
  // Integers are written as the double they make, as every number is.
  EXPECT_EQ(dump(uint64_t{12345}), "12345");
  EXPECT_EQ(dump(int64_t{-3}), "-3");
  EXPECT_EQ(dump(uint64_t{9007199254740993}), "9007199254740992");
  EXPECT_EQ(dump(uint64_t{12345678901234567890u}), dump(12345678901234567890.0));
}

TEST_F(JsonTest, KeepsNumbersAsWritten) {
  // Beyond 2^53 two ids would become the same double.
  EXPECT_EQ(number_text("9007199254740993"), "9007199254740993");
  EXPECT_EQ(number_text("9007199254740992"), "9007199254740992");
  EXPECT_EQ(number_text(" -1.50e3 "), "-1.50e3");
  EXPECT_EQ(parse("-1.50e3").get<double>(), -1500.0);
  EXPECT_EQ(number_text("12345678901234567890"), "12345678901234567890");  // beyond int64
  EXPECT_EQ(number_text("123456789012345678901234"), "123456789012345678901234");
  EXPECT_EQ(number_text("-0"), "-0");
  EXPECT_EQ(number_text("1e3"), "1e3");
  // The members of a root object, by JSON Pointer.
  Json value;
  std::string error;
  JsonNumberTexts texts;
  ASSERT_TRUE(parse_json(R"({"id":-0,"a/b":1.0,"n":[2.50],"id2":7})", &value, &error, &texts));
  EXPECT_EQ(texts.at("/id"), "-0");
  EXPECT_EQ(texts.at("/a~1b"), "1.0");
  EXPECT_EQ(texts.at("/id2"), "7");
  EXPECT_EQ(texts.count("/n"), 0u);
}

TEST_F(JsonTest, ReportsErrorsWithByteOffsets) {
  EXPECT_NE(error_of(R"({"a" 1})").find("at byte 5"), std::string::npos);
  EXPECT_NE(error_of("[1,2").find("at byte 4"), std::string::npos);
  EXPECT_NE(error_of("").find("at byte 0"), std::string::npos);
  EXPECT_NE(error_of("{\"a\":1} x").find("at byte 8"), std::string::npos);
  EXPECT_NE(error_of("[1,]").find("at byte 3"), std::string::npos);
  EXPECT_NE(error_of("{\"a\":1,}").find("at byte 7"), std::string::npos);
  EXPECT_NE(error_of("\"abc").find("at byte"), std::string::npos);
  EXPECT_NE(error_of("[\"a\nb\"]").find("at byte 3"), std::string::npos);
  EXPECT_NE(error_of(R"(["\x"])").find("at byte"), std::string::npos);
  EXPECT_NE(error_of(R"(["\u12G4"])").find("at byte"), std::string::npos);
  EXPECT_EQ(error_of("01"), "invalid number (leading zero) at byte 0");
  EXPECT_EQ(error_of(R"({"id": 00123})"), "invalid number (leading zero) at byte 7");
  EXPECT_EQ(error_of("[-012]"), "invalid number (leading zero) at byte 1");
  EXPECT_EQ(error_of("00"), "invalid number (leading zero) at byte 0");
  EXPECT_EQ(number_text("0"), "0");
  EXPECT_EQ(error_of("1e999"), "number out of range at byte 0");
  EXPECT_EQ(error_of("[1, -1e999]"), "number out of range at byte 4");
  EXPECT_NE(error_of("1.").find("at byte 2"), std::string::npos);
  EXPECT_NE(error_of("-").find("at byte 1"), std::string::npos);
  EXPECT_NE(error_of("tru").find("at byte"), std::string::npos);
  EXPECT_NE(error_of("NaN").find("at byte 0"), std::string::npos);
  EXPECT_NE(error_of("{'a':1}").find("at byte 1"), std::string::npos);
  EXPECT_NE(error_of("[1 2]").find("at byte 3"), std::string::npos);
  // Bytes that are not UTF-8 are read inside strings only.
  EXPECT_NE(error_of("[1,\xFF]").find("at byte"), std::string::npos);
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
  EXPECT_EQ(parse(text).get<std::string>(), big);
}

}  // namespace
}  // namespace autocat::internal
