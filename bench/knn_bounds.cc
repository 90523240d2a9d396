// How much of a kNN query's postings could any safe pruning skip? For each
// test document, with the exact k-th similarity theta known in advance (an
// oracle: a real search only learns it as it goes, so it can do no better):
//  - near ties: training documents within 10%, 20% and 50% of theta;
//  - max-score: the postings of the "essential" terms, those left after the
//    terms whose upper bounds (query weight x the term's largest posting
//    weight) sum below theta are set aside: every essential posting must be
//    visited;
//  - block-max: the postings in blocks of B consecutive documents whose
//    bound (the sum over query terms of the query weight x the term's
//    largest weight in the block) reaches theta, and the (term, block)
//    bounds a search would read to find them.
// Also how far the k-th neighbour stands from the (k+10)-th: near ties (a
// gap near 0) leave no pruning anything to skip.
// Medians over the test documents. One thread; analysis excluded.
//
// usage: knn_bounds --model DIR --data FILE [--k 50] [--documents 100]
//                   [--blocks 4,8,16,64,256]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "classify/corpus/weighting.h"
#include "classify/decide/categorizer.h"
#include "classify/methods/knn.h"

using autocat::internal::KnnIndex;
using autocat::internal::KnnSearch;

namespace {

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

struct QueryTerm {
  uint32_t term;
  double weight;  // normalized, as KnnIndex::neighbours weighs it
};

// The query vector KnnIndex::neighbours searches with.
std::vector<QueryTerm> query_terms(const KnnIndex& index,
                                   const autocat::internal::DocumentTerms& doc) {
  std::vector<QueryTerm> terms;
  double norm2 = 0.0;
  for (const auto& tc : doc.terms) {
    if (tc.term >= index.idf().size() || !(index.idf()[tc.term] > 0.0f)) continue;
    const double w = autocat::internal::sublinear_tf(tc.count) * index.idf()[tc.term];
    terms.push_back({tc.term, w});
    norm2 += w * w;
  }
  for (QueryTerm& term : terms) term.weight /= std::sqrt(norm2);
  return terms;
}

}  // namespace

