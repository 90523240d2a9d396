// autocat corrections: the editors' corrections in force in an index, as
// training JSON Lines (autocat train and learn read them) or a table.
#include <xapian.h>

#include <ostream>

#include "autocat/corrections.h"
#include "autocat/error.h"
#include "classify/io/json_text.h"
#include "indexer/commands.h"
#include "indexer/relabel.h"
#include "indexer/search_metadata.h"

namespace autocat::cli {

namespace {

const char kUsage[] =
    "usage: autocat corrections --db DB [--json]\n"
    "\n"
    "Lists the corrections in force in the index DB: for each document an editor\n"
    "labelled (autocat relabel, autocat serve; term XAUTOCATEDITED), its last\n"
    "correction not undone, oldest first. With --json, one JSON object a line:\n"
    "{\"id\", \"text\", \"labels\", \"previous\", \"editor\", \"at\", \"seq\"}, the text\n"
    "being what autocat index --store-text kept (else the document data), so the\n"
    "output is training input: autocat train and autocat learn read it as it is.\n"
    "Without --json, a table: seq, id, categories, previous, editor, time.\n";

const char kExample[] =
    "\n"
    "example:\n"
    "  autocat corrections --db news.db --json > corrections.jsonl\n"
    "  autocat train --add --model news.model corrections.jsonl\n";

void define_options(OptionSet& options) {
  options.value("--db", "DB", "Xapian database written by autocat index");
  options.flag("--json", "print JSON Lines training records (id, text, labels, ...)");
}

int run_corrections(const ParsedArgs& args, std::ostream& out, Messages&) {
  const std::string db_path = args.required("db");
  if (!args.positional().empty()) {
    throw UsageError("corrections takes no arguments ('" + args.positional().front() + "')");
  }
  Xapian::Database db;
  try {
    db = Xapian::Database(db_path);
  } catch (const Xapian::DatabaseOpeningError& e) {
    throw NotFoundError(db_path + ": no such database (" + xapian_reason(e) +
                        "); give --db an index written by autocat index");
  }
  const Xapian::valueno text_slot = stored_text_slot(read_search_metadata(db));
  const std::vector<Correction> corrections = corrections_in_force(db);
  if (args.has("json")) {
    for (const Correction& correction : corrections) {
      internal::Json record = internal::Json::object();
      record["id"] = correction.id;
      record["text"] = document_text(find_document_by_id(db, correction.id), text_slot);
      record["labels"] = correction.categories;
      internal::Json previous = internal::Json::array();
      for (const Category& category : correction.previous) previous.push_back(category.name);
      record["previous"] = std::move(previous);
      record["editor"] = correction.editor;
      record["at"] = correction.at;
      record["seq"] = correction.seq;
      out << internal::dump_json(record) << '\n';
    }
    return 0;
  }
  std::vector<std::vector<std::string>> rows = {
      {"seq", "id", "categories", "previous", "editor", "at"}};
  for (const Correction& correction : corrections) {
    std::vector<std::string> previous;
    for (const Category& category : correction.previous) previous.push_back(category.name);
    rows.push_back({std::to_string(correction.seq), one_line(correction.id),
                    one_line(join(correction.categories)),
                    previous.empty() ? "none" : one_line(join(previous)),
                    one_line(correction.editor), correction.at});
  }
  print_table(out, rows, {0});
  out << corrections.size() << (corrections.size() == 1 ? " correction" : " corrections")
      << " in force in " << db_path << '\n';
  return 0;
}

}  // namespace

Command corrections_command() {
  return {"corrections", "list an index's editor corrections (training JSON Lines with --json)",
          kUsage,        define_options,
          kExample,      run_corrections};
}

}  // namespace autocat::cli
