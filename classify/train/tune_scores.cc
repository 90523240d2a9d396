#include "classify/train/tune_scores.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <utility>

#include "classify/base/method_traits.h"
#include "classify/train/thresholds.h"

namespace autocat::internal {

void keep_best(const std::vector<double>& scores, DocScores* kept_scores, size_t max_kept) {
  // Sorted in a scratch list, then copied at its exact size: the lists of
  // every setting tried for every training document are cross-validation's
  // largest memory, and a list grown by push_back holds up to twice its
  // entries.
  thread_local std::vector<ScoredCategory> scratch;
  std::vector<ScoredCategory>* out = &scratch;
  out->clear();
  for (uint32_t c = 0; c < scores.size(); ++c) {
    if (scores[c] > 0.0) out->push_back({c, scores[c]});
  }
  const size_t kept = std::min(out->size(), max_kept);
  std::partial_sort(out->begin(), out->begin() + static_cast<std::ptrdiff_t>(kept), out->end(),
                    [](const ScoredCategory& a, const ScoredCategory& b) {
                      return a.score > b.score || (a.score == b.score && a.category < b.category);
                    });
  kept_scores->dropped = 0.0;
  for (size_t i = kept; i < out->size(); ++i) {
    kept_scores->dropped = std::max<double>(kept_scores->dropped, (*out)[i].score);
  }
  kept_scores->best.assign(out->begin(), out->begin() + static_cast<std::ptrdiff_t>(kept));
  kept_scores->best.shrink_to_fit();
}

bool has_label(const TrainingCorpus& corpus, uint32_t doc, uint32_t category) {
  const auto& labels = corpus.doc_categories[doc];
  return std::find(labels.begin(), labels.end(), category) != labels.end();
}

namespace {

// One category's held-out decisions at a cut (accepting scores at or above
// it).
struct CutCounts {
  size_t accepted = 0, true_positives = 0;
};
CutCounts counts_at(const std::vector<double>& scores, const std::vector<uint8_t>& positive,
                    double cut) {
  CutCounts counts;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (scores[i] < cut) continue;
    ++counts.accepted;
    counts.true_positives += positive[i];
  }
  return counts;
}

double f1_of(const CutCounts& counts, size_t positives) {
  const size_t denominator = counts.accepted + positives;
  return denominator ? 2.0 * double(counts.true_positives) / double(denominator) : 0.0;
}

// Categories too rare for SCut (kMinRankCutPositives to kMinPositives - 1
// documents): either all keep the borrowed cut already in *thresholds, or
// all get a proportional cut (rank_cut_threshold) admitting about `ratio`
// times their document count of their own held-out scores. Chosen on the
// held-out scores: the best summed F1 of these categories among the
// choices that keep the micro-F1 of all categories within
// kRareCutMicroTolerance of the borrowed cuts', since every wrong guess for
// a rare category is a false positive that micro-F1 pays for. One ratio is
// fitted for all of them, and a cut reads no label beyond the count, so
// the held-out F1 stays nearly unbiased even for two or three documents.
// Returns the ratio chosen, 0 for the borrowed cuts.
// With `one_document`, categories of a single training document also get
// their own cut at the ratio chosen (the variant thresholds_from weighs).
double choose_rare_cuts(const std::vector<std::vector<double>>& category_scores,
                        const std::vector<std::vector<uint8_t>>& category_positive,
                        const std::vector<uint32_t>& doc_counts, std::vector<double>* thresholds,
                        bool one_document) {
  std::vector<uint32_t> rare;
  size_t labels = 0, other_accepted = 0, other_true = 0;
  for (uint32_t c = 0; c < doc_counts.size(); ++c) {
    labels += doc_counts[c];
    if (is_rare_category(doc_counts[c])) {
      rare.push_back(c);
    } else {
      const CutCounts counts =
          counts_at(category_scores[c], category_positive[c], (*thresholds)[c]);
      other_accepted += counts.accepted;
      other_true += counts.true_positives;
    }
  }
  if (rare.empty() || labels == 0) return 0.0;
  // The rare categories' summed F1, and all categories' micro-F1, at `cut`.
  const auto evaluate = [&](const std::function<double(uint32_t)>& cut) {
    double f1_sum = 0.0;
    size_t accepted = other_accepted, true_positives = other_true;
    for (uint32_t c : rare) {
      const CutCounts counts = counts_at(category_scores[c], category_positive[c], cut(c));
      f1_sum += f1_of(counts, doc_counts[c]);
      accepted += counts.accepted;
      true_positives += counts.true_positives;
    }
    return std::make_pair(f1_sum, 2.0 * double(true_positives) / double(accepted + labels));
  };
  // Category c's own cut at `ratio`; where none can be placed (its scores
  // above 0 are too few), it keeps the borrowed one.
  std::vector<std::vector<double>> descending(doc_counts.size());
  for (uint32_t c : rare) descending[c] = positive_descending(category_scores[c]);
  const auto own_cut = [&](uint32_t c, double ratio) {
    const double cut = rank_cut_of_descending(descending[c], doc_counts[c], ratio);
    return cut < kNeverAssign ? cut : (*thresholds)[c];
  };
  const auto [borrowed_sum, borrowed_micro] =
      evaluate([&](uint32_t c) { return (*thresholds)[c]; });
  double best_sum = borrowed_sum;
  double best_ratio = 0.0;  // 0: keep the borrowed cuts
  for (double ratio : rare_cut_ratios()) {
    const auto [sum, micro] = evaluate([&](uint32_t c) { return own_cut(c, ratio); });
    if (sum > best_sum && micro >= borrowed_micro - kRareCutMicroTolerance) {
      best_sum = sum;
      best_ratio = ratio;
    }
  }
  if (best_ratio == 0.0) return 0.0;
  for (uint32_t c : rare) (*thresholds)[c] = own_cut(c, best_ratio);
  if (one_document) {
    for (uint32_t c = 0; c < doc_counts.size(); ++c) {
      if (doc_counts[c] != 1) continue;
      const double cut = rank_cut_threshold(category_scores[c], 1, best_ratio);
      if (cut < kNeverAssign) (*thresholds)[c] = cut;
    }
  }
  return best_ratio;
}

}  // namespace

