// kNN search on 20 Newsgroups bydate: the default search (dense columns for
// the longest lists) and max-score against the posting-by-posting walk (same
// neighbours, docs/s), and approximate mode (top query terms only):
// recall@k against the exact neighbours and accuracy. One thread; analysis
// excluded. Needs a model trained on split "train" (newsgroups_eval leaves
// one in <work>/model).
//
// With --kd-dims, also a k-d tree candidate pass: the documents' kNN vectors
// projected to D dimensions (truncated SVD, i.e. latent semantic indexing,
// or a seeded sparse random projection) and normalized, the M nearest to the
// projected query found with a k-d tree (classify/methods/kd_tree.h; exact,
// or visiting at most L leaves), then exact cosines on those M and the top k
// of them: docs/s, recall@k against the exact neighbours, accuracy. Not a
// product search: a measured alternative (BENCHMARKS.md, the scale benchmark).
//
// usage: knn_search --model DIR [--data FILE] [--k N,N,...] [--terms N,N,...] [--repeat R]
//                   [--kd-dims D,D,...] [--kd-candidates M,M,...] [--kd-leaves L,L,...]
//                   [--kd-projection svd,random] [--queries N]
//                   [--two-step-prune L,L,...] [--two-step-candidates F,F,...]
//                   [--two-step-terms M,M,...] [--two-step-always] [--mass]
//                   [--exact-cache FILE] [--bmp-block B,B,...] [--bmp-order label,heaviest,simhash]
//                   [--bmp-terms M,M,...] [--bmp-budget N,N,...] [--bmp-alpha A,A,...]
//   --two-step-*: two-step searches (KnnSearch::kTwoStep), one row per
//   combination of prune length L (postings kept per list; the index's own
//   arrays when it has them with that L, otherwise built here), candidates
//   F times k and first-stage query terms M (0: all); --mass prints how
//   much of the query's squared norm and of its exact neighbours' cosines
//   the top M query terms and the pruned lists carry; --two-step-always
//   runs both stages even where the search would hand over to the exact
//   walk (KnnTwoStepParams::always). --exact-cache FILE: the exact
//   neighbours are read from FILE.kK if it holds at least as many queries, else
//   computed (the exact rows) and written there; the file records neither
//   model nor data, so give each pair its own name.
//   --bmp-*: block-max rows (BlockMax below; measured, not a product
//   search): one per combination of block size B, document order, bound
//   terms M (0: all), budget N blocks (0: none) and alpha (1 unless
//   given; the visit stops at a bound at most the k-th similarity found
//   divided by alpha: 1 is safe with every term, less prunes more); with them, how close a query's
//   exact neighbours lie to one another (print_cohesion). --bmp-order heaviest unless given.
//   --kd-candidates 1000, --kd-leaves 0 (exact k-d tree search) and
//   --kd-projection svd unless given; --queries N searches with the first N
//   test documents only (all unless given)
#include "classify/methods/knn_search.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "autocat/error.h"
#include "bench/bench_util.h"
#include "classify/corpus/document_reader.h"
#include "classify/corpus/weighting.h"
#include "classify/decide/categorizer.h"
#include "classify/methods/kd_tree.h"
#include "classify/methods/knn.h"

namespace fs = std::filesystem;
using autocat::bench::Clock;
using autocat::bench::parse_list;
using autocat::bench::since;
using autocat::internal::DocumentTerms;
using autocat::internal::KdSearchStats;
using autocat::internal::KdTree;
using autocat::internal::KnnIndex;
using autocat::internal::KnnSearch;
using autocat::internal::KnnSearchStats;

namespace {

using autocat::bench::TestDoc;

// A comma-separated list of names, each one of `allowed` (`allowed_text`
// names them in the error).
std::vector<std::string> parse_names(const std::string& text, const std::string& option,
                                     const std::vector<std::string>& allowed,
                                     const std::string& allowed_text) {
  std::vector<std::string> names;
  std::stringstream list(text);
  for (std::string name; std::getline(list, name, ',');) {
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      throw autocat::InvalidArgumentError(option + " takes " + allowed_text + ", not '" + name +
                                          "'");
    }
    names.push_back(name);
  }
  return names;
}

using Neighbours = std::vector<KnnIndex::Neighbour>;

