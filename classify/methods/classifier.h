// The classifier interface and the factory that builds one per Method.
//
// Thread safety: score() is const and may be called from many threads.
#pragma once

#include <memory>
#include <vector>

#include "autocat/options.h"
#include "autocat/types.h"
#include "classify/corpus/training_collection.h"

namespace autocat::internal {

class Classifier {
 public:
  virtual ~Classifier() = default;
  virtual Method method() const = 0;
  // Sets (*scores)[c] for every category c: in [0, 1], higher is better.
  // A document with no known term gets all zeros.
  virtual void score(const DocumentTerms& doc, const ClassifyOptions& options,
                     std::vector<double>* scores) const = 0;
};

}  // namespace autocat::internal
