// autocat features: the most useful terms of each category (IIR 13.5).
#include <xapian.h>

#include <algorithm>
#include <filesystem>
#include <ostream>

#include "autocat/error.h"
#include "classify/corpus/feature_selection.h"
#include "classify/corpus/training_collection.h"
#include "classify/decide/categorizer.h"
#include "classify/io/json_text.h"
#include "classify/methods/linear.h"
#include "classify/model/model_io.h"
#include "indexer/commands.h"

namespace autocat::cli {

namespace {

const char kUsage[] =
    "usage: autocat features --model DIR [OPTIONS]\n"
    "\n"
    "Ranks the terms of the model's training collection by their utility for each\n"
    "category (IIR 13.5), computed from the term/category document counts, and\n"
    "prints the best ones. Shows what a classifier can learn from.\n";

const char kExample[] =
    "\n"
    "example:\n"
    "  autocat features --model news.model --category sports --select chi2 --top 20\n";

void define_options(OptionSet& options) {
  add_model_option(options);
  options.value("--category", "C", "only category C (default: every category)");
  options.value("--select", "MEASURE",
                "mi (expected mutual information, bits; default), chi2, df (document "
                "frequency), kl (KL divergence), or svm / logreg: the model's weights (largest "
                "toward the category)");
  options.value("--top", "N", "terms per category (default 10)");
  options.flag("--json",
               "one JSON object: {\"select\", \"categories\": [{\"name\", \"documents\", "
               "\"terms\": [{\"term\", \"utility\"}]}]}");
}

internal::TrainingCorpus load_corpus(const std::string& model_dir,
                                     const internal::ModelPaths& paths) {
  return internal::read_training_corpus(paths.training_db, model_dir);
}

int run_features(const ParsedArgs& args, std::ostream& out, Messages& messages) {
  const std::string model_dir = args.required("model");
  const std::string select = args.value("select", "mi");
  const bool linear = select == "svm" || select == "logreg";
  const FeatureSelection measure = linear ? FeatureSelection::kNone : parse_selection(select);
  const int top = static_cast<int>(args.integer("top", 10, 1, 1000000));
  if (!args.positional().empty()) {
    throw UsageError("unexpected argument '" + args.positional().front() + "'");
  }

  // Opening the model first gives the clear messages for a missing or bad model.
  const internal::Categorizer categorizer(model_dir);
  report_model_warnings(categorizer, messages);
  const internal::TrainingCorpus corpus = load_corpus(model_dir, categorizer.paths());

  std::vector<uint32_t> selected;
  if (args.has("category")) {
    const std::string name = args.value("category");
    auto it = std::find(corpus.categories.begin(), corpus.categories.end(), name);
    if (it == corpus.categories.end()) {
      throw InvalidArgumentError(model_dir + ": unknown category '" + name +
                                 "'; known: " + join(corpus.categories));
    }
    selected.push_back(static_cast<uint32_t>(it - corpus.categories.begin()));
  } else {
    for (uint32_t c = 0; c < corpus.num_categories(); ++c) selected.push_back(c);
  }

  std::vector<double> utility;
  if (linear) {
    const internal::ModelState& model = categorizer.core();
    const internal::LinearModel& weights =
        categorizer.linear(select == "svm" ? Method::kSvm : Method::kLogreg);
    if (!weights.trained()) {
      throw InvalidArgumentError(model_dir + ": this model has no " + select +
                                 " weights (written by an older autocat); train it again");
    }
    if (corpus.terms != model.terms) {
      throw ModelFormatError(model_dir +
                             ": the training database has changed since the model "
                             "was trained; run autocat train again");
    }
    const std::vector<float> dense = internal::dense_term_weights(weights);
    utility.assign(dense.begin(), dense.end());
  } else {
    utility = internal::term_class_utility(corpus, measure);
  }
  const std::vector<uint32_t> doc_counts = corpus.category_doc_counts();
  const std::string measure_name = linear ? select : feature_selection_name(measure);

  if (args.has("json")) {
    internal::Json json = internal::Json::object();
    json["model"] = model_dir;
    json["select"] = measure_name;
    json["documents"] = internal::Json(corpus.num_docs());
    internal::Json categories = internal::Json::array();
    for (uint32_t c : selected) {
      internal::Json entry = internal::Json::object();
      entry["name"] = corpus.categories[c];
      entry["documents"] = doc_counts[c];
      internal::Json terms = internal::Json::array();
      for (const internal::RankedTerm& term : internal::rank_terms(corpus, utility, c, top)) {
        internal::Json item = internal::Json::object();
        item["term"] = term.term;
        item["utility"] = term.utility;
        terms.push_back(std::move(item));
      }
      entry["terms"] = std::move(terms);
      categories.push_back(std::move(entry));
    }
    json["categories"] = std::move(categories);
    out << json_output(json) << '\n';
    return 0;
  }

  out << "top " << top << " terms by " << measure_name << " (" << corpus.num_docs()
      << " training documents, " << corpus.num_terms() << " terms)\n";
  for (uint32_t c : selected) {
    out << '\n' << one_line(corpus.categories[c]) << " (" << doc_counts[c] << " documents)\n";
    std::vector<std::vector<std::string>> rows;
    for (const internal::RankedTerm& term : internal::rank_terms(corpus, utility, c, top)) {
      rows.push_back({"  " + term.term, format_number(term.utility)});
    }
    print_table(out, rows, {});
  }
  return 0;
}

}  // namespace

Command features_command() {
  return {"features", "show the most useful terms of each category (mi, chi2, df, kl, svm, logreg)",
          kUsage,     define_options,
          kExample,   run_features};
}

}  // namespace autocat::cli
