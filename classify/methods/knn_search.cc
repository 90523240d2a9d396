// kNN's search kernels over compact in-memory posting lists.
//
// Each posting holds w(t,d)/|d|, so the similarity of a query q to a
// training document d is the sum over the query's terms of q_t times the
// posting weight: one multiply-add per posting into a dense float
// accumulator indexed by document. Per-thread scratch memory (the
// accumulator, the query, the top-k heap) is reused across calls, so a call
// allocates only its result.
#include "classify/methods/knn_search.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "classify/corpus/weighting.h"

namespace autocat::internal {

namespace {

using Neighbour = KnnIndex::Neighbour;

struct QueryTerm {
  TermId term;
  double weight;  // (1 + ln count) * idf, then divided by the query norm
  double bound;   // float(weight) * the term's largest posting weight
};

// A document that may still enter the top k, with its partial similarity.
struct Candidate {
  uint32_t doc;
  float similarity;
};

// Reused by every call on one thread. Invariant between calls: every entry
// of `accumulator` is zero.
struct Scratch {
  std::vector<QueryTerm> query;
  std::vector<float> accumulator;
  std::vector<uint32_t> touched;  // documents met by a short walk
  std::vector<Neighbour> heap;
  std::vector<double> remaining_bound;
  std::vector<uint64_t> remaining_postings;
  std::vector<Candidate> candidates;
  std::vector<float> selection;
  std::vector<const float*> columns;  // per query term: its dense column, or null
  // Two-step search: the first stage's query terms (indexes into `query`),
  // the query's terms hashed with their rank in `query`, and one
  // candidate's products by rank (read only where its rank bit is set).
  std::vector<uint32_t> first_stage;
  struct RankedTerm {
    uint32_t term;
    uint32_t rank;
  };
  std::vector<RankedTerm> by_term;  // open-addressing table by term_hash
  std::vector<uint64_t> bitmap;     // kQueryBitmapWords
  std::vector<uint64_t> rank_bits;  // one candidate's matched ranks
  std::vector<float> products;
};

// The second stage's query-term bitmap: 2^16 bits (8 KB, in L1 cache),
// a false match for about one in 500 document terms at 117 query terms.
constexpr uint32_t kQueryBitmapWords = 1024;

// The two-step search's cost per first-stage posting and per rescored
// forward entry, in exact-walk postings (two_step_top_k).
constexpr uint64_t kFirstStageCost = 8;
constexpr uint64_t kRescoreCost = 4;

// Candidates whose forward entries the second stage prefetches ahead.
constexpr size_t kRescoreAhead = 4;

// Multiplicative (Fibonacci) hashing: consecutive term ids spread out.
// The bitmap takes the hash's top 16 bits (h >> 22 its word).
inline uint32_t term_hash(uint32_t term) { return term * 0x9E3779B1u; }

Scratch& thread_scratch() {
  thread_local Scratch scratch;
  return scratch;
}

}  // namespace

namespace {

// Where the postings of a KnnIndex are, for the search functions below.
struct PostingsView {
  const uint64_t* start;
  const uint32_t* doc;
  const float* weight;
  uint32_t num_docs;
};

// acc[doc[i]] += q * weight[i] for every posting, unrolled: four
// independent updates per step.
inline void accumulate(float* acc, const uint32_t* doc, const float* weight, size_t n, float q) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float w0 = q * weight[i], w1 = q * weight[i + 1], w2 = q * weight[i + 2],
                w3 = q * weight[i + 3];
    acc[doc[i]] += w0;
    acc[doc[i + 1]] += w1;
    acc[doc[i + 2]] += w2;
    acc[doc[i + 3]] += w3;
  }
  for (; i < n; ++i) acc[doc[i]] += q * weight[i];
}

// acc[d] += q * column[d] for every document. A term in a large share of
// the documents is cheaper as a dense column (vector multiply-adds, no
// scattered writes) than as postings. Documents without the term hold 0 in
// the column and add exactly zero, and each addition is the same float
// operation as in accumulate(), so similarities stay bit-identical.
inline void accumulate_dense(float* acc, const float* column, size_t n, float q) {
  size_t i = 0;
#if defined(__SSE2__)
  const __m128 qv = _mm_set1_ps(q);
  for (; i + 8 <= n; i += 8) {
    const __m128 a0 = _mm_add_ps(_mm_loadu_ps(acc + i), _mm_mul_ps(qv, _mm_loadu_ps(column + i)));
    const __m128 a1 =
        _mm_add_ps(_mm_loadu_ps(acc + i + 4), _mm_mul_ps(qv, _mm_loadu_ps(column + i + 4)));
    _mm_storeu_ps(acc + i, a0);
    _mm_storeu_ps(acc + i + 4, a1);
  }
#endif
  for (; i < n; ++i) acc[i] += q * column[i];
}

