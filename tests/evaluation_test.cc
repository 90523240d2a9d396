#include "classify/metrics/evaluation.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "autocat/error.h"

namespace autocat::internal {
namespace {

using Row = std::vector<uint64_t>;

// One-of decisions over a, b, c (truth -> assigned):
//   d1 a -> a   d2 a -> a   d3 a -> b   d4 b -> b
//   d5 b -> c   d6 c -> c   d7 c -> none   d8 b -> b
// a: tp 2 (d1 d2), fp 0, fn 1 (d3)  P = 1,   R = 2/3, F1 = 0.8
// b: tp 2 (d4 d8), fp 1 (d3), fn 1 (d5)  P = 2/3, R = 2/3, F1 = 2/3
// c: tp 1 (d6), fp 1 (d5), fn 1 (d7)  P = 1/2, R = 1/2, F1 = 1/2
// micro: tp 5, fp 2, fn 3  P = 5/7, R = 5/8, F1 = 2*5 / (2*5 + 2 + 3) = 2/3
// macro F1 = (0.8 + 2/3 + 1/2) / 3 = 59/90; accuracy = 5/8.
class EvaluationTest : public testing::Test {
 protected:
  EvaluationTest() : evaluation_({"a", "b", "c"}) {
    evaluation_.add({0}, {0});
    evaluation_.add({0}, {0});
    evaluation_.add({0}, {1});
    evaluation_.add({1}, {1});
    evaluation_.add({1}, {2});
    evaluation_.add({2}, {2});
    evaluation_.add({2}, {});
    evaluation_.add({1}, {1});
  }
  Evaluation evaluation_;
};

TEST_F(EvaluationTest, OneOfAccuracyAndAverages) {
  EXPECT_EQ(evaluation_.documents(), 8u);
  EXPECT_DOUBLE_EQ(evaluation_.accuracy(), 5.0 / 8);
  EXPECT_DOUBLE_EQ(evaluation_.micro_precision(), 5.0 / 7);
  EXPECT_DOUBLE_EQ(evaluation_.micro_recall(), 5.0 / 8);
  EXPECT_DOUBLE_EQ(evaluation_.micro_f1(), 2.0 / 3);
  EXPECT_DOUBLE_EQ(evaluation_.macro_f1(), 59.0 / 90);
}

TEST_F(EvaluationTest, PerCategoryMetrics) {
  const std::vector<CategoryMetrics> metrics = evaluation_.per_category();
  ASSERT_EQ(metrics.size(), 3u);
  EXPECT_EQ(metrics[0].name, "a");
  EXPECT_EQ(metrics[0].true_positives, 2u);
  EXPECT_EQ(metrics[0].false_positives, 0u);
  EXPECT_EQ(metrics[0].false_negatives, 1u);
  EXPECT_DOUBLE_EQ(metrics[0].precision, 1.0);
  EXPECT_DOUBLE_EQ(metrics[0].recall, 2.0 / 3);
  EXPECT_DOUBLE_EQ(metrics[0].f1, 0.8);
  EXPECT_EQ(metrics[1].name, "b");
  EXPECT_DOUBLE_EQ(metrics[1].precision, 2.0 / 3);
  EXPECT_DOUBLE_EQ(metrics[1].recall, 2.0 / 3);
  EXPECT_DOUBLE_EQ(metrics[1].f1, 2.0 / 3);
  EXPECT_EQ(metrics[2].true_positives, 1u);
  EXPECT_EQ(metrics[2].false_positives, 1u);
  EXPECT_EQ(metrics[2].false_negatives, 1u);
  EXPECT_DOUBLE_EQ(metrics[2].f1, 0.5);
}

// Macro precision = (1 + 2/3 + 1/2) / 3 = 13/18, macro recall =
// (2/3 + 2/3 + 1/2) / 3 = 11/18; support: a 3 (d1-d3), b 3 (d4 d5 d8), c 2.
TEST_F(EvaluationTest, MacroPrecisionRecallAndSupport) {
  EXPECT_DOUBLE_EQ(evaluation_.macro_precision(), 13.0 / 18);
  EXPECT_DOUBLE_EQ(evaluation_.macro_recall(), 11.0 / 18);
  const std::vector<CategoryMetrics> metrics = evaluation_.per_category();
  EXPECT_EQ(metrics[0].support, 3u);
  EXPECT_EQ(metrics[1].support, 3u);
  EXPECT_EQ(metrics[2].support, 2u);
}

// Rows: true a, b, c; columns: assigned a, b, c, none.
TEST_F(EvaluationTest, ConfusionMatrix) {
  const std::vector<Row> expected = {{2, 1, 0, 0}, {0, 2, 1, 0}, {0, 0, 1, 1}};
  EXPECT_EQ(evaluation_.confusion(), expected);
}

// A category assigned but never true scores F1 0 and counts in the macro
// average; only categories never true nor assigned are left out.
// a: tp 1, fn 1 -> F1 2/3; b: fp 1 -> F1 0; c: left out. Macro F1 = 1/3.
TEST(EvaluationAnyOfTest, CategoryOnlyAssignedCountsInTheMacroAverage) {
  Evaluation evaluation({"a", "b", "c"});
  evaluation.add({0}, {0});
  evaluation.add({0}, {1});
  EXPECT_DOUBLE_EQ(evaluation.macro_f1(), 1.0 / 3);
  EXPECT_DOUBLE_EQ(evaluation.macro_precision(), 0.5);  // (1 + 0) / 2
  EXPECT_DOUBLE_EQ(evaluation.macro_recall(), 0.25);    // (1/2 + 0) / 2
}

// Any-of decisions over a, b, c, d:
//   d1 {a, b} -> {a, b}   exact
//   d2 {a}    -> {a, c}   tp a, fp c
//   d3 {b, c} -> {c}      tp c, fn b
//   d4 {}     -> {}       exact (nothing to find, nothing assigned)
// a: tp 2 -> F1 1;  b: tp 1, fn 1 -> F1 2/3;  c: tp 1, fp 1 -> F1 2/3;
// d: never true nor assigned, left out of the macro average.
// micro: tp 4, fp 1, fn 1 -> P = R = F1 = 0.8; macro F1 = (1 + 2/3 + 2/3) / 3 = 7/9.
// No document has exactly one true and at most one assigned category, so
// the confusion matrix stays empty.
TEST(EvaluationAnyOfTest, MultiLabelDocuments) {
  Evaluation evaluation({"a", "b", "c", "d"});
  evaluation.add({0, 1}, {1, 0});
  evaluation.add({0}, {0, 2});
  evaluation.add({1, 2}, {2});
  evaluation.add({}, {});
  EXPECT_EQ(evaluation.documents(), 4u);
  EXPECT_DOUBLE_EQ(evaluation.accuracy(), 0.5);
  EXPECT_DOUBLE_EQ(evaluation.micro_precision(), 0.8);
  EXPECT_DOUBLE_EQ(evaluation.micro_recall(), 0.8);
  EXPECT_DOUBLE_EQ(evaluation.micro_f1(), 0.8);
  EXPECT_DOUBLE_EQ(evaluation.macro_f1(), 7.0 / 9);
  // a: P 1, R 1; b: P 1, R 1/2; c: P 1/2, R 1 -> both macro averages 5/6.
  EXPECT_DOUBLE_EQ(evaluation.macro_precision(), 5.0 / 6);
  EXPECT_DOUBLE_EQ(evaluation.macro_recall(), 5.0 / 6);
  const std::vector<CategoryMetrics> metrics = evaluation.per_category();
  EXPECT_EQ(metrics[0].support, 2u);
  EXPECT_EQ(metrics[1].support, 2u);
  EXPECT_EQ(metrics[2].support, 1u);
  EXPECT_EQ(metrics[3].support, 0u);
  EXPECT_EQ(metrics[3].true_positives + metrics[3].false_positives + metrics[3].false_negatives,
            0u);
  EXPECT_DOUBLE_EQ(metrics[3].f1, 0.0);
  for (const Row& row : evaluation.confusion()) EXPECT_EQ(row, Row(5, 0));
}

TEST(EvaluationAnyOfTest, CategoriesAreSets) {
  Evaluation evaluation({"a", "b"});
  evaluation.add({1, 0, 1}, {0, 1, 0});
  EXPECT_DOUBLE_EQ(evaluation.accuracy(), 1.0);
  EXPECT_EQ(evaluation.per_category()[0].true_positives, 1u);
  EXPECT_EQ(evaluation.per_category()[1].true_positives, 1u);
  EXPECT_DOUBLE_EQ(evaluation.micro_f1(), 1.0);
}

TEST(EvaluationEdgeTest, EmptyEvaluationIsAllZero) {
  Evaluation evaluation({"a", "b"});
  EXPECT_EQ(evaluation.documents(), 0u);
  EXPECT_EQ(evaluation.accuracy(), 0.0);
  EXPECT_EQ(evaluation.micro_precision(), 0.0);
  EXPECT_EQ(evaluation.micro_recall(), 0.0);
  EXPECT_EQ(evaluation.micro_f1(), 0.0);
  EXPECT_EQ(evaluation.macro_f1(), 0.0);
  EXPECT_EQ(evaluation.confusion(), (std::vector<Row>{Row(3, 0), Row(3, 0)}));
  EXPECT_EQ(evaluation.categories(), (std::vector<std::string>{"a", "b"}));
}

// Nothing assigned anywhere: precision has no denominator and is 0, recall 0.
TEST(EvaluationEdgeTest, NothingAssigned) {
  Evaluation evaluation({"a", "b"});
  evaluation.add({0}, {});
  evaluation.add({1}, {});
  EXPECT_EQ(evaluation.micro_precision(), 0.0);
  EXPECT_EQ(evaluation.micro_recall(), 0.0);
  EXPECT_EQ(evaluation.micro_f1(), 0.0);
  EXPECT_EQ(evaluation.macro_f1(), 0.0);
  EXPECT_EQ(evaluation.confusion(), (std::vector<Row>{{0, 0, 1}, {0, 0, 1}}));
}

// A document with no true category and nothing assigned is an exact match;
// one with something assigned is not, and counts a false positive.
TEST(EvaluationEdgeTest, NoCategoryDocuments) {
  Evaluation evaluation({"a", "b"});
  evaluation.add({}, {});
  evaluation.add({}, {1});
  evaluation.add({0}, {0});
  EXPECT_DOUBLE_EQ(evaluation.accuracy(), 2.0 / 3);
  EXPECT_EQ(evaluation.per_category()[1].false_positives, 1u);
  EXPECT_EQ(evaluation.per_category()[1].support, 0u);
  EXPECT_DOUBLE_EQ(evaluation.micro_precision(), 0.5);
  EXPECT_DOUBLE_EQ(evaluation.micro_recall(), 1.0);
}

TEST(EvaluationEdgeTest, RejectsUnknownCategory) {
  Evaluation evaluation({"a", "b"});
  EXPECT_THROW(evaluation.add({2}, {0}), InvalidArgumentError);
  EXPECT_THROW(evaluation.add({0}, {5}), InvalidArgumentError);
  EXPECT_EQ(evaluation.documents(), 0u);
}

// Hand-computed: -ln 0.7 = 0.356675, -ln 0.25 = 1.386294, and a true
// category given probability 0 costs -ln 1e-15 = 34.538776; mean 12.093915.
TEST(LogLossTest, MeanOfNegativeLogProbabilityOfTheTruth) {
  LogLoss log_loss;
  log_loss.add({0.7, 0.2, 0.1}, 0);
  EXPECT_NEAR(log_loss.value(), 0.356675, 1e-6);
  log_loss.add({0.5, 0.25, 0.25}, 2);
  EXPECT_NEAR(log_loss.value(), (0.356675 + 1.386294) / 2, 1e-6);
  log_loss.add({1.0, 0.0, 0.0}, 1);
  EXPECT_EQ(log_loss.documents(), 3u);
  EXPECT_NEAR(log_loss.value(), 12.093915, 1e-6);
  EXPECT_EQ(log_loss.no_evidence(), 0u);
}

TEST(LogLossTest, CertainAndRightCostsNothing) {
  LogLoss log_loss;
  log_loss.add({0.0, 1.0}, 1);
  EXPECT_EQ(log_loss.value(), 0.0);
}

// All zeros is "no term known to the model", not a distribution: counted
// apart, left out of the mean.
TEST(LogLossTest, DocumentsWithoutEvidenceAreLeftOut) {
  LogLoss log_loss;
  EXPECT_EQ(log_loss.value(), 0.0);
  log_loss.add({0.0, 0.0}, 0);
  EXPECT_EQ(log_loss.documents(), 0u);
  EXPECT_EQ(log_loss.no_evidence(), 1u);
  log_loss.add({0.5, 0.5}, 0);
  EXPECT_EQ(log_loss.documents(), 1u);
  EXPECT_NEAR(log_loss.value(), 0.693147, 1e-6);
}

TEST(LogLossTest, RejectsATruthOutsideTheScores) {
  LogLoss log_loss;
  EXPECT_THROW(log_loss.add({0.5, 0.5}, 2), InvalidArgumentError);
  EXPECT_EQ(log_loss.documents(), 0u);
}

TEST(LogLossTest, OnlyNaiveBayesScoresAreProbabilities) {
  EXPECT_TRUE(gives_probabilities(Method::kNaiveBayes));
  EXPECT_TRUE(gives_probabilities(Method::kBernoulliNaiveBayes));
  EXPECT_TRUE(gives_probabilities(Method::kComplementNaiveBayes));
  EXPECT_FALSE(gives_probabilities(Method::kKnn));
  EXPECT_FALSE(gives_probabilities(Method::kRocchio));
}

// Four documents over categories a, b, c, scored (a, b, c) with truth:
//   d1 (0.65, 0.31, 0.04) a   d2 (0.62, 0.33, 0.05) a
//   d3 (0.75, 0.22, 0.03) a   d4 (0.16, 0.72, 0.12) c
// Top label (10 bins): 0.6-0.7 holds 0.65 and 0.62, both right: |0.635 - 1|
// = 0.365; 0.7-0.8 holds 0.75 right and 0.72 wrong: |0.735 - 0.5| = 0.235;
// ECE = (2 x 0.365 + 2 x 0.235) / 4 = 0.3.
// Per category: a 0.16 not (0.16), 0.65 0.62 yes (2 x 0.365), 0.75 yes (0.25):
// (0.16 + 0.73 + 0.25) / 4 = 0.285; b 0.31 0.33 not (2 x 0.32), 0.22 not,
// 0.72 not: (0.64 + 0.22 + 0.72) / 4 = 0.395; c 0.04 0.05 0.03 not (3 x 0.04),
// 0.12 yes (0.88): (0.12 + 0.88) / 4 = 0.25; mean (0.285 + 0.395 + 0.25) / 3
// = 0.31.
// Pooled, 12 pairs: 0-0.1 3 x 0.04; 0.1-0.2 0.16 not, 0.12 yes: 2 x |0.14 -
// 0.5|; 0.2-0.3 0.22; 0.3-0.4 2 x 0.32; 0.6-0.7 2 x 0.365; 0.7-0.8 2 x 0.235:
// (0.12 + 0.72 + 0.22 + 0.64 + 0.73 + 0.47) / 12 = 2.9 / 12.
TEST(CalibrationReportTest, TopLabelPerCategoryAndPooledErrorsByHand) {
  CalibrationReport calibration(3);
  calibration.add({0.65, 0.31, 0.04}, {0});
  calibration.add({0.62, 0.33, 0.05}, {0});
  calibration.add({0.75, 0.22, 0.03}, {0});
  calibration.add({0.16, 0.72, 0.12}, {2});
  EXPECT_EQ(calibration.top_label().pairs(), 4u);
  EXPECT_NEAR(calibration.top_label().expected_calibration_error(), 0.3, 1e-12);
  ASSERT_EQ(calibration.categories(), 3u);
  EXPECT_EQ(calibration.category(0).pairs(), 4u);
  EXPECT_NEAR(calibration.category(0).expected_calibration_error(), 0.285, 1e-12);
  EXPECT_NEAR(calibration.category(1).expected_calibration_error(), 0.395, 1e-12);
  EXPECT_NEAR(calibration.category(2).expected_calibration_error(), 0.25, 1e-12);
  EXPECT_EQ(calibration.categories_with_pairs(), 3u);
  EXPECT_NEAR(calibration.per_category_expected_calibration_error(), 0.31, 1e-12);
  EXPECT_EQ(calibration.pooled().pairs(), 12u);
  EXPECT_NEAR(calibration.pooled().expected_calibration_error(), 2.9 / 12, 1e-12);
  // The bins' edges are the decimals --json prints (0.6, not 0.6000000000000001).
  const std::vector<Reliability::Bin> bins = calibration.top_label().bins();
  ASSERT_EQ(bins.size(), 10u);
  for (size_t b = 0; b < bins.size(); ++b) {
    EXPECT_EQ(bins[b].lower, std::stod("0." + std::to_string(b))) << b;
    EXPECT_EQ(bins[b].upper, b == 9 ? 1.0 : std::stod("0." + std::to_string(b + 1))) << b;
  }
}

// Certain and right every time: every view is calibrated. Two documents
// scored 0.95 for a, one in a and one in b: the top label is right half the
// time at 0.95, 0.45 off.
TEST(CalibrationReportTest, CertainAndRightIsCalibratedAndHalfRightIsNot) {
  CalibrationReport right(2);
  right.add({1.0, 0.0}, {0});
  right.add({0.0, 1.0}, {1});
  EXPECT_EQ(right.top_label().expected_calibration_error(), 0.0);
  EXPECT_EQ(right.pooled().expected_calibration_error(), 0.0);
  EXPECT_EQ(right.per_category_expected_calibration_error(), 0.0);
  CalibrationReport half(2);
  half.add({0.95, 0.05}, {0});
  half.add({0.95, 0.05}, {1});
  EXPECT_NEAR(half.top_label().expected_calibration_error(), 0.45, 1e-12);
  // Each category: its two scores share a bin, one observed: a 0.95 both
  // times (|0.95 - 0.5|), b 0.05 both times (|0.05 - 0.5|).
  EXPECT_NEAR(half.category(0).expected_calibration_error(), 0.45, 1e-12);
  EXPECT_NEAR(half.category(1).expected_calibration_error(), 0.45, 1e-12);
  EXPECT_EQ(CalibrationReport(2).categories_with_pairs(), 0u);
  EXPECT_EQ(CalibrationReport(2).per_category_expected_calibration_error(), 0.0);
}

}  // namespace
}  // namespace autocat::internal
