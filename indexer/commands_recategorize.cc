// autocat recategorize: categorizes the documents of existing search
// databases again, with another model, from the text `autocat index
// --store-text` kept in them. Only the category terms, the category slot and
// the model term change; text terms, ids, data and docids stay.
#include <xapian.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "autocat/category_indexer.h"
#include "autocat/corrections.h"
#include "autocat/error.h"
#include "classify/io/atomic_file.h"
#include "classify/io/json_text.h"
#include "indexer/commands.h"
#include "indexer/index_transaction.h"
#include "indexer/progress.h"
#include "indexer/search_metadata.h"

namespace autocat::cli {

namespace {

const char kUsage[] =
    "usage: autocat recategorize --model DIR --db DB [--db DB2 ...] [OPTIONS]\n"
    "\n"
    "Categorizes every document of each DB again with the model DIR, from the full\n"
    "text `autocat index --store-text` stored in it (a DB indexed without\n"
    "--store-text is refused: it does not hold the text). Replaces only each\n"
    "document's category terms, category slot and model term (XAUTOCATMODEL...):\n"
    "its search terms, id, data and docid stay. DB then records DIR as its model.\n"
    "Resumable: documents whose model term is already DIR's are skipped, and the\n"
    "work is committed every --batch documents, so after an error or a kill the\n"
    "same command continues where it stopped. Each DB (e.g. each shard) is done in\n"
    "turn. The model term names the model file and how far its journal went when\n"
    "it was opened: after `autocat learn`, documents categorized before it are\n"
    "done again. Documents an editor labelled (term XAUTOCATEDITED: autocat\n"
    "relabel, serve's corrections) keep their categories: they are counted as\n"
    "editor-set kept, unless --include-editor-set.\n";

const char kExample[] =
    "\n"
    "example:\n"
    "  autocat recategorize --model news-v2.model --db shard0.db --db shard1.db\n";

void define_options(OptionSet& options) {
  add_model_option(options);
  options.values("--db", "DB", "database written by autocat index --store-text (repeatable)");
  add_method_option(options, "(default: the model's)");
  add_k_option(options);
  add_decision_options(options);
  options.value("--batch", "N", "commit every N documents (default 1000)");
  options.value("--threads", "N", "categorize on N threads (default: one per core)");
  options.value("--limit", "N",
                "recategorize at most N documents of each DB in this run (spread a rolling model "
                "update over several runs)");
  options.flag("--all",
               "also the documents whose model term is already DIR's (not resumable: a re-run "
               "starts again)");
  options.flag("--include-editor-set",
               "also recategorize the documents an editor labelled (replacing their labels and "
               "editor mark by the model's categories)");
  options.flag("--json", "print the summary as one JSON object");
  add_progress_options(options, "print count, rate and ETA to stderr every 2 s and at the end");
}

struct RecategorizeCounts {
  std::string db;
  uint64_t documents = 0;            // documents in DB
  uint64_t recategorized = 0;        // by this run
  uint64_t already = 0;              // carried the model's term already
  uint64_t without_text = 0;         // no stored text: left as they were
  uint64_t left_by_limit = 0;        // not reached because of --limit
  uint64_t committed = 0;            // of `recategorized`, those in DB's last commit seen
  uint64_t changed = 0;              // of `recategorized`, those whose set of categories changed
  uint64_t editor_set_kept = 0;      // editor-set documents left as the editor labelled them
  uint64_t editor_set_replaced = 0;  // editor-set documents recategorized (--include-editor-set)
  std::vector<std::string> changed_ids;    // the first kMaxChangedIds of `changed`
  std::map<std::string, uint64_t> gained;  // documents that got the category
  std::map<std::string, uint64_t> lost;    // documents that lost it
  std::string model_term;
  std::map<std::string, uint64_t> categories;
};

// How many ids of changed documents --json lists per database.
constexpr size_t kMaxChangedIds = 10000;

// The id of `doc` (its Q term less Q); empty if it has none.
std::string id_of(const Xapian::Document& doc) {
  Xapian::TermIterator it = doc.termlist_begin();
  it.skip_to(kIdPrefix);
  if (it != doc.termlist_end() && (*it).rfind(kIdPrefix, 0) == 0) {
    return (*it).substr(kIdPrefix.size());
  }
  return std::string();
}

// Counts how `after` differs from `before` (names only) into `counts`.
void count_change(const Xapian::Document& doc, const std::vector<Category>& before,
                  const std::vector<Category>& after, RecategorizeCounts& counts) {
  std::set<std::string> old_names, new_names;
  for (const Category& category : before) old_names.insert(category.name);
  for (const Category& category : after) new_names.insert(category.name);
  if (old_names == new_names) return;
  ++counts.changed;
  if (counts.changed_ids.size() < kMaxChangedIds) counts.changed_ids.push_back(id_of(doc));
  for (const std::string& name : new_names) {
    if (old_names.count(name) == 0) ++counts.gained[name];
  }
  for (const std::string& name : old_names) {
    if (new_names.count(name) == 0) ++counts.lost[name];
  }
}

// {"name": count, ...} in name order.
internal::Json count_map_json(const std::map<std::string, uint64_t>& counts) {
  internal::Json json = internal::Json::object();
  for (const auto& [name, count] : counts) json[name] = count;
  return json;
}

// "cooking +3, games +2" (sign "+") or "food -3" (sign "-"), by name.
std::string count_map_text(const std::map<std::string, uint64_t>& counts, const char* sign) {
  std::vector<std::string> parts;
  for (const auto& [name, count] : counts) {
    parts.push_back(one_line(name) + " " + sign + std::to_string(count));
  }
  return join(parts);
}

Xapian::valueno parse_slot(const std::string& text, const std::string& db_path,
                           const std::string& key) {
  Xapian::valueno slot = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, slot);
  if (text.empty() || ec != std::errc() || ptr != end) {
    throw InvalidArgumentError(db_path + ": metadata " + key + " is '" + text +
                               "', not a value slot number; was DB written by autocat index?");
  }
  return slot;
}

// Whether `doc` carries `term` (its term list is sorted).
bool has_term(const Xapian::Document& doc, const std::string& term) {
  Xapian::TermIterator it = doc.termlist_begin();
  it.skip_to(term);
  return it != doc.termlist_end() && *it == term;
}

// Recategorizes the documents of `db` (see recategorize_db); Xapian's
// errors pass through, with `counts` saying what is committed.
void recategorize_open_db(Xapian::WritableDatabase& db, const std::string& db_path,
                          const ParsedArgs& args, const std::string& model_dir, Messages& messages,
                          RecategorizeCounts* result) {
  RecategorizeCounts& counts = *result;
  const SearchMetadata recorded = read_search_metadata(db);
  const std::string text_slot_text = db.get_metadata(kTextSlotKey);
  if (text_slot_text.empty()) {
    throw InvalidArgumentError(
        db_path +
        ": the documents' text is not stored in it (it was indexed without --store-text), so "
        "there is nothing to categorize again: index the inputs again with autocat index "
        "--store-text --switch-model --model " +
        model_dir);
  }
  const Xapian::valueno text_slot = parse_slot(text_slot_text, db_path, kTextSlotKey);

  IndexOptions options;
  options.classify = classify_options(args);
  options.category_prefix = recorded.prefix.empty() ? kDefaultCategoryPrefix : recorded.prefix;
  options.category_slot =
      recorded.slot.empty() ? kDefaultCategorySlot : parse_slot(recorded.slot, db_path, kSlotKey);
  if (options.category_slot == text_slot) {
    throw InvalidArgumentError(db_path + ": its category slot and text slot are both " +
                               std::to_string(text_slot) + "; the database is damaged");
  }
  options.index_text = false;
  internal::crash_point("recategorize-open-model");  // a train may install another model now
  const CategoryIndexer indexer(model_dir, options);
  counts.model_term = indexer.model_term();
  report_model_warnings(indexer, messages);

  // DB records the new model from now on (the one opened, not DIR/CURRENT
  // read again); each document's model term says whether it has been done.
  SearchMetadata wanted = recorded;
  wanted.model_dir = absolute_model_dir(model_dir);
  wanted.model_fingerprint = indexer.model_fingerprint();
  wanted.prefix = options.category_prefix;
  wanted.slot = std::to_string(options.category_slot);
  write_search_metadata(db, wanted);
  IndexTransaction transaction(db, db_path);  // commits the metadata first
  Xapian::rev revision = db.get_revision();

  // The docids first: the database is changed while they are visited.
  std::vector<Xapian::docid> docids;
  for (auto it = db.postlist_begin(""); it != db.postlist_end(""); ++it) docids.push_back(*it);
  counts.documents = docids.size();

  const uint64_t batch = static_cast<uint64_t>(args.integer("batch", 1000, 1, 100000000));
  const unsigned threads = args.has("threads")
                               ? static_cast<unsigned>(args.integer("threads", 1, 1, 1024))
                               : std::max(1U, std::thread::hardware_concurrency());
  const uint64_t limit = static_cast<uint64_t>(args.integer("limit", INT64_MAX, 1, INT64_MAX));
  const size_t chunk_size = std::min<size_t>(batch, std::max<size_t>(64, 32 * threads));
  const Stopwatch clock;
  const bool all = args.has("all");
  const bool include_editor_set = args.has("include-editor-set");
  uint64_t visited = 0;
  uint64_t since_commit = 0;
  for (size_t start = 0; start < docids.size(); start += chunk_size) {
    std::vector<Xapian::docid> todo;
    std::vector<std::string> texts;
    const size_t stop = std::min(docids.size(), start + chunk_size);
    for (size_t i = start; i < stop; ++i) {
      ++visited;
      const Xapian::Document doc = db.get_document(docids[i]);
      if (!include_editor_set && is_editor_set(doc)) {
        ++counts.editor_set_kept;  // an editor's labels are never the model's to replace
      } else if (!all && has_term(doc, indexer.model_term())) {
        ++counts.already;
      } else if (counts.recategorized + todo.size() >= limit) {
        ++counts.left_by_limit;
      } else if (std::string text = doc.get_value(text_slot); text.empty()) {
        ++counts.without_text;
      } else {
        todo.push_back(docids[i]);
        texts.push_back(std::move(text));
      }
    }
    const std::vector<Categorization> decided =
        indexer.categorize_batch_with_runner_up(texts, threads);
    report_model_warnings(indexer, messages);
    for (size_t i = 0; i < todo.size(); ++i) {
      Xapian::Document doc = db.get_document(todo[i]);
      const std::vector<Category>& assigned = decided[i].assigned;
      count_change(doc, decode_categories(doc.get_value(indexer.options().category_slot)), assigned,
                   counts);
      indexer.set_categories(doc, decided[i]);  // and its model term and runner-up
      if (is_editor_set(doc)) {                 // --include-editor-set: the model's categories now
        ++counts.editor_set_replaced;
        doc.remove_term(kEditorSetTerm);
        doc.add_value(kDefaultEditorSlot, std::string());
      }
      db.replace_document(todo[i], doc);
      transaction.changed(2 * document_bytes(doc));  // and the document it replaces
      ++counts.recategorized;
      for (const Category& category : assigned) ++counts.categories[category.name];
      if (++since_commit == batch) {
        transaction.commit();
        since_commit = 0;
        counts.committed = counts.recategorized;
      }
      // Xapian also commits by itself after many changes.
      if (db.get_revision() != revision) {
        revision = db.get_revision();
        counts.committed = counts.recategorized;
      }
    }
    messages.progress("recategorized", visited, clock.seconds(), counts.documents);
  }
  transaction.commit();
  counts.committed = counts.recategorized;
  messages.progress_done("recategorized", visited, clock.seconds());
  if (include_editor_set) {
    messages.warning(db_path +
                     ": --include-editor-set: " + std::to_string(counts.editor_set_replaced) +
                     " editor-set documents got the model's categories in place of their "
                     "editors' (autocat corrections no longer lists them)");
  }
  if (counts.without_text != 0) {
    messages.warning(db_path + ": " + std::to_string(counts.without_text) +
                     " documents have no stored text (indexed without --store-text); they "
                     "keep their earlier categories");
  }
}

RecategorizeCounts recategorize_db(const std::string& db_path, const ParsedArgs& args,
                                   const std::string& model_dir, Messages& messages) {
  RecategorizeCounts counts;
  counts.db = db_path;
  Xapian::WritableDatabase db =
      open_existing_database(db_path, "a database written by autocat index --store-text");
  // Only the commits seen to succeed count: a failed commit drops what it
  // was writing, and the next one succeeds without it.
  const auto committed = [&counts]() -> std::string {
    if (counts.committed == 0) return "none of this run's";
    return "the first " + std::to_string(counts.committed) + " of this run's";
  };
  try {
    recategorize_open_db(db, db_path, args, model_dir, messages, &counts);
  } catch (const Xapian::Error& e) {
    throw IOError(db_path + ": " + xapian_reason(e) + "; " + committed() +
                  " recategorized documents are committed: free space (or fix what stopped it) "
                  "and run the same command again to continue");
  } catch (const IOError& e) {
    throw IOError(std::string(e.what()) + "; " + committed() +
                  " recategorized documents are committed: run the same command again to "
                  "continue");
  }
  return counts;
}

int run_recategorize(const ParsedArgs& args, std::ostream& out, Messages& messages) {
  apply_progress_options(args, messages, stderr_is_terminal());
  const std::string model_dir = args.required("model");
  const std::vector<std::string> dbs = args.values("db");
  if (dbs.empty()) throw UsageError("--db DB is required (repeat it for several databases)");
  if (!args.positional().empty()) {
    throw UsageError("recategorize reads the text stored in DB; it takes no INPUT ('" +
                     args.positional().front() + "')");
  }
  std::vector<RecategorizeCounts> results;
  for (const std::string& db : dbs) {
    results.push_back(recategorize_db(db, args, model_dir, messages));
  }
  // Each DB opens the model anew; normally they all name the same one.
  const std::string model_term = results.empty() ? std::string() : results.front().model_term;

  if (args.has("json")) {
    internal::Json list = internal::Json::array();
    for (const RecategorizeCounts& counts : results) {
      internal::Json entry = internal::Json::object();
      entry["db"] = counts.db;
      entry["documents"] = counts.documents;
      entry["recategorized"] = counts.recategorized;
      entry["already"] = counts.already;
      entry["without_text"] = counts.without_text;
      entry["left_by_limit"] = counts.left_by_limit;
      entry["changed"] = counts.changed;
      entry["changed_ids"] = counts.changed_ids;
      entry["editor_set_kept"] = counts.editor_set_kept;
      entry["gained"] = count_map_json(counts.gained);
      entry["lost"] = count_map_json(counts.lost);
      list.push_back(std::move(entry));
    }
    internal::Json json = internal::Json::object();
    json["model"] = model_dir;
    json["model_term"] = model_term;
    json["databases"] = std::move(list);
    out << json_output(json) << '\n';
    return 0;
  }
  for (const RecategorizeCounts& counts : results) {
    out << counts.db << ": recategorized " << counts.recategorized << " of " << counts.documents
        << " documents";
    if (counts.already != 0) out << ", " << counts.already << " already by this model";
    if (counts.without_text != 0) out << ", " << counts.without_text << " without stored text";
    out << ", " << counts.editor_set_kept << " editor-set kept";
    if (counts.left_by_limit != 0) {
      out << ", " << counts.left_by_limit << " left by --limit (run again to continue)";
    }
    out << "; " << counts.changed << " changed category" << '\n';
    if (!counts.gained.empty()) out << "  gained: " << count_map_text(counts.gained, "+") << '\n';
    if (!counts.lost.empty()) out << "  lost: " << count_map_text(counts.lost, "-") << '\n';
  }
  return 0;
}

}  // namespace

Command recategorize_command() {
  return {"recategorize", "categorize an index's documents again with another model",
          kUsage,         define_options,
          kExample,       run_recategorize};
}

}  // namespace autocat::cli
