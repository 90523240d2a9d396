#include "classify/corpus/feature_selection.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "autocat/error.h"
#include "test_util.h"

namespace autocat::internal {
namespace {

using testing_util::split;

std::vector<uint32_t> selected_ids(const std::vector<uint8_t>& selected) {
  std::vector<uint32_t> ids;
  for (uint32_t t = 0; t < selected.size(); ++t) {
    if (selected[t] != 0) ids.push_back(t);
  }
  return ids;
}

// IIR section 13.5.1: class poultry, term export in Reuters-RCV1.
TEST(MutualInformationTest, IirExportPoultry) {
  const ContingencyTable table{49, 27652, 141, 774106};
  EXPECT_NEAR(mutual_information(table), 1.105e-4, 1e-7);          // "≈ 0.0001105"
  EXPECT_NEAR(mutual_information(table), 1.1053558610e-4, 1e-13);  // full precision
}

TEST(MutualInformationTest, BoundaryCases) {
  // Term and class coincide in half the documents: one bit.
  EXPECT_DOUBLE_EQ(mutual_information({50, 0, 0, 50}), 1.0);
  EXPECT_DOUBLE_EQ(mutual_information({0, 50, 50, 0}), 1.0);
  // Independent: 0.
  EXPECT_NEAR(mutual_information({10, 30, 20, 60}), 0.0, 1e-15);
  // Empty cells are 0 log 0 = 0; an empty table is 0.
  EXPECT_DOUBLE_EQ(mutual_information({0, 0, 10, 90}), 0.0);
  EXPECT_DOUBLE_EQ(mutual_information({}), 0.0);
}

// IIR Example 13.4-style table: N = 1000,
// 1000 (30 * 730 - 170 * 70)^2 / (100 * 200 * 900 * 800) = 1e11 / 1.44e10.
TEST(ChiSquareTest, HandComputedTable) {
  EXPECT_NEAR(chi_square({30, 170, 70, 730}), 6.944, 1e-3);
  EXPECT_DOUBLE_EQ(chi_square({30, 170, 70, 730}), 1e11 / 1.44e10);
}

TEST(ChiSquareTest, BoundaryCases) {
  EXPECT_DOUBLE_EQ(chi_square({50, 0, 0, 50}), 100.0);  // perfect association: N
  EXPECT_NEAR(chi_square({10, 30, 20, 60}), 0.0, 1e-12);
  EXPECT_DOUBLE_EQ(chi_square({0, 0, 10, 90}), 0.0);  // term in no document
  EXPECT_DOUBLE_EQ(chi_square({10, 0, 90, 0}), 0.0);  // every document in the class
  EXPECT_DOUBLE_EQ(chi_square({}), 0.0);
}

// Categories: china = 0, japan = 1, other = 2. Terms (ids):
// beijing 0, chinese 1, japan 2, macao 3, shanghai 4, tokyo 5.
class FeatureSelectionTest : public testing::Test {
 protected:
  FeatureSelectionTest()
      : corpus_(make_training_corpus({{split("chinese beijing chinese"), {"china"}},
                                      {split("chinese chinese shanghai"), {"china"}},
                                      {split("chinese macao"), {"china", "other"}},
                                      {split("tokyo japan chinese"), {"japan"}},
                                      {split("tokyo tokyo"), {"japan"}},
                                      {split("macao"), {}}})) {}

  double at(const std::vector<double>& utility, const std::string& term, uint32_t category) {
    TermId t = 0;
    while (corpus_.terms[t] != term) ++t;
    return utility[t * corpus_.num_categories() + category];
  }

