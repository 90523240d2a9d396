#include "indexer/explain_json.h"

#include <utility>
#include <vector>

#include "indexer/commands.h"

namespace autocat::cli {

namespace {

internal::Json string_list(const std::vector<std::string>& items) {
  internal::Json list = internal::Json::array();
  for (const std::string& item : items) list.push_back(internal::Json(item));
  return list;
}

// combo: each member's part in one category's stacked decision.
internal::Json members_json(const std::vector<internal::ComboMemberPart>& parts) {
  internal::Json members = internal::Json::array();
  for (const internal::ComboMemberPart& part : parts) {
    internal::Json entry = internal::Json::object();
    entry["method"] = method_name(part.method);
    entry["score"] = part.score;
    entry["probability"] = part.probability;
    entry["logit"] = part.logit;
    entry["weight"] = part.weight;
    entry["contribution"] = part.contribution;
    members.push_back(std::move(entry));
  }
  return members;
}

}  // namespace

ExplainedText explain_text(const internal::Categorizer& categorizer, internal::Explainer& explainer,
                           const std::string& text, const internal::ExplainOptions& options) {
  ExplainedText result;
  result.terms = categorizer.document_terms(categorizer.analyzer().analyze(text));
  result.explanation = explainer.explain(result.terms, options);
  if (is_blank(text)) result.explanation.note = "empty text";
  return result;
}

internal::Json explanation_json(const std::string& id, const internal::Explanation& e,
                                const internal::DocumentTerms& terms, int k) {
  internal::Json line = internal::Json::object();
  line["id"] = id;
  line["method"] = method_name(e.method);
  if (e.method == Method::kKnn) line["k"] = k;
  line["known_tokens"] = terms.known_tokens;
  line["tokens"] = terms.total_tokens;
  line["categories"] = categories_json(e.assigned);
  line["decision"] = decision_name(e.decision);
  line["other"] = e.other;
  line["decision_reason"] = e.decision_reason;
  line["top"] = categories_json(e.top);
  if (e.method == Method::kKnn) {
    internal::Json neighbours = internal::Json::array();
    for (const internal::ExplainedNeighbour& neighbour : e.neighbours) {
      internal::Json entry = internal::Json::object();
      entry["id"] = neighbour.id;
      entry["similarity"] = neighbour.similarity;
      entry["labels"] = string_list(neighbour.labels);
      neighbours.push_back(std::move(entry));
    }
    line["neighbours"] = std::move(neighbours);
  }
  internal::Json terms_list = internal::Json::array();
  for (const internal::TermContribution& term : e.terms) {
    internal::Json entry = internal::Json::object();
    entry["term"] = term.term;
    entry["contribution"] = term.contribution;
    terms_list.push_back(std::move(entry));
  }
  line["terms"] = std::move(terms_list);
  if (e.method == Method::kCombo) {
    line["members"] = members_json(e.members);
    internal::Json top = internal::Json::array();
    for (const internal::ComboCategoryParts& parts : e.combo_top) {
      internal::Json entry = internal::Json::object();
      entry["category"] = parts.category;
      entry["members"] = members_json(parts.members);
      entry["base"] = parts.base;
      entry["sum"] = parts.sum;
      entry["stacked_probability"] = parts.stacked_probability;
      top.push_back(std::move(entry));
    }
    line["combo_top"] = std::move(top);
  }
  if (!e.category.empty()) {
    internal::Json basis = internal::Json::object();
    basis["category"] = e.category;
    if (!e.neighbour.empty()) basis["neighbour"] = e.neighbour;
    if (!e.versus.empty()) basis["versus"] = e.versus;
    basis["sum"] = e.terms_total;
    basis["count"] = e.num_contributing_terms;
    if (e.method != Method::kKnn && e.method != Method::kRocchio) {
      basis["base"] = e.base;
    }
    if (e.method == Method::kCombo) {
      basis["stacked_probability"] = e.stacked_probability;
    }
    line["terms_for"] = std::move(basis);
  }
  if (!e.note.empty()) line["note"] = e.note;
  return line;
}

}  // namespace autocat::cli
