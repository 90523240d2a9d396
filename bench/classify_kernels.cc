// Microbenchmarks of the classification kernels (kNN through in-memory
// postings, Rocchio) on a synthetic corpus shaped like 20 Newsgroups:
// 11,314 training documents and 7,532 test documents in 20 categories,
// a 100,000-term Zipf vocabulary, ~150 distinct terms per document.
// Analysis is excluded: documents arrive as DocumentTerms.
//
//   bench/classify_kernels --benchmark_repetitions=5
//
// items_per_second is documents classified per second on one thread.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "classify/corpus/training_collection.h"
#include "classify/corpus/weighting.h"
#include "classify/methods/knn.h"
#include "classify/methods/rocchio.h"

namespace autocat::internal {
namespace {

constexpr uint32_t kTrainDocs = 11314;
constexpr uint32_t kTestDocs = 7532;
constexpr uint32_t kVocabulary = 100000;
constexpr uint32_t kCategories = 20;
constexpr double kZipfExponent = 1.0;
// Share of tokens drawn from the category's own ranking of the vocabulary
// (topic words); the rest come from the global ranking.
constexpr double kTopicShare = 0.4;

struct SyntheticDoc {
  std::vector<TermCount> terms;  // sorted by term
  uint32_t length = 0;
  uint32_t category = 0;
};

class Generator {
 public:
  explicit Generator(uint32_t seed) : rng_(seed), cdf_(kVocabulary) {
    double sum = 0.0;
    for (uint32_t r = 0; r < kVocabulary; ++r) {
      sum += 1.0 / std::pow(double(r + 1), kZipfExponent);
      cdf_[r] = sum;
    }
    for (double& p : cdf_) p /= sum;
  }

  SyntheticDoc document() {
    SyntheticDoc doc;
    doc.category = rng_() % kCategories;
    // Token counts spread like newsgroup posts: many short, some long.
    std::lognormal_distribution<double> length(5.1, 0.6);
    doc.length = std::clamp(uint32_t(length(rng_)), 20u, 3000u);
    std::vector<TermId> ids(doc.length);
    for (TermId& id : ids) {
      const uint32_t rank = zipf_rank();
      // A category's topic words: a fixed scramble of the ranks per category.
      id = unit_(rng_) < kTopicShare
               ? uint32_t((uint64_t(rank) * 7919 + uint64_t(doc.category + 1) * 104729) %
                          kVocabulary)
               : rank;
    }
    std::sort(ids.begin(), ids.end());
    for (size_t i = 0; i < ids.size();) {
      size_t j = i;
      while (j < ids.size() && ids[j] == ids[i]) ++j;
      doc.terms.push_back({ids[i], uint32_t(j - i)});
      i = j;
    }
    return doc;
  }

 private:
  uint32_t zipf_rank() {
    return uint32_t(std::upper_bound(cdf_.begin(), cdf_.end() - 1, unit_(rng_)) - cdf_.begin());
  }

  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> unit_{0.0, 1.0};
  std::vector<double> cdf_;
};

TrainingCorpus make_corpus(const std::vector<SyntheticDoc>& docs) {
  TrainingCorpus corpus;
  corpus.terms.resize(kVocabulary);
  for (uint32_t t = 0; t < kVocabulary; ++t) {
    char name[16];
    std::snprintf(name, sizeof(name), "w%06u", t);
    corpus.terms[t] = name;
  }
  for (uint32_t c = 0; c < kCategories; ++c)
    corpus.categories.push_back("cat" + std::to_string(100 + c));
  corpus.df.assign(kVocabulary, 0);
  for (const SyntheticDoc& doc : docs) {
    for (const TermCount& tc : doc.terms) ++corpus.df[tc.term];
  }
  corpus.postings_start.assign(kVocabulary + 1, 0);
  for (uint32_t t = 0; t < kVocabulary; ++t) {
    corpus.postings_start[t + 1] = corpus.postings_start[t] + corpus.df[t];
  }
  corpus.posting_doc.resize(corpus.postings_start.back());
  corpus.posting_wdf.resize(corpus.postings_start.back());
  std::vector<uint64_t> next(corpus.postings_start.begin(), corpus.postings_start.end() - 1);
  for (uint32_t d = 0; d < docs.size(); ++d) {
    for (const TermCount& tc : docs[d].terms) {
      const uint64_t p = next[tc.term]++;
      corpus.posting_doc[p] = d;
      corpus.posting_wdf.set(p, tc.count);
    }
    corpus.doc_categories.push_back({docs[d].category});
    corpus.doc_length.push_back(docs[d].length);
  }
  return corpus;
}

// Built once, shared by every benchmark.
struct Fixture {
  TrainingCorpus corpus;
  std::vector<DocumentTerms> queries;
  std::vector<float> idf;
  std::shared_ptr<const KnnIndex> knn;
  RocchioModel rocchio;
  double distinct_terms_per_doc = 0.0;
  double postings_per_query = 0.0;  // walked by exact kNN

