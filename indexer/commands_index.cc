// autocat index: documents -> a search database, each document with its
// text terms, its categories (terms and value slot) and its id term.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xapian.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <ostream>
#include <system_error>
#include <thread>
#include <vector>

#include "autocat/category_indexer.h"
#include "autocat/corrections.h"
#include "autocat/error.h"
#include "classify/io/atomic_file.h"
#include "classify/io/json_text.h"
#include "classify/io/model_dir.h"
#include "classify/model/model_io.h"
#include "classify/text/analyzer.h"
#include "indexer/commands.h"
#include "indexer/index_transaction.h"
#include "indexer/progress.h"
#include "indexer/search_metadata.h"

namespace autocat::cli {

namespace {

const char kUsage[] =
    "usage: autocat index --model DIR --db DB [OPTIONS] INPUT...\n"
    "\n"
    "Categorizes each document of INPUT with the model DIR and adds it to the Xapian\n"
    "database DB (created if missing): its text terms as Xapian's TermGenerator makes\n"
    "them (so any Xapian QueryParser with the same stemmer finds them), one boolean\n"
    "term per category (XCname, or XC:Name for a name starting with a capital) and a\n"
    "value slot with the categories and scores.\n"
    "Each categorized document also gets the boolean term XAUTOCATMODEL<crc>-<bytes>\n"
    "naming the model file that categorized it (a plain Xapian filter; after\n"
    "--switch-model it shows which documents still carry the earlier model's),\n"
    "then -j<N> once documents were learned on it (autocat learn): the same model\n"
    "after learning needs no --switch-model, but documents indexed before keep\n"
    "their categories until autocat recategorize does them again.\n"
    "A document whose id is already in DB is replaced (the summary counts them);\n"
    "one an editor labelled (term XAUTOCATEDITED) keeps its categories and editor\n"
    "mark, unless --include-editor-set. Each document's best category not assigned\n"
    "is kept in value slot 203 (NAME<TAB>SCORE) for the review queue.\n"
    "Documents with empty text are indexed without categories. DB records the model\n"
    "(and its fingerprint), prefix, slot and stemmer; indexing into it with another\n"
    "model, prefix or slot is refused unless --switch-model is given. DB may not lie\n"
    "inside a model directory. Documents are committed every --batch documents and at\n"
    "the end; after an error or a kill, DB holds complete documents, and running the\n"
    "same command again completes it without duplicates.\n";

const char kExample[] =
    "\n"
    "example:\n"
    "  autocat index --model news.model --db news.db incoming/\n";

void define_options(OptionSet& options) {
  add_model_option(options);
  options.value("--db", "DB", "Xapian database to create or update");
  add_method_option(options, "(default: the model's)");
  add_k_option(options);
  options.value("--rules", "FILE",
                "rule categories applied with the learned ones (see autocat classify --help and "
                "docs/rules.md)");
  add_decision_options(options);
  options.flag("--no-categories", "index the text only (to measure the cost of categorizing)");
  options.flag("--categories-only",
               "store categories, id and data but no text terms (for an application that "
               "indexes the text itself)");
  options.value("--stemmer", "LANG",
                "stemmer of the text's search terms: english (default), german, ... or none; "
                "recorded in DB for autocat search. Independent of the model's own analysis");
  options.value("--batch", "N", "commit every N documents (default 1000)");
  options.flag("--store-text",
               "also store each document's full text in value slot 201 (recorded in DB), so "
               "autocat recategorize can categorize it again with another model without the "
               "inputs; a DB that records it keeps storing the text without the flag");
  options.value("--threads", "N",
                "categorize on N threads (default: one per core); one thread writes DB, in "
                "input order, so DB is the same whatever N");
  add_reader_options(options);
  options.value("--prefix", "XC",
                "term prefix of categories (default: DB's, else XC): capitals, not X alone; Q "
                "(ids) and Z (stems) are reserved");
  options.value("--slot", "N", "value slot of categories and scores (default: DB's, else 200)");
  options.flag("--switch-model",
               "index into a DB recorded with another model, prefix or slot, and record this "
               "one: documents already in DB keep what the earlier model gave them (terms, and "
               "categories under the earlier prefix and slot) until re-indexed");
  options.flag("--include-editor-set",
               "re-indexing a document an editor labelled replaces its labels by the model's "
               "categories (by default it keeps them)");
  options.flag("--json", "print the summary as one JSON object");
  add_progress_options(options, "print count and rate to stderr every 2 s and at the end");
}

// Xapian's glass backend refuses terms longer than this many bytes.
constexpr size_t kMaxTermBytes = 245;

// Directories `<DB>.autocat-new-<pid>-XXXXXX` are databases being created.
const char kCreatingInfix[] = ".autocat-new-";

// Removes what runs that were killed while creating `target` left beside it
// (their process is gone); never anything else.
void remove_stale_creations(const std::filesystem::path& target) {
  namespace fs = std::filesystem;
  const std::string prefix = target.filename().string() + kCreatingInfix;
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || entry.is_symlink(ec) || !entry.is_directory(ec)) continue;
    long pid = 0;
    const char* end = name.data() + name.size();
    auto [ptr, error] = std::from_chars(name.data() + prefix.size(), end, pid);
    if (error != std::errc() || ptr == end || *ptr != '-' || pid <= 0) continue;
    if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) fs::remove_all(entry.path(), ec);
  }
}

