#include "plugin/query_text.h"

#include <algorithm>
#include <set>

namespace autocat::internal {
namespace {

bool is_query_operator(const std::string& word) {
  static const std::set<std::string> kOperators = {"AND", "OR", "NOT", "XOR", "NEAR", "ADJ"};
  return kOperators.count(word) != 0 || word.rfind("NEAR/", 0) == 0 || word.rfind("ADJ/", 0) == 0;
}

}  // namespace

std::string normalize_query(const std::string& raw, const internal::Analyzer& analyzer) {
  static const std::string kLeading = "\"(+-";
  static const std::string kTrailing = "\")";
  std::string result;
  bool in_phrase = false;
  size_t pos = 0;
  while (pos < raw.size()) {
    const size_t start = raw.find_first_not_of(" \t\n\r\f\v", pos);
    if (start == std::string::npos) break;
    size_t end = raw.find_first_of(" \t\n\r\f\v", start);
    if (end == std::string::npos) end = raw.size();
    pos = end;
    const std::string word = raw.substr(start, end - start);
    std::string piece;
    if (is_query_operator(word) || word.find(':') != std::string::npos) {
      piece = word;
    } else {
      size_t lead = 0;
      while (lead < word.size() && kLeading.find(word[lead]) != std::string::npos) ++lead;
      size_t trail = word.size();
      while (trail > lead && kTrailing.find(word[trail - 1]) != std::string::npos) --trail;
      const std::string leading = word.substr(0, lead);
      const std::string trailing = word.substr(trail);
      std::string core = analyzer.normalize_query_text(word.substr(lead, trail - lead));
      if (std::count(leading.begin(), leading.end(), '"') % 2 != 0) in_phrase = !in_phrase;
      if (!in_phrase && core.find(' ') != std::string::npos) core = '"' + core + '"';
      if (std::count(trailing.begin(), trailing.end(), '"') % 2 != 0) in_phrase = !in_phrase;
      piece = leading + core + trailing;
    }
    if (piece.empty()) continue;
    if (!result.empty()) result += ' ';
    result += piece;
  }
  return result;
}

}  // namespace autocat::internal
