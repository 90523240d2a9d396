// Building kNN's index from the training collection: the postings
// weighted and normalized, the categories flattened, the dense columns of
// the longest lists; and kNN's term weights.
#include "classify/methods/knn_index.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "autocat/error.h"
#include "classify/corpus/weighting.h"

namespace autocat::internal {

std::vector<double> knn_inverse_document_norms(const TrainingCorpus& corpus,
                                               const std::vector<float>& idf, KnnTf tf,
                                               uint64_t* postings) {
  std::vector<double> norm2(corpus.num_docs(), 0.0);
  *postings = 0;
  for (TermId t = 0; t < corpus.num_terms_with_postings(); ++t) {
    if (!(idf[t] > 0.0f)) continue;
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      const uint32_t wdf = corpus.posting_wdf[p];
      if (wdf == 0) continue;
      const double w = knn_tf(wdf, tf) * idf[t];
      norm2[corpus.posting_doc[p]] += w * w;
      ++*postings;
    }
  }
  for (double& value : norm2) value = value > 0.0 ? 1.0 / std::sqrt(value) : 0.0;
  return norm2;
}

float knn_posting_weight(const TrainingCorpus& corpus, const std::vector<float>& idf, KnnTf tf,
                         const std::vector<double>& inverse_norm, TermId t, uint64_t p) {
  return static_cast<float>(knn_tf(corpus.posting_wdf[p], tf) * idf[t] *
                            inverse_norm[corpus.posting_doc[p]]);
}

KnnIndex::KnnIndex(const TrainingCorpus& corpus, const std::vector<float>& idf, KnnTf tf)
    : num_docs_(corpus.num_docs()),
      num_categories_(corpus.num_categories()),
      idf_(idf),
      tf_(tf),
      df_(corpus.df) {
  const uint32_t num_terms = corpus.num_terms();
  if (idf.size() != num_terms) {
    throw InvalidArgumentError("kNN index: " + std::to_string(idf.size()) + " idf values for " +
                               std::to_string(num_terms) + " terms");
  }
  owned_doc_category_start_.reserve(size_t(num_docs_) + 1);
  owned_doc_category_start_.push_back(0);
  for (uint32_t d = 0; d < num_docs_; ++d) {
    if (d < corpus.doc_categories.size()) {
      const auto& labels = corpus.doc_categories[d];
      owned_doc_category_.insert(owned_doc_category_.end(), labels.begin(), labels.end());
    }
    owned_doc_category_start_.push_back(static_cast<uint32_t>(owned_doc_category_.size()));
  }

  uint64_t kept = 0;
  const std::vector<double> inverse_norm = knn_inverse_document_norms(corpus, idf_, tf_, &kept);

  // Every posting with a positive weight belongs to a document of positive
  // norm, so `kept` postings remain.
  owned_postings_start_.assign(size_t(num_terms) + 1, 0);
  owned_posting_doc_.reserve(kept);
  owned_posting_weight_.reserve(kept);
  max_weight_.assign(num_terms, 0.0f);
  for (TermId t = 0; t < num_terms; ++t) {
    owned_postings_start_[t] = owned_posting_doc_.size();
    if (!(idf_[t] > 0.0f)) continue;
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      const uint32_t wdf = corpus.posting_wdf[p];
      if (wdf == 0) continue;
      const uint32_t doc = corpus.posting_doc[p];
      if (owned_posting_doc_.size() > owned_postings_start_[t] &&
          owned_posting_doc_.back() >= doc) {
        postings_sorted_ = false;
      }
      const float weight = knn_posting_weight(corpus, idf_, tf_, inverse_norm, t, p);
      owned_posting_doc_.push_back(doc);
      owned_posting_weight_.push_back(weight);
      max_weight_[t] = std::max(max_weight_[t], weight);
    }
  }
  owned_postings_start_[num_terms] = owned_posting_doc_.size();
  use_owned_arrays();
  choose_dense_terms();
}

KnnIndex::~KnnIndex() = default;

