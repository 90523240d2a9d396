// Rule categories: manual categorization written as Xapian queries, applied
// together with the learned categories.
//
// A rules file has one rule per line, three fields separated by tabs:
//
//   CATEGORY <TAB> MODE <TAB> QUERY
//
// MODE is `assign` (a matching document gets CATEGORY, score 1), `veto` (a
// matching document never gets CATEGORY) or `evidence:+W` / `evidence:-W`
// (W, in [0, 1], is added to CATEGORY's learned score before the decision;
// the score stays in [0, 1]). QUERY is a Xapian QueryParser expression
// (AND, OR, NOT, phrases, +/-) matched against the document as autocat
// indexes it for search: unstemmed words and english Z stems (so `profit`
// also matches "profits", `"net profit"` is a phrase); words without an
// operator must all match (default operator AND); `title:WORD` matches a
// word of the title only. Blank lines and lines starting with # are ignored.
// A query is at most kMaxRuleQueryBytes long and nests parentheses at most
// kMaxRuleQueryDepth deep.
//
// Order of application: evidence changes scores, a veto sets its category's
// score to 0, the learned decision runs, then vetoed categories are removed
// and assigned ones added (a veto beats an assign of the same category).
//
// Thread safety: a loaded RuleSet is immutable; its const methods may be
// called from many threads at once.
#pragma once

#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "autocat/options.h"
#include "classify/decide/categorizer.h"

namespace autocat::internal {

enum class RuleMode { kAssign, kVeto, kEvidence };

// Bounds of one rule's query: Xapian's parser and matcher take time and stack
// that grow faster than the query.
constexpr size_t kMaxRuleQueryBytes = 256 * 1024;
constexpr int kMaxRuleQueryDepth = 100;

struct Rule {
  std::string category;
  RuleMode mode = RuleMode::kAssign;
  double weight = 0;   // kEvidence: added to the score (may be negative)
  std::string query;   // as written
  std::string source;  // "FILE:LINE", for messages and traces
  // The query parsed at load, Xapian::Query::serialise()d: each use
  // unserialises its own copy, as a Xapian::Query must not be shared between
  // threads, instead of parsing the text again.
  std::string parsed;
};

// "assign", "veto", "evidence:+0.3".
std::string rule_mode_text(const Rule& rule);

class RuleSet {
 public:
  RuleSet() = default;
  // Reads `path`. A rule naming a category not in `categories` (unless
  // `categories` is empty: no check), a bad mode or a query Xapian cannot
  // parse throws InvalidArgumentError naming FILE:LINE; a missing file
  // NotFoundError.
  static RuleSet load(const std::string& path, const std::vector<std::string>& categories);
  // The same from a stream; `name` stands for the file in messages.
  static RuleSet parse(std::istream& in, const std::string& name,
                       const std::vector<std::string>& categories);

  const std::vector<Rule>& rules() const { return rules_; }
  bool empty() const { return rules_.empty(); }

  // The indexes of the rules matching a document with this text and title.
  std::vector<size_t> matching(std::string_view text, std::string_view title) const;

  // Scores, decision and trace with the matching rules applied (see the
  // order above); trace.rules lists the rules that fired.
  DecisionTrace decide(const Categorizer& categorizer, std::vector<double> scores,
                       std::string_view text, std::string_view title,
                       const ClassifyOptions& options) const;
  // The same with the matching rules already known (from matching()).
  DecisionTrace decide(const Categorizer& categorizer, std::vector<double> scores,
                       const std::vector<size_t>& matched, const ClassifyOptions& options) const;

 private:
  std::vector<Rule> rules_;
};

}  // namespace autocat::internal
