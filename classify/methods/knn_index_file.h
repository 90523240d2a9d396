// The kNN index file (kKnnIndexFileName) `train` writes beside the model:
// KnnIndex's arrays as they lie in memory, so that loading a model maps
// them (KnnIndex::open) instead of rebuilding them from the training
// database. KnnIndex::write and write_knn_index write it; a model without
// one still loads (kNN then builds its index at every load).
//
// Thread safety: a file is written to a temporary name and installed by
// rename, so readers never see a partial one; once open, KnnIndex reads it
// from many threads (see knn_index.h) and it must not change while mapped.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "classify/corpus/training_collection.h"
#include "classify/corpus/weighting.h"

namespace autocat::internal {

// The kNN index file: a fixed header, then the arrays as they lie in memory
// (native byte order, which the header records), each starting at a
// multiple of 8 bytes.
inline constexpr char kKnnIndexMagic[8] = {'A', 'C', 'K', 'N', 'N', 'I', 'X', '\0'};
// Version 2 adds the two-step section (KnnTwoStepHeader and its arrays)
// after version 1's arrays; version 1 files still open (the two-step
// search then walks exactly).
inline constexpr uint32_t kKnnIndexVersion = 2;
inline constexpr uint32_t kKnnIndexVersionWithoutTwoStep = 1;
inline constexpr uint32_t kKnnIndexByteOrderMark = 0x01020304;

struct KnnFileHeader {
  char magic[8];
  uint32_t version;
  uint32_t byte_order;
  uint32_t num_docs;
  uint32_t num_categories;
  uint32_t num_terms;
  uint32_t postings_sorted;
  uint64_t num_postings;
  uint64_t num_doc_categories;
  uint32_t header_crc;  // CRC-32 of the bytes before it
  uint32_t reserved;
};
static_assert(sizeof(KnnFileHeader) == 56, "the file layout depends on it");

// The two-step section's header, at KnnFileLayout::end of a version 2 file.
inline constexpr char kKnnTwoStepMagic[8] = {'A', 'C', 'K', 'N', 'N', '2', 'S', '\0'};
struct KnnTwoStepHeader {
  char magic[8];
  uint32_t prune_length;  // postings kept per pruned list
  uint32_t reserved;
  uint64_t num_pruned;  // entries of the pruned lists
  uint32_t header_crc;  // CRC-32 of the bytes before it
  uint32_t reserved2;
};
static_assert(sizeof(KnnTwoStepHeader) == 32, "the file layout depends on it");

// Where the two-step arrays start, after the section header at `begin`:
// per document its forward range (uint64, num_docs + 1) and the forward
// entries (KnnForwardEntry, one per posting), per term its pruned range
// (uint64, num_terms + 1) and the pruned entries (KnnPrunedEntry).
struct KnnTwoStepLayout {
  uint64_t forward_start, forward, pruned_start, pruned, end;
  KnnTwoStepLayout(uint64_t begin, const KnnFileHeader& h, const KnnTwoStepHeader& s) {
    forward_start = begin + sizeof(KnnTwoStepHeader);
    forward = forward_start + (uint64_t{h.num_docs} + 1) * sizeof(uint64_t);
    pruned_start = forward + h.num_postings * 8;
    pruned = pruned_start + (uint64_t{h.num_terms} + 1) * sizeof(uint64_t);
    end = pruned + s.num_pruned * 8;
  }
};

// Where each array starts in the file, from the header's counts.
struct KnnFileLayout {
  uint64_t idf, df, max_weight, postings_start, posting_doc, posting_weight, doc_category_start,
      doc_category, end;

  explicit KnnFileLayout(const KnnFileHeader& h) {
    const uint64_t terms = h.num_terms;
    idf = sizeof(KnnFileHeader);
    df = idf + padded(terms * sizeof(float));
    max_weight = df + padded(terms * sizeof(uint32_t));
    postings_start = max_weight + padded(terms * sizeof(float));
    posting_doc = postings_start + (terms + 1) * sizeof(uint64_t);
    posting_weight = posting_doc + padded(h.num_postings * sizeof(uint32_t));
    doc_category_start = posting_weight + padded(h.num_postings * sizeof(float));
    doc_category = doc_category_start + padded((uint64_t{h.num_docs} + 1) * sizeof(uint32_t));
    end = doc_category + padded(h.num_doc_categories * sizeof(uint32_t));
  }

 private:
  static uint64_t padded(uint64_t bytes) { return (bytes + 7) & ~uint64_t{7}; }
};

// Writes the kNN index file of KnnIndex(corpus, idf, tf).write(path) (with
// build_two_step(prune_length) first unless prune_length is 0), byte for
// byte, without building the index in memory first: the postings are
// computed term by term as they are written, and the forward index in
// slices of documents, so training never holds them beside the corpus.
// The corpus's term strings are not read (it may have none: its terms are
// its postings_start's). Throws InvalidArgumentError (idf size) or IOError.
void write_knn_index(const TrainingCorpus& corpus, const std::vector<float>& idf, KnnTf tf,
                     const std::string& path, uint32_t prune_length = 0);

}  // namespace autocat::internal
