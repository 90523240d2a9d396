// Estimating the model files' size before they are written.
#include "classify/train/model_size.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "autocat/error.h"
#include "classify/methods/knn_index.h"
#include "classify/methods/knn_index_file.h"

namespace autocat::internal {

ModelSizeEstimate estimate_model_size(const TrainingCorpus& corpus, uint32_t prune_length) {
  const uint64_t terms = corpus.num_terms();
  const uint64_t cats = corpus.num_categories();
  const uint64_t postings = corpus.posting_doc.size();
  uint64_t term_bytes = 0;
  for (const std::string& term : corpus.terms) term_bytes += term.size();
  // Distinct (term, category) pairs: the weights that differ from their
  // row's or column's default in Naive Bayes, and Rocchio's centroid entries.
  uint64_t pairs = 0;
  uint64_t doc_categories = 0;
  for (const auto& labels : corpus.doc_categories) doc_categories += labels.size();
  std::vector<uint32_t> seen(cats, ~uint32_t{0});
  for (uint64_t t = 0; t < terms; ++t) {
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      for (uint32_t c : corpus.doc_categories[corpus.posting_doc[p]]) {
        if (seen[c] != t) seen[c] = static_cast<uint32_t>(t), ++pairs;
      }
    }
  }
  ModelSizeEstimate estimate;
  // Core: each term's string (length + bytes) and df, kNN's term weights
  // (one float each) when tuned to use them, and per method and category
  // its threshold, calibration and the like.
  const uint64_t core = term_bytes + terms * (8 + 4 + 4) + 8 * 1024 + cats * 8 * 64;
  const uint64_t rocchio = terms * 8 + pairs * 8;
  const uint64_t nb = terms * 5 + pairs * 8;    // row counts, zero rows, exceptions
  const uint64_t cnb = terms * 13 + pairs * 8;  // and each row's log sum
  const uint64_t linear = terms * (2 + 4 * cats);
  estimate.model_file = core + rocchio + 2 * nb + cnb + 2 * linear;

  KnnFileHeader header{};
  header.num_docs = corpus.num_docs();
  header.num_terms = static_cast<uint32_t>(terms);
  header.num_postings = postings;
  header.num_doc_categories = doc_categories;
  estimate.knn_index = KnnFileLayout(header).end;
  if (prune_length > 0) {
    KnnTwoStepHeader two_step{};
    for (uint32_t df : corpus.df) two_step.num_pruned += std::min(df, prune_length);
    estimate.knn_index = KnnTwoStepLayout(estimate.knn_index, header, two_step).end;
  }
  // The spill files of the linear fits: the postings, each category's
  // dense weights, the term strings.
  estimate.scratch = postings * 8 + terms * cats * 4 + term_bytes;
  return estimate;
}

std::string format_bytes(uint64_t bytes) {
  char text[32];
  const double b = static_cast<double>(bytes);
  if (b >= 1e9) {
    std::snprintf(text, sizeof text, "%.1f GB", b / 1e9);
  } else if (b >= 1e6) {
    std::snprintf(text, sizeof text, "%.0f MB", b / 1e6);
  } else {
    std::snprintf(text, sizeof text, "%.0f kB", b / 1e3);
  }
  return text;
}

void check_free_space(const std::string& dir, const ModelSizeEstimate& estimate) {
  struct statvfs info {};
  if (::statvfs(dir.c_str(), &info) != 0) return;
  const uint64_t free_bytes = uint64_t(info.f_bavail) * info.f_frsize;
  const uint64_t needed = estimate.total() + estimate.scratch;
  if (free_bytes < needed) {
    throw IOError(dir + ": not enough free space for the model: it needs about " +
                  format_bytes(needed) + " (model files " + format_bytes(estimate.total()) +
                  ", scratch " + format_bytes(estimate.scratch) + "), the filesystem has " +
                  format_bytes(free_bytes) + "; free some space or train into another directory");
  }
}

}  // namespace autocat::internal
