// kNN's index: a compact in-memory copy of the training postings (per
// term, the documents containing it with w(t,d)/|d| as float, the training
// norms precomputed) and every training document's categories. Built here
// from the training collection, or opened from the index file `train`
// writes beside the model (knn_index_file.h); searched by
// KnnIndex::neighbours (knn_search.cc).
//
// Thread safety: KnnIndex is immutable after build or open(); its const
// methods may be called from many threads at once (dense columns and the
// index file's per-term checks are built once, by whichever thread asks
// first).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "autocat/options.h"
#include "classify/corpus/training_collection.h"
#include "classify/corpus/weighting.h"

namespace autocat::internal {

// How KnnIndex::neighbours finds the top k. The first three give the same
// neighbours with the same similarities; kExhaustive is the default.
enum class KnnSearch {
  kMaxScore,     // skips documents whose upper bound cannot reach the top k
  kExhaustive,   // every query term over every document; the longest lists
                 // are added as dense columns (see KnnIndex::dense_column)
  kPostingWalk,  // accumulates every posting of every query term, one by
                 // one: the reference the tests compare the others to
  kTwoStep,      // candidates from the heaviest query terms' pruned lists,
                 // rescored by their exact cosine from the forward index
                 // (the same float as the others give); the top k of those.
                 // An index without the two-step arrays searches exhaustively,
                 // and so does a query whose two steps would cost more than
                 // the exhaustive walk (KnnTwoStepParams::always).
};

// The kernel that runs a ClassifyOptions::knn_search mode.
inline KnnSearch knn_kernel(KnnSearchMode mode) {
  return mode == KnnSearchMode::kTwoStep ? KnnSearch::kTwoStep : KnnSearch::kExhaustive;
}

// The search training uses and records: the options', or exact.
inline KnnSearchMode knn_training_search(const TrainOptions& options) {
  return options.knn_search.value_or(KnnSearchMode::kExact);
}

// The two-step search's first stage (KnnSearch::kTwoStep). On 20
// Newsgroups these defaults hand most queries over to the exact walk; on
// the scale generator's million documents they find about four in five
// exact neighbours (BENCHMARKS.md, "kNN in two steps").
struct KnnTwoStepParams {
  // Candidates rescored exactly: candidates_per_k times k, at least
  // min_candidates (and at most every document).
  uint32_t candidates_per_k = 10;
  uint32_t min_candidates = 200;
  // Query terms walked in the first stage, heaviest (query weight) first;
  // 0 = every query term. At a million documents 50 of a document's 117
  // terms find nearly as many neighbours as all of them (recall 0.817
  // against 0.824) in half the time.
  uint32_t first_stage_terms = 50;
  // Run both stages even where the exact walk would cost no more (tests
  // and benchmarks of the stages themselves).
  bool always = false;
};

// Postings kept per term in the two-step search's pruned lists (the
// highest-weight ones; lists no longer than this are read whole).
inline constexpr uint32_t kKnnDefaultPruneLength = 2000;

// What one KnnIndex::neighbours call walked (for tests and benchmarks).
struct KnnSearchStats {
  uint32_t query_terms = 0;   // terms with postings, after approximate-mode cuts
  uint32_t terms_walked = 0;  // whose every posting was accumulated
  uint64_t postings_walked = 0;
  uint32_t candidates = 0;   // documents looked up in the other terms' lists
  uint32_t dense_terms = 0;  // terms added as dense columns
  uint32_t rescored = 0;     // two-step: candidates whose exact cosine was computed
};

// One entry of the forward index (a training document's term and its
// posting weight) or of a pruned posting list (a document and its weight).
struct KnnForwardEntry {
  uint32_t term;
  float weight;
};
struct KnnPrunedEntry {
  uint32_t doc;
  float weight;
};
static_assert(sizeof(KnnForwardEntry) == 8 && sizeof(KnnPrunedEntry) == 8,
              "the index file's layout depends on it");

// Compact in-memory copy of the training postings: per term, the documents
// containing it with w(t,d)/|d| as float.
class KnnIndex {
 public:
  // REQUIRES: idf.size() == corpus.num_terms(); terms with idf 0 get no postings.
  // `tf` transforms the training documents' and the queries' term counts.
  KnnIndex(const TrainingCorpus& corpus, const std::vector<float>& idf,
           KnnTf tf = KnnTf::kSublinear);
  ~KnnIndex();
  KnnIndex(const KnnIndex&) = delete;
  KnnIndex& operator=(const KnnIndex&) = delete;

