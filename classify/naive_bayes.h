// The Naive Bayes family (IIR ch. 13; Rennie et al. 2003), trained from the
// term/label co-occurrence counts of the training collection's postings.
// All sums are in log space; scores are posteriors normalized by log-sum-exp.
//
// Thread safety: models are data; NaiveBayesClassifier::score() is const.
#pragma once

#include <boost/serialization/vector.hpp>
#include <boost/serialization/version.hpp>
#include <cstdint>
#include <vector>

#include "classify/category_sums.h"
#include "classify/classifier.h"
#include "classify/training_collection.h"

namespace autocat::internal {

struct NaiveBayesModel {
  int variant = 0;     // static_cast<int>(Method)
  double alpha = 1.0;  // additive smoothing
  uint32_t num_categories = 0;
  std::vector<double> log_prior;  // per category
  // Term-major, num_terms x num_categories. Multinomial: log P(t|c).
  // Bernoulli: log P(t|c) - log(1 - P(t|c)). Complement: -log theta~_ct.
  std::vector<float> term_weight;
  // Per category constant added to every score. Bernoulli: sum over the
  // vocabulary of log(1 - P(t|c)), so absent terms cost nothing per document.
  std::vector<double> class_constant;
  // Empty: documents are term counts. Otherwise (multinomial and
  // complement only) their tf-idf vectors, (1 + log tf) idf_t, L2-normalized
  // (Rennie et al. 2003, sec. 4; what scikit-learn's NB peers see), in
  // training and scoring alike; one idf per term, 0 for left-out terms.
  std::vector<float> idf;

  bool tfidf() const { return !idf.empty(); }
  template <class Archive>
  void serialize(Archive& ar, const unsigned int version) {
    ar& variant& alpha& num_categories& log_prior& term_weight& class_constant;
    if (version >= 1) ar& idf;
  }
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
  const NaiveBayesModel& model_;
};

}  // namespace autocat::internal

// Version 1 (2026-11): idf (tf-idf features). Older models count terms.
BOOST_CLASS_VERSION(autocat::internal::NaiveBayesModel, 1)
