#include "classify/decide/rules.h"

#include <xapian.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "autocat/error.h"
#include "classify/text/analyzer.h"

namespace autocat::internal {

namespace {

// Title words carry this prefix in the one-document match database, so a
// rule's `title:` field matches the title only (as Omega's S prefix).
const char kTitlePrefix[] = "S";
const char kRuleStemmer[] = "english";

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (;;) {
    const size_t tab = line.find('\t', start);
    fields.push_back(
        line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return fields;
    start = tab + 1;
  }
}

std::string trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \r");
  if (begin == std::string::npos) return std::string();
  const size_t end = text.find_last_not_of(" \r");
  return text.substr(begin, end - begin + 1);
}

// A parser set up as the rules file documents; used while loading only (a
// Xapian::Query or QueryParser must not be shared between threads).
Xapian::Query parse_query(const std::string& query,
                          unsigned flags = Xapian::QueryParser::FLAG_DEFAULT) {
  Xapian::QueryParser parser;
  parser.set_stemmer(Xapian::Stem(kRuleStemmer));
  parser.set_stemming_strategy(Xapian::QueryParser::STEM_SOME);
  parser.set_default_op(Xapian::Query::OP_AND);
  parser.add_prefix("title", kTitlePrefix);
  return parser.parse_query(query, flags | Xapian::QueryParser::FLAG_CJK_NGRAM);
}

// Xapian's QueryParser does not reject a syntax error: it parses the text
// again with every operator off. A query with operators that parses the same
// with and without them fell back so; a rule must not silently mean less.
bool parsed_as_written(const std::string& query, const Xapian::Query& parsed) {
  bool has_syntax = query.find_first_of("()\"") != std::string::npos;
  std::istringstream words(query);
  for (std::string word; words >> word;) {
    if (word == "AND" || word == "OR" || word == "NOT" || word == "XOR" || word == "NEAR" ||
        word == "ADJ") {
      has_syntax = true;
    }
  }
  return !has_syntax || parsed.get_description() != parse_query(query, 0).get_description();
}

// The start of a query for a message: a rule may be hundreds of kilobytes.
std::string excerpt(const std::string& query) {
  constexpr size_t kShownBytes = 80;
  if (query.size() <= kShownBytes) return "'" + query + "'";
  return "'" + utf8_prefix(query, kShownBytes) + "...' (" + std::to_string(query.size()) +
         " bytes)";
}

// How deep the query's parentheses nest.
int nesting_depth(const std::string& query) {
  int depth = 0;
  int deepest = 0;
  for (char c : query) {
    if (c == '(') deepest = std::max(deepest, ++depth);
    if (c == ')' && depth > 0) --depth;
  }
  return deepest;
}

// `query` without what cannot change whether the one document `db` holds
// matches: an OR (or SYNONYM) becomes one of its terms the document has, else
// loses the parts that match nothing; an AND (or FILTER) with such a part
// matches nothing; AND_NOT, AND_MAYBE and XOR lose their parts after the first
// that match nothing. A rule of thousands of OR'd or NOT'd terms so costs the
// matcher a few terms instead of time quadratic in them. Operators with
// parameters (phrases, NEAR, ...) are kept as they are.
Xapian::Query prune(const Xapian::Query& query, const Xapian::Database& db) {
  using Q = Xapian::Query;
  const Q::op type = query.get_type();
  const bool or_like = type == Q::OP_OR || type == Q::OP_SYNONYM;
  const bool and_like = type == Q::OP_AND || type == Q::OP_FILTER;
  const bool first_decides = type == Q::OP_AND_NOT || type == Q::OP_AND_MAYBE;
  if (!or_like && !and_like && !first_decides && type != Q::OP_XOR) return query;
  std::vector<Q> kept;
  const size_t count = query.get_num_subqueries();
  for (size_t i = 0; i < count; ++i) {
    const Q sub = query.get_subquery(i);
    const bool leaf = sub.get_type() == Q::LEAF_TERM;
    const bool present = leaf && db.term_exists(*sub.get_terms_begin());
    if (or_like && present) return sub;
    const Q pruned = leaf ? (present ? sub : Q::MatchNothing) : prune(sub, db);
    if (pruned.empty()) {
      if (and_like || (first_decides && i == 0)) return Q::MatchNothing;
      continue;
    }
    kept.push_back(pruned);
  }
  if (kept.empty()) return Q::MatchNothing;
  if (kept.size() == 1) return kept[0];
  return Q(type, kept.begin(), kept.end());
}

RuleMode parse_mode(const std::string& text, double& weight, const std::string& where) {
  if (text == "assign") return RuleMode::kAssign;
  if (text == "veto") return RuleMode::kVeto;
  const std::string evidence = "evidence:";
  if (text.compare(0, evidence.size(), evidence) == 0) {
    const std::string number = text.substr(evidence.size());
    char* end = nullptr;
    errno = 0;
    weight = std::strtod(number.c_str(), &end);
    if (!number.empty() && (number[0] == '+' || number[0] == '-') && errno == 0 &&
        end == number.c_str() + number.size() && weight >= -1 && weight <= 1) {
      return RuleMode::kEvidence;
    }
    throw InvalidArgumentError(where + ": evidence weight '" + number +
                               "' must be a signed number in [-1, 1], e.g. evidence:+0.3");
  }
  throw InvalidArgumentError(where + ": unknown mode '" + text +
                             "'; use assign, veto or evidence:+W (e.g. evidence:+0.3)");
}

void set_candidate(DecisionTrace& trace, const std::string& name, double score, bool assigned) {
  for (DecisionTrace::Candidate& candidate : trace.candidates) {
    if (candidate.name == name) {
      candidate.assigned = assigned;
      if (assigned) candidate.score = std::max(candidate.score, score);
      return;
    }
  }
  if (assigned) trace.candidates.push_back({name, score, kNeverAssign, true});
}

}  // namespace

