// autocat explain: why each document gets its categories.
#include <ostream>

#include "classify/decide/categorizer.h"
#include "classify/decide/explain.h"
#include "classify/decide/rules.h"
#include "classify/io/json_text.h"
#include "indexer/commands.h"
#include "indexer/explain_json.h"

namespace autocat::cli {

namespace {

const char kUsage[] =
    "usage: autocat explain --model DIR [OPTIONS] [INPUT... | -]\n"
    "\n"
    "Explains the categories the model DIR assigns to each document of INPUT, as\n"
    "autocat classify decides them (the model's one-of or any-of, unless told\n"
    "otherwise): the best category scores, the decision (with any-of or \"other\",\n"
    "why), then the evidence behind the first assigned category, one block per\n"
    "document.\n"
    "  knn       the nearest training documents (id, cosine similarity, labels), and\n"
    "            the terms shared with the nearest one of that category:\n"
    "            query weight x document weight, summing to their cosine\n"
    "  rocchio   the terms' shares of the cosine to that category's centroid:\n"
    "            query weight x centroid weight, summing to the score\n"
    "  nb, bnb, cnb  the terms' shares of the log-score gap between that category\n"
    "            and the best other one: count x (w[term][it] - w[term][other]);\n"
    "            with the prior difference they sum to the gap\n"
    "  svm, logreg  the terms' shares of that category's decision value\n"
    "  combo     each member method's raw and calibrated score of that category and\n"
    "            its stacking weight: calibrated log-odds x weight; with the bias\n"
    "            they sum to the log-odds whose sigmoid is the score (one-of then\n"
    "            divides by the sum over categories); then every member's\n"
    "            calibrated probability and weight for each of the top categories\n"
    "Without INPUT, or with -, reads JSON Lines ({\"id\": ..., \"text\": ...}) from\n"
    "standard input. A plain text file is one document.\n";

const char kExample[] =
    "\n"
    "example:\n"
    "  echo '{\"id\": \"1\", \"text\": \"The striker scored\"}' | autocat explain --model m "
    "--method rocchio\n";

void define_options(OptionSet& options) {
  add_model_option(options);
  add_method_option(options, "(default: the model's)");
  add_k_option(options);
  options.value("--top", "N", "categories, neighbours and terms shown (default 5)");
  options.value("--rules", "FILE",
                "apply rule categories too (see autocat classify --help): the categories and "
                "reason are then those with the rules, and the rules that fired are listed "
                "(--json: \"rules\")");
  add_decision_options(options);
  add_reader_options(options);
  options.flag("--json",
               "one JSON object per document:\n"
               "{\"id\", \"method\", \"categories\": [{\"name\", \"score\"}] (assigned),\n"
               " \"decision\", \"other\", \"decision_reason\",\n"
               " \"top\": [{\"name\", \"score\"}] (best scores),\n"
               " \"neighbours\": [{\"id\", \"similarity\", \"labels\"}] (knn),\n"
               " \"terms\": [{\"term\", \"contribution\"}],\n"
               " \"members\": [{\"method\", \"score\", \"probability\", \"logit\",\n"
               " \"weight\", \"contribution\"}] (combo: the first assigned category),\n"
               " \"combo_top\": [{\"category\", \"members\", \"base\", \"sum\",\n"
               " \"stacked_probability\"}] (combo: each of the top categories),\n"
               " \"terms_for\": {\"category\", \"neighbour\" | \"versus\", \"sum\",\n"
               " \"count\", \"base\"}, \"note\" (when there is no evidence)}");
}

// The heading of the term table: what the contributions are shares of.
std::string terms_heading(const internal::Explanation& e) {
  const std::string summary = std::to_string(e.num_contributing_terms) +
                              (e.num_contributing_terms == 1 ? " term, sum " : " terms, sum ") +
                              format_fixed(e.terms_total, 4);
  switch (e.method) {
    case Method::kKnn:
      return "terms shared with " + one_line(e.neighbour) + ", the nearest " + e.category +
             " neighbour (query x document weight; " + summary + " = cosine):";
    case Method::kRocchio:
      return "terms toward the " + e.category + " centroid (query x centroid weight; " + summary +
             " = score):";
    case Method::kSvm:
    case Method::kLogreg:
      return "terms for " + e.category + " (tf-idf x weight; " + summary + "; with the bias " +
             format_fixed(e.base, 4) + " = the decision value, mapped to the score by a sigmoid):";
    default:
      if (e.versus.empty()) {
        return "terms for " + e.category + " (count x log weight; " + summary + "):";
      }
      return "terms for " + e.category + " over " + e.versus + " (count x log-weight difference; " +
             summary + "; priors and constants add " + format_fixed(e.base, 4) + "):";
  }
}

// combo: each member's part in the category's stacked log-odds.
void print_combo_members(std::ostream& out, const internal::Explanation& e) {
  std::vector<std::vector<std::string>> rows;
  if (!e.stacked) {
    out << "  members for " << e.category << " (no stacking weights: the mean of their raw scores, "
        << format_fixed(e.terms_total, 4) << "):\n";
    for (const internal::ComboMemberPart& part : e.members) {
      rows.push_back({"    " + method_name(part.method), format_fixed(part.score, 4)});
    }
    print_table(out, rows, {1});
    return;
  }
  out << "  members for " << e.category
      << " (contribution = calibrated log-odds x stacking weight):\n";
  rows.push_back({"    method", "raw", "calibrated", "log-odds", "weight", "contribution"});
  for (const internal::ComboMemberPart& part : e.members) {
    rows.push_back({"    " + method_name(part.method), format_fixed(part.score, 4),
                    format_fixed(part.probability, 4), format_fixed(part.logit, 4),
                    format_fixed(part.weight, 4), format_fixed(part.contribution, 4)});
  }
  print_table(out, rows, {1, 2, 3, 4, 5});
  out << "  sum " << format_fixed(e.terms_total, 4) << ", with the bias " << format_fixed(e.base, 4)
      << ": sigmoid " << format_fixed(e.stacked_probability, 4)
      << (e.decision == Decision::kOneOf ? " (one-of divides by the sum over categories)" : "")
      << '\n';
}

// combo: the members side by side for each of the top categories, so the
// runner-up's case reads against the winner's: their calibrated
// probabilities with the stacked result, then their stacking weights with
// the bias.
void print_combo_top(std::ostream& out, const internal::Explanation& e) {
  if (e.combo_top.empty() || e.combo_top.front().members.empty()) return;
  std::vector<std::string> header = {"    category"};
  for (const internal::ComboMemberPart& part : e.combo_top.front().members) {
    header.push_back(method_name(part.method));
  }
  std::vector<size_t> right;
  for (size_t c = 1; c <= header.size(); ++c) right.push_back(c);
  std::vector<std::vector<std::string>> rows = {header};
  rows.front().push_back(e.stacked ? "stacked" : "mean");
  for (const internal::ComboCategoryParts& parts : e.combo_top) {
    std::vector<std::string> row = {"    " + parts.category};
    for (const internal::ComboMemberPart& part : parts.members) {
      row.push_back(format_fixed(part.probability, 4));
    }
    row.push_back(format_fixed(parts.stacked_probability, 4));
    rows.push_back(std::move(row));
  }
  if (!e.stacked) {
    out << "  members' raw scores for the top categories (no stacking weights: their mean):\n";
    print_table(out, rows, right);
    return;
  }
  out << "  members' calibrated probabilities for the top categories (stacked: sigmoid of the "
         "bias plus log-odds x weight summed):\n";
  print_table(out, rows, right);
  out << "  their stacking weights:\n";
  rows.resize(1);
  rows.front().back() = "bias";
  for (const internal::ComboCategoryParts& parts : e.combo_top) {
    std::vector<std::string> row = {"    " + parts.category};
    for (const internal::ComboMemberPart& part : parts.members) {
      row.push_back(format_fixed(part.weight, 4));
    }
    row.push_back(format_fixed(parts.base, 4));
    rows.push_back(std::move(row));
  }
  print_table(out, rows, right);
}

void print_explanation(std::ostream& out, const std::string& id, const internal::Explanation& e,
                       const internal::DocumentTerms& terms, int k) {
  std::vector<std::string> assigned;
  for (const Category& category : e.assigned) assigned.push_back(category.name);
  out << one_line(id) << ": " << (assigned.empty() ? "(none)" : one_line(join(assigned))) << '\n';
  out << "  method " << method_name(e.method);
  if (e.method == Method::kKnn) out << ", k " << k;
  out << "; " << terms.known_tokens << " of " << terms.total_tokens
      << " tokens in the vocabulary\n";
  // Thresholds decide any-of and "other": say why. Plain one-of needs no word.
  if ((e.decision == Decision::kAnyOf || e.other) && e.note != e.decision_reason) {
    out << "  " << decision_name(e.decision) << (e.other ? " with other" : "") << ": "
        << e.decision_reason << '\n';
  }
  if (!e.note.empty()) out << "  " << e.note << '\n';
  if (!e.has_known_terms) return;

  out << "  scores:\n";
  std::vector<std::vector<std::string>> rows;
  for (const Category& category : e.top) {
    rows.push_back({"    " + category.name, format_fixed(category.score, 4)});
  }
  print_table(out, rows, {1});

  if (e.method == Method::kKnn) {
    if (e.neighbours.empty()) {
      out << "  no training document shares a weighted term\n";
    } else {
      out << "  nearest neighbours (similarity, labels):\n";
      rows.clear();
      for (const internal::ExplainedNeighbour& neighbour : e.neighbours) {
        rows.push_back({"    " + one_line(neighbour.id), format_fixed(neighbour.similarity, 4),
                        join(neighbour.labels)});
      }
      print_table(out, rows, {1});
    }
  }
  if (e.method == Method::kCombo) {
    if (!e.members.empty()) print_combo_members(out, e);
    print_combo_top(out, e);
    return;
  }
  if (e.category.empty() || e.terms.empty()) return;
  out << "  " << terms_heading(e) << '\n';
  rows.clear();
  for (const internal::TermContribution& term : e.terms) {
    rows.push_back({"    " + one_line(term.term), format_fixed(term.contribution, 4)});
  }
  print_table(out, rows, {1});
}

int run_explain(const ParsedArgs& args, std::ostream& out, Messages& messages) {
  const std::string model_dir = args.required("model");
  internal::ExplainOptions options;
  options.classify = classify_options(args);  // method, k (0 = the model's), decision
  const auto top = static_cast<size_t>(args.integer("top", 5, 1, 1000000));
  options.max_categories = top;
  options.max_neighbours = top;
  options.max_terms = top;
  const bool json = args.has("json");
  std::vector<std::string> inputs = args.positional();
  if (inputs.empty()) inputs.push_back("-");

  const internal::Categorizer categorizer(model_dir);
  report_model_warnings(categorizer, messages);
  options.classify.k = categorizer.knn_k(options.classify);
  internal::Explainer explainer(categorizer);
  const internal::RuleSet rules =
      args.has("rules") ? internal::RuleSet::load(args.value("rules"), categorizer.categories())
                        : internal::RuleSet();
  bool first = true;

  auto on_document = [&](internal::InputDocument&& doc) {
    ExplainedText explained = explain_text(categorizer, explainer, doc.text, options);
    const internal::DocumentTerms& terms = explained.terms;
    internal::Explanation& explanation = explained.explanation;
    report_model_warnings(categorizer, messages);
    std::vector<internal::DecisionTrace::FiredRule> fired;
    if (!rules.empty()) {
      internal::DecisionTrace trace =
          rules.decide(categorizer, categorizer.scores(terms, options.classify), doc.text,
                       doc.title, options.classify);
      if (!trace.rules.empty()) {
        explanation.assigned = trace.assigned;
        explanation.decision_reason = trace.reason;
        fired = std::move(trace.rules);
      }
    }

    if (json) {
      internal::Json line = explanation_json(doc.id, explanation, terms, options.classify.k);
      if (!fired.empty()) {
        internal::Json list = internal::Json::array();
        for (const internal::DecisionTrace::FiredRule& rule : fired) {
          internal::Json entry = internal::Json::object();
          entry["source"] = rule.source;
          entry["category"] = rule.category;
          entry["mode"] = rule.mode;
          entry["query"] = rule.query;
          list.push_back(std::move(entry));
        }
        line["rules"] = std::move(list);
      }
      out << json_output(line) << '\n';
      return;
    }
    if (!first) out << '\n';
    first = false;
    print_explanation(out, doc.id, explanation, terms, options.classify.k);
    for (const internal::DecisionTrace::FiredRule& rule : fired) {
      out << "  rule " << one_line(rule.source) << ": " << rule.mode << ' '
          << one_line(rule.category) << " (" << one_line(rule.query) << ")\n";
    }
  };
  internal::read_documents(inputs, read_options(args), on_document, warn_to(messages));
  return 0;
}

}  // namespace

Command explain_command() {
  return {"explain", "show why documents get their categories (neighbours, terms)",
          kUsage,    define_options,
          kExample,  run_explain};
}

}  // namespace autocat::cli
