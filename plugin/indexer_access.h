// What autocat's own tools read of a CategoryIndexer beyond its public API:
// the open model of its current generation (for explanations from the very
// model that scored). Not installed.
//
// Thread safety: as CategoryIndexer's const methods.
#pragma once

#include <memory>

#include "autocat/category_indexer.h"
#include "classify/decide/categorizer.h"

namespace autocat::internal {

struct IndexerAccess {
  // The Categorizer of `indexer`'s current generation; it stays valid, and
  // keeps learning with the indexer, for as long as the caller holds it.
  static std::shared_ptr<const Categorizer> categorizer(const CategoryIndexer& indexer);
};

}  // namespace autocat::internal
