// kNN through posting lists. The new document is a query: for each of its
// terms, walk that term's postings over the training collection and
// accumulate w(t,q)·w(t,d) per training document; keep the top k; each
// neighbour votes for its categories with its similarity.
// Default: exact cosine of sublinear tf-idf vectors (training norms
// precomputed, postings pre-divided by them) over every query term; the
// terms in a quarter or more of the training documents are added as dense
// columns, the rest posting by posting, and the top k is selected from the
// documents above a sampled threshold (on 20 Newsgroups at k = 300, about
// 2x the plain posting walk with a heap). KnnSearch::kMaxScore finds the
// same neighbours with bit-identical similarities while skipping postings;
// on 20 Newsgroups it is slower (the accumulator fits in cache), so it is
// not the default.
// Approximate mode (ClassifyOptions knn_max_query_terms / knn_max_df_ratio)
// walks fewer query terms.
//
// KnnLiveIndex adds documents learned after training to a KnnIndex, and
// hides forgotten ones (Categorizer::learn / forget).
//
// Thread safety: KnnIndex is immutable after build; KnnClassifier::score()
// may be called from many threads, also while other threads learn into and
// forget from its KnnLiveIndex.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "classify/corpus/training_collection.h"
#include "classify/methods/classifier.h"

namespace autocat::internal {

// Compact in-memory copy of the training postings: per term, the documents
// containing it with w(t,d)/|d| as float.
// How KnnIndex::neighbours finds the top k. All give the same neighbours
// with the same similarities; kExhaustive is the default.
enum class KnnSearch {
  kMaxScore,     // skips documents whose upper bound cannot reach the top k
  kExhaustive,   // every query term over every document; the longest lists
                 // are added as dense columns (see KnnIndex::dense_column)
  kPostingWalk,  // accumulates every posting of every query term, one by
                 // one: the reference the tests compare the others to
};

// What one KnnIndex::neighbours call walked (for tests and benchmarks).
struct KnnSearchStats {
  uint32_t query_terms = 0;   // terms with postings, after approximate-mode cuts
  uint32_t terms_walked = 0;  // whose every posting was accumulated
  uint64_t postings_walked = 0;
  uint32_t candidates = 0;   // documents looked up in the other terms' lists
  uint32_t dense_terms = 0;  // terms added as dense columns
};

class KnnIndex {
 public:
  // REQUIRES: idf.size() == corpus.num_terms(); terms with idf 0 get no postings.
  KnnIndex(const TrainingCorpus& corpus, const std::vector<float>& idf);
  ~KnnIndex();
  KnnIndex(const KnnIndex&) = delete;
  KnnIndex& operator=(const KnnIndex&) = delete;

  // The index file `train` writes beside the model (kKnnIndexFileName):
  // the arrays below as they lie in memory, so open() maps them instead of
  // rebuilding them from the training database. Throws IOError.
  void write(const std::string& path) const;
  // Maps the file at `path`, written for a model with these idf values,
  // documents and categories (it must match them exactly). Pages are read
  // as searches touch them and shared between processes; each term's
  // document numbers are checked the first time a search walks them.
  // The file must not change while mapped (generations are installed by
  // rename): each search first checks its size and mtime and throws
  // ModelFormatError naming it if they changed, rather than touching pages
  // past a truncated end (SIGBUS). A truncation racing a search can still
  // raise SIGBUS; AUTOCAT_KNN_INDEX=read in the environment reads the file
  // into private memory instead, immune to it (not shared between
  // processes). Throws InvalidArgumentError for another setting.
  // Returns nullptr if there is no such file (a model from before the
  // file); throws ModelFormatError naming it if it is truncated, foreign,
  // damaged or belongs to another model.
  static std::shared_ptr<const KnnIndex> open(const std::string& path,
                                              const std::vector<float>& idf, uint32_t num_docs,
                                              uint32_t num_categories);

  uint32_t num_docs() const { return num_docs_; }
  uint32_t num_categories() const { return num_categories_; }
  uint64_t num_postings() const { return num_postings_; }
  const std::vector<float>& idf() const { return idf_; }
  // True if the postings come from the index file (open()): mapped, or
  // read into private memory when the environment sets
  // AUTOCAT_KNN_INDEX=read.
  bool from_file() const { return mapping_ != nullptr; }
  bool mapped() const;
  // Bytes of heap the index holds (a mapped index's postings are not on
  // the heap: the kernel pages them in and may share or drop them).
  size_t memory_bytes() const;

