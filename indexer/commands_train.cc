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
    "the model directory DIR: a new generation (training database + model.autocat)\n"
    "that replaces the old model in one atomic step; a failed or killed run leaves\n"
    "the old model. One train at a time per DIR: a second one fails at once.\n"
    "Documents without labels are skipped and counted (see --keep-unlabelled).\n"
    "With --add, INPUT is added to DIR's existing training collection (same ids\n"
    "replace) and every classifier is fitted again with DIR's own settings.\n"
    "Decision thresholds are tuned per category by 5-fold cross-validation.\n"
    "\n"
    "options:\n"
    "  --model DIR          model directory to write (created if missing; the model\n"
    "                       in it is replaced; a non-empty DIR that is not a model\n"
    "                       directory is refused)\n"
    "  --add                add INPUT to the model in DIR instead of replacing it\n"
    "  --split NAME         use only JSON Lines records whose \"split\" is NAME\n"
    "  --skip-malformed     skip malformed JSON lines with a warning instead of failing\n"
    "  --allow-duplicate-ids  accept an id given twice (warning); the later document\n"
    "                       replaces the earlier where ids are stored (default: error)\n"
    "  --max-document-bytes N  longest JSON line or text file read (default 67108864)\n"
    "  --unlabelled INPUT   also learn from INPUT's documents, labels ignored:\n"
    "                       multinomial NB (nb) is fitted by EM (Nigam et al. 2000);\n"
    "                       kNN, Rocchio and the other NB variants do not use them\n"
    "                       (repeatable; --split applies to them too)\n"
    "  --em-lambda L        weight of the unlabelled documents (default: chosen by\n"
    "                       cross-validation from 0, 0.01, 0.1, 0.3, 1)\n"
    "  --em-iterations N    at most N EM iterations (default 20; stops earlier when\n"
    "                       the log-likelihood changes by less than 0.01%)\n"
    "  --json               print the summary as one JSON object\n"
    "  -h, --help           show this help\n"
    "\n"
    "training options:\n";

const char kExample[] =
    "\n"
    "example:\n"
    "  autocat train --model news.model --split train news.jsonl\n";

const std::vector<OptionSpec>& command_options() {
  static const std::vector<OptionSpec> specs = with_options(
      {
          {"model", true},
          {"split", true},
          {"skip-malformed", false},
          {"allow-duplicate-ids", false},
          {"max-document-bytes", true},
          {"json", false},
          {"add", false},
          {"unlabelled", true, true},
          {"em-lambda", true},
          {"em-iterations", true},
      },
      train_option_specs());
  return specs;
}

// What semi-supervised EM did (train --unlabelled).
internal::JsonValue em_json(const internal::TrainReport& report) {
  const internal::EmReport& em = report.em;
  internal::JsonValue json = internal::JsonValue::object();
  json.set("unlabelled_read",
           internal::JsonValue::number(static_cast<double>(report.unlabelled_read)));
  json.set("unlabelled_used", internal::JsonValue::number(static_cast<double>(em.unlabelled_docs)));
  json.set("lambda", internal::JsonValue::number(em.lambda));
  json.set("iterations", internal::JsonValue::number(em.iterations));
  json.set("converged", internal::JsonValue::boolean(em.converged));
  internal::JsonValue likelihood = internal::JsonValue::array();
  for (double value : em.log_likelihood) likelihood.push_back(internal::JsonValue::number(value));
  json.set("log_likelihood", std::move(likelihood));
  internal::JsonValue tried = internal::JsonValue::array();
  for (const auto& [lambda, accuracy] : em.lambda_accuracy) {
    internal::JsonValue entry = internal::JsonValue::object();
    entry.set("lambda", internal::JsonValue::number(lambda));
    entry.set("accuracy", internal::JsonValue::number(accuracy));
    tried.push_back(std::move(entry));
  }
  json.set("lambda_cross_validation", std::move(tried));
  json.set("seconds", internal::JsonValue::number(em.seconds));
  return json;
}

void print_em(std::ostream& out, const internal::TrainReport& report) {
  const internal::EmReport& em = report.em;
  std::string lambda_line;
  if (em.iterations == 0) {
    lambda_line = "not used: labelled documents alone did best in cross-validation";
  } else {
    lambda_line = "lambda = " + format_number(em.lambda) +
                  (em.lambda_accuracy.empty() ? "" : " (cross-validated)") + ", " +
                  std::to_string(em.iterations) + " iterations" +
                  (em.converged ? " (converged)" : " (iteration limit)");
  }
  print_table(
      out,
      {{"  unlabelled", std::to_string(em.unlabelled_docs) + " of " +
                            std::to_string(report.unlabelled_read) + " documents with known terms"},
       {"  nb em", lambda_line},
       {"  em seconds", format_fixed(em.seconds, 3)}},
      {});
  for (size_t i = 0; i < em.log_likelihood.size(); ++i) {
    out << "    iteration " << i << "  log-likelihood " << format_fixed(em.log_likelihood[i], 1)
        << '\n';
  }
}

