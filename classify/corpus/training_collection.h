// The training collection: labelled documents in a Xapian database (each
// holds its analyzed terms with their wdf, one boolean term per label with
// the "XC" prefix and its id as a "Q" term), and the compact term-major copy
// of its posting lists that every classifier is trained from.
//
// Thread safety: TrainingCollectionWriter is single-threaded (it owns a
// WritableDatabase). TrainingCorpus is immutable data.
#pragma once

#include <xapian.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "classify/io/spill_file.h"
#include "classify/text/analyzer.h"

namespace autocat::internal {

// Xapian's message with the OS reason it keeps apart ("Couldn't open
// db/postlist.glass to read (Too many open files)").
std::string xapian_reason(const Xapian::Error& e);

using TermId = uint32_t;

// The within-document frequencies of a corpus's postings: a byte each
// below 255 (almost every one), the rest beside them in a table. A
// corpus holds one per posting, 369 M at three million generated
// documents: 0.37 GB instead of 1.5.
class PostingWdf {
 public:
  uint32_t operator[](uint64_t p) const {
    const uint8_t small = small_[p];
    return small < kLarge ? small : large_.at(p);
  }
  void set(uint64_t p, uint32_t wdf) {
    if (small_[p] == kLarge) large_.erase(p);
    small_[p] = static_cast<uint8_t>(std::min<uint32_t>(wdf, kLarge));
    if (wdf >= kLarge) large_[p] = wdf;
  }
  void push_back(uint32_t wdf) {
    small_.push_back(static_cast<uint8_t>(std::min<uint32_t>(wdf, kLarge)));
    if (wdf >= kLarge) large_[small_.size() - 1] = wdf;
  }
  void reserve(uint64_t n) { small_.reserve(n); }
  void resize(uint64_t n);  // new postings have wdf 0
  uint64_t size() const { return small_.size(); }
  bool empty() const { return small_.empty(); }
  void clear() {
    small_.clear();
    large_.clear();
  }
  // Postings [first, first + count)'s values into `out`.
  void copy_to(uint64_t first, size_t count, uint32_t* out) const;
  std::vector<uint32_t> to_vector() const;
  bool operator==(const PostingWdf& other) const {
    return small_ == other.small_ && large_ == other.large_;
  }

 private:
  friend class SpilledPostings;  // moves the bytes out and back
  static constexpr uint8_t kLarge = 255;
  std::vector<uint8_t> small_;                    // the value, or kLarge
  std::unordered_map<uint64_t, uint32_t> large_;  // by posting, where small_ is kLarge
};

// Term-major view of the training database, read through its posting lists.
// TermIds index `terms`; documents are numbered densely 0..num_docs()-1 in
// Xapian docid order.
struct TrainingCorpus {
  std::vector<std::string> terms;                     // sorted, unprefixed text terms
  std::vector<uint32_t> df;                           // documents containing each term
  std::vector<uint64_t> postings_start;               // CSR offsets, size terms.size() + 1
  std::vector<uint32_t> posting_doc;                  // dense document index
  PostingWdf posting_wdf;                             // within-document frequency
  std::vector<std::string> categories;                // sorted label names
  std::vector<std::vector<uint32_t>> doc_categories;  // per document, category indexes
  std::vector<uint32_t> doc_length;                   // tokens per document (sum of wdf)

  uint32_t num_docs() const { return static_cast<uint32_t>(doc_length.size()); }
  uint32_t num_terms() const { return static_cast<uint32_t>(terms.size()); }
  // The same counted by the postings' offsets, for a corpus whose term
  // strings were dropped (training's, while the kNN index is written).
  uint32_t num_terms_with_postings() const {
    return static_cast<uint32_t>(postings_start.empty() ? 0 : postings_start.size() - 1);
  }
  uint32_t num_categories() const { return static_cast<uint32_t>(categories.size()); }
  // Documents labelled with each category.
  std::vector<uint32_t> category_doc_counts() const;
};

// Reads the whole training database into a TrainingCorpus by walking the
// posting list of every text term and of every "XC" label term.
// Throws InvalidArgumentError if the database holds no labelled document.
TrainingCorpus load_training_corpus(const Xapian::Database& db);
// Only the documents with keep[d] != 0 (d: the document's number in docid
// order, as in the whole corpus), renumbered densely, and the terms they
// contain: fold_corpus(load_training_corpus(db), keep).corpus, without the
// whole corpus in memory. Every category is listed, as in the whole one.
TrainingCorpus load_training_corpus(const Xapian::Database& db, const std::vector<uint8_t>& keep);
// The documents' lengths and labels and the categories, without terms or
// postings (to choose a sample by label).
TrainingCorpus load_training_labels(const Xapian::Database& db);

// Called with the postings of term `term` (document ids ascending), a
// term's postings possibly in several consecutive pieces.
using TermPostingsVisitor =
    std::function<void(TermId term, const uint32_t* doc, const uint32_t* wdf, size_t count)>;

// A corpus's postings moved out to a temporary file and back. The linear
// fits read the postings once, into a document-major copy of their own, and
// then only the labels: with the postings on disk meanwhile, the two copies
// (each the size of the postings) are never in memory at once.
// Its spill file's name: kSpillFilePrefix (io/filenames.h).

class SpilledPostings {
 public:
  // Writes corpus->posting_doc and posting_wdf to an unlinked temporary
  // file in `dir` (nothing is left behind, even after a crash) and frees
  // them. Throws IOError naming `dir` (and the corpus keeps its postings).
  // `block_postings`: postings read or written per system call.
  SpilledPostings(TrainingCorpus* corpus, const std::string& dir,
                  size_t block_postings = size_t{1} << 20);
  ~SpilledPostings();
  SpilledPostings(const SpilledPostings&) = delete;
  SpilledPostings& operator=(const SpilledPostings&) = delete;