  struct Neighbour {
    uint32_t doc;      // dense training document index
    float similarity;  // cosine
  };
  // The k most similar training documents, most similar first; ties broken
  // by lower doc index. Similarities are float sums accumulated in one fixed
  // order (query terms by decreasing upper bound, then term id), whatever
  // `search` is.
  std::vector<Neighbour> neighbours(const DocumentTerms& query, int k, int max_query_terms = 0,
                                    double max_df_ratio = 1.0,
                                    KnnSearch search = KnnSearch::kExhaustive,
                                    KnnSearchStats* stats = nullptr) const;
  // Term t's postings as searches read them: documents ascending (when the
  // index was built sorted), each with w(t,d)/|d|; and the largest such
  // weight, max-score's per-term upper bound. For benchmarks
  // (bench/knn_bounds). REQUIRES: t < idf().size().
  struct TermPostings {
    const uint32_t* doc;
    const float* weight;
    size_t size;
  };
  TermPostings postings(uint32_t t) const;
  float max_weight(uint32_t t) const { return max_weight_[t]; }
  // The categories of training document `doc` (a range of category indexes).
  struct CategoryRange {
    const uint32_t* first;
    const uint32_t* last;
    const uint32_t* begin() const { return first; }
    const uint32_t* end() const { return last; }
    std::vector<uint32_t> to_vector() const { return std::vector<uint32_t>(first, last); }
  };
  CategoryRange doc_categories(uint32_t doc) const {
    return {doc_category_ + doc_category_start_[doc], doc_category_ + doc_category_start_[doc + 1]};
  }

 private:
  struct Mapping;
  KnnIndex() = default;
  // Points the arrays the searches read at the owned vectors.
  void use_owned_arrays();
  // Throws ModelFormatError if the mapped file's size or mtime changed
  // since open() (one fstat).
  void check_file_unchanged() const;
  // Checks that every document number in term t's postings is below
  // num_docs_, once per term (mapped indexes only).
  void verify_term(uint32_t t) const;
  // Picks the terms that get a dense column (the longest lists).
  void choose_dense_terms();
  // Term t's posting weights as one float per document (0 where absent),
  // built the first time a search asks; nullptr if t has no dense column.
  // A list covering a large share of the documents is added up several
  // times faster this way (vector multiply-adds instead of scattered ones).
  const float* dense_column(uint32_t t) const;

  uint32_t num_docs_ = 0;
  uint32_t num_categories_ = 0;
  uint64_t num_postings_ = 0;
  std::vector<float> idf_;
  std::vector<uint32_t> df_;
  // What the searches read: the owned vectors below, or the mapped file.
  const uint64_t* postings_start_ = nullptr;
  const uint32_t* posting_doc_ = nullptr;
  const float* posting_weight_ = nullptr;
  // Labels of every training document, flat (CSR): voting over hundreds of
  // neighbours reads them from two small arrays instead of chasing one
  // heap allocation per neighbour.
  const uint32_t* doc_category_start_ = nullptr;
  const uint32_t* doc_category_ = nullptr;
  uint64_t num_doc_categories_ = 0;
  // Built in memory: the arrays themselves.
  std::vector<uint64_t> owned_postings_start_;
  std::vector<uint32_t> owned_posting_doc_;
  std::vector<float> owned_posting_weight_;
  std::vector<uint32_t> owned_doc_category_start_;
  std::vector<uint32_t> owned_doc_category_;
  // Mapped: the file, and which terms' postings have been checked.
  std::unique_ptr<Mapping> mapping_;
  std::string path_;  // the mapped file, for errors
  mutable std::unique_ptr<std::atomic<bool>[]> term_verified_;
  // Dense columns (dense_column): the terms that have one, and the columns
  // built so far. min_dense_postings_: the shortest such list's length.
  uint64_t min_dense_postings_ = UINT64_MAX;
  std::unordered_map<uint32_t, uint32_t> dense_slot_;  // term -> column
  mutable std::unique_ptr<std::once_flag[]> dense_once_;
  mutable std::unique_ptr<std::unique_ptr<float[]>[]> dense_columns_;
  mutable std::atomic<uint64_t> dense_bytes_{0};
  // Per term, the largest posting weight: the max-score upper bounds.
  std::vector<float> max_weight_;
  // Whether every term's postings are in increasing document order (the
  // max-score search looks documents up in them; without it, it falls back
  // to the exhaustive walk).
  bool postings_sorted_ = true;
};

// Writes the kNN index file of KnnIndex(corpus, idf).write(path), byte for
// byte, without building the index in memory first: the postings are
// computed term by term as they are written, so training never holds them
// beside the corpus (at a million documents they are 1.4 GB). Throws
// InvalidArgumentError (idf size) or IOError.
void write_knn_index(const TrainingCorpus& corpus, const std::vector<float>& idf,
                     const std::string& path);

// kNN's term weights with the terms' class concentration folded in:
//   w(t) = idf(t) * s(t)^concentration,  s(t) = 1 - H(C | t) / ln |C|,
// H(C | t) the entropy of the labels of the training documents containing t
// (documents without a label count as one more class), smoothed by one
// pseudo-document spread as the labels are overall. A term spread evenly
// over the categories ("write", "article") weighs little in the cosine, one
// found in a single category keeps its idf. concentration 0 returns idf.
// Cross-validation chooses the exponent (kNN on 20 Newsgroups +0.6 points,
// on its Subject lines +1.3).
// REQUIRES: idf.size() == corpus.num_terms().
std::vector<float> knn_term_weights(const TrainingCorpus& corpus, const std::vector<float>& idf,
                                    double concentration);

// kNN's live view of a model: the trained KnnIndex (the base), plus the
// documents learned since, minus the documents forgotten since.
//
// A learned document is weighted as a training document is (sublinear tf
// times the base's idf, normalized over its terms with idf > 0), so its
// cosine to a query is exact against the trained weighting. What is
// approximate until the next refit (`autocat train --add`): idf, df and the
// other documents' norms stay as trained, and terms the model does not
// know are not seen. Forgotten base documents are tombstones: the base is
// asked for k + (number of tombstones) neighbours and they are filtered out,
// so a search costs more as tombstones accumulate. Approximate-mode options
// (knn_max_query_terms, knn_max_df_ratio) apply to the base only.
//
// Thread safety: learn() and forget() take an exclusive lock, the const
// methods a shared one.
class KnnLiveIndex {
 public:
  // `base_ids`: the id of each base document, by dense index, or empty (a
  // model fitted in memory: its training documents have no ids to forget).
  KnnLiveIndex(std::shared_ptr<const KnnIndex> base, std::vector<std::string> base_ids);
  // The same with the ids read on the first learn(), forget() or
  // contains() (classification alone never reads them); if `load_base_ids`
  // throws, that call throws and the next one tries again.
  using BaseIdLoader = std::function<std::vector<std::string>()>;
  KnnLiveIndex(std::shared_ptr<const KnnIndex> base, BaseIdLoader load_base_ids);

