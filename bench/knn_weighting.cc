// Exploration: kNN accuracy on 20NG test with supervised term weights
// multiplied into idf: w'(t) = idf(t) * s(t)^beta, s(t) = 1 - H(C|t)/log|C|
// with P(c|t) smoothed by m pseudo-documents spread by the prior.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "classify/categorizer.h"
#include "classify/knn.h"
#include "classify/training_collection.h"

using namespace autocat::internal;
using autocat::bench::TestDoc;

int main(int, char** argv) {
  std::string model_dir = argv[1];
  std::string data = argv[2];
  const Categorizer categorizer(model_dir);
  const KnnIndex& base = categorizer.knn_index();
  const std::vector<float> idf = base.idf();
  Xapian::Database db(categorizer.paths().training_db);
  TrainingCorpus corpus = load_training_corpus(db);
  const uint32_t C = corpus.num_categories();
  std::vector<double> prior(C, 0);
  for (const auto& cats : corpus.doc_categories)
    for (uint32_t c : cats) prior[c] += 1;
  double total = 0;
  for (double p : prior) total += p;
  for (double& p : prior) p /= total;

  std::vector<TestDoc> docs;
  for (const auto& doc : autocat::bench::read_split(data, "test", nullptr))
    docs.push_back(autocat::bench::analyzed(categorizer, doc));

  for (double m : {1.0}) {
    std::vector<double> s(corpus.num_terms(), 0);
    std::vector<double> counts(C);
    for (uint32_t t = 0; t < corpus.num_terms(); ++t) {
      std::fill(counts.begin(), counts.end(), 0.0);
      double n = 0;
      for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
        for (uint32_t c : corpus.doc_categories[corpus.posting_doc[p]]) counts[c] += 1, n += 1;
      }
      double h = 0;
      for (uint32_t c = 0; c < C; ++c) {
        const double q = (counts[c] + m * prior[c]) / (n + m);
        if (q > 0) h -= q * std::log(q);
      }
      s[t] = std::max(0.0, 1.0 - h / std::log(double(C)));
    }
    for (double beta : {0.0, 0.25, 0.5, 1.0}) {
      std::vector<float> w(idf.size());
      for (size_t t = 0; t < w.size(); ++t) w[t] = float(idf[t] * std::pow(s[t], beta));
      KnnIndex index(corpus, w);
      for (int k : {30, 100, 300}) {
        uint64_t correct = 0;
        for (const TestDoc& doc : docs) {
          auto nb = index.neighbours(doc.terms, k);
          std::vector<double> votes(C, 0);
          for (auto& x : nb)
            for (uint32_t c : index.doc_categories(x.doc)) votes[c] += double(x.similarity) * x.similarity;
          const auto best = std::max_element(votes.begin(), votes.end()) - votes.begin();
          correct += !nb.empty() && !doc.truth.empty() && uint32_t(best) == doc.truth.front();
        }
        std::printf("m=%g beta=%g k=%d acc=%.4f\n", m, beta, k, double(correct) / docs.size());
        std::fflush(stdout);
      }
    }
  }
}
