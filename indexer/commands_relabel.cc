// autocat relabel: an editor's categories for one document of an index,
// written in place (and taught to the model with --learn).
#include <xapian.h>

#include <ostream>

#include "autocat/category_indexer.h"
#include "autocat/error.h"
#include "indexer/commands.h"
#include "indexer/relabel.h"
#include "indexer/search_metadata.h"

namespace autocat::cli {

namespace {

const char kUsage[] =
    "usage: autocat relabel --db DB --model DIR --category C [--category C ...]\n"
    "                       [--learn] [--editor NAME] [--json] ID\n"
    "\n"
    "Gives the document ID of the index DB (written by autocat index) the\n"
    "categories C, with score 1, in place of those it has: its category terms\n"
    "and value slot are rewritten and DB is committed; its text terms, id and\n"
    "data stay. Each C must be a category of the model in DIR. With --learn the\n"
    "model is taught the document with those categories first (as autocat\n"
    "learn, journaled), from the text autocat index --store-text kept, else the\n"
    "document data (a document without learnable text is relabelled all the\n"
    "same, untaught). The document is marked editor-set (term XAUTOCATEDITED,\n"
    "slot 202: NAME and time), so index and recategorize keep these categories,\n"
    "and the correction is logged in DB (autocat corrections lists them).\n";

const char kFooter[] =
    "\n"
    "example:\n"
    "  autocat relabel --db news.db --model news.model --category sci.space --learn doc-17\n";

void define_options(OptionSet& options) {
  options.value("--db", "DB", "Xapian database written by autocat index");
  add_model_option(options, "model directory whose categories DB holds (written by autocat train)");
  options.values("--category", "C", "a category the document gets (repeat for several)");
  options.flag("--learn", "teach the model the document with these categories too");
  options.value("--editor", "NAME",
                "who corrects, recorded with the correction (default: $USER, else relabel)");
  options.flag("--json", "print the result as one JSON object");
}

int run_relabel(const ParsedArgs& args, std::ostream& out, Messages& messages) {
  const std::string db_path = args.required("db");
  const std::string model_dir = args.required("model");
  const std::vector<std::string> names = args.values("category");
  if (names.empty()) throw UsageError("give --category C at least once");
  if (args.positional().size() != 1) throw UsageError("give one ID: the document to relabel");
  const std::string& id = args.positional()[0];
  const bool learn = args.has("learn");

  Xapian::WritableDatabase db =
      open_existing_database(db_path, "an index written by autocat index");
  const SearchMetadata metadata = read_search_metadata(db);
  CategoryIndexer indexer(model_dir, relabel_index_options(metadata));
  const Xapian::valueno category_slot = indexer.options().category_slot;
  const Correction correction =
      relabel_document(db, db_path, indexer, id, names, learn, stored_text_slot(metadata),
                       editor_name(args.value("editor"), "relabel"));
  for (const std::string& warning : indexer.take_warnings()) messages.warning(warning);
  const std::vector<Category>& previous = correction.previous;
  const std::vector<Category> now =
      decode_categories(find_document(db, db_path, id).get_value(category_slot));
  if (learn && !correction.learned) {
    messages.warning(db_path + ": document '" + id +
                     "' has no text the model can learn from; its categories are set, the "
                     "model was not taught");
  }

  if (args.has("json")) {
    internal::Json json = internal::Json::object();
    json["db"] = db_path;
    json["id"] = id;
    json["categories"] = categories_json(now);
    json["previous"] = categories_json(previous);
    json["learned"] = correction.learned;
    json["editor"] = correction.editor;
    json["seq"] = correction.seq;
    out << json_output(json) << '\n';
    return 0;
  }
  std::vector<std::string> now_names, previous_names;
  for (const Category& category : now) now_names.push_back(category.name);
  for (const Category& category : previous) previous_names.push_back(category.name);
  out << one_line(id) << ": " << one_line(join(now_names))
      << " (was: " << (previous_names.empty() ? "none" : one_line(join(previous_names))) << ")"
      << (correction.learned ? "; taught to the model in " + one_line(model_dir) : "")
      << "; correction " << correction.seq << " by " << one_line(correction.editor) << '\n';
  return 0;
}

}  // namespace

Command relabel_command() {
  return {"relabel", "set one document's categories in an index (and teach the model)",
          kUsage,    define_options,
          kFooter,   run_relabel};
}

}  // namespace autocat::cli
