// Rocchio: centroids of L2-normalized sublinear tf-idf vectors, trained in
// one term-major pass over the postings and stored term-major, so that
// scoring a document touches only the centroid entries of its own terms.
#include "classify/methods/rocchio.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "autocat/error.h"
#include "classify/corpus/weighting.h"

namespace autocat::internal {

namespace {

// A hint only: fetches the cache line holding `address`.
inline void prefetch(const void* address) {
#if defined(__GNUC__)
  __builtin_prefetch(address);
#else
  (void)address;
#endif
}

}  // namespace

RocchioModel train_rocchio(const TrainingCorpus& corpus, const std::vector<float>& idf,
                           double gamma) {
  if (idf.size() != corpus.num_terms()) {
    throw InvalidArgumentError("Rocchio training: " + std::to_string(idf.size()) +
                               " idf values for " + std::to_string(corpus.num_terms()) + " terms");
  }
  return rocchio_from_sums(sum_categories(corpus, TermAmount::kTfidf, {}, idf), gamma);
}

RocchioModel rocchio_from_sums(const CategorySums& sums, double gamma) {
  const uint32_t num_terms = sums.num_terms;
  const uint32_t num_categories = sums.num_categories;
  if (sums.amount != TermAmount::kTfidf) {
    throw InvalidArgumentError("Rocchio training: the category sums are not of tf-idf vectors");
  }
  if (!(gamma >= 0.0)) {
    throw InvalidArgumentError("Rocchio training: gamma must be >= 0, got " +
                               std::to_string(gamma));
  }
  const std::vector<int64_t>& category_docs = sums.category_docs;
  const uint32_t nonempty_categories = static_cast<uint32_t>(
      std::count_if(category_docs.begin(), category_docs.end(), [](int64_t n) { return n > 0; }));

  // Mean centroids, term-major and sparse (categories sorted within a term),
  // computed twice a term: once for the centroids' norms, once to store
  // them. No full-size intermediate copy: at millions of terms it would
  // cost more memory than the model itself.
  // A sum left by subtracting a document (live learning) is not exactly 0
  // but a rounding residue far below any real component: not an entry.
  constexpr double kResidue = 1e-9;
  std::vector<uint32_t> row_category;
  std::vector<double> row_weight;
  const auto centroid_row = [&](TermId t) {
    row_category.clear();
    row_weight.clear();
    for (const SumEntry& entry : sums.row(t)) {
      const uint32_t c = entry.category;
      if (!(entry.amount > kResidue) || category_docs[c] <= 0) continue;
      row_category.push_back(c);
      row_weight.push_back(entry.amount / static_cast<double>(category_docs[c]));
    }
    // centroid_c - gamma * mean of the other centroids, negatives clipped.
    // A category absent from a term's entries has weight 0 there, so it can
    // only go negative: the sparsity pattern never grows.
    if (gamma > 0.0 && nonempty_categories > 1) {
      double total = 0.0;
      for (double weight : row_weight) total += weight;
      for (double& weight : row_weight) {
        const double others = (total - weight) / (nonempty_categories - 1);
        weight = std::max(0.0, weight - gamma * others);
      }
    }
  };

  // L2-normalize each centroid and drop zero entries.
  std::vector<double> norm2(num_categories, 0.0);
  uint64_t num_entries = 0;
  for (TermId t = 0; t < num_terms; ++t) {
    centroid_row(t);
    for (size_t e = 0; e < row_weight.size(); ++e) {
      norm2[row_category[e]] += row_weight[e] * row_weight[e];
      if (row_weight[e] > 0.0) ++num_entries;  // what the model keeps, but for underflow
    }
  }
  for (double& value : norm2) value = value > 0.0 ? 1.0 / std::sqrt(value) : 0.0;

  RocchioModel model;
  model.num_categories = num_categories;
  model.term_start.assign(size_t(num_terms) + 1, 0);
  model.entry_category.reserve(num_entries);
  model.entry_weight.reserve(num_entries);
  for (TermId t = 0; t < num_terms; ++t) {
    model.term_start[t] = model.entry_category.size();
    centroid_row(t);
    for (size_t e = 0; e < row_weight.size(); ++e) {
      const float weight = static_cast<float>(row_weight[e] * norm2[row_category[e]]);
      if (!(weight > 0.0f)) continue;
      model.entry_category.push_back(row_category[e]);
      model.entry_weight.push_back(weight);
    }
  }
  model.term_start[num_terms] = model.entry_category.size();
  return model;
}

RocchioClassifier::RocchioClassifier(const RocchioModel& model, const std::vector<float>& idf)
    : model_(model), idf_(idf) {
  // Checked once here so that score() can index without bounds checks.
  const auto bad = [](const std::string& what) {
    return InvalidArgumentError("Rocchio model: " + what);
  };
  if (model.term_start.empty() && idf.empty() && model.entry_category.empty()) return;
  if (model.term_start.size() != idf.size() + 1) {
    throw bad(std::to_string(model.term_start.size() - 1) + " terms but " +
              std::to_string(idf.size()) + " idf values");
  }
  if (model.entry_category.size() != model.entry_weight.size() || model.term_start.front() != 0 ||
      model.term_start.back() != model.entry_category.size() ||
      !std::is_sorted(model.term_start.begin(), model.term_start.end())) {
    throw bad("inconsistent centroid entries");
  }
  for (uint32_t c : model.entry_category) {
    if (c >= model.num_categories) throw bad("category index out of range");
  }
}

void RocchioClassifier::score(const DocumentTerms& doc, const ClassifyOptions& /*options*/,
                              std::vector<double>* scores) const {
  scores->assign(model_.num_categories, 0.0);
  double* const out = scores->data();
  const TermCount* const terms = doc.terms.data();
  const size_t num_terms = doc.terms.size();
  const size_t vocabulary = idf_.size();
  // Accumulate with unnormalized query weights, then divide once by |q|.
  // Each term's centroid entries sit at a random place in a large array:
  // fetch them a few terms ahead.
  constexpr size_t kAhead = 4;
  for (size_t i = 0; i < std::min(kAhead, num_terms); ++i) {
    if (terms[i].term < vocabulary) prefetch(&model_.term_start[terms[i].term]);
  }
  double norm2 = 0.0;
  for (size_t i = 0; i < num_terms; ++i) {
    if (i + kAhead < num_terms && terms[i + kAhead].term < vocabulary) {
      prefetch(&model_.term_start[terms[i + kAhead].term]);
      prefetch(&idf_[terms[i + kAhead].term]);
    }
    if (i + 1 < num_terms && terms[i + 1].term < vocabulary) {
      const uint64_t next = model_.term_start[terms[i + 1].term];
      prefetch(model_.entry_category.data() + next);
      prefetch(model_.entry_weight.data() + next);
    }
    const TermCount tc = terms[i];
    if (tc.term >= vocabulary || tc.count == 0) continue;
    const float idf = idf_[tc.term];
    if (!(idf > 0.0f)) continue;
    const double w = (tc.count == 1 ? 1.0 : sublinear_tf(tc.count)) * idf;
    norm2 += w * w;
    const uint64_t end = model_.term_start[tc.term + 1];
    for (uint64_t e = model_.term_start[tc.term]; e < end; ++e) {
      out[model_.entry_category[e]] += w * model_.entry_weight[e];
    }
  }
  if (!(norm2 > 0.0)) return;
  const double inverse_norm = 1.0 / std::sqrt(norm2);
  for (double& score : *scores) score = std::clamp(score * inverse_norm, 0.0, 1.0);
}

}  // namespace autocat::internal
