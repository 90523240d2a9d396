// Explanations of a categorization: the ranked category scores, the
// decision (as classify makes it), and the evidence behind the first
// assigned category for each method. kNN: the nearest training documents, and the query terms
// shared with the nearest one of the best category (q_t * d_t, summing to their cosine). Rocchio:
// the terms' shares of the cosine to the best centroid (q_t * centroid_t, summing to the score).
// Naive Bayes family: the terms' shares of the log-score gap between the best category and the
// runner-up (count * (w[t][best] - w[t][second])). svm and logreg: the terms' shares of the best
// category's decision value (x_t * w_t, x the normalized tf-idf vector); with the bias (`base`)
// they sum to the decision value, which the probability sigmoid maps to the score. combo: each
// member's raw and calibrated score of the best category and its stacking weight (log-odds x
// weight); with the bias (`base`) they sum to the stacked log-odds, whose sigmoid is the score
// (one-of then divides by the sum over categories); the same for each of the top categories.
//
// Thread safety: an Explainer holds a Xapian::Database (kNN, opened on first
// use) and is not thread-safe; use one per thread. Explanations are data.
#pragma once

#include <xapian.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "autocat/options.h"
#include "autocat/types.h"
#include "classify/corpus/training_collection.h"
#include "classify/decide/categorizer.h"

namespace autocat::internal {

struct ExplainOptions {
  // Method, kNN's k and the decision options (unset = the model's), as
  // classify uses them.
  ClassifyOptions classify;
  // Categories reported in Explanation::top, best first.
  size_t max_categories = 5;
  // kNN: neighbours reported in Explanation::neighbours, nearest first.
  size_t max_neighbours = 5;
  // Terms reported in Explanation::terms, largest contribution first.
  size_t max_terms = 5;
};

struct ExplainedNeighbour {
  uint32_t doc = 0;                 // dense training document index (KnnIndex numbering)
  Xapian::docid docid = 0;          // its docid in the training database
  std::string id;                   // training document id
  double similarity = 0;            // cosine to the explained document
  std::vector<std::string> labels;  // its categories
};

struct TermContribution {
  std::string term;
  double contribution = 0;
};

// combo: one member's part in the stacked decision for Explanation::category.
struct ComboMemberPart {
  Method method = Method::kKnn;
  double score = 0;         // the member's raw score
  double probability = 0;   // calibrated: sigmoid(logit)
  double logit = 0;         // calibrated log-odds (calibration.h), the stacking feature
  double weight = 0;        // the category's stacking weight of this member
  double contribution = 0;  // logit x weight
};

// combo: the stacked decision of one category, member by member.
struct ComboCategoryParts {
  std::string category;
  std::vector<ComboMemberPart> members;  // in the model's member order
  double base = 0;                       // the category's bias (0 without stacking)
  double sum = 0;                        // the members' contributions
  // sigmoid(base + sum), the score before one-of's division; without
  // stacking weights the raw scores' mean (= sum).
  double stacked_probability = 0;
};

struct Explanation {
  Method method = Method::kKnn;
  bool has_known_terms = false;          // false: the document has no term in the vocabulary
  std::string note;                      // why there is no evidence to show; empty otherwise
  std::vector<Category> top;             // best scores first, at most max_categories
  std::vector<Category> assigned;        // the decision's categories, best first; may be none
  Decision decision = Decision::kOneOf;  // the mode applied
  bool other = false;                    // one-of with "other"
  std::string decision_reason;           // DecisionTrace::reason

  // kNN: the k nearest neighbours (at most max_neighbours of them).
  std::vector<ExplainedNeighbour> neighbours;

  // What `terms` explain; empty when no category was assigned.
  std::string category;   // the assigned (best) category
  std::string versus;     // NB family: the runner-up (empty with a single category)
  std::string neighbour;  // kNN: id of the nearest neighbour labelled `category`
  // NB family: the part of the log-score gap not due to terms (difference of
  // log priors and per-category constants). svm, logreg: the category's bias
  // weight. Other methods: 0.
  double base = 0;
  // Terms with a non-zero contribution, largest first (ties by term), at most
  // max_terms of them.
  std::vector<TermContribution> terms;
  // Sum of the contributions of every term of the document, listed or not:
  // kNN the neighbour's cosine (over every query term: with the pruning
  // options, more than the similarity kNN walked), Rocchio the score of
  // `category` (before clipping), NB the log-score gap minus `base`, svm and
  // logreg the decision value minus `base`.
  double terms_total = 0;
  size_t num_contributing_terms = 0;  // terms with a non-zero contribution
  // combo: every member's part for `category`, in the model's member order
  // (terms_total their sum, base the bias). A model without stacking
  // weights averages raw scores: probability = score, logit = 0, weight
  // 1/members, contribution = score x weight, base 0.
  std::vector<ComboMemberPart> members;
  bool stacked = false;  // combo: stacking weights (else the raw scores' mean)
  // combo: sigmoid(base + terms_total), the score before one-of's division.
  double stacked_probability = 0;
  // combo: the parts of each category of `top`, in its order (assigned or
  // not; empty without a known term).
  std::vector<ComboCategoryParts> combo_top;
};

class Explainer {
 public:
  // Keeps a reference: `categorizer` must outlive the explainer.
  explicit Explainer(const Categorizer& categorizer);

  // Explains how `doc` is categorized. For kNN, opens the training database
  // on first use (throws NotFoundError if it is missing, ModelFormatError if
  // it changed since training).
  Explanation explain(const DocumentTerms& doc, const ExplainOptions& options);

  // kNN: the training database docid of every dense document index, in
  // order (the numbering of load_training_corpus and KnnIndex).
  const std::vector<Xapian::docid>& training_docids();

 private:
  void explain_knn(const DocumentTerms& doc, const ExplainOptions& options, Explanation* out);
  void explain_rocchio(const DocumentTerms& doc, const ExplainOptions& options,
                       Explanation* out) const;
  // `ranking`: every category, best first.
  void explain_naive_bayes(const DocumentTerms& doc, const ExplainOptions& options, Method method,
                           const std::vector<Category>& ranking, Explanation* out) const;
  void explain_linear(const DocumentTerms& doc, const ExplainOptions& options, Method method,
                      Explanation* out) const;
  void explain_combo(const DocumentTerms& doc, const ExplainOptions& options,
                     Explanation* out) const;
  void open_training_database();

  const Categorizer& categorizer_;
  std::vector<float> idf_;  // as the categorizer's classifiers use it
  bool training_open_ = false;
  Xapian::Database training_;
  std::vector<Xapian::docid> docids_;
};

}  // namespace autocat::internal
