// combo: a method that learns how to combine the others. At training time
// every member (kNN, Rocchio, the Naive Bayes family, svm, logreg) scores
// each training document out of fold (the threshold-tuning cross-validation,
// thresholds.h); each member's score for category c becomes its calibrated
// log-odds z_mc (calibration.h). A stacked logistic model per category,
//   p_c = sigmoid(sum_m w_cm * z_mc + b_c),
// is fitted on these: first one weight vector pooled over all categories,
// then each category's own, pulled towards the pooled one by an L2 penalty
// (kComboShrink), so a category with a handful of documents keeps nearly
// the pooled weights. One-of models divide by the sum of p_c. The scores are
// therefore calibrated probabilities, like every calibrated member's.
//
// A model without out-of-fold scores (trained without threshold tuning, or
// too small) has an empty ComboModel; combo then averages the raw scores of
// kNN, Rocchio and multinomial NB.
//
// Thread safety: ComboModel is data; ComboClassifier::score() is const.
#pragma once

#include <boost/serialization/vector.hpp>
#include <cstdint>
#include <functional>
#include <vector>

#include "autocat/options.h"
#include "classify/methods/calibration.h"
#include "classify/methods/classifier.h"

namespace autocat::internal {

// L2 pull of a category's weights towards the pooled weights.
inline constexpr double kComboShrink = 10.0;

struct ComboModel {
  std::vector<int32_t> members;  // Method values, in feature order
  // Per category: members.size() weights, then the bias.
  std::vector<float> weights;
  uint32_t num_categories = 0;

  bool empty() const { return members.empty(); }
  size_t stride() const { return members.size() + 1; }
  template <class Archive>
  void serialize(Archive& ar, const unsigned int /*version*/) {
    ar& members& weights& num_categories;
  }
};

// The members combo fits on, in feature order.
const std::vector<Method>& combo_members();

// Fits the stacked model. `member_logits[m]` are member m's calibrated
// out-of-fold log-odds, documents x categories; `use[d]` whether document d
// was scored; `positive[d * categories + c]` whether d is labelled c.
ComboModel fit_combo(const std::vector<Method>& members,
                     const std::vector<std::vector<float>>& member_logits,
                     const std::vector<uint8_t>& use, const std::vector<uint8_t>& positive,
                     uint32_t num_categories);

// Probabilities from the members' calibrated log-odds of one document
// (`logits[m][c]`), into `scores`.
void combo_probabilities(const ComboModel& model, Decision decision,
                         const std::vector<std::vector<double>>& logits,
                         std::vector<double>* scores);

class ComboClassifier : public Classifier {
 public:
  // Raw scores of a member method for a document (Categorizer::classifier).
  using MemberScores = std::function<void(Method, const DocumentTerms&, const ClassifyOptions&,
                                          std::vector<double>*)>;
  // Keeps references: `model` and `calibration` (by method) must outlive it.
  ComboClassifier(const ComboModel& model, const std::vector<Calibration>& calibration,
                  Decision decision, MemberScores member_scores);
  Method method() const override { return Method::kCombo; }
  void score(const DocumentTerms& doc, const ClassifyOptions& options,
             std::vector<double>* scores) const override;

 private:
  const ComboModel& model_;
  const std::vector<Calibration>& calibration_;
  Decision decision_;
  MemberScores member_scores_;
};

}  // namespace autocat::internal
