#include "classify/corpus/folds.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <unordered_map>

#include "autocat/error.h"

namespace autocat::internal {
namespace {

// A uniform draw from [0, bound) by rejection: std::uniform_int_distribution
// is implementation-defined, and folds must not change with the library.
uint32_t uniform_below(std::mt19937& generator, uint32_t bound) {
  constexpr uint64_t kRange = uint64_t{1} << 32;   // mt19937 draws 32-bit values
  const uint64_t limit = kRange - kRange % bound;  // a multiple of bound
  for (;;) {
    const uint64_t draw = generator();
    if (draw < limit) return static_cast<uint32_t>(draw % bound);
  }
}

void fisher_yates(std::vector<uint32_t>* items, std::mt19937& generator) {
  for (size_t i = items->size(); i > 1; --i) {
    const uint32_t j = uniform_below(generator, static_cast<uint32_t>(i));
    std::swap((*items)[i - 1], (*items)[j]);
  }
}

// Group c holds the documents whose rarest label is c (the one with the
// fewest documents by `counts`; ties go to the first category); the last
// group the unlabelled documents. Each group in document order.
std::vector<std::vector<uint32_t>> rarest_label_groups(const TrainingCorpus& corpus,
                                                       const std::vector<uint32_t>& counts) {
  std::vector<std::vector<uint32_t>> groups(corpus.num_categories() + 1);
  for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
    uint32_t group = corpus.num_categories();
    for (uint32_t label : corpus.doc_categories[d]) {
      if (group == corpus.num_categories() || counts[label] < counts[group] ||
          (counts[label] == counts[group] && label < group)) {
        group = label;
      }
    }
    groups[group].push_back(d);
  }
  return groups;
}

}  // namespace

std::vector<uint32_t> stratified_folds(const TrainingCorpus& corpus, uint32_t folds,
                                       uint32_t seed) {
  return stratified_folds(corpus, folds, seed, copy_groups(corpus));
}

std::vector<uint32_t> stratified_folds(const TrainingCorpus& corpus, uint32_t folds, uint32_t seed,
                                       const std::vector<uint32_t>& copy_of) {
  if (folds < 2) {
    throw InvalidArgumentError("cross-validation needs at least 2 folds, got " +
                               std::to_string(folds));
  }
  const std::vector<uint32_t> counts = corpus.category_doc_counts();
  for (uint32_t c = 0; c < corpus.num_categories(); ++c) {
    if (counts[c] < folds) {
      throw InvalidArgumentError(std::to_string(folds) + " folds need at least " +
                                 std::to_string(folds) +
                                 " documents in every category; category '" + corpus.categories[c] +
                                 "' has " + std::to_string(counts[c]) + " (use fewer folds)");
    }
  }
  std::vector<std::vector<uint32_t>> groups = rarest_label_groups(corpus, counts);
  std::mt19937 generator(seed);
  std::vector<uint32_t> fold_of(corpus.num_docs(), 0);
  uint64_t dealt = 0;
  for (std::vector<uint32_t>& group : groups) {
    fisher_yates(&group, generator);
    for (uint32_t d : group) fold_of[d] = static_cast<uint32_t>(dealt++ % folds);
  }
  // Each copy joins the fold of its group's first document dealt.
  std::vector<int64_t> group_fold(corpus.num_docs(), -1);
  for (const std::vector<uint32_t>& group : groups) {
    for (uint32_t d : group) {
      int64_t& fold = group_fold[copy_of[d]];
      if (fold < 0) fold = fold_of[d];
      fold_of[d] = static_cast<uint32_t>(fold);
    }
  }
  return fold_of;
}

std::vector<uint32_t> copy_groups(const TrainingCorpus& corpus) {
  const uint32_t num_docs = corpus.num_docs();
  // Built term by term from the postings, so each document's hash covers
  // its (term, count) pairs in term order.
  std::vector<uint64_t> hash(num_docs, 0x9e3779b97f4a7c15ULL);
  std::vector<uint8_t> has_terms(num_docs, 0);
  const auto mix = [](uint64_t h, uint64_t value) {
    h ^= value + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdULL;
    return h ^ (h >> 33);
  };
  for (TermId t = 0; t < corpus.num_terms(); ++t) {
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      const uint32_t d = corpus.posting_doc[p];
      hash[d] = mix(hash[d], (uint64_t{t} << 32) | corpus.posting_wdf[p]);
      has_terms[d] = 1;
    }
  }
  std::vector<uint32_t> original(num_docs);
  std::unordered_map<uint64_t, uint32_t> first_with_hash;
  for (uint32_t d = 0; d < num_docs; ++d) {
    original[d] = has_terms[d] ? first_with_hash.emplace(hash[d], d).first->second : d;
  }
  return original;
}

