// Evaluation: accuracy, precision, recall and F1 (micro and macro averaged)
// and the confusion matrix, for one-of and any-of decisions.
//
// Thread safety: an Evaluation is not synchronized; use one per thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace autocat::internal {

struct CategoryMetrics {
  std::string name;
  uint64_t true_positives = 0, false_positives = 0, false_negatives = 0;
  double precision = 0, recall = 0, f1 = 0;
};

class Evaluation {
 public:
  explicit Evaluation(std::vector<std::string> categories);
  // Records one document: its true categories and the assigned ones (indexes
  // into the category list). A document counts as correct for accuracy when
  // the two sets are equal.
  void add(const std::vector<uint32_t>& truth, const std::vector<uint32_t>& assigned);

  uint64_t documents() const { return documents_; }
  double accuracy() const;
  double micro_precision() const;
  double micro_recall() const;
  double micro_f1() const;
  // Mean of per-category F1 over categories with at least one true or
  // assigned document.
  double macro_f1() const;
  std::vector<CategoryMetrics> per_category() const;
  // confusion()[true][assigned] counts, for documents with exactly one true
  // and at most one assigned category; column num_categories = "none".
  const std::vector<std::vector<uint64_t>>& confusion() const { return confusion_; }
  const std::vector<std::string>& categories() const { return categories_; }

 private:
  std::vector<std::string> categories_;
  uint64_t documents_ = 0, exact_matches_ = 0;
  std::vector<uint64_t> tp_, fp_, fn_;
  std::vector<std::vector<uint64_t>> confusion_;
};

}  // namespace autocat::internal
