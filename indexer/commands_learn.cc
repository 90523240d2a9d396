// autocat learn / autocat forget: change an installed model's training
// documents without a refit (Categorizer::learn / forget, journaled).
#include <xapian.h>

#include <cstddef>
#include <ostream>

#include "autocat/corrections.h"
#include "autocat/error.h"
#include "classify/corpus/db_reader.h"
#include "classify/decide/categorizer.h"
#include "classify/io/json_text.h"
#include "indexer/commands.h"
#include "indexer/progress.h"

namespace autocat::cli {

namespace {

const char kLearnUsage[] =
    "usage: autocat learn --model DIR [OPTIONS] INPUT...\n"
    "       autocat learn --model DIR --from-db DB --ids ID...\n"
    "\n"
    "Adds the labelled documents of INPUT (JSON Lines with \"labels\", or a folder\n"
    "tree whose subfolder names are the labels) to the model in DIR without\n"
    "training it again; a document whose id is already a training document\n"
    "replaces it. They are appended to the journal of DIR's model (fsynced once\n"
    "for the run), so every model opened from DIR afterwards sees them: every\n"
    "method (knn, rocchio, nb, bnb, cnb, svm, logreg and combo over them) at\n"
    "once, with the idf, vocabulary, feature selection, smoothing, C,\n"
    "thresholds and calibration of the last training (terms new to the model\n"
    "count only after a refit) until the next refit, autocat train --add --model\n"
    "DIR, which folds the journal into the training collection.\n"
    "Every document needs labels the model has (a new category needs a refit);\n"
    "all documents are checked before any is learned: one bad document and\n"
    "nothing is. Inputs are read whole into memory. While an autocat train writes\n"
    "DIR, learn waits up to 10 s for it, then fails (nothing learned).\n"
    "With --from-db, the documents are those of the application index DB with\n"
    "the given ids (their Q terms): each one's current category terms (the prefix\n"
    "autocat index recorded, else XC) and its text (the slot autocat index\n"
    "--store-text keeps, else the document data). Feeds an editor's corrections\n"
    "back into the model: only documents an editor labelled (term XAUTOCATEDITED)\n"
    "are taught; another is refused (skipped, among several) unless\n"
    "--include-model-labels. A database autocat index wrote without --store-text\n"
    "keeps only the title or the first 200 bytes of each text: learn refuses it\n"
    "unless --text-from says which text to learn.\n";

const char kLearnExamples[] =
    "\n"
    "example:\n"
    "  autocat learn --model news.model corrections.jsonl\n"
    "  autocat learn --model news.model --from-db news.db --ids msg-17 msg-42\n";

void define_learn_options(OptionSet& options) {
  add_model_option(options, "model directory (written by autocat train)");
  options.value("--from-db", "DB", "read the documents from the Xapian database DB");
  options.flag("--ids", "with --from-db: the arguments are document ids");
  options.value("--label-prefix", "P",
                "with --from-db: the category term prefix (default: the one DB records, else "
                "XC)");
  options.value("--text-from", "WHERE",
                "with --from-db: stored (default: the --store-text slot, else the data of a "
                "database autocat index did not write), terms (the indexed words, in no order) "
                "or data (the document data: a title or snippet for autocat index)");
  options.flag("--include-model-labels",
               "with --from-db: also teach documents no editor labelled (their categories are "
               "the model's own)");
  add_reader_options(options, ReaderOptionSet{/*duplicate_ids=*/true, /*fields=*/true});
  options.flag("--json", "print the summary as one JSON object");
}

const char kForgetUsage[] =
    "usage: autocat forget --model DIR [--json] ID...\n"
    "\n"
    "Removes the training documents with these ids (trained or learned) from the\n"
    "model in DIR without training it again: appended to the journal of DIR's\n"
    "model (fsynced once for the run); every method stops using them at once,\n"
    "with what was fitted over the whole collection (idf, C, thresholds,\n"
    "calibration) as trained until the next refit (autocat train --add --model\n"
    "DIR). An id that is not a training document is an error, and nothing is\n"
    "forgotten.\n";

void define_forget_options(OptionSet& options) {
  add_model_option(options, "model directory (written by autocat train)");
  options.flag("--json", "print the summary as one JSON object");
}

// Who sees the learned documents, and when the frozen parts follow.
std::string seen_by(const std::string& model_dir) {
  return "every method (knn, rocchio, nb, bnb, cnb, svm, logreg, combo) uses them now; idf, "
         "vocabulary, C, thresholds and calibration as trained until a refit: autocat train "
         "--add --model " +
         model_dir;
}

// With --from-db: keeps the documents an editor labelled (editor-set) and
// drops the others, whose categories are the model's own guess: teaching
// them back would confirm its mistakes. One id that is not editor-set is an
// error; among several, each is skipped with a warning.
// --include-model-labels keeps them all, with a warning.
void keep_editor_set(const ParsedArgs& args, std::vector<internal::LearnedDocument>& documents,
                     std::vector<std::string>& sources, Messages& messages) {
  const std::string db_path = args.value("from-db");
  const Xapian::Database db(db_path);
  std::vector<size_t> model_labelled;
  for (size_t i = 0; i < documents.size(); ++i) {
    if (!is_editor_set(find_document_by_id(db, documents[i].id))) model_labelled.push_back(i);
  }
  if (model_labelled.empty()) return;
  if (args.has("include-model-labels")) {
    messages.warning(db_path +
                     ": --include-model-labels: " + std::to_string(model_labelled.size()) +
                     " documents no editor labelled are taught with the model's own "
                     "categories");
    return;
  }
  if (documents.size() == 1) {
    throw InvalidArgumentError(db_path + ": document '" + documents[0].id +
                               "' was not labelled by an editor (its categories are the "
                               "model's); correct it first (autocat relabel), or give "
                               "--include-model-labels to teach them anyway (nothing was "
                               "learned)");
  }
  for (auto it = model_labelled.rbegin(); it != model_labelled.rend(); ++it) {
    messages.warning(db_path + ": document '" + documents[*it].id +
                     "' skipped: not labelled by an editor (--include-model-labels teaches "
                     "it)");
    documents.erase(documents.begin() + static_cast<std::ptrdiff_t>(*it));
    sources.erase(sources.begin() + static_cast<std::ptrdiff_t>(*it));
  }
}

int run_learn(const ParsedArgs& args, std::ostream& out, Messages& messages) {
  const std::string model_dir = args.required("model");
  const Stopwatch clock;
  std::vector<internal::LearnedDocument> documents;
  std::vector<std::string> sources;
  auto add = [&](internal::InputDocument&& doc) {
    documents.push_back({std::move(doc.id), std::move(doc.text), std::move(doc.labels)});
    sources.push_back(std::move(doc.source));
  };
  if (args.has("from-db")) {
    if (!args.has("ids")) {
      throw UsageError("--from-db DB needs --ids ID...: the documents of DB to learn");
    }
    for (const char* name : {"split", "skip-malformed", "field", "max-document-bytes"}) {
      if (args.has(name))
        throw UsageError(std::string("--") + name + " reads INPUT files, not --from-db");
    }
    require_inputs(args, "ID");
    const std::string prefix = args.value("label-prefix");
    if (!prefix.empty()) check_prefix(prefix);
    const std::string text_from = args.value("text-from", "stored");
    internal::DatabaseText where = internal::DatabaseText::kStored;
    if (text_from == "terms") {
      where = internal::DatabaseText::kTerms;
    } else if (text_from == "data") {
      where = internal::DatabaseText::kData;
    } else if (text_from != "stored") {
      throw UsageError("--text-from " + text_from + ": choose stored, terms or data");
    }
    internal::read_database_ids(args.value("from-db"), args.positional(), prefix, where, add);
    keep_editor_set(args, documents, sources, messages);
  } else {
    for (const char* name : {"ids", "label-prefix", "text-from", "include-model-labels"}) {
      if (args.has(name)) throw UsageError(std::string("--") + name + " needs --from-db DB");
    }
    require_inputs(args);
    internal::read_documents(args.positional(), read_options(args), add, warn_to(messages));
  }
  internal::Categorizer categorizer(model_dir);
  // Checked here too, to name the file and line of a bad document.
  for (size_t i = 0; i < documents.size(); ++i) {
    if (documents[i].labels.empty()) {
      throw InvalidArgumentError(sources[i] + ": document '" + documents[i].id +
                                 "' has no labels; autocat learn needs at least one category "
                                 "(nothing was learned)");
    }
    for (const std::string& label : documents[i].labels) {
      if (categorizer.category_index(label) < 0) {
        throw InvalidArgumentError(sources[i] + ": category '" + label + "' of document '" +
                                   documents[i].id + "' is not in the model " + model_dir +
                                   "; a new category needs a refit: autocat train --add --model " +
                                   model_dir + " INPUT... (nothing was learned)");
      }
    }
  }
  if (documents.empty()) throw InvalidArgumentError("no document to learn in the input");
  categorizer.learn(documents);
  report_model_warnings(categorizer, messages);
  const double seconds = clock.seconds();
  if (args.has("json")) {
    internal::Json json = internal::Json::object();
    json["model"] = model_dir;
    json["learned"] = internal::Json(static_cast<double>(documents.size()));
    json["journal"] = internal::Json(categorizer.paths().journal);
    json["default_method"] = internal::Json(method_name(categorizer.default_method()));
    json["seconds"] = seconds;
    out << json_output(json) << '\n';
    return 0;
  }
  out << "learned " << documents.size() << (documents.size() == 1 ? " document" : " documents")
      << " into model " << model_dir << '\n'
      << "  " << seen_by(model_dir) << '\n';
  return 0;
}

int run_forget(const ParsedArgs& args, std::ostream& out, Messages& messages) {
  const std::string model_dir = args.required("model");
  require_inputs(args, "ID");
  internal::Categorizer categorizer(model_dir);
  categorizer.forget(args.positional());
  report_model_warnings(categorizer, messages);
  const uint64_t forgotten = categorizer.live_status().forgotten_now;
  if (args.has("json")) {
    internal::Json json = internal::Json::object();
    json["model"] = model_dir;
    json["forgotten"] = forgotten;
    json["journal"] = internal::Json(categorizer.paths().journal);
    out << json_output(json) << '\n';
    return 0;
  }
  out << "forgot " << forgotten << (forgotten == 1 ? " document" : " documents") << " of model "
      << model_dir << '\n'
      << "  " << seen_by(model_dir) << '\n';
  return 0;
}

}  // namespace

Command learn_command() {
  return {"learn",        "add labelled documents to a model without a refit (journaled)",
          kLearnUsage,    define_learn_options,
          kLearnExamples, run_learn};
}

Command forget_command() {
  return {"forget",     "remove training documents from a model by id without a refit",
          kForgetUsage, define_forget_options,
          "",           run_forget};
}

}  // namespace autocat::cli