// Median seconds of `repeat` passes over every test document.
double time_search(const KnnIndex& index, const std::vector<TestDoc>& docs, int k, int terms,
                   KnnSearch search, int repeat, std::vector<Neighbours>* results,
                   const autocat::internal::KnnTwoStepParams& two_step = {}) {
  std::vector<double> times;
  for (int r = 0; r < repeat; ++r) {
    results->clear();
    const auto start = Clock::now();
    for (const TestDoc& doc : docs)
      results->push_back(index.neighbours(doc.terms, k, terms, 1.0, search, nullptr, two_step));
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

// How KdCandidates projects the documents' kNN vectors.
enum class Projection {
  kRandom,  // seeded sparse random projection (Achlioptas 2003)
  kSvd,     // truncated SVD (latent semantic indexing), by randomized SVD
};

// The k-d tree candidate pass over a KnnIndex: the projected, normalized
// training documents in a k-d tree, and a forward copy of the index (per
// document, its terms and posting weights) for the exact cosines.
class KdCandidates {
 public:
  KdCandidates(const KnnIndex& index, uint32_t dim, Projection projection, uint64_t seed)
      : index_(index), dim_(dim) {
    num_terms_ = uint32_t(index.idf().size());
    const uint32_t num_docs = index.num_docs();
    doc_start_.assign(num_docs + 1, 0);
    for (uint32_t t = 0; t < num_terms_; ++t) {
      const KnnIndex::TermPostings postings = index.postings(t);
      for (size_t i = 0; i < postings.size; ++i) ++doc_start_[postings.doc[i] + 1];
    }
    for (uint32_t d = 0; d < num_docs; ++d) doc_start_[d + 1] += doc_start_[d];
    doc_term_.resize(doc_start_[num_docs]);
    doc_weight_.resize(doc_start_[num_docs]);
    std::vector<uint64_t> next(doc_start_.begin(), doc_start_.end() - 1);
    for (uint32_t t = 0; t < num_terms_; ++t) {
      const KnnIndex::TermPostings postings = index.postings(t);
      for (size_t i = 0; i < postings.size; ++i) {
        const uint64_t at = next[postings.doc[i]]++;
        doc_term_[at] = t;
        doc_weight_[at] = postings.weight[i];
      }
    }
    if (projection == Projection::kRandom) {
      // Each entry +1 with probability 1/6, 0 with 2/3, -1 with 1/6 (times
      // sqrt(3), a scale the normalization drops), from a hash of (seed,
      // term, dimension).
      rows_.resize(size_t(num_terms_) * dim);
      for (uint32_t t = 0; t < num_terms_; ++t) {
        for (uint32_t j = 0; j < dim; ++j) {
          const uint64_t r = mix(seed ^ mix((uint64_t(t) << 32) | j)) % 6;
          rows_[size_t(t) * dim + j] = r == 0 ? 1.0f : r == 1 ? -1.0f : 0.0f;
        }
      }
    } else {
      svd_rows(seed);
    }
    std::vector<float> points(size_t(num_docs) * dim, 0.0f);
    for (uint32_t d = 0; d < num_docs; ++d) {
      float* point = points.data() + size_t(d) * dim;
      for (uint64_t p = doc_start_[d]; p < doc_start_[d + 1]; ++p) {
        const float* row = rows_.data() + size_t(doc_term_[p]) * dim;
        for (uint32_t j = 0; j < dim; ++j) point[j] += doc_weight_[p] * row[j];
      }
      normalize(point);
    }
    tree_ = std::make_unique<KdTree>(points, dim, 16);
    query_weight_.assign(num_terms_, 0.0f);
  }

  const KdTree& tree() const { return *tree_; }

  // The k most similar training documents among the `candidates` nearest
  // in the projection (a k-d tree search visiting at most `leaves` leaves,
  // 0 for all it needs), by exact cosine with KnnIndex's query weights.
  // *reranked: the candidates the tree returned (fewer than `candidates`
  // when the leaf budget holds fewer points).
  Neighbours neighbours(const DocumentTerms& query, int k, size_t candidates, uint32_t leaves,
                        KdSearchStats* stats, size_t* reranked) {
    *reranked = 0;
    const std::vector<float>& idf = index_.idf();
    terms_.clear();
    double norm2 = 0.0;
    for (const auto& tc : query.terms) {
      if (tc.term >= idf.size() || tc.count == 0 || !(idf[tc.term] > 0.0f)) continue;
      const double w = autocat::internal::knn_tf(tc.count, index_.tf()) * double(idf[tc.term]);
      norm2 += w * w;
      terms_.push_back({tc.term, float(w)});
    }
    if (terms_.empty()) return {};
    const float inverse_norm = float(1.0 / std::sqrt(norm2));
    std::vector<float> projected(dim_, 0.0f);
    for (QueryTerm& term : terms_) {
      term.weight *= inverse_norm;
      query_weight_[term.term] = term.weight;
      const float* row = rows_.data() + size_t(term.term) * dim_;
      for (uint32_t j = 0; j < dim_; ++j) projected[j] += term.weight * row[j];
    }
    normalize(projected.data());
    Neighbours found;
    const std::vector<KdTree::Match> matches =
        tree_->nearest(projected.data(), candidates, leaves, stats);
    *reranked = matches.size();
    for (const KdTree::Match& match : matches) {
      float similarity = 0.0f;
      for (uint64_t p = doc_start_[match.point]; p < doc_start_[match.point + 1]; ++p) {
        similarity += query_weight_[doc_term_[p]] * doc_weight_[p];
      }
      if (similarity > 0.0f) found.push_back({match.point, similarity});
    }
    for (const QueryTerm& term : terms_) query_weight_[term.term] = 0.0f;
    const size_t keep = std::min(found.size(), size_t(k));
    std::partial_sort(found.begin(), found.begin() + keep, found.end(), autocat::internal::better);
    found.resize(keep);
    return found;
  }

 private:
  struct QueryTerm {
    uint32_t term;
    float weight;
  };
  static uint64_t mix(uint64_t x) {  // splitmix64's finalizer
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  // rows_ = the top `dim_` right singular vectors of the document-term
  // matrix A (documents' kNN vectors as rows), by randomized SVD (Halko,
  // Martinsson & Tropp 2011): a Gaussian sketch of rank dim_ + 8, two power
  // iterations, then the small matrix's eigenvectors (Jacobi). A query q
  // then projects to q V, a document to its row of A V = U S: LSI.
  void svd_rows(uint64_t seed) {
    const uint32_t num_docs = index_.num_docs();
    const uint32_t rank = std::min<uint32_t>(dim_ + 8, std::max<uint32_t>(num_terms_, 1));
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal;
    std::vector<double> z(size_t(num_terms_) * rank);  // terms x rank
    for (double& x : z) x = normal(rng);
    std::vector<double> y(size_t(num_docs) * rank);  // docs x rank
    auto times_a = [&]() {                           // y = A z
      std::fill(y.begin(), y.end(), 0.0);
      for (uint32_t d = 0; d < num_docs; ++d) {
        double* out = y.data() + size_t(d) * rank;
        for (uint64_t p = doc_start_[d]; p < doc_start_[d + 1]; ++p) {
          const double* in = z.data() + size_t(doc_term_[p]) * rank;
          for (uint32_t c = 0; c < rank; ++c) out[c] += doc_weight_[p] * in[c];
        }
      }
    };
    auto times_a_transposed = [&]() {  // z = A^T y
      std::fill(z.begin(), z.end(), 0.0);
      for (uint32_t d = 0; d < num_docs; ++d) {
        const double* in = y.data() + size_t(d) * rank;
        for (uint64_t p = doc_start_[d]; p < doc_start_[d + 1]; ++p) {
          double* out = z.data() + size_t(doc_term_[p]) * rank;
          for (uint32_t c = 0; c < rank; ++c) out[c] += doc_weight_[p] * in[c];
        }
      }
    };
    times_a();
    orthonormalize_columns(y, num_docs, rank);
    for (int iteration = 0; iteration < 2; ++iteration) {
      times_a_transposed();
      orthonormalize_columns(z, num_terms_, rank);
      times_a();
      orthonormalize_columns(y, num_docs, rank);
    }
    times_a_transposed();  // z = A^T Q = B^T, with A ~ Q B
    // B B^T = W L W^T; A's right singular vectors are B^T W L^-1/2.
    std::vector<double> gram(size_t(rank) * rank, 0.0);
    for (uint32_t t = 0; t < num_terms_; ++t) {
      const double* row = z.data() + size_t(t) * rank;
      for (uint32_t a = 0; a < rank; ++a) {
        for (uint32_t b = 0; b < rank; ++b) gram[a * rank + b] += row[a] * row[b];
      }
    }
    std::vector<double> vectors, values;
    symmetric_eigen(gram, rank, &vectors, &values);
    std::vector<uint32_t> order(rank);
    for (uint32_t i = 0; i < rank; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return values[a] > values[b] || (values[a] == values[b] && a < b);
    });
    rows_.assign(size_t(num_terms_) * dim_, 0.0f);
    for (uint32_t j = 0; j < dim_ && j < rank; ++j) {
      const uint32_t e = order[j];
      if (!(values[e] > 0.0)) continue;
      const double scale = 1.0 / std::sqrt(values[e]);
      for (uint32_t t = 0; t < num_terms_; ++t) {
        double v = 0.0;
        for (uint32_t a = 0; a < rank; ++a) v += z[size_t(t) * rank + a] * vectors[a * rank + e];
        rows_[size_t(t) * dim_ + j] = float(v * scale);
      }
    }
  }
  // Modified Gram-Schmidt on the columns of the rows x cols matrix m
  // (row-major); a column that vanishes is left zero.
  static void orthonormalize_columns(std::vector<double>& m, size_t rows, uint32_t cols) {
    for (uint32_t c = 0; c < cols; ++c) {
      for (uint32_t b = 0; b < c; ++b) {
        double dot = 0.0;
        for (size_t r = 0; r < rows; ++r) dot += m[r * cols + b] * m[r * cols + c];
        for (size_t r = 0; r < rows; ++r) m[r * cols + c] -= dot * m[r * cols + b];
      }
      double norm2 = 0.0;
      for (size_t r = 0; r < rows; ++r) norm2 += m[r * cols + c] * m[r * cols + c];
      const double inverse = norm2 > 1e-300 ? 1.0 / std::sqrt(norm2) : 0.0;
      for (size_t r = 0; r < rows; ++r) m[r * cols + c] *= inverse;
    }
  }
  // Eigenvalues and eigenvectors (columns of *vectors, n x n row-major) of
  // the symmetric n x n matrix a, by cyclic Jacobi rotations.
  static void symmetric_eigen(std::vector<double> a, uint32_t n, std::vector<double>* vectors,
                              std::vector<double>* values) {
    std::vector<double>& v = *vectors;
    v.assign(size_t(n) * n, 0.0);
    for (uint32_t i = 0; i < n; ++i) v[i * n + i] = 1.0;
    for (int sweep = 0; sweep < 100; ++sweep) {
      double off = 0.0, total = 0.0;
      for (uint32_t i = 0; i < n; ++i) {
        for (uint32_t j = 0; j < n; ++j) {
          total += a[i * n + j] * a[i * n + j];
          if (i != j) off += a[i * n + j] * a[i * n + j];
        }
      }
      if (off <= 1e-24 * total) break;
      for (uint32_t p = 0; p < n; ++p) {
        for (uint32_t q = p + 1; q < n; ++q) {
          const double apq = a[p * n + q];
          if (std::fabs(apq) < 1e-300) continue;
          const double theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
          const double t =
              (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1.0));
          const double c = 1.0 / std::sqrt(t * t + 1.0), s = t * c;
          for (uint32_t k = 0; k < n; ++k) {  // a = a J (columns p, q)
            const double akp = a[k * n + p], akq = a[k * n + q];
            a[k * n + p] = c * akp - s * akq;
            a[k * n + q] = s * akp + c * akq;
          }
          for (uint32_t k = 0; k < n; ++k) {  // a = J^T a (rows p, q)
            const double apk = a[p * n + k], aqk = a[q * n + k];
            a[p * n + k] = c * apk - s * aqk;
            a[q * n + k] = s * apk + c * aqk;
          }
          for (uint32_t k = 0; k < n; ++k) {  // v = v J
            const double vkp = v[k * n + p], vkq = v[k * n + q];
            v[k * n + p] = c * vkp - s * vkq;
            v[k * n + q] = s * vkp + c * vkq;
          }
        }
      }
    }
    values->resize(n);
    for (uint32_t i = 0; i < n; ++i) (*values)[i] = a[i * n + i];
  }
  void normalize(float* v) const {
    double norm2 = 0.0;
    for (uint32_t j = 0; j < dim_; ++j) norm2 += double(v[j]) * v[j];
    if (norm2 > 0.0) {
      const float inverse = float(1.0 / std::sqrt(norm2));
      for (uint32_t j = 0; j < dim_; ++j) v[j] *= inverse;
    }
  }

  const KnnIndex& index_;
  uint32_t dim_;
  uint32_t num_terms_;
  // The projection: per term, its D coordinates (a document's projection
  // is the sum of its terms' rows times their weights).
  std::vector<float> rows_;
  std::vector<uint64_t> doc_start_;
  std::vector<uint32_t> doc_term_;
  std::vector<float> doc_weight_;
  std::unique_ptr<KdTree> tree_;
  std::vector<QueryTerm> terms_;
  std::vector<float> query_weight_;  // zero but for the current query's terms
};

// --exact-cache: the exact neighbours of every query, saved by one run and
// read by the next (the exact searches take most of a run at a million
// documents); the first `queries` of a file holding more. False if the
// file is missing or holds fewer.
bool read_neighbours(const std::string& path, size_t queries, std::vector<Neighbours>* out) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return false;
  uint64_t n = 0;
  bool ok = std::fread(&n, sizeof n, 1, file) == 1 && n >= queries;
  out->assign(ok ? queries : 0, {});
  for (size_t d = 0; ok && d < queries; ++d) {
    uint64_t size = 0;
    ok = std::fread(&size, sizeof size, 1, file) == 1 && size < (uint64_t{1} << 24);
    if (!ok) break;
    (*out)[d].resize(size);
    ok = std::fread((*out)[d].data(), sizeof(KnnIndex::Neighbour), size, file) == size;
  }
  std::fclose(file);
  if (!ok) out->clear();
  return ok;
}