int main(int argc, char** argv) try {
  std::string model_dir, data;
  int k = 50;
  size_t max_documents = 100;
  std::vector<int> block_sizes = {4, 8, 16, 64, 256};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i], value = argv[i + 1];
    if (arg == "--model") {
      model_dir = value;
    } else if (arg == "--data") {
      data = value;
    } else if (arg == "--k") {
      k = std::max(1, std::stoi(value));
    } else if (arg == "--documents") {
      max_documents = size_t(std::max(1, std::stoi(value)));
    } else if (arg == "--blocks") {
      block_sizes = autocat::bench::parse_list(value);
    } else {
      std::cerr << "knn_bounds: unknown option " << arg << "\n";
      return 2;
    }
  }
  if (model_dir.empty() || data.empty()) {
    std::cerr << "usage: knn_bounds --model DIR --data FILE [--k 50] [--documents 100] "
                 "[--blocks 4,8,16,64,256]\n";
    return 2;
  }
  const autocat::internal::Categorizer categorizer(model_dir);
  const KnnIndex& index = categorizer.knn_index();

  std::vector<double> theta, within10, within20, within50, postings, essential, gap, relative_gap;
  std::vector<std::vector<double>> block_postings(block_sizes.size()),
      block_bounds(block_sizes.size());
  for (const auto& record : autocat::bench::read_split(data, "test", nullptr)) {
    if (theta.size() >= max_documents) break;
    const auto doc = autocat::bench::analyzed(categorizer, record);
    const std::vector<QueryTerm> terms = query_terms(index, doc.terms);
    // Every similarity above 0: the exhaustive search's top (all of them).
    const std::vector<KnnIndex::Neighbour> ranked =
        index.neighbours(doc.terms, int(index.num_docs()), 0, 1.0, KnnSearch::kExhaustive);
    if (ranked.size() < size_t(k)) continue;
    const double kth = ranked[size_t(k) - 1].similarity;
    theta.push_back(kth);
    const auto at_least = [&](double share) {
      return double(std::count_if(ranked.begin(), ranked.end(),
                                  [&](const auto& n) { return n.similarity >= share * kth; }));
    };
    within10.push_back(at_least(0.9));
    within20.push_back(at_least(0.8));
    within50.push_back(at_least(0.5));
    if (ranked.size() >= size_t(k) + 10) {
      const double further = ranked[size_t(k) + 9].similarity;
      gap.push_back(kth - further);
      relative_gap.push_back(kth > 0 ? (kth - further) / kth : 0.0);
    }

    // Max-score: set aside the terms of smallest bound while their bounds
    // sum below theta.
    struct Bound {
      double bound;
      size_t length;
    };
    std::vector<Bound> bounds;
    double total = 0;
    for (const QueryTerm& term : terms) {
      const size_t length = index.postings(term.term).size;
      bounds.push_back({term.weight * index.max_weight(term.term), length});
      total += double(length);
    }
    std::sort(bounds.begin(), bounds.end(),
              [](const Bound& a, const Bound& b) { return a.bound < b.bound; });
    double set_aside = 0, essential_postings = total;
    for (const Bound& b : bounds) {
      if (set_aside + b.bound >= kth) break;
      set_aside += b.bound;
      essential_postings -= double(b.length);
    }
    postings.push_back(total);
    essential.push_back(essential_postings);

    for (size_t s = 0; s < block_sizes.size(); ++s) {
      const auto size = uint32_t(block_sizes[s]);
      const uint32_t num_blocks = (index.num_docs() + size - 1) / size;
      std::vector<double> block_bound(num_blocks, 0.0);
      std::vector<float> term_block_max(num_blocks, 0.0f);
      std::vector<uint32_t> touched;
      double term_blocks = 0;
      for (const QueryTerm& term : terms) {
        const KnnIndex::TermPostings list = index.postings(term.term);
        touched.clear();
        for (size_t p = 0; p < list.size; ++p) {
          const uint32_t block = list.doc[p] / size;
          if (term_block_max[block] == 0.0f) touched.push_back(block);
          term_block_max[block] = std::max(term_block_max[block], list.weight[p]);
        }
        term_blocks += double(touched.size());
        for (uint32_t block : touched) {
          block_bound[block] += term.weight * term_block_max[block];
          term_block_max[block] = 0.0f;
        }
      }
      double live = 0;
      for (const QueryTerm& term : terms) {
        const KnnIndex::TermPostings list = index.postings(term.term);
        for (size_t p = 0; p < list.size; ++p) live += block_bound[list.doc[p] / size] >= kth;
      }
      block_postings[s].push_back(live);
      block_bounds[s].push_back(term_blocks);
    }
  }
  if (theta.empty()) {
    std::cerr << "knn_bounds: no test document of " << data << " has " << k << " neighbours\n";
    return 1;
  }
  const double n = median(postings);
  std::printf("%u training docs; %zu test docs; k = %d; medians per test document\n\n",
              index.num_docs(), theta.size(), k);
  std::printf("k-th similarity (theta): %.4f\n", median(theta));
  std::printf("training docs within 10%% / 20%% / 50%% of theta: %.0f / %.0f / %.0f\n",
              median(within10), median(within20), median(within50));
  std::printf("gap from the k-th to the (k+10)-th similarity: %.4f (%.1f%% of theta)\n\n",
              median(gap), 100 * median(relative_gap));
  std::printf("| search, oracle theta | postings that must be visited | share | bounds read |\n");
  std::printf("|---|---:|---:|---:|\n");
  std::printf("| exhaustive | %.0f | 100%% | - |\n", n);
  std::printf("| max-score (per-term bounds) | %.0f | %.1f%% | %s |\n", median(essential),
              100 * median(essential) / n, "1 per term");
  for (size_t s = 0; s < block_sizes.size(); ++s) {
    std::printf("| block-max, blocks of %d docs | %.0f | %.1f%% | %.0f |\n", block_sizes[s],
                median(block_postings[s]), 100 * median(block_postings[s]) / n,
                median(block_bounds[s]));
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "knn_bounds: " << e.what() << "\n";
  return 1;
}
