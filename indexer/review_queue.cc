#include "indexer/review_queue.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>

#include "autocat/category_indexer.h"
#include "indexer/relabel.h"

namespace autocat::cli {

namespace {

// Terms of the text, not the prefixed ones (categories, ids, stems, the
// application's fields): what makes two documents alike.
class PlainTerms : public Xapian::ExpandDecider {
 public:
  bool operator()(const std::string& term) const override {
    return !term.empty() && !(term[0] >= 'A' && term[0] <= 'Z');
  }
};

// Terms of the corrected document used to find the documents like it.
constexpr Xapian::termcount kSimilarityTerms = 40;
// How long page() waits for re-rankings still running.
constexpr std::chrono::milliseconds kWaitForRerank{1000};
// Threads that score the similar documents (the model is thread-safe).
constexpr unsigned kScoringThreads = 2;

double elapsed_ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
      .count();
}

}  // namespace

ReviewQueue::ReviewQueue(std::string db_path, ReviewQueueOptions options, Scorer scorer)
    : db_path_(std::move(db_path)), options_(std::move(options)), scorer_(std::move(scorer)) {
  worker_ = std::thread([this] { work(); });
}

ReviewQueue::~ReviewQueue() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

ReviewQueue::Entry ReviewQueue::scored_entry(std::vector<Category> scores) {
  std::stable_sort(scores.begin(), scores.end(),
                   [](const Category& a, const Category& b) { return a.score > b.score; });
  if (scores.size() > 2) scores.resize(2);
  Entry entry;
  // One category: its score (how sure the index was of it); none: 0.
  if (scores.size() == 1) entry.margin = scores[0].score;
  if (scores.size() == 2) entry.margin = scores[0].score - scores[1].score;
  entry.candidates = std::move(scores);
  return entry;
}

ReviewQueue::Entry ReviewQueue::stored_entry(const std::string& categories,
                                             const std::string& runner_up) {
  std::vector<Category> scores = decode_categories(categories);
  // The runner-up is the best category not assigned: the second candidate
  // beside one assigned category, the first beside none.
  const std::vector<Category> second = decode_categories(runner_up);
  if (scores.size() < 2 && second.size() == 1 && std::isfinite(second[0].score) &&
      (scores.empty() || second[0].name != scores[0].name)) {
    scores.push_back(second[0]);
  }
  return scored_entry(std::move(scores));
}

void ReviewQueue::put(Xapian::docid docid, Entry entry) {
  erase(docid);
  order_.emplace(entry.margin, docid);
  entries_.emplace(docid, std::move(entry));
}

void ReviewQueue::erase(Xapian::docid docid) {
  const auto it = entries_.find(docid);
  if (it == entries_.end()) return;
  order_.erase({it->second.margin, docid});
  entries_.erase(it);
}

void ReviewQueue::rebuild(const Xapian::Database& db) {
  entries_.clear();
  order_.clear();
  std::unordered_set<Xapian::docid> edited;
  for (Xapian::PostingIterator it = db.postlist_begin(options_.edited_term);
       it != db.postlist_end(options_.edited_term); ++it) {
    edited.insert(*it);
  }
  Xapian::ValueIterator categories = db.valuestream_begin(options_.category_slot);
  Xapian::ValueIterator runner_up = db.valuestream_begin(options_.runner_up_slot);
  const Xapian::ValueIterator end = db.valuestream_end(0);
  Xapian::doccount scanned = 0;
  for (Xapian::PostingIterator it = db.postlist_begin(""); it != db.postlist_end("");
       ++it, ++scanned) {
    if (scanned == options_.scan_limit) break;
    const Xapian::docid docid = *it;
    if (edited.count(docid)) continue;
    std::string stored;
    std::string second;
    if (categories != end) categories.skip_to(docid);
    if (categories != end && categories.get_docid() == docid) stored = *categories;
    if (runner_up != end) runner_up.skip_to(docid);
    if (runner_up != end && runner_up.get_docid() == docid) second = *runner_up;
    const auto live = rescored_.find(docid);
    put(docid, live != rescored_.end() ? live->second : stored_entry(stored, second));
  }
  revision_ = db.get_revision();
}

void ReviewQueue::refresh(const Xapian::Database& db, Xapian::docid docid) {
  rescored_.erase(docid);
  try {
    const Xapian::Document doc = db.get_document(docid);
    Xapian::TermIterator term = doc.termlist_begin();
    term.skip_to(options_.edited_term);
    if (term != doc.termlist_end() && *term == options_.edited_term) {
      erase(docid);
      return;
    }
    put(docid, stored_entry(doc.get_value(options_.category_slot),
                            doc.get_value(options_.runner_up_slot)));
  } catch (const Xapian::DocNotFoundError&) {
    erase(docid);
  }
}

ReviewPage ReviewQueue::page(const Xapian::Database& db, const ReviewFilter& filter, size_t offset,
                             size_t limit) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait_for(lock, kWaitForRerank, [this] { return jobs_.empty() && !busy_; });
  if (!revision_ || *revision_ != db.get_revision()) rebuild(db);
  ReviewPage result;
  for (const auto& [margin, docid] : order_) {
    const Entry& entry = entries_.at(docid);
    if (filter.matching && !filter.matching->count(docid)) continue;
    if (!filter.categories.empty() &&
        std::none_of(entry.candidates.begin(), entry.candidates.end(), [&](const Category& c) {
          return std::find(filter.categories.begin(), filter.categories.end(), c.name) !=
                 filter.categories.end();
        })) {
      continue;
    }
    if (result.total >= offset && result.items.size() < limit) {
      result.items.push_back(ReviewItem{docid, margin, entry.candidates, entry.rescored});
    }
    ++result.total;
  }
  return result;
}