bool takes_rare_cuts(Method method, Decision decision) {
  return decision == Decision::kAnyOf && method_traits(method).held_out_cuts_transfer;
}

namespace {

// Scores left out of the lists were not seen by the cuts: a cut at or
// below one of them would accept documents it never counted. Raises each
// cut above the largest score left out for its category.
void raise_above_dropped(const TrainingCorpus& corpus, const ScoreLists& lists,
                         std::vector<double>* thresholds) {
  std::vector<uint32_t> by_dropped(corpus.num_docs());
  std::iota(by_dropped.begin(), by_dropped.end(), 0);
  std::sort(by_dropped.begin(), by_dropped.end(),
            [&](uint32_t a, uint32_t b) { return lists[a].dropped > lists[b].dropped; });
  for (uint32_t c = 0; c < corpus.num_categories(); ++c) {
    for (uint32_t d : by_dropped) {
      if (!(lists[d].dropped > 0.0)) break;
      const auto& best = lists[d].best;
      const bool listed = std::any_of(best.begin(), best.end(),
                                      [c](const ScoredCategory& e) { return e.category == c; });
      if (listed) continue;  // its own score was seen
      if ((*thresholds)[c] <= lists[d].dropped) {
        (*thresholds)[c] = std::nextafter(lists[d].dropped, kNeverAssign);
      }
      break;
    }
  }
}

// Any-of decisions' micro- and macro-F1 over the out-of-fold lists (as
// objective() counts them, per category for the macro average).
struct OutOfFoldF1 {
  double micro = 0, macro = 0;
};
OutOfFoldF1 out_of_fold_f1(const TrainingCorpus& corpus, const ScoreLists& lists,
                           const std::vector<double>& thresholds) {
  const size_t max_assigned = static_cast<size_t>(ClassifyOptions().max_categories);
  const uint32_t num_categories = corpus.num_categories();
  std::vector<uint64_t> true_positives(num_categories, 0), assigned(num_categories, 0);
  std::vector<uint64_t> relevant(num_categories, 0);
  for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
    for (uint32_t c : corpus.doc_categories[d]) ++relevant[c];
    size_t taken = 0;
    for (const ScoredCategory& entry : lists[d].best) {
      if (taken == max_assigned) break;
      if (entry.score < thresholds[entry.category]) continue;
      ++taken;
      ++assigned[entry.category];
      true_positives[entry.category] += has_label(corpus, d, entry.category) ? 1 : 0;
    }
  }
  uint64_t all_true = 0, all_assigned = 0, all_relevant = 0;
  double f1_sum = 0;
  uint32_t counted = 0;
  for (uint32_t c = 0; c < num_categories; ++c) {
    all_true += true_positives[c];
    all_assigned += assigned[c];
    all_relevant += relevant[c];
    if (relevant[c] + assigned[c] == 0) continue;
    f1_sum += 2.0 * double(true_positives[c]) / double(relevant[c] + assigned[c]);
    ++counted;
  }
  OutOfFoldF1 f1;
  if (all_assigned + all_relevant != 0) {
    f1.micro = 2.0 * double(all_true) / double(all_assigned + all_relevant);
  }
  if (counted != 0) f1.macro = f1_sum / counted;
  return f1;
}

}  // namespace

