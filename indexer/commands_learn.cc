// autocat learn / autocat forget: change an installed model's training
// documents without a refit (Categorizer::learn / forget, journaled).
#include <ostream>

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
    "back into the model. A database autocat index wrote without --store-text\n"
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
  } else {
    for (const char* name : {"ids", "label-prefix", "text-from"}) {
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