std::vector<float> knn_term_weights(const TrainingCorpus& corpus, const std::vector<float>& idf,
                                    double relevance) {
  if (idf.size() != corpus.num_terms()) {
    throw InvalidArgumentError("kNN term weights: idf has " + std::to_string(idf.size()) +
                               " entries for " + std::to_string(corpus.num_terms()) + " terms");
  }
  if (!(relevance > 0.0)) return idf;
  // Classes: the categories, and "no label" if some document has none.
  const uint32_t none = corpus.num_categories();
  std::vector<uint8_t> present(size_t(none) + 1, 0);
  for (const auto& labels : corpus.doc_categories) {
    if (labels.empty()) present[none] = 1;
    for (uint32_t c : labels) present[c] = 1;
  }
  if (std::count(present.begin(), present.end(), 1) < 2) return idf;
  std::vector<float> weights(idf.size(), 0.0f);
  std::vector<double> in_class(present.size());
  for (TermId t = 0; t < corpus.num_terms(); ++t) {
    if (!(idf[t] > 0.0f)) continue;
    std::fill(in_class.begin(), in_class.end(), 0.0);
    double containing = 0.0;  // documents containing t
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      const auto& labels = corpus.doc_categories[corpus.posting_doc[p]];
      containing += 1.0;
      if (labels.empty()) in_class[none] += 1.0;
      for (uint32_t c : labels) in_class[c] += 1.0;
    }
    // rf(t, c) = log2(2 + a / max(1, b)): a documents of class c contain t,
    // b documents outside it.
    double rf = 1.0;
    for (double a : in_class) {
      rf = std::max(rf, std::log2(2.0 + a / std::max(1.0, containing - a)));
    }
    weights[t] = static_cast<float>(idf[t] * std::pow(rf, relevance));
  }
  return weights;
}
KnnIndex::TermPostings KnnIndex::postings(uint32_t t) const {
  if (term_verified_ != nullptr) verify_term(t);
  const uint64_t first = postings_start_[t];
  return {posting_doc_ + first, posting_weight_ + first, size_t(postings_start_[t + 1] - first)};
}

void KnnIndex::use_owned_arrays() {
  num_postings_ = owned_posting_doc_.size();
  num_doc_categories_ = owned_doc_category_.size();
  postings_start_ = owned_postings_start_.data();
  posting_doc_ = owned_posting_doc_.data();
  posting_weight_ = owned_posting_weight_.data();
  doc_category_start_ = owned_doc_category_start_.data();
  doc_category_ = owned_doc_category_.data();
}