// How many of acc[0, n) are above `limit` (strictly, or at least it with
// `inclusive`), four at a time: max-score's checks make these passes over
// the whole accumulator.
inline uint32_t count_above(const float* acc, uint32_t n, float limit, bool inclusive) {
  uint32_t d = 0;
  uint32_t count = 0;
#if defined(__SSE2__)
  const __m128 lv = _mm_set1_ps(limit);
  __m128i lanes = _mm_setzero_si128();  // a hit is -1 (all bits set): subtracted, it counts
  for (; d + 4 <= n; d += 4) {
    const __m128 a = _mm_loadu_ps(acc + d);
    lanes = _mm_sub_epi32(lanes,
                          _mm_castps_si128(inclusive ? _mm_cmpge_ps(a, lv) : _mm_cmpgt_ps(a, lv)));
  }
  alignas(16) uint32_t lane[4];
  _mm_store_si128(reinterpret_cast<__m128i*>(lane), lanes);
  count = lane[0] + lane[1] + lane[2] + lane[3];
#endif
  for (; d < n; ++d) count += inclusive ? acc[d] >= limit : acc[d] > limit;
  return count;
}

// Calls visit(d) for every d in [0, n) whose acc[d] is above `limit`
// (strictly, or at least it with `inclusive`), in document order. Few
// pass: four are compared at a time, and only a group with a hit is looked
// at one by one.
template <typename Visit>
inline void for_each_above(const float* acc, uint32_t n, float limit, bool inclusive,
                           const Visit& visit) {
  uint32_t d = 0;
#if defined(__SSE2__)
  const __m128 lv = _mm_set1_ps(limit);
  for (; d + 4 <= n; d += 4) {
    const __m128 a = _mm_loadu_ps(acc + d);
    const int hits = _mm_movemask_ps(inclusive ? _mm_cmpge_ps(a, lv) : _mm_cmpgt_ps(a, lv));
    if (hits == 0) continue;
    for (uint32_t j = 0; j < 4; ++j) {
      if (hits & (1 << j)) visit(d + j);
    }
  }
#endif
  for (; d < n; ++d) {
    if (inclusive ? acc[d] >= limit : acc[d] > limit) visit(d);
  }
}

// The `keep` best documents of a dense accumulator (similarity > 0; ties by
// lower doc), most similar first; zeroes the accumulator. Rather than
// offering every document to a heap (at large k, thousands of heap
// insertions per query), a threshold is guessed from every 8th document,
// all documents at or above it are collected in one branch-free pass, and
// the best `keep` of those are selected. If fewer than `keep` reach the
// guess, every document above zero is collected instead, so the result is
// exactly the heap's.
constexpr uint32_t kSelectionStride = 8;

// Allocates what select_top_k needs, before the accumulator is written:
// nothing may throw while it holds non-zero entries.
void reserve_selection(uint32_t num_docs, Scratch& scratch) {
  scratch.selection.reserve(num_docs / kSelectionStride + 1);
  scratch.heap.reserve(size_t(num_docs) + 1);
}

// REQUIRES: reserve_selection(num_docs, scratch) before acc was written.
std::vector<Neighbour> select_top_k(float* acc, uint32_t num_docs, size_t keep, Scratch& scratch) {
  constexpr uint32_t kStride = kSelectionStride;
  std::vector<float>& sample = scratch.selection;
  sample.clear();
  for (uint32_t d = 0; d < num_docs; d += kStride) {
    if (acc[d] > 0.0f) sample.push_back(acc[d]);
  }
  // About keep / kStride sampled documents lie at or above the k-th
  // similarity; asking for half as many again leaves a margin.
  const size_t rank = keep / kStride + keep / (2 * kStride) + 8;
  float threshold = std::numeric_limits<float>::denorm_min();
  if (rank <= sample.size()) {
    std::nth_element(sample.begin(), sample.begin() + std::ptrdiff_t(rank - 1), sample.end(),
                     std::greater<float>());
    threshold = std::max(threshold, sample[rank - 1]);
  }
  std::vector<Neighbour>& collected = scratch.heap;
  collected.resize(size_t(num_docs) + 1);  // within the reserved capacity
  const auto collect = [&](float at_least) {
    Neighbour* const out = collected.data();
    size_t n = 0;
    for (uint32_t d = 0; d < num_docs; ++d) {
      out[n] = {d, acc[d]};
      n += acc[d] >= at_least;
    }
    return n;
  };
  size_t num_collected = collect(threshold);
  if (num_collected < keep && threshold > std::numeric_limits<float>::denorm_min()) {
    num_collected = collect(std::numeric_limits<float>::denorm_min());
  }
  std::fill(acc, acc + num_docs, 0.0f);
  const auto first = collected.begin();
  const auto last = first + std::ptrdiff_t(num_collected);
  const auto order = [](const Neighbour& a, const Neighbour& b) { return better(a, b); };
  const auto cut = num_collected > keep ? first + std::ptrdiff_t(keep) : last;
  if (cut != last) std::nth_element(first, cut, last, order);
  std::sort(first, cut, order);
  return std::vector<Neighbour>(first, cut);
}

