#include "classify/decide/page_split.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include "autocat/error.h"

namespace autocat::internal {

const std::array<std::string, kPageRoles>& page_role_names() {
  static const std::array<std::string, kPageRoles> names = {"first", "middle", "last", "single"};
  return names;
}

PageRole page_role(size_t index, size_t pages) {
  if (pages <= 1) return PageRole::kSingle;
  if (index == 0) return PageRole::kFirst;
  return index + 1 == pages ? PageRole::kLast : PageRole::kMiddle;
}

namespace {

std::vector<double> probabilities(const Categorizer& categorizer, std::string_view text,
                                  const ClassifyOptions& options) {
  std::vector<double> scores =
      categorizer.scores(categorizer.document_terms(categorizer.analyzer().analyze(text)), options);
  double sum = 0;
  for (double score : scores) sum += score;
  for (double& score : scores) {
    score = sum > 0 ? score / sum : 1.0 / static_cast<double>(scores.size());
  }
  return scores;
}

}  // namespace

PageScorer::PageScorer(const Categorizer& types, const Categorizer& roles,
                       const ClassifyOptions& type_options)
    : types_(types), roles_(roles), type_options_(type_options) {
  for (size_t r = 0; r < kPageRoles; ++r) {
    const int64_t c = roles.category_index(page_role_names()[r]);
    if (c < 0) {
      throw InvalidArgumentError("role model " + roles.model_dir() + " has no category '" +
                                 page_role_names()[r] +
                                 "'; train it on pages labelled first, middle, last or single");
    }
    role_index_[r] = static_cast<size_t>(c);
  }
}

PageScores PageScorer::score(std::string_view text) const {
  PageScores scores;
  scores.type = probabilities(types_, text, type_options_);
  const std::vector<double> role = probabilities(roles_, text, ClassifyOptions());
  for (size_t r = 0; r < kPageRoles; ++r) scores.role[r] = role[role_index_[r]];
  return scores;
}

std::vector<PageSegment> best_segmentation(const std::vector<PageScores>& pages,
                                           const SplitOptions& options) {
  const size_t n = pages.size();
  if (n == 0) return {};
  const size_t types = pages[0].type.size();
  const size_t max_pages = std::max<size_t>(options.max_pages, 1);
  auto log_of = [&](double p) { return std::log(std::max(p, options.floor)); };

  // Prefix sums: type_sum[t][i] = sum of log P(t | page) over pages < i;
  // middle_sum likewise for the middle role.
  std::vector<std::vector<double>> type_sum(types, std::vector<double>(n + 1, 0));
  std::vector<double> middle_sum(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    for (size_t t = 0; t < types; ++t) {
      type_sum[t][i + 1] =
          type_sum[t][i] +
          log_of(i < pages.size() && t < pages[i].type.size() ? pages[i].type[t] : 0);
    }
    middle_sum[i + 1] =
        middle_sum[i] + log_of(pages[i].role[static_cast<size_t>(PageRole::kMiddle)]);
  }
  auto role_score = [&](size_t begin, size_t end) {  // pages [begin, end)
    if (end - begin == 1) return log_of(pages[begin].role[static_cast<size_t>(PageRole::kSingle)]);
    return log_of(pages[begin].role[static_cast<size_t>(PageRole::kFirst)]) +
           (middle_sum[end - 1] - middle_sum[begin + 1]) +
           log_of(pages[end - 1].role[static_cast<size_t>(PageRole::kLast)]);
  };

  // best[j]: the best score of pages [0, j); back[j] the last segment of it.
  const double kNone = -std::numeric_limits<double>::infinity();
  std::vector<double> best(n + 1, kNone);
  std::vector<PageSegment> back(n + 1);
  best[0] = 0;
  for (size_t end = 1; end <= n; ++end) {
    const size_t first_begin = end > max_pages ? end - max_pages : 0;
    for (size_t begin = first_begin; begin < end; ++begin) {
      if (best[begin] == kNone) continue;
      const double roles = role_score(begin, end);
      for (size_t t = 0; t < types; ++t) {
        const double segment = type_sum[t][end] - type_sum[t][begin] + roles;
        if (best[begin] + segment > best[end]) {
          best[end] = best[begin] + segment;
          back[end] = {begin, end, static_cast<uint32_t>(t), segment};
        }
      }
    }
  }
  std::vector<PageSegment> segments;
  for (size_t end = n; end > 0; end = back[end].begin) segments.push_back(back[end]);
  std::reverse(segments.begin(), segments.end());
  return segments;
}

SplitQuality split_quality(const std::vector<PageSegment>& found,
                           const std::vector<PageSegment>& truth) {
  auto boundaries = [](const std::vector<PageSegment>& segments) {
    std::set<size_t> starts;
    for (const PageSegment& segment : segments) {
      if (segment.begin != 0) starts.insert(segment.begin);
    }
    return starts;
  };
  auto spans = [](const std::vector<PageSegment>& segments) {
    std::set<std::pair<size_t, size_t>> out;
    for (const PageSegment& segment : segments) out.insert({segment.begin, segment.end});
    return out;
  };
  const std::set<size_t> found_starts = boundaries(found), true_starts = boundaries(truth);
  size_t common = 0;
  for (size_t start : found_starts) common += true_starts.count(start);
  const std::set<std::pair<size_t, size_t>> found_spans = spans(found);
  size_t exact = 0;
  for (const auto& span : spans(truth)) exact += found_spans.count(span);

  SplitQuality quality;
  quality.true_documents = truth.size();
  quality.found_documents = found.size();
  quality.boundary_precision =
      found_starts.empty() ? (true_starts.empty() ? 1.0 : 0.0)
                           : static_cast<double>(common) / static_cast<double>(found_starts.size());
  quality.boundary_recall =
      true_starts.empty() ? 1.0
                          : static_cast<double>(common) / static_cast<double>(true_starts.size());
  quality.exact_documents =
      truth.empty() ? 1.0 : static_cast<double>(exact) / static_cast<double>(truth.size());
  return quality;
}

}  // namespace autocat::internal