void KnnIndex::choose_dense_terms() {
  // A dense column costs 4 bytes per document, a posting 8. Lists covering
  // at least a quarter of the documents are added faster as columns (on 20
  // Newsgroups they hold over half of a query's postings); the columns
  // together may take at most a quarter of the postings' bytes, longest
  // lists first.
  const uint64_t min_length = std::max<uint64_t>(num_docs_ / 4, 1);
  const uint64_t column_bytes = uint64_t(num_docs_) * sizeof(float);
  const uint64_t budget = num_postings_ * (sizeof(uint32_t) + sizeof(float)) / 4;
  std::vector<std::pair<uint64_t, uint32_t>> long_lists;  // (length, term)
  for (uint32_t t = 0; t < idf_.size(); ++t) {
    const uint64_t length = postings_start_[t + 1] - postings_start_[t];
    if (length >= min_length) long_lists.emplace_back(length, t);
  }
  std::sort(long_lists.begin(), long_lists.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  const size_t count =
      column_bytes == 0 ? 0 : std::min<size_t>(long_lists.size(), budget / column_bytes);
  dense_slot_.clear();
  for (size_t i = 0; i < count; ++i) dense_slot_.emplace(long_lists[i].second, uint32_t(i));
  min_dense_postings_ = count == 0 ? UINT64_MAX : long_lists[count - 1].first;
  dense_once_.reset(new std::once_flag[count]);
  dense_columns_.reset(new std::unique_ptr<float[]>[count]);
}

const float* KnnIndex::dense_column(uint32_t t) const {
  const uint64_t begin = postings_start_[t];
  const uint64_t length = postings_start_[t + 1] - begin;
  if (length < min_dense_postings_) return nullptr;
  const auto found = dense_slot_.find(t);
  if (found == dense_slot_.end()) return nullptr;
  const uint32_t slot = found->second;
  std::call_once(dense_once_[slot], [&] {
    std::unique_ptr<float[]> column(new float[num_docs_]());
    for (uint64_t p = begin; p < begin + length; ++p) {
      column[posting_doc_[p]] = posting_weight_[p];
    }
    dense_columns_[slot] = std::move(column);
    dense_bytes_ += uint64_t(num_docs_) * sizeof(float);
  });
  return dense_columns_[slot].get();
}

std::vector<KnnPrunedEntry> knn_pruned_list(const uint32_t* doc, const float* weight, size_t n,
                                            uint32_t prune_length) {
  if (n <= prune_length) return {};
  std::vector<KnnPrunedEntry> kept(n);
  for (size_t i = 0; i < n; ++i) kept[i] = {doc[i], weight[i]};
  std::nth_element(kept.begin(), kept.begin() + prune_length, kept.end(),
                   [](const KnnPrunedEntry& a, const KnnPrunedEntry& b) {
                     return a.weight > b.weight || (a.weight == b.weight && a.doc < b.doc);
                   });
  kept.resize(prune_length);
  // In document order: the first stage's scattered additions then move
  // forward through the accumulator.
  std::sort(kept.begin(), kept.end(),
            [](const KnnPrunedEntry& a, const KnnPrunedEntry& b) { return a.doc < b.doc; });
  return kept;
}

void KnnIndex::build_two_step(uint32_t prune_length) {
  if (prune_length == 0) throw InvalidArgumentError("kNN two-step search: prune length 0");
  const uint32_t num_terms = static_cast<uint32_t>(idf_.size());
  // The forward index: the postings transposed, each document's terms in
  // increasing order.
  owned_forward_start_.assign(size_t(num_docs_) + 1, 0);
  for (uint32_t t = 0; t < num_terms; ++t) {
    const TermPostings list = postings(t);
    for (size_t i = 0; i < list.size; ++i) ++owned_forward_start_[size_t(list.doc[i]) + 1];
  }
  for (uint32_t d = 0; d < num_docs_; ++d) owned_forward_start_[d + 1] += owned_forward_start_[d];
  owned_forward_.resize(num_postings_);
  {
    std::vector<uint64_t> next(owned_forward_start_.begin(), owned_forward_start_.end() - 1);
    for (uint32_t t = 0; t < num_terms; ++t) {
      const TermPostings list = postings(t);
      for (size_t i = 0; i < list.size; ++i) {
        owned_forward_[next[list.doc[i]]++] = {t, list.weight[i]};
      }
    }
  }
  owned_pruned_start_.assign(size_t(num_terms) + 1, 0);
  owned_pruned_.clear();
  for (uint32_t t = 0; t < num_terms; ++t) {
    owned_pruned_start_[t] = owned_pruned_.size();
    const TermPostings list = postings(t);
    const std::vector<KnnPrunedEntry> kept =
        knn_pruned_list(list.doc, list.weight, list.size, prune_length);
    owned_pruned_.insert(owned_pruned_.end(), kept.begin(), kept.end());
  }
  owned_pruned_start_[num_terms] = owned_pruned_.size();
  owned_pruned_.shrink_to_fit();
  prune_length_ = prune_length;
  use_owned_two_step();
}

void KnnIndex::use_owned_two_step() {
  num_pruned_ = owned_pruned_.size();
  forward_start_ = owned_forward_start_.data();
  forward_ = owned_forward_.data();
  pruned_start_ = owned_pruned_start_.data();
  pruned_ = owned_pruned_.data();
}

size_t KnnIndex::memory_bytes() const {
  return owned_posting_doc_.capacity() * sizeof(uint32_t) +
         owned_posting_weight_.capacity() * sizeof(float) +
         owned_postings_start_.capacity() * sizeof(uint64_t) + idf_.capacity() * sizeof(float) +
         df_.capacity() * sizeof(uint32_t) +
         owned_doc_category_start_.capacity() * sizeof(uint32_t) +
         owned_doc_category_.capacity() * sizeof(uint32_t) +
         max_weight_.capacity() * sizeof(float) + dense_bytes_.load() +
         owned_forward_start_.capacity() * sizeof(uint64_t) +
         owned_forward_.capacity() * sizeof(KnnForwardEntry) +
         owned_pruned_start_.capacity() * sizeof(uint64_t) +
         owned_pruned_.capacity() * sizeof(KnnPrunedEntry);
}
}  // namespace autocat::internal
