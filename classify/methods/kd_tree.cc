#include "classify/methods/kd_tree.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <string>

#include "autocat/error.h"

namespace autocat::internal {

namespace {

// Ranking order of matches: nearer first, then lower index.
bool nearer(const KdTree::Match& a, const KdTree::Match& b) {
  return a.distance2 < b.distance2 || (a.distance2 == b.distance2 && a.point < b.point);
}

// A node waiting to be visited: a lower bound of its cell's squared
// distance to the query, and where its per-dimension offsets start in the
// search's offset pool.
struct Pending {
  double bound;
  uint32_t node;
  size_t offsets;
};
struct FartherPending {
  bool operator()(const Pending& a, const Pending& b) const {
    return a.bound > b.bound || (a.bound == b.bound && a.node > b.node);
  }
};

}  // namespace

KdTree::KdTree(const std::vector<float>& points, uint32_t dim, uint32_t leaf_size)
    : dim_(dim), leaf_size_(leaf_size), num_points_(0) {
  if (dim == 0 || leaf_size == 0) {
    throw InvalidArgumentError("k-d tree: the dimension and the leaf size must be at least 1");
  }
  if (points.size() % dim != 0) {
    throw InvalidArgumentError("k-d tree: " + std::to_string(points.size()) +
                               " floats are not whole points of dimension " + std::to_string(dim));
  }
  if (points.size() / dim > std::numeric_limits<uint32_t>::max()) {
    throw InvalidArgumentError("k-d tree: more than 2^32 - 1 points");
  }
  num_points_ = uint32_t(points.size() / dim);
  leaf_order_.resize(num_points_);
  for (uint32_t i = 0; i < num_points_; ++i) leaf_order_[i] = i;
  points_ = points;  // build() reads the points in the constructor's order
  nodes_.reserve(2 * (size_t(num_points_) / leaf_size_ + 1));
  build(0, num_points_);
  // Store each leaf's points contiguously, so a leaf is read in one sweep.
  std::vector<float> ordered(points.size());
  for (uint32_t i = 0; i < num_points_; ++i) {
    std::copy_n(points.begin() + size_t(leaf_order_[i]) * dim_, dim_,
                ordered.begin() + size_t(i) * dim_);
  }
  points_ = std::move(ordered);
}

uint32_t KdTree::build(uint32_t begin, uint32_t end) {
  const uint32_t id = uint32_t(nodes_.size());
  nodes_.emplace_back();
  if (end - begin <= leaf_size_) {
    nodes_[id].begin = begin;
    nodes_[id].end = end;
    ++num_leaves_;
    return id;
  }
  // Split the dimension of widest spread at its median.
  uint32_t split_dim = 0;
  float widest = -1.0f;
  for (uint32_t d = 0; d < dim_; ++d) {
    float low = std::numeric_limits<float>::infinity(), high = -low;
    for (uint32_t i = begin; i < end; ++i) {
      const float x = points_[size_t(leaf_order_[i]) * dim_ + d];
      low = std::min(low, x);
      high = std::max(high, x);
    }
    if (high - low > widest) {
      widest = high - low;
      split_dim = d;
    }
  }
  const uint32_t mid = begin + (end - begin) / 2;
  auto value = [&](uint32_t point) { return points_[size_t(point) * dim_ + split_dim]; };
  std::nth_element(leaf_order_.begin() + begin, leaf_order_.begin() + mid,
                   leaf_order_.begin() + end, [&](uint32_t a, uint32_t b) {
                     return value(a) < value(b) || (value(a) == value(b) && a < b);
                   });
  // Left holds values <= split_value, right values >= split_value.
  const float split_value = value(leaf_order_[mid]);
  const uint32_t left = build(begin, mid);
  const uint32_t right = build(mid, end);
  Node& node = nodes_[id];
  node.split_dim = split_dim;
  node.split_value = split_value;
  node.left = left;
  node.right = right;
  return id;
}

float KdTree::squared_distance(const float* a, const float* b, uint32_t dim) {
  float sum = 0.0f;
  for (uint32_t d = 0; d < dim; ++d) {
    const float diff = a[d] - b[d];
    sum += diff * diff;
  }
  return sum;
}

std::vector<KdTree::Match> KdTree::nearest(const float* query, size_t k, uint32_t max_leaves,
                                           KdSearchStats* stats) const {
  if (stats != nullptr) *stats = KdSearchStats();
  std::vector<Match> top;  // a heap whose front is the worst match kept
  if (k == 0 || num_points_ == 0) return top;
  k = std::min<size_t>(k, num_points_);
  top.reserve(k);
  // A cell is skipped when its bound exceeds the k-th distance; the slack
  // covers float rounding in the points' distances, so that exact search
  // never drops a point the brute-force comparison keeps.
  auto limit = [&]() {
    return top.size() < k ? std::numeric_limits<double>::infinity()
                          : double(top.front().distance2) * (1.0 + 1e-5) + 1e-30;
  };
  std::vector<float> pool(dim_, 0.0f);  // the root's offsets: zero
  std::priority_queue<Pending, std::vector<Pending>, FartherPending> queue;
  queue.push({0.0, 0, 0});
  std::vector<float> offsets(dim_);
  uint32_t leaves = 0;
  uint64_t compared = 0;
  while (!queue.empty()) {
    const Pending pending = queue.top();
    queue.pop();
    if (pending.bound > limit()) break;  // no cell left can hold a nearer point
    if (max_leaves > 0 && leaves >= max_leaves) break;
    std::copy_n(pool.begin() + pending.offsets, dim_, offsets.begin());
    double bound = pending.bound;
    uint32_t id = pending.node;
    // Descend to the nearer leaf, queueing each farther child with its
    // bound: the parent's with this dimension's offset replaced.
    while (nodes_[id].left != nodes_[id].right) {
      const Node& node = nodes_[id];
      const float diff = query[node.split_dim] - node.split_value;
      const uint32_t near = diff <= 0.0f ? node.left : node.right;
      const uint32_t far = diff <= 0.0f ? node.right : node.left;
      const double old_offset = offsets[node.split_dim];
      const double far_bound = bound - old_offset * old_offset + double(diff) * double(diff);
      if (far_bound <= limit()) {
        const size_t at = pool.size();
        pool.insert(pool.end(), offsets.begin(), offsets.end());
        pool[at + node.split_dim] = diff;
        queue.push({far_bound, far, at});
      }
      id = near;
    }
    const Node& leaf = nodes_[id];
    ++leaves;
    compared += leaf.end - leaf.begin;
    for (uint32_t i = leaf.begin; i < leaf.end; ++i) {
      const Match match{leaf_order_[i],
                        squared_distance(query, points_.data() + size_t(i) * dim_, dim_)};
      if (top.size() < k) {
        top.push_back(match);
        std::push_heap(top.begin(), top.end(), nearer);
      } else if (nearer(match, top.front())) {
        std::pop_heap(top.begin(), top.end(), nearer);
        top.back() = match;
        std::push_heap(top.begin(), top.end(), nearer);
      }
    }
  }
  if (stats != nullptr) {
    stats->leaves = leaves;
    stats->points = compared;
  }
  std::sort_heap(top.begin(), top.end(), nearer);
  return top;
}

}  // namespace autocat::internal
