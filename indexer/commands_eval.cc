// autocat eval: accuracy, F1 and speed of a model on labelled documents.
#include <algorithm>
#include <map>
#include <ostream>

#include "autocat/error.h"
#include "classify/categorizer.h"
#include "classify/evaluation.h"
#include "classify/json.h"
#include "indexer/commands.h"

namespace autocat::cli {

namespace {

const char kUsage[] =
    "usage: autocat eval --model DIR [OPTIONS] INPUT...\n"
    "\n"
    "Classifies the labelled documents of INPUT with the model DIR and compares the\n"
    "assigned categories with the labels: accuracy (assigned set == labels), micro-\n"
    "and macro-averaged F1, per-category precision/recall/F1 and the confusion\n"
    "matrix. Documents without labels are skipped. Labels the model does not know\n"
    "count as misses. The speed measured (docs/s) is classification alone: reading,\n"
    "analysis, loading the model and building kNN's index are excluded.\n"
    "\n"
    "options:\n"
    "  --model DIR          model directory written by autocat train\n"
    "  --method M           knn, rocchio, nb, bnb, cnb (default: the model's)\n"
    "  --k N                kNN: neighbours that vote (default 50)\n";

const char kUsageTail[] =
    "  --split NAME         use only JSON Lines records whose \"split\" is NAME\n"
    "  --skip-malformed     skip malformed JSON lines with a warning instead of failing\n"
    "  --json               one JSON object: method, documents, accuracy, macro_f1,\n"
    "                       micro_f1, classify_seconds, docs_per_second,\n"
    "                       analyze_seconds, per_category, confusion\n"
    "  -h, --help           show this help\n"
    "\n"
    "example:\n"
    "  autocat eval --model news.model --split test news.jsonl\n";

const std::vector<OptionSpec>& command_options() {
  static const std::vector<OptionSpec> specs = with_options(
      {
          {"model", true},
          {"method", true},
          {"k", true},
          {"split", true},
          {"json", false},
          {"skip-malformed", false},
      },
      decision_option_specs());
  return specs;
}

// Confusion matrices wider than this are left out of the human output.
constexpr size_t kMaxConfusionCategories = 20;

struct LabelledDocument {
  internal::DocumentTerms terms;
  std::vector<uint32_t> truth;  // indexes into the evaluation's categories
};

// The evaluation's categories: the model's, then labels the model lacks.
class CategoryIndex {
 public:
  explicit CategoryIndex(const std::vector<std::string>& model_categories)
      : names_(model_categories), model_size_(model_categories.size()) {
    for (size_t i = 0; i < names_.size(); ++i) index_[names_[i]] = static_cast<uint32_t>(i);
  }
  uint32_t find_or_add(const std::string& name) {
    auto [it, added] = index_.emplace(name, static_cast<uint32_t>(names_.size()));
    if (added) names_.push_back(name);
    return it->second;
  }
  bool known_to_model(uint32_t index) const { return index < model_size_; }
  uint32_t at(const std::string& name) const { return index_.at(name); }
  const std::vector<std::string>& names() const { return names_; }
  std::vector<std::string> unknown_names() const {
    return std::vector<std::string>(names_.begin() + static_cast<std::ptrdiff_t>(model_size_),
                                    names_.end());
  }