double min_useful_f1(int variant) {
  return variant == kRareCutsLooserFloor || variant == kRareCutsBoth ? kLooserMinUsefulF1
                                                                     : kMinUsefulF1;
}

const char* rare_cut_variant_name(int variant) {
  switch (variant) {
    case kRareCutsStandard:
      return "standard";
    case kRareCutsOneDocument:
      return "one-document";
    case kRareCutsLooserFloor:
      return "looser-floor";
    case kRareCutsBoth:
      return "one-document+looser-floor";
    default:
      return "none";
  }
}

// Per-category SCut thresholds from out-of-fold scores; categories with too
// few documents get the median cut of the others, or with `rare_cuts`
// proportional cuts of their own (choose_rare_cuts), and the variant that
// the out-of-fold scores favour.
std::vector<double> thresholds_from(const TrainingCorpus& corpus, const ScoreLists& lists,
                                    bool rare_cuts, double* rare_cut_ratio, int* rare_variant) {
  const uint32_t num_categories = corpus.num_categories();
  const std::vector<uint32_t> doc_counts = corpus.category_doc_counts();
  std::vector<std::vector<double>> category_scores(num_categories);
  std::vector<std::vector<uint8_t>> category_positive(num_categories);
  for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
    for (const ScoredCategory& entry : lists[d].best) {
      const uint8_t positive = has_label(corpus, d, entry.category) ? 1 : 0;
      category_scores[entry.category].push_back(entry.score);
      category_positive[entry.category].push_back(positive);
    }
  }
  // The cuts of one variant: F1 floor of a cut of its own, and whether
  // categories of one document take the rare categories' ratio.
  const auto cuts = [&](double min_f1, bool one_document, double* ratio) {
    std::vector<double> thresholds(num_categories, kNeverAssign);
    std::vector<double> calibrated;
    for (uint32_t c = 0; c < num_categories; ++c) {
      if (doc_counts[c] < kMinPositives) continue;
      const auto scored = static_cast<size_t>(
          std::count(category_positive[c].begin(), category_positive[c].end(), 1));
      thresholds[c] = best_f1_threshold(category_scores[c], category_positive[c], min_f1,
                                        doc_counts[c] - scored);
      if (thresholds[c] < kNeverAssign) calibrated.push_back(thresholds[c]);
    }
    // Categories too rare to calibrate take the median cut of those that
    // could be: on Reuters-21578 this beat both never assigning them and the
    // pooled cut (which, for Naive Bayes, lets nearly every posterior
    // through).
    double fallback = kNeverAssign;
    if (!calibrated.empty()) {
      std::nth_element(calibrated.begin(),
                       calibrated.begin() + static_cast<std::ptrdiff_t>(calibrated.size() / 2),
                       calibrated.end());
      fallback = calibrated[calibrated.size() / 2];
    }
    for (uint32_t c = 0; c < num_categories; ++c) {
      if (doc_counts[c] < kMinPositives) thresholds[c] = fallback;
    }
    *ratio = rare_cuts ? choose_rare_cuts(category_scores, category_positive, doc_counts,
                                          &thresholds, one_document)
                       : 0.0;
    raise_above_dropped(corpus, lists, &thresholds);
    return thresholds;
  };
  double ratio = 0.0;
  std::vector<double> thresholds = cuts(kMinUsefulF1, false, &ratio);
  int variant = rare_cuts ? kRareCutsStandard : -1;
  if (rare_cuts) {
    // The variants for rare categories, each kept only if the folds show
    // its macro-F1 gain beyond the tie margin without costing micro-F1
    // beyond it (the best such gain wins).
    const OutOfFoldF1 standard = out_of_fold_f1(corpus, lists, thresholds);
    double best_macro = standard.macro + kRareCutMicroTolerance;
    for (const int candidate : {kRareCutsOneDocument, kRareCutsLooserFloor, kRareCutsBoth}) {
      const bool one_document = candidate != kRareCutsLooserFloor;
      const double min_f1 = min_useful_f1(candidate);
      double candidate_ratio = 0.0;
      std::vector<double> candidate_cuts = cuts(min_f1, one_document, &candidate_ratio);
      const OutOfFoldF1 f1 = out_of_fold_f1(corpus, lists, candidate_cuts);
      if (f1.macro > best_macro && f1.micro >= standard.micro - kRareCutMicroTolerance) {
        best_macro = f1.macro;
        thresholds = std::move(candidate_cuts);
        ratio = candidate_ratio;
        variant = candidate;
      }
    }
  }
  if (rare_cut_ratio != nullptr) *rare_cut_ratio = ratio;
  if (rare_variant != nullptr) *rare_variant = variant;
  return thresholds;
}

