// fit_calibrations(): each method's calibration on its out-of-fold scores,
// its thresholds moved onto the calibrated scale, and combo stacked on the
// calibrated members.

#include <algorithm>
#include <cmath>
#include <vector>

#include "classify/base/parallel.h"
#include "classify/corpus/folds.h"
#include "classify/methods/calibration.h"
#include "classify/methods/combo.h"
#include "classify/train/thresholds.h"
#include "classify/train/tune_scores.h"

namespace autocat::internal {

void fit_calibrations(const TrainingCorpus& corpus, const std::vector<uint8_t>& scored,
                      Decision decision, const std::vector<std::vector<float>>& member_scores,
                      TunedSettings* tuned, bool fit_combo_too) {
  const uint32_t num_categories = corpus.num_categories();
  const size_t cells = size_t(corpus.num_docs()) * num_categories;
  std::vector<uint8_t> positive(cells, 0);
  for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
    for (uint32_t c : corpus.doc_categories[d]) positive[size_t(d) * num_categories + c] = 1;
  }
  tuned->calibration.assign(all_methods().size(), Calibration());
  tuned->thresholds.resize(all_methods().size());
  std::vector<std::vector<float>> logits(combo_members().size());
  for (size_t m = 0; m < combo_members().size(); ++m) {
    if (!member_scores[m].empty()) logits[m].assign(cells, 0.0f);
  }
  // The members are independent: each on a thread of its own.
  parallel_for(combo_members().size(), [&](size_t m) {
    if (member_scores[m].empty()) return;  // not cross-validated: raw scores
    std::vector<double> scores(num_categories);
    ScoreLists lists(corpus.num_docs());
    const auto slot = static_cast<size_t>(combo_members()[m]);
    const std::vector<float>& raw = member_scores[m];
    Calibration& calibration = tuned->calibration[slot];
    calibration = fit_calibration(raw, scored, positive, num_categories);
    // Thresholds on the calibrated scores, as scores() will report them.
    for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
      lists[d] = DocScores();
      if (!scored[d]) continue;
      const auto row = raw.begin() + ptrdiff_t(d) * num_categories;
      scores.assign(row, row + num_categories);
      for (uint32_t c = 0; c < num_categories; ++c) {
        logits[m][size_t(d) * num_categories + c] =
            static_cast<float>(calibrated_logit(calibration, c, scores[c]));
      }
      apply_calibration(calibration, decision, &scores);
      keep_best(scores, &lists[d]);
    }
    if (decision == Decision::kAnyOf) {
      // Any-of: each category's sigmoid is increasing, so mapping its cut
      // through it decides exactly as the raw cut did. Re-tuning on the
      // calibrated scores instead cost Reuters' macro-F1 (kNN 0.51 -> 0.49,
      // Rocchio 0.57 -> 0.49): rare categories take the median cut of the
      // others, which transfers across categories as a raw score but not
      // as a probability.
      // Where the clamp of extreme scores (bnb's posteriors of 1e-300)
      // merges scores on both sides of the cut, the mapped cut decides
      // otherwise on the clamped out-of-fold documents: that category's
      // cut is tuned on the calibrated scores instead (Reuters bnb micro-F1
      // 0.31 -> 0.71).
      std::vector<double> retuned;
      for (uint32_t c = 0; c < num_categories; ++c) {
        double& cut = tuned->thresholds[slot][c];
        if (cut >= kNeverAssign) continue;
        const double mapped = sigmoid(calibrated_logit(calibration, c, cut));
        bool same_decisions = true;
        for (uint32_t d = 0; d < corpus.num_docs() && same_decisions; ++d) {
          if (!scored[d]) continue;
          const size_t cell = size_t(d) * num_categories + c;
          const double raw_score = raw[cell];
          if (std::fabs(clamped_logit(raw_score)) < kMaxLogit) continue;  // not merged
          const bool raw_assigns = raw_score > 0.0 && raw_score >= cut;
          const double calibrated = sigmoid(logits[m][cell]);
          same_decisions = raw_assigns == (calibrated > 0.0 && calibrated >= mapped);
        }
        if (same_decisions) {
          cut = mapped;
        } else {
          if (retuned.empty()) retuned = thresholds_from(corpus, lists);
          cut = retuned[c];
        }
      }
    } else {
      // One-of: the shared sigmoid and the division by the sum are not a
      // per-category map; tune on the calibrated scores.
      tuned->thresholds[slot] = thresholds_from(corpus, lists);
    }
  });
  // The members stacked: those cross-validated, but kNN when its search
  // at the model's size cannot keep up with indexing.
  std::vector<Method> stacked;
  std::vector<std::vector<float>> stacked_logits;
  for (size_t m = 0; m < combo_members().size(); ++m) {
    if (member_scores[m].empty()) continue;
    if (!tuned->knn_keeps_up && combo_members()[m] == Method::kKnn) continue;
    stacked.push_back(combo_members()[m]);
    stacked_logits.push_back(std::move(logits[m]));
  }
  logits = std::move(stacked_logits);
  if (!fit_combo_too || stacked.size() < 2) return;
  tuned->combo = fit_combo(stacked, logits, scored, positive, num_categories);
  // combo's thresholds on its own out-of-fold scores (fitted on these same
  // documents: a few weights per category, so little optimism).
  ScoreLists lists(corpus.num_docs());
  // Document d's combo scores under `combo` into lists[d].
  const auto score_combo = [&](const ComboModel& combo, uint32_t d,
                               std::vector<std::vector<double>>* document_logits,
                               std::vector<double>* scores) {
    lists[d] = DocScores();
    if (!scored[d]) return;
    for (size_t m = 0; m < stacked.size(); ++m) {
      for (uint32_t c = 0; c < num_categories; ++c) {
        (*document_logits)[m][c] = logits[m][size_t(d) * num_categories + c];
      }
    }
    combo_probabilities(combo, decision, *document_logits, scores);
    keep_best(*scores, &lists[d]);
  };
  const auto document_buffers = [&] {
    return std::vector<std::vector<double>>(stacked.size(), std::vector<double>(num_categories));
  };
  {
    std::vector<std::vector<double>> document_logits = document_buffers();
    std::vector<double> scores(num_categories);
    for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
      score_combo(tuned->combo, d, &document_logits, &scores);
    }
  }
  tuned->thresholds[static_cast<size_t>(Method::kCombo)] = thresholds_from(corpus, lists);

  // combo's objective, to compete for the default method: the stacked model
  // is fitted on the very scores the objective reads, so it is judged
  // cross-fitted instead: fitted on all folds but one, scored on that one
  // (the folds on every core; each writes its own documents' lists).
  tuned->method_objective.resize(all_methods().size(), -1.0);
  const std::vector<uint32_t> fold = round_robin_folds(corpus.num_docs(), kComboObjectiveFolds);
  parallel_for(kComboObjectiveFolds, [&](size_t held_out) {
    std::vector<uint8_t> fit_on(scored.size());
    for (uint32_t d = 0; d < corpus.num_docs(); ++d) fit_on[d] = scored[d] && fold[d] != held_out;
    const ComboModel fold_combo = fit_combo(stacked, logits, fit_on, positive, num_categories);
    std::vector<std::vector<double>> document_logits = document_buffers();
    std::vector<double> scores(num_categories);
    for (auto d = static_cast<uint32_t>(held_out); d < corpus.num_docs();
         d += kComboObjectiveFolds) {
      score_combo(fold_combo, d, &document_logits, &scores);
    }
  });
  tuned->method_objective[static_cast<size_t>(Method::kCombo)] =
      objective(corpus, lists, thresholds_from(corpus, lists), decision);
}

}  // namespace autocat::internal
