// The Naive Bayes family (IIR ch. 13; Rennie et al. 2003), trained from the
// term/label co-occurrence counts of the training collection's postings.
// All sums are in log space; scores are posteriors normalized by log-sum-exp.
//
// Thread safety: models are data; NaiveBayesClassifier::score() is const.
#pragma once

#include <boost/serialization/split_member.hpp>
#include <boost/serialization/vector.hpp>
#include <boost/serialization/version.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

#include "classify/corpus/category_sums.h"
#include "classify/corpus/training_collection.h"
#include "classify/io/bounded_binary_iarchive.h"
#include "classify/methods/classifier.h"

namespace autocat::internal {

// The weights as a model file stores them from version 2 on: most (t, c)
// weights of a large model belong to terms never seen in category c, and
// such a weight follows from per-term and per-category values alone. Rows
// of terms left out are all zero (zero_row); every other weight is its
// base unless listed as an exception (term-major: row_entries[t] of them
// for term t). The base of (t, c) is
//   complement NB with row_log / column_log: float(-(row_log[t] - column_log[c]))
//   otherwise: column_default[c], the value most of category c's weights share.
// Decoding rebuilds the dense weights bit for bit (exceptions are found by
// comparing bits with the base).
struct NbSparseWeights {
  uint32_t num_terms = 0;
  std::vector<uint8_t> zero_row;
  std::vector<float> column_default;
  std::vector<double> row_log;
  std::vector<double> column_log;
  std::vector<uint32_t> row_entries;
  std::vector<uint32_t> entry_category;
  std::vector<float> entry_weight;
  uint64_t file_bytes() const;  // about what it takes in the file
};

// The weights as fitted from category sums, held in memory in the same
// shape as NbSparseWeights but with each row's exceptions addressable:
// row t is all zero if zero_row[t]; otherwise weight (t, c) is its base
// (as in NbSparseWeights) unless c is among entries [row_start[t],
// row_start[t + 1]), ascending by category. Its size follows the (term,
// category) pairs of the training documents, never terms x categories,
// and a row is rebuilt bit for bit as the dense weights would hold it.
struct NbWeightRows {
  uint32_t num_terms = 0;
  uint32_t num_categories = 0;
  std::vector<uint8_t> zero_row;
  std::vector<float> column_default;  // multinomial and Bernoulli
  std::vector<double> row_log;        // complement
  std::vector<double> column_log;     // complement
  std::vector<uint64_t> row_start;
  std::vector<uint32_t> entry_category;
  std::vector<float> entry_weight;
  // Set instead of zero_row, row_log, entry_category and entry_weight for
  // rows read where a mapped model file holds them: the same arrays, not
  // aligned (read with memcpy), kept alive by `mapped_owner`.
  std::shared_ptr<const void> mapped_owner;
  const char* mapped_zero_row = nullptr;
  const char* mapped_row_log = nullptr;  // null unless complement
  const char* mapped_entry_category = nullptr;
  const char* mapped_entry_weight = nullptr;

  // Writes row t's num_categories weights to `row`. REQUIRES t < num_terms.
  void fill_row(uint32_t t, float* row) const;
  // The rows with the arrays in memory (a copy of the mapped ones).
  NbWeightRows owned() const;
};

// NbSparseWeights as loading from a mapped model file finds them: the
// large arrays as views into the file (element counts, unaligned bytes).
struct NbMappedSparse {
  std::shared_ptr<const void> owner;
  uint32_t num_terms = 0;
  std::vector<float> column_default;
  std::vector<double> column_log;
  struct Array {
    const char* data = nullptr;
    size_t size = 0;  // elements
    // Drops the pages of the first `bytes` bytes (they are read again on
    // use); may be empty.
    std::function<void(size_t bytes)> release;
  };
  Array zero_row, row_log, row_entries, entry_category, entry_weight;
};

struct NaiveBayesModel {
  int variant = 0;     // static_cast<int>(Method)
  double alpha = 1.0;  // additive smoothing
  uint32_t num_categories = 0;
  std::vector<double> log_prior;  // per category
  // Term-major, num_terms x num_categories. Multinomial: log P(t|c).
  // Bernoulli: log P(t|c) - log(1 - P(t|c)). Complement: -log theta~_ct.
  // Dense (or empty when weight_rows holds the weights): scoring reads one
  // contiguous row per document term.
  std::vector<float> term_weight;
  // Per category constant added to every score. Bernoulli: sum over the
  // vocabulary of log(1 - P(t|c)), so absent terms cost nothing per document.
  std::vector<double> class_constant;
  // Empty: documents are term counts. Otherwise (multinomial and
  // complement only) their tf-idf vectors, (1 + log tf) idf_t, L2-normalized
  // (Rennie et al. 2003, sec. 4; what scikit-learn's NB peers see), in
  // training and scoring alike; one idf per term, 0 for left-out terms.
  std::vector<float> idf;
  // Complement NB as trained: log(sum of term t's amounts + alpha) per term
  // and the log denominator per category, from which the weight of a term
  // absent from category c follows (NbSparseWeights). Empty otherwise, and
  // in models read from files (written again, they are stored densely or
  // with one exception per differing weight).
  std::vector<double> complement_row_log;
  std::vector<double> complement_column_log;