  const KnnIndex& base() const { return *base_; }
  // Adds a document, replacing any base or learned document with its id.
  // REQUIRES: every category < base().num_categories().
  void learn(const std::string& id, const DocumentTerms& doc,
             const std::vector<uint32_t>& categories);
  // Removes the document with this id; false if there is none.
  bool forget(const std::string& id);
  bool contains(const std::string& id) const;
  uint32_t learned_docs() const;    // learned documents present now
  uint32_t forgotten_docs() const;  // base documents forgotten (tombstones)
  // The k most similar documents present, most similar first (ties by
  // lower doc); `doc` >= base().num_docs() is learned document
  // doc - base().num_docs().
  std::vector<KnnIndex::Neighbour> neighbours(const DocumentTerms& query, int k,
                                              int max_query_terms = 0,
                                              double max_df_ratio = 1.0) const;
  // KnnClassifier::score over the documents present.
  void score(const DocumentTerms& doc, int k, const ClassifyOptions& options, int similarity_power,
             std::vector<double>* scores) const;

 private:
  struct Learned {
    std::vector<uint32_t> categories;
    bool present = true;
  };
  struct Posting {
    uint32_t slot;
    float weight;  // w(t,d)/|d|
  };
  std::vector<KnnIndex::Neighbour> neighbours_locked(const DocumentTerms& query, int k,
                                                     int max_query_terms,
                                                     double max_df_ratio) const;
  // Removes `id` wherever it is; false if absent. REQUIRES: exclusive lock.
  bool remove_locked(const std::string& id);
  // Reads the base ids if a loader was given and they are not read yet.
  void ensure_base_ids() const;
  void set_base_ids(std::vector<std::string> base_ids) const;

  std::shared_ptr<const KnnIndex> base_;
  mutable BaseIdLoader load_base_ids_;
  mutable std::once_flag base_ids_once_;
  mutable std::unordered_map<std::string, uint32_t> base_ids_;  // id -> base document
  mutable std::shared_mutex mutex_;
  std::vector<uint8_t> base_forgotten_;  // per base document; sized on first forget
  uint32_t num_base_forgotten_ = 0;
  std::unordered_map<std::string, uint32_t> learned_ids_;  // id -> slot
  std::vector<Learned> learned_;                           // by slot
  uint32_t num_learned_present_ = 0;
  std::vector<std::vector<Posting>> postings_;  // by term; sized on first learn
};

class KnnClassifier : public Classifier {
 public:
  // Each neighbour votes with similarity^similarity_power (1 or 2; chosen by
  // cross-validation at training time).
  // `default_k` applies when ClassifyOptions::k is 0.
  explicit KnnClassifier(std::shared_ptr<const KnnIndex> index, int similarity_power = 1,
                         int default_k = kDefaultKnnK);
  // Classifies over a live index (see KnnLiveIndex).
  KnnClassifier(std::shared_ptr<const KnnLiveIndex> live, int similarity_power, int default_k);
  Method method() const override { return Method::kKnn; }
  // Score of c = (sum of votes of the k neighbours labelled c) / (sum of the
  // votes of all k neighbours).
  void score(const DocumentTerms& doc, const ClassifyOptions& options,
             std::vector<double>* scores) const override;

 private:
  std::shared_ptr<const KnnIndex> index_;
  std::shared_ptr<const KnnLiveIndex> live_;  // null: the base index alone
  int similarity_power_;
  int default_k_;
};

// A neighbour's vote: its similarity raised to `power` (1 or 2). Squaring
// lets the nearest neighbours outvote a long tail of weak ones at large k.
inline double knn_vote_weight(float similarity, int power) {
  const double s = similarity;
  return power == 2 ? s * s : s;
}

}  // namespace autocat::internal
