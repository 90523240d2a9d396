// autocat train: labelled documents -> model directory.
#include <xapian.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "autocat/error.h"
#include "autocat/facets.h"
#include "classify/io/json_text.h"
#include "classify/train/model_size.h"
#include "classify/train/thresholds.h"
#include "classify/train/trainer.h"
#include "classify/train/tune_scores.h"
#include "indexer/commands.h"
#include "indexer/progress.h"

namespace autocat::cli {

namespace {

const char kUsage[] =
    "usage: autocat train --model DIR [OPTIONS] INPUT...\n"
    "       autocat train --model DIR --from-db DB --label-prefix P [OPTIONS] [INPUT...]\n"
    "       autocat train --model DIR --add [--retune] [INPUT...]\n"
    "\n"
    "Trains every classifier on the labelled documents of INPUT (JSON Lines with\n"
    "\"labels\", or a folder tree whose subfolder names are the labels) and writes\n"
    "the model directory DIR: a new generation (training database + model.autocat)\n"
    "that replaces the old model in one atomic step; a failed or killed run leaves\n"
    "the old model. One train at a time per DIR: a second one fails at once.\n"
    "A JSON Lines record with \"labels\": [] is an example of \"none of these\n"
    "categories\"; documents that give no labels (no \"labels\" key, a plain file, a\n"
    "file at a folder tree's root) are skipped and counted (see --keep-unlabelled).\n"
    "With --add, INPUT is added to DIR's existing training collection (same ids\n"
    "replace) and every classifier is fitted again with DIR's own settings; the\n"
    "documents learned and forgotten since (autocat learn / forget, kept in DIR's\n"
    "journal) are folded in first. --add without INPUT does only that: a refit.\n"
    "--add keeps DIR's cross-validated choices (default method, k, gamma, alpha,\n"
    "C, thresholds, calibrations) and only refits the classifiers, unless the\n"
    "categories or the decision mode changed; --retune cross-validates again.\n"
    "Decision thresholds are tuned per category by 5-fold cross-validation.\n";

const char kExample[] =
    "\n"
    "example:\n"
    "  autocat train --model news.model --split train news.jsonl\n";

void define_options(OptionSet& options) {
  add_model_option(options,
                   "model directory to write (created if missing; the model in it is replaced; "
                   "a non-empty DIR that is not a model directory is refused)");
  options.flag("--add", "add INPUT to the model in DIR instead of replacing it");
  options.flag("--retune",
               "--add: cross-validate the settings again (as train does) instead of keeping "
               "the model's");
  add_reader_options(options, ReaderOptionSet{/*duplicate_ids=*/true, /*fields=*/true});
  options.value("--from-db", "DB",
                "also train from the documents of the Xapian database DB (an application's own "
                "labelled index); needs --label-prefix; ids are their Q terms, else their "
                "docids");
  options.value("--label-prefix", "P",
                "--from-db: a document's labels are its terms with prefix P (XC:Sports is "
                "\"Sports\"); documents without one are skipped unless --keep-unlabelled");
  options.value("--filter", "QUERY",
                "--from-db: only documents matching QUERY (Xapian QueryParser syntax; boolean "
                "fields category: and label: on prefix P, id: on Q; English stems)");
  options.value("--text-from", "WHERE",
                "--from-db: data (the document data, default), value:N (value slot N) or terms "
                "(the unprefixed terms, each repeated wdf times; use it on an autocat index "
                "database, whose data is only a title or snippet)");
  options.values("--unlabelled", "INPUT",
                 "also learn from INPUT's documents, labels ignored: multinomial NB (nb) is "
                 "fitted by EM (Nigam et al. 2000); kNN, Rocchio and the other NB variants do "
                 "not use them (repeatable; --split applies to them too)");
  options.values("--unlabelled-db", "DB",
                 "also learn, as --unlabelled does, from the documents of the Xapian database "
                 "DB (an application's index): their text from the slot autocat index "
                 "--store-text recorded, else the document data (repeatable)");
  options.value("--em-lambda", "L",
                "weight of the unlabelled documents (default: chosen by cross-validation from "
                "0, 0.01, 0.1, 0.3, 1)");
  options.value("--em-iterations", "N",
                "at most N EM iterations (default 20; stops earlier when the log-likelihood "
                "changes by less than 0.01%)");
  options.value("--time-budget", "SECONDS",
                "return within about SECONDS from the start (reading included) with the best "
                "selection found by then: cross-validation runs the cheap method families first "
                "and skips or stops those whose folds would not fit, the final fit's time held "
                "back; the summary says what ran and what was skipped (default: no limit)");
  options.flag("--json", "print the summary as one JSON object");
  add_progress_options(options,
                       "print each phase (reading, each analysis compared, cross-validation, "
                       "fitting, writing) to stderr: its count, rate and time left every 2 s, "
                       "and a line with its time when it ends");
  add_train_options(options, "training options");
}

// What semi-supervised EM did (train --unlabelled).
internal::Json em_json(const internal::TrainReport& report) {
  const internal::EmReport& em = report.em;
  internal::Json json = internal::Json::object();
  json["unlabelled_read"] = report.unlabelled_read;
  json["unlabelled_used"] = em.unlabelled_docs;
  json["lambda"] = em.lambda;
  json["iterations"] = em.iterations;
  json["converged"] = em.converged;
  internal::Json likelihood = internal::Json::array();
  for (double value : em.log_likelihood) likelihood.push_back(internal::Json(value));
  json["log_likelihood"] = std::move(likelihood);
  internal::Json tried = internal::Json::array();
  for (const auto& [lambda, accuracy] : em.lambda_accuracy) {
    internal::Json entry = internal::Json::object();
    entry["lambda"] = lambda;
    entry["accuracy"] = accuracy;
    tried.push_back(std::move(entry));
  }
  json["lambda_cross_validation"] = std::move(tried);
  json["seconds"] = em.seconds;
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

// --text-from: data, value:N or terms.
void parse_text_from(const std::string& spec, internal::DatabaseInput* database) {
  if (spec == "data") {
    database->text_from = internal::DatabaseText::kData;
  } else if (spec == "terms") {
    database->text_from = internal::DatabaseText::kTerms;
  } else if (spec.compare(0, 6, "value:") == 0 && spec.size() > 6 && spec.size() <= 16 &&
             spec.find_first_not_of("0123456789", 6) == std::string::npos &&
             std::stoull(spec.substr(6)) < Xapian::BAD_VALUENO) {
    database->text_from = internal::DatabaseText::kValue;
    database->value_slot = static_cast<unsigned>(std::stoull(spec.substr(6)));
  } else {
    throw UsageError("--text-from " + spec +
                     ": choose data, value:N (a value slot number) or terms");
  }
}

// --from-db and the options that go with it; nothing when absent.
void add_database_input(const ParsedArgs& args, internal::ReadOptions* read) {
  if (!args.has("from-db")) {
    for (const char* name : {"label-prefix", "filter", "text-from"}) {
      if (args.has(name)) throw UsageError(std::string("--") + name + " needs --from-db DB");
    }
    return;
  }
  internal::DatabaseInput database;
  database.path = args.value("from-db");
  if (!args.has("label-prefix")) {
    throw UsageError(
        "--from-db needs --label-prefix P, the prefix of the label terms (XC for "
        "an autocat index database)");
  }
  database.label_prefix = args.value("label-prefix");
  try {
    check_category_prefix(database.label_prefix);
  } catch (const InvalidArgumentError& e) {
    throw UsageError(std::string("--label-prefix: ") + e.what());
  }
  database.filter = args.value("filter");
  parse_text_from(args.value("text-from", "data"), &database);
  read->databases.push_back(std::move(database));
}

// "svm (cross-validated: accuracy 0.912)" or just the method's name.
std::string default_method_text(const internal::TrainReport& report) {
  std::string text = method_name(report.default_method);
  const auto slot = static_cast<size_t>(report.default_method);
  if (report.default_method_chosen && slot < report.method_objective.size()) {
    text += std::string(" (cross-validated: ") +
            (report.decision == Decision::kOneOf ? "accuracy " : "micro-F1 ") +
            format_fixed(report.method_objective[slot], 3) + ")";
  }
  if (report.tuned && !report.knn_keeps_up) {
    text += "; kNN left out of combo and of this choice: at this size its search walks about " +
            format_number(std::round(report.knn_postings_per_token)) +
            " postings per token of a document, past --knn-cost-limit " +
            format_number(report.knn_cost_limit) + ", and would slow indexing";
  }
  return text;
}

// The warning for categories any-of never assigns, named by why: the first
// kMaxNamed of them (the summary and train --json list all).
std::string never_assigned_text(const std::vector<internal::NeverAssigned>& categories,
                                uint32_t total, const std::string& method, double min_f1) {
  constexpr size_t kMaxNamed = 10;
  std::string text = std::to_string(categories.size()) + " of " + std::to_string(total) +
                     " categories get no threshold from cross-validation; " + method +
                     " any-of decisions never assign them.";
  size_t named = 0;
  for (const bool too_few : {false, true}) {
    std::string names;
    for (const internal::NeverAssigned& category : categories) {
      if (category.too_few_documents != too_few || named == kMaxNamed) continue;
      ++named;
      names += (names.empty() ? " " : ", ") + category.name + " (" +
               std::to_string(category.documents) +
               (category.documents == 1 ? " document)" : " documents)");
    }
    if (names.empty()) continue;
    text += too_few ? " Too few documents to calibrate a threshold:"
                    : " No threshold reached F1 " + format_number(min_f1) + " in cross-validation:";
    text += names + ".";
  }
  if (categories.size() > named) {
    text +=
        " And " + std::to_string(categories.size() - named) + " more (the summary names them all).";
  }
  return text;
}

// Why one category gets no threshold, in words: its few positive documents
// (with no other category's cut to borrow), or out-of-fold scores no cut of
// which reached a useful F1.
std::string never_assigned_reason(const internal::NeverAssigned& category, double min_f1) {
  if (category.too_few_documents) {
    return "too few positive training documents to calibrate a threshold: " +
           std::to_string(category.documents) + " (" + std::to_string(internal::kMinPositives) +
           " needed), and no other category's threshold to borrow";
  }
  return "no cut of its out-of-fold scores reached F1 " + format_number(min_f1) + " (" +
         count_of(category.documents, "positive training documents") +
         "), so its threshold is above every score";
}

// The summary's list of the categories any-of never assigns: each one on a
// line of its own, with why.
void print_never_assigned(std::ostream& out, const std::vector<internal::NeverAssigned>& categories,
                          uint32_t total, const std::string& method, double min_f1) {
  out << "  never assigned  " << categories.size() << " of " << total << " categories by " << method
      << " any-of decisions:\n";
  std::vector<std::vector<std::string>> rows;
  for (const internal::NeverAssigned& category : categories) {
    rows.push_back({"    " + category.name, never_assigned_reason(category, min_f1)});
  }
  print_table(out, rows, {});
}

// "5-fold cross-validation on all 11314 documents", or on a sample of a
// large collection, or "none"; and how many of them are copies.
std::string tuning_text(const internal::TrainReport& report) {
  if (report.settings_kept) {
    return "kept from the model (no cross-validation; train --add --retune runs it)";
  }
  if (!report.tuned) return "none (defaults, no thresholds)";
  std::string text = std::to_string(report.threshold_folds) + "-fold cross-validation on ";
  text += report.tuned_on_sample
              ? "a sample of " + std::to_string(report.tuned_on_documents) +
                    " documents (--tuning-sample)"
              : "all " + std::to_string(report.tuned_on_documents) + " documents";
  if (!report.retune_reason.empty()) text += "; settings not kept: " + report.retune_reason;
  if (report.tuned_pruned_candidates != 0) {
    text += "; " + std::to_string(report.tuned_pruned_candidates) +
            " candidate settings dropped after the first folds (clearly behind the best)";
  }
  if (report.tuned_copied_documents != 0) {
    text += "; " + std::to_string(report.tuned_copied_documents) +
            " repeat an earlier one's terms, so its scores are optimistic for new text "
            "(eval --folds holds copies out together)";
  }
  return text;
}

// "nb, cnb" from the methods of one family's run.
std::string method_list(const std::vector<Method>& methods) {
  std::string text;
  for (Method method : methods) text += (text.empty() ? "" : ", ") + method_name(method);
  return text;
}

// Which method families cross-validation ran (folds, time) and which it
// skipped or stopped under --time-budget, and why.
std::string runs_text(const internal::TrainReport& report) {
  std::string ran, skipped;
  for (const internal::TuneRun& run : report.tune_runs) {
    if (run.used) {
      ran += (ran.empty() ? "" : "; ") + method_list(run.methods) + " (" +
             std::to_string(run.folds_run) + " folds, " + format_fixed(run.seconds, 1) + " s)";
    } else {
      skipped += (skipped.empty() ? "" : "; ") + method_list(run.methods) + " " + run.reason;
    }
  }
  std::string text = ran.empty() ? "none" : ran;
  if (!skipped.empty()) text += "; not cross-validated: " + skipped;
  if (report.time_budget > 0) text += " (--time-budget " + format_number(report.time_budget) + ")";
  return text;
}

// The cross-validation runs for train --json.
internal::Json runs_json(const internal::TrainReport& report) {
  internal::Json runs = internal::Json::array();
  for (const internal::TuneRun& run : report.tune_runs) {
    internal::Json entry = internal::Json::object();
    internal::Json methods = internal::Json::array();
    for (Method method : run.methods) methods.push_back(internal::Json(method_name(method)));
    entry["methods"] = std::move(methods);
    entry["folds_run"] = run.folds_run;
    entry["folds"] = run.folds;
    entry["seconds"] = run.seconds;
    entry["used"] = run.used;
    entry["skipped_reason"] = run.reason;
    runs.push_back(std::move(entry));
  }
  return runs;
}

// How the settings of `methods` were chosen: " (cross-validated)", " (kept)"
// by train --add, or nothing (a default or an option); " (not
// cross-validated)" or " (cross-validated: svm)" when --methods or
// --time-budget left some of them out.
std::string tuned_suffix(const internal::TrainReport& report, const std::vector<Method>& methods) {
  if (report.settings_kept) return " (kept)";
  if (!report.tuned) return "";
  std::vector<Method> tuned;
  for (Method method : methods) {
    const auto slot = static_cast<size_t>(method);
    if (slot < report.method_objective.size() && report.method_objective[slot] >= 0) {
      tuned.push_back(method);
    }
  }
  if (tuned.size() == methods.size()) return " (cross-validated)";
  if (tuned.empty()) return " (not cross-validated)";
  return " (cross-validated: " + method_list(tuned) + ")";
}

// "alpha nb = 0.1 on tf-idf, bnb = 0.03, cnb = 0.3 (cross-validated)".
// "k = 150, votes = similarity^2, terms weigh idf x rf^0.5, double-log tf
// (cross-validated)"
std::string knn_text(const internal::TrainReport& report) {
  std::string text = "k = " + std::to_string(report.knn_k) + ", votes = similarity";
  if (report.knn_similarity_power == 2) text += "^2";
  if (report.knn_concentration > 0) {
    text += ", terms weigh idf x rf^" + format_number(report.knn_concentration);
  }
  if (report.knn_tf != internal::KnnTf::kSublinear) {
    text += std::string(", ") + internal::knn_tf_name(report.knn_tf) + " tf";
  }
  return text + tuned_suffix(report, {Method::kKnn});
}

std::string nb_alpha_text(const internal::TrainReport& report) {
  std::string text = "alpha";
  const std::vector<Method>& nb_methods = internal::naive_bayes_methods();
  for (size_t m = 0; m < nb_methods.size() && m < report.nb_alpha.size(); ++m) {
    text += std::string(m == 0 ? " " : ", ") + method_name(nb_methods[m]) + " = " +
            format_number(report.nb_alpha[m]);
    if (m < report.nb_tfidf.size() && report.nb_tfidf[m]) text += " on tf-idf";
  }
  const bool tried = std::any_of(report.nb_alpha_objective.begin(), report.nb_alpha_objective.end(),
                                 [](const auto& tried) { return tried.size() > 1; });
  if (report.settings_kept) {
    text += " (kept)";
  } else if (tried) {
    text += tuned_suffix(report, nb_methods);
  }
  return text;
}

// "23 categories of 2-4 documents: own cuts accepting about 1x their count
// of out-of-fold scores with knn, svm, 1.5x with logreg; the others' median
// cut with rocchio, nb, bnb, cnb, combo (cross-validated)", or "" when no
// category is that rare or nothing was tuned.
std::string rare_categories_text(const internal::TrainReport& report) {
  if (report.rare_categories == 0 || report.rare_cut_ratio.empty()) return "";
  // The methods by ratio, in the order the ratios first appear.
  std::vector<std::pair<double, std::string>> own;
  std::string borrowed;
  for (size_t m = 0; m < report.rare_cut_ratio.size() && m < all_methods().size(); ++m) {
    const double ratio = report.rare_cut_ratio[m];
    const std::string name = method_name(all_methods()[m]);
    // Methods not cross-validated (--methods, --time-budget) have no cuts.
    if (m < report.method_objective.size() && report.method_objective[m] < 0) continue;
    if (!(ratio > 0)) {
      borrowed += (borrowed.empty() ? "" : ", ") + name;
      continue;
    }
    const auto same = std::find_if(own.begin(), own.end(),
                                   [&](const auto& group) { return group.first == ratio; });
    if (same == own.end()) {
      own.push_back({ratio, name});
    } else {
      same->second += ", " + name;
    }
  }
  std::string text = std::to_string(report.rare_categories) + " categories of " +
                     std::to_string(internal::kMinRankCutPositives) + "-" +
                     std::to_string(internal::kMinPositives - 1) + " documents: ";
  for (size_t i = 0; i < own.size(); ++i) {
    text += i == 0 ? "own cuts accepting about " : ", ";
    text += format_number(own[i].first) + "x" +
            (i == 0 ? " their count of out-of-fold scores" : std::string()) + " with " +
            own[i].second;
  }
  if (!own.empty() && !borrowed.empty()) text += "; ";
  if (!borrowed.empty()) text += "the others' median cut with " + borrowed;
  // The variants of these cuts the folds preferred (tune_scores.h).
  std::string variants;
  for (size_t m = 0; m < report.rare_cut_variant.size() && m < all_methods().size(); ++m) {
    if (report.rare_cut_variant[m] <= internal::kRareCutsStandard) continue;
    variants += (variants.empty() ? "" : ", ") +
                std::string(internal::rare_cut_variant_name(report.rare_cut_variant[m])) +
                " with " + method_name(all_methods()[m]);
  }
  if (!variants.empty()) text += "; variant " + variants;
  return text + " (cross-validated)";
}

int run_train(const ParsedArgs& args, std::ostream& out, Messages& messages) {
  apply_progress_options(args, messages, stderr_is_terminal());
  const Stopwatch clock;
  // Each phase: throttled lines while it runs, one when it ends.
  const internal::TrainProgressCallback on_progress = [&](const internal::TrainProgress& at) {
    if (!messages.progress_on()) return;
    if (!at.note.empty()) {
      messages.progress_note(at.note, clock.seconds());
    } else if (at.finished) {
      messages.progress_note(phase_done_line(at.phase, at.unit, at.done, at.seconds, at.detail),
                             clock.seconds());
    } else {
      messages.progress_text(
          phase_line(at.phase, at.unit, at.done, at.total, at.seconds, at.detail), clock.seconds());
    }
  };
  const std::string model_dir = args.required("model");
  internal::ReadOptions read = read_options(args);
  add_database_input(args, &read);
  // train --add with no input refits: it folds in the journal of documents
  // learned and forgotten since (autocat learn / forget).
  if (read.databases.empty() && !args.has("add")) require_inputs(args);
  TrainOptions options = train_options(args);
  if (args.has("time-budget")) {
    options.time_budget = args.number("time-budget", 0, 0.001, 1e9);
  }
  internal::UnlabelledInputs unlabelled;
  unlabelled.inputs = args.values("unlabelled");
  for (const std::string& path : args.values("unlabelled-db")) {
    internal::DatabaseInput database;
    database.path = path;
    database.labelled = false;
    database.text_from = internal::DatabaseText::kStored;
    unlabelled.databases.push_back(std::move(database));
  }
  unlabelled.em.lambda = args.number("em-lambda", unlabelled.em.lambda, 1e-6, 1e6);
  unlabelled.em.max_iterations =
      static_cast<int>(args.integer("em-iterations", unlabelled.em.max_iterations, 1, 10000));
  if (unlabelled.empty() && (args.has("em-lambda") || args.has("em-iterations"))) {
    throw UsageError(std::string(args.has("em-lambda") ? "--em-lambda" : "--em-iterations") +
                     " needs --unlabelled INPUT or --unlabelled-db DB");
  }
  internal::TrainReport report;
  if (args.has("retune") && !args.has("add")) {
    throw UsageError("--retune goes with --add; train without --add always cross-validates");
  }
  if (args.has("add")) {
    if (!unlabelled.empty()) {
      throw UsageError(
          "--add refits from the training collection only; --unlabelled and "
          "--unlabelled-db need a new model (train without --add)");
    }
    // The model's own settings apply; options that would change them are refused.
    if (args.has("time-budget")) {
      throw UsageError(
          "--add keeps the model's settings; --time-budget needs a new model (train "
          "without --add)");
    }
    for (const std::string& name : train_option_names()) {
      if (args.has(name)) {
        throw UsageError("--add keeps the model's settings; --" + name +
                         " needs a new model (train without --add)");
      }
    }
    report = internal::add_to_model(args.positional(), model_dir, read, warn_to(messages),
                                    on_progress, args.has("retune"));
  } else {
    report = internal::train_model(args.positional(), model_dir, options, read, warn_to(messages),
                                   unlabelled, on_progress);
  }
  // The collection trained on (with --add, more than this run read).
  messages.progress_done("trained on", report.documents, clock.seconds());
  if (report.skipped_unlabelled != 0) {
    messages.warning("skipped " + std::to_string(report.skipped_unlabelled) +
                     " documents without labels");
  }

  if (args.has("json")) {
    internal::Json json = internal::Json::object();
    json["model"] = model_dir;
    json["documents"] = report.documents;
    json["added"] = report.added;
    json["journal_learned"] = report.journal_learned;
    json["journal_forgotten"] = report.journal_forgotten;
    json["skipped_unlabelled"] = report.skipped_unlabelled;
    json["skipped_empty"] = report.skipped_empty;
    json["categories"] = report.categories;
    json["terms"] = report.terms;
    json["selected_terms"] = report.selected_terms;
    json["ngrams"] = report.ngrams;
    json["stemmer"] = report.stemmer;
    json["mean_terms_per_document"] = report.mean_tokens;
    json["analysis_cross_validated"] = report.analysis_chosen;
    json["analysis_sample"] = internal::Json(static_cast<double>(report.analysis_sample));
    json["analysis_not_compared"] = report.analysis_not_compared;
    json["analysis_svm_c"] =
        report.analysis_chosen ? internal::Json(report.analysis_svm_c) : internal::Json();
    internal::Json analyses = internal::Json::object();
    for (const auto& [name, objective] : report.analysis_objective) {
      analyses[name] = objective;
    }
    json["analysis_cross_validation"] = std::move(analyses);
    json["default_method"] = method_name(report.default_method);
    json["decision"] = decision_name(report.decision);
    json["tuned"] = report.tuned;
    json["settings_kept"] = report.settings_kept;
    json["retune_reason"] = report.retune_reason;
    json["cross_validations"] = report.cross_validations;
    internal::Json methods_asked = internal::Json::array();
    for (Method method : report.methods.empty() ? all_methods() : report.methods) {
      methods_asked.push_back(internal::Json(method_name(method)));
    }
    json["methods"] = std::move(methods_asked);
    json["time_budget"] =
        report.time_budget > 0 ? internal::Json(report.time_budget) : internal::Json();
    json["cross_validation_runs"] = runs_json(report);
    internal::Json untuned = internal::Json::array();
    for (size_t m = 0; m < all_methods().size(); ++m) {
      if (m < report.method_objective.size() && report.method_objective[m] >= 0) continue;
      untuned.push_back(internal::Json(method_name(all_methods()[m])));
    }
    json["methods_not_cross_validated"] = std::move(untuned);
    json["tuned_on_sample"] = report.tuned_on_sample;
    json["tuned_on_documents"] = report.tuned_on_documents;
    json["tuned_copied_documents"] =
        internal::Json(static_cast<double>(report.tuned_copied_documents));
    json["tuned_pruned_candidates"] =
        internal::Json(static_cast<double>(report.tuned_pruned_candidates));
    json["knn_k"] = report.knn_k;
    json["knn_similarity_power"] = report.knn_similarity_power;
    json["knn_concentration"] = report.knn_concentration;
    json["knn_tf"] = internal::knn_tf_name(report.knn_tf);
    json["knn_search"] = knn_search_name(report.knn_search);
    json["rocchio_gamma"] = report.rocchio_gamma;
    json["svm_c"] = report.svm_c;
    json["logreg_c"] = report.logreg_c;
    json["default_method_cross_validated"] = report.default_method_chosen;
    json["knn_postings_per_token"] = report.knn_postings_per_token;
    json["knn_cost_limit"] = report.knn_cost_limit;
    json["knn_keeps_up_with_indexing"] = report.knn_keeps_up;
    internal::Json method_objectives = internal::Json::object();
    for (size_t m = 0; m < report.method_objective.size() && m < all_methods().size(); ++m) {
      if (report.method_objective[m] < 0) continue;
      method_objectives[method_name(all_methods()[m])] = report.method_objective[m];
    }
    json["method_cross_validation"] = std::move(method_objectives);
    internal::Json alphas = internal::Json::object();
    internal::Json alphas_tried = internal::Json::object();
    const std::vector<Method>& nb_methods = internal::naive_bayes_methods();
    for (size_t m = 0; m < nb_methods.size() && m < report.nb_alpha.size(); ++m) {
      alphas[method_name(nb_methods[m])] = report.nb_alpha[m];
      internal::Json tried = internal::Json::array();
      if (m < report.nb_alpha_objective.size()) {
        for (const auto& [alpha, objective] : report.nb_alpha_objective[m]) {
          internal::Json entry = internal::Json::object();
          entry["alpha"] = alpha;
          entry["objective"] = objective;
          tried.push_back(std::move(entry));
        }
      }
      alphas_tried[method_name(nb_methods[m])] = std::move(tried);
    }
    json["nb_alpha"] = std::move(alphas);
    internal::Json features = internal::Json::object();
    for (size_t m = 0; m < nb_methods.size() && m < report.nb_tfidf.size(); ++m) {
      features[method_name(nb_methods[m])] = report.nb_tfidf[m] ? "tfidf" : "counts";
    }
    json["nb_features"] = std::move(features);
    json["nb_alpha_cross_validation"] = std::move(alphas_tried);
    // What cross-validation compared (micro-F1 for any-of, accuracy for one-of).
    internal::Json knn_tried = internal::Json::array();
    for (const internal::KnnCandidate& candidate : report.knn_objective) {
      internal::Json entry = internal::Json::object();
      entry["k"] = candidate.k;
      entry["similarity_power"] = candidate.similarity_power;
      entry["concentration"] = candidate.concentration;
      entry["tf"] = internal::knn_tf_name(candidate.tf);
      entry["objective"] = candidate.objective;
      knn_tried.push_back(std::move(entry));
    }
    json["knn_cross_validation"] = std::move(knn_tried);
    internal::Json gamma_tried = internal::Json::array();
    for (const auto& [gamma, objective] : report.rocchio_gamma_objective) {
      internal::Json entry = internal::Json::object();
      entry["gamma"] = gamma;
      entry["objective"] = objective;
      gamma_tried.push_back(std::move(entry));
    }
    json["rocchio_cross_validation"] = std::move(gamma_tried);
    json["rare_categories"] = report.rare_categories;
    internal::Json rare_cuts = internal::Json::object();
    for (size_t m = 0; m < report.rare_cut_ratio.size() && m < all_methods().size(); ++m) {
      if (report.rare_cut_ratio[m] >= 0) {
        rare_cuts[method_name(all_methods()[m])] = report.rare_cut_ratio[m];
      }
    }
    json["rare_cut_ratio"] = std::move(rare_cuts);
    internal::Json rare_variants = internal::Json::object();
    for (size_t m = 0; m < report.rare_cut_variant.size() && m < all_methods().size(); ++m) {
      if (report.rare_cut_variant[m] >= 0) {
        rare_variants[method_name(all_methods()[m])] =
            internal::rare_cut_variant_name(report.rare_cut_variant[m]);
      }
    }
    json["rare_cut_variant"] = std::move(rare_variants);
    internal::Json never = internal::Json::object(), details = internal::Json::object();
    for (size_t method = 0; method < report.never_assigned.size(); ++method) {
      internal::Json names = internal::Json::array();
      for (const internal::NeverAssigned& category : report.never_assigned[method]) {
        names.push_back(internal::Json(category.name));
      }
      never[method_name(all_methods()[method])] = std::move(names);
      internal::Json entries = internal::Json::array();
      for (const internal::NeverAssigned& category : report.never_assigned[method]) {
        internal::Json entry = internal::Json::object();
        entry["name"] = category.name;
        entry["documents"] = category.documents;
        entry["reason"] = category.too_few_documents ? "too_few_documents" : "no_useful_threshold";
        entries.push_back(std::move(entry));
      }
      details[method_name(all_methods()[method])] = std::move(entries);
    }
    json["never_assigned"] = std::move(never);
    json["never_assigned_reasons"] = std::move(details);
    if (!unlabelled.empty()) json["em"] = em_json(report);
    json["analyze_seconds"] = report.analyze_seconds;
    json["fit_seconds"] = report.fit_seconds;
    json["seconds"] = report.total_seconds;
    json["expected_model_bytes"] =
        report.expected_model_file_bytes + report.expected_knn_index_bytes;
    json["model_bytes"] = report.model_file_bytes + report.knn_index_bytes;
    internal::Json phases = internal::Json::array();
    for (const internal::TrainPhase& phase : report.phases) {
      internal::Json entry = internal::Json::object();
      entry["phase"] = phase.phase;
      entry["detail"] = phase.detail;
      entry["count"] = phase.count;
      entry["unit"] = phase.unit;
      entry["seconds"] = phase.seconds;
      phases.push_back(std::move(entry));
    }
    json["phases"] = std::move(phases);
    out << json_output(json) << '\n';
    return 0;
  }

  out << (args.has("add") ? "added " + count_of(report.added, "documents") + " to model "
                          : std::string("trained model "))
      << model_dir << '\n';
  if (report.model_file_bytes != 0) {
    out << "  model files  "
        << internal::format_bytes(report.model_file_bytes + report.knn_index_bytes)
        << " (expected " + internal::format_bytes(report.expected_model_file_bytes +
                                                  report.expected_knn_index_bytes)
        << ")\n";
  }
  if (report.journal_learned != 0 || report.journal_forgotten != 0) {
    out << "  folded in " << report.journal_learned << " learned and " << report.journal_forgotten
        << " forgotten documents (autocat learn / forget)\n";
  }
  std::string skipped;
  if (report.skipped_unlabelled != 0 || report.skipped_empty != 0) {
    skipped = " (skipped " + std::to_string(report.skipped_unlabelled) + " unlabelled, " +
              std::to_string(report.skipped_empty) + " without terms)";
  }
  std::string terms = std::to_string(report.terms);
  if (options.num_features > 0)
    terms += " (" + std::to_string(report.selected_terms) + " selected)";
  if (report.stemmer != "none") terms += ", stemmed (" + report.stemmer + ")";
  if (report.ngrams > 1) terms += ", words and " + std::to_string(report.ngrams) + "-grams";
  // Short texts: every analysis cross-validation compared.
  std::string analysis = "as given";
  if (!report.analysis_chosen && report.mean_tokens > kShortTextMeanTokens) {
    analysis += " (" + format_fixed(report.mean_tokens, 1) +
                " terms a document; analyses are compared for short texts only)";
  } else if (!report.analysis_chosen && report.mean_tokens > 0 &&
             report.documents < kMinShortTextDocuments) {
    analysis +=
        " (analyses are compared from " + std::to_string(kMinShortTextDocuments) + " documents on)";
  }
  if (!report.analysis_not_compared.empty()) {
    analysis +=
        " (short texts, but analyses were not compared: " + report.analysis_not_compared + ")";
  }
  if (report.analysis_chosen) {
    analysis = "the best for short texts by svm's cross-validation at C = " +
               format_number(report.analysis_svm_c);
    if (report.analysis_sample != 0) {
      analysis +=
          " (on a uniform sample of " + std::to_string(report.analysis_sample) + " documents)";
    }
    analysis += ":";
    for (size_t i = 0; i < report.analysis_objective.size(); ++i) {
      analysis += (i == 0 ? " " : ", ") + report.analysis_objective[i].first + " " +
                  format_fixed(report.analysis_objective[i].second, 3);
    }
  }
  std::vector<std::vector<std::string>> rows = {
      {"  documents", std::to_string(report.documents) + skipped},
      {"  categories", std::to_string(report.categories)},
      {"  terms", terms},
      {"  analysis", analysis},
      {"  default method", default_method_text(report)},
      {"  decision", decision_name(report.decision)},
      {"  knn", knn_text(report)},
      {"  rocchio",
       "gamma = " + format_number(report.rocchio_gamma) + tuned_suffix(report, {Method::kRocchio})},
      {"  naive bayes", nb_alpha_text(report)},
      {"  linear", "svm C = " + format_number(report.svm_c) +
                       ", logreg C = " + format_number(report.logreg_c) +
                       tuned_suffix(report, {Method::kSvm, Method::kLogreg})},
      {"  tuning", tuning_text(report)}};
  if (!report.tune_runs.empty()) rows.push_back({"  tuning runs", runs_text(report)});
  const std::string rare = rare_categories_text(report);
  if (!rare.empty()) rows.push_back({"  rare categories", rare});
  rows.push_back({"  seconds", format_fixed(report.total_seconds, 3) + " (analyze " +
                                   format_fixed(report.analyze_seconds, 3) + ", fit " +
                                   format_fixed(report.fit_seconds, 3) + ")"});
  print_table(out, rows, {});
  if (!unlabelled.empty()) print_em(out, report);
  // Categories the thresholds shut out deserve a word: any-of will never
  // assign them with the default method.
  const auto method_slot = static_cast<size_t>(report.default_method);
  if (report.decision == Decision::kAnyOf && method_slot < report.never_assigned.size() &&
      !report.never_assigned[method_slot].empty()) {
    // The floor of a cut of its own: lower where the folds chose the
    // looser-floor variant of the rare categories' cuts.
    const int variant = method_slot < report.rare_cut_variant.size()
                            ? report.rare_cut_variant[method_slot]
                            : internal::kRareCutsStandard;
    const double min_f1 = internal::min_useful_f1(variant);
    print_never_assigned(out, report.never_assigned[method_slot], report.categories,
                         method_name(report.default_method), min_f1);
    messages.warning(never_assigned_text(report.never_assigned[method_slot], report.categories,
                                         method_name(report.default_method), min_f1));
  }
  return 0;
}

}  // namespace

Command train_command() {
  return {"train",  "train a model directory from labelled documents",
          kUsage,   define_options,
          kExample, run_train};
}

}  // namespace autocat::cli