std::string rule_mode_text(const Rule& rule) {
  switch (rule.mode) {
    case RuleMode::kAssign:
      return "assign";
    case RuleMode::kVeto:
      return "veto";
    case RuleMode::kEvidence: {
      std::ostringstream text;
      text << "evidence:" << (rule.weight < 0 ? "" : "+") << rule.weight;
      return text.str();
    }
  }
  return "?";
}

RuleSet RuleSet::load(const std::string& path, const std::vector<std::string>& categories) {
  std::ifstream in(path);
  if (!in) throw NotFoundError("cannot open rules file " + path);
  return parse(in, path, categories);
}

RuleSet RuleSet::parse(std::istream& in, const std::string& name,
                       const std::vector<std::string>& categories) {
  RuleSet set;
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    const std::string where = name + ":" + std::to_string(number);
    const std::string content = trim(line);
    if (content.empty() || content[0] == '#') continue;
    const std::vector<std::string> fields = split_tabs(line);
    if (fields.size() != 3) {
      throw InvalidArgumentError(where + ": expected CATEGORY<TAB>MODE<TAB>QUERY, found " +
                                 std::to_string(fields.size()) + " tab-separated field(s)");
    }
    Rule rule;
    rule.source = where;
    rule.category = trim(fields[0]);
    rule.mode = parse_mode(trim(fields[1]), rule.weight, where);
    rule.query = trim(fields[2]);
    if (!categories.empty() &&
        std::find(categories.begin(), categories.end(), rule.category) == categories.end()) {
      throw InvalidArgumentError(where + ": unknown category '" + rule.category +
                                 "'; the model's categories are those `autocat train` printed "
                                 "(check the spelling or train with it)");
    }
    if (rule.query.empty()) throw InvalidArgumentError(where + ": empty query");
    if (rule.query.size() > kMaxRuleQueryBytes) {
      throw InvalidArgumentError(where + ": query " + excerpt(rule.query) + " is longer than " +
                                 std::to_string(kMaxRuleQueryBytes) +
                                 " bytes; split it into several rules for the same category");
    }
    if (nesting_depth(rule.query) > kMaxRuleQueryDepth) {
      throw InvalidArgumentError(where + ": query " + excerpt(rule.query) +
                                 " nests parentheses more than " +
                                 std::to_string(kMaxRuleQueryDepth) + " deep; flatten it");
    }
    try {
      const Xapian::Query parsed = parse_query(rule.query);
      if (!parsed_as_written(rule.query, parsed)) {
        throw InvalidArgumentError(where + ": bad query " + excerpt(rule.query) +
                                   ": Xapian cannot parse it as written (unbalanced parentheses "
                                   "or quotes, or an operator without an operand?)");
      }
      if (parsed.empty()) {
        throw InvalidArgumentError(where + ": query " + excerpt(rule.query) + " matches nothing");
      }
      rule.parsed = parsed.serialise();
    } catch (const Xapian::QueryParserError& e) {
      throw InvalidArgumentError(where + ": bad query " + excerpt(rule.query) + ": " +
                                 utf8_prefix(e.get_msg(), 200));
    }
    set.rules_.push_back(std::move(rule));
  }
  if (in.bad()) throw IOError("cannot read rules file " + name);
  return set;
}