  // Set instead of term_weight by the *_from_sums functions and by loading
  // a model file that stores the weights sparse (make_dense() turns it
  // into term_weight). Shared: a fitted model is never modified.
  std::shared_ptr<const NbWeightRows> weight_rows;

  bool tfidf() const { return !idf.empty(); }
  // Terms with a row of weights.
  size_t num_terms() const {
    if (weight_rows) return weight_rows->num_terms;
    return num_categories == 0 ? 0 : term_weight.size() / num_categories;
  }
  // Row t's weights: a pointer into term_weight, or `scratch` filled from
  // weight_rows. REQUIRES t < num_terms().
  const float* row(uint32_t t, std::vector<float>* scratch) const;
  // Sets term_weight from weight_rows (bit for bit what fitting densely
  // gives) and drops weight_rows.
  void make_dense();
  // The dense weights, whichever form holds them.
  std::vector<float> dense_weights() const;
  template <class Archive>
  void save(Archive& ar, const unsigned int /*version*/) const {
    ar << variant << alpha << num_categories << log_prior << class_constant << idf;
    NbSparseWeights sparse;
    uint8_t is_sparse = (weight_rows ? rows_to_sparse(&sparse) : encode_sparse(&sparse)) ? 1 : 0;
    ar << is_sparse;
    if (is_sparse == 0) {
      if (weight_rows) {
        ar << dense_weights();
      } else {
        ar << term_weight;
      }
    } else {
      ar << sparse.num_terms << sparse.zero_row << sparse.column_default << sparse.row_log
         << sparse.column_log << sparse.row_entries << sparse.entry_category << sparse.entry_weight;
    }
  }
  template <class Archive>
  void load(Archive& ar, const unsigned int version) {
    if (version < 2) {
      ar >> variant >> alpha >> num_categories >> log_prior >> term_weight >> class_constant;
      if (version >= 1) ar >> idf;
      return;
    }
    ar >> variant >> alpha >> num_categories >> log_prior >> class_constant >> idf;
    uint8_t is_sparse = 0;
    ar >> is_sparse;
    if (is_sparse == 0) {
      ar >> term_weight;
      return;
    }
    if constexpr (std::is_same_v<Archive, BoundedBinaryIarchive>) {
      // From a mapped file: the large arrays stay where they are.
      if (ar.can_view()) {
        auto mapped = std::make_shared<NbMappedSparse>();
        const auto array = [&ar, &mapped](size_t element_bytes) {
          const BoundedBinaryIarchive::View view = ar.view_vector(element_bytes);
          mapped->owner = view.owner;
          return NbMappedSparse::Array{view.data, view.size, view.release};
        };
        ar >> mapped->num_terms;
        mapped->zero_row = array(1);
        ar >> mapped->column_default;
        mapped->row_log = array(sizeof(double));
        ar >> mapped->column_log;
        mapped->row_entries = array(sizeof(uint32_t));
        mapped->entry_category = array(sizeof(uint32_t));
        mapped->entry_weight = array(sizeof(float));
        pending_mapped = std::move(mapped);
        return;
      }
    }
    NbSparseWeights sparse;
    ar >> sparse.num_terms >> sparse.zero_row >> sparse.column_default >> sparse.row_log >>
        sparse.column_log >> sparse.row_entries >> sparse.entry_category >> sparse.entry_weight;
    // Decoded by decode_pending() once the model's term and category counts
    // are known: a few bytes of a crafted file must not make it allocate
    // terms x categories weights the model does not have.
    pending_sparse = std::make_shared<const NbSparseWeights>(std::move(sparse));
  }
  BOOST_SERIALIZATION_SPLIT_MEMBER()

  // The sparse form of term_weight; false if it would not be smaller.
  bool encode_sparse(NbSparseWeights* sparse) const;
  // The file's sparse form of weight_rows; false if weight_rows is unset
  // or dense weights would take less room.
  bool rows_to_sparse(NbSparseWeights* sparse) const;
  // The rows `sparse` holds; null if `sparse` is inconsistent.
  std::shared_ptr<const NbWeightRows> rows_from_sparse(const NbSparseWeights& sparse) const;
  // Sets term_weight from `sparse` (empty if `sparse` is inconsistent).
  void decode_sparse(const NbSparseWeights& sparse);
  // After a load: sets weight_rows from the sparse form read, if it has
  // `terms` terms and `categories` categories (else leaves the weights
  // empty, which the model's check refuses).
  void decode_pending(size_t terms, size_t categories);