// Walks every posting of every query term: the reference search.
std::vector<Neighbour> exhaustive_top_k(const PostingsView& postings,
                                        const std::vector<QueryTerm>& terms,
                                        uint64_t total_postings, size_t keep, Scratch& scratch,
                                        KnnSearchStats* stats) {
  if (stats != nullptr) {
    stats->terms_walked = uint32_t(terms.size());
    stats->postings_walked = total_postings;
  }
  const uint32_t num_docs = postings.num_docs;
  // Short postings walks record the documents they touch; long ones (the
  // usual case) are cheaper to follow with one scan over all documents.
  const bool track = total_postings < num_docs / 2;
  if (track && scratch.touched.size() < total_postings) scratch.touched.resize(total_postings);
  if (track) {
    scratch.heap.reserve(keep);
  } else {
    reserve_selection(num_docs, scratch);
  }

  float* const acc = scratch.accumulator.data();
  uint32_t* const touched = scratch.touched.data();
  size_t num_touched = 0;
  for (size_t t = 0; t < terms.size(); ++t) {
    const QueryTerm& term = terms[t];
    const uint64_t begin = postings.start[term.term];
    const uint64_t end = postings.start[term.term + 1];
    const uint32_t* const doc = postings.doc + begin;
    const float* const weight = postings.weight + begin;
    const size_t n = size_t(end - begin);
    const float q = static_cast<float>(term.weight);
    if (track) {
      for (size_t i = 0; i < n; ++i) {
        const uint32_t d = doc[i];
        touched[num_touched] = d;
        num_touched += acc[d] == 0.0f;
        acc[d] += q * weight[i];
      }
    } else if (scratch.columns[t] != nullptr) {
      accumulate_dense(acc, scratch.columns[t], num_docs, q);
    } else {
      accumulate(acc, doc, weight, n, q);
    }
  }

  // Select the top k and restore the all-zero accumulator. A document
  // recorded twice (only if an addition left it at zero) is read as zero
  // the second time and skipped.
  if (track) {
    TopK top(&scratch.heap, keep);
    for (size_t i = 0; i < num_touched; ++i) {
      const uint32_t d = touched[i];
      top.offer(d, acc[d]);
      acc[d] = 0.0f;
    }
    return top.sorted();
  }
  return select_top_k(acc, num_docs, keep, scratch);
}

// The `k`-th largest of `values` (1 <= k <= values.size()); reorders them.
float kth_largest(std::vector<float>& values, size_t k) {
  std::nth_element(values.begin(), values.begin() + std::ptrdiff_t(k - 1), values.end(),
                   std::greater<float>());
  return values[k - 1];
}

// The first position in doc[from, end) holding a document >= target
// (`end` if none), found in doubling steps from `from`: candidates are few
// and far apart in a long list.
size_t gallop(const uint32_t* doc, size_t from, size_t end, uint32_t target) {
  size_t low = from, high = from, step = 1;
  while (high < end && doc[high] < target) {
    low = high + 1;
    high += step;
    step *= 2;
  }
  return size_t(std::lower_bound(doc + low, doc + std::min(high, end), target) - doc);
}

