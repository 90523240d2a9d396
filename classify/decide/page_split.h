// Page streams: an ordered stream of pages cut back into documents. Each page
// has a probability for every document type and for its role in a document
// (first, middle, last page, or a single-page document); dynamic programming
// finds the segmentation of the stream into documents, each of one type,
// with the highest total log-probability.
//
// Thread safety: free functions with no shared state.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "autocat/options.h"
#include "classify/decide/categorizer.h"

namespace autocat::internal {

enum class PageRole { kFirst = 0, kMiddle = 1, kLast = 2, kSingle = 3 };
inline constexpr size_t kPageRoles = 4;
// The role labels a role model is trained with: "first", "middle", "last",
// "single".
const std::array<std::string, kPageRoles>& page_role_names();
// The role of page `index` (0-based) of a document of `pages` pages.
PageRole page_role(size_t index, size_t pages);

struct PageScores {
  std::vector<double> type;             // per document type, summing to about 1
  std::array<double, kPageRoles> role;  // indexed by PageRole, summing to about 1
};

// Scores pages with a model of the document types and a model of the page
// roles (categories "first", "middle", "last", "single"); each model's scores
// are normalized to sum 1 (uniform for a page with no word it knows).
class PageScorer {
 public:
  // Throws InvalidArgumentError naming `roles` if it lacks a role category.
  PageScorer(const Categorizer& types, const Categorizer& roles,
             const ClassifyOptions& type_options = ClassifyOptions());
  PageScores score(std::string_view text) const;

 private:
  const Categorizer& types_;
  const Categorizer& roles_;
  ClassifyOptions type_options_;
  std::array<size_t, kPageRoles> role_index_{};  // the roles' category indexes
};

struct PageSegment {
  size_t begin = 0;  // first page (index into the stream)
  size_t end = 0;    // one past the last page
  uint32_t type = 0;
  double log_score = 0;  // the segment's log-probability
};

struct SplitOptions {
  // Longest document considered, in pages (bounds the work: pages x this x types).
  size_t max_pages = 64;
  // Probabilities are floored here before the logarithm, so one
  // overconfident zero cannot veto a segmentation.
  double floor = 1e-4;
};

// The segmentation maximizing the sum over segments of
//   sum_pages log P(type | page) + log P(role of the page in the segment | page),
// segments in stream order, covering every page. Empty for no pages.
std::vector<PageSegment> best_segmentation(const std::vector<PageScores>& pages,
                                           const SplitOptions& options = SplitOptions());

// Boundary precision and recall, and the share of true documents found
// exactly (same first and last page), of `found` against `truth`; a boundary
// is the index of a document's first page, the stream's first page excluded.
struct SplitQuality {
  double boundary_precision = 0;
  double boundary_recall = 0;
  double exact_documents = 0;
  size_t true_documents = 0;
  size_t found_documents = 0;
};
SplitQuality split_quality(const std::vector<PageSegment>& found,
                           const std::vector<PageSegment>& truth);

}  // namespace autocat::internal
