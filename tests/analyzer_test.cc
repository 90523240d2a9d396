// Tests of the ICU analyzer: normalization, segmentation, invalid UTF-8,
// stopwords, stemming, limits and concurrent use.
#include "classify/text/analyzer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "autocat/error.h"
#include "tests/test_util.h"

namespace autocat::internal {
namespace {

class AnalyzerTest : public testing::Test {
 protected:
  static AnalyzerSettings settings(const std::string& stopwords, const std::string& stemmer) {
    AnalyzerOptions options;
    options.stopwords = stopwords;
    options.stemmer = stemmer;
    return resolve_analyzer_options(options);
  }

  // Terms of `text` with no stopwords and no stemming.
  static std::vector<std::string> terms(std::string_view text,
                                        const AnalyzerSettings& s = settings("none", "none")) {
    Analyzer analyzer(s);
    std::vector<std::string> out;
    for (const Token& token : analyzer.analyze(text)) out.push_back(token.term);
    return out;
  }

  static std::vector<uint32_t> positions(const std::vector<Token>& tokens) {
    std::vector<uint32_t> out;
    for (const Token& token : tokens) out.push_back(token.position);
    return out;
  }

  static bool contains(const std::vector<std::string>& terms, const std::string& term) {
    return std::find(terms.begin(), terms.end(), term) != terms.end();
  }