// How well out-of-fold decisions match the labels: micro-F1 of any-of
// decisions with `thresholds`, or the accuracy of one-of decisions.
double objective(const TrainingCorpus& corpus, const ScoreLists& lists,
                 const std::vector<double>& thresholds, Decision decision) {
  const size_t max_assigned = static_cast<size_t>(ClassifyOptions().max_categories);
  uint64_t true_positives = 0, assigned = 0, relevant = 0, correct = 0, labelled = 0;
  for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
    const auto& labels = corpus.doc_categories[d];
    if (decision == Decision::kOneOf) {
      if (labels.empty()) continue;
      ++labelled;
      const auto& best = lists[d].best;
      if (!best.empty() && has_label(corpus, d, best.front().category)) ++correct;
      continue;
    }
    relevant += labels.size();
    size_t taken = 0;
    for (const ScoredCategory& entry : lists[d].best) {
      if (taken == max_assigned) break;
      if (entry.score < thresholds[entry.category]) continue;
      ++taken;
      true_positives += has_label(corpus, d, entry.category) ? 1 : 0;
    }
    assigned += taken;
  }
  if (decision == Decision::kOneOf) return labelled ? double(correct) / double(labelled) : 0.0;
  const uint64_t denominator = assigned + relevant;
  return denominator ? 2.0 * double(true_positives) / double(denominator) : 0.0;
}

void keep_scores(const std::vector<double>& fold_scores, bool top_only, uint32_t* top,
                 DocScores* lists, size_t max_kept) {
  if (!top_only) {
    keep_best(fold_scores, lists, max_kept);
    return;
  }
  *top = kNoCategory;
  double top_score = 0.0;
  for (uint32_t c = 0; c < fold_scores.size(); ++c) {
    if (fold_scores[c] > top_score) {
      top_score = fold_scores[c];
      *top = c;
    }
  }
}

double top_accuracy(const TrainingCorpus& corpus, const std::vector<uint32_t>& top) {
  uint64_t correct = 0, labelled = 0;
  for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
    if (corpus.doc_categories[d].empty()) continue;
    ++labelled;
    if (top[d] != kNoCategory && has_label(corpus, d, top[d])) ++correct;
  }
  return labelled ? double(correct) / double(labelled) : 0.0;
}

std::vector<bool> candidates_in_contention(const TrainingCorpus& corpus,
                                           const std::vector<uint8_t>& scored,
                                           const std::vector<const std::vector<uint32_t>*>& tops) {
  const auto right = [&](const std::vector<uint32_t>& top, uint32_t d) {
    return top[d] != kNoCategory && has_label(corpus, d, top[d]);
  };
  size_t best = tops.size();
  uint64_t best_correct = 0;
  for (size_t i = 0; i < tops.size(); ++i) {
    if (tops[i] == nullptr) continue;
    uint64_t correct = 0;
    for (uint32_t d = 0; d < corpus.num_docs(); ++d) correct += scored[d] && right(*tops[i], d);
    if (best == tops.size() || correct > best_correct) {
      best = i;
      best_correct = correct;
    }
  }
  std::vector<bool> in(tops.size(), true);
  if (best == tops.size()) return in;
  for (size_t i = 0; i < tops.size(); ++i) {
    if (tops[i] == nullptr || i == best) continue;
    uint64_t only_best = 0, only_this = 0;
    for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
      if (!scored[d]) continue;
      const bool best_right = right(*tops[best], d), this_right = right(*tops[i], d);
      only_best += best_right && !this_right;
      only_this += this_right && !best_right;
    }
    const double discordant = double(only_best + only_this);
    in[i] = discordant == 0 ||
            (double(only_best) - double(only_this)) < kPruneZ * std::sqrt(discordant);
  }
  return in;
}

std::vector<float> score_matrix(const TrainingCorpus& corpus, const ScoreLists& lists) {
  const uint32_t num_categories = corpus.num_categories();
  std::vector<float> matrix(size_t(corpus.num_docs()) * num_categories, 0.0f);
  for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
    for (const ScoredCategory& entry : lists[d].best) {
      matrix[size_t(d) * num_categories + entry.category] = static_cast<float>(entry.score);
    }
  }
  return matrix;
}

}  // namespace autocat::internal