void write_neighbours(const std::string& path, const std::vector<Neighbours>& all) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) throw autocat::IOError(path + ": cannot write the exact neighbours");
  const uint64_t n = all.size();
  std::fwrite(&n, sizeof n, 1, file);
  for (const Neighbours& neighbours : all) {
    const uint64_t size = neighbours.size();
    std::fwrite(&size, sizeof size, 1, file);
    std::fwrite(neighbours.data(), sizeof(KnnIndex::Neighbour), size, file);
  }
  std::fclose(file);
}

// Share of the exact neighbours that `found` holds, over every document.
double recall(const std::vector<Neighbours>& exact, const std::vector<Neighbours>& found) {
  double hits = 0, wanted = 0;
  for (size_t d = 0; d < exact.size(); ++d) {
    std::vector<uint32_t> truth;
    for (const auto& neighbour : exact[d]) truth.push_back(neighbour.doc);
    std::sort(truth.begin(), truth.end());
    for (const auto& neighbour : found[d]) {
      hits += std::binary_search(truth.begin(), truth.end(), neighbour.doc);
    }
    wanted += double(truth.size());
  }
  return wanted > 0 ? hits / wanted : 1.0;
}

// The query's kNN weights (as KnnIndex::neighbours computes them), heaviest
// first.
std::vector<std::pair<uint32_t, double>> query_weights(const KnnIndex& index,
                                                       const DocumentTerms& query) {
  std::vector<std::pair<uint32_t, double>> terms;
  double norm2 = 0.0;
  for (const auto& tc : query.terms) {
    if (tc.term >= index.idf().size() || tc.count == 0 || !(index.idf()[tc.term] > 0.0f)) continue;
    const double w = autocat::internal::knn_tf(tc.count, index.tf()) * index.idf()[tc.term];
    norm2 += w * w;
    terms.push_back({tc.term, w});
  }
  for (auto& term : terms) term.second /= std::sqrt(norm2);
  std::sort(terms.begin(), terms.end(), [](const auto& a, const auto& b) {
    return a.second > b.second || (a.second == b.second && a.first < b.first);
  });
  return terms;
}