  // The rows `sparse` holds, read in place; null if `sparse` is
  // inconsistent or holds a NaN weight or a log that is not finite.
  std::shared_ptr<const NbWeightRows> rows_from_mapped(const NbMappedSparse& sparse) const;

  // The sparse form read by load(), until decode_pending().
  std::shared_ptr<const NbSparseWeights> pending_sparse;
  std::shared_ptr<const NbMappedSparse> pending_mapped;
};

// `selected`: empty = every term; otherwise terms with selected[t] == 0 are
// left out of the vocabulary (they get no weight and are not counted in |V|).
// `idf` (multinomial and complement): non-empty trains on tf-idf vectors
// (NaiveBayesModel::idf); REQUIRES idf.size() == corpus.num_terms().
NaiveBayesModel train_multinomial_nb(const TrainingCorpus& corpus,
                                     const std::vector<uint8_t>& selected, double alpha,
                                     const std::vector<float>& idf = {});
NaiveBayesModel train_bernoulli_nb(const TrainingCorpus& corpus,
                                   const std::vector<uint8_t>& selected, double alpha,
                                   const std::vector<float>& idf = {});
NaiveBayesModel train_complement_nb(const TrainingCorpus& corpus,
                                    const std::vector<uint8_t>& selected, double alpha,
                                    const std::vector<float>& idf = {});

// The same models fitted from category sums (category_sums.h) instead of
// a corpus: the train_* functions above are these over
// sum_categories(corpus, ...). Multinomial and complement: sums of kCount,
// or of kTfidf with the same `idf`; Bernoulli: of kPresence. `selected` as
// the sums were made with.
// `wanted`: empty = every term's weights; otherwise only the rows of terms
// with wanted[t] != 0 are computed and the others stay 0 (the priors,
// denominators and Bernoulli's class constants still cover the whole
// vocabulary), for a model that will only score documents of those terms:
// cross-validation's held-out folds. REQUIRES wanted.size() == num_terms
// when non-empty.
NaiveBayesModel multinomial_nb_from_sums(const CategorySums& sums,
                                         const std::vector<uint8_t>& selected, double alpha,
                                         const std::vector<float>& idf = {},
                                         const std::vector<uint8_t>& wanted = {});
NaiveBayesModel bernoulli_nb_from_sums(const CategorySums& sums,
                                       const std::vector<uint8_t>& selected, double alpha,
                                       const std::vector<uint8_t>& wanted = {});
NaiveBayesModel complement_nb_from_sums(const CategorySums& sums,
                                        const std::vector<uint8_t>& selected, double alpha,
                                        const std::vector<float>& idf = {},
                                        const std::vector<uint8_t>& wanted = {});

// The value with which a term of a document enters the score (log_scores,
// explain): 1 for Bernoulli (presence), else its count, or for a tf-idf
// model its component (1 + log tf) idf * inverse_norm, where inverse_norm =
// nb_inverse_norm(model, doc). REQUIRES term.term below the model's terms.
double nb_feature_value(const NaiveBayesModel& model, const TermCount& term, double inverse_norm);
// 1 / |x| of the document's tf-idf vector over the terms the model knows
// (1 for a counting model).
double nb_inverse_norm(const NaiveBayesModel& model, const DocumentTerms& doc);

class NaiveBayesClassifier : public Classifier {
 public:
  // Keeps a reference: `model` must outlive the classifier.
  explicit NaiveBayesClassifier(const NaiveBayesModel& model);
  Method method() const override { return static_cast<Method>(model_.variant); }
  // Unnormalized log scores (log P(c) + sum ... ), per category.
  void log_scores(const DocumentTerms& doc, std::vector<double>* scores) const;
  // Posteriors: log scores normalized with log-sum-exp.
  void score(const DocumentTerms& doc, const ClassifyOptions& options,
             std::vector<double>* scores) const override;

 private:
  // log_scores(); returns whether some term of `doc` has a non-zero weight.
  bool accumulate(const DocumentTerms& doc, std::vector<double>* scores) const;

  const NaiveBayesModel& model_;
};

}  // namespace autocat::internal

// Version 1 (2026-11): idf (tf-idf features). Older models count terms.
// Version 2: term_weight stored sparse when that is smaller
// (NbSparseWeights), after class_constant and idf. Version 1 and 0 files
// (dense weights) still load.
BOOST_CLASS_VERSION(autocat::internal::NaiveBayesModel, 2)
