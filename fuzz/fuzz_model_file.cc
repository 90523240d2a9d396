// Fuzzes the model-file decoder past its CRC: the input is a format 1
// payload (or a whole format 1 model file, whose header is dropped), wrapped
// in a header with the right length and checksum, or a whole format 2 file
// whose section and table checksums are set right, as an attacker would. Every failure must be a
// ModelFormatError; a model that loads must be safe to classify with, by
// every method whose classifier the loader vouches for (kNN's postings come
// from the training database, not this file). An exception escaping here is
// a crash: the loader accepted what a classifier refuses.

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "autocat/error.h"
#include "classify/corpus/weighting.h"
#include "classify/methods/calibration.h"
#include "classify/methods/combo.h"
#include "classify/methods/linear.h"
#include "classify/methods/naive_bayes.h"
#include "classify/methods/rocchio.h"
#include "classify/model/model_io.h"
#include "classify/text/analyzer.h"

namespace {

using namespace autocat;
using namespace autocat::internal;

std::string with_valid_header(const std::string& payload) {
  return model_file_header(payload) + payload;
}

uint64_t get_le(const std::string& bytes, size_t at, int width) {
  uint64_t value = 0;
  for (int i = 0; i < width; ++i) {
    value |= uint64_t(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  }
  return value;
}

void put_le32(uint32_t value, size_t at, std::string* bytes) {
  for (int i = 0; i < 4; ++i) (*bytes)[at + i] = static_cast<char>(value >> (8 * i));
}

uint32_t crc32_of(const char* data, size_t size) {
  return static_cast<uint32_t>(
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data), static_cast<uInt>(size)));
}

// If `file` is a whole format 2 model file (magic, version 2), sets every
// section's CRC in its table and the table's CRC in the header, as an
// attacker would, and returns true: the input then reaches the section
// table checks and each section's decoder and checks.
bool fix_format2_checksums(std::string* file) {
  if (file->size() < kModelHeaderBytes || file->compare(0, 8, kModelMagic, 8) != 0 ||
      get_le(*file, 8, 4) != 2) {
    return false;
  }
  const uint64_t count = get_le(*file, 12, 4);
  const size_t entry_bytes = 24;
  if (count == 0 || count > 64 || file->size() < kModelHeaderBytes + count * entry_bytes) {
    return true;  // the reader refuses it as it is
  }
  for (uint64_t i = 0; i < count; ++i) {
    const size_t at = kModelHeaderBytes + i * entry_bytes;
    const uint64_t offset = get_le(*file, at + 8, 8), length = get_le(*file, at + 16, 8);
    if (offset <= file->size() && length <= file->size() - offset) {
      put_le32(crc32_of(file->data() + offset, length), at + 4, file);
    }
  }
  put_le32(crc32_of(file->data() + kModelHeaderBytes, count * entry_bytes), 16, file);
  return true;
}

// Scores a document made of the first terms of the vocabulary with every
// stored classifier: what classify does with a loaded model.
void classify_with(const ModelState& model) {
  Analyzer analyzer(model.analyzer);
  analyzer.analyze("the quick brown fox");
  const std::vector<float> idf = compute_idf(model.df, model.num_docs, model.selected);
  DocumentTerms doc;
  for (TermId t = 0; t < std::min<size_t>(model.terms.size(), 64); ++t) {
    doc.terms.push_back(TermCount{t, 1 + t % 3});
  }
  doc.known_tokens = doc.total_tokens = static_cast<uint32_t>(doc.terms.size());
  const ClassifyOptions options;
  std::vector<double> scores;
  RocchioClassifier(model.rocchio, idf).score(doc, options, &scores);
  if (scores.size() != model.categories.size()) __builtin_trap();
  for (const NaiveBayesModel* nb :
       {&model.multinomial_nb, &model.bernoulli_nb, &model.complement_nb}) {
    NaiveBayesClassifier(*nb).score(doc, options, &scores);
    if (scores.size() != model.categories.size()) __builtin_trap();
  }
  for (const auto& [method, linear] :
       {std::pair{Method::kSvm, &model.svm}, std::pair{Method::kLogreg, &model.logreg}}) {
    if (!linear->trained()) continue;  // a model from before the linear methods
    LinearClassifier(method, *linear, idf, model.decision).score(doc, options, &scores);
    if (scores.size() != model.categories.size()) __builtin_trap();
  }
  for (const Calibration& calibration : model.calibration) {
    apply_calibration(calibration, model.decision, &scores);
    if (scores.size() != model.categories.size()) __builtin_trap();
  }
  if (!model.combo.empty()) {
    const std::vector<std::vector<double>> logits(
        model.combo.members.size(), std::vector<double>(model.categories.size(), 0.5));
    combo_probabilities(model.combo, model.decision, logits, &scores);
    if (scores.size() != model.categories.size()) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string payload(reinterpret_cast<const char*>(data), size);
  ModelState model;
  try {
    if (fix_format2_checksums(&payload)) {
      model = parse_model_file("fuzz.autocat", payload);
    } else {
      if (payload.size() >= kModelHeaderBytes && payload.compare(0, 8, kModelMagic, 8) == 0) {
        payload.erase(0, kModelHeaderBytes);  // a whole format 1 model file from the seeds
      }
      model = parse_model_file("fuzz.autocat", with_valid_header(std::move(payload)));
    }
  } catch (const ModelFormatError&) {
    return 0;  // refused cleanly: the expected outcome for almost every input
  }
  classify_with(model);
  return 0;
}
