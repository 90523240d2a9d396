// autocat classify: print the categories (and scores) of documents.
#include <algorithm>
#include <ostream>

#include "classify/decide/categorizer.h"
#include "classify/decide/rules.h"
#include "classify/io/json_text.h"
#include "classify/train/thresholds.h"
#include "indexer/commands.h"

namespace autocat::cli {

namespace {

const char kUsage[] =
    "usage: autocat classify --model DIR [OPTIONS] [INPUT... | -]\n"
    "\n"
    "Prints the categories the model DIR assigns to each document of INPUT: one\n"
    "line per document, \"ID<TAB>CATEGORY SCORE, ...\", or (none). Without INPUT,\n"
    "or with -, reads JSON Lines ({\"id\": ..., \"text\": ...}) from standard input.\n"
    "A plain text file is one document.\n";

const char kExample[] =
    "\n"
    "example:\n"
    "  echo '{\"id\": \"1\", \"text\": \"The striker scored\"}' | autocat classify --model m "
    "--json\n";

void define_options(OptionSet& options) {
  add_model_option(options);
  add_method_option(options, "(default: the model's)");
  add_k_option(options);
  options.value("--rules", "FILE",
                "rule categories applied with the learned ones: lines "
                "CATEGORY<TAB>assign|veto|evidence:+W<TAB>QUERY (docs/rules.md)");
  add_decision_options(options);
  options.value("--top", "N", "also show the N best-scoring categories, assigned or not");
  add_reader_options(options);
  options.flag("--json",
               "one JSON object per document:\n"
               "{\"id\", \"method\", \"categories\": [{\"name\", \"score\"}],\n"
               " \"scores\": {CATEGORY: SCORE, ...}, \"decision\": {...}}\n"
               "scores of every category (probabilities for nb, bnb, cnb, svm, logreg); "
               "decision: mode, other, thresholds, min_score, outcome (assigned, none, other), "
               "reason, and candidates (name, score, threshold to reach, assigned)");
}

// The rules that fired: [{"source", "category", "mode", "query"}].
internal::Json rules_json(const internal::DecisionTrace& trace) {
  internal::Json rules = internal::Json::array();
  for (const internal::DecisionTrace::FiredRule& rule : trace.rules) {
    internal::Json entry = internal::Json::object();
    entry["source"] = rule.source;
    entry["category"] = rule.category;
    entry["mode"] = rule.mode;
    entry["query"] = rule.query;
    rules.push_back(std::move(entry));
  }
  return rules;
}

// What was decided and why: the rule in force, the outcome and the leading
// categories with the threshold each had to reach (null: never assigned,
// too few training examples to calibrate it).
internal::Json decision_json(const internal::DecisionTrace& trace) {
  internal::Json json = internal::Json::object();
  json["mode"] = decision_name(trace.mode);
  json["other"] = trace.other;
  json["thresholds"] = internal::Json(
      trace.tuned ? (trace.method == Method::kRocchio ? "tuned radius" : "tuned per category")
                  : "minimum score");
  json["min_score"] = trace.min_score;
  const bool none = trace.assigned.empty();
  json["outcome"] = internal::Json(none ? (trace.other ? "other" : "none") : "assigned");
  json["reason"] = trace.reason;
  internal::Json candidates = internal::Json::array();
  for (const internal::DecisionTrace::Candidate& candidate : trace.candidates) {
    internal::Json entry = internal::Json::object();
    entry["name"] = candidate.name;
    entry["score"] = candidate.score;
    entry["threshold"] = candidate.threshold >= internal::kNeverAssign
                             ? internal::Json()
                             : internal::Json(candidate.threshold);
    entry["assigned"] = candidate.assigned;
    candidates.push_back(std::move(entry));
  }
  json["candidates"] = std::move(candidates);
  if (!trace.rules.empty()) json["rules"] = rules_json(trace);
  return json;
}

std::string category_text(const std::vector<Category>& categories) {
  if (categories.empty()) return "(none)";
  std::vector<std::string> parts;
  for (const Category& category : categories) {
    parts.push_back(one_line(category.name) + " " + format_fixed(category.score, 4));
  }
  return join(parts);
}

int run_classify(const ParsedArgs& args, std::ostream& out, Messages& messages) {
  const std::string model_dir = args.required("model");
  const ClassifyOptions options = classify_options(args);
  const size_t top = static_cast<size_t>(args.integer("top", 0, 1, 1000000));
  const bool json = args.has("json");
  std::vector<std::string> inputs = args.positional();
  if (inputs.empty()) inputs.push_back("-");

  const internal::Categorizer categorizer(model_dir);
  const internal::RuleSet rules =
      args.has("rules") ? internal::RuleSet::load(args.value("rules"), categorizer.categories())
                        : internal::RuleSet();
  const std::string method = method_name(options.method.value_or(categorizer.default_method()));
  report_model_warnings(categorizer, messages);

  auto on_document = [&](internal::InputDocument&& doc) {
    const internal::DocumentTerms terms =
        categorizer.document_terms(categorizer.analyzer().analyze(doc.text));
    const std::vector<double> scores = categorizer.scores(terms, options);
    report_model_warnings(categorizer, messages);
    internal::DecisionTrace decision =
        rules.empty() ? categorizer.explain_decision(scores, options)
                      : rules.decide(categorizer, scores, doc.text, doc.title, options);
    if (terms.terms.empty()) {
      const std::string why = is_blank(doc.text) ? "empty text" : "no word known to the model";
      // Plain one-of still assigns one: the most frequent training category.
      std::string outcome = "no category";
      if (!decision.rules.empty() && !decision.assigned.empty()) {
        outcome = "categories from rules";
      } else if (!decision.assigned.empty()) {
        outcome = "the most frequent training category, " + decision.assigned.front().name;
      }
      messages.warning(doc.source + ": " + why + "; " + outcome);
      if (decision.rules.empty()) decision.reason = why + "; " + outcome;
    }
    const std::vector<Category>& assigned = decision.assigned;
    std::vector<Category> ranked = categorizer.ranked(scores);
    if (ranked.size() > top) ranked.resize(top);

    if (json) {
      internal::Json line = internal::Json::object();
      line["id"] = doc.id;
      line["method"] = method;
      line["categories"] = categories_json(assigned);
      internal::Json all = internal::Json::object();
      for (size_t c = 0; c < scores.size(); ++c) {
        all[categorizer.categories()[c]] = scores[c];
      }
      line["scores"] = std::move(all);
      line["decision"] = decision_json(decision);
      if (top != 0) line["top"] = categories_json(ranked);
      out << json_output(line) << '\n';
    } else {
      out << one_line(doc.id) << '\t' << category_text(assigned);
      if (top != 0) out << "\t(top: " << category_text(ranked) << ')';
      out << '\n';
    }
  };
  internal::read_documents(inputs, read_options(args), on_document, warn_to(messages));
  return 0;
}

}  // namespace

Command classify_command() {
  return {"classify", "print the categories of documents (one line or JSON object each)",
          kUsage,     define_options,
          kExample,   run_classify};
}

}  // namespace autocat::cli