// Xapian creates a database file by file, and one killed midway is a
// directory no later run can open. So a new database is created beside DB
// and renamed into place once complete.
void create_database_atomically(const std::string& db_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(db_path, ec) && !(fs::is_directory(db_path, ec) && fs::is_empty(db_path, ec))) {
    return;
  }
  fs::path target = fs::absolute(db_path, ec).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();
  remove_stale_creations(target);
  std::string fresh = target.string() + kCreatingInfix + std::to_string(getpid()) + "-XXXXXX";
  if (mkdtemp(fresh.data()) == nullptr) {
    throw IOError(db_path + ": cannot create the database: " + std::strerror(errno));
  }
  // mkdtemp makes it private (0700); a database gets the usual permissions.
  const mode_t mask = umask(0);
  umask(mask);
  chmod(fresh.c_str(), 0777 & ~mask);
  try {
    Xapian::WritableDatabase db(fresh, Xapian::DB_CREATE);
    db.commit();
    db.close();
  } catch (const Xapian::Error& e) {
    fs::remove_all(fresh, ec);
    throw IOError(db_path + ": cannot create the database: " + xapian_reason(e));
  }
  // Fails if another run created DB meanwhile: then that one is used.
  if (std::rename(fresh.c_str(), target.c_str()) != 0) fs::remove_all(fresh, ec);
}

// What Xapian leaves when killed while creating a database in place: its
// revision file was never renamed into place, so nothing was committed.
bool creation_interrupted(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path + "/v.tmp", ec) &&
         !std::filesystem::exists(path + "/iamglass", ec);
}
const char kInterrupted[] =
    " (its creation was interrupted, so it holds no document: remove it and run again)";

// Opens DB, creating it if it does not exist or is an empty directory. A
// directory holding anything but a database is refused, not written into.
Xapian::WritableDatabase open_writable(const std::string& path) {
  create_database_atomically(path);
  try {
    // Opening for writing would leave a lock file in a directory that is no
    // database: find out read-only first.
    Xapian::Database(path).close();
    return Xapian::WritableDatabase(path, Xapian::DB_OPEN);
  } catch (const Xapian::DatabaseLockError& e) {
    throw IOError(database_lock_message(path, e));
  } catch (const Xapian::DatabaseNotFoundError& e) {
    throw IOError(creation_interrupted(path)
                      ? path + ": cannot open the database: " + xapian_reason(e) + kInterrupted
                      : path +
                            ": is not a Xapian database (it holds other files); give --db a "
                            "new or empty directory, or a database written by autocat index");
  } catch (const Xapian::DatabaseError& e) {
    const std::string reason = xapian_reason(e);
    throw IOError(path + ": cannot open the database: " + reason +
                  (creation_interrupted(path) ? kInterrupted
                   : too_many_open_files(reason)
                       ? "; raise the limit of open files (ulimit -n) and run again"
                       : ""));
  }
}

