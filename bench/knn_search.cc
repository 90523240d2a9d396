// kNN search on 20 Newsgroups bydate: the default search (dense columns for
// the longest lists) and max-score against the posting-by-posting walk (same
// neighbours, docs/s), and approximate mode (top query terms only):
// recall@k against the exact neighbours and accuracy. One thread; analysis
// excluded. Needs a model trained on split "train" (newsgroups_eval leaves
// one in <work>/model).
//
// usage: knn_search --model DIR [--data FILE] [--k N,N,...] [--terms N,N,...] [--repeat R]
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "autocat/error.h"
#include "bench/bench_util.h"
#include "classify/corpus/document_reader.h"
#include "classify/decide/categorizer.h"
#include "classify/methods/knn.h"

namespace fs = std::filesystem;
using autocat::bench::Clock;
using autocat::bench::parse_list;
using autocat::bench::since;
using autocat::internal::DocumentTerms;
using autocat::internal::KnnIndex;
using autocat::internal::KnnSearch;
using autocat::internal::KnnSearchStats;

namespace {

using autocat::bench::TestDoc;

using Neighbours = std::vector<KnnIndex::Neighbour>;

// Median seconds of `repeat` passes over every test document.
double time_search(const KnnIndex& index, const std::vector<TestDoc>& docs, int k, int terms,
                   KnnSearch search, int repeat, std::vector<Neighbours>* results) {
  std::vector<double> times;
  for (int r = 0; r < repeat; ++r) {
    results->clear();
    const auto start = Clock::now();
    for (const TestDoc& doc : docs)
      results->push_back(index.neighbours(doc.terms, k, terms, 1.0, search));
    times.push_back(since(start));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Share of documents whose highest vote goes to their label.
double accuracy(const KnnIndex& index, const std::vector<TestDoc>& docs,
                const std::vector<Neighbours>& results, int power) {
  uint64_t correct = 0;
  std::vector<double> votes;
  for (size_t d = 0; d < docs.size(); ++d) {
    votes.assign(index.num_categories(), 0.0);
    for (const auto& neighbour : results[d]) {
      for (uint32_t c : index.doc_categories(neighbour.doc)) {
        votes[c] += autocat::internal::knn_vote_weight(neighbour.similarity, power);
      }
    }
    const auto best = std::max_element(votes.begin(), votes.end()) - votes.begin();
    correct += !results[d].empty() && !docs[d].truth.empty() && best == docs[d].truth.front();
  }
  return double(correct) / double(docs.size());
}

}  // namespace

int main(int argc, char** argv) try {
  std::string data = std::string(AUTOCAT_SOURCE_DIR) + "/../shared/data/20news-bydate.jsonl.gz";
  std::string model_dir;
  std::vector<int> ks = {50, 300};
  std::vector<int> term_limits = {50, 30, 20, 10};
  int repeat = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw autocat::InvalidArgumentError(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--data")
      data = value();
    else if (arg == "--model")
      model_dir = value();
    else if (arg == "--k")
      ks = parse_list(value());
    else if (arg == "--terms")
      term_limits = parse_list(value());
    else if (arg == "--repeat")
      repeat = std::max(1, std::stoi(value()));
    else {
      std::cerr << "usage: knn_search --model DIR [--data FILE] [--k N,N] [--terms N,N] "
                   "[--repeat R]\n";
      return arg == "--help" ? 0 : 2;
    }
  }
  if (model_dir.empty()) {
    std::cerr << "knn_search: --model DIR is required (newsgroups_eval --work W leaves one in "
                 "W/model)\n";
    return 2;
  }
  const autocat::internal::Categorizer categorizer(model_dir);
  const KnnIndex& index = categorizer.knn_index();
  const int power = categorizer.model().knn_similarity_power;

  std::vector<TestDoc> docs;
  for (const auto& doc : autocat::bench::read_split(data, "test", nullptr)) {
    docs.push_back(autocat::bench::analyzed(categorizer, doc));
  }
  std::printf(
      "%u training docs, %llu postings; %zu test docs; cross-validated k=%d, votes "
      "similarity^%d\n\n",
      index.num_docs(), static_cast<unsigned long long>(index.num_postings()), docs.size(),
      categorizer.knn_k(), power);
  std::printf(
      "| k | search | docs/s (median of %d) | postings walked/doc | candidates/doc | "
      "identical to the reference | recall@k | accuracy |\n",
      repeat);
  std::printf("|---:|---|---:|---:|---:|---|---:|---:|\n");
  struct Exact {
    KnnSearch search;
    const char* name;
  };
  const Exact exact_searches[] = {
      {KnnSearch::kPostingWalk, "posting walk (reference)"},
      {KnnSearch::kExhaustive, "exhaustive, long lists as dense columns (default)"},
      {KnnSearch::kMaxScore, "max-score"},
  };
  for (int k : ks) {
    std::vector<Neighbours> exact;
    KnnSearchStats stats;
    for (const Exact& search : exact_searches) {
      std::vector<Neighbours> found;
      const double seconds = time_search(index, docs, k, 0, search.search, repeat, &found);
      if (search.search == KnnSearch::kPostingWalk) exact = found;
      double walked = 0, candidates = 0;
      size_t identical = 0;
      for (size_t d = 0; d < docs.size(); ++d) {
        index.neighbours(docs[d].terms, k, 0, 1.0, search.search, &stats);
        walked += double(stats.postings_walked);
        candidates += stats.candidates;
        bool same = exact[d].size() == found[d].size();
        for (size_t i = 0; same && i < exact[d].size(); ++i) {
          same = exact[d][i].doc == found[d][i].doc &&
                 exact[d][i].similarity == found[d][i].similarity;
        }
        identical += same;
      }
      const double n = double(docs.size());
      const std::string candidates_per_doc =
          search.search == KnnSearch::kMaxScore ? std::to_string(int(candidates / n + 0.5)) : "-";
      std::printf("| %d | %s | %.0f | %.0f | %s | %zu/%zu | 1 | %.4f |\n", k, search.name,
                  n / seconds, walked / n, candidates_per_doc.c_str(), identical, docs.size(),
                  accuracy(index, docs, found, power));
    }
    const double n = double(docs.size());
    double walked = 0;
    for (int terms : term_limits) {
      std::vector<Neighbours> approximate;
      const double seconds =
          time_search(index, docs, k, terms, KnnSearch::kExhaustive, repeat, &approximate);
      double found = 0, wanted = 0;
      walked = 0;
      for (size_t d = 0; d < docs.size(); ++d) {
        index.neighbours(docs[d].terms, k, terms, 1.0, KnnSearch::kExhaustive, &stats);
        walked += double(stats.postings_walked);
        std::vector<uint32_t> truth;
        for (const auto& neighbour : exact[d]) truth.push_back(neighbour.doc);
        std::sort(truth.begin(), truth.end());
        for (const auto& neighbour : approximate[d]) {
          found += std::binary_search(truth.begin(), truth.end(), neighbour.doc);
        }
        wanted += double(truth.size());
      }
      std::printf(
          "| %d | approximate: top %d query terms | %.0f | %.0f | - | - | "
          "%.4f | %.4f |\n",
          k, terms, n / seconds, walked / n, wanted > 0 ? found / wanted : 1.0,
          accuracy(index, docs, approximate, power));
    }
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "knn_search: " << e.what() << "\n";
  return 1;
}