uint32_t count_copies(const std::vector<uint32_t>& copy_of) {
  uint32_t copies = 0;
  for (uint32_t d = 0; d < copy_of.size(); ++d) copies += copy_of[d] != d;
  return copies;
}

std::vector<uint8_t> tuning_sample(const TrainingCorpus& corpus, uint32_t max_docs, uint32_t seed) {
  std::vector<uint8_t> keep(corpus.num_docs(), 0);
  const double share =
      corpus.num_docs() == 0 ? 1.0 : std::min(1.0, double(max_docs) / corpus.num_docs());
  std::vector<std::vector<uint32_t>> groups =
      rarest_label_groups(corpus, corpus.category_doc_counts());
  std::mt19937 generator(seed);
  for (std::vector<uint32_t>& group : groups) {
    fisher_yates(&group, generator);
    const size_t take = std::min(
        group.size(), std::max<size_t>(static_cast<size_t>(std::ceil(share * group.size())),
                                       kMinTuningSampleGroup));
    for (size_t i = 0; i < take; ++i) keep[group[i]] = 1;
  }
  return keep;
}

FoldCorpus fold_corpus(const TrainingCorpus& corpus, const std::vector<uint8_t>& keep) {
  FoldCorpus fold;
  TrainingCorpus& out = fold.corpus;
  out.categories = corpus.categories;
  constexpr uint32_t kDropped = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> renumber(corpus.num_docs(), kDropped);
  for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
    if (!keep[d]) continue;
    renumber[d] = out.num_docs();
    out.doc_length.push_back(corpus.doc_length[d]);
    out.doc_categories.push_back(corpus.doc_categories[d]);
  }
  fold.fold_term.assign(corpus.num_terms(), -1);
  out.postings_start.push_back(0);
  for (TermId t = 0; t < corpus.num_terms(); ++t) {
    const size_t first = out.posting_doc.size();
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      const uint32_t d = renumber[corpus.posting_doc[p]];
      if (d == kDropped) continue;
      out.posting_doc.push_back(d);
      out.posting_wdf.push_back(corpus.posting_wdf[p]);
    }
    const size_t df = out.posting_doc.size() - first;
    if (df == 0) continue;  // no training document of the fold has it
    fold.fold_term[t] = static_cast<int64_t>(out.terms.size());
    out.terms.push_back(corpus.terms[t]);
    out.df.push_back(static_cast<uint32_t>(df));
    out.postings_start.push_back(out.posting_doc.size());
  }
  return fold;
}

DocumentTerms fold_document(const DocumentTerms& doc, const std::vector<int64_t>& fold_term) {
  DocumentTerms mapped;
  mapped.total_tokens = doc.total_tokens;
  for (const TermCount& term : doc.terms) {
    const int64_t id = fold_term[term.term];
    if (id < 0) continue;
    // Renumbering keeps the term order, so the list stays sorted by id.
    mapped.terms.push_back(TermCount{static_cast<TermId>(id), term.count});
    mapped.known_tokens += term.count;
  }
  return mapped;
}

std::vector<uint32_t> round_robin_folds(uint32_t num_docs, uint32_t folds) {
  std::vector<uint32_t> fold(num_docs);
  for (uint32_t d = 0; d < num_docs; ++d) fold[d] = d % folds;
  return fold;
}

MeanStd mean_and_std(const std::vector<double>& values) {
  MeanStd result;
  if (values.empty()) return result;
  double sum = 0;
  for (double value : values) sum += value;
  result.mean = sum / static_cast<double>(values.size());
  if (values.size() < 2) return result;
  double squares = 0;
  for (double value : values) squares += (value - result.mean) * (value - result.mean);
  result.std = std::sqrt(squares / static_cast<double>(values.size() - 1));
  return result;
}

}  // namespace autocat::internal
