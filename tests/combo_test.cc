// Calibration (calibration.h), combo (combo.h) and the reliability table.
#include "classify/methods/combo.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

#include "autocat/error.h"
#include "classify/decide/categorizer.h"
#include "classify/methods/calibration.h"
#include "classify/methods/linear.h"
#include "classify/metrics/evaluation.h"
#include "classify/metrics/reliability_plot.h"
#include "classify/model/model_io.h"
#include "classify/train/trainer.h"
#include "test_util.h"
#include "trained_fixture.h"

namespace autocat::internal {
namespace {

double binary_log_loss(const std::vector<double>& p, const std::vector<uint8_t>& y) {
  double total = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    total -= std::log(std::clamp(y[i] ? p[i] : 1 - p[i], 1e-15, 1.0));
  }
  return total / double(p.size());
}

// One category; a raw score whose true probability of the label is s^2
// (so the raw score overstates it): calibration learns the map.
TEST(CalibrationTest, MapsOverconfidentScoresToObservedFrequencies) {
  std::mt19937 generator(7);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<float> scores;
  std::vector<uint8_t> use, positive;
  for (int i = 0; i < 4000; ++i) {
    const double s = uniform(generator);
    scores.push_back(static_cast<float>(s));
    use.push_back(1);
    positive.push_back(uniform(generator) < s * s ? 1 : 0);
  }
  const Calibration calibration = fit_calibration(scores, use, positive, 1);
  ASSERT_EQ(calibration.slope.size(), 1u);
  EXPECT_GT(calibration.slope[0], 0.0f);
  std::vector<double> raw(scores.begin(), scores.end()), calibrated;
  for (double s : raw) {
    std::vector<double> one = {s};
    apply_calibration(calibration, Decision::kAnyOf, &one);
    calibrated.push_back(one[0]);
  }
  // Increasing in the raw score, and better log-loss than the raw score.
  double previous = -1;
  for (double s : {0.05, 0.2, 0.4, 0.6, 0.8, 0.95}) {
    std::vector<double> one = {s};
    apply_calibration(calibration, Decision::kAnyOf, &one);
    EXPECT_GT(one[0], previous) << s;
    previous = one[0];
  }
  EXPECT_LT(binary_log_loss(calibrated, positive), binary_log_loss(raw, positive) - 0.02);
  // Around s = 0.5 the label is seen a quarter of the time.
  std::vector<double> half = {0.5};
  apply_calibration(calibration, Decision::kAnyOf, &half);
  EXPECT_NEAR(half[0], 0.25, 0.06);
}

TEST(CalibrationTest, OneOfScoresSumToOneAndEmptyCalibrationKeepsScores) {
  Calibration calibration;
  calibration.slope = {1.0f, 2.0f, 0.5f};
  calibration.intercept = {0.0f, -1.0f, 0.3f};
  std::vector<double> scores = {0.7, 0.2, 0.0};
  apply_calibration(calibration, Decision::kOneOf, &scores);
  EXPECT_NEAR(std::accumulate(scores.begin(), scores.end(), 0.0), 1.0, 1e-12);
  EXPECT_GT(scores[2], 0.0);  // a raw 0 is a small probability, not none
  // One-of: one shared increasing map, so the order of categories is kept
  // (per-category sigmoids could put category 2 first here).
  EXPECT_GT(scores[0], scores[1]);
  EXPECT_GT(scores[1], scores[2]);
  calibration.intercept = {-5.0f, -5.0f, 5.0f};
  std::vector<double> any_of = {0.7, 0.2, 0.3};
  apply_calibration(calibration, Decision::kAnyOf, &any_of);
  EXPECT_GT(any_of[2], any_of[0]);  // any-of: each category its own yes/no question
  std::vector<double> raw = {0.7, 0.2, 0.0};
  apply_calibration(Calibration(), Decision::kOneOf, &raw);
  EXPECT_EQ(raw, (std::vector<double>{0.7, 0.2, 0.0}));
  EXPECT_EQ(clamped_logit(0.0), -kMaxLogit);
  EXPECT_EQ(clamped_logit(1.0), kMaxLogit);
}

// Two members over two categories: one informative, one noise. combo puts
// its weight on the informative one and beats both on log-loss.
TEST(ComboTest, LearnsToTrustTheInformativeMember) {
  std::mt19937 generator(3);
  std::normal_distribution<double> noise(0.0, 1.0);
  const uint32_t docs = 3000, categories = 2;
  std::vector<std::vector<float>> logits(2, std::vector<float>(docs * categories));
  std::vector<uint8_t> use(docs, 1), positive(docs * categories, 0);
  for (uint32_t d = 0; d < docs; ++d) {
    const uint32_t truth = d % 2;
    positive[d * categories + truth] = 1;
    for (uint32_t c = 0; c < categories; ++c) {
      const double signal = c == truth ? 1.5 : -1.5;
      logits[0][d * categories + c] = static_cast<float>(signal + noise(generator));
      logits[1][d * categories + c] = static_cast<float>(noise(generator));
    }
  }
  const std::vector<Method> members = {Method::kKnn, Method::kRocchio};
  const ComboModel model = fit_combo(members, logits, use, positive, categories);
  ASSERT_EQ(model.weights.size(), categories * model.stride());
  for (uint32_t c = 0; c < categories; ++c) {
    EXPECT_GT(model.weights[c * model.stride() + 0], 0.5f);
    EXPECT_LT(std::fabs(model.weights[c * model.stride() + 1]), 0.2f);
  }
  // Log-loss of the true category (one-of) against each member alone.
  double combo_loss = 0, member_loss[2] = {0, 0};
  std::vector<std::vector<double>> row(2, std::vector<double>(categories));
  std::vector<double> scores(categories);
  for (uint32_t d = 0; d < docs; ++d) {
    for (size_t m = 0; m < 2; ++m) {
      double total = 0;
      for (uint32_t c = 0; c < categories; ++c) {
        row[m][c] = logits[m][d * categories + c];
        total += sigmoid(row[m][c]);
      }
      member_loss[m] -= std::log(sigmoid(row[m][d % 2]) / total);
    }
    combo_probabilities(model, Decision::kOneOf, row, &scores);
    EXPECT_NEAR(scores[0] + scores[1], 1.0, 1e-12);
    combo_loss -= std::log(scores[d % 2]);
  }
  EXPECT_LT(combo_loss, member_loss[0]);
  EXPECT_LT(combo_loss, member_loss[1]);
}

TEST(ReliabilityTest, BinsPredictionsAndMeasuresCalibrationError) {
  Reliability reliability(10);
  // Bin 0.1-0.2: four predictions of 0.15, one observed.
  for (int i = 0; i < 4; ++i) reliability.add(0.15, i == 0);
  // Bin 0.9-1.0 (1.0 belongs to the last bin): two of 1.0, both observed.
  reliability.add(1.0, true);
  reliability.add(1.0, true);
  const std::vector<Reliability::Bin> bins = reliability.bins();
  ASSERT_EQ(bins.size(), 10u);
  EXPECT_EQ(reliability.pairs(), 6u);
  EXPECT_EQ(bins[1].pairs, 4u);
  EXPECT_NEAR(bins[1].mean_predicted, 0.15, 1e-12);
  EXPECT_NEAR(bins[1].observed, 0.25, 1e-12);
  EXPECT_EQ(bins[9].pairs, 2u);
  EXPECT_DOUBLE_EQ(bins[9].upper, 1.0);
  EXPECT_NEAR(bins[9].observed, 1.0, 1e-12);
  EXPECT_EQ(bins[0].pairs, 0u);
  EXPECT_NEAR(reliability.expected_calibration_error(), 4.0 / 6.0 * 0.1, 1e-12);
  EXPECT_EQ(reliability_plot_path("out/confusion.html"), "out/confusion-reliability.svg");
}

// eval's three views of calibration: the top label (one prediction per
// document), each category on its own, and all pairs pooled.
TEST(ReliabilityTest, TopLabelAndPerCategoryCalibration) {
  CalibrationReport calibration(3, 10);
  // Four documents of category 0, scored 0.7 / 0.2 / 0.1: the best is right
  // three times in four (observed 0.75 against 0.7 predicted).
  for (int d = 0; d < 4; ++d) {
    calibration.add({0.7, 0.2, 0.1}, {static_cast<uint32_t>(d == 3 ? 1 : 0)});
  }
  // Ties go to the first category: scored 0.5 / 0.5 / 0, labelled 1.
  calibration.add({0.5, 0.5, 0.0}, {1});
  const Reliability& top = calibration.top_label();
  EXPECT_EQ(top.pairs(), 5u);
  const std::vector<Reliability::Bin> bins = top.bins();
  EXPECT_EQ(bins[7].pairs, 4u);
  EXPECT_NEAR(bins[7].observed, 0.75, 1e-12);
  EXPECT_EQ(bins[5].pairs, 1u);
  EXPECT_NEAR(bins[5].observed, 0.0, 1e-12);
  EXPECT_NEAR(top.expected_calibration_error(), (4 * 0.05 + 1 * 0.5) / 5, 1e-12);
  EXPECT_EQ(calibration.pooled().pairs(), 15u);
  // Category 0: 0.7 x4 with 3 observed (0.05 off), 0.5 not (0.5 off);
  // category 1: 0.2 x4 with 1 observed (0.05), 0.5 observed (0.5);
  // category 2: 0.1 x4 and 0 x1, never observed (0.4 / 5 = 0.08).
  const double category0 = (4 * 0.05 + 0.5) / 5, category1 = (4 * 0.05 + 0.5) / 5,
               category2 = (4 * 0.1 + 0.0) / 5;
  EXPECT_EQ(calibration.categories_with_pairs(), 3u);
  EXPECT_NEAR(calibration.per_category_expected_calibration_error(),
              (category0 + category1 + category2) / 3, 1e-12);
  // The diagram shows the top label, with the pooled pairs as a line.
  const std::string svg = reliability_svg(calibration, "test <plot>");
  EXPECT_NE(svg.find("test &lt;plot&gt;"), std::string::npos);
  EXPECT_NE(svg.find("top label: expected calibration error 14.00% over 5 documents"),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
  EXPECT_NE(svg.find("0.75, 4 documents"), std::string::npos) << svg;
}

// A model trained on the small fixture: every method calibrated, combo
// fitted, both kept in the model file; scores are probabilities.
class ComboModelTest : public testing_util::TrainedFixtureTest {};

TEST_F(ComboModelTest, EveryMethodIsCalibratedAndComboIsFitted) {
  const ModelState& model = categorizer_->model();
  ASSERT_EQ(model.calibration.size(), all_methods().size());
  for (Method method : combo_members()) {
    EXPECT_FALSE(model.calibration[size_t(method)].empty()) << method_name(method);
    EXPECT_TRUE(categorizer_->gives_probabilities(method)) << method_name(method);
  }
  EXPECT_TRUE(model.calibration[size_t(Method::kCombo)].empty());
  ASSERT_FALSE(model.combo.empty());
  EXPECT_EQ(model.combo.members.size(), combo_members().size());
  EXPECT_EQ(model.combo.num_categories, categorizer_->categories().size());
  ASSERT_EQ(model.thresholds.size(), all_methods().size());
  EXPECT_EQ(model.thresholds[size_t(Method::kCombo)].size(), categorizer_->categories().size());
}

TEST_F(ComboModelTest, ComboScoresAreProbabilitiesAndFindTheTopic) {
  ClassifyOptions options;
  options.method = Method::kCombo;
  options.decision = Decision::kOneOf;
  const DocumentTerms doc = categorizer_->document_terms(
      categorizer_->analyzer().analyze("the team scored a late goal to win the match"));
  const std::vector<double> scores = categorizer_->scores(doc, options);
  EXPECT_NEAR(std::accumulate(scores.begin(), scores.end(), 0.0), 1.0, 1e-9);
  for (double score : scores) EXPECT_TRUE(score > 0 && score < 1) << score;
  const std::vector<Category> assigned = categorizer_->decide(scores, options);
  ASSERT_EQ(assigned.size(), 1u);
  EXPECT_EQ(assigned[0].name, "sports");
  // No known term: no evidence, all zeros, as for every method.
  const DocumentTerms unknown =
      categorizer_->document_terms(categorizer_->analyzer().analyze("zyxwv plorble"));
  for (double score : categorizer_->scores(unknown, options)) EXPECT_EQ(score, 0.0);
}

TEST_F(ComboModelTest, OneOfCalibrationKeepsEachMethodsBestCategory) {
  const DocumentTerms doc = categorizer_->document_terms(
      categorizer_->analyzer().analyze("the oven baked bread while the team won the match"));
  for (Method method : combo_members()) {
    ClassifyOptions options;
    options.method = method;
    options.decision = Decision::kOneOf;
    std::vector<double> raw(categorizer_->categories().size());
    categorizer_->classifier(method).score(doc, options, &raw);
    const std::vector<double> calibrated = categorizer_->scores(doc, options);
    EXPECT_EQ(std::max_element(raw.begin(), raw.end()) - raw.begin(),
              std::max_element(calibrated.begin(), calibrated.end()) - calibrated.begin())
        << method_name(method);
  }
}

TEST_F(ComboModelTest, CalibrationAndComboSurviveTheModelFile) {
  const ModelState reread = read_model_file(categorizer_->paths().model_file);
  const ModelState& model = categorizer_->model();
  ASSERT_EQ(reread.calibration.size(), model.calibration.size());
  for (size_t m = 0; m < model.calibration.size(); ++m) {
    EXPECT_EQ(reread.calibration[m].slope, model.calibration[m].slope);
    EXPECT_EQ(reread.calibration[m].intercept, model.calibration[m].intercept);
  }
  EXPECT_EQ(reread.combo.members, model.combo.members);
  EXPECT_EQ(reread.combo.weights, model.combo.weights);
}

TEST_F(ComboModelTest, AnInconsistentComboIsRefused) {
  ModelState broken = categorizer_->model();
  broken.combo.weights.pop_back();
  const std::string path = dir_->file("broken.autocat");
  write_model_file(path, broken);
  EXPECT_THROW(read_model_file(path), ModelFormatError);
}

}  // namespace
}  // namespace autocat::internal
