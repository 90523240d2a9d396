// What `train --add` keeps of the model it refits: the settings,
// thresholds and calibrations cross-validation chose for it, when they
// still fit the new collection (same categories, same decision mode).
//
// Thread safety: a free function; it decodes parts of `model` through
// `file` (ModelFile), so one call at a time per model.
#pragma once

#include <optional>
#include <string>

#include "classify/model/model_io.h"
#include "classify/train/fit.h"

namespace autocat::internal {

// The settings, thresholds and calibrations `model` (the core `file`
// opened) was trained with, as fit_model() takes them from
// cross-validation, for a refit on the collection at `training_db` that
// keeps them. Returns nullopt if there is nothing to keep (no tuning) or, with the
// reason in `reason`, if they do not fit the new collection.
std::optional<SampleTuning> kept_tuning(const ModelFile& file, ModelState* model,
                                        const std::string& training_db, std::string* reason);

}  // namespace autocat::internal