 private:
  std::vector<std::string> names_;
  size_t model_size_;
  std::map<std::string, uint32_t> index_;
};

internal::JsonValue json_number(double value) { return internal::JsonValue::number(value); }

void print_confusion(std::ostream& out, const internal::Evaluation& evaluation) {
  const std::vector<std::string>& names = evaluation.categories();
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"true \\ assigned"};
  header.insert(header.end(), names.begin(), names.end());
  header.push_back("(none)");
  rows.push_back(header);
  std::vector<size_t> right;
  for (size_t c = 1; c < header.size(); ++c) right.push_back(c);
  for (size_t t = 0; t < names.size(); ++t) {
    std::vector<std::string> row = {names[t]};
    for (uint64_t count : evaluation.confusion()[t]) row.push_back(std::to_string(count));
    rows.push_back(row);
  }
  print_table(out, rows, right);
}

int run_eval(const std::vector<std::string>& words, std::ostream& out, Messages& messages) {
  const ParsedArgs args = parse_args(words, command_options());
  const std::string model_dir = args.required("model");
  require_inputs(args);
  const ClassifyOptions options = classify_options(args);

  const internal::Categorizer categorizer(model_dir);
  const Method method = options.method.value_or(categorizer.default_method());
  CategoryIndex categories(categorizer.categories());

  // Read and analyze everything first, so the timing below is classification only.
  std::vector<LabelledDocument> documents;
  uint64_t unlabelled = 0, unknown_label_documents = 0;
  double analyze_seconds = 0;
  auto on_document = [&](internal::InputDocument&& doc) {
    if (doc.labels.empty()) {
      ++unlabelled;
      return;
    }
    LabelledDocument labelled;
    bool unknown = false;
    for (const std::string& label : doc.labels) {
      const uint32_t index = categories.find_or_add(label);
      unknown = unknown || !categories.known_to_model(index);
      if (std::find(labelled.truth.begin(), labelled.truth.end(), index) == labelled.truth.end()) {
        labelled.truth.push_back(index);
      }
    }
    if (unknown) ++unknown_label_documents;
    const Stopwatch clock;
    labelled.terms = categorizer.document_terms(categorizer.analyzer().analyze(doc.text));
    analyze_seconds += clock.seconds();
    documents.push_back(std::move(labelled));
  };
  internal::read_documents(args.positional(), read_options(args), on_document, warn_to(messages));
  if (documents.empty()) {
    throw InvalidArgumentError(
        join(args.positional()) + ": no labelled documents to evaluate" +
        (unlabelled != 0 ? " (" + std::to_string(unlabelled) + " without labels)" : std::string()));
  }
  if (unlabelled != 0) {
    messages.warning("skipped " + std::to_string(unlabelled) + " documents without labels");
  }
  if (unknown_label_documents != 0) {
    messages.warning(std::to_string(unknown_label_documents) +
                     " documents have labels the model does not know (" +
                     join(categories.unknown_names()) + "); they count as misses");
  }

  if (method == Method::kKnn) categorizer.knn_index();  // build outside the timing
  std::vector<std::vector<Category>> assigned(documents.size());
  const Stopwatch classify_clock;
  for (size_t i = 0; i < documents.size(); ++i) {
    assigned[i] = categorizer.decide(categorizer.scores(documents[i].terms, options), options);
  }
  const double classify_seconds = classify_clock.seconds();

  internal::Evaluation evaluation(categories.names());
  for (size_t i = 0; i < documents.size(); ++i) {
    std::vector<uint32_t> chosen;
    for (const Category& category : assigned[i]) chosen.push_back(categories.at(category.name));
    evaluation.add(documents[i].truth, chosen);
  }
  const double docs_per_second = rate(documents.size(), classify_seconds);

  if (args.has("json")) {
    internal::JsonValue json = internal::JsonValue::object();
    json.set("model", internal::JsonValue::string(model_dir));
    json.set("method", internal::JsonValue::string(method_name(method)));
    json.set("documents", json_number(static_cast<double>(evaluation.documents())));
    json.set("skipped_unlabelled", json_number(static_cast<double>(unlabelled)));
    json.set("unknown_label_documents", json_number(static_cast<double>(unknown_label_documents)));
    json.set("accuracy", json_number(evaluation.accuracy()));
    json.set("macro_f1", json_number(evaluation.macro_f1()));
    json.set("micro_f1", json_number(evaluation.micro_f1()));
    json.set("micro_precision", json_number(evaluation.micro_precision()));
    json.set("micro_recall", json_number(evaluation.micro_recall()));
    json.set("classify_seconds", json_number(classify_seconds));
    json.set("docs_per_second", json_number(docs_per_second));
    json.set("analyze_seconds", json_number(analyze_seconds));
    internal::JsonValue per_category = internal::JsonValue::array();
    for (const internal::CategoryMetrics& metrics : evaluation.per_category()) {
      internal::JsonValue entry = internal::JsonValue::object();
      entry.set("name", internal::JsonValue::string(metrics.name));
      entry.set("precision", json_number(metrics.precision));
      entry.set("recall", json_number(metrics.recall));
      entry.set("f1", json_number(metrics.f1));
      entry.set("true_positives", json_number(static_cast<double>(metrics.true_positives)));
      entry.set("false_positives", json_number(static_cast<double>(metrics.false_positives)));
      entry.set("false_negatives", json_number(static_cast<double>(metrics.false_negatives)));
      per_category.push_back(std::move(entry));
    }
    json.set("per_category", std::move(per_category));
    internal::JsonValue confusion = internal::JsonValue::object();
    internal::JsonValue names = internal::JsonValue::array();
    for (const std::string& name : evaluation.categories()) {
      names.push_back(internal::JsonValue::string(name));
    }
    names.push_back(internal::JsonValue::string("(none)"));
    confusion.set("categories", std::move(names));
    internal::JsonValue matrix = internal::JsonValue::array();
    for (const std::vector<uint64_t>& row : evaluation.confusion()) {
      internal::JsonValue row_json = internal::JsonValue::array();
      for (uint64_t count : row) row_json.push_back(json_number(static_cast<double>(count)));
      matrix.push_back(std::move(row_json));
    }
    confusion.set("matrix", std::move(matrix));
    json.set("confusion", std::move(confusion));
    out << json.dump() << '\n';
    return 0;
  }

  out << "evaluated " << evaluation.documents() << " documents with " << method_name(method)
      << " (model " << model_dir << ")\n";
  print_table(out,
              {{"  accuracy", format_fixed(evaluation.accuracy(), 4)},
               {"  macro-F1", format_fixed(evaluation.macro_f1(), 4)},
               {"  micro-F1", format_fixed(evaluation.micro_f1(), 4)},
               {"  classify", format_fixed(classify_seconds, 4) + " s (" +
                                  format_fixed(docs_per_second, 0) + " docs/s)"},
               {"  analyze", format_fixed(analyze_seconds, 4) + " s (not in docs/s)"}},
              {});
  out << '\n';
  std::vector<std::vector<std::string>> rows = {
      {"category", "precision", "recall", "F1", "TP", "FP", "FN"}};
  for (const internal::CategoryMetrics& metrics : evaluation.per_category()) {
    rows.push_back({metrics.name, format_fixed(metrics.precision, 4),
                    format_fixed(metrics.recall, 4), format_fixed(metrics.f1, 4),
                    std::to_string(metrics.true_positives), std::to_string(metrics.false_positives),
                    std::to_string(metrics.false_negatives)});
  }
  print_table(out, rows, {1, 2, 3, 4, 5, 6});
  if (evaluation.categories().size() <= kMaxConfusionCategories) {
    out << "\nconfusion matrix (documents with one label):\n";
    print_confusion(out, evaluation);
  }
  return 0;
}

}  // namespace

Command eval_command() {
  return {"eval", "measure accuracy, F1 and speed on labelled documents",
          std::string(kUsage) + kDecisionHelp + kUsageTail, run_eval};
}

}  // namespace autocat::cli
