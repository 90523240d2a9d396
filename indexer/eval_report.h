// What `autocat eval` found, and how it is shown: the results of evaluating a
// model (eval --model) or of cross-validation (eval --folds), computed in
// commands_eval.cc, rendered here as text or as one --json object
// (docs/json.md).
//
// Thread safety: plain data and free functions.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "autocat/options.h"
#include "classify/io/json_text.h"
#include "classify/metrics/evaluation.h"
#include "classify/train/cross_validation.h"

namespace autocat::cli {

// eval --model: a model's decisions on labelled documents.
struct ModelEvalResults {
  std::string model_dir;
  Method method = Method::kKnn;
  Decision decision = Decision::kOneOf;
  internal::Evaluation evaluation{{}};  // over the scored categories
  internal::LogLoss log_loss;
  internal::CalibrationReport calibration{0};
  std::vector<std::string> model_category_names;  // as `calibration` indexes them
  bool count_unlabelled = false;                  // --unlabelled count
  uint64_t unlabelled = 0;                        // documents without labels, counted or skipped
  uint64_t unknown_label_documents = 0;
  std::map<std::string, uint64_t> unknown_documents;  // per label the model lacks
  bool shared = false;                                // --shared-categories
  size_t scored_categories = 0;
  size_t model_categories = 0;
  uint64_t left_without_label = 0;  // labelled, but with no scored label
  double classify_seconds = 0, docs_per_second = 0, analyze_seconds = 0;
  std::string plot, reliability_plot;  // files drawn, or empty
};

void print_model_eval(std::ostream& out, const ModelEvalResults& results);
internal::Json model_eval_json(const ModelEvalResults& results);

// eval --folds: k-fold cross-validation of freshly trained models.
struct CrossValidationResults {
  internal::CrossValidationResult result;
  uint64_t documents = 0, categories = 0;  // of the collection
  uint64_t skipped_unlabelled = 0;
  double prepare_seconds = 0, seconds = 0;
  std::string plot;  // the file drawn, or empty
};

void print_cross_validation(std::ostream& out, const CrossValidationResults& results);
internal::Json cross_validation_json(const CrossValidationResults& results);

}  // namespace autocat::cli