// --mass: for the top M query terms, their share of the query's squared
// norm and of the exact neighbours' cosines; for the pruned lists (the
// index's prune length), the share of the neighbours' cosines carried by
// postings they keep, over all query terms and over the top M.
void print_mass(const KnnIndex& index, const std::vector<TestDoc>& docs,
                const std::vector<Neighbours>& exact, const std::vector<int>& cuts) {
  std::vector<double> norm_share(cuts.size(), 0.0), cosine_share(cuts.size(), 0.0),
      pruned_share(cuts.size(), 0.0);
  double pruned_all = 0.0, query_terms = 0.0, doc_terms = 0.0;
  std::vector<double> doc_norm_share(cuts.size(), 0.0);
  std::vector<double> query_weight(index.idf().size(), 0.0);
  std::vector<int> query_rank(index.idf().size(), -1);
  size_t counted = 0, neighbours_counted = 0;
  for (size_t d = 0; d < docs.size(); ++d) {
    const auto terms = query_weights(index, docs[d].terms);
    if (terms.empty()) continue;
    ++counted;
    query_terms += double(terms.size());
    for (size_t c = 0; c < cuts.size(); ++c) {
      double sum = 0.0;
      for (size_t i = 0; i < terms.size() && int(i) < cuts[c]; ++i)
        sum += terms[i].second * terms[i].second;
      norm_share[c] += sum;
    }
    for (size_t i = 0; i < terms.size(); ++i) {
      query_weight[terms[i].first] = terms[i].second;
      query_rank[terms[i].first] = int(i);
    }
    for (const auto& neighbour : exact[d]) {
      double total = 0.0, in_pruned = 0.0;
      std::vector<double> top(cuts.size(), 0.0), top_pruned(cuts.size(), 0.0);
      std::vector<double> doc_weights;
      for (const auto& entry : index.forward(neighbour.doc)) {
        doc_weights.push_back(entry.weight);
        const int rank = query_rank[entry.term];
        if (rank < 0) continue;
        const double product = query_weight[entry.term] * entry.weight;
        total += product;
        // Kept by the first stage: a whole list, or a pruned one holding it.
        const KnnIndex::FirstStageList list = index.first_stage_list(entry.term);
        bool kept = list.pruned == nullptr;
        if (!kept) {
          kept = std::binary_search(list.pruned, list.pruned + list.size(),
                                    autocat::internal::KnnPrunedEntry{neighbour.doc, 0.0f},
                                    [](const auto& a, const auto& b) { return a.doc < b.doc; });
        }
        if (kept) in_pruned += product;
        for (size_t c = 0; c < cuts.size(); ++c) {
          if (rank < cuts[c]) {
            top[c] += product;
            if (kept) top_pruned[c] += product;
          }
        }
      }
      std::sort(doc_weights.begin(), doc_weights.end(), std::greater<double>());
      doc_terms += double(doc_weights.size());
      for (size_t c = 0; c < cuts.size(); ++c) {
        double sum = 0.0;
        for (size_t i = 0; i < doc_weights.size() && int(i) < cuts[c]; ++i) {
          sum += doc_weights[i] * doc_weights[i];
        }
        doc_norm_share[c] += sum;
      }
      if (!(total > 0.0)) continue;
      ++neighbours_counted;
      pruned_all += in_pruned / total;
      for (size_t c = 0; c < cuts.size(); ++c) {
        cosine_share[c] += top[c] / total;
        pruned_share[c] += top_pruned[c] / total;
      }
    }
    for (const auto& term : terms) {
      query_weight[term.first] = 0.0;
      query_rank[term.first] = -1;
    }
  }
  const double n = double(std::max<size_t>(counted, 1));
  const double m = double(std::max<size_t>(neighbours_counted, 1));
  std::printf(
      "mass: %.1f query terms, %.1f terms per neighbour; prune length %u keeps %.4f of "
      "the neighbours' cosines\n",
      query_terms / n, doc_terms / m, index.prune_length(), pruned_all / m);
  std::printf(
      "| top M terms | share of query norm^2 | share of a neighbour's norm^2 | share of "
      "neighbours' cosine | of it in pruned lists |\n|---:|---:|---:|---:|---:|\n");
  for (size_t c = 0; c < cuts.size(); ++c) {
    std::printf("| %d | %.4f | %.4f | %.4f | %.4f |\n", cuts[c], norm_share[c] / n,
                doc_norm_share[c] / m, cosine_share[c] / m, pruned_share[c] / m);
  }
  std::printf("\n");
}

// Cosine of two training documents (their forward entries, both unit
// vectors with terms ascending).
double doc_cosine(const KnnIndex& index, uint32_t a, uint32_t b) {
  const auto x = index.forward(a), y = index.forward(b);
  const autocat::internal::KnnForwardEntry *i = x.begin(), *j = y.begin();
  double sum = 0.0;
  while (i != x.end() && j != y.end()) {
    if (i->term < j->term) {
      ++i;
    } else if (j->term < i->term) {
      ++j;
    } else {
      sum += double(i->weight) * j->weight;
      ++i, ++j;
    }
  }
  return sum;
}

// Whether a query's exact neighbours lie close to one another (what any
// grouping of the documents into blocks needs): their mean pairwise cosine,
// against the mean cosine of a neighbour and a random training document of
// its first label, and of a neighbour and any random training document.
void print_cohesion(const KnnIndex& index, const std::vector<Neighbours>& exact) {
  double neighbour_sum = 0.0, label_sum = 0.0, any_sum = 0.0;
  uint64_t neighbour_pairs = 0, label_pairs = 0, any_pairs = 0;
  std::mt19937_64 rng(1);
  const uint32_t num_docs = index.num_docs();
  std::vector<std::vector<uint32_t>> by_label(index.num_categories());
  for (uint32_t d = 0; d < num_docs; ++d) {
    const auto labels = index.doc_categories(d);
    if (labels.begin() != labels.end()) by_label[*labels.begin()].push_back(d);
  }
  for (const Neighbours& found : exact) {
    for (size_t i = 0; i < found.size(); ++i) {
      for (size_t j = i + 1; j < found.size(); ++j) {
        neighbour_sum += doc_cosine(index, found[i].doc, found[j].doc);
        ++neighbour_pairs;
      }
      const auto labels = index.doc_categories(found[i].doc);
      if (labels.begin() == labels.end()) continue;
      const auto& same = by_label[*labels.begin()];
      for (int r = 0; r < 20; ++r) {
        label_sum += doc_cosine(index, found[i].doc, same[rng() % same.size()]);
        ++label_pairs;
        any_sum += doc_cosine(index, found[i].doc, uint32_t(rng() % num_docs));
        ++any_pairs;
      }
    }
  }
  std::printf(
      "cohesion: exact neighbours' mean pairwise cosine %.4f; a neighbour and a random document "
      "of its first label %.4f; and any random document %.4f\n\n",
      neighbour_sum / double(std::max<uint64_t>(neighbour_pairs, 1)),
      label_sum / double(std::max<uint64_t>(label_pairs, 1)),
      any_sum / double(std::max<uint64_t>(any_pairs, 1)));
}

