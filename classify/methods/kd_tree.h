// A k-d tree over N points of a low dimension (8 to 32 floats each), for
// nearest-neighbour search by squared Euclidean distance. On unit vectors
// that is the order of the inner product (|a - b|^2 = 2 - 2 a.b), so it
// serves kNN over a low-dimensional projection of the documents
// (bench/knn_search: a candidate pass before exact cosines).
//
// Search is best-bin-first (Arya & Mount): the nodes still to visit wait in
// a priority queue keyed by a lower bound of their distance to the query
// (the squared distance to their cell, kept incrementally per dimension).
// Without a leaf budget the search stops when no cell can hold a point
// nearer than the k-th found: exact. With a budget of L leaves it stops
// after L leaves: approximate, and its cost bounded.
//
// Thread safety: KdTree is immutable after construction; nearest() may run
// on many threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace autocat::internal {

// What one KdTree::nearest call visited (for tests and benchmarks).
struct KdSearchStats {
  uint32_t leaves = 0;  // leaves whose points were compared
  uint64_t points = 0;  // points whose distance was computed
};

class KdTree {
 public:
  // `points` holds num_points * dim floats, point after point. Leaves hold
  // at most `leaf_size` points. Throws InvalidArgumentError if dim is 0,
  // leaf_size is 0 or points.size() is not a multiple of dim.
  KdTree(const std::vector<float>& points, uint32_t dim, uint32_t leaf_size = 16);

  uint32_t dim() const { return dim_; }
  uint32_t num_points() const { return num_points_; }
  uint32_t num_leaves() const { return num_leaves_; }

  struct Match {
    uint32_t point;   // index into the points given to the constructor
    float distance2;  // squared Euclidean distance to the query
  };
  // The k points nearest to `query` (dim floats), nearest first, ties by
  // lower index. max_leaves 0: exact (the same matches and distances as
  // comparing every point with squared_distance()). max_leaves L > 0: the
  // best k among the points of the first L leaves visited.
  std::vector<Match> nearest(const float* query, size_t k, uint32_t max_leaves = 0,
                             KdSearchStats* stats = nullptr) const;

  // The distance nearest() computes, in its order of operations.
  static float squared_distance(const float* a, const float* b, uint32_t dim);

 private:
  struct Node {
    // Inner node: the split; children at left, right. Leaf: left == right
    // == 0 and its points are leaf_order_[begin, end).
    uint32_t split_dim = 0;
    float split_value = 0.0f;
    uint32_t left = 0, right = 0;
    uint32_t begin = 0, end = 0;
  };
  uint32_t build(uint32_t begin, uint32_t end);

  uint32_t dim_;
  uint32_t leaf_size_;
  uint32_t num_points_;
  uint32_t num_leaves_ = 0;
  std::vector<Node> nodes_;  // nodes_[0] is the root
  // The points in leaf order (each leaf's points contiguous) and, for each,
  // its index in the constructor's order.
  std::vector<float> points_;
  std::vector<uint32_t> leaf_order_;
};

}  // namespace autocat::internal
