// Analyzer: turns text into terms. ICU word segmentation (dictionary-based
// for Chinese/Japanese/Thai), NFKC normalization with case folding, numbers
// kept, punctuation and spaces dropped, optional stopwords and Snowball
// stemming. Invalid UTF-8 is replaced by U+FFFD, never fatal.
//
// Thread safety: an Analyzer is immutable after construction; analyze() may
// be called from many threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "autocat/options.h"

namespace autocat::internal {

// The analyzer's settings as stored in a model file: the resolved stopword
// list (not a path), so a model is self-contained.
struct AnalyzerSettings {
  std::vector<std::string> stopwords;  // normalized and case-folded, sorted
  std::string stemmer = "none";        // Xapian::Stem language or "none"
  int max_term_bytes = 64;
  int ngrams = 1;  // 1 = words; 2 adds word bigrams; 3 adds trigrams too

  template <class Archive>
  void serialize(Archive& ar, const unsigned int version) {
    ar& stopwords& stemmer& max_term_bytes;
    if (version >= 1) ar& ngrams;
  }
};

// Resolves user options: loads the stopword list ("english", "none" or a
// file) and checks the stemmer language and n-gram length.
// Throws InvalidArgumentError (unknown stemmer, ngrams not 1-3) or
// NotFoundError (stopword file).
AnalyzerSettings resolve_analyzer_options(const AnalyzerOptions& options);

// The English stopword list shipped with autocat.
const std::vector<std::string>& english_stopwords();

// Largest AnalyzerSettings::ngrams.
constexpr int kMaxNgrams = 3;
// Joins the words of an n-gram term ("new york"). Words never contain a
// space, so n-gram terms cannot collide with single words.
constexpr char kNgramSeparator = ' ';

struct Token {
  std::string term;   // normalized, case-folded, maybe stemmed; UTF-8
  uint32_t position;  // word position, counting dropped stopwords too (1-based);
                      // an n-gram has the position of its first word
};

class Analyzer {
 public:
  explicit Analyzer(const AnalyzerSettings& settings);
  ~Analyzer();
  Analyzer(const Analyzer&) = delete;
  Analyzer& operator=(const Analyzer&) = delete;

  // Appends the tokens of `text` (any bytes; invalid UTF-8 is replaced):
  // its words, then its n-grams of 2..settings().ngrams consecutive kept
  // words. A text whose every word is a stopword keeps its stopwords, so
  // a short message such as "how are you?" still has terms.
  void analyze(std::string_view text, std::vector<Token>* tokens) const;
  std::vector<Token> analyze(std::string_view text) const;

  // Normalizes and segments a query string the same way, joining the words
  // with single spaces (stopwords dropped, stems applied, no n-grams).
  std::string normalize_query_text(std::string_view text) const;

  const AnalyzerSettings& settings() const { return settings_; }

 private:
  struct Rep;
  AnalyzerSettings settings_;
  std::unique_ptr<Rep> rep_;
};

// Returns `text` with every invalid UTF-8 sequence replaced by U+FFFD.
std::string sanitize_utf8(std::string_view text);

// Returns the longest prefix of `text` of at most `max_bytes` bytes that ends
// on a UTF-8 character boundary.
std::string utf8_prefix(std::string_view text, size_t max_bytes);

}  // namespace autocat::internal