// --bmp-*: a block-max first stage (Mallia, Suel & Tonellotto, SIGIR 2024,
// "Faster Learned Sparse Retrieval with Block-Max Pruning"), measured here
// and not in the product. The training documents are renumbered so that
// similar ones are adjacent (by first label, then by --bmp-order within it)
// and cut into blocks of b; per term, the blocks holding it and the largest
// weight there, 8-bit quantized and rounded up (a sparse list of (block,
// u8), or one u8 per block where that is smaller). A query adds up
// UB[block] = sum of q_t * bmax_t[block] over its M heaviest terms, then
// visits blocks by decreasing UB, rescoring each document of a block
// exactly from a forward index kept in the new order, and stops when the
// next bound is at most theta / alpha (theta the k-th best similarity so
// far) or after a budget of blocks. The rescoring adds a document's
// products in its own term order, not the exact walk's, so a similarity
// may differ from the exact one in its last bits (recall counts documents).
// On the scale generator's million documents it finds fewer neighbours per
// document rescored than the pruned lists do (BENCHMARKS.md, "kNN in two
// steps"): a query's neighbours are hardly closer to one another than to
// the rest of their label, so no order puts them in a few blocks.
enum class BlockOrder {
  kLabel,     // first label, then the original order
  kHeaviest,  // first label, then the document's heaviest terms
  kSimHash,   // first label, then a 64-bit SimHash of the document's vector
};

struct BlockMaxStats {
  uint64_t blocks_visited = 0;
  uint64_t rescored = 0;
  uint64_t bound_entries = 0;  // sparse (block, max) entries and dense bytes added
  double first_bound = 0.0;    // summed over queries: the highest block bound
  double last_bound = 0.0;     // the bound of the last block the budget allows
  double theta = 0.0;          // the k-th similarity found
  // Blocks whose bound is above the k-th similarity found: what a safe
  // search (alpha 1, no budget) would have to visit at least.
  uint64_t above_theta = 0;
};

class BlockMax {
 public:
  BlockMax(const KnnIndex& index, uint32_t block_size, BlockOrder order)
      : index_(index), block_size_(block_size) {
    const uint32_t num_docs = index.num_docs();
    num_terms_ = uint32_t(index.idf().size());
    num_blocks_ = (num_docs + block_size - 1) / block_size;
    // The order: a sort key per document.
    std::vector<std::pair<uint64_t, uint64_t>> key(num_docs);
    for (uint32_t d = 0; d < num_docs; ++d) {
      const auto labels = index.doc_categories(d);
      const uint64_t label = labels.begin() == labels.end() ? 0xffff : *labels.begin();
      uint64_t second = d;
      if (order == BlockOrder::kHeaviest) {
        uint32_t best = UINT32_MAX, next = UINT32_MAX;
        float best_weight = -1.0f, next_weight = -1.0f;
        for (const auto& entry : index.forward(d)) {
          if (entry.weight > best_weight) {
            next = best, next_weight = best_weight;
            best = entry.term, best_weight = entry.weight;
          } else if (entry.weight > next_weight) {
            next = entry.term, next_weight = entry.weight;
          }
        }
        second = (uint64_t(best) << 32) | next;
      } else if (order == BlockOrder::kSimHash) {
        double sums[64] = {};
        for (const auto& entry : index.forward(d)) {
          uint64_t h = mix(uint64_t(entry.term) + 0x9E3779B97F4A7C15ULL);
          for (int bit = 0; bit < 64; ++bit)
            sums[bit] += (h >> bit & 1) ? entry.weight : -entry.weight;
        }
        second = 0;
        for (int bit = 0; bit < 64; ++bit) second |= uint64_t(sums[bit] > 0) << (63 - bit);
      }
      key[d] = {label << 48, second};
    }
    old_doc_.resize(num_docs);
    for (uint32_t d = 0; d < num_docs; ++d) old_doc_[d] = d;
    std::stable_sort(old_doc_.begin(), old_doc_.end(),
                     [&](uint32_t a, uint32_t b) { return key[a] < key[b]; });
    // The forward index in the new order.
    fwd_start_.assign(num_docs + 1, 0);
    for (uint32_t p = 0; p < num_docs; ++p) {
      const auto range = index.forward(old_doc_[p]);
      fwd_start_[p + 1] = fwd_start_[p] + uint64_t(range.end() - range.begin());
    }
    fwd_.resize(fwd_start_[num_docs]);
    for (uint32_t p = 0; p < num_docs; ++p) {
      const auto range = index.forward(old_doc_[p]);
      std::copy(range.begin(), range.end(), fwd_.begin() + std::ptrdiff_t(fwd_start_[p]));
    }
    // Per term, its blocks and their largest weights: counted, then filled
    // block by block.
    std::vector<uint32_t> last(num_terms_, UINT32_MAX), count(num_terms_, 0);
    for (uint32_t block = 0; block < num_blocks_; ++block) {
      for (uint32_t p = block * block_size; p < std::min(num_docs, (block + 1) * block_size); ++p) {
        for (uint64_t e = fwd_start_[p]; e < fwd_start_[p + 1]; ++e) {
          const uint32_t t = fwd_[e].term;
          if (last[t] != block) last[t] = block, ++count[t];
        }
      }
    }
    scale_.resize(num_terms_);
    dense_row_.assign(num_terms_, -1);
    term_start_.assign(num_terms_ + 1, 0);
    uint32_t dense_rows = 0;
    for (uint32_t t = 0; t < num_terms_; ++t) {
      scale_[t] = index.max_weight(t) / 255.0f;
      const bool dense = uint64_t(count[t]) * 5 >= num_blocks_;
      if (dense) dense_row_[t] = int32_t(dense_rows++);
      term_start_[t + 1] = term_start_[t] + (dense ? 0 : count[t]);
    }
    entry_block_.resize(term_start_[num_terms_]);
    entry_max_.resize(term_start_[num_terms_]);
    dense_.assign(size_t(dense_rows) * num_blocks_, 0);
    std::vector<uint64_t> next(term_start_.begin(), term_start_.end() - 1);
    std::fill(last.begin(), last.end(), UINT32_MAX);
    for (uint32_t block = 0; block < num_blocks_; ++block) {
      for (uint32_t p = block * block_size; p < std::min(num_docs, (block + 1) * block_size); ++p) {
        for (uint64_t e = fwd_start_[p]; e < fwd_start_[p + 1]; ++e) {
          const uint32_t t = fwd_[e].term;
          const uint8_t q = quantize(t, fwd_[e].weight);
          if (dense_row_[t] >= 0) {
            uint8_t& m = dense_[size_t(dense_row_[t]) * num_blocks_ + block];
            m = std::max(m, q);
            continue;
          }
          if (last[t] != block) {
            last[t] = block;
            entry_block_[next[t]] = block;
            entry_max_[next[t]] = q;
            ++next[t];
          } else {
            uint8_t& m = entry_max_[next[t] - 1];
            m = std::max(m, q);
          }
        }
      }
    }
    num_dense_ = dense_rows;
    bound_.assign(num_blocks_, 0.0f);
    query_weight_.assign(num_terms_, 0.0f);
  }