  // The index file `train` writes beside the model (kKnnIndexFileName):
  // the arrays below as they lie in memory, so open() maps them instead of
  // rebuilding them from the training database. Throws IOError.
  void write(const std::string& path) const;
  // Maps the file at `path`, written for a model with these idf values,
  // documents and categories (it must match them exactly), whose queries
  // take the model's tf transform `tf` (the file's weights hold it already). Pages are read
  // as searches touch them and shared between processes; each term's
  // document numbers are checked the first time a search walks them.
  // The file must not change while mapped (generations are installed by
  // rename): each search first checks its size and mtime and throws
  // ModelFormatError naming it if they changed, rather than touching pages
  // past a truncated end; a truncation racing a search reads zeros from
  // the pages past the end instead of raising SIGBUS, and the search
  // throws that ModelFormatError after it. AUTOCAT_KNN_INDEX=read in the
  // environment reads the file into private memory instead (not shared
  // between processes). Throws InvalidArgumentError for another setting.
  // Returns nullptr if there is no such file (a model from before the
  // file); throws ModelFormatError naming it if it is truncated, foreign,
  // damaged or belongs to another model.
  static std::shared_ptr<const KnnIndex> open(const std::string& path,
                                              const std::vector<float>& idf, uint32_t num_docs,
                                              uint32_t num_categories,
                                              KnnTf tf = KnnTf::kSublinear);

  uint32_t num_docs() const { return num_docs_; }
  uint32_t num_categories() const { return num_categories_; }
  uint64_t num_postings() const { return num_postings_; }
  const std::vector<float>& idf() const { return idf_; }
  KnnTf tf() const { return tf_; }
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
                                    KnnSearchStats* stats = nullptr,
                                    const KnnTwoStepParams& two_step = KnnTwoStepParams()) const;

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

  // The two-step search's arrays: each training document's own terms and
  // weights (the forward index, for the exact second stage) and, per term
  // with more than `prune_length` postings, its `prune_length`
  // highest-weight postings (the first stage). Built here from the
  // postings (an index built in memory, or a file written before it held
  // them), or read from the index file. Not thread-safe: call before the
  // index is shared.
  void build_two_step(uint32_t prune_length = kKnnDefaultPruneLength);
  bool has_two_step() const { return prune_length_ > 0; }
  uint32_t prune_length() const { return prune_length_; }
  uint64_t num_pruned_postings() const { return num_pruned_; }
  // Training document `doc`'s terms (ascending) and weights w(t,d)/|d|.
  // REQUIRES: has_two_step().
  struct ForwardRange {
    const KnnForwardEntry* first;
    const KnnForwardEntry* last;
    const KnnForwardEntry* begin() const { return first; }
    const KnnForwardEntry* end() const { return last; }
  };
  // Term t's list as the first stage reads it: its pruned list if it has
  // one (`pruned` non-null), else its whole list (`whole`).
  // REQUIRES: has_two_step().
  struct FirstStageList {
    const KnnPrunedEntry* pruned;
    TermPostings whole;
    size_t size() const { return whole.size; }  // the pruned list's, or the whole one's
  };
  FirstStageList first_stage_list(uint32_t t) const {
    const uint64_t begin = pruned_start_[t], end = pruned_start_[t + 1];
    if (end > begin) return {pruned_ + begin, {nullptr, nullptr, size_t(end - begin)}};
    return {nullptr, postings(t)};
  }
  ForwardRange forward(uint32_t doc) const {
    return {forward_ + forward_start_[doc], forward_ + forward_start_[doc + 1]};
  }
  // The categories of training document `doc` (a range of category indexes).
  struct CategoryRange {
    const uint32_t* first;
    const uint32_t* last;
    const uint32_t* begin() const { return first; }
    const uint32_t* end() const { return last; }
    std::vector<uint32_t> to_vector() const { return std::vector<uint32_t>(first, last); }
  };
  // Throws ModelFormatError naming the file if the mapped file's size or
  // mtime changed since open() (one fstat), or if a search touched a page
  // past its truncated end (read as zeros): what was read since the last
  // check is then not to be used. neighbours() checks before and after
  // its search; a caller reading doc_categories() after it checks again.
  void check_file_unchanged() const;
  CategoryRange doc_categories(uint32_t doc) const {
    return {doc_category_ + doc_category_start_[doc], doc_category_ + doc_category_start_[doc + 1]};
  }