  TrainingCorpus corpus_;
};

TEST_F(FeatureSelectionTest, DocumentFrequencyUtilityIsDf) {
  const std::vector<double> utility =
      term_class_utility(corpus_, FeatureSelection::kDocumentFrequency);
  ASSERT_EQ(utility.size(), corpus_.num_terms() * corpus_.num_categories());
  for (TermId t = 0; t < corpus_.num_terms(); ++t) {
    for (uint32_t c = 0; c < corpus_.num_categories(); ++c) {
      EXPECT_EQ(utility[t * corpus_.num_categories() + c], corpus_.df[t]) << corpus_.terms[t];
    }
  }
  EXPECT_EQ(at(utility, "chinese", 1), 4.0);
  EXPECT_EQ(at(utility, "macao", 2), 2.0);
}

// The 2x2 tables come from the postings: N = 6 documents (one unlabelled),
// N_china = 3, N_japan = 2, N_other = 1.
TEST_F(FeatureSelectionTest, MutualInformationAndChiSquareUseDocumentCounts) {
  const std::vector<double> mi = term_class_utility(corpus_, FeatureSelection::kMutualInformation);
  const std::vector<double> chi2 = term_class_utility(corpus_, FeatureSelection::kChiSquare);
  // chinese / china: in 3 china docs, 1 other doc; no china doc lacks it.
  EXPECT_DOUBLE_EQ(at(mi, "chinese", 0), mutual_information({3, 1, 0, 2}));
  EXPECT_DOUBLE_EQ(at(chi2, "chinese", 0), chi_square({3, 1, 0, 2}));
  // tokyo / japan: both japan documents and no other.
  EXPECT_DOUBLE_EQ(at(mi, "tokyo", 1), mutual_information({2, 0, 0, 4}));
  EXPECT_NEAR(at(mi, "tokyo", 1), std::log2(3.0) - 2.0 / 3, 1e-12);  // H(class)
  EXPECT_DOUBLE_EQ(at(chi2, "tokyo", 1), 6.0);
  // macao / other: d3 (other) and the unlabelled d6, which is outside every class.
  EXPECT_DOUBLE_EQ(at(chi2, "macao", 2), chi_square({1, 1, 0, 4}));
  // macao / japan: absent from japan.
  EXPECT_DOUBLE_EQ(at(mi, "macao", 1), mutual_information({0, 2, 2, 2}));
}

// KL: P(t|c) = (T_ct + 1) / (T_c + |V|), P(t) = (T_t + 1) / (T + |V|); the
// utility P(t|c) log2(P(t|c) / P(t)) summed over t is KL(P(.|c) || P(.)) >= 0.
TEST_F(FeatureSelectionTest, KlDivergenceContributions) {
  const std::vector<double> kl = term_class_utility(corpus_, FeatureSelection::kKlDivergence);
  // 14 tokens, |V| = 6; chinese: 6 tokens overall, 5 of china's 8 tokens.
  const double p_class = (5.0 + 1) / (8 + 6);
  const double p_term = (6.0 + 1) / (14 + 6);
  EXPECT_NEAR(at(kl, "chinese", 0), p_class * std::log2(p_class / p_term), 1e-12);
  EXPECT_GT(at(kl, "tokyo", 1), 0.0);    // over-represented in japan
  EXPECT_LT(at(kl, "chinese", 1), 0.0);  // under-represented in japan
  for (uint32_t c = 0; c < corpus_.num_categories(); ++c) {
    double divergence = 0;
    for (TermId t = 0; t < corpus_.num_terms(); ++t) divergence += kl[t * 3 + c];
    EXPECT_GT(divergence, 0.0);
  }
}

TEST_F(FeatureSelectionTest, NoneIsNotAMeasure) {
  EXPECT_THROW(term_class_utility(corpus_, FeatureSelection::kNone), InvalidArgumentError);
}

// 6 terms x 2 categories. Category 0 likes terms 0 and 1 strongly; category 1
// likes terms 4 and 5, but less than category 0 likes its own.
class SelectFeaturesTest : public testing::Test {
 protected:
  const std::vector<double> utility_ = {
      // c0   c1
      9.0, 0.0,  // t0
      8.0, 0.1,  // t1
      1.0, 1.0,  // t2
      0.5, 0.0,  // t3
      0.0, 3.0,  // t4
      0.2, 3.0,  // t5
  };
};

TEST_F(SelectFeaturesTest, GlobalTakesTheBestMaxOverCategories) {
  EXPECT_EQ(selected_ids(select_features(utility_, 6, 2, 2, false)), (std::vector<uint32_t>{0, 1}));
  // Third best: t4 and t5 tie at 3.0; the lower id wins.
  EXPECT_EQ(selected_ids(select_features(utility_, 6, 2, 3, false)),
            (std::vector<uint32_t>{0, 1, 4}));
}

TEST_F(SelectFeaturesTest, PerCategoryTakesTheUnionOfEachTop) {
  // c0's top 2: t0, t1; c1's top 2: t4, t5 (tie, both in).
  EXPECT_EQ(selected_ids(select_features(utility_, 6, 2, 2, true)),
            (std::vector<uint32_t>{0, 1, 4, 5}));
  // c1's top 1 among t4 = t5 = 3.0 is t4.
  EXPECT_EQ(selected_ids(select_features(utility_, 6, 2, 1, true)), (std::vector<uint32_t>{0, 4}));
  // c0's top 3 and c1's top 3 (t4, t5, then t2 at 1.0) share t2.
  EXPECT_EQ(selected_ids(select_features(utility_, 6, 2, 3, true)),
            (std::vector<uint32_t>{0, 1, 2, 4, 5}));
}

TEST_F(SelectFeaturesTest, NonPositiveOrLargeCountSelectsEverything) {
  const std::vector<uint8_t> all(6, 1);
  EXPECT_EQ(select_features(utility_, 6, 2, 0, false), all);
  EXPECT_EQ(select_features(utility_, 6, 2, -3, true), all);
  EXPECT_EQ(select_features(utility_, 6, 2, 6, false), all);
  EXPECT_EQ(select_features(utility_, 6, 2, 100, true), all);
}

TEST_F(SelectFeaturesTest, AllTiedSelectsLowestIds) {
  const std::vector<double> flat(12, 1.0);
  EXPECT_EQ(selected_ids(select_features(flat, 6, 2, 2, false)), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(selected_ids(select_features(flat, 6, 2, 2, true)), (std::vector<uint32_t>{0, 1}));
}

TEST_F(SelectFeaturesTest, RejectsMismatchedSize) {
  EXPECT_THROW(select_features(utility_, 5, 2, 2, false), InvalidArgumentError);
}

TEST_F(FeatureSelectionTest, GlobalAndPerCategorySelectionOnCorpus) {
  const std::vector<double> df = term_class_utility(corpus_, FeatureSelection::kDocumentFrequency);
  // df: beijing 1, chinese 4, japan 1, macao 2, shanghai 1, tokyo 2.
  EXPECT_EQ(selected_ids(select_features(df, 6, 3, 3, false)), (std::vector<uint32_t>{1, 3, 5}));
  // Chi-square per category, top 1: china -> chinese (3, tied with tokyo's
  // {0, 2, 3, 1} = 3 and first by id), japan -> tokyo (6), other -> macao
  // ({1, 1, 0, 4} = 2.4 beats chinese's {1, 3, 0, 2} = 0.6).
  const std::vector<double> chi2 = term_class_utility(corpus_, FeatureSelection::kChiSquare);
  EXPECT_DOUBLE_EQ(at(chi2, "chinese", 0), 3.0);
  EXPECT_DOUBLE_EQ(at(chi2, "tokyo", 0), 3.0);
  EXPECT_EQ(selected_ids(select_features(chi2, 6, 3, 1, true)), (std::vector<uint32_t>{1, 3, 5}));
  // Globally, the single best is tokyo (6 for japan).
  EXPECT_EQ(selected_ids(select_features(chi2, 6, 3, 1, false)), (std::vector<uint32_t>{5}));
}

TEST_F(FeatureSelectionTest, RankTermsBestFirstTiesByTerm) {
  const std::vector<double> df = term_class_utility(corpus_, FeatureSelection::kDocumentFrequency);
  const std::vector<RankedTerm> ranked = rank_terms(corpus_, df, 1, 4);
  ASSERT_EQ(ranked.size(), 4u);
  EXPECT_EQ(ranked[0].term, "chinese");
  EXPECT_EQ(ranked[0].utility, 4.0);
  EXPECT_EQ(ranked[1].term, "macao");  // 2, before tokyo (2)
  EXPECT_EQ(ranked[2].term, "tokyo");
  EXPECT_EQ(ranked[3].term, "beijing");                 // 1, first of beijing, japan, shanghai
  EXPECT_EQ(rank_terms(corpus_, df, 0, 0).size(), 6u);  // top <= 0: every term
  EXPECT_EQ(rank_terms(corpus_, df, 0, 100).size(), 6u);
  EXPECT_THROW(rank_terms(corpus_, df, 3, 1), InvalidArgumentError);
  EXPECT_THROW(rank_terms(corpus_, std::vector<double>(5), 0, 1), InvalidArgumentError);
}

}  // namespace
}  // namespace autocat::internal