  // Bytes of the block bounds (the sparse and dense arrays, the scales).
  size_t bound_bytes() const {
    return entry_block_.size() * 4 + entry_max_.size() + dense_.size() + scale_.size() * 4 +
           term_start_.size() * 8;
  }
  uint32_t num_blocks() const { return num_blocks_; }
  uint32_t num_dense() const { return num_dense_; }

  // The k most similar training documents (the index's numbers) among the
  // blocks visited; bounds from the M heaviest query terms (0: all).
  Neighbours neighbours(const DocumentTerms& query, int k, uint32_t bound_terms, uint32_t budget,
                        double alpha, BlockMaxStats* stats) {
    const auto terms = query_weights(index_, query);
    if (terms.empty()) return {};
    for (const auto& term : terms) query_weight_[term.first] = float(term.second);
    const size_t cut =
        bound_terms == 0 ? terms.size() : std::min<size_t>(bound_terms, terms.size());
    float* const ub = bound_.data();
    for (size_t i = 0; i < cut; ++i) {
      const uint32_t t = terms[i].first;
      const float q = float(terms[i].second) * scale_[t];
      if (dense_row_[t] >= 0) {
        const uint8_t* row = dense_.data() + size_t(dense_row_[t]) * num_blocks_;
        for (uint32_t b = 0; b < num_blocks_; ++b) ub[b] += q * float(row[b]);
        stats->bound_entries += num_blocks_;
      } else {
        for (uint64_t e = term_start_[t]; e < term_start_[t + 1]; ++e) {
          ub[entry_block_[e]] += q * float(entry_max_[e]);
        }
        stats->bound_entries += term_start_[t + 1] - term_start_[t];
      }
    }
    order_.clear();
    for (uint32_t b = 0; b < num_blocks_; ++b) {
      if (ub[b] > 0.0f) order_.push_back({ub[b], b});
      ub[b] = 0.0f;
    }
    auto higher = [](const std::pair<float, uint32_t>& a, const std::pair<float, uint32_t>& b) {
      return a.first > b.first || (a.first == b.first && a.second < b.second);
    };
    const size_t visit = budget == 0 ? order_.size() : std::min<size_t>(budget, order_.size());
    if (visit < order_.size()) {
      std::nth_element(order_.begin(), order_.begin() + std::ptrdiff_t(visit), order_.end(),
                       higher);
    }
    std::sort(order_.begin(), order_.begin() + std::ptrdiff_t(visit), higher);
    // Top k as a min-heap on (similarity, then higher doc = worse).
    heap_.clear();
    auto better = [](const KnnIndex::Neighbour& a, const KnnIndex::Neighbour& b) {
      return a.similarity > b.similarity || (a.similarity == b.similarity && a.doc < b.doc);
    };
    const uint32_t num_docs = index_.num_docs();
    for (size_t i = 0; i < visit; ++i) {
      if (heap_.size() == size_t(k) &&
          double(order_[i].first) * alpha <= heap_.front().similarity) {
        break;
      }
      const uint32_t block = order_[i].second;
      ++stats->blocks_visited;
      const uint32_t end = std::min(num_docs, (block + 1) * block_size_);
      for (uint32_t p = block * block_size_; p < end; ++p) {
        float similarity = 0.0f;
        for (uint64_t e = fwd_start_[p]; e < fwd_start_[p + 1]; ++e) {
          similarity += query_weight_[fwd_[e].term] * fwd_[e].weight;
        }
        ++stats->rescored;
        if (!(similarity > 0.0f)) continue;
        const KnnIndex::Neighbour candidate{old_doc_[p], similarity};
        if (heap_.size() < size_t(k)) {
          heap_.push_back(candidate);
          std::push_heap(heap_.begin(), heap_.end(), better);
        } else if (better(candidate, heap_.front())) {
          std::pop_heap(heap_.begin(), heap_.end(), better);
          heap_.back() = candidate;
          std::push_heap(heap_.begin(), heap_.end(), better);
        }
      }
    }
    for (const auto& term : terms) query_weight_[term.first] = 0.0f;
    if (visit > 0) {
      stats->first_bound += order_[0].first;
      stats->last_bound += order_[std::min<size_t>(visit, order_.size()) - 1].first;
    }
    if (!heap_.empty()) {
      stats->theta += heap_.front().similarity;
      for (const auto& entry : order_) stats->above_theta += entry.first > heap_.front().similarity;
    }
    Neighbours found(heap_.begin(), heap_.end());
    std::sort(found.begin(), found.end(), better);
    return found;
  }

 private:
  static uint64_t mix(uint64_t x) {  // splitmix64's finalizer
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  // w in units of the term's scale, rounded up so that q * scale >= w.
  uint8_t quantize(uint32_t t, float w) const {
    if (!(scale_[t] > 0.0f)) return 0;
    uint32_t q = uint32_t(std::min(255.0f, std::ceil(w / scale_[t])));
    while (q < 255 && float(q) * scale_[t] < w) ++q;
    return uint8_t(q);
  }

  const KnnIndex& index_;
  uint32_t block_size_;
  uint32_t num_terms_ = 0, num_blocks_ = 0, num_dense_ = 0;
  std::vector<uint32_t> old_doc_;  // new position -> the index's document
  std::vector<uint64_t> fwd_start_;
  std::vector<autocat::internal::KnnForwardEntry> fwd_;
  std::vector<float> scale_;
  std::vector<int32_t> dense_row_;
  std::vector<uint64_t> term_start_;
  std::vector<uint32_t> entry_block_;
  std::vector<uint8_t> entry_max_;
  std::vector<uint8_t> dense_;
  std::vector<float> bound_;
  std::vector<float> query_weight_;
  std::vector<std::pair<float, uint32_t>> order_;
  std::vector<KnnIndex::Neighbour> heap_;
};

}  // namespace