 private:
  struct Mapping;
  // Deletes a Mapping in knn_index_file.cc, where it is defined, so that
  // the constructors here need not see it.
  struct MappingDeleter {
    void operator()(Mapping* mapping) const;
  };
  KnnIndex() = default;
  // Points the arrays the searches read at the owned vectors.
  void use_owned_arrays();
  // Checks that every document number in term t's postings is below
  // num_docs_, once per term (mapped indexes only).
  void verify_term(uint32_t t) const;
  // Throws ModelFormatError naming the file: the two-step arrays hold a
  // document or term number out of range.
  [[noreturn]] void refuse_damaged() const;
  // Points the two-step arrays at the owned vectors.
  void use_owned_two_step();
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
  KnnTf tf_ = KnnTf::kSublinear;
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
  std::unique_ptr<Mapping, MappingDeleter> mapping_;
  std::string path_;  // the mapped file, for errors
  mutable std::unique_ptr<std::atomic<bool>[]> term_verified_;
  // Dense columns (dense_column): the terms that have one, and the columns
  // built so far. min_dense_postings_: the shortest such list's length.
  uint64_t min_dense_postings_ = UINT64_MAX;
  std::unordered_map<uint32_t, uint32_t> dense_slot_;  // term -> column
  mutable std::unique_ptr<std::once_flag[]> dense_once_;
  mutable std::unique_ptr<std::unique_ptr<float[]>[]> dense_columns_;
  mutable std::atomic<uint64_t> dense_bytes_{0};
  // The two-step arrays (build_two_step); prune_length_ 0: none.
  uint32_t prune_length_ = 0;
  uint64_t num_pruned_ = 0;
  const uint64_t* forward_start_ = nullptr;  // num_docs_ + 1
  const KnnForwardEntry* forward_ = nullptr;
  const uint64_t* pruned_start_ = nullptr;  // terms + 1; empty for short lists
  const KnnPrunedEntry* pruned_ = nullptr;
  std::vector<uint64_t> owned_forward_start_;
  std::vector<KnnForwardEntry> owned_forward_;
  std::vector<uint64_t> owned_pruned_start_;
  std::vector<KnnPrunedEntry> owned_pruned_;
  // Per term, the largest posting weight: the max-score upper bounds.
  std::vector<float> max_weight_;
  // Whether every term's postings are in increasing document order (the
  // max-score search looks documents up in them; without it, it falls back
  // to the exhaustive walk).
  bool postings_sorted_ = true;
};

// kNN's term weights with the terms' class concentration folded in, as
// relevance frequency (Lan et al. 2009, "tf.rf"):
//   w(t) = idf(t) * rf(t)^relevance,
//   rf(t) = max over classes c of log2(2 + a / max(1, b)),
// a the training documents of c containing t, b those containing t outside
// c (documents without a label are one more class). A term spread over the
// categories ("write", "article") keeps its idf, one frequent in a single
// category gains up to log2(2 + its count there) times. relevance 0
// returns idf. Cross-validation chooses the exponent
// (knn_concentration_candidates). A model classifies with the weights
// stored in it (ModelState::knn_term_weight), whichever formula made them:
// model files holding class-entropy weights (idf times one minus the
// labels' normalized entropy, raised to the exponent) keep them.
// REQUIRES: idf.size() == corpus.num_terms().
std::vector<float> knn_term_weights(const TrainingCorpus& corpus, const std::vector<float>& idf,
                                    double relevance);

// The inverse L2 norm of every training document's tf-idf vector (tf
// transformed by `tf`) over the terms with idf > 0 (0 for a document
// without such a term);
// `*postings` counts the postings that enter the norms. KnnIndex and
// write_knn_index weigh the postings with it, so that a built index and a
// written file hold the same bytes.
std::vector<double> knn_inverse_document_norms(const TrainingCorpus& corpus,
                                               const std::vector<float>& idf, KnnTf tf,
                                               uint64_t* postings);
// kNN's weight of posting p (of term t, wdf > 0): its tf-idf component in
// the document's L2-normalized vector.
float knn_posting_weight(const TrainingCorpus& corpus, const std::vector<float>& idf, KnnTf tf,
                         const std::vector<double>& inverse_norm, TermId t, uint64_t p);

// The pruned list of a term with these n postings: its `prune_length`
// highest-weight postings (ties: lower document), in document order; empty
// if n <= prune_length (the first stage then reads the whole list).
std::vector<KnnPrunedEntry> knn_pruned_list(const uint32_t* doc, const float* weight, size_t n,
                                            uint32_t prune_length);

}  // namespace autocat::internal
