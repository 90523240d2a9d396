// Checks of a decoded model: every size, cross-reference and range the
// classifiers rely on, in the core of a ModelState and in each of its parts
// (against the core's term and category counts). A file that passes the
// CRC but fails here was written by a buggy or crafted program; without
// these checks it could make classification read out of bounds or silently
// assign nothing. Each check throws ModelFormatError naming the file and
// the first problem.
//
// Thread safety: free functions.
#pragma once

#include <cstddef>
#include <string>

#include "classify/methods/linear.h"
#include "classify/methods/naive_bayes.h"
#include "classify/methods/rocchio.h"
#include "classify/model/model_state.h"
#include "classify/text/analyzer.h"

namespace autocat::internal {

// True if a linear model fits a vocabulary of `terms` terms and
// `categories` categories (or is empty: not trained, as in files older than
// version 2); for the read path's consistency checks.
bool linear_model_consistent(const LinearModel& model, size_t terms, size_t categories);

// The analyzer settings a model file holds.
void check_model_analyzer(const std::string& path, const AnalyzerSettings& settings);
// The core of `m` (everything but its parts).
void check_model_core(const std::string& path, const ModelState& m);
// Part `part` of `m`, against m's core.
void check_model_part(const std::string& path, const ModelState& m, ModelPart part);
// A part's model before it joins a ModelState whose core has `terms` terms
// and `cats` categories.
void check_part_model(const std::string& path, const RocchioModel& model, ModelPart part,
                      size_t terms, size_t cats);
void check_part_model(const std::string& path, const NaiveBayesModel& model, ModelPart part,
                      size_t terms, size_t cats);
void check_part_model(const std::string& path, const LinearModel& model, ModelPart part,
                      size_t terms, size_t cats);
// The core and every part.
void check_model_state(const std::string& path, const ModelState& m);

}  // namespace autocat::internal
