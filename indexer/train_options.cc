// The training options shared by `autocat train` and `autocat eval --folds`.
#include <xapian.h>

#include <algorithm>
#include <limits>

#include "classify/text/analyzer.h"
#include "indexer/commands.h"

namespace autocat::cli {

void add_train_options(OptionSet& options, const std::string& heading) {
  options.group(heading);
  add_method_option(options,
                    "(default: the best by cross-validation; knn with --threshold-folds 0)",
                    "default method for index/classify: ");
  options.value("--methods", "M,M...",
                "cross-validate only these methods (comma-separated, from the names --method "
                "takes) and choose the default among them; combo stacks the others named and "
                "needs two of them; the methods not named are fitted untuned (default: every "
                "method)");
  options.flag("--one-of",
               "the model's decision mode: one category per document (default unless some "
               "document has several labels, or \"labels\": [])");
  options.flag("--any-of",
               "the model's decision mode: every category over its threshold (default if some "
               "document has several labels, or \"labels\": [])");
  options.value("--stopwords", "S", "english (default), none, or a file with one word a line");
  options.value("--stemmer", "LANG",
                "Snowball stemmer language (english, german, ...) or none (default)");
  options.value("--ngrams", "N",
                "1: single words (default); 2: and word bigrams; 3: and trigrams (bigger model, "
                "slower training)\n"
                "Short texts (30 terms a document or fewer on average) without --stemmer or "
                "--ngrams: train also tries bigrams, English stemming and both, and keeps the "
                "analysis that cross-validates best (train (--json) reports them all)");
  options.value("--features", "N", "keep only the N most useful terms (feature selection)");
  options.value("--select", "MEASURE",
                "utility measure for --features: mi (default), chi2, df, kl");
  options.flag("--per-category", "keep the top N terms of each category instead of overall");
  options.value("--alpha", "A",
                "additive smoothing of Naive Bayes (default: chosen per method by "
                "cross-validation from 0.00001 to 1; 1 without)");
  options.value("--rocchio-gamma", "G",
                "Rocchio: subtract G times the mean of the other centroids (default: chosen by "
                "cross-validation from 0 to 3)");
  options.value("--knn-k", "K",
                "kNN's default k (default: chosen by cross-validation from 10 to 300)");
  options.value("--knn-search", "S",
                "kNN's search in cross-validation and, by default, in classification: exact, "
                "or two-step (also writes the two-step arrays into knn.index) (default: exact)");
  options.value("--knn-concentration", "X",
                "kNN weighs each term by idf times its relevance frequency (tf.rf: "
                "log2(2 + a / max(1, b)) for the category where it is highest, a and b its "
                "documents in and outside it) to the power X; 0 = idf alone (default: chosen "
                "by cross-validation from 0, 0.5, 1)");
  options.flag("--keep-unlabelled",
               "also keep documents that give no labels (no \"labels\" key, plain files) as "
               "examples of \"no category\", like records with \"labels\": [] (multi-label "
               "collections such as Reuters-21578)");
  options.value("--threshold-folds", "K",
                "tune per-category thresholds (and choose k and gamma) by K-fold "
                "cross-validation (default 5; 0 = do not tune)");
  options.value("--tuning-sample", "N",
                "cross-validate on a stratified sample of about N documents when there are more "
                "(default 20000; 0 = all documents)");
  options.value("--knn-cost-limit", "P",
                "leave kNN out of combo and of the default-method choice when its search "
                "would walk more than P postings per token of a document: at that size it "
                "cannot keep up with indexing (default 1000; 0 = no limit)");
  options.group("options");
}

std::vector<std::string> train_option_names() {
  return declared_names([](OptionSet& options) { add_train_options(options, "training options"); });
}

namespace {

// --methods: comma-separated method names, each once.
std::vector<Method> parse_methods(const std::string& text) {
  std::string choices;
  for (Method method : all_methods())
    choices += (choices.empty() ? "" : ", ") + method_name(method);
  std::vector<Method> methods;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string name =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::optional<Method> method = parse_method(name);
    if (!method) {
      throw UsageError("--methods: unknown method '" + name + "'; choose from " + choices);
    }
    if (std::find(methods.begin(), methods.end(), *method) == methods.end()) {
      methods.push_back(*method);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  const auto members = std::count_if(methods.begin(), methods.end(),
                                     [](Method method) { return method != Method::kCombo; });
  if (members < 2 && std::find(methods.begin(), methods.end(), Method::kCombo) != methods.end()) {
    throw UsageError(
        "--methods: combo stacks the other methods named and needs at least two of them "
        "(e.g. svm,cnb,combo)");
  }
  return methods;
}

// Checks the stemmer language up front so a typo is a usage error.
void check_stemmer(const std::string& language) {
  if (language == "none") return;
  try {
    Xapian::Stem stem(language);
  } catch (const Xapian::InvalidArgumentError&) {
    std::string choices;
    for (char c : Xapian::Stem::get_available_languages()) {
      choices += c == ' ' ? std::string(", ") : std::string(1, c);
    }
    throw UsageError("unknown stemmer language '" + language + "'; choose one of none, " + choices);
  }
}

}  // namespace

TrainOptions train_options(const ParsedArgs& args) {
  TrainOptions options;
  options.analyzer.stopwords = args.value("stopwords", options.analyzer.stopwords);
  if (options.analyzer.stopwords.empty()) throw UsageError("--stopwords needs a value");
  options.analyzer.stemmer = args.value("stemmer", options.analyzer.stemmer);
  check_stemmer(options.analyzer.stemmer);
  options.analyzer.ngrams =
      static_cast<int>(args.integer("ngrams", options.analyzer.ngrams, 1, internal::kMaxNgrams));
  // An analysis the user names is the analysis used.
  options.choose_short_text_analysis = !args.has("ngrams") && !args.has("stemmer");
  if (args.has("methods")) options.methods = parse_methods(args.value("methods"));
  if (std::optional<Method> method = args.method()) {
    options.default_method = *method;
    if (!options.methods.empty() && std::find(options.methods.begin(), options.methods.end(),
                                              *method) == options.methods.end()) {
      throw UsageError("--method " + method_name(*method) +
                       " is not among --methods; add it there or leave --method out");
    }
  } else {
    options.choose_default_method = true;  // the cross-validated best
  }
  // Not given: chosen by cross-validation (unset).
  if (args.has("alpha")) options.nb_alpha = args.number("alpha", 0, 1e-9, 1e9);
  if (args.has("rocchio-gamma")) {
    options.rocchio_gamma = args.number("rocchio-gamma", 0, 0.0, 100.0);
  }
  if (args.has("knn-k")) options.knn_k = static_cast<int>(args.integer("knn-k", 0, 1, 100000));
  if (args.has("knn-search")) {
    options.knn_search = parse_knn_search(args.value("knn-search"));
    if (!options.knn_search) {
      throw UsageError("--knn-search takes exact or two-step, not '" + args.value("knn-search") +
                       "'");
    }
  }
  if (args.has("knn-concentration")) {
    options.knn_concentration = args.number("knn-concentration", 0, 0.0, 4.0);
  }
  options.keep_unlabelled = args.has("keep-unlabelled");
  if (args.has("any-of") && args.has("one-of")) {
    throw UsageError("--any-of and --one-of exclude each other");
  }
  if (args.has("any-of")) options.decision = Decision::kAnyOf;
  if (args.has("one-of")) options.decision = Decision::kOneOf;
  options.threshold_folds =
      static_cast<int>(args.integer("threshold-folds", options.threshold_folds, 0, 100));
  if (options.threshold_folds == 1) {
    throw UsageError("--threshold-folds must be 0 (no tuning) or at least 2");
  }
  options.tune_thresholds = options.threshold_folds != 0;
  options.tuning_sample = static_cast<int>(
      args.integer("tuning-sample", options.tuning_sample, 0, std::numeric_limits<int>::max()));
  options.knn_cost_limit = args.number("knn-cost-limit", options.knn_cost_limit, 0.0, 1e12);
  if (args.has("features")) {
    options.num_features = static_cast<int>(args.integer("features", 0, 1, 100000000));
    options.feature_selection = parse_selection(args.value("select", "mi"));
    options.features_per_category = args.has("per-category");
  } else if (args.has("select") || args.has("per-category")) {
    throw UsageError(std::string(args.has("select") ? "--select" : "--per-category") +
                     " needs --features N");
  }
  return options;
}

}  // namespace autocat::cli