// Refuses a --db that is a model directory or lies inside one (the given
// --model or any directory holding a model file): documents indexed there
// would mix with the model's own training collection.
void check_db_outside_models(const std::string& db_path, const std::string& model_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path db = fs::weakly_canonical(fs::absolute(db_path, ec), ec);
  const fs::path model = fs::weakly_canonical(fs::absolute(model_dir, ec), ec);
  for (fs::path dir = db; !dir.empty(); dir = dir.parent_path()) {
    if (dir == model || fs::exists(dir / internal::kModelFileName, ec) ||
        fs::exists(dir / internal::kCurrentFileName, ec) ||
        fs::exists(dir / internal::kLockFileName, ec)) {
      throw UsageError("--db " + db_path + " is " +
                       (dir == db ? "the model directory " + dir.string()
                                  : "inside the model directory " + dir.string()) +
                       "; an application index there would mix with the model's own data: choose a "
                       "--db outside every model directory");
    }
    if (dir == dir.parent_path()) break;
  }
}

// What DB already records (empty if it does not exist or is not a database
// yet), read without taking the writer's lock.
SearchMetadata recorded_metadata(const std::string& db_path) {
  std::error_code ec;
  if (!std::filesystem::exists(db_path, ec)) return SearchMetadata();
  try {
    return read_search_metadata(Xapian::Database(db_path));
  } catch (const Xapian::DatabaseOpeningError&) {
    return SearchMetadata();  // open_writable() reports it
  }
}

// The slot recorded as text, or `fallback` if none or unreadable.
Xapian::valueno recorded_slot(const std::string& text, Xapian::valueno fallback) {
  Xapian::valueno slot = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, slot);
  return !text.empty() && ec == std::errc() && ptr == end ? slot : fallback;
}

struct IndexCounts {
  uint64_t documents = 0;
  uint64_t committed = 0;        // documents known to be in DB's last commit
  Xapian::rev revision = 0;      // DB's revision when `committed` was counted
  uint64_t replaced = 0;         // documents whose id DB already held
  uint64_t editor_set_kept = 0;  // of `replaced`, editor-set: their categories kept
  uint64_t uncategorized = 0;
  uint64_t empty_text = 0;
  std::map<std::string, uint64_t> categories;
};

// After an error mid-run: commits the documents indexed before it (each
// is complete) and says what DB now holds and how to finish. After a
// failed write to DB (`database_failed`), nothing more is committed: Xapian
// drops what a failed commit was writing and a second commit "succeeds"
// without it, so only the commits seen to succeed count.
std::string after_failure(IndexTransaction& transaction, const std::string& db_path,
                          IndexCounts& counts, bool database_failed) {
  if (counts.documents == 0) {
    return "nothing of this run was indexed into " + db_path;
  }
  if (!database_failed) {
    try {
      transaction.commit();
      counts.committed = counts.documents;
    } catch (const Xapian::Error&) {
      // DB keeps its last commit.
    } catch (const Error&) {
      // No room for it: DB keeps its last commit.
    }
  }
  const bool committed = counts.committed == counts.documents;
  return db_path + (committed ? " holds the " : " kept only its last commit, the first ") +
         std::to_string(counts.committed) + " documents of this run; " +
         (database_failed ? "free space (or fix what stopped the write)" : "fix the cause") +
         " and run the same command again (documents are replaced by id, not duplicated)";
}

std::vector<std::pair<std::string, uint64_t>> sorted_counts(
    const std::map<std::string, uint64_t>& counts) {
  std::vector<std::pair<std::string, uint64_t>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return sorted;
}

