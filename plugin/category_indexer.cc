// CategoryIndexer: the indexing hook an application calls for each document.
// Every const method loads the current generation (an immutable snapshot of
// the open model and its names) once and works on it alone; refresh()
// publishes a new one. So one CategoryIndexer may be shared by many
// indexing threads, also while it refreshes.
#include "autocat/category_indexer.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

#include "autocat/corrections.h"
#include "autocat/error.h"
#include "autocat/facets.h"
#include "classify/decide/categorizer.h"
#include "classify/decide/rules.h"
#include "classify/io/model_dir.h"
#include "classify/model/model_io.h"
#include "classify/text/analyzer.h"
#include "plugin/indexer_access.h"

namespace autocat {

namespace {

// Xapian's glass backend refuses terms longer than this many bytes.
constexpr size_t kMaxTermBytes = 245;

bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// Replaces each run of ASCII whitespace by one space and trims both ends, so
// a snippet stays on one line in result listings.
std::string collapse_whitespace(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool pending_space = false;
  for (char c : text) {
    if (is_ascii_space(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

// The document data when the caller gives no title: the start of the text,
// valid UTF-8, on one line, at most `max_bytes` bytes.
std::string snippet(std::string_view text, size_t max_bytes) {
  std::string head = internal::sanitize_utf8(internal::utf8_prefix(text, max_bytes));
  return internal::utf8_prefix(collapse_whitespace(head), max_bytes);
}

void check_options(const IndexOptions& options, const std::vector<std::string>& categories,
                   const std::string& model_dir) {
  // Category terms must not collide with text, stem or id terms.
  check_category_prefix(options.category_prefix);
  try {
    Xapian::Stem check(options.stemmer);
  } catch (const Xapian::InvalidArgumentError&) {
    throw InvalidArgumentError("IndexOptions.stemmer: unknown language '" + options.stemmer +
                               "'; use one Xapian::Stem knows (english, german, ...) or none");
  }
  if (options.category_slot == Xapian::BAD_VALUENO) {
    throw InvalidArgumentError("IndexOptions.category_slot must not be Xapian::BAD_VALUENO");
  }
  if (options.snippet_bytes < 0) {
    throw InvalidArgumentError("IndexOptions.snippet_bytes must not be negative, got " +
                               std::to_string(options.snippet_bytes));
  }
  for (const std::string& name : categories) {
    if (category_term(name, options.category_prefix).size() > kMaxTermBytes) {
      throw InvalidArgumentError("category '" + name + "' of model " + model_dir +
                                 " with prefix '" + options.category_prefix +
                                 "' exceeds Xapian's 245-byte term limit; use a shorter prefix");
    }
  }
}

// Removes the category terms a previous index() stored: the term of every
// category of the model and of every category listed in the old slot value
// (written by another model, perhaps). Other terms that merely start with the
// prefix (an application's "XCOLORred") are left alone.
void remove_category_terms(Xapian::Document& doc, const std::string& prefix,
                           const std::vector<std::string>& sorted_categories,
                           const std::string& old_value) {
  std::vector<std::string> previous;
  for (Category& category : decode_categories(old_value)) {
    previous.push_back(std::move(category.name));
  }
  std::vector<std::string> stale;
  Xapian::TermIterator it = doc.termlist_begin();
  const Xapian::TermIterator end = doc.termlist_end();
  it.skip_to(prefix);
  for (; it != end; ++it) {
    const std::string& term = *it;
    if (term.compare(0, prefix.size(), prefix) != 0) break;
    const std::string name = category_from_term(term, prefix);
    if (name.empty()) continue;
    if (std::binary_search(sorted_categories.begin(), sorted_categories.end(), name) ||
        std::find(previous.begin(), previous.end(), name) != previous.end()) {
      stale.push_back(term);
    }
  }
  for (const std::string& term : stale) doc.remove_term(term);
}

// Adds `text` to `doc` exactly as an application's Xapian::TermGenerator
// would. A TermGenerator and its Stem hold per-use state, so each thread keeps
// its own, made once per language (building a Snowball stemmer per document
// would cost more than indexing short texts).
void index_search_text(std::string_view text, const std::string& stemmer, Xapian::Document& doc) {
  struct Generator {
    std::string language;
    Xapian::TermGenerator generator;
  };
  thread_local Generator cached;
  if (cached.language != stemmer || cached.language.empty()) {
    cached.generator = Xapian::TermGenerator();
    cached.generator.set_stemmer(Xapian::Stem(stemmer));
    cached.generator.set_flags(Xapian::TermGenerator::FLAG_CJK_NGRAM);
    cached.language = stemmer;
  }
  cached.generator.set_document(doc);
  cached.generator.index_text(std::string(text));
  // Drop the reference to the caller's document (set_document also restarts positions).
  cached.generator.set_document(Xapian::Document());
}

// Calls work(i) for every i below `count` on `threads` threads (0: one per
// core), the calling thread among them. Each thread takes the next unclaimed
// index, so long documents do not leave the others idle. Throws the error of
// the lowest failing index, after every thread has finished.
void run_in_parallel(size_t count, unsigned threads, const std::function<void(size_t)>& work) {
  if (threads == 0) threads = std::max(1U, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<size_t>(threads, count));
  std::vector<std::exception_ptr> errors(count);
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t i = next++; i < count; i = next++) {
      try {
        work(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> others;
  for (unsigned t = 1; t < threads; ++t) others.emplace_back(worker);
  worker();
  for (std::thread& other : others) other.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

// Removes every model term (kModelTermPrefix...) from `doc`.
void remove_model_terms(Xapian::Document& doc) {
  std::vector<std::string> stale;
  Xapian::TermIterator it = doc.termlist_begin();
  for (it.skip_to(kModelTermPrefix); it != doc.termlist_end(); ++it) {
    if ((*it).compare(0, kModelTermPrefix.size(), kModelTermPrefix) != 0) break;
    stale.push_back(*it);
  }
  for (const std::string& term : stale) doc.remove_term(term);
}

// The fingerprint of a model file ("crc32:1a2b3c4d bytes:123") with the
// journal as it was when the model was opened: learning changes what the
// model decides, so documents categorized before it carry another term. A
// model with no journal keeps the file's fingerprint alone.
std::string model_fingerprint_with_journal(const std::string& file_fingerprint,
                                           uint64_t journal_bytes) {
  if (journal_bytes == 0) return file_fingerprint;
  return file_fingerprint + " journal:" + std::to_string(journal_bytes);
}

}  // namespace

std::string model_version_term(const std::string& fingerprint) {
  unsigned crc = 0;
  unsigned long long bytes = 0;
  unsigned long long journal = 0;
  char text[96];
  const int fields =
      std::sscanf(fingerprint.c_str(), "crc32:%8x bytes:%llu journal:%llu", &crc, &bytes, &journal);
  if (fields == 3) {
    std::snprintf(text, sizeof(text), "%08x-%llu-j%llu", crc, bytes, journal);
    return kModelTermPrefix + text;
  }
  if (fields == 2) {
    std::snprintf(text, sizeof(text), "%08x-%llu", crc, bytes);
    return kModelTermPrefix + text;
  }
  // Another fingerprint form: its letters and digits (a term holds no space).
  std::string compact;
  for (char c : fingerprint) {
    if (std::isalnum(static_cast<unsigned char>(c))) compact += c;
  }
  return kModelTermPrefix + compact.substr(0, 200);
}

namespace {

// What identifies a model file on disk: a model directory replaced by
// another (trained from scratch under the same name) can reuse the
// generation's name, not its inode, size and time together.
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = -1;
  int64_t mtime_ns = 0;
  bool operator==(const FileIdentity& other) const {
    return device == other.device && inode == other.inode && size == other.size &&
           mtime_ns == other.mtime_ns;
  }
};

// The identity of `path`; size -1 if it cannot be stat'ed.
FileIdentity identify(const std::string& path) {
  FileIdentity identity;
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return identity;
  identity.device = status.st_dev;
  identity.inode = status.st_ino;
  identity.size = status.st_size;
  identity.mtime_ns = int64_t(status.st_mtim.tv_sec) * 1000000000 + status.st_mtim.tv_nsec;
  return identity;
}

}  // namespace

// The names a generation gives out by reference (categories(),
// model_fingerprint(), model_term()): kept while the indexer lives, so
// that a reference taken before a refresh() stays valid.
struct internal::IndexerNames {
  std::vector<std::string> categories;         // as the model orders them
  std::vector<std::string> sorted_categories;  // for binary_search
  std::string model_fingerprint;               // of the model opened, journal included
  std::string model_term;                      // empty: options.categorize off
};

namespace {

// set_categories() with the names of one generation. A free function: a
// member would be exported with the internal type in its signature.
void store_categories(const IndexOptions& options, const internal::IndexerNames& names,
                      Xapian::Document& doc, const std::vector<Category>& categories) {
  // Drop what a previous call stored before adding anything.
  remove_category_terms(doc, options.category_prefix, names.sorted_categories,
                        doc.get_value(options.category_slot));
  doc.add_value(options.category_slot, std::string());  // an empty value removes the slot
  for (const Category& category : categories) {
    doc.add_boolean_term(category_term(category.name, options.category_prefix));
  }
  if (!categories.empty()) doc.add_value(options.category_slot, encode_categories(categories));
  if (!names.model_term.empty()) {
    remove_model_terms(doc);
    doc.add_boolean_term(names.model_term);
  }
  doc.add_value(kDefaultRunnerUpSlot, std::string());  // set_runner_up() may store one after
}

}  // namespace

// One model generation as the indexer uses it; never modified once
// published (its Categorizer learns, thread-safely, in place).
struct IndexerGeneration {
  std::shared_ptr<internal::Categorizer> categorizer;
  std::shared_ptr<const internal::IndexerNames> names;
  internal::RuleSet rules;  // IndexOptions::rules_file
  std::string model_file;   // the path the categorizer loaded
  FileIdentity identity;    // of model_file when it was loaded (size -1: unknown)

  // The learned categories with the rules applied (their title: field
  // matches `title`).
  std::vector<Category> categorize(std::string_view text, std::string_view title,
                                   const ClassifyOptions& classify) const {
    if (rules.empty()) return categorizer->classify(text, classify);
    return rules
        .decide(*categorizer,
                categorizer->scores(
                    categorizer->document_terms(categorizer->analyzer().analyze(text)), classify),
                text, title, classify)
        .assigned;
  }

  // categorize() with the best category it did not assign.
  Categorization categorize_with_runner_up(std::string_view text, std::string_view title,
                                           const ClassifyOptions& classify) const {
    const internal::Categorizer& model = *categorizer;
    const std::vector<double> scores =
        model.scores(model.document_terms(model.analyzer().analyze(text)), classify);
    Categorization result;
    result.assigned = rules.empty() ? model.decide(scores, classify)
                                    : rules.decide(model, scores, text, title, classify).assigned;
    for (Category& candidate : model.ranked(scores)) {
      const bool assigned =
          std::any_of(result.assigned.begin(), result.assigned.end(),
                      [&](const Category& category) { return category.name == candidate.name; });
      if (!assigned) {
        result.runner_up = std::move(candidate);
        break;
      }
    }
    return result;
  }
};

namespace {

// Opens the generation installed in `model_dir` now.
std::shared_ptr<const IndexerGeneration> open_generation(const std::string& model_dir,
                                                         const IndexOptions& options) {
  auto generation = std::make_shared<IndexerGeneration>();
  // Stat'ed before the open: if a train installs another model meanwhile,
  // the paths differ and the next refresh() opens it.
  const std::string resolved = internal::resolve_model_dir(model_dir).model_file;
  const FileIdentity identity = identify(resolved);
  generation->categorizer = std::make_shared<internal::Categorizer>(model_dir);
  const internal::Categorizer& categorizer = *generation->categorizer;
  generation->model_file = categorizer.paths().model_file;
  if (generation->model_file == resolved) generation->identity = identity;
  check_options(options, categorizer.categories(), model_dir);
  auto names = std::make_shared<internal::IndexerNames>();
  names->categories = categorizer.categories();
  names->sorted_categories = categorizer.categories();
  std::sort(names->sorted_categories.begin(), names->sorted_categories.end());
  // From the generation the categorizer opened (its files never change but
  // for journal appends), not from CURRENT again: a model installed
  // meanwhile must not be recorded for documents this one categorizes.
  names->model_fingerprint = model_fingerprint_with_journal(
      internal::model_file_fingerprint(categorizer.paths().model_file),
      categorizer.journal_bytes_at_open());
  if (options.categorize) names->model_term = model_version_term(names->model_fingerprint);
  generation->names = std::move(names);
  if (!options.rules_file.empty()) {
    generation->rules = internal::RuleSet::load(options.rules_file, categorizer.categories());
  }
  return generation;
}

}  // namespace

struct CategoryIndexer::Rep {
  std::string model_dir;
  IndexOptions options;
  // Read with std::atomic_load, replaced with std::atomic_store by
  // refresh(): each call works on the generation it loaded.
  std::shared_ptr<const IndexerGeneration> generation;
  std::mutex refresh_mutex;  // serializes refresh(); guards `names_held`
  std::vector<std::shared_ptr<const internal::IndexerNames>> names_held;

  std::shared_ptr<const IndexerGeneration> current() const { return std::atomic_load(&generation); }
  void hold(std::shared_ptr<const IndexerGeneration> next) {
    names_held.push_back(next->names);
    std::atomic_store(&generation, std::move(next));
  }
};

std::shared_ptr<const internal::Categorizer> internal::IndexerAccess::categorizer(
    const CategoryIndexer& indexer) {
  return indexer.rep_->current()->categorizer;
}

CategoryIndexer::CategoryIndexer(const std::string& model_dir, const IndexOptions& options)
    : rep_(std::make_unique<Rep>()) {
  rep_->model_dir = model_dir;
  rep_->options = options;
  rep_->hold(open_generation(model_dir, options));
}

CategoryIndexer::CategoryIndexer(const CategoryIndexer& other, SnapshotTag)
    : rep_(std::make_unique<Rep>()) {
  rep_->model_dir = other.rep_->model_dir;
  rep_->options = other.rep_->options;
  rep_->hold(other.rep_->current());
}

CategoryIndexer::~CategoryIndexer() = default;

std::unique_ptr<CategoryIndexer> CategoryIndexer::snapshot() const {
  return std::unique_ptr<CategoryIndexer>(new CategoryIndexer(*this, SnapshotTag()));
}

bool CategoryIndexer::refresh() {
  const std::lock_guard<std::mutex> lock(rep_->refresh_mutex);
  const std::shared_ptr<const IndexerGeneration> current = rep_->current();
  // Two small reads: CURRENT and a stat of the model file it names.
  const std::string installed = internal::resolve_model_dir(rep_->model_dir).model_file;
  if (installed != current->model_file || current->identity.size < 0 ||
      !(identify(installed) == current->identity)) {
    rep_->hold(open_generation(rep_->model_dir, rep_->options));
    return true;
  }
  return current->categorizer->catch_up() > 0;
}

const std::vector<std::string>& CategoryIndexer::categories() const {
  return rep_->current()->names->categories;
}

Method CategoryIndexer::default_method() const {
  return rep_->current()->categorizer->default_method();
}

std::vector<std::string> CategoryIndexer::take_warnings() const {
  return rep_->current()->categorizer->take_warnings();
}

void CategoryIndexer::learn(const std::string& id, std::string_view text,
                            const std::vector<std::string>& labels) {
  rep_->current()->categorizer->learn(id, text, labels);
}

void CategoryIndexer::forget(const std::string& id) { rep_->current()->categorizer->forget(id); }

const IndexOptions& CategoryIndexer::options() const { return rep_->options; }

std::vector<Category> CategoryIndexer::score(std::string_view text) const {
  return score(text, rep_->options.classify);
}

std::vector<Category> CategoryIndexer::score(std::string_view text,
                                             const ClassifyOptions& options) const {
  const std::shared_ptr<const IndexerGeneration> generation = rep_->current();
  const internal::Categorizer& categorizer = *generation->categorizer;
  internal::DocumentTerms doc = categorizer.document_terms(categorizer.analyzer().analyze(text));
  return categorizer.ranked(categorizer.scores(doc, options));
}

std::vector<Category> CategoryIndexer::categorize(std::string_view text) const {
  return categorize(text, rep_->options.classify);
}

std::vector<Category> CategoryIndexer::categorize(std::string_view text,
                                                  const ClassifyOptions& options) const {
  return rep_->current()->categorize(text, std::string_view(), options);
}

std::vector<Category> CategoryIndexer::index(std::string_view text, Xapian::Document& doc) const {
  return index_with_title(text, std::string_view(), doc);
}

std::vector<Category> CategoryIndexer::index_with_title(std::string_view text,
                                                        std::string_view title,
                                                        Xapian::Document& doc) const {
  const IndexOptions& options = rep_->options;
  // One generation for the categories and the model term they are stored with.
  const std::shared_ptr<const IndexerGeneration> generation = rep_->current();
  // The classifier's analysis (ICU, the model's settings) is separate from
  // the search terms below (Xapian's TermGenerator). Rules see the title.
  Categorization categorization;
  if (options.categorize) {
    categorization = generation->categorize_with_runner_up(text, title, options.classify);
  }

  if (options.index_text) index_search_text(text, options.stemmer, doc);
  store_categories(rep_->options, *generation->names, doc, categorization.assigned);
  set_runner_up(doc, categorization.runner_up);
  return std::move(categorization.assigned);
}

void CategoryIndexer::set_categories(Xapian::Document& doc,
                                     const Categorization& categorization) const {
  set_categories(doc, categorization.assigned);
  set_runner_up(doc, categorization.runner_up);
}

void CategoryIndexer::set_runner_up(Xapian::Document& doc,
                                    const std::optional<Category>& runner_up) const {
  // An empty value removes the slot.
  doc.add_value(kDefaultRunnerUpSlot, runner_up ? encode_categories({*runner_up}) : std::string());
}

Decision CategoryIndexer::decision_mode() const {
  return rep_->current()->categorizer->decision_mode(rep_->options.classify);
}

void CategoryIndexer::set_categories(Xapian::Document& doc,
                                     const std::vector<Category>& categories) const {
  store_categories(rep_->options, *rep_->current()->names, doc, categories);
}

const std::string& CategoryIndexer::model_term() const {
  return rep_->current()->names->model_term;
}

const std::string& CategoryIndexer::model_fingerprint() const {
  return rep_->current()->names->model_fingerprint;
}

void CategoryIndexer::configure_query_parser(Xapian::QueryParser& parser) const {
  autocat::configure_query_parser(parser, rep_->options.stemmer, rep_->options.category_prefix);
}

PreparedDocument CategoryIndexer::prepare_document(const std::string& id, std::string_view text,
                                                   const std::string& title) const {
  if (id.empty()) throw InvalidArgumentError("document id must not be empty");
  PreparedDocument prepared;
  prepared.id_term = kIdPrefix + id;
  if (prepared.id_term.size() > kMaxTermBytes) {
    throw InvalidArgumentError("document id '" + internal::utf8_prefix(id, 40) + "...' is " +
                               std::to_string(id.size()) + " bytes; ids may be at most " +
                               std::to_string(kMaxTermBytes - kIdPrefix.size()) +
                               " bytes (Xapian's 245-byte term limit less the Q prefix)");
  }
  prepared.categories = index_with_title(text, title, prepared.document);
  prepared.document.add_boolean_term(prepared.id_term);
  prepared.document.set_data(
      title.empty() ? snippet(text, static_cast<size_t>(rep_->options.snippet_bytes)) : title);
  return prepared;
}

std::vector<Category> CategoryIndexer::index_document(Xapian::WritableDatabase& db,
                                                      const std::string& id, std::string_view text,
                                                      const std::string& title) const {
  PreparedDocument prepared = prepare_document(id, text, title);
  replace_keeping_editor_labels(db, prepared.id_term, prepared.document, *this);
  return std::move(prepared.categories);
}

std::vector<PreparedDocument> CategoryIndexer::prepare_documents(
    const std::vector<DocumentToIndex>& documents, unsigned threads) const {
  std::vector<PreparedDocument> prepared(documents.size());
  run_in_parallel(documents.size(), threads, [&](size_t i) {
    const DocumentToIndex& doc = documents[i];
    prepared[i] = prepare_document(doc.id, doc.text, doc.title);
  });
  return prepared;
}

std::vector<std::vector<Category>> CategoryIndexer::categorize_batch(
    const std::vector<std::string>& texts, unsigned threads) const {
  std::vector<std::vector<Category>> categories(texts.size());
  run_in_parallel(texts.size(), threads, [&](size_t i) { categories[i] = categorize(texts[i]); });
  return categories;
}

std::vector<Categorization> CategoryIndexer::categorize_batch_with_runner_up(
    const std::vector<std::string>& texts, unsigned threads) const {
  std::vector<Categorization> result(texts.size());
  // One generation for the whole batch.
  const std::shared_ptr<const IndexerGeneration> generation = rep_->current();
  run_in_parallel(texts.size(), threads, [&](size_t i) {
    result[i] =
        generation->categorize_with_runner_up(texts[i], std::string_view(), rep_->options.classify);
  });
  return result;
}

std::vector<std::vector<Category>> CategoryIndexer::index_documents(
    Xapian::WritableDatabase& db, const std::vector<DocumentToIndex>& documents,
    unsigned threads) const {
  std::vector<PreparedDocument> prepared = prepare_documents(documents, threads);
  std::vector<std::vector<Category>> categories;
  categories.reserve(prepared.size());
  for (PreparedDocument& doc : prepared) {
    replace_keeping_editor_labels(db, doc.id_term, doc.document, *this);
    categories.push_back(std::move(doc.categories));
  }
  return categories;
}

}  // namespace autocat
