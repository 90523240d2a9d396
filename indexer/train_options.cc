// The training options shared by `autocat train` and `autocat eval --folds`.
#include <xapian.h>

#include <limits>

#include "classify/text/analyzer.h"
#include "indexer/commands.h"

namespace autocat::cli {

const std::vector<OptionSpec>& train_option_specs() {
  static const std::vector<OptionSpec> specs = {
      {"method", true},
      {"stopwords", true},
      {"stemmer", true},
      {"features", true},
      {"select", true},
      {"per-category", false},
      {"alpha", true},
      {"rocchio-gamma", true},
      {"keep-unlabelled", false},
      {"any-of", false},
      {"one-of", false},
      {"threshold-folds", true},
      {"knn-k", true},
      {"ngrams", true},
      {"tuning-sample", true},
      {"knn-concentration", true},
  };
  return specs;
}

namespace {

const char kTrainHelpOptions[] =
    "  --one-of / --any-of  the model's decision mode: one category per document, or\n"
    "                       every category over its threshold (default: any-of if some\n"
    "                       document has several labels, or \"labels\": [])\n"
    "  --stopwords S        english (default), none, or a file with one word a line\n"
    "  --stemmer LANG       Snowball stemmer language (english, german, ...) or none\n"
    "                       (default)\n"
    "  --ngrams N           1: single words (default); 2: and word bigrams; 3: and\n"
    "                       trigrams (bigger model, slower training)\n"
    "                       Short texts (30 terms a document or fewer on average)\n"
    "                       without --stemmer or --ngrams: train also tries bigrams,\n"
    "                       English stemming and both, and keeps the analysis that\n"
    "                       cross-validates best (train (--json) reports them all)\n"
    "  --features N         keep only the N most useful terms (feature selection)\n"
    "  --select MEASURE     utility measure for --features: mi (default), chi2, df, kl\n"
    "  --per-category       keep the top N terms of each category instead of overall\n"
    "  --alpha A            additive smoothing of Naive Bayes (default: chosen per\n"
    "                       method by cross-validation from 0.00001 to 1; 1 without)\n"
    "  --rocchio-gamma G    Rocchio: subtract G times the mean of the other centroids\n"
    "                       (default: chosen by cross-validation from 0 to 3)\n"
    "  --knn-k K            kNN's default k (default: chosen by cross-validation\n"
    "                       from 10 to 300)\n"
    "  --knn-concentration X  kNN weighs each term by idf times its class\n"
    "                       concentration (1 - normalized entropy of its\n"
    "                       documents' labels) to the power X; 0 = idf alone\n"
    "                       (default: chosen by cross-validation from 0, 0.5, 1)\n"
    "  --keep-unlabelled    also keep documents that give no labels (no \"labels\"\n"
    "                       key, plain files) as examples of \"no category\", like\n"
    "                       records with \"labels\": [] (multi-label collections such\n"
    "                       as Reuters-21578)\n"
    "  --threshold-folds K  tune per-category thresholds (and choose k and gamma) by\n"
    "                       K-fold cross-validation (default 5; 0 = do not tune)\n"
    "  --tuning-sample N    cross-validate on a stratified sample of about N documents\n"
    "                       when there are more (default 50000; 0 = all documents)\n";

}  // namespace

std::string train_help() {
  return method_help("(default: the best by cross-validation; knn with --threshold-folds 0)",
                     "default method for index/classify: ") +
         kTrainHelpOptions;
}

namespace {

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
  if (std::optional<Method> method = args.method()) {
    options.default_method = *method;
  } else {
    options.choose_default_method = true;  // the cross-validated best
  }
  options.nb_alpha = args.number("alpha", options.nb_alpha, 1e-9, 1e9);
  options.rocchio_gamma = args.number("rocchio-gamma", options.rocchio_gamma, 0.0, 100.0);
  options.knn_k = static_cast<int>(args.integer("knn-k", options.knn_k, 1, 100000));
  options.knn_concentration = args.number("knn-concentration", options.knn_concentration, 0.0, 4.0);
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
