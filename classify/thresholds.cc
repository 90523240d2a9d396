#include "classify/thresholds.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>

#include "classify/knn.h"
#include "classify/naive_bayes.h"
#include "classify/rocchio.h"
#include "classify/trainer.h"
#include "classify/weighting.h"

namespace autocat::internal {

TrainingCorpus subset_corpus(const TrainingCorpus& corpus, const std::vector<uint8_t>& keep) {
  TrainingCorpus subset;
  subset.terms = corpus.terms;
  subset.categories = corpus.categories;
  constexpr uint32_t kDropped = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> renumber(corpus.num_docs(), kDropped);
  for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
    if (!keep[d]) continue;
    renumber[d] = subset.num_docs();
    subset.doc_length.push_back(corpus.doc_length[d]);
    subset.doc_categories.push_back(corpus.doc_categories[d]);
  }
  subset.postings_start.push_back(0);
  for (TermId t = 0; t < corpus.num_terms(); ++t) {
    uint32_t df = 0;
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      const uint32_t d = renumber[corpus.posting_doc[p]];
      if (d == kDropped) continue;
      subset.posting_doc.push_back(d);
      subset.posting_wdf.push_back(corpus.posting_wdf[p]);
      ++df;
    }
    subset.df.push_back(df);
    subset.postings_start.push_back(subset.posting_doc.size());
  }
  return subset;
}

std::vector<DocumentTerms> corpus_documents(const TrainingCorpus& corpus) {
  std::vector<DocumentTerms> docs(corpus.num_docs());
  // Terms are visited in id order, so each document's list comes out sorted.
  for (TermId t = 0; t < corpus.num_terms(); ++t) {
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      DocumentTerms& doc = docs[corpus.posting_doc[p]];
      doc.terms.push_back(TermCount{t, corpus.posting_wdf[p]});
      doc.known_tokens += corpus.posting_wdf[p];
      doc.total_tokens += corpus.posting_wdf[p];
    }
  }
  return docs;
}

double best_f1_threshold(const std::vector<double>& scores, const std::vector<uint8_t>& positive,
                         double min_f1) {
  const size_t n = scores.size();
  const auto positives = static_cast<size_t>(std::count(positive.begin(), positive.end(), 1));
  if (n == 0 || positives == 0) return kNeverAssign;
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  // Accept the top i documents; only cut between distinct scores.
  size_t best_accepted = 0, true_positives = 0;
  double best_f1 = -1;
  for (size_t i = 1; i <= n; ++i) {
    true_positives += positive[order[i - 1]] ? 1 : 0;
    if (i < n && scores[order[i]] == scores[order[i - 1]]) continue;
    const double f1 = 2.0 * true_positives / double(i + positives);  // 2tp / (2tp + fp + fn)
    if (f1 > best_f1) {
      best_f1 = f1;
      best_accepted = i;
    }
  }
  if (best_f1 < min_f1) return kNeverAssign;
  const double lowest_accepted = scores[order[best_accepted - 1]];
  if (best_accepted == n) return lowest_accepted / 2;
  return (lowest_accepted + scores[order[best_accepted]]) / 2;
}

std::vector<std::vector<double>> tune_thresholds(const TrainingCorpus& corpus,
                                                 const AnalyzerSettings& analyzer,
                                                 const TrainOptions& options,
                                                 const ClassifyOptions& classify) {
  constexpr uint32_t kFold = 5;  // hold out every fifth document
  // Below this held-out F1 a cut is noise. Reuters-21578 any-of micro-F1 moved
  // by under 0.01 for floors from 0.2 to 0.5 (BENCHMARKS.md).
  constexpr double kMinUsefulF1 = 0.3;
  if (corpus.num_docs() < 2 * kFold) return {};
  std::vector<uint8_t> keep(corpus.num_docs());
  std::vector<uint32_t> held_out;
  for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
    keep[d] = d % kFold != kFold - 1;
    if (!keep[d]) held_out.push_back(d);
  }
  const TrainingCorpus fitted_on = subset_corpus(corpus, keep);
  TrainOptions sub_options = options;
  sub_options.tune_thresholds = false;
  const ModelState model = fit_model(fitted_on, analyzer, sub_options);
  const std::vector<float> idf = compute_idf(fitted_on.df, fitted_on.num_docs(), model.selected);

  std::vector<std::unique_ptr<Classifier>> classifiers;
  classifiers.push_back(
      std::make_unique<KnnClassifier>(std::make_shared<const KnnIndex>(fitted_on, idf)));
  classifiers.push_back(std::make_unique<RocchioClassifier>(model.rocchio, idf));
  classifiers.push_back(std::make_unique<NaiveBayesClassifier>(model.multinomial_nb));
  classifiers.push_back(std::make_unique<NaiveBayesClassifier>(model.bernoulli_nb));
  classifiers.push_back(std::make_unique<NaiveBayesClassifier>(model.complement_nb));

  const std::vector<DocumentTerms> docs = corpus_documents(corpus);
  const uint32_t num_categories = corpus.num_categories();
  std::vector<std::vector<uint8_t>> positive(num_categories,
                                             std::vector<uint8_t>(held_out.size(), 0));
  for (size_t i = 0; i < held_out.size(); ++i) {
    for (uint32_t c : corpus.doc_categories[held_out[i]]) positive[c][i] = 1;
  }

  std::vector<std::vector<double>> thresholds(all_methods().size());
  std::vector<double> scores;
  for (const auto& classifier : classifiers) {
    const auto method = static_cast<size_t>(classifier->method());
    std::vector<std::vector<double>> by_category(num_categories,
                                                 std::vector<double>(held_out.size(), 0.0));
    for (size_t i = 0; i < held_out.size(); ++i) {
      const DocumentTerms& doc = docs[held_out[i]];
      scores.assign(num_categories, 0.0);
      if (!doc.terms.empty()) classifier->score(doc, classify, &scores);
      for (uint32_t c = 0; c < num_categories; ++c) by_category[c][i] = scores[c];
    }
    thresholds[method].resize(num_categories);
    for (uint32_t c = 0; c < num_categories; ++c) {
      thresholds[method][c] = best_f1_threshold(by_category[c], positive[c], kMinUsefulF1);
    }
  }
  return thresholds;
}

}  // namespace autocat::internal