  static size_t code_points(const std::string& utf8) {
    return static_cast<size_t>(std::count_if(utf8.begin(), utf8.end(), [](char c) {
      return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }));
  }
};

using Terms = std::vector<std::string>;

TEST_F(AnalyzerTest, CaseFoldsAndAppliesNfkc) {
  EXPECT_EQ(terms("Ｆｕｌｌｗｉｄｔｈ"), Terms({"fullwidth"}));
  EXPECT_EQ(terms("\xEF\xAC\x81le"), Terms({"file"}));  // U+FB01 LATIN SMALL LIGATURE FI
  EXPECT_EQ(terms("Straße STRASSE"), Terms({"strasse", "strasse"}));
  EXPECT_EQ(terms("HELLO World"), Terms({"hello", "world"}));
}

TEST_F(AnalyzerTest, DropsPunctuationKeepsNumbers) {
  Analyzer analyzer(settings("none", "none"));
  std::vector<Token> tokens = analyzer.analyze("Hello, world! (1993) costs 3.14 -- ok?");
  std::vector<std::string> got;
  for (const Token& token : tokens) got.push_back(token.term);
  EXPECT_EQ(got, Terms({"hello", "world", "1993", "costs", "3.14", "ok"}));
  EXPECT_EQ(positions(tokens), std::vector<uint32_t>({1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(terms(" ,.;:!? -- ... ").empty());
  EXPECT_TRUE(terms("").empty());
}

TEST_F(AnalyzerTest, SegmentsChineseIntoWords) {
  const std::string text = "我们今天去北京大学";
  Terms got = terms(text);
  ASSERT_GE(got.size(), 3u);
  EXPECT_LT(got.size(), code_points(text)) << "one token per character: no dictionary words";
  EXPECT_TRUE(std::any_of(got.begin(), got.end(),
                          [](const std::string& t) { return code_points(t) >= 2; }));
  EXPECT_TRUE(contains(got, "北京"));
  std::string joined;
  for (const std::string& t : got) joined += t;
  EXPECT_EQ(joined, text);
}

TEST_F(AnalyzerTest, SegmentsJapanese) {
  Terms got = terms("東京大学で日本語を勉強しています。カタカナ");
  EXPECT_TRUE(contains(got, "日本語"));
  EXPECT_TRUE(contains(got, "東京"));
  EXPECT_TRUE(contains(got, "カタカナ"));
  EXPECT_FALSE(contains(got, "。"));
}

TEST_F(AnalyzerTest, HandlesCyrillicAndGreek) {
  EXPECT_EQ(terms("Привет, МИР! Ελληνικά ΑΘΗΝΑ"), Terms({"привет", "мир", "ελληνικά", "αθηνα"}));
}

TEST_F(AnalyzerTest, InvalidUtf8DoesNotStopAnalysis) {
  Terms got = terms(
      "alpha\xFF"
      "beta gamma\xE2\x82 delta \xC0\xAF epsilon \xED\xA0\x80 zeta");
  EXPECT_TRUE(contains(got, "alpha"));
  EXPECT_TRUE(contains(got, "beta"));
  EXPECT_TRUE(contains(got, "delta"));
  EXPECT_TRUE(contains(got, "epsilon"));
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back(), "zeta");
  // A truncated sequence at the very end.
  EXPECT_EQ(terms("end of text\xE2\x82"), Terms({"end", "of", "text"}));
}

TEST_F(AnalyzerTest, EmbeddedNulDoesNotCutText) {
  const std::string text("first\0second third", 18);
  EXPECT_EQ(terms(text), Terms({"first", "second", "third"}));
}

TEST_F(AnalyzerTest, StopwordsRemovedPositionsKeepGaps) {
  Analyzer analyzer(settings("english", "none"));
  std::vector<Token> tokens = analyzer.analyze("The cat sat on the mat");
  ASSERT_EQ(tokens.size(), 3u);
  EXPECT_EQ(tokens[0].term, "cat");
  EXPECT_EQ(tokens[1].term, "sat");
  EXPECT_EQ(tokens[2].term, "mat");
  EXPECT_EQ(positions(tokens), std::vector<uint32_t>({2, 3, 6}));
}

TEST_F(AnalyzerTest, StopwordsMatchAfterNormalization) {
  // Uppercase and the typographic apostrophe still match "don't".
  EXPECT_EQ(terms("DON'T don\xE2\x80\x99t THE Cats", settings("english", "none")), Terms({"cats"}));
}

TEST_F(AnalyzerTest, TextOfStopwordsOnlyKeepsThem) {
  // A short message of stopwords alone must not lose every term (and so
  // every chance of a category); stopwords still go when other words stay.
  const AnalyzerSettings english = settings("english", "none");
  EXPECT_EQ(terms("What you doing?how are you?", english),
            Terms({"what", "you", "doing", "how", "are", "you"}));
  EXPECT_EQ(terms("How are you, Paris?", english), Terms({"paris"}));
  EXPECT_TRUE(terms("?! ...", english).empty());
  Analyzer analyzer(english);
  EXPECT_EQ(positions(analyzer.analyze("the of")), std::vector<uint32_t>({1, 2}));
}

TEST_F(AnalyzerTest, NgramsJoinConsecutiveKeptWords) {
  AnalyzerOptions options;
  options.stopwords = "english";
  options.ngrams = 2;
  Analyzer bigrams(resolve_analyzer_options(options));
  std::vector<Token> tokens = bigrams.analyze("New York is the Big Apple");
  std::vector<std::string> got;
  for (const Token& token : tokens) got.push_back(token.term);
  // Words first, then bigrams of the words left after stopword removal.
  EXPECT_EQ(got, Terms({"new", "york", "big", "apple", "new york", "york big", "big apple"}));
  EXPECT_EQ(positions(tokens), std::vector<uint32_t>({1, 2, 5, 6, 1, 2, 5}));
  // Queries stay words.
  EXPECT_EQ(bigrams.normalize_query_text("New York"), "new york");
  EXPECT_EQ(bigrams.analyze("Paris").size(), 1u);

  options.ngrams = 3;
  Analyzer trigrams(resolve_analyzer_options(options));
  got.clear();
  for (const Token& token : trigrams.analyze("a b c d")) got.push_back(token.term);
  EXPECT_EQ(got, Terms({"b", "c", "d", "b c", "c d", "b c d"}));
}

TEST_F(AnalyzerTest, NgramsOutOfRangeThrow) {
  for (int ngrams : {0, 4, -1}) {
    AnalyzerOptions options;
    options.ngrams = ngrams;
    EXPECT_THROW(resolve_analyzer_options(options), InvalidArgumentError) << ngrams;
    AnalyzerSettings settings;
    settings.ngrams = ngrams;
    EXPECT_THROW(Analyzer analyzer(settings), InvalidArgumentError) << ngrams;
  }
}

TEST_F(AnalyzerTest, StemsEnglish) {
  EXPECT_EQ(terms("running runs connected", settings("none", "english")),
            Terms({"run", "run", "connect"}));
  EXPECT_EQ(terms("running", settings("none", "none")), Terms({"running"}));
  Analyzer analyzer(settings("english", "english"));
  EXPECT_EQ(analyzer.normalize_query_text("The Running DOGS of Paris"), "run dog pari");
  EXPECT_EQ(analyzer.normalize_query_text("the of"), "");
}

TEST_F(AnalyzerTest, UnknownStemmerThrows) {
  try {
    settings("none", "klingon");
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("unknown stemmer language 'klingon'"), std::string::npos) << what;
    EXPECT_NE(what.find("english"), std::string::npos) << what;
  }
  AnalyzerSettings bad;
  bad.stemmer = "klingon";
  EXPECT_THROW(Analyzer analyzer(bad), InvalidArgumentError);
  EXPECT_NO_THROW(settings("none", "german"));
}

TEST_F(AnalyzerTest, LoadsStopwordFile) {
  AnalyzerSettings s = settings(testing_util::test_data("analyzer_stopwords.txt"), "none");
  // Comments and blank lines ignored; NFKC_Casefold applied; sorted and unique.
  EXPECT_EQ(s.stopwords, Terms({"bar", "foo", "strasse", "the"}));
  EXPECT_EQ(terms("The foo Bar baz STRASSE", s), Terms({"baz"}));
}

TEST_F(AnalyzerTest, MissingStopwordFileThrowsNotFound) {
  const std::string path = testing_util::test_data("analyzer_no_such_file.txt");
  try {
    settings(path, "none");
    FAIL() << "expected NotFoundError";
  } catch (const NotFoundError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST_F(AnalyzerTest, EnglishStopwordsAreSortedUniqueAndNormalized) {
  AnalyzerSettings s = settings("english", "none");
  EXPECT_GE(s.stopwords.size(), 150u);
  EXPECT_LE(s.stopwords.size(), 300u);
  EXPECT_TRUE(std::is_sorted(s.stopwords.begin(), s.stopwords.end()));
  EXPECT_EQ(std::adjacent_find(s.stopwords.begin(), s.stopwords.end()), s.stopwords.end());
  for (const std::string& word : english_stopwords()) {
    EXPECT_EQ(terms(word), Terms({word})) << "not in analyzer form: " << word;
  }
  EXPECT_TRUE(settings("none", "none").stopwords.empty());
}

TEST_F(AnalyzerTest, DropsTermsLongerThanMaxTermBytes) {
  AnalyzerSettings s = settings("none", "none");
  s.max_term_bytes = 5;
  Analyzer analyzer(s);
  std::vector<Token> tokens = analyzer.analyze("short lengthy abc \xC3\xA9\xC3\xA9\xC3\xA9 ab");
  ASSERT_EQ(tokens.size(), 3u);
  EXPECT_EQ(tokens[0].term, "short");
  EXPECT_EQ(tokens[1].term, "abc");
  EXPECT_EQ(tokens[2].term, "ab");  // "ééé" is 6 bytes
  EXPECT_EQ(positions(tokens), std::vector<uint32_t>({1, 3, 5}));
  s.max_term_bytes = 0;
  EXPECT_THROW(Analyzer bad(s), InvalidArgumentError);
}

TEST_F(AnalyzerTest, TermsAreNeverEmptyOrCapitalized) {
  const std::string text =
      "From: A.B@Example.COM\nSubject: RE: ZIP-Codes & ÆØÅ, İstanbul, ǅemal; "
      "ΣΊΣΥΦΟΣ ＡＢＣ X-Windows 42nd ⅫⅣ ＄100 Ⓐ 𝐀𝐁 \xF0\x9F\x98\x80\n";
  for (const char* stemmer : {"none", "english", "german"}) {
    for (const std::string& term : terms(text, settings("english", stemmer))) {
      ASSERT_FALSE(term.empty());
      EXPECT_FALSE(term[0] >= 'A' && term[0] <= 'Z') << term << " (" << stemmer << ")";
    }
  }
}

TEST_F(AnalyzerTest, ConcurrentAnalyzeGivesIdenticalResults) {
  Analyzer analyzer(settings("english", "english"));
  const std::vector<std::string> texts = {
      "The quick brown fox jumps over the lazy dog near the riverbank.",
      "我们今天去北京大学, then to 東京大学で日本語を勉強しています",
      "Invalid \xFF bytes, numbers 1993 and 3.14, Straße and ＦＵＬＬＷＩＤＴＨ",
      "Привет мир! Ελληνικά κείμενα και ΑΘΗΝΑ; running runners ran",
  };
  std::vector<std::vector<Token>> expected;
  for (const std::string& text : texts) expected.push_back(analyzer.analyze(text));

  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 200; ++round) {
        size_t i = static_cast<size_t>(round + t) % texts.size();
        std::vector<Token> got = analyzer.analyze(texts[i]);
        bool same = got.size() == expected[i].size();
        for (size_t j = 0; same && j < got.size(); ++j) {
          same = got[j].term == expected[i][j].term && got[j].position == expected[i][j].position;
        }
        if (!same) ++mismatches[static_cast<size_t>(t)];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>({0, 0, 0, 0}));
}

TEST_F(AnalyzerTest, SeveralAnalyzersInOneThreadKeepTheirSettings) {
  Analyzer plain(settings("none", "none"));
  Analyzer stemmed(settings("english", "english"));
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(plain.normalize_query_text("The running dogs"), "the running dogs");
    EXPECT_EQ(stemmed.normalize_query_text("The running dogs"), "run dog");
  }
  // More analyzers than the per-thread cache holds.
  std::vector<std::unique_ptr<Analyzer>> many;
  for (int i = 0; i < 6; ++i) {
    many.push_back(std::make_unique<Analyzer>(settings("none", i % 2 ? "english" : "none")));
  }
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 6; ++i) {
      EXPECT_EQ(many[static_cast<size_t>(i)]->normalize_query_text("running"),
                i % 2 ? "run" : "running");
    }
  }
}

TEST_F(AnalyzerTest, SanitizeUtf8ReplacesInvalidSequences) {
  const std::string kReplacement = "\xEF\xBF\xBD";
  EXPECT_EQ(sanitize_utf8("plain ascii"), "plain ascii");
  EXPECT_EQ(sanitize_utf8("caf\xC3\xA9 \xF0\x9F\x98\x80"), "caf\xC3\xA9 \xF0\x9F\x98\x80");
  EXPECT_EQ(sanitize_utf8("a\xFF"
                          "b"),
            "a" + kReplacement + "b");
  // Overlong encodings of '/'.
  EXPECT_EQ(sanitize_utf8("\xC0\xAF"), kReplacement + kReplacement);
  EXPECT_EQ(sanitize_utf8("\xE0\x80\xAF"), kReplacement + kReplacement + kReplacement);
  // UTF-8-encoded surrogate U+D800, and a code point above U+10FFFF.
  EXPECT_EQ(sanitize_utf8("\xED\xA0\x80"), kReplacement + kReplacement + kReplacement);
  EXPECT_EQ(sanitize_utf8("\xF4\x90\x80\x80"),
            kReplacement + kReplacement + kReplacement + kReplacement);
  // A truncated sequence is one replacement, and the next character survives.
  EXPECT_EQ(sanitize_utf8("\xE2\x82"
                          "x"),
            kReplacement + "x");
  EXPECT_EQ(sanitize_utf8("x\xF0\x9F\x98"), "x" + kReplacement);
  EXPECT_EQ(sanitize_utf8(std::string("a\0b", 3)), std::string("a\0b", 3));
}

TEST_F(AnalyzerTest, Utf8PrefixEndsOnCharacterBoundary) {
  const std::string text = "h\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80!";  // h é € 😀 !
  EXPECT_EQ(utf8_prefix(text, 0), "");
  EXPECT_EQ(utf8_prefix(text, 1), "h");
  EXPECT_EQ(utf8_prefix(text, 2), "h");
  EXPECT_EQ(utf8_prefix(text, 3), "h\xC3\xA9");
  EXPECT_EQ(utf8_prefix(text, 5), "h\xC3\xA9");
  EXPECT_EQ(utf8_prefix(text, 6), "h\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(utf8_prefix(text, 9), "h\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(utf8_prefix(text, 10), "h\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  EXPECT_EQ(utf8_prefix(text, 100), text);
  EXPECT_EQ(utf8_prefix("abc", 2), "ab");
}

}  // namespace
}  // namespace autocat::internal