// Max-score search (Turtle & Flood 1995), term at a time. Terms come in
// decreasing order of their upper bound (query weight times the largest
// posting weight). Once the bounds of the terms not yet walked add up to
// less than the k-th best partial similarity, no document they alone
// contain can enter the top k: their long lists (common terms, low bounds)
// are only looked up for the documents already accumulated that can still
// reach it.
//
// Each document's similarity is added up in the same order as in
// exhaustive_top_k, so it is the same float. Partial sums of non-negative
// terms never decrease, so the k-th best partial sum is a lower bound of the
// k-th similarity; upper bounds are widened by the float rounding a sum of
// the terms can add, so pruning never drops a document that could tie.
std::vector<Neighbour> max_score_top_k(const PostingsView& postings,
                                       const std::vector<QueryTerm>& terms, size_t keep,
                                       Scratch& scratch, KnnSearchStats* stats) {
  const uint32_t num_docs = postings.num_docs;
  const size_t num_terms = terms.size();
  // remaining[i]: the sum of the bounds of terms i, i + 1, ...
  std::vector<double>& remaining = scratch.remaining_bound;
  remaining.assign(num_terms + 1, 0.0);
  for (size_t i = num_terms; i-- > 0;) remaining[i] = remaining[i + 1] + terms[i].bound;
  // Each float product and each addition rounds by at most 2^-24 relative;
  // twice that per term is a safe margin.
  const double slack = 1.0 + double(num_terms + 2) * std::ldexp(1.0, -23);
  // The least float above every similarity the terms from i on can add up
  // to for a document none of the earlier terms contain.
  const auto new_document_limit = [&](size_t i) {
    const float limit = static_cast<float>(remaining[i] * slack);
    return double(limit) >= remaining[i] * slack
               ? limit
               : std::nextafter(limit, std::numeric_limits<float>::infinity());
  };

  // A float at or below every partial similarity s with (s + rest) * slack
  // >= threshold, and above zero: the documents at or above it may still
  // reach the threshold.
  const auto candidate_cutoff = [&](float threshold, double rest) {
    const double exact = double(threshold) / slack - rest;
    float cutoff = static_cast<float>(exact);
    if (double(cutoff) > exact) cutoff = std::nextafter(cutoff, 0.0f);
    return std::max(cutoff, std::numeric_limits<float>::denorm_min());
  };

  // Everything is allocated before the accumulator is written, so that
  // nothing can throw while it holds non-zero entries.
  std::vector<float>& selection = scratch.selection;
  std::vector<Candidate>& candidates = scratch.candidates;
  selection.reserve(size_t(num_docs) + 1);
  candidates.reserve(num_docs);
  reserve_selection(num_docs, scratch);

  // remaining_postings[i]: the postings of terms i, i + 1, ...
  std::vector<uint64_t>& remaining_postings = scratch.remaining_postings;
  remaining_postings.assign(num_terms + 1, 0);
  for (size_t i = num_terms; i-- > 0;) {
    remaining_postings[i] = remaining_postings[i + 1] + postings.start[terms[i].term + 1] -
                            postings.start[terms[i].term];
  }

  float* const acc = scratch.accumulator.data();
  // The k-th best partial similarity once known: a lower bound of the k-th
  // similarity.
  float threshold = 0.0f;
  // The next check waits for the bounds left to fall below this.
  double check_below = std::numeric_limits<double>::infinity();
  // Each check costs passes over the accumulator.
  constexpr int kMaxChecks = 3;
  int num_checks = 0;
  size_t first_skipped = num_terms;
  for (size_t i = 0; i < num_terms; ++i) {
    const QueryTerm& term = terms[i];
    const uint64_t begin = postings.start[term.term];
    const size_t n = size_t(postings.start[term.term + 1] - begin);
    // Before a long list: are there k documents that no document first met
    // from here on can beat, and do the candidates' look-ups (about
    // kLookupCost postings each) cost less than the postings left? A check
    // costs passes over the accumulator: at most kMaxChecks that find k
    // documents, each once the bounds have dropped by a fifth since the
    // last; after one that finds fewer, not before they have halved (at a
    // million documents, such checks cost more than the postings
    // max-score skipped).
    constexpr uint64_t kLookupCost = 16;
    if (i > 0 && n * 16 >= num_docs && remaining[i] < check_below && num_checks < kMaxChecks &&
        remaining_postings[i] >= kLookupCost * keep * (num_terms - i)) {
      const float limit = new_document_limit(i);
      const uint32_t above = count_above(acc, num_docs, limit, /*inclusive=*/false);
      if (above < keep) {
        check_below = 0.5 * remaining[i];
      } else {
        ++num_checks;
        check_below = 0.8 * remaining[i];
        selection.clear();  // reserved for every document
        for_each_above(acc, num_docs, limit, /*inclusive=*/false,
                       [&](uint32_t d) { selection.push_back(acc[d]); });
        threshold = kth_largest(selection, keep);
        const float cutoff = candidate_cutoff(threshold, remaining[i]);
        const uint32_t num_candidates = count_above(acc, num_docs, cutoff, /*inclusive=*/true);
        if (kLookupCost * num_candidates * (num_terms - i) < remaining_postings[i]) {
          first_skipped = i;
          break;
        }
      }
    }
    if (stats != nullptr) {
      ++stats->terms_walked;
      stats->postings_walked += n;
    }
    if (scratch.columns[i] != nullptr) {
      accumulate_dense(acc, scratch.columns[i], num_docs, static_cast<float>(term.weight));
    } else {
      accumulate(acc, postings.doc + begin, postings.weight + begin, n,
                 static_cast<float>(term.weight));
    }
  }

  if (first_skipped == num_terms) return select_top_k(acc, num_docs, keep, scratch);

  // The documents that the terms left can still lift to the threshold, in
  // document order.
  candidates.clear();
  const float cutoff = candidate_cutoff(threshold, remaining[first_skipped]);
  for_each_above(acc, num_docs, cutoff, /*inclusive=*/true, [&](uint32_t d) {
    candidates.push_back({d, acc[d]});
  });
  std::fill(acc, acc + num_docs, 0.0f);
  if (stats != nullptr) stats->candidates = uint32_t(candidates.size());

  for (size_t i = first_skipped; i < num_terms; ++i) {
    const QueryTerm& term = terms[i];
    const uint64_t begin = postings.start[term.term];
    const size_t n = size_t(postings.start[term.term + 1] - begin);
    const uint32_t* const doc = postings.doc + begin;
    const float* const weight = postings.weight + begin;
    const float q = static_cast<float>(term.weight);
    const size_t num_candidates = candidates.size();
    if (const float* column = scratch.columns[i]) {
      // Documents without the term add exactly zero.
      for (Candidate& candidate : candidates) candidate.similarity += q * column[candidate.doc];
    } else if (n < num_candidates) {
      // A short list: find each of its documents among the candidates.
      size_t position = 0;
      for (size_t j = 0; j < n && position < num_candidates; ++j) {
        size_t low = position, high = position, step = 1;
        while (high < num_candidates && candidates[high].doc < doc[j]) {
          low = high + 1;
          high += step;
          step *= 2;
        }
        position = size_t(
            std::lower_bound(candidates.begin() + std::ptrdiff_t(low),
                             candidates.begin() + std::ptrdiff_t(std::min(high, num_candidates)),
                             doc[j], [](const Candidate& c, uint32_t d) { return c.doc < d; }) -
            candidates.begin());
        if (position < num_candidates && candidates[position].doc == doc[j]) {
          candidates[position].similarity += q * weight[j];
        }
      }
      continue;
    } else {
      size_t position = 0;
      const bool sparse = num_candidates * 8 < n;
      for (Candidate& candidate : candidates) {
        if (sparse) {
          position = gallop(doc, position, n, candidate.doc);
        } else {
          while (position < n && doc[position] < candidate.doc) ++position;
        }
        if (position == n) break;
        if (doc[position] == candidate.doc) candidate.similarity += q * weight[position];
      }
    }
    // Drop the candidates that the terms left can no longer lift to the
    // (raised) threshold (after long lists only: it costs a pass).
    if (candidates.size() > keep && i + 1 < num_terms) {
      selection.resize(candidates.size());
      for (size_t j = 0; j < candidates.size(); ++j) selection[j] = candidates[j].similarity;
      threshold = std::max(threshold, kth_largest(selection, keep));
      const double rest = remaining[i + 1];
      candidates.erase(std::remove_if(candidates.begin(), candidates.end(),
                                      [&](const Candidate& c) {
                                        return (double(c.similarity) + rest) * slack < threshold;
                                      }),
                       candidates.end());
    }
  }
  TopK top(&scratch.heap, keep);
  for (const Candidate& candidate : candidates) top.offer(candidate.doc, candidate.similarity);
  return top.sorted();
}

