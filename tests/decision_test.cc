// Tests of the decision rules (one-of, one-of with "other", any-of, minimum
// score, tuned thresholds) and of the decision mode a model is trained for.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "classify/decide/categorizer.h"
#include "classify/train/thresholds.h"
#include "classify/train/trainer.h"
#include "tests/test_util.h"

namespace autocat::internal {
namespace {

using testing_util::split;

// A small corpus with categories a, b, c, fitted in memory.
std::vector<LabelledTerms> documents(bool multi_label, bool unlabelled) {
  std::vector<LabelledTerms> docs;
  for (int i = 0; i < 6; ++i) {
    docs.push_back({split("apple apricot avocado"), {"a"}});
    docs.push_back({split("banana blueberry"), {"b"}});
    docs.push_back({split("cherry coconut"), {"c"}});
  }
  if (multi_label) docs.push_back({split("apple banana"), {"a", "b"}});
  if (unlabelled) docs.push_back({split("zucchini"), {}});
  return docs;
}

std::unique_ptr<Categorizer> fitted(const std::vector<LabelledTerms>& docs,
                                    TrainOptions options = TrainOptions()) {
  auto corpus = std::make_shared<const TrainingCorpus>(make_training_corpus(docs));
  ModelState model = fit_model(*corpus, resolve_analyzer_options(AnalyzerOptions()), options);
  return std::make_unique<Categorizer>(std::move(model), corpus);
}

TEST(DecisionModeTest, DetectedFromTheTrainingData) {
  const auto single = fitted(documents(false, false));
  EXPECT_EQ(single->model().decision, Decision::kOneOf);
  EXPECT_FALSE(single->model().has_unlabelled);
  EXPECT_EQ(single->decision_mode(ClassifyOptions()), Decision::kOneOf);
  EXPECT_FALSE(single->other_enabled(ClassifyOptions()));

  const auto multi = fitted(documents(true, false));
  EXPECT_EQ(multi->model().decision, Decision::kAnyOf);

  // Documents labelled "no category" make the model any-of with "other".
  const auto with_none = fitted(documents(false, true));
  EXPECT_EQ(with_none->model().decision, Decision::kAnyOf);
  EXPECT_TRUE(with_none->model().has_unlabelled);
  EXPECT_TRUE(with_none->other_enabled(ClassifyOptions()));
}

TEST(DecisionModeTest, TrainingOptionAndClassifyOptionOverrideDetection) {
  TrainOptions options;
  options.decision = Decision::kOneOf;
  const auto forced = fitted(documents(true, false), options);
  EXPECT_EQ(forced->model().decision, Decision::kOneOf);
  ClassifyOptions classify;
  classify.decision = Decision::kAnyOf;
  EXPECT_EQ(forced->decision_mode(classify), Decision::kAnyOf);
  classify.other = false;
  const auto with_none = fitted(documents(false, true));
  EXPECT_FALSE(with_none->other_enabled(classify));
}

// Decisions over hand-set scores and thresholds (categories a, b, c, d).
class DecisionRuleTest : public testing::Test {
 protected:
  void SetUp() override {
    std::vector<LabelledTerms> docs = documents(false, false);
    for (int i = 0; i < 6; ++i) docs.push_back({split("date durian"), {"d"}});
    auto corpus = std::make_shared<const TrainingCorpus>(make_training_corpus(docs));
    TrainOptions options;
    options.tune_thresholds = false;
    ModelState model = fit_model(*corpus, resolve_analyzer_options(AnalyzerOptions()), options);
    // Rocchio thresholds: a 0.6, b 0.3, c 0.05, d never.
    model.thresholds.assign(all_methods().size(), std::vector<double>(4, 0.5));
    model.thresholds[static_cast<size_t>(Method::kRocchio)] = {0.6, 0.3, 0.05, kNeverAssign};
    categorizer_ = std::make_unique<Categorizer>(std::move(model), corpus);
    options_.method = Method::kRocchio;
  }