int run_train(const std::vector<std::string>& words, std::ostream& out, Messages& messages) {
  const ParsedArgs args = parse_args(words, command_options());
  const std::string model_dir = args.required("model");
  require_inputs(args);
  const TrainOptions options = train_options(args);
  internal::UnlabelledInputs unlabelled;
  unlabelled.inputs = args.values("unlabelled");
  unlabelled.em.lambda = args.number("em-lambda", unlabelled.em.lambda, 1e-6, 1e6);
  unlabelled.em.max_iterations =
      static_cast<int>(args.integer("em-iterations", unlabelled.em.max_iterations, 1, 10000));
  if (unlabelled.inputs.empty() && (args.has("em-lambda") || args.has("em-iterations"))) {
    throw UsageError(std::string(args.has("em-lambda") ? "--em-lambda" : "--em-iterations") +
                     " needs --unlabelled INPUT");
  }
  internal::TrainReport report;
  if (args.has("add")) {
    if (!unlabelled.inputs.empty()) {
      throw UsageError(
          "--add refits from the training collection only; --unlabelled needs a "
          "new model (train without --add)");
    }
    // The model's own settings apply; options that would change them are refused.
    for (const OptionSpec& option : train_option_specs()) {
      if (args.has(option.name)) {
        throw UsageError("--add keeps the model's settings; --" + option.name +
                         " needs a new model (train without --add)");
      }
    }
    report =
        internal::add_to_model(args.positional(), model_dir, read_options(args), warn_to(messages));
  } else {
    report = internal::train_model(args.positional(), model_dir, options, read_options(args),
                                   warn_to(messages), unlabelled);
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
    json.set("decision", internal::JsonValue::string(decision_name(report.decision)));
    json.set("tuned", internal::JsonValue::boolean(report.tuned));
    json.set("knn_k", internal::JsonValue::number(report.knn_k));
    json.set("knn_similarity_power", internal::JsonValue::number(report.knn_similarity_power));
    json.set("rocchio_gamma", internal::JsonValue::number(report.rocchio_gamma));
    json.set("svm_c", internal::JsonValue::number(report.svm_c));
    json.set("logreg_c", internal::JsonValue::number(report.logreg_c));
    // What cross-validation compared (micro-F1 for any-of, accuracy for one-of).
    internal::JsonValue knn_tried = internal::JsonValue::array();
    for (const internal::KnnCandidate& candidate : report.knn_objective) {
      internal::JsonValue entry = internal::JsonValue::object();
      entry.set("k", internal::JsonValue::number(candidate.k));
      entry.set("similarity_power", internal::JsonValue::number(candidate.similarity_power));
      entry.set("objective", internal::JsonValue::number(candidate.objective));
      knn_tried.push_back(std::move(entry));
    }
    json.set("knn_cross_validation", std::move(knn_tried));
    internal::JsonValue gamma_tried = internal::JsonValue::array();
    for (const auto& [gamma, objective] : report.rocchio_gamma_objective) {
      internal::JsonValue entry = internal::JsonValue::object();
      entry.set("gamma", internal::JsonValue::number(gamma));
      entry.set("objective", internal::JsonValue::number(objective));
      gamma_tried.push_back(std::move(entry));
    }
    json.set("rocchio_cross_validation", std::move(gamma_tried));
    internal::JsonValue never = internal::JsonValue::object();
    for (size_t method = 0; method < report.never_assigned.size(); ++method) {
      internal::JsonValue names = internal::JsonValue::array();
      for (const std::string& name : report.never_assigned[method]) {
        names.push_back(internal::JsonValue::string(name));
      }
      never.set(method_name(all_methods()[method]), std::move(names));
    }
    json.set("never_assigned", std::move(never));
    if (!unlabelled.inputs.empty()) json.set("em", em_json(report));
    json.set("analyze_seconds", internal::JsonValue::number(report.analyze_seconds));
    json.set("fit_seconds", internal::JsonValue::number(report.fit_seconds));
    json.set("seconds", internal::JsonValue::number(report.total_seconds));
    out << json_output(json) << '\n';
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
               {"  decision", decision_name(report.decision)},
               {"  knn", "k = " + std::to_string(report.knn_k) + ", votes = similarity" +
                             (report.knn_similarity_power == 2 ? "^2" : "") +
                             (report.tuned ? " (cross-validated)" : "")},
               {"  rocchio", "gamma = " + format_number(report.rocchio_gamma) +
                                 (report.tuned ? " (cross-validated)" : "")},
               {"  linear", "svm C = " + format_number(report.svm_c) +
                                ", logreg C = " + format_number(report.logreg_c) +
                                (report.tuned ? " (cross-validated)" : "")},
               {"  seconds", format_fixed(report.total_seconds, 3) + " (analyze " +
                                 format_fixed(report.analyze_seconds, 3) + ", fit " +
                                 format_fixed(report.fit_seconds, 3) + ")"}},
              {});
  if (!unlabelled.inputs.empty()) print_em(out, report);
  // Categories the thresholds shut out deserve a word: any-of will never
  // assign them with the default method.
  const auto method_slot = static_cast<size_t>(report.default_method);
  if (report.decision == Decision::kAnyOf && method_slot < report.never_assigned.size() &&
      !report.never_assigned[method_slot].empty()) {
    const auto& names = report.never_assigned[method_slot];
    messages.warning(std::to_string(names.size()) + " of " + std::to_string(report.categories) +
                     " categories scored too low in cross-validation to get a threshold; " +
                     method_name(report.default_method) +
                     " any-of decisions never assign them (train --json lists them)");
  }
  return 0;
}

}  // namespace

Command train_command() {
  return {"train", "train a model directory from labelled documents",
          std::string(kUsage) + kTrainHelp + kExample, run_train};
}

}  // namespace autocat::cli
