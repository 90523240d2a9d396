// autocat train: labelled documents -> model directory.
#include <xapian.h>

#include <ostream>

#include "classify/json.h"
#include "classify/trainer.h"
#include "indexer/commands.h"

namespace autocat::cli {

namespace {

const char kUsage[] =
    "usage: autocat train --model DIR [OPTIONS] INPUT...\n"
    "\n"
    "Trains every classifier on the labelled documents of INPUT (JSON Lines with\n"
    "\"labels\", or a folder tree whose subfolder names are the labels) and writes\n"
    "the model directory DIR: the training database and model.autocat.\n"
    "Documents without labels are skipped and counted (see --keep-unlabelled).\n"
    "With --add, INPUT is added to DIR's existing training collection (same ids\n"
    "replace) and every classifier is fitted again with DIR's own settings.\n"
    "Any-of thresholds are tuned per category on every fifth training document.\n"
    "\n"
    "options:\n"
    "  --model DIR          model directory to write (created if missing; replaced)\n"
    "  --add                add INPUT to the model in DIR instead of replacing it\n"
    "  --split NAME         use only JSON Lines records whose \"split\" is NAME\n"
    "  --method M           default method for index/classify: knn (default), rocchio,\n"
    "                       nb, bnb, cnb\n"
    "  --stopwords S        english (default), none, or a file with one word a line\n"
    "  --stemmer LANG       Snowball stemmer language (english, german, ...) or none\n"
    "                       (default)\n"
    "  --features N         keep only the N most useful terms (feature selection)\n"
    "  --select MEASURE     utility measure for --features: mi (default), chi2, df, kl\n"
    "  --per-category       keep the top N terms of each category instead of overall\n"
    "  --alpha A            additive smoothing of Naive Bayes (default 1 = Laplace)\n"
    "  --rocchio-gamma G    Rocchio: subtract G times the other centroids (default 0)\n"
    "  --keep-unlabelled    keep documents without labels as examples of \"no category\"\n"
    "                       (multi-label collections such as Reuters-21578)\n"
    "  --skip-malformed     skip malformed JSON lines with a warning instead of failing\n"
    "  --json               print the summary as one JSON object\n"
    "  -h, --help           show this help\n"
    "\n"
    "example:\n"
    "  autocat train --model news.model --split train news.jsonl\n";

const std::vector<OptionSpec> kOptions = {
    {"model", true},
    {"split", true},
    {"method", true},
    {"stopwords", true},
    {"stemmer", true},
    {"features", true},
    {"select", true},
    {"per-category", false},
    {"alpha", true},
    {"rocchio-gamma", true},
    {"skip-malformed", false},
    {"json", false},
    {"keep-unlabelled", false},
    {"add", false},
};

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

TrainOptions train_options(const ParsedArgs& args) {
  TrainOptions options;
  options.analyzer.stopwords = args.value("stopwords", options.analyzer.stopwords);
  if (options.analyzer.stopwords.empty()) throw UsageError("--stopwords needs a value");
  options.analyzer.stemmer = args.value("stemmer", options.analyzer.stemmer);
  check_stemmer(options.analyzer.stemmer);
  if (std::optional<Method> method = args.method()) options.default_method = *method;
  options.nb_alpha = args.number("alpha", options.nb_alpha, 1e-9, 1e9);
  options.rocchio_gamma = args.number("rocchio-gamma", options.rocchio_gamma, 0.0, 100.0);
  options.keep_unlabelled = args.has("keep-unlabelled");
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

int run_train(const std::vector<std::string>& words, std::ostream& out, Messages& messages) {
  const ParsedArgs args = parse_args(words, kOptions);
  const std::string model_dir = args.required("model");
  require_inputs(args);
  const TrainOptions options = train_options(args);
  internal::TrainReport report;
  if (args.has("add")) {
    // The model's own settings apply; options that would change them are refused.
    for (const char* option : {"method", "stopwords", "stemmer", "features", "select",
                               "per-category", "alpha", "rocchio-gamma", "keep-unlabelled"}) {
      if (args.has(option)) {
        throw UsageError(std::string("--add keeps the model's settings; --") + option +
                         " needs a new model (train without --add)");
      }
    }
    report =
        internal::add_to_model(args.positional(), model_dir, read_options(args), warn_to(messages));
  } else {
    report = internal::train_model(args.positional(), model_dir, options, read_options(args),
                                   warn_to(messages));
  }
  if (report.skipped_unlabelled != 0) {
    messages.warning("skipped " + std::to_string(report.skipped_unlabelled) +
                     " documents without labels");
  }

  if (args.has("json")) {
    internal::JsonValue json = internal::JsonValue::object();
    json.set("model", internal::JsonValue::string(model_dir));
    json.set("documents", internal::JsonValue::number(static_cast<double>(report.documents)));
    json.set("added", internal::JsonValue::number(static_cast<double>(report.added)));
    json.set("skipped_unlabelled",
             internal::JsonValue::number(static_cast<double>(report.skipped_unlabelled)));
    json.set("skipped_empty",
             internal::JsonValue::number(static_cast<double>(report.skipped_empty)));
    json.set("categories", internal::JsonValue::number(report.categories));
    json.set("terms", internal::JsonValue::number(report.terms));
    json.set("selected_terms", internal::JsonValue::number(report.selected_terms));
    json.set("default_method", internal::JsonValue::string(method_name(report.default_method)));
    json.set("analyze_seconds", internal::JsonValue::number(report.analyze_seconds));
    json.set("fit_seconds", internal::JsonValue::number(report.fit_seconds));
    json.set("seconds", internal::JsonValue::number(report.total_seconds));
    out << json.dump() << '\n';
    return 0;
  }

  out << (args.has("add") ? "added " + std::to_string(report.added) + " documents to model "
                          : std::string("trained model "))
      << model_dir << '\n';
  std::string skipped;
  if (report.skipped_unlabelled != 0 || report.skipped_empty != 0) {
    skipped = " (skipped " + std::to_string(report.skipped_unlabelled) + " unlabelled, " +
              std::to_string(report.skipped_empty) + " without terms)";
  }
  std::string terms = std::to_string(report.terms);
  if (options.num_features > 0)
    terms += " (" + std::to_string(report.selected_terms) + " selected)";
  print_table(out,
              {{"  documents", std::to_string(report.documents) + skipped},
               {"  categories", std::to_string(report.categories)},
               {"  terms", terms},
               {"  default method", method_name(report.default_method)},
               {"  seconds", format_fixed(report.total_seconds, 3) + " (analyze " +
                                 format_fixed(report.analyze_seconds, 3) + ", fit " +
                                 format_fixed(report.fit_seconds, 3) + ")"}},
              {});
  return 0;
}

}  // namespace

Command train_command() {
  return {"train", "train a model directory from labelled documents", kUsage, run_train};
}

}  // namespace autocat::cli
