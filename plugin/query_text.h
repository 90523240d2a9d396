// Query text analyzed like indexed text, QueryParser syntax kept. Used by
// CategoryIndexer::normalize_query and the CLI's search.
//
// Thread safety: a free function; the Analyzer is thread-safe.
#pragma once

#include <string>

#include "classify/analyzer.h"

namespace autocat::internal {

// Normalizes the free-text words of a query like indexed text, leaving the
// QueryParser syntax alone: operators, field:value words, and the quotes,
// brackets and +/- around words. A word the analyzer splits ("e-mail",
// CJK text) becomes a phrase so that its parts must be adjacent.
std::string normalize_query(const std::string& raw, const Analyzer& analyzer);

}  // namespace autocat::internal