void ReviewQueue::written(const Xapian::Database& db, Xapian::rev before,
                          const std::vector<Xapian::docid>& docids) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (revision_ && *revision_ == before) {
      for (const Xapian::docid docid : docids) refresh(db, docid);
      revision_ = db.get_revision();
    } else {
      // Another writer came between: page() rebuilds from the database.
      for (const Xapian::docid docid : docids) rescored_.erase(docid);
      revision_.reset();
    }
    jobs_.insert(jobs_.end(), docids.begin(), docids.end());
  }
  changed_.notify_all();
}

RerankStats ReviewQueue::rerank_stats() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void ReviewQueue::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
    if (stop_) return;
    std::vector<Xapian::docid> corrected;
    corrected.swap(jobs_);
    busy_ = true;
    lock.unlock();
    try {
      rerank(corrected);
    } catch (const Xapian::Error&) {
      // The queue keeps its margins; the next correction tries again.
    } catch (const std::exception&) {
    }
    lock.lock();
    busy_ = false;
    changed_.notify_all();
  }
}

void ReviewQueue::rerank(const std::vector<Xapian::docid>& corrected) {
  const auto started = std::chrono::steady_clock::now();
  const Xapian::Database db(db_path_);
  // The queued documents most like the corrected ones, most alike first:
  // the corrected documents' most telling terms as a query.
  Xapian::RSet rset;
  Xapian::docid first = 0;
  for (const Xapian::docid docid : corrected) {
    try {
      db.get_document(docid);
      rset.add_document(docid);
      if (!first) first = docid;
    } catch (const Xapian::DocNotFoundError&) {
    }
  }
  if (rset.empty()) return;
  Xapian::Enquire enquire(db);
  const PlainTerms plain;
  const Xapian::ESet terms = enquire.get_eset(kSimilarityTerms, rset, &plain);
  if (terms.empty()) return;
  enquire.set_query(Xapian::Query(Xapian::Query::OP_OR, terms.begin(), terms.end()));
  const Xapian::MSet similar =
      enquire.get_mset(0, options_.rerank_documents + static_cast<Xapian::doccount>(rset.size()));
  std::vector<Xapian::docid> queued;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (Xapian::MSetIterator it = similar.begin(); it != similar.end(); ++it) {
      // The corrected documents keep what the editor said.
      if (entries_.count(*it) && !rset.contains(*it) && queued.size() < options_.rerank_documents) {
        queued.push_back(*it);
      }
    }
  }
  const double search_ms = elapsed_ms(started);
  // The model fits what it learned at its first score after a change (see
  // live_models.h): paid here, once, rather than by the next reader, and
  // not counted in the budget, which bounds the scoring of the queue.
  const auto fitting = std::chrono::steady_clock::now();
  try {
    scorer_(document_text(db.get_document(first), options_.text_slot));
  } catch (const std::exception&) {
  }
  const double model_ms = elapsed_ms(fitting);
  const auto scoring = std::chrono::steady_clock::now();
  // Most alike first, on kScoringThreads threads (each reading through its
  // own database), until the budget is spent.
  std::vector<std::optional<Entry>> scored(queued.size());
  std::atomic<size_t> next{0};
  const auto score = [&](const Xapian::Database& reader) {
    for (size_t i = next++; i < queued.size(); i = next++) {
      if (elapsed_ms(scoring) > static_cast<double>(options_.rerank_budget.count())) break;
      try {
        Entry entry = scored_entry(
            scorer_(document_text(reader.get_document(queued[i]), options_.text_slot)));
        entry.rescored = true;
        scored[i] = std::move(entry);
      } catch (const std::exception&) {
        // A text the model cannot score keeps its stored margin.
      } catch (const Xapian::Error&) {
      }
    }
  };
  std::vector<std::thread> helpers;
  for (unsigned t = 1; t < kScoringThreads; ++t) {
    helpers.emplace_back([&] {
      try {
        score(Xapian::Database(db_path_));
      } catch (const Xapian::Error&) {
        // This thread's share goes to the others.
      }
    });
  }
  score(db);
  for (std::thread& helper : helpers) helper.join();
  const std::lock_guard<std::mutex> lock(mutex_);
  size_t reordered = 0;
  size_t rescored = 0;
  for (size_t i = 0; i < queued.size(); ++i) {
    if (!scored[i]) continue;
    ++rescored;
    const auto it = entries_.find(queued[i]);
    if (it == entries_.end()) continue;  // edited meanwhile
    if (it->second.margin != scored[i]->margin) ++reordered;
    rescored_[queued[i]] = *scored[i];
    put(queued[i], std::move(*scored[i]));
  }
  const double ms = search_ms + elapsed_ms(scoring);
  ++stats_.runs;
  stats_.last_ms = ms;
  stats_.max_ms = std::max(stats_.max_ms, ms);
  stats_.last_search_ms = search_ms;
  stats_.last_model_ms = model_ms;
  stats_.last_rescored = rescored;
  stats_.last_similar = queued.size();
  stats_.last_reordered = reordered;
}

}  // namespace autocat::cli