// Two-step search. First stage: the heaviest query terms (by query
// weight; all of them unless params.first_stage_terms) walked over their
// pruned lists (each term's highest-weight postings) give every document
// met a partial score; the best `wanted` of those are the candidates.
// Second stage: each candidate's exact similarity from its forward-index
// entry, its matched terms' products added in the order of `terms` (the
// order every exact search adds them in, so the float is the same), and the
// top `keep` of those. *damaged: a document or term number out of range
// was met (a damaged mapped file). *walk_instead (nothing searched): the
// exact walk would read no more postings.
std::vector<Neighbour> two_step_top_k(const KnnIndex& index, const std::vector<QueryTerm>& terms,
                                      size_t keep, const KnnTwoStepParams& params,
                                      uint64_t total_postings, Scratch& scratch,
                                      KnnSearchStats* stats, bool* damaged, bool* walk_instead) {
  const uint32_t num_docs = index.num_docs();
  std::vector<uint32_t>& first_stage = scratch.first_stage;
  first_stage.resize(terms.size());
  for (uint32_t i = 0; i < terms.size(); ++i) first_stage[i] = i;
  if (params.first_stage_terms > 0 && terms.size() > params.first_stage_terms) {
    std::nth_element(first_stage.begin(), first_stage.begin() + params.first_stage_terms,
                     first_stage.end(), [&](uint32_t a, uint32_t b) {
                       return terms[a].weight > terms[b].weight ||
                              (terms[a].weight == terms[b].weight && terms[a].term < terms[b].term);
                     });
    first_stage.resize(params.first_stage_terms);
  }
  uint64_t first_postings = 0;
  for (uint32_t i : first_stage) first_postings += index.first_stage_list(terms[i].term).size();
  // Where the first stage and the rescoring (about a document's length per
  // candidate) would cost as much as the exact walk, it runs instead: small
  // collections, or k near the collection's size. The exact walk adds its
  // postings in order or as dense columns; a first-stage posting is a
  // scattered addition plus its share of gathering and selecting the
  // documents met, a rescored entry a random read and a lookup: about
  // kFirstStageCost and kRescoreCost times an exact posting (measured on 20
  // Newsgroups and on a million documents, BENCHMARKS.md "kNN in two steps").
  const size_t wanted =
      std::max<size_t>(keep * params.candidates_per_k, size_t(params.min_candidates));
  const uint64_t rescore_entries = uint64_t(std::min<size_t>(wanted, num_docs)) *
                                   (index.num_postings() / std::max<uint32_t>(num_docs, 1));
  if (!params.always &&
      kFirstStageCost * first_postings + kRescoreCost * rescore_entries >= total_postings) {
    *walk_instead = true;
    return {};
  }

  // Everything is allocated before the accumulator is written.
  std::vector<uint32_t>& touched = scratch.touched;
  if (touched.size() < first_postings) touched.resize(first_postings);
  std::vector<Candidate>& candidates = scratch.candidates;
  candidates.clear();
  candidates.reserve(std::min<uint64_t>(first_postings, num_docs));
  std::vector<float>& products = scratch.products;
  products.resize(2 * terms.size());  // products, then the query weights as floats
  float* const acc = scratch.accumulator.data();
  size_t num_touched = 0;
  for (uint32_t i : first_stage) {
    const float q = static_cast<float>(terms[i].weight);
    const KnnIndex::FirstStageList list = index.first_stage_list(terms[i].term);
    if (list.pruned != nullptr) {
      for (size_t j = 0; j < list.size(); ++j) {
        uint32_t d = list.pruned[j].doc;
        if (d >= num_docs) {
          *damaged = true;
          d = 0;
        }
        touched[num_touched] = d;
        num_touched += acc[d] == 0.0f;
        acc[d] += q * list.pruned[j].weight;
      }
    } else {
      const uint32_t* doc = list.whole.doc;
      const float* weight = list.whole.weight;
      for (size_t j = 0; j < list.size(); ++j) {
        const uint32_t d = doc[j];  // checked by verify_term
        touched[num_touched] = d;
        num_touched += acc[d] == 0.0f;
        acc[d] += q * weight[j];
      }
    }
  }
  candidates.resize(num_touched);
  Candidate* const met = candidates.data();
  size_t num_met = 0;
  for (size_t i = 0; i < num_touched; ++i) {
    const uint32_t d = touched[i];
    met[num_met] = {d, acc[d]};
    num_met += acc[d] > 0.0f;
    acc[d] = 0.0f;
  }
  candidates.resize(num_met);
  if (stats != nullptr) {
    stats->terms_walked = uint32_t(first_stage.size());
    stats->postings_walked = first_postings;
    stats->candidates = uint32_t(candidates.size());
  }
  if (candidates.size() > wanted) {
    std::nth_element(candidates.begin(), candidates.begin() + std::ptrdiff_t(wanted),
                     candidates.end(), [](const Candidate& a, const Candidate& b) {
                       return a.similarity > b.similarity ||
                              (a.similarity == b.similarity && a.doc < b.doc);
                     });
    candidates.resize(wanted);
  }
  if (stats != nullptr) stats->rescored = uint32_t(candidates.size());
  // In document order the forward index is read forward (the top k breaks
  // ties by document, so the order changes nothing else).
  std::sort(candidates.begin(), candidates.end(),
            [](const Candidate& a, const Candidate& b) { return a.doc < b.doc; });

  // Second stage: each of the candidate's terms looked up among the
  // query's (a bitmap of hashed query terms rejects almost every other term
  // in one test, an open-addressing table finds the rest), each product put
  // at its term's rank, and the products added in rank order (adding the
  // zeros of unmatched ranks changes no bit).
  TopK top(&scratch.heap, keep);
  uint32_t slots = 16;
  while (slots < 4 * terms.size()) slots *= 2;
  std::vector<Scratch::RankedTerm>& table = scratch.by_term;
  table.assign(slots, {UINT32_MAX, 0});
  std::vector<uint64_t>& bitmap = scratch.bitmap;
  bitmap.assign(kQueryBitmapWords, 0);
  const uint32_t slot_mask = slots - 1;
  for (uint32_t r = 0; r < terms.size(); ++r) {
    const uint32_t h = term_hash(terms[r].term);
    bitmap[h >> 22] |= uint64_t{1} << ((h >> 16) & 63);
    uint32_t slot = (h >> 7) & slot_mask;
    while (table[slot].term != UINT32_MAX) slot = (slot + 1) & slot_mask;
    table[slot] = {terms[r].term, r};
  }
  // Plain pointers: the loops below then keep them in registers.
  const Scratch::RankedTerm* const slot_of = table.data();
  const uint64_t* const bits = bitmap.data();
  float* const product = products.data();
  float* const query_weight = product + terms.size();
  for (size_t r = 0; r < terms.size(); ++r) query_weight[r] = static_cast<float>(terms[r].weight);
  // The matched ranks as bits, walked in increasing order to add the
  // products: the exact walk's order, skipping the terms the candidate
  // lacks as the exact walk does.
  std::vector<uint64_t>& rank_bits = scratch.rank_bits;
  rank_bits.assign(terms.size() / 64 + 1, 0);
  uint64_t* const matched_rank = rank_bits.data();
  for (size_t c = 0; c < candidates.size(); ++c) {
    if (c + kRescoreAhead < candidates.size()) {
      // Each candidate's entries are a random read from the forward index:
      // a few candidates ahead, every cache line of one is requested.
      const KnnIndex::ForwardRange ahead = index.forward(candidates[c + kRescoreAhead].doc);
      for (const KnnForwardEntry* line = ahead.first; line < ahead.last; line += 8) {
        __builtin_prefetch(line);
      }
    }
    const Candidate& candidate = candidates[c];
    const KnnIndex::ForwardRange doc = index.forward(candidate.doc);
    uint32_t low = UINT32_MAX, high = 0;
    for (const KnnForwardEntry* entry = doc.begin(); entry != doc.end(); ++entry) {
      const uint32_t h = term_hash(entry->term);
      if (((bits[h >> 22] >> ((h >> 16) & 63)) & 1) == 0) continue;
      uint32_t slot = (h >> 7) & slot_mask;
      while (slot_of[slot].term != entry->term && slot_of[slot].term != UINT32_MAX) {
        slot = (slot + 1) & slot_mask;
      }
      if (slot_of[slot].term == UINT32_MAX) continue;
      const uint32_t r = slot_of[slot].rank;
      product[r] = query_weight[r] * entry->weight;
      matched_rank[r >> 6] |= uint64_t{1} << (r & 63);
      low = std::min(low, r);
      high = std::max(high, r);
    }
    float similarity = 0.0f;
    if (low <= high) {
      for (uint32_t w = low >> 6; w <= high >> 6; ++w) {
        for (uint64_t bits_left = matched_rank[w]; bits_left != 0; bits_left &= bits_left - 1) {
          similarity += product[w * 64 + uint32_t(__builtin_ctzll(bits_left))];
        }
        matched_rank[w] = 0;
      }
    }
    top.offer(candidate.doc, similarity);
  }
  return top.sorted();
}

}  // namespace