  // Reads the postings from the file in term order, as TermPostingsVisitor
  // describes. Throws IOError.
  void for_each_term_postings(const TermPostingsVisitor& visit) const;
  // Reads the postings back into the corpus. Throws IOError.
  void restore();

 private:
  TrainingCorpus* corpus_;
  SpillFile file_;
  uint64_t num_postings_ = 0;
  size_t block_;
};

// Builds in memory the corpus that load_training_corpus would read from a
// collection TrainingCollectionWriter::add wrote the same documents to, in
// the same order: a document whose id was added before replaces it in its
// place. Comparing analyses this way skips a database written and read
// back per analysis.
class TrainingCorpusBuilder {
 public:
  void add(const std::string& id, const std::vector<Token>& tokens,
           const std::vector<std::string>& labels);
  void add(const std::string& id, const std::vector<std::string>& terms,
           const std::vector<std::string>& labels);
  // The corpus (categories empty if no document is labelled); the builder
  // is left empty.
  TrainingCorpus build();

 private:
  struct Document {
    std::vector<std::pair<TermId, uint32_t>> terms;  // (first-seen id, wdf), by id
    std::vector<std::string> labels;
    uint32_t length = 0;
  };
  TermId term_id(const std::string& term);
  void add_document(const std::string& id, std::vector<TermId>* ids,
                    const std::vector<std::string>& labels);
  std::unordered_map<std::string, TermId> term_ids_;
  std::vector<const std::string*> term_names_;  // keys of term_ids_, by id
  std::unordered_map<std::string, uint32_t> slot_of_id_;
  std::vector<Document> documents_;
  std::vector<TermId> scratch_;
};

// Builds a TrainingCorpus directly from analyzed documents (tests, benchmarks).
struct LabelledTerms {
  std::vector<std::string> terms;  // token sequence
  std::vector<std::string> labels;
};
TrainingCorpus make_training_corpus(const std::vector<LabelledTerms>& documents);

// A document holding the tokens' terms, each with its count as wdf: the
// text part of what TrainingCollectionWriter::add writes.
Xapian::Document text_terms_document(const std::vector<Token>& tokens);

// Writes analyzed, labelled documents into a training database.
class TrainingCollectionWriter {
 public:
  // Creates or overwrites (or, with overwrite false, opens or creates) the
  // database at `path`.
  // Throws Xapian::DatabaseLockError if another writer holds it. Every
  // other Xapian error (opening, a full disk) is an IOError naming `path`.
  explicit TrainingCollectionWriter(const std::string& path, int commit_batch = 2000,
                                    bool overwrite = true);
  // Adds (or replaces, by id) one document; its text terms carry wdf only.
  // REQUIRES: labels are non-empty strings without control characters.
  void add(const std::string& id, const std::vector<Token>& tokens,
           const std::vector<std::string>& labels);
  // The same with the text terms already in `terms` (text_terms_document),
  // which another thread may have built.
  void add(const std::string& id, Xapian::Document terms, const std::vector<std::string>& labels);
  // The same document given as its distinct terms and how often each
  // occurs (as a journal holds it), without spelling out every occurrence.
  // REQUIRES: terms.size() == counts.size(); labels as above.
  void add(const std::string& id, const std::vector<std::string>& terms,
           const std::vector<uint32_t>& counts, const std::vector<std::string>& labels);
  // Deletes the document with this id, if there is one.
  void remove(const std::string& id);
  void commit();
  uint64_t documents_added() const { return added_; }

 private:
  std::string path_;
  // Adds `doc`, holding the text terms, with the labels and id.
  void add_document(const std::string& id, const std::vector<std::string>& labels,
                    Xapian::Document* doc);
  Xapian::WritableDatabase db_;
  int commit_batch_;
  uint64_t added_ = 0;
  uint64_t pending_ = 0;
};

// Maps analyzed tokens to vocabulary ids: an open-addressing table of term
// ids over the model's own term strings. Opening a model with 2.7 M terms,
// a hash map holding a copy of every string took a quarter of the time.
class Vocabulary {
 public:
  Vocabulary() = default;
  // Keeps a pointer to `terms`: they must outlive the vocabulary unchanged.
  // A term listed twice maps to its first id.
  explicit Vocabulary(const std::vector<std::string>& terms);
  // A temporary list would be gone before the first find().
  explicit Vocabulary(std::vector<std::string>&& terms) = delete;
  // Returns the id of `term`, or -1 if it is not in the vocabulary.
  int64_t find(std::string_view term) const;
  size_t size() const { return size_; }

 private:
  static constexpr TermId kFree = ~TermId{0};
  const std::vector<std::string>* terms_ = nullptr;
  std::vector<TermId> slots_;  // a power of two, at most half full
  size_t size_ = 0;
};

struct TermCount {
  TermId term;
  uint32_t count;
};

// A document as classifiers see it.
struct DocumentTerms {
  std::vector<TermCount> terms;  // distinct known terms, sorted by id
  uint32_t known_tokens = 0;     // tokens whose term is in the vocabulary
  uint32_t total_tokens = 0;     // all tokens, known or not
};

DocumentTerms make_document_terms(const Vocabulary& vocabulary, const std::vector<Token>& tokens);
DocumentTerms make_document_terms(const Vocabulary& vocabulary,
                                  const std::vector<std::string>& terms);

// Every training document's terms, as a classifier sees a new document.
std::vector<DocumentTerms> corpus_documents(const TrainingCorpus& corpus);

}  // namespace autocat::internal