std::vector<size_t> RuleSet::matching(std::string_view text, std::string_view title) const {
  std::vector<size_t> matched;
  if (rules_.empty()) return matched;
  // One document in an in-memory database: Xapian itself decides what each
  // query matches, exactly as a search would.
  Xapian::Document doc;
  Xapian::TermGenerator generator;
  generator.set_stemmer(Xapian::Stem(kRuleStemmer));
  generator.set_flags(Xapian::TermGenerator::FLAG_CJK_NGRAM);
  generator.set_document(doc);
  generator.index_text(std::string(text));
  if (!title.empty()) {
    generator.increase_termpos();
    generator.index_text(std::string(title), 1, kTitlePrefix);
  }
  Xapian::WritableDatabase db(std::string(), Xapian::DB_BACKEND_INMEMORY);
  db.add_document(doc);
  Xapian::Enquire enquire(db);
  enquire.set_weighting_scheme(Xapian::BoolWeight());
  for (size_t r = 0; r < rules_.size(); ++r) {
    enquire.set_query(prune(Xapian::Query::unserialise(rules_[r].parsed), db));
    if (enquire.get_mset(0, 1).size() != 0) matched.push_back(r);
  }
  return matched;
}

DecisionTrace RuleSet::decide(const Categorizer& categorizer, std::vector<double> scores,
                              std::string_view text, std::string_view title,
                              const ClassifyOptions& options) const {
  return decide(categorizer, std::move(scores), matching(text, title), options);
}

DecisionTrace RuleSet::decide(const Categorizer& categorizer, std::vector<double> scores,
                              const std::vector<size_t>& matched,
                              const ClassifyOptions& options) const {
  std::vector<std::string> vetoed;
  std::vector<std::string> assigned;
  for (size_t r : matched) {
    const Rule& rule = rules_[r];
    const int64_t c = categorizer.category_index(rule.category);
    if (rule.mode == RuleMode::kVeto) vetoed.push_back(rule.category);
    if (rule.mode == RuleMode::kAssign) assigned.push_back(rule.category);
    if (c < 0 || static_cast<size_t>(c) >= scores.size()) continue;
    if (rule.mode == RuleMode::kEvidence) {
      scores[c] = std::clamp(scores[c] + rule.weight, 0.0, 1.0);
    }
  }
  for (const std::string& name : vetoed) {
    const int64_t c = categorizer.category_index(name);
    if (c >= 0 && static_cast<size_t>(c) < scores.size()) scores[c] = 0;
  }
  DecisionTrace trace = categorizer.explain_decision(scores, options);
  if (matched.empty()) return trace;

  auto is_vetoed = [&](const std::string& name) {
    return std::find(vetoed.begin(), vetoed.end(), name) != vetoed.end();
  };
  std::vector<Category> result;
  for (const Category& category : trace.assigned) {
    if (!is_vetoed(category.name)) result.push_back(category);
  }
  for (const std::string& name : vetoed) set_candidate(trace, name, 0, false);
  for (const std::string& name : assigned) {
    if (is_vetoed(name)) continue;
    auto it = std::find_if(result.begin(), result.end(),
                           [&](const Category& category) { return category.name == name; });
    if (it != result.end()) {
      it->score = 1.0;
    } else {
      result.push_back({name, 1.0});
    }
    set_candidate(trace, name, 1.0, true);
  }
  std::stable_sort(result.begin(), result.end(),
                   [](const Category& a, const Category& b) { return a.score > b.score; });
  trace.assigned = std::move(result);

  std::string summary;
  for (size_t r : matched) {
    const Rule& rule = rules_[r];
    trace.rules.push_back({rule.source, rule.category, rule_mode_text(rule), rule.query});
    summary += (summary.empty() ? "" : ", ") + rule_mode_text(rule) + " " + rule.category + " (" +
               rule.source + ")";
  }
  trace.reason += "; rules: " + summary;
  return trace;
}

}  // namespace autocat::internal