std::vector<KnnIndex::Neighbour> KnnIndex::neighbours(const DocumentTerms& query, int k,
                                                      int max_query_terms, double max_df_ratio,
                                                      KnnSearch search, KnnSearchStats* stats,
                                                      const KnnTwoStepParams& two_step) const {
  if (stats != nullptr) *stats = KnnSearchStats();
  if (k <= 0 || num_docs_ == 0) return {};
  check_file_unchanged();
  Scratch& scratch = thread_scratch();

  // Query weights, normalized over every known term with idf > 0 (also in
  // approximate mode, so that similarities stay comparable cosines).
  std::vector<QueryTerm>& terms = scratch.query;
  terms.clear();
  double norm2 = 0.0;
  for (const TermCount& tc : query.terms) {
    if (tc.term >= idf_.size() || tc.count == 0) continue;
    const float idf = idf_[tc.term];
    if (!(idf > 0.0f)) continue;
    const double w = knn_tf(tc.count, tf_) * idf;
    norm2 += w * w;
    terms.push_back({tc.term, w, 0.0});
  }
  if (terms.empty()) return {};
  const double inverse_norm = 1.0 / std::sqrt(norm2);
  for (QueryTerm& term : terms) term.weight *= inverse_norm;

  // Approximate mode: drop very common terms first, then keep the heaviest.
  if (max_df_ratio < 1.0) {
    const double max_df = max_df_ratio * num_docs_;
    terms.erase(std::remove_if(terms.begin(), terms.end(),
                               [&](const QueryTerm& term) { return df_[term.term] > max_df; }),
                terms.end());
  }
  if (max_query_terms > 0 && terms.size() > size_t(max_query_terms)) {
    auto heavier = [](const QueryTerm& a, const QueryTerm& b) {
      return a.weight > b.weight || (a.weight == b.weight && a.term < b.term);
    };
    std::nth_element(terms.begin(), terms.begin() + max_query_terms, terms.end(), heavier);
    terms.resize(size_t(max_query_terms));
  }

  // One accumulation order for both searches: decreasing upper bound, then
  // term id. (The bound is exact in double: a product of two floats.)
  uint64_t total_postings = 0;
  for (QueryTerm& term : terms) {
    if (term_verified_ != nullptr) verify_term(term.term);
    term.bound = double(static_cast<float>(term.weight)) * double(max_weight_[term.term]);
    total_postings += postings_start_[term.term + 1] - postings_start_[term.term];
  }
  if (total_postings == 0) return {};
  if (stats != nullptr) stats->query_terms = uint32_t(terms.size());
  std::sort(terms.begin(), terms.end(), [](const QueryTerm& a, const QueryTerm& b) {
    return a.bound > b.bound || (a.bound == b.bound && a.term < b.term);
  });

  // Allocate the accumulator before touching it, so that nothing can throw
  // while it holds non-zero entries (the searches allocate before writing).
  if (scratch.accumulator.size() < num_docs_) scratch.accumulator.resize(num_docs_, 0.0f);
  const size_t keep = std::min<size_t>(size_t(k), num_docs_);
  if (search == KnnSearch::kTwoStep && has_two_step()) {
    bool damaged = false, walk_instead = false;
    std::vector<Neighbour> found = two_step_top_k(*this, terms, keep, two_step, total_postings,
                                                  scratch, stats, &damaged, &walk_instead);
    if (damaged) refuse_damaged();
    if (!walk_instead) {
      check_file_unchanged();
      return found;
    }
  }
  const PostingsView postings{postings_start_, posting_doc_, posting_weight_, num_docs_};
  // Walks shorter than half the corpus are cheap either way, and the
  // max-score search works on a dense accumulator.
  std::vector<const float*>& columns = scratch.columns;
  columns.assign(terms.size(), nullptr);
  if (search != KnnSearch::kPostingWalk && total_postings >= num_docs_ / 2) {
    for (size_t i = 0; i < terms.size(); ++i) columns[i] = dense_column(terms[i].term);
    if (stats != nullptr) {
      stats->dense_terms =
          uint32_t(terms.size() - std::count(columns.begin(), columns.end(), nullptr));
    }
  }
  std::vector<Neighbour> found =
      search == KnnSearch::kMaxScore && postings_sorted_ && total_postings >= num_docs_ / 2
          ? max_score_top_k(postings, terms, keep, scratch, stats)
          : exhaustive_top_k(postings, terms, total_postings, keep, scratch, stats);
  check_file_unchanged();  // the search read no page past a truncated end
  return found;
}

}  // namespace autocat::internal