int main(int argc, char** argv) try {
  std::string data = std::string(AUTOCAT_SOURCE_DIR) + "/../shared/data/20news-bydate.jsonl.gz";
  std::string model_dir;
  std::vector<int> ks = {50, 300};
  std::vector<int> term_limits = {50, 30, 20, 10};
  int repeat = 5;
  size_t max_queries = 0;  // 0: every test document
  std::vector<int> kd_dims, kd_candidates = {1000}, kd_leaves = {0};
  std::vector<std::string> kd_projections = {"svd"};
  std::vector<int> prune_lengths, candidate_factors = {10}, first_stage_terms = {0};
  std::string exact_cache;
  bool mass = false, two_step_always = false;
  std::vector<int> bmp_blocks, bmp_terms = {0}, bmp_budgets = {0};
  std::vector<double> bmp_alphas = {1.0};
  std::vector<std::string> bmp_orders = {"heaviest"};
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
    else if (arg == "--queries")
      max_queries = size_t(std::max(0, std::stoi(value())));
    else if (arg == "--kd-dims")
      kd_dims = parse_list(value());
    else if (arg == "--kd-candidates")
      kd_candidates = parse_list(value());
    else if (arg == "--kd-leaves")
      kd_leaves = parse_list(value());
    else if (arg == "--two-step-prune")
      prune_lengths = parse_list(value());
    else if (arg == "--two-step-candidates")
      candidate_factors = parse_list(value());
    else if (arg == "--two-step-terms")
      first_stage_terms = parse_list(value());
    else if (arg == "--two-step-always")
      two_step_always = true;
    else if (arg == "--exact-cache")
      exact_cache = value();
    else if (arg == "--mass")
      mass = true;
    else if (arg == "--bmp-block")
      bmp_blocks = parse_list(value());
    else if (arg == "--bmp-terms")
      bmp_terms = parse_list(value());
    else if (arg == "--bmp-budget")
      bmp_budgets = parse_list(value());
    else if (arg == "--bmp-alpha") {
      bmp_alphas.clear();
      std::stringstream list(value());
      for (std::string a; std::getline(list, a, ',');) {
        char* end = nullptr;
        const double alpha = std::strtod(a.c_str(), &end);
        if (a.empty() || *end != '\0' || !(alpha > 0.0 && alpha <= 1.0)) {
          throw autocat::InvalidArgumentError(
              "--bmp-alpha takes numbers above 0 and at most 1, not '" + a + "'");
        }
        bmp_alphas.push_back(alpha);
      }
    } else if (arg == "--bmp-order") {
      bmp_orders =
          parse_names(value(), arg, {"label", "heaviest", "simhash"}, "label, heaviest or simhash");
    } else if (arg == "--kd-projection") {
      kd_projections = parse_names(value(), arg, {"svd", "random"}, "svd or random");
    } else {
      std::cerr
          << "usage: knn_search --model DIR [--data FILE] [--k N,N] [--terms N,N] "
             "[--repeat R] [--kd-dims D,D] [--kd-candidates M,M] [--kd-leaves L,L] "
             "[--kd-projection svd,random] [--queries N] [--two-step-prune L,L] "
             "[--two-step-candidates F,F] [--two-step-terms M,M] [--two-step-always] [--mass] "
             "[--exact-cache FILE] [--bmp-block B,B] [--bmp-order label,heaviest,simhash] "
             "[--bmp-terms M,M] [--bmp-budget N,N] [--bmp-alpha A,A]\n";
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

  for (int dim : kd_dims) {
    if (dim < 1 || dim > 64) throw autocat::InvalidArgumentError("--kd-dims takes 1 to 64");
  }
  for (int m : kd_candidates) {
    if (m < 1) throw autocat::InvalidArgumentError("--kd-candidates takes 1 or more");
  }
  for (int leaves : kd_leaves) {
    if (leaves < 0) throw autocat::InvalidArgumentError("--kd-leaves takes 0 (all) or more");
  }
  for (int b : bmp_blocks) {
    if (b < 1) throw autocat::InvalidArgumentError("--bmp-block takes 1 or more");
  }
  for (int v : bmp_terms) {
    if (v < 0) throw autocat::InvalidArgumentError("--bmp-terms takes 0 (all) or more");
  }
  for (int v : bmp_budgets) {
    if (v < 0) throw autocat::InvalidArgumentError("--bmp-budget takes 0 (none) or more");
  }

  std::vector<TestDoc> docs;
  for (const auto& doc : autocat::bench::read_split(data, "test", nullptr)) {
    if (max_queries > 0 && docs.size() == max_queries) break;
    docs.push_back(autocat::bench::analyzed(categorizer, doc));
  }
  std::printf(
      "%u training docs, %llu postings; %zu test docs; cross-validated k=%d, votes "
      "similarity^%d\n\n",
      index.num_docs(), static_cast<unsigned long long>(index.num_postings()), docs.size(),
      categorizer.knn_k(), power);
  // The k-d trees, one per projection and dimension (seed 1).
  struct Kd {
    std::string projection;
    int dim;
    std::unique_ptr<KdCandidates> candidates;
  };
  std::vector<Kd> kd;
  for (const std::string& projection : kd_projections) {
    for (int dim : kd_dims) {
      const auto start = Clock::now();
      kd.push_back({projection, dim,
                    std::make_unique<KdCandidates>(
                        index, uint32_t(dim),
                        projection == "svd" ? Projection::kSvd : Projection::kRandom, 1)});
      std::printf("k-d tree, %s D=%d: projected and built in %.2f s (%u leaves of at most 16)\n",
                  projection.c_str(), dim, since(start), kd.back().candidates->tree().num_leaves());
    }
  }
  if (!kd.empty()) std::printf("\n");
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
    const std::string cache_path =
        exact_cache.empty() ? "" : exact_cache + ".k" + std::to_string(k);
    const bool cached = !cache_path.empty() && read_neighbours(cache_path, docs.size(), &exact);
    if (cached) {
      std::printf("| %d | exact neighbours read from %s | | | | | 1 | %.4f |\n", k,
                  cache_path.c_str(), accuracy(index, docs, exact, power));
    }
    for (const Exact& search : exact_searches) {
      if (cached) break;
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
    if (!cache_path.empty() && !cached) write_neighbours(cache_path, exact);
    const double n = double(docs.size());
    double walked = 0;
    for (int terms : term_limits) {
      std::vector<Neighbours> approximate;
      const double seconds =
          time_search(index, docs, k, terms, KnnSearch::kExhaustive, repeat, &approximate);
      walked = 0;
      for (size_t d = 0; d < docs.size(); ++d) {
        index.neighbours(docs[d].terms, k, terms, 1.0, KnnSearch::kExhaustive, &stats);
        walked += double(stats.postings_walked);
      }
      std::printf(
          "| %d | approximate: top %d query terms | %.0f | %.0f | - | - | "
          "%.4f | %.4f |\n",
          k, terms, n / seconds, walked / n, recall(exact, approximate),
          accuracy(index, docs, approximate, power));
    }
    // Two-step rows: "postings walked" is the first stage's, "candidates"
    // the documents rescored exactly.
    for (int prune : prune_lengths) {
      if (index.prune_length() != uint32_t(prune)) {
        // A benchmark's own index: nothing else searches it meanwhile.
        const auto start = Clock::now();
        const_cast<KnnIndex&>(index).build_two_step(uint32_t(prune));
        std::fprintf(stderr, "two-step arrays, L=%d: built in %.2f s (%llu pruned postings)\n",
                     prune, since(start),
                     static_cast<unsigned long long>(index.num_pruned_postings()));
      }
      if (mass) print_mass(index, docs, exact, {10, 25, 50, 100, 200});
      for (int factor : candidate_factors) {
        for (int m : first_stage_terms) {
          autocat::internal::KnnTwoStepParams params;
          params.candidates_per_k = uint32_t(factor);
          params.min_candidates = 0;
          params.first_stage_terms = uint32_t(m);
          params.always = two_step_always;
          std::vector<Neighbours> found;
          const double seconds =
              time_search(index, docs, k, 0, KnnSearch::kTwoStep, repeat, &found, params);
          double first = 0, rescored = 0;
          size_t same_similarities = 0, found_total = 0;
          for (size_t d = 0; d < docs.size(); ++d) {
            index.neighbours(docs[d].terms, k, 0, 1.0, KnnSearch::kTwoStep, &stats, params);
            first += double(stats.postings_walked);
            rescored += stats.rescored;
            // Every neighbour found carries its exact similarity.
            for (const auto& neighbour : found[d]) {
              ++found_total;
              for (const auto& truth : exact[d]) {
                if (truth.doc == neighbour.doc) {
                  same_similarities += truth.similarity == neighbour.similarity;
                  break;
                }
              }
            }
          }
          std::printf(
              "| %d | two-step: L=%d, k'=%dk, first-stage terms %s | %.0f | %.0f | "
              "%.0f | %zu/%zu exact similarities | %.4f | %.4f |\n",
              k, prune, factor, m == 0 ? "all" : std::to_string(m).c_str(), n / seconds, first / n,
              rescored / n, same_similarities, found_total, recall(exact, found),
              accuracy(index, docs, found, power));
          std::fflush(stdout);
        }
      }
    }
    // Block-max rows: "postings walked" is the bound entries added (sparse
    // entries and dense bytes), "candidates" the documents rescored; the
    // blocks visited are in the row's name.
    if (!bmp_blocks.empty() && !index.has_two_step()) {
      // The blocks are built from the forward index.
      const_cast<KnnIndex&>(index).build_two_step();
    }
    if (!bmp_blocks.empty()) print_cohesion(index, exact);
    for (const std::string& order_name : bmp_orders) {
      for (int block_size : bmp_blocks) {
        const auto start = Clock::now();
        BlockMax bmp(index, uint32_t(block_size),
                     order_name == "label"     ? BlockOrder::kLabel
                     : order_name == "simhash" ? BlockOrder::kSimHash
                                               : BlockOrder::kHeaviest);
        std::fprintf(stderr,
                     "block-max, %s b=%d: built in %.2f s, %u blocks, %u dense terms, bounds %.1f "
                     "MB\n",
                     order_name.c_str(), block_size, since(start), bmp.num_blocks(),
                     bmp.num_dense(), double(bmp.bound_bytes()) / 1e6);
        for (int m : bmp_terms) {
          for (int budget : bmp_budgets) {
            for (double alpha : bmp_alphas) {
              std::vector<Neighbours> found;
              std::vector<double> times;
              BlockMaxStats bstats;
              for (int r = 0; r < repeat; ++r) {
                found.clear();
                bstats = BlockMaxStats();
                const auto t0 = Clock::now();
                for (const TestDoc& doc : docs) {
                  found.push_back(
                      bmp.neighbours(doc.terms, k, uint32_t(m), uint32_t(budget), alpha, &bstats));
                }
                times.push_back(since(t0));
              }
              std::sort(times.begin(), times.end());
              std::printf(
                  "| %d | block-max: %s b=%d, M=%s, budget %d, alpha %.2f, %.1f blocks/doc | %.0f "
                  "| %.0f | %.0f | - | %.4f | %.4f | bounds %.3f..%.3f, theta %.3f, %.0f blocks "
                  "above theta\n",
                  k, order_name.c_str(), block_size, m == 0 ? "all" : std::to_string(m).c_str(),
                  budget, alpha, double(bstats.blocks_visited) / n, n / times[times.size() / 2],
                  double(bstats.bound_entries) / n, double(bstats.rescored) / n,
                  recall(exact, found), accuracy(index, docs, found, power), bstats.first_bound / n,
                  bstats.last_bound / n, bstats.theta / n, double(bstats.above_theta) / n);
              std::fflush(stdout);
            }
          }
        }
      }
    }
    // The k-d tree candidate pass: "postings walked" is the points whose
    // projected distance was computed, "candidates" the exact cosines (at
    // most M).
    for (size_t i = 0; i < kd.size(); ++i) {
      for (int m : kd_candidates) {
        for (int leaves : kd_leaves) {
          std::vector<Neighbours> found;
          std::vector<double> times;
          double compared = 0, reranked = 0;
          for (int r = 0; r < repeat; ++r) {
            found.clear();
            compared = reranked = 0;
            KdSearchStats kd_stats;
            size_t doc_reranked = 0;
            const auto start = Clock::now();
            for (const TestDoc& doc : docs) {
              found.push_back(kd[i].candidates->neighbours(
                  doc.terms, k, size_t(m), uint32_t(leaves), &kd_stats, &doc_reranked));
              compared += double(kd_stats.points);
              reranked += double(doc_reranked);
            }
            times.push_back(since(start));
          }
          std::sort(times.begin(), times.end());
          const std::string visit =
              leaves == 0 ? std::string("exact") : "at most " + std::to_string(leaves) + " leaves";
          std::printf(
              "| %d | k-d tree candidates: %s D=%d, M=%d, %s | %.0f | %.0f | %.0f | - | %.4f | "
              "%.4f "
              "|\n",
              k, kd[i].projection.c_str(), kd[i].dim, m, visit.c_str(), n / times[times.size() / 2],
              compared / n, reranked / n, recall(exact, found),
              accuracy(index, docs, found, power));
        }
      }
    }
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "knn_search: " << e.what() << "\n";
  return 1;
}