  std::vector<std::string> names(const std::vector<double>& scores) const {
    std::vector<std::string> out;
    for (const Category& category : categorizer_->decide(scores, options_)) {
      out.push_back(category.name);
    }
    return out;
  }

  std::unique_ptr<Categorizer> categorizer_;
  ClassifyOptions options_;
  const std::vector<double> scores_ = {0.5, 0.4, 0.1, 0.9};  // a b c d
};

TEST_F(DecisionRuleTest, OneOfTakesTheBestWhateverItsThreshold) {
  options_.decision = Decision::kOneOf;
  options_.other = false;
  EXPECT_EQ(names(scores_), (std::vector<std::string>{"d"}));
  const DecisionTrace trace = categorizer_->explain_decision(scores_, options_);
  EXPECT_EQ(trace.reason, "best score");
  // The minimum score still applies.
  options_.min_score = 0.95;
  EXPECT_TRUE(names(scores_).empty());
  EXPECT_EQ(categorizer_->explain_decision(scores_, options_).reason,
            "none: the best category is under the minimum score; the best, d, scored 0.9 < "
            "0.95");
}

TEST_F(DecisionRuleTest, OtherChoosesTheBestWithinItsRadius) {
  options_.decision = Decision::kOneOf;
  options_.other = true;
  // d (0.9) can never be assigned, a (0.5) is under 0.6: b (0.4 >= 0.3) wins.
  EXPECT_EQ(names(scores_), (std::vector<std::string>{"b"}));
  const DecisionTrace trace = categorizer_->explain_decision(scores_, options_);
  EXPECT_TRUE(trace.other);
  EXPECT_TRUE(trace.tuned);
  EXPECT_EQ(trace.reason,
            "best-scoring category within its radius; d scored higher but not enough");
  ASSERT_EQ(trace.candidates.size(), 4u);
  EXPECT_EQ(trace.candidates[0].name, "d");
  EXPECT_EQ(trace.candidates[0].threshold, kNeverAssign);
  EXPECT_FALSE(trace.candidates[0].assigned);
  EXPECT_TRUE(trace.candidates[2].assigned);  // b, third by score

  // Outside every radius: "other".
  const std::vector<double> far = {0.2, 0.1, 0.01, 0.3};
  EXPECT_TRUE(names(far).empty());
  EXPECT_EQ(categorizer_->explain_decision(far, options_).reason,
            "other: no category reached its radius; the best, d, scored 0.3 but too few "
            "training examples calibrate it");
}

TEST_F(DecisionRuleTest, AnyOfTakesEveryCategoryOverItsThreshold) {
  options_.decision = Decision::kAnyOf;
  EXPECT_EQ(names(scores_), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(categorizer_->explain_decision(scores_, options_).reason,
            "2 categories reached their radius");
  // The minimum score applies on top of the tuned thresholds.
  options_.min_score = 0.2;
  EXPECT_EQ(names(scores_), (std::vector<std::string>{"b"}));
  // Without tuned thresholds the minimum score alone decides.
  options_.tuned_thresholds = false;
  EXPECT_EQ(names(scores_), (std::vector<std::string>{"d", "a", "b"}));
  options_.max_categories = 2;
  EXPECT_EQ(names(scores_), (std::vector<std::string>{"d", "a"}));
  EXPECT_EQ(categorizer_->explain_decision(scores_, options_).reason,
            "2 categories reached the minimum score; capped at 2");
}

// A score exactly at a threshold reaches it, both for a tuned threshold and
// for the minimum score (the documented rule is score >= threshold).
TEST_F(DecisionRuleTest, ScoreEqualToTheThresholdReachesIt) {
  options_.decision = Decision::kAnyOf;
  // Rocchio radii: a 0.6, b 0.3, c 0.05, d never.
  EXPECT_EQ(names({0.6, 0.3, 0.05, 0.9}), (std::vector<std::string>{"a", "b", "c"}));
  options_.decision = Decision::kOneOf;
  options_.other = true;
  EXPECT_EQ(names({0.6, 0.2, 0.01, 0.9}), (std::vector<std::string>{"a"}));
  options_.tuned_thresholds = false;
  options_.min_score = 0.4;
  EXPECT_EQ(names({0.1, 0.4, 0.2, 0.3}), (std::vector<std::string>{"b"}));
  options_.decision = Decision::kAnyOf;
  EXPECT_EQ(names({0.4, 0.4, 0.39, 0.0}), (std::vector<std::string>{"a", "b"}));
}

TEST_F(DecisionRuleTest, NoEvidenceNoCategoryUnlessPlainOneOf) {
  const std::vector<double> zeros(4, 0.0);
  options_.decision = Decision::kAnyOf;
  EXPECT_TRUE(names(zeros).empty());
  EXPECT_EQ(categorizer_->explain_decision(zeros, options_).reason,
            "no category scored above 0 (no evidence)");
  options_.decision = Decision::kOneOf;
  options_.other = true;
  EXPECT_TRUE(names(zeros).empty());
  // A minimum score the user set is still a minimum.
  options_.other = false;
  options_.min_score = 0.1;
  EXPECT_TRUE(names(zeros).empty());
}

TEST_F(DecisionRuleTest, PlainOneOfTakesTheBestEvenWithoutAPositiveScore) {
  options_.decision = Decision::kOneOf;
  options_.other = false;
  const std::vector<double> negative = {-0.5, -0.2, -0.9, -0.3};  // e.g. linear margins
  EXPECT_EQ(names(negative), (std::vector<std::string>{"b"}));
  const DecisionTrace trace = categorizer_->explain_decision(negative, options_);
  EXPECT_EQ(trace.reason, "best score (none above 0; one-of assigns one)");
  ASSERT_FALSE(trace.candidates.empty());
  EXPECT_EQ(trace.candidates[0].name, "b");
  EXPECT_TRUE(trace.candidates[0].assigned);
}

// One-of without "other" gives every document a category: with no
// evidence at all, the one with the most training documents.
TEST(DecisionPriorTest, NoEvidenceOneOfTakesTheMostFrequentCategory) {
  std::vector<LabelledTerms> docs = documents(false, false);
  for (int i = 0; i < 3; ++i) docs.push_back({split("cherry"), {"c"}});
  const auto categorizer = fitted(docs);
  ClassifyOptions options;
  ASSERT_EQ(categorizer->decision_mode(options), Decision::kOneOf);
  ASSERT_FALSE(categorizer->other_enabled(options));
  const std::vector<double> zeros(3, 0.0);
  const std::vector<Category> assigned = categorizer->decide(zeros, options);
  ASSERT_EQ(assigned.size(), 1u);
  EXPECT_EQ(assigned[0].name, "c");
  const DecisionTrace trace = categorizer->explain_decision(zeros, options);
  EXPECT_EQ(trace.reason,
            "no evidence (no known term, or every score 0): the most frequent training "
            "category, as one-of assigns one");
  // A text of unknown words goes the same way, whatever the method.
  for (Method method : all_methods()) {
    options.method = method;
    const std::vector<Category> got = categorizer->classify("zzz unknown words", options);
    ASSERT_EQ(got.size(), 1u) << method_name(method);
    EXPECT_EQ(got[0].name, "c") << method_name(method);
  }
}

// Overlapping categories of unequal size: words drawn mostly from the
// category's own 12 and partly from a shared pool, so that the candidates of
// k, vote power and gamma score differently (on cleanly separated
// categories all would score 1 and any choice would look like the best).
std::vector<LabelledTerms> noisy_documents() {
  std::mt19937 rng(20261123);
  std::vector<LabelledTerms> docs;
  const int sizes[] = {40, 20, 10};
  for (int round = 0; round < 40; ++round) {
    for (int c = 0; c < 3; ++c) {
      if (round >= sizes[c]) continue;
      LabelledTerms doc;
      for (int i = 0; i < 6; ++i) {
        const bool own = rng() % 10 < 4;
        doc.terms.push_back(own ? "c" + std::to_string(c) + "w" + std::to_string(rng() % 12)
                                : "shared" + std::to_string(rng() % 30));
      }
      doc.labels = {"cat" + std::to_string(c)};
      docs.push_back(std::move(doc));
    }
  }
  return docs;
}

// Every (tf, concentration, power, k) and gamma candidate is scored, and the
// chosen one is the first (smallest, fastest) of those with the best
// objective.
TEST(TunedSettingsTest, CrossValidationChoosesTheBestCandidate) {
  const TrainingCorpus corpus = make_training_corpus(noisy_documents());
  const size_t per_weighting = 2 * knn_k_candidates().size();
  const size_t concentrations = knn_concentration_candidates().size();
  const size_t grid = knn_tf_candidates().size() * concentrations * per_weighting;
  for (Decision decision : {Decision::kOneOf, Decision::kAnyOf}) {
    const TunedSettings tuned = tune_settings(corpus, TrainOptions(), decision);
    ASSERT_EQ(tuned.thresholds.size(), all_methods().size());
    // The grid, then smaller k while the best sits at its low edge.
    ASSERT_GE(tuned.knn_objective.size(), grid);
    for (size_t i = 0; i < grid; ++i) {
      EXPECT_EQ(tuned.knn_objective[i].concentration,
                knn_concentration_candidates()[i / per_weighting % concentrations]);
      EXPECT_EQ(tuned.knn_objective[i].tf,
                knn_tf_candidates()[i / (per_weighting * concentrations)]);
    }
    for (size_t i = grid; i < tuned.knn_objective.size(); ++i) {
      EXPECT_LT(tuned.knn_objective[i].k, knn_k_candidates().front());
      EXPECT_EQ(tuned.knn_objective[i].concentration, tuned.knn_concentration);
      EXPECT_EQ(tuned.knn_objective[i].tf, tuned.knn_tf);
    }
    ASSERT_EQ(tuned.rocchio_gamma_objective.size(), rocchio_gamma_candidates().size());
    double best_knn = -1;
    for (const KnnCandidate& candidate : tuned.knn_objective) {
      best_knn = std::max(best_knn, candidate.objective);
    }
    const auto first_best_knn = std::find_if(
        tuned.knn_objective.begin(), tuned.knn_objective.end(),
        [&](const KnnCandidate& candidate) { return candidate.objective == best_knn; });
    EXPECT_EQ(tuned.knn_k, first_best_knn->k);
    EXPECT_EQ(tuned.knn_similarity_power, first_best_knn->similarity_power);
    EXPECT_EQ(tuned.knn_concentration, first_best_knn->concentration);
    EXPECT_EQ(tuned.knn_tf, first_best_knn->tf);
    // The candidates differ, so choosing another one would show.
    const auto worst_knn = std::min_element(
        tuned.knn_objective.begin(), tuned.knn_objective.end(),
        [](const KnnCandidate& a, const KnnCandidate& b) { return a.objective < b.objective; });
    EXPECT_LT(worst_knn->objective, best_knn - 0.01);

    double best_gamma = -1, worst_gamma = 2;
    for (const auto& [gamma, objective] : tuned.rocchio_gamma_objective) {
      best_gamma = std::max(best_gamma, objective);
      worst_gamma = std::min(worst_gamma, objective);
    }
    for (const auto& [gamma, objective] : tuned.rocchio_gamma_objective) {
      if (objective == best_gamma) {
        EXPECT_EQ(tuned.rocchio_gamma, gamma);
        break;
      }
    }
    EXPECT_LT(worst_gamma, best_gamma - 0.01);
  }
}

// Each category's few words are common within it (low idf) while every
// document also carries rare words drawn at random (high idf): by idf alone
// documents sharing a rare word look nearest, whatever their category. The
// relevance-frequency weights lift the category words, and cross-validation,
// which sees both, chooses them.
TEST(TunedSettingsTest, CrossValidationChoosesRelevanceWeightsWhereTheyHelp) {
  std::mt19937 rng(20261126);
  std::vector<LabelledTerms> docs;
  for (int round = 0; round < 40; ++round) {
    for (int c = 0; c < 3; ++c) {
      LabelledTerms doc;
      doc.terms.push_back("c" + std::to_string(c) + "w" + std::to_string(rng() % 3));
      for (int i = 0; i < 4; ++i) doc.terms.push_back("rare" + std::to_string(rng() % 200));
      doc.labels = {"cat" + std::to_string(c)};
      docs.push_back(std::move(doc));
    }
  }
  const TrainingCorpus corpus = make_training_corpus(docs);
  const TunedSettings tuned = tune_settings(corpus, TrainOptions(), Decision::kOneOf);
  EXPECT_GT(tuned.knn_concentration, 0.0);
  double best_idf_alone = -1, best = -1;
  for (const KnnCandidate& candidate : tuned.knn_objective) {
    best = std::max(best, candidate.objective);
    if (candidate.concentration == 0.0) {
      best_idf_alone = std::max(best_idf_alone, candidate.objective);
    }
  }
  EXPECT_GT(best, best_idf_alone + 0.05);
  EXPECT_EQ(tuned.method_objective[static_cast<size_t>(Method::kKnn)], best);
}

// On cleanly separated categories every candidate scores the same; the
// tie goes to the first candidate (the smallest k, linear votes, the
// smallest gamma), not to any later one.
TEST(TunedSettingsTest, TiesKeepTheFirstCandidate) {
  const TrainingCorpus corpus = make_training_corpus(documents(true, true));
  const TunedSettings tuned = tune_settings(corpus, TrainOptions(), Decision::kAnyOf);
  ASSERT_GE(tuned.knn_objective.size(), 2 * knn_k_candidates().size());
  for (size_t i = 0; i < 2 * knn_k_candidates().size(); ++i) {
    ASSERT_EQ(tuned.knn_objective[i].objective, tuned.knn_objective.front().objective);
  }
  for (const auto& [gamma, objective] : tuned.rocchio_gamma_objective) {
    ASSERT_EQ(objective, tuned.rocchio_gamma_objective.front().second);
  }
  EXPECT_EQ(tuned.knn_k, knn_k_candidates().front());
  EXPECT_EQ(tuned.knn_similarity_power, 1);
  EXPECT_EQ(tuned.knn_concentration, knn_concentration_candidates().front());
  EXPECT_EQ(tuned.knn_tf, knn_tf_candidates().front());
  EXPECT_EQ(tuned.rocchio_gamma, rocchio_gamma_candidates().front());
}

TEST(TunedSettingsTest, CrossValidationKeepsSettingsGivenInTheOptions) {
  const TrainingCorpus corpus = make_training_corpus(documents(true, true));
  // Settings given in the options are kept, not searched.
  TrainOptions fixed;
  fixed.knn_k = 7;
  fixed.knn_similarity_power = 1;
  fixed.rocchio_gamma = 0.5;
  fixed.knn_concentration = 0.5;
  const TunedSettings kept = tune_settings(corpus, fixed, Decision::kAnyOf);
  EXPECT_EQ(kept.knn_k, 7);
  EXPECT_EQ(kept.knn_concentration, 0.5);
  EXPECT_EQ(kept.knn_similarity_power, 1);
  EXPECT_EQ(kept.rocchio_gamma, 0.5);
  // The tf transform, not given, is still chosen.
  EXPECT_EQ(kept.knn_objective.size(), knn_tf_candidates().size());
  EXPECT_EQ(kept.rocchio_gamma_objective.size(), 1u);
  // Every Naive Bayes method takes a given alpha as it is.
  fixed.nb_alpha = 0.7;
  const TunedSettings alpha_kept = tune_settings(corpus, fixed, Decision::kAnyOf);
  EXPECT_EQ(alpha_kept.nb_alpha, std::vector<double>(3, 0.7));
  for (const auto& tried : alpha_kept.nb_alpha_objective) EXPECT_EQ(tried.size(), 1u);
}

// Naive Bayes' alpha: every candidate is scored per method, the first best
// is kept, and the best objective of every method is reported for choosing
// the default method.
TEST(TunedSettingsTest, NaiveBayesAlphaAndMethodObjectives) {
  const TrainingCorpus corpus = make_training_corpus(noisy_documents());
  const TunedSettings tuned = tune_settings(corpus, TrainOptions(), Decision::kOneOf);
  ASSERT_EQ(tuned.nb_alpha.size(), 3u);
  ASSERT_EQ(tuned.nb_alpha_objective.size(), 3u);
  for (size_t m = 0; m < 3; ++m) {
    const auto& tried = tuned.nb_alpha_objective[m];
    ASSERT_EQ(tried.size(), nb_alpha_candidates().size());
    const auto best =
        std::max_element(tried.begin(), tried.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    EXPECT_EQ(tuned.nb_alpha[m], best->first) << m;
    EXPECT_EQ(tuned.method_objective[static_cast<size_t>(naive_bayes_methods()[m])], best->second);
  }
  ASSERT_EQ(tuned.method_objective.size(), all_methods().size());
  // combo included: its objective is cross-fitted over the out-of-fold
  // scores its stacked model is fitted on.
  for (Method method : all_methods()) {
    const double objective = tuned.method_objective[static_cast<size_t>(method)];
    EXPECT_GT(objective, 0.3);  // three categories: better than chance
    EXPECT_LE(objective, 1.0);
  }
  double best_knn = 0;
  for (const KnnCandidate& candidate : tuned.knn_objective) {
    best_knn = std::max(best_knn, candidate.objective);
  }
  EXPECT_EQ(tuned.method_objective[static_cast<size_t>(Method::kKnn)], best_knn);
}

// choose_default_method: the model's default is the method with the best
// cross-validated objective; without it the given method stays.
TEST(TunedSettingsTest, DefaultMethodChosenByCrossValidation) {
  const std::vector<LabelledTerms> docs = noisy_documents();
  TrainOptions options;
  options.default_method = Method::kRocchio;
  const auto given = fitted(docs, options);
  EXPECT_EQ(given->default_method(), Method::kRocchio);
  options.choose_default_method = true;
  const auto chosen = fitted(docs, options);
  const std::vector<double>& objective = chosen->model().method_objective;
  ASSERT_EQ(objective.size(), all_methods().size());
  const auto best = std::max_element(objective.begin(), objective.end());
  EXPECT_EQ(chosen->default_method(), all_methods()[static_cast<size_t>(best - objective.begin())]);
}

// A category that cross-validation cannot tell from another gets no
// threshold: its 5 documents read exactly like 30 documents of "a", so at
// best F1 = 2*5 / (35 + 5) = 0.25 < 0.3.
TEST(TunedSettingsTest, IndistinguishableCategoryIsNeverAssigned) {
  std::vector<LabelledTerms> docs;
  for (int i = 0; i < 30; ++i) docs.push_back({split("apple apricot avocado"), {"a"}});
  for (int i = 0; i < 5; ++i) docs.push_back({split("apple apricot avocado"), {"x"}});
  for (int i = 0; i < 30; ++i) docs.push_back({split("banana blueberry"), {"b"}});
  const TrainingCorpus corpus = make_training_corpus(docs);
  const TunedSettings tuned = tune_settings(corpus, TrainOptions(), Decision::kAnyOf);
  const auto x =
      static_cast<size_t>(std::find(corpus.categories.begin(), corpus.categories.end(), "x") -
                          corpus.categories.begin());
  for (Method method : {Method::kKnn, Method::kRocchio}) {
    const std::vector<double>& thresholds = tuned.thresholds[static_cast<size_t>(method)];
    EXPECT_EQ(thresholds[x], kNeverAssign) << method_name(method);
    for (size_t c = 0; c < thresholds.size(); ++c) {
      if (c == x) continue;
      EXPECT_LT(thresholds[c], kNeverAssign) << corpus.categories[c];
    }
  }
}

}  // namespace
}  // namespace autocat::internal
