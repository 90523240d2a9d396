// Tests of page-stream segmentation (classify/decide/page_split.h).
#include "classify/decide/page_split.h"

#include <gtest/gtest.h>

#include <vector>

namespace autocat::internal {
namespace {

// A page confident in `type` (of 2) and in `role`.
PageScores page(uint32_t type, PageRole role, double confidence = 0.9) {
  PageScores scores;
  scores.type = {type == 0 ? confidence : 1 - confidence, type == 1 ? confidence : 1 - confidence};
  for (size_t r = 0; r < kPageRoles; ++r) {
    scores.role[r] = r == static_cast<size_t>(role) ? confidence : (1 - confidence) / 3;
  }
  return scores;
}

std::vector<std::vector<size_t>> spans(const std::vector<PageSegment>& segments) {
  std::vector<std::vector<size_t>> out;
  for (const PageSegment& s : segments) out.push_back({s.begin, s.end, s.type});
  return out;
}

TEST(PageSplitTest, RolesAndTypesGiveTheBoundaries) {
  const std::vector<PageScores> stream = {
      page(0, PageRole::kFirst), page(0, PageRole::kMiddle),
      page(0, PageRole::kLast),  page(0, PageRole::kSingle),  // same type: the role splits
      page(1, PageRole::kFirst), page(1, PageRole::kLast)};   // type changes
  EXPECT_EQ(spans(best_segmentation(stream)),
            (std::vector<std::vector<size_t>>{{0, 3, 0}, {3, 4, 0}, {4, 6, 1}}));
}

TEST(PageSplitTest, TypeChangeOutweighsAWeakRole) {
  // The middle page looks like a middle page, but its type disagrees strongly
  // with its neighbours': a new document starts there.
  std::vector<PageScores> stream = {page(0, PageRole::kFirst), page(0, PageRole::kMiddle),
                                    page(1, PageRole::kMiddle, 0.99), page(1, PageRole::kLast)};
  stream[1].role = {0.3, 0.3, 0.3, 0.1};
  stream[2].role = {0.4, 0.4, 0.1, 0.1};
  const std::vector<PageSegment> found = best_segmentation(stream);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[1].begin, 2u);
  EXPECT_EQ(found[1].type, 1u);
}

TEST(PageSplitTest, MaxPagesBoundsDocuments) {
  std::vector<PageScores> stream(10, page(0, PageRole::kMiddle));
  SplitOptions options;
  options.max_pages = 4;
  for (const PageSegment& s : best_segmentation(stream, options)) EXPECT_LE(s.end - s.begin, 4u);
  EXPECT_TRUE(best_segmentation({}).empty());
}

TEST(PageSplitTest, QualityCountsBoundariesAndExactDocuments) {
  const std::vector<PageSegment> truth = {{0, 2, 0, 0}, {2, 3, 0, 0}, {3, 6, 0, 0}};
  const std::vector<PageSegment> found = {{0, 2, 0, 0}, {2, 4, 0, 0}, {4, 6, 0, 0}};
  const SplitQuality q = split_quality(found, truth);
  EXPECT_DOUBLE_EQ(q.boundary_precision, 0.5);  // 2 right of {2, 4}
  EXPECT_DOUBLE_EQ(q.boundary_recall, 0.5);     // 2 found of {2, 3}
  EXPECT_DOUBLE_EQ(q.exact_documents, 1.0 / 3);
  EXPECT_EQ(page_role(0, 1), PageRole::kSingle);
  EXPECT_EQ(page_role(0, 3), PageRole::kFirst);
  EXPECT_EQ(page_role(1, 3), PageRole::kMiddle);
  EXPECT_EQ(page_role(2, 3), PageRole::kLast);
}

}  // namespace
}  // namespace autocat::internal