  Fixture() {
    Generator generator(20261122);
    std::vector<SyntheticDoc> train(kTrainDocs);
    for (SyntheticDoc& doc : train) doc = generator.document();
    corpus = make_corpus(train);
    for (uint32_t i = 0; i < kTestDocs; ++i) {
      DocumentTerms query;
      query.terms = generator.document().terms;
      queries.push_back(std::move(query));
    }
    idf = compute_idf(corpus.df, corpus.num_docs(), {});
    knn = std::make_shared<const KnnIndex>(corpus, idf);
    rocchio = train_rocchio(corpus, idf, 0.0);
    distinct_terms_per_doc = double(corpus.posting_doc.size()) / corpus.num_docs();
    for (const DocumentTerms& query : queries) {
      for (const TermCount& tc : query.terms) {
        if (idf[tc.term] > 0.0f) postings_per_query += corpus.df[tc.term];
      }
    }
    postings_per_query /= double(queries.size());
  }
};

const Fixture& fixture() {
  static const Fixture instance;
  return instance;
}

void add_corpus_counters(benchmark::State& state) {
  const Fixture& f = fixture();
  state.counters["terms/doc"] = f.distinct_terms_per_doc;
  state.counters["index_MB"] = double(f.knn->memory_bytes()) / 1e6;
  state.counters["postings/query"] = f.postings_per_query;
}

// One iteration classifies one test document, cycling through the test set.
void BM_KnnNeighbours(benchmark::State& state) {
  const Fixture& f = fixture();
  const int max_query_terms = int(state.range(0));
  const double max_df_ratio = double(state.range(1)) / 100.0;
  size_t i = 0;
  for (auto _ : state) {
    auto neighbours = f.knn->neighbours(f.queries[i], 20, max_query_terms, max_df_ratio);
    benchmark::DoNotOptimize(neighbours.data());
    if (++i == f.queries.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  add_corpus_counters(state);
}
// Args: {max_query_terms (0 = all), max_df_ratio in percent (100 = no limit)}.
BENCHMARK(BM_KnnNeighbours)
    ->ArgNames({"max_terms", "max_df%"})
    ->Args({0, 100})
    ->Args({30, 100})
    ->Args({30, 10})
    ->Args({0, 10});

void BM_KnnScore(benchmark::State& state) {
  const Fixture& f = fixture();
  KnnClassifier classifier(f.knn);
  ClassifyOptions options;
  options.k = 20;
  options.knn_max_query_terms = int(state.range(0));
  options.knn_max_df_ratio = double(state.range(1)) / 100.0;
  std::vector<double> scores;
  size_t i = 0;
  for (auto _ : state) {
    classifier.score(f.queries[i], options, &scores);
    benchmark::DoNotOptimize(scores.data());
    if (++i == f.queries.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  add_corpus_counters(state);
}
BENCHMARK(BM_KnnScore)->ArgNames({"max_terms", "max_df%"})->Args({0, 100})->Args({30, 10});

void BM_RocchioScore(benchmark::State& state) {
  const Fixture& f = fixture();
  RocchioClassifier classifier(f.rocchio, f.idf);
  std::vector<double> scores;
  size_t i = 0;
  for (auto _ : state) {
    classifier.score(f.queries[i], ClassifyOptions(), &scores);
    benchmark::DoNotOptimize(scores.data());
    if (++i == f.queries.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["entries"] = double(f.rocchio.entry_weight.size());
}
BENCHMARK(BM_RocchioScore);

// One-off costs: building the kNN index and training Rocchio.
void BM_KnnIndexBuild(benchmark::State& state) {
  const Fixture& f = fixture();
  for (auto _ : state) {
    KnnIndex index(f.corpus, f.idf);
    benchmark::DoNotOptimize(index.num_postings());
  }
  state.SetItemsProcessed(state.iterations() * int64_t(f.corpus.posting_doc.size()));
}
BENCHMARK(BM_KnnIndexBuild)->Unit(benchmark::kMillisecond);

void BM_RocchioTrain(benchmark::State& state) {
  const Fixture& f = fixture();
  for (auto _ : state) {
    RocchioModel model = train_rocchio(f.corpus, f.idf, 0.3);
    benchmark::DoNotOptimize(model.entry_weight.data());
  }
  state.SetItemsProcessed(state.iterations() * int64_t(f.corpus.posting_doc.size()));
}
BENCHMARK(BM_RocchioTrain)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace autocat::internal

BENCHMARK_MAIN();
