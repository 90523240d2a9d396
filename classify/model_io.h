// The model file: magic bytes, format version, payload length and CRC-32,
// then a Boost.Serialization binary archive of ModelState. Written atomically
// (temporary file + rename). Truncated, foreign, corrupted or newer-format
// files are refused with ModelFormatError naming the file.
//
// Thread safety: free functions; ModelState is data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "classify/analyzer.h"
#include "classify/naive_bayes.h"
#include "classify/rocchio.h"

namespace autocat::internal {

// "AUTOCAT" + NUL, then a little-endian uint32 format version.
inline constexpr char kModelMagic[8] = {'A', 'U', 'T', 'O', 'C', 'A', 'T', '\0'};
inline constexpr uint32_t kModelFormatVersion = 1;

// Names inside a model directory.
inline const std::string kModelFileName = "model.autocat";
inline const std::string kTrainingDbName = "training";

struct ModelState {
  AnalyzerSettings analyzer;
  int default_method = 0;  // static_cast<int>(Method)
  double nb_alpha = 1.0;
  double rocchio_gamma = 0.0;
  int feature_selection = 0;  // static_cast<int>(FeatureSelection)
  int num_features = 0;
  bool features_per_category = false;
  bool tune_thresholds = true;
  bool keep_unlabelled = false;

  std::vector<std::string> categories;  // sorted
  std::vector<uint32_t> category_doc_counts;
  uint32_t num_docs = 0;
  uint64_t num_postings = 0;       // to check the training database is unchanged
  std::vector<std::string> terms;  // vocabulary, sorted
  std::vector<uint32_t> df;
  std::vector<uint8_t> selected;  // per term; empty = every term
  std::string icu_version;        // segmentation may differ across ICU versions

  // Any-of thresholds tuned on held-out training documents:
  // thresholds[method][category]; empty if not tuned.
  std::vector<std::vector<double>> thresholds;

  RocchioModel rocchio;
  NaiveBayesModel multinomial_nb;
  NaiveBayesModel bernoulli_nb;
  NaiveBayesModel complement_nb;

  template <class Archive>
  void serialize(Archive& ar, const unsigned int /*version*/) {
    ar& analyzer& default_method& nb_alpha& rocchio_gamma& feature_selection& num_features&
        features_per_category& tune_thresholds& keep_unlabelled;
    ar& categories& category_doc_counts& num_docs& num_postings& terms& df& selected& icu_version;
    ar& thresholds& rocchio& multinomial_nb& bernoulli_nb& complement_nb;
  }
};

// Throws IOError if the file cannot be written.
void write_model_file(const std::string& path, const ModelState& state);
// Throws NotFoundError (missing) or ModelFormatError (truncated, foreign,
// corrupted, newer format).
ModelState read_model_file(const std::string& path);

}  // namespace autocat::internal
