// Tests of the k-d tree (classify/methods/kd_tree.h) against brute-force
// comparison with every point.
#include "classify/methods/kd_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <vector>

#include "autocat/error.h"

namespace autocat::internal {
namespace {

// `n` random points of dimension `dim`, normalized to unit length (as the
// projected documents are), or left as drawn.
std::vector<float> random_points(size_t n, uint32_t dim, uint32_t seed, bool unit) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> points(n * dim);
  for (size_t i = 0; i < n; ++i) {
    double norm2 = 0;
    for (uint32_t d = 0; d < dim; ++d) {
      points[i * dim + d] = normal(rng);
      norm2 += double(points[i * dim + d]) * points[i * dim + d];
    }
    if (unit) {
      for (uint32_t d = 0; d < dim; ++d) points[i * dim + d] /= float(std::sqrt(norm2));
    }
  }
  return points;
}

// The k nearest points by comparing every one, nearest first, ties by index.
std::vector<KdTree::Match> brute_force(const std::vector<float>& points, uint32_t dim,
                                       const float* query, size_t k) {
  std::vector<KdTree::Match> all;
  for (uint32_t i = 0; i < points.size() / dim; ++i) {
    all.push_back({i, KdTree::squared_distance(query, points.data() + size_t(i) * dim, dim)});
  }
  std::sort(all.begin(), all.end(), [](const KdTree::Match& a, const KdTree::Match& b) {
    return a.distance2 < b.distance2 || (a.distance2 == b.distance2 && a.point < b.point);
  });
  all.resize(std::min(k, all.size()));
  return all;
}

TEST(KdTreeTest, ExactSearchEqualsBruteForce) {
  for (uint32_t dim : {1u, 2u, 8u, 16u, 32u}) {
    for (bool unit : {false, true}) {
      const size_t n = 3000;
      const auto points = random_points(n, dim, 7 + dim, unit);
      const KdTree tree(points, dim, 8);
      EXPECT_EQ(tree.num_points(), n);
      const auto queries = random_points(20, dim, 1000 + dim, unit);
      for (size_t k : {size_t(1), size_t(10), size_t(50), size_t(400)}) {
        for (size_t q = 0; q < 20; ++q) {
          const float* query = queries.data() + q * dim;
          const auto expected = brute_force(points, dim, query, k);
          const auto found = tree.nearest(query, k);
          ASSERT_EQ(found.size(), expected.size()) << "dim " << dim << " k " << k;
          for (size_t i = 0; i < found.size(); ++i) {
            ASSERT_EQ(found[i].point, expected[i].point)
                << "dim " << dim << " k " << k << " query " << q << " rank " << i;
            ASSERT_EQ(found[i].distance2, expected[i].distance2);
          }
        }
      }
    }
  }
}

// Exact search prunes: in few dimensions it compares a small share of the
// points (else it would be brute force with extra steps).
TEST(KdTreeTest, ExactSearchPrunesInLowDimensions) {
  const uint32_t dim = 4;
  const auto points = random_points(20000, dim, 3, false);
  const KdTree tree(points, dim, 16);
  const auto queries = random_points(10, dim, 4, false);
  KdSearchStats stats;
  uint64_t compared = 0;
  for (size_t q = 0; q < 10; ++q) {
    tree.nearest(queries.data() + q * dim, 10, 0, &stats);
    compared += stats.points;
  }
  EXPECT_LT(compared / 10, 20000u / 10);
}

// Duplicates, ties and tiny inputs: ties go to the lower index.
TEST(KdTreeTest, TiesAndEdgeCases) {
  const uint32_t dim = 3;
  std::vector<float> points;
  for (int i = 0; i < 100; ++i) points.insert(points.end(), {1.0f, 2.0f, 3.0f});
  const KdTree tree(points, dim, 4);
  const float query[] = {0.0f, 0.0f, 0.0f};
  const auto found = tree.nearest(query, 5);
  ASSERT_EQ(found.size(), 5u);
  for (uint32_t i = 0; i < 5; ++i) EXPECT_EQ(found[i].point, i);
  EXPECT_EQ(tree.nearest(query, 500).size(), 100u);
  EXPECT_TRUE(tree.nearest(query, 0).empty());
  const KdTree empty(std::vector<float>(), dim);
  EXPECT_TRUE(empty.nearest(query, 3).empty());
  EXPECT_THROW(KdTree(std::vector<float>(7), 3), InvalidArgumentError);
  EXPECT_THROW(KdTree(points, 0), InvalidArgumentError);
}

// The leaf budget bounds the work and returns true neighbours (a subset of
// the exact answer's distances: every match is a real point at its real
// distance); recall grows with the budget and reaches 1 when the budget
// covers every leaf.
TEST(KdTreeTest, BoundedSearchRecall) {
  for (uint32_t dim : {8u, 16u, 32u}) {
    const size_t n = 5000, k = 50, num_queries = 20;
    const auto points = random_points(n, dim, 11 + dim, true);
    const KdTree tree(points, dim, 16);
    const auto queries = random_points(num_queries, dim, 99 + dim, true);
    double previous_recall = 0;
    for (uint32_t leaves : {1u, 8u, 64u, tree.num_leaves()}) {
      double found_true = 0;
      for (size_t q = 0; q < num_queries; ++q) {
        const float* query = queries.data() + q * dim;
        const auto expected = brute_force(points, dim, query, k);
        std::set<uint32_t> truth;
        for (const auto& match : expected) truth.insert(match.point);
        KdSearchStats stats;
        const auto found = tree.nearest(query, k, leaves, &stats);
        EXPECT_LE(stats.leaves, leaves);
        ASSERT_LE(found.size(), k);
        for (const auto& match : found) {
          ASSERT_LT(match.point, n);
          EXPECT_EQ(match.distance2, KdTree::squared_distance(
                                         query, points.data() + size_t(match.point) * dim, dim));
          found_true += truth.count(match.point);
        }
      }
      const double recall = found_true / double(k * num_queries);
      std::printf("dim %u, %u of %u leaves: recall@%zu %.3f\n", dim, leaves, tree.num_leaves(), k,
                  recall);
      EXPECT_GE(recall, previous_recall - 0.02) << "dim " << dim << " leaves " << leaves;
      previous_recall = recall;
    }
    EXPECT_EQ(previous_recall, 1.0) << "dim " << dim;
  }
}

}  // namespace
}  // namespace autocat::internal