int run_index(const ParsedArgs& args, std::ostream& out, Messages& messages) {
  apply_progress_options(args, messages, stderr_is_terminal());
  const std::string model_dir = args.required("model");
  const std::string db_path = args.required("db");
  require_inputs(args);
  check_db_outside_models(db_path, model_dir);
  // A mistyped input must not leave a new, empty database behind.
  for (const std::string& input : args.positional()) {
    std::error_code ec;
    if (input != "-" && !std::filesystem::exists(input, ec)) {
      throw NotFoundError(input + ": no such file or directory");
    }
  }
  const SearchMetadata earlier = recorded_metadata(db_path);
  IndexOptions options;
  options.classify = classify_options(args);
  options.rules_file = args.value("rules");
  options.category_prefix =
      args.value("prefix", earlier.prefix.empty() ? kDefaultCategoryPrefix : earlier.prefix);
  check_prefix(options.category_prefix);
  options.category_slot =
      args.has("slot")
          ? static_cast<Xapian::valueno>(args.integer("slot", 0, 0, Xapian::BAD_VALUENO - 1))
          : recorded_slot(earlier.slot, kDefaultCategorySlot);
  const int64_t batch = args.integer("batch", 1000, 1, 100000000);
  // A database that keeps its documents' text goes on keeping it, so that
  // re-indexing never erases what `recategorize` reads.
  const bool store_text = args.has("store-text") || !earlier.text_slot.empty();
  const Xapian::valueno text_slot = recorded_slot(earlier.text_slot, kDefaultTextSlot);
  if (store_text && options.category_slot == text_slot) {
    throw UsageError((args.has("store-text") ? "--store-text keeps" : db_path + " keeps") +
                     " the text in slot " + std::to_string(text_slot) +
                     ", the categories' --slot here: choose another --slot");
  }
  const unsigned threads = args.has("threads")
                               ? static_cast<unsigned>(args.integer("threads", 1, 1, 1024))
                               : std::max(1U, std::thread::hardware_concurrency());
  const bool no_categories = args.has("no-categories");
  const bool categories_only = args.has("categories-only");
  if (no_categories && categories_only) {
    throw UsageError("--no-categories and --categories-only exclude each other");
  }
  if (categories_only && args.has("stemmer")) {
    throw UsageError("--stemmer has no effect with --categories-only (no text is indexed)");
  }
  options.index_text = !categories_only;
  // The database's own stemmer unless told otherwise, so its terms stay one kind.
  options.stemmer =
      args.value("stemmer", earlier.stemmer.empty() ? options.stemmer : earlier.stemmer);
  try {
    Xapian::Stem check(options.stemmer);
  } catch (const Xapian::InvalidArgumentError&) {
    throw UsageError("--stemmer: unknown language '" + options.stemmer +
                     "'; use one Xapian knows (english, german, french, ...) or none");
  }
  // Every option that shapes categorization is meaningless without it.
  std::vector<std::string> categorizing = {"method", "k", "rules"};
  for (const std::string& name : declared_names(add_decision_options)) {
    categorizing.push_back(name);
  }
  for (const std::string& name : categorizing) {
    if (no_categories && args.has(name)) {
      throw UsageError("--no-categories cannot be combined with --" + name);
    }
  }

  // Open the model before the database, so a bad model leaves no empty
  // database behind.
  options.categorize = !no_categories;
  const CategoryIndexer indexer(model_dir, options);
  internal::crash_point("index-model-opened");  // a train may install another model now
  report_model_warnings(indexer, messages);
  const std::string method =
      no_categories ? "none"
                    : method_name(options.classify.method.value_or(indexer.default_method()));
  SearchMetadata wanted;
  wanted.model_dir = absolute_model_dir(model_dir);
  wanted.model_fingerprint = indexer.model_fingerprint();
  wanted.prefix = options.category_prefix;
  wanted.slot = std::to_string(options.category_slot);

  Xapian::WritableDatabase db = open_writable(db_path);
  // Checked again under the writer's lock: DB may have changed meanwhile.
  const SearchMetadata recorded = read_search_metadata(db);
  if (recorded.text_slot != earlier.text_slot) {
    throw IOError(db_path + ": changed while this run started (another writer?); run again");
  }
  const std::vector<std::string> differences = search_metadata_differences(recorded, wanted);
  if (!differences.empty()) {
    if (!args.has("switch-model")) {
      throw InvalidArgumentError(
          db_path + ": " + join(differences, "; ") +
          ". Indexing would mix them, and search would miss the earlier documents: use a new "
          "--db, or the recorded model, prefix and slot, or --switch-model to record these "
          "(earlier documents keep what the earlier model gave them until re-indexed)");
    }
    messages.warning(db_path + ": --switch-model: " + join(differences, "; ") +
                     "; documents already there keep what the earlier model gave them "
                     "until re-indexed");
  }
  if (!no_categories && learned_since_recorded(recorded, wanted)) {
    messages.warning(db_path + ": the model learned or forgot documents since (" +
                     recorded.model_fingerprint + " then, " + wanted.model_fingerprint +
                     " now); documents indexed before keep their categories until `autocat "
                     "recategorize` (which needs --store-text)");
  }
  write_search_metadata(db, wanted);
  if (options.index_text) db.set_metadata(kStemmerKey, options.stemmer);
  if (store_text) db.set_metadata(kTextSlotKey, std::to_string(text_slot));

  IndexTransaction transaction(db, db_path);
  const bool include_editor_set = args.has("include-editor-set");
  if (include_editor_set) {
    messages.warning(db_path +
                     ": --include-editor-set: documents an editor labelled get the model's "
                     "categories when re-indexed, in place of their editors'");
  }
  IndexCounts counts;
  counts.revision = db.get_revision();
  const Stopwatch clock;
  // Documents are read in chunks; the threads categorize one chunk while this
  // thread writes the previous one, in input order, so ids, docids, "later id
  // wins" and the batch commits are as with one thread.
  // A chunk is never longer than a commit batch, so a small --batch also
  // exercises the hand-over between the threads and the writer.
  const size_t chunk_size =
      std::min<size_t>(static_cast<size_t>(batch), std::max<size_t>(64, 32 * threads));
  std::vector<DocumentToIndex> chunk;
  // A chunk's inputs travel with its documents: --store-text needs the text.
  struct PreparedChunk {
    std::vector<DocumentToIndex> inputs;
    std::vector<PreparedDocument> documents;
  };
  std::future<PreparedChunk> pending;
  bool db_failed = false;  // a write to DB failed: commit no more
  auto commit = [&]() {
    try {
      transaction.commit();
    } catch (...) {
      db_failed = true;
      throw;
    }
    counts.committed = counts.documents;
  };
  auto write_pending = [&]() {
    if (!pending.valid()) return;
    PreparedChunk prepared = pending.get();
    report_model_warnings(indexer, messages);
    for (size_t i = 0; i < prepared.documents.size(); ++i) {
      PreparedDocument& doc = prepared.documents[i];
      if (store_text) doc.document.add_value(text_slot, prepared.inputs[i].text);
      Replaced replaced = Replaced::kAdded;
      try {
        replaced = replace_keeping_editor_labels(db, doc.id_term, doc.document, indexer,
                                                 include_editor_set);
        transaction.changed(document_bytes(doc.document));
      } catch (const Xapian::Error&) {
        db_failed = true;  // Xapian flushes by itself now and then
        throw;
      }
      if (replaced != Replaced::kAdded) ++counts.replaced;
      if (replaced == Replaced::kEditorSetKept) {
        ++counts.editor_set_kept;
        doc.categories = decode_categories(doc.document.get_value(options.category_slot));
      }
      if (!no_categories && doc.categories.empty()) ++counts.uncategorized;
      for (const Category& category : doc.categories) ++counts.categories[category.name];
      ++counts.documents;
      if (counts.documents % static_cast<uint64_t>(batch) == 0) commit();
      // Xapian also commits by itself after many changes (XAPIAN_FLUSH_THRESHOLD).
      if (db.get_revision() != counts.revision) {
        counts.revision = db.get_revision();
        counts.committed = counts.documents;
      }
      messages.progress("indexed", counts.documents, clock.seconds());
    }
  };
  auto submit_chunk = [&]() {
    if (chunk.empty()) return;
    auto next =
        std::async(std::launch::async, [&indexer, threads, docs = std::move(chunk)]() mutable {
          PreparedChunk prepared;
          prepared.documents = indexer.prepare_documents(docs, threads);
          prepared.inputs = std::move(docs);
          return prepared;
        });
    chunk.clear();
    write_pending();
    pending = std::move(next);
  };
  auto on_document = [&](internal::InputDocument&& doc) {
    std::string id = doc.id.empty() ? doc.source : doc.id;
    if (id.empty() || kIdPrefix.size() + id.size() > kMaxTermBytes) {
      throw InvalidArgumentError(doc.source + ": document id must be 1 to " +
                                 std::to_string(kMaxTermBytes - kIdPrefix.size()) + " bytes long");
    }
    if (is_blank(doc.text)) {
      ++counts.empty_text;
      messages.warning(doc.source + ": empty text; indexed without categories");
    }
    chunk.push_back({std::move(id), std::move(doc.text), std::move(doc.title)});
    if (chunk.size() >= chunk_size) submit_chunk();
  };
  // After an error: writes what was categorized before it, so DB holds
  // every document read before the failing one (as far as they were built).
  auto write_before_failure = [&]() {
    if (db_failed) return;
    try {
      submit_chunk();
      write_pending();
    } catch (...) {
      // after_failure() reports what DB holds.
    }
  };
  try {
    internal::read_documents(args.positional(), read_options(args), on_document, warn_to(messages));
    submit_chunk();
    write_pending();
    commit();
  } catch (const Error& e) {
    write_before_failure();
    throw Error(std::string(e.what()) + "; " +
                after_failure(transaction, db_path, counts, db_failed));
  } catch (const Xapian::Error& e) {
    // Xapian names a block, not the database: "Error writing block 102".
    const std::string what = db_failed
                                 ? db_path + ": cannot write the database: " + xapian_reason(e)
                                 : e.get_description();
    write_before_failure();
    throw Error(what + "; " + after_failure(transaction, db_path, counts, db_failed));
  } catch (const std::exception& e) {
    write_before_failure();
    throw Error(std::string(e.what()) + "; " +
                after_failure(transaction, db_path, counts, db_failed));
  }
  if (counts.documents == 0) {
    messages.warning(args.has("split") ? "no document indexed: no input record has \"split\": \"" +
                                             args.value("split") + "\""
                                       : "no document indexed: the inputs hold none");
  }
  const double seconds = clock.seconds();
  messages.progress_done("indexed", counts.documents, seconds);
  const Xapian::doccount db_documents = db.get_doccount();

  if (args.has("json")) {
    internal::Json json = internal::Json::object();
    json["db"] = db_path;
    json["method"] = method;
    json["documents"] = counts.documents;
    json["replaced"] = counts.replaced;
    json["editor_set_kept"] = counts.editor_set_kept;
    json["seconds"] = seconds;
    json["docs_per_second"] = rate(counts.documents, seconds);
    internal::Json categories = internal::Json::array();
    for (const auto& [name, count] : sorted_counts(counts.categories)) {
      internal::Json entry = internal::Json::object();
      entry["category"] = name;
      entry["count"] = count;
      categories.push_back(std::move(entry));
    }
    json["categories"] = std::move(categories);
    json["uncategorized"] = counts.uncategorized;
    json["empty_text"] = counts.empty_text;
    json["db_documents"] = db_documents;
    out << json_output(json) << '\n';
    return 0;
  }

  out << "indexed " << counts.documents << " documents into " << db_path << " ("
      << format_fixed(rate(counts.documents, seconds), 0) << " docs/s)"
      << (no_categories ? " without categories" : "") << '\n';
  std::vector<std::vector<std::string>> rows;
  for (const auto& [name, count] : sorted_counts(counts.categories)) {
    rows.push_back({"  " + name, std::to_string(count)});
  }
  if (!no_categories && counts.uncategorized != 0) {
    rows.push_back({"  (no category)", std::to_string(counts.uncategorized)});
  }
  print_table(out, rows, {1});
  if (counts.empty_text != 0) {
    out << counts.empty_text << " documents had empty text\n";
  }
  if (counts.replaced != 0) {
    out << counts.replaced << " documents replaced earlier ones with the same id\n";
  }
  if (counts.editor_set_kept != 0) {
    out << counts.editor_set_kept
        << " of them kept the categories an editor gave them (--include-editor-set replaces "
           "those)\n";
  }
  out << db_path << " now holds " << db_documents << " documents\n";
  return 0;
}

}  // namespace

Command index_command() {
  return {"index",  "categorize documents and add them to a Xapian database",
          kUsage,   define_options,
          kExample, run_index};
}

}  // namespace autocat::cli
