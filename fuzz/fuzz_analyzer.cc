// Fuzzes the analyzer (ICU normalization and segmentation, case folding,
// stemming) with arbitrary bytes. The first byte picks the settings. Checks
// what analyzer.h promises: valid UTF-8 out, no empty or over-long term,
// positions that never go back.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "classify/text/analyzer.h"

namespace {

using namespace autocat::internal;

// Building an analyzer is costly (ICU objects), so a few are kept.
const Analyzer& analyzer_for(uint8_t selector) {
  static const char* const kStemmers[] = {"none", "english", "german", "russian"};
  static std::unique_ptr<Analyzer> analyzers[8];
  const size_t slot = selector % 8;
  if (!analyzers[slot]) {
    AnalyzerSettings settings;
    settings.stemmer = kStemmers[slot % 4];
    if (slot >= 4) settings.stopwords = english_stopwords();
    settings.max_term_bytes = slot % 2 == 0 ? 64 : 7;
    analyzers[slot] = std::make_unique<Analyzer>(settings);
  }
  return *analyzers[slot];
}

void check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Analyzer& analyzer = analyzer_for(data[0]);
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const bool stemmed = analyzer.settings().stemmer != "none";
  const size_t max_bytes = static_cast<size_t>(analyzer.settings().max_term_bytes);

  const std::vector<Token> tokens = analyzer.analyze(text);
  uint32_t last_position = 0;
  for (const Token& token : tokens) {
    check(!token.term.empty());
    check(sanitize_utf8(token.term) == token.term);
    check(token.position >= last_position);
    last_position = token.position;
    check(stemmed || token.term.size() <= max_bytes);  // a stem may differ in length
  }
  const std::string query = analyzer.normalize_query_text(text);
  check(sanitize_utf8(query) == query);

  const std::string clean = sanitize_utf8(text);
  check(sanitize_utf8(clean) == clean);
  const std::string prefix = utf8_prefix(clean, size % 17);
  check(prefix.size() <= size % 17 && clean.compare(0, prefix.size(), prefix) == 0);
  check(sanitize_utf8(prefix) == prefix);
  return 0;
}
