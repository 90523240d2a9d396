// The review queue of `autocat serve`: every document of the served index
// that no editor has set, least sure first, where "sure" is the margin
// between the two best candidate categories. The stored scores (the
// category value slot, and the runner-up slot `autocat index` writes) seed
// it; after each correction the documents most like the
// corrected one are scored again by the live model on a background thread
// (bounded in count and time), so the queue follows what the model learned.
//
// Thread safety: every public method may be called from many threads at
// once (one mutex; the re-ranking runs on the queue's own thread and opens
// its own database).
#pragma once

#include <xapian.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "autocat/types.h"

namespace autocat::cli {

struct ReviewQueueOptions {
  Xapian::valueno category_slot = kDefaultCategorySlot;   // the categories and scores
  Xapian::valueno runner_up_slot = kDefaultRunnerUpSlot;  // the best category not assigned
  Xapian::valueno text_slot = Xapian::BAD_VALUENO;        // the stored text, if any
  std::string edited_term = kEditorSetTerm;               // editor-set documents leave the queue
  Xapian::doccount scan_limit = 200000;                   // documents looked at when built
  Xapian::doccount rerank_documents = 200;                // most similar documents re-scored
  std::chrono::milliseconds rerank_budget{200};           // scoring time per re-ranking
};

// What a filter keeps: documents whose two candidates include one of
// `categories` (none: any), among `matching` (unset: all).
struct ReviewFilter {
  std::vector<std::string> categories;
  std::optional<std::unordered_set<Xapian::docid>> matching;
};

struct ReviewItem {
  Xapian::docid docid = 0;
  double margin = 0;
  std::vector<Category> candidates;  // the best two (or fewer), best first
  bool rescored = false;             // candidates from the live model, not the index
};

struct ReviewPage {
  size_t total = 0;  // queued documents the filter keeps
  std::vector<ReviewItem> items;
};

// How the last re-rankings went.
struct RerankStats {
  uint64_t runs = 0;          // corrections re-ranked around
  double last_ms = 0;         // the last run's time: similar documents found and scored
  double max_ms = 0;          // the longest run
  double last_search_ms = 0;  // of the last run, finding the similar documents
  double last_model_ms = 0;   // the model's fit of what it learned, before the run
  size_t last_rescored = 0;   // documents the last run scored
  size_t last_similar = 0;    // queued documents it found similar
  size_t last_reordered = 0;  // of those, documents whose margin changed
};

class ReviewQueue {
 public:
  // Scores every category for a text, best first (the live model).
  using Scorer = std::function<std::vector<Category>(const std::string& text)>;

  ReviewQueue(std::string db_path, ReviewQueueOptions options, Scorer scorer);
  ~ReviewQueue();
  ReviewQueue(const ReviewQueue&) = delete;
  ReviewQueue& operator=(const ReviewQueue&) = delete;

  // The queue from `offset`, at most `limit` items, of what `filter` keeps,
  // least sure first (ties by docid). Waits (at most about a second) for
  // re-rankings still running, and rebuilds the queue from `db` first if
  // the database changed in a way it was not told of (written()).
  ReviewPage page(const Xapian::Database& db, const ReviewFilter& filter, size_t offset,
                  size_t limit);

  // Tells the queue that `docids` were written (their categories or editor
  // mark changed) in the commit that took the database from revision
  // `before` to what `db` shows: they are read again, and the documents most
  // like them are re-scored on the queue's thread.
  void written(const Xapian::Database& db, Xapian::rev before,
               const std::vector<Xapian::docid>& docids);

  RerankStats rerank_stats() const;

 private:
  struct Entry {
    double margin = 0;
    std::vector<Category> candidates;
    bool rescored = false;
  };

  void rebuild(const Xapian::Database& db);
  // Reads one document's entry again (removes it if edited or gone).
  void refresh(const Xapian::Database& db, Xapian::docid docid);
  void put(Xapian::docid docid, Entry entry);
  void erase(Xapian::docid docid);
  static Entry stored_entry(const std::string& categories, const std::string& runner_up);
  static Entry scored_entry(std::vector<Category> scores);
  void work();
  void rerank(const std::vector<Xapian::docid>& corrected);

  const std::string db_path_;
  const ReviewQueueOptions options_;
  const Scorer scorer_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<Xapian::rev> revision_;  // the revision the queue reflects
  std::unordered_map<Xapian::docid, Entry> entries_;
  std::set<std::pair<double, Xapian::docid>> order_;
  // The live model's view of documents it re-scored, kept across rebuilds.
  std::unordered_map<Xapian::docid, Entry> rescored_;
  std::vector<Xapian::docid> jobs_;
  bool busy_ = false;
  bool stop_ = false;
  RerankStats stats_;
  std::thread worker_;
};

}  // namespace autocat::cli
