// autocat rules test: how well each rule of a rules file agrees with
// labelled documents, and (with --model) what the rules add to the learned
// categories.
#include <algorithm>
#include <map>
#include <memory>
#include <ostream>
#include <set>

#include "autocat/error.h"
#include "classify/decide/categorizer.h"
#include "classify/decide/rules.h"
#include "classify/io/json_text.h"
#include "indexer/commands.h"

namespace autocat::cli {

namespace {

const char kUsage[] =
    "usage: autocat rules test --rules FILE [--model DIR] [OPTIONS] INPUT...\n"
    "\n"
    "Matches every rule of FILE against the labelled documents of INPUT and reports\n"
    "each rule's precision (share of the documents it matches that have its\n"
    "category; for veto and negative evidence rules, that lack it) and recall\n"
    "(share of the documents with its category that it matches; for veto and\n"
    "negative evidence rules, share of those without it). Then, per category named\n"
    "by a rule, precision, recall and F1 of the rules alone (an assign or positive\n"
    "evidence rule matches and no veto does)\n"
    "and, with --model, of the learned categories and of learned + rules (as\n"
    "autocat classify --rules and index --rules decide them).\n"
    "\n"
    "Rules file: one rule a line, CATEGORY<TAB>MODE<TAB>QUERY; MODE is assign, veto\n"
    "or evidence:+W (W in [-1, 1], added to the learned score); QUERY a Xapian\n"
    "QueryParser expression (english stems, default operator AND, title:WORD for\n"
    "the title); # starts a comment line. See docs/rules.md.\n";

const char kExample[] =
    "\n"
    "example:\n"
    "  autocat rules test --rules examples/rules/reuters.rules --model m --split test \\\n"
    "      reuters21578-modapte.jsonl\n";

void define_options(OptionSet& options) {
  options.value("--rules", "FILE", "the rules file");
  add_model_option(options, "also compare with the learned categories of model DIR");
  add_method_option(options, "(default: the model's)");
  add_k_option(options);
  add_decision_options(options);
  add_reader_options(options);
  options.flag("--json",
               "one JSON object: {\"documents\", \"rules\": [{\"source\", \"category\", "
               "\"mode\", \"query\", \"matched\", \"correct\", \"precision\", \"recall\"}], "
               "\"categories\": [{\"name\", \"documents\", \"rules\", \"learned\", "
               "\"combined\": {\"precision\", \"recall\", \"f1\", \"true_positives\", "
               "\"false_positives\", \"false_negatives\"}}]}");
}

struct Counts {
  uint64_t true_positives = 0;
  uint64_t false_positives = 0;
  uint64_t false_negatives = 0;
  void add(bool predicted, bool actual) {
    if (predicted && actual) ++true_positives;
    if (predicted && !actual) ++false_positives;
    if (!predicted && actual) ++false_negatives;
  }
  double precision() const { return share(true_positives, true_positives + false_positives); }
  double recall() const { return share(true_positives, true_positives + false_negatives); }
  double f1() const {
    const double p = precision(), r = recall();
    return p + r == 0 ? 0 : 2 * p * r / (p + r);
  }
  static double share(uint64_t part, uint64_t whole) {
    return whole == 0 ? 0 : static_cast<double>(part) / static_cast<double>(whole);
  }
};

struct RuleCounts {
  uint64_t matched = 0;
  uint64_t correct = 0;   // matched documents with the category (veto: without)
  uint64_t relevant = 0;  // documents with the category (veto: without)
};

bool is_positive(const internal::Rule& rule) {
  return rule.mode == internal::RuleMode::kAssign ||
         (rule.mode == internal::RuleMode::kEvidence && rule.weight > 0);
}

internal::Json counts_json(const Counts& counts) {
  internal::Json json = internal::Json::object();
  json["precision"] = internal::Json(counts.precision());
  json["recall"] = internal::Json(counts.recall());
  json["f1"] = internal::Json(counts.f1());
  json["true_positives"] = counts.true_positives;
  json["false_positives"] = counts.false_positives;
  json["false_negatives"] = counts.false_negatives;
  return json;
}

std::string prf(const Counts& counts) {
  return format_fixed(counts.precision(), 3) + " " + format_fixed(counts.recall(), 3) + " " +
         format_fixed(counts.f1(), 3);
}

int run_rules_test(const ParsedArgs& args, std::ostream& out, Messages& messages) {
  const std::string rules_path = args.required("rules");
  require_inputs(args);
  const bool json = args.has("json");
  const ClassifyOptions options = classify_options(args);
  std::unique_ptr<internal::Categorizer> categorizer;
  if (args.has("model")) {
    categorizer = std::make_unique<internal::Categorizer>(args.value("model"));
    report_model_warnings(*categorizer, messages);
  } else if (args.has("method") || args.has("k")) {
    throw UsageError("--method and --k need --model");
  }
  const internal::RuleSet rules = internal::RuleSet::load(
      rules_path, categorizer ? categorizer->categories() : std::vector<std::string>());
  if (rules.empty()) throw InvalidArgumentError(rules_path + ": no rules");

  std::vector<std::string> names;  // the categories named by rules, in file order
  for (const internal::Rule& rule : rules.rules()) {
    if (std::find(names.begin(), names.end(), rule.category) == names.end()) {
      names.push_back(rule.category);
    }
  }
  std::vector<RuleCounts> rule_counts(rules.rules().size());
  std::map<std::string, Counts> by_rules, learned, combined;
  std::map<std::string, uint64_t> positives;
  std::set<std::string> labels_seen;
  uint64_t documents = 0;

  auto on_document = [&](internal::InputDocument&& doc) {
    ++documents;
    const std::set<std::string> labels(doc.labels.begin(), doc.labels.end());
    labels_seen.insert(labels.begin(), labels.end());
    const std::vector<size_t> matched = rules.matching(doc.text, doc.title);
    std::set<std::string> rule_yes, rule_veto;
    for (size_t r = 0; r < rules.rules().size(); ++r) {
      const internal::Rule& rule = rules.rules()[r];
      const bool has = labels.count(rule.category) != 0;
      const bool veto = rule.mode == internal::RuleMode::kVeto;
      // A veto or negative evidence is right where the category is absent.
      const bool negative = veto || !is_positive(rule);
      const bool hit = std::binary_search(matched.begin(), matched.end(), r);
      RuleCounts& counts = rule_counts[r];
      if (has != negative) ++counts.relevant;
      if (!hit) continue;
      ++counts.matched;
      if (has != negative) ++counts.correct;
      if (veto) rule_veto.insert(rule.category);
      if (is_positive(rule)) rule_yes.insert(rule.category);
    }
    std::set<std::string> learned_set, combined_set;
    if (categorizer) {
      const std::vector<double> scores = categorizer->scores(
          categorizer->document_terms(categorizer->analyzer().analyze(doc.text)), options);
      for (const Category& category : categorizer->decide(scores, options)) {
        learned_set.insert(category.name);
      }
      for (const Category& category :
           rules.decide(*categorizer, scores, matched, options).assigned) {
        combined_set.insert(category.name);
      }
    }
    for (const std::string& name : names) {
      const bool actual = labels.count(name) != 0;
      if (actual) ++positives[name];
      by_rules[name].add(rule_yes.count(name) != 0 && rule_veto.count(name) == 0, actual);
      learned[name].add(learned_set.count(name) != 0, actual);
      combined[name].add(combined_set.count(name) != 0, actual);
    }
  };
  internal::read_documents(args.positional(), read_options(args), on_document, warn_to(messages));
  if (categorizer) report_model_warnings(*categorizer, messages);
  if (!categorizer) {
    // Without a model, the inputs' labels are the categories a rule may name.
    for (const internal::Rule& rule : rules.rules()) {
      if (labels_seen.count(rule.category) == 0) {
        throw InvalidArgumentError(rule.source + ": category '" + rule.category +
                                   "' is not a label of any document of the inputs");
      }
    }
  }

  if (json) {
    internal::Json result = internal::Json::object();
    result["documents"] = documents;
    internal::Json rule_list = internal::Json::array();
    for (size_t r = 0; r < rules.rules().size(); ++r) {
      const internal::Rule& rule = rules.rules()[r];
      const RuleCounts& counts = rule_counts[r];
      internal::Json entry = internal::Json::object();
      entry["source"] = rule.source;
      entry["category"] = rule.category;
      entry["mode"] = internal::Json(internal::rule_mode_text(rule));
      entry["query"] = rule.query;
      entry["matched"] = counts.matched;
      entry["correct"] = counts.correct;
      entry["precision"] = internal::Json(Counts::share(counts.correct, counts.matched));
      entry["recall"] = internal::Json(Counts::share(counts.correct, counts.relevant));
      rule_list.push_back(std::move(entry));
    }
    result["rules"] = std::move(rule_list);
    internal::Json category_list = internal::Json::array();
    for (const std::string& name : names) {
      internal::Json entry = internal::Json::object();
      entry["name"] = name;
      entry["documents"] = positives[name];
      entry["rules"] = counts_json(by_rules[name]);
      if (categorizer) {
        entry["learned"] = counts_json(learned[name]);
        entry["combined"] = counts_json(combined[name]);
      }
      category_list.push_back(std::move(entry));
    }
    result["categories"] = std::move(category_list);
    out << json_output(result) << '\n';
    return 0;
  }

  out << "rules " << rules_path << " on " << documents << " documents\n";
  std::vector<std::vector<std::string>> rows = {
      {"rule", "category", "mode", "matched", "precision", "recall", "query"}};
  for (size_t r = 0; r < rules.rules().size(); ++r) {
    const internal::Rule& rule = rules.rules()[r];
    const RuleCounts& counts = rule_counts[r];
    rows.push_back(
        {rule.source, rule.category, internal::rule_mode_text(rule), std::to_string(counts.matched),
         format_fixed(Counts::share(counts.correct, counts.matched), 3),
         format_fixed(Counts::share(counts.correct, counts.relevant), 3), one_line(rule.query)});
  }
  print_table(out, rows, {3, 4, 5});
  out << '\n';
  rows = {{"category", "documents", "rules P R F1"}};
  if (categorizer) {
    rows[0].push_back("learned P R F1");
    rows[0].push_back("learned+rules P R F1");
  }
  for (const std::string& name : names) {
    rows.push_back({name, std::to_string(positives[name]), prf(by_rules[name])});
    if (categorizer) {
      rows.back().push_back(prf(learned[name]));
      rows.back().push_back(prf(combined[name]));
    }
  }
  print_table(out, rows, {1});
  return 0;
}

int run_rules(const ParsedArgs& args, std::ostream& out, Messages& messages) {
  const std::vector<std::string>& words = args.positional();
  if (words.empty() || words[0] != "test") {
    throw UsageError(words.empty()
                         ? "missing subcommand; use autocat rules test"
                         : "unknown subcommand '" + words[0] + "'; use autocat rules test");
  }
  ParsedArgs test = args;
  test.shift();
  return run_rules_test(test, out, messages);
}

}  // namespace

Command rules_command() {
  return {"rules",  "test rule categories (queries) against labelled documents",
          kUsage,   define_options,
          kExample, run_rules};
}

}  // namespace autocat::cli
