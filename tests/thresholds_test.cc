#include "classify/train/thresholds.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <utility>

#include "classify/decide/categorizer.h"
#include "classify/train/fit.h"
#include "classify/train/trainer.h"
#include "classify/train/tune_scores.h"
#include "test_util.h"
#include "trained_fixture.h"

namespace autocat::internal {
namespace {

// Accepting the top i of 0.9+ 0.8+ 0.7- 0.6+ 0.1- (3 positives):
// F1 = 2tp / (i + 3): 0.5, 0.8, 0.667, 0.857, 0.75; best i = 4, so the cut
// lies between 0.6 and 0.1.
TEST(BestF1ThresholdTest, CutsWhereF1PeaksMidwayBetweenScores) {
  EXPECT_DOUBLE_EQ(best_f1_threshold({0.9, 0.8, 0.7, 0.6, 0.1}, {1, 1, 0, 1, 0}, 0.3), 0.35);
  // Order of the input does not matter.
  EXPECT_DOUBLE_EQ(best_f1_threshold({0.1, 0.6, 0.9, 0.7, 0.8}, {0, 1, 1, 0, 1}, 0.3), 0.35);
}

TEST(BestF1ThresholdTest, NeverCutsBetweenEqualScores) {
  // Top 1 alone would give F1 1, but 0.5 and 0.5 cannot be told apart:
  // accepting both gives 2/3, all three 1/2.
  EXPECT_DOUBLE_EQ(best_f1_threshold({0.5, 0.5, 0.2}, {1, 0, 0}, 0.3), 0.35);
  // Also between the last two: 0.9+ 0.5+ 0.5-. Top 2 alone would give F1 1;
  // top 1 gives 2/3, all three 4/5, so the cut goes below every score.
  EXPECT_DOUBLE_EQ(best_f1_threshold({0.9, 0.5, 0.5}, {1, 1, 0}, 0.3), 0.25);
}

// Equal F1 at two cuts: the higher cut (fewer documents accepted) wins.
// 0.9+ 0.8- 0.7- 0.6+ (2 positives): top 1 gives F1 2/3, top 4 also 4/6.
TEST(BestF1ThresholdTest, TiesInF1TakeTheHigherCut) {
  EXPECT_DOUBLE_EQ(best_f1_threshold({0.9, 0.8, 0.7, 0.6}, {1, 0, 0, 1}, 0.3), 0.85);
  // With 0.1- below and the input shuffled: top 4 (4/6) still ties top 1, and
  // the cut stays at 0.85, not midway between 0.6 and 0.1.
  EXPECT_DOUBLE_EQ(best_f1_threshold({0.1, 0.6, 0.7, 0.8, 0.9}, {0, 1, 0, 0, 1}, 0.3), 0.85);
}

TEST(BestF1ThresholdTest, AcceptingEverythingCutsBelowTheLowestScore) {
  EXPECT_DOUBLE_EQ(best_f1_threshold({0.8, 0.4}, {1, 1}, 0.3), 0.2);
}

// Positives left out of the score lists still count against recall.
TEST(BestF1ThresholdTest, MissedPositivesCountAsFalseNegatives) {
  // Top 1 of 0.9+ 0.8- with one more positive missed: F1 = 2/(1+2) = 0.667;
  // top 2: 2/(2+2) = 0.5. So a 0.7 floor rejects the category; without the
  // missed positive, top 1 has F1 1 and passes it.
  EXPECT_DOUBLE_EQ(best_f1_threshold({0.9, 0.8}, {1, 0}, 0.3, 1), 0.85);
  EXPECT_EQ(best_f1_threshold({0.9, 0.8}, {1, 0}, 0.7, 1), kNeverAssign);
  EXPECT_DOUBLE_EQ(best_f1_threshold({0.9, 0.8}, {1, 0}, 0.7, 0), 0.85);
  // Best F1 exactly at the floor passes it: top 1 with 2 missed, 2/(1+3) = 0.5.
  EXPECT_DOUBLE_EQ(best_f1_threshold({0.9, 0.8}, {1, 0}, 0.5, 2), 0.85);
}

TEST(BestF1ThresholdTest, ZeroScoresAreNeverAccepted) {
  // A score of 0 is no evidence: the cut stays above it even though the
  // zero-scored document is positive.
  EXPECT_DOUBLE_EQ(best_f1_threshold({0.5, 0.0}, {1, 1}, 0.3), 0.25);
  EXPECT_EQ(best_f1_threshold({0.0, 0.0}, {1, 0}, 0.0), kNeverAssign);
}

TEST(BestF1ThresholdTest, UncalibratedCategoriesAreNeverAssigned) {
  EXPECT_EQ(best_f1_threshold({0.9, 0.1}, {0, 0}, 0.3), kNeverAssign);  // no positive
  EXPECT_EQ(best_f1_threshold({}, {}, 0.3), kNeverAssign);
  // The only positive is ranked 10th of 10: best F1 = 2/11 < 0.3.
  std::vector<double> scores;
  std::vector<uint8_t> positive;
  for (int i = 0; i < 10; ++i) {
    scores.push_back(1.0 - 0.05 * i);
    positive.push_back(i == 9);
  }
  EXPECT_EQ(best_f1_threshold(scores, positive, 0.3), kNeverAssign);
  EXPECT_LT(best_f1_threshold(scores, positive, 0.1), 1.0);
}

TEST(RankCutThresholdTest, AcceptsAboutRatioTimesTheDocumentCount) {
  const std::vector<double> scores = {0.1, 0.9, 0.5, 0.7, 0.3};
  // 2 documents x 1.0: the top 2 (0.9, 0.7), cut midway to 0.5.
  EXPECT_DOUBLE_EQ(rank_cut_threshold(scores, 2, 1.0), 0.6);
  // 2 x 1.5 = 3: down to 0.5.
  EXPECT_DOUBLE_EQ(rank_cut_threshold(scores, 2, 1.5), 0.4);
  // At least one, however small the ratio.
  EXPECT_DOUBLE_EQ(rank_cut_threshold(scores, 1, 0.1), 0.8);
  // As many as there are or more: no score below shows where to cut.
  EXPECT_EQ(rank_cut_threshold(scores, 4, 5.0), kNeverAssign);
}

TEST(RankCutThresholdTest, TiesGoInTogetherAndZeroNever) {
  EXPECT_DOUBLE_EQ(rank_cut_threshold({0.9, 0.5, 0.5, 0.2}, 2, 1.0), 0.35);
  EXPECT_EQ(rank_cut_threshold({0.4, 0.0, 0.0}, 3, 1.0), kNeverAssign);
  EXPECT_DOUBLE_EQ(rank_cut_threshold({0.4, 0.0, 0.2}, 1, 1.0), 0.3);
  EXPECT_EQ(rank_cut_threshold({0.0, 0.0}, 2, 1.0), kNeverAssign);
  EXPECT_EQ(rank_cut_threshold({}, 2, 1.0), kNeverAssign);
}

// Out-of-fold scores for categories a and b (10 documents each, scored 0.9
// and 0.8 when labelled, 0.2 otherwise), r (3 documents) and s (1
// document). r's and s's scores lie far below a's and b's, as a rare
// category's do.
struct RareCategories {
  TrainingCorpus corpus;
  ScoreLists lists;
};
// 30 documents: 10 of a, 10 of b, 3 of r, then `count` of `last`.
TrainingCorpus rare_corpus(const std::string& last, int count) {
  std::vector<LabelledTerms> docs;
  for (int d = 0; d < 30; ++d) {
    std::vector<std::string> labels;
    if (d < 10) labels = {"a"};
    if (d >= 10 && d < 20) labels = {"b"};
    if (d >= 20 && d < 23) labels = {"r"};
    if (d >= 23 && d < 23 + count) labels = {last};
    docs.push_back({{"t" + std::to_string(d)}, labels});
  }
  return make_training_corpus(docs);
}
RareCategories rare_categories(double r_positive, double r_negative) {
  RareCategories out{rare_corpus("s", 1), ScoreLists(30)};
  for (int d = 0; d < 30; ++d) {
    std::vector<double> scores(4, 0.0);  // a, b, r, s
    scores[0] = d < 10 ? 0.9 : 0.2;
    scores[1] = d >= 10 && d < 20 ? 0.8 : 0.2;
    if (d >= 20 && d < 23) scores[2] = r_positive;
    if (d >= 24) scores[2] = r_negative;
    if (d >= 24 && d < 26) scores[3] = 0.02;
    keep_best(scores, &out.lists[d]);
  }
  return out;
}

TEST(ThresholdsFromTest, RareCategoriesGetTheirOwnCutWhenTheFoldsShowItPays) {
  const RareCategories rare = rare_categories(0.05, 0.01);
  ASSERT_EQ(rare.corpus.categories, (std::vector<std::string>{"a", "b", "r", "s"}));
  const std::vector<double> own = thresholds_from(rare.corpus, rare.lists, /*rare_cuts=*/true);
  // a and b: SCut between their positives and the 0.2s.
  EXPECT_GT(own[0], 0.2);
  EXPECT_LT(own[0], 0.9);
  // r (3 documents) never reaches the others' median cut; its own
  // proportional cut takes its three documents and none of the 0.01s.
  EXPECT_LT(own[2], 0.05);
  EXPECT_GT(own[2], 0.01);
  // s (1 document) keeps the borrowed cut: no fold could test one of its own.
  EXPECT_GT(own[3], 0.2);
  EXPECT_LT(own[3], kNeverAssign);
  // Without rare_cuts, r borrows the median cut too.
  EXPECT_GT(thresholds_from(rare.corpus, rare.lists)[2], 0.2);
}

TEST(ThresholdsFromTest, RareCutsThatCostMicroF1AreNotTaken) {
  // r's negatives outscore its positives: a proportional cut finds them
  // only by accepting all six negatives too.
  const RareCategories rare = rare_categories(0.05, 0.07);
  EXPECT_GT(thresholds_from(rare.corpus, rare.lists, /*rare_cuts=*/true)[2], 0.2);
}

TEST(ThresholdsFromTest, ARareCategoryWhoseOwnCutCannotBePlacedKeepsTheBorrowedOne) {
  // a and b: 10 documents each; r: 3 documents, scored 0.05 (others 0.01);
  // q: 2 documents, the only ones with a score for it (0.04), so no
  // held-out score below them shows where its own cut would go.
  const TrainingCorpus corpus = rare_corpus("q", 2);
  ASSERT_EQ(corpus.categories, (std::vector<std::string>{"a", "b", "q", "r"}));
  ScoreLists lists(30);
  for (int d = 0; d < 30; ++d) {
    std::vector<double> scores(4, 0.0);  // a, b, q, r
    scores[0] = d < 10 ? 0.9 : 0.2;
    scores[1] = d >= 10 && d < 20 ? 0.8 : 0.2;
    if (d >= 23 && d < 25) scores[2] = 0.04;
    scores[3] = d >= 20 && d < 23 ? 0.05 : 0.01;
    keep_best(scores, &lists[d]);
  }
  double ratio = 0.0;
  const std::vector<double> own = thresholds_from(corpus, lists, /*rare_cuts=*/true, &ratio);
  EXPECT_GT(ratio, 0.0);
  EXPECT_LT(own[3], 0.05);  // r's own cut
  EXPECT_GT(own[3], 0.01);
  EXPECT_EQ(own[2], thresholds_from(corpus, lists)[2]);  // q's borrowed one
  EXPECT_LT(own[2], kNeverAssign);
}

// 30 documents: 10 of a, 10 of b, `c_documents` of c, the rest of none;
// a and b scored 0.9 and 0.8 when labelled, 0.2 otherwise; c as
// `c_scores` gives (document -> score), 0 elsewhere.
RareCategories floor_categories(int c_documents,
                                const std::vector<std::pair<int, double>>& c_scores) {
  std::vector<LabelledTerms> docs;
  for (int d = 0; d < 30; ++d) {
    std::vector<std::string> labels;
    if (d < 10) labels = {"a"};
    if (d >= 10 && d < 20) labels = {"b"};
    if (d >= 20 && d < 20 + c_documents) labels = {"c"};
    docs.push_back({{"t" + std::to_string(d)}, labels});
  }
  RareCategories out{make_training_corpus(docs), ScoreLists(30)};
  for (int d = 0; d < 30; ++d) {
    std::vector<double> scores(3, 0.0);  // a, b, c
    scores[0] = d < 10 ? 0.9 : 0.2;
    scores[1] = d >= 10 && d < 20 ? 0.8 : 0.2;
    for (const auto& [doc, score] : c_scores) {
      if (doc == d) scores[2] = score;
    }
    keep_best(scores, &out.lists[d]);
  }
  return out;
}

TEST(ThresholdsFromTest, LooserFloorIsTakenWhenTheFoldsShowItPays) {
  // c: 8 documents, one found (0.5), the rest scored 0: its best cut has
  // F1 2 / 9 = 0.22, under the standard floor (0.3), over the looser (0.2),
  // and adds a true positive alone.
  const RareCategories rare = floor_categories(8, {{20, 0.5}});
  ASSERT_EQ(rare.corpus.categories, (std::vector<std::string>{"a", "b", "c"}));
  int variant = -1;
  const std::vector<double> cuts =
      thresholds_from(rare.corpus, rare.lists, /*rare_cuts=*/true, nullptr, &variant);
  EXPECT_EQ(variant, kRareCutsLooserFloor);
  EXPECT_LT(cuts[2], 0.5);
  EXPECT_GT(cuts[2], 0.0);
  // The standard cuts never assign c; without rare_cuts no variant is tried.
  EXPECT_EQ(thresholds_from(rare.corpus, rare.lists, false, nullptr, &variant)[2], kNeverAssign);
  EXPECT_EQ(variant, -1);
}

TEST(ThresholdsFromTest, LooserFloorThatCostsMicroF1IsNotTaken) {
  // c: 6 documents; its best cut (F1 2 / 9 = 0.22) takes two negatives
  // (0.5, 0.4) for its one positive (0.3): micro-F1 falls 0.870 -> 0.857.
  const RareCategories rare = floor_categories(6, {{27, 0.5}, {28, 0.4}, {20, 0.3}});
  int variant = -1;
  const std::vector<double> cuts =
      thresholds_from(rare.corpus, rare.lists, /*rare_cuts=*/true, nullptr, &variant);
  EXPECT_EQ(variant, kRareCutsStandard);
  EXPECT_EQ(cuts[2], kNeverAssign);
  EXPECT_EQ(min_useful_f1(kRareCutsBoth), kLooserMinUsefulF1);
  EXPECT_EQ(min_useful_f1(kRareCutsOneDocument), kMinUsefulF1);
}

TEST(ThresholdsFromTest, OnlyMethodsWhoseHeldOutCutsTransferTakeRareCuts) {
  for (const Method method : {Method::kKnn, Method::kRocchio, Method::kSvm, Method::kLogreg}) {
    EXPECT_TRUE(takes_rare_cuts(method, Decision::kAnyOf)) << method_name(method);
    EXPECT_FALSE(takes_rare_cuts(method, Decision::kOneOf)) << method_name(method);
  }
  // Naive Bayes posteriors grow more extreme as the training set grows, and
  // combo stacks them.
  for (const Method method : {Method::kNaiveBayes, Method::kBernoulliNaiveBayes,
                              Method::kComplementNaiveBayes, Method::kCombo}) {
    EXPECT_FALSE(takes_rare_cuts(method, Decision::kAnyOf)) << method_name(method);
  }
}

class CorpusDocumentsTest : public testing::Test {
 protected:
  std::vector<LabelledTerms> docs_ = {
      {{"a", "b", "b"}, {"x"}}, {{"b", "c"}, {"y"}}, {{"c", "c", "d"}, {"x", "y"}}, {{"a"}, {}}};
  TrainingCorpus corpus_ = make_training_corpus(docs_);
};

TEST_F(CorpusDocumentsTest, DocumentsAreTheTransposedPostings) {
  const std::vector<DocumentTerms> docs = corpus_documents(corpus_);
  ASSERT_EQ(docs.size(), 4u);
  // Document 2 = "c c d": term ids 2 (c) twice, 3 (d) once.
  ASSERT_EQ(docs[2].terms.size(), 2u);
  EXPECT_EQ(docs[2].terms[0].term, 2u);
  EXPECT_EQ(docs[2].terms[0].count, 2u);
  EXPECT_EQ(docs[2].terms[1].term, 3u);
  EXPECT_EQ(docs[2].known_tokens, 3u);
}

// Any-of on a trained model: tuned thresholds by default, one global
// threshold when the caller asks for it.
class TunedThresholdsTest : public testing_util::TrainedFixtureTest {};

TEST_F(TunedThresholdsTest, ModelHasAThresholdPerMethodAndCategory) {
  const auto& thresholds = categorizer_->model().thresholds;
  ASSERT_EQ(thresholds.size(), all_methods().size());
  for (const auto& per_category : thresholds) {
    ASSERT_EQ(per_category.size(), categorizer_->categories().size());
    for (double t : per_category) EXPECT_TRUE((t >= 0 && t <= 1) || t == kNeverAssign) << t;
  }
}

TEST_F(TunedThresholdsTest, AnyOfUsesTunedThresholdsUnlessToldOtherwise) {
  ClassifyOptions options;
  options.method = Method::kRocchio;
  options.decision = Decision::kAnyOf;
  const std::vector<double>& tuned = categorizer_->model().thresholds[size_t(Method::kRocchio)];
  const DocumentTerms doc = categorizer_->document_terms(
      categorizer_->analyzer().analyze("the team scored a late goal to win the match"));
  const std::vector<double> scores = categorizer_->scores(doc, options);
  std::vector<std::string> expected;
  for (size_t c = 0; c < scores.size(); ++c) {
    if (scores[c] > 0 && scores[c] >= tuned[c]) expected.push_back(categorizer_->categories()[c]);
  }
  std::vector<std::string> got;
  for (const Category& c : categorizer_->decide(scores, options)) got.push_back(c.name);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, expected);

  // One global threshold of 0: every category with a positive score.
  options.tuned_thresholds = false;
  options.min_score = 0.0;
  size_t positive = 0;
  for (double s : scores) positive += s > 0 ? 1 : 0;
  EXPECT_EQ(categorizer_->decide(scores, options).size(), std::min<size_t>(positive, 5));
}

// One-of cross-validation compares candidates by their top category and
// refits only the winners for their full score lists: the winner's
// thresholds, calibration and objective are those of a run given that
// setting alone.
TEST(TuneSettingsOneOfTest, WinnersAreRefittedAsIfChosenAlone) {
  std::vector<LabelledTerms> docs;
  const std::vector<std::string> words = {"ball", "goal", "team", "vote", "law", "party",
                                          "chip", "code", "data", "the",  "a",   "of"};
  uint32_t state = 7;
  const auto next = [&](uint32_t n) {
    state = state * 1103515245u + 12345u;
    return (state >> 16) % n;
  };
  const std::vector<std::string> labels = {"sport", "politics", "tech"};
  for (int d = 0; d < 60; ++d) {
    const uint32_t label = static_cast<uint32_t>(d) % 3;
    std::vector<std::string> terms;
    for (int i = 0; i < 8; ++i) {
      // Mostly the category's own words, sometimes any word.
      terms.push_back(next(3) == 0 ? words[next(12)] : words[label * 3 + next(3)]);
    }
    docs.push_back({terms, {labels[label]}});
  }
  const TrainingCorpus corpus = make_training_corpus(docs);
  TrainOptions options;
  const TunedSettings grid = tune_settings(corpus, options, Decision::kOneOf);
  ASSERT_FALSE(grid.thresholds.empty());

  TrainOptions fixed_gamma = options;
  fixed_gamma.rocchio_gamma = grid.rocchio_gamma;
  const TunedSettings rocchio = tune_settings(corpus, fixed_gamma, Decision::kOneOf);
  const auto slot = [](Method m) { return static_cast<size_t>(m); };
  EXPECT_EQ(rocchio.thresholds[slot(Method::kRocchio)], grid.thresholds[slot(Method::kRocchio)]);
  EXPECT_EQ(rocchio.method_objective[slot(Method::kRocchio)],
            grid.method_objective[slot(Method::kRocchio)]);

  for (size_t m = 0; m < naive_bayes_methods().size(); ++m) {
    TrainOptions fixed_alpha = options;
    fixed_alpha.nb_alpha = grid.nb_alpha[m];
    const TunedSettings nb = tune_settings(corpus, fixed_alpha, Decision::kOneOf);
    const size_t method = slot(naive_bayes_methods()[m]);
    if (nb.nb_tfidf[m] != grid.nb_tfidf[m]) continue;  // a tie of features, settled otherwise
    EXPECT_EQ(nb.thresholds[method], grid.thresholds[method]) << m;
    EXPECT_EQ(nb.method_objective[method], grid.method_objective[method]) << m;
  }
}

// Any-of cross-validation compares Naive Bayes' candidates on their
// kComparedScores best scores per document and refits the winners for
// their full lists: with more categories than that, the winner's
// thresholds and objective are still those of a run given that alpha alone.
TEST(TuneSettingsAnyOfTest, NaiveBayesWinnersAreRefittedWithFullLists) {
  std::vector<LabelledTerms> docs;
  const uint32_t num_labels = uint32_t(kComparedScores) + 8;
  uint32_t state = 11;
  const auto next = [&](uint32_t n) {
    state = state * 1103515245u + 12345u;
    return (state >> 16) % n;
  };
  for (uint32_t d = 0; d < num_labels * 6; ++d) {
    const uint32_t label = d % num_labels;
    std::vector<std::string> labels = {"c" + std::to_string(label)};
    if (next(4) == 0) labels.push_back("c" + std::to_string((label + 1 + next(3)) % num_labels));
    std::vector<std::string> terms;
    for (int i = 0; i < 10; ++i) {
      // Mostly the first label's own words, sometimes any label's.
      const uint32_t from = next(3) == 0 ? next(num_labels) : label;
      terms.push_back("w" + std::to_string(from) + "_" + std::to_string(next(4)));
    }
    docs.push_back({terms, labels});
  }
  const TrainingCorpus corpus = make_training_corpus(docs);
  TrainOptions options;
  const TunedSettings grid = tune_settings(corpus, options, Decision::kAnyOf);
  ASSERT_FALSE(grid.thresholds.empty());
  const auto slot = [](Method m) { return static_cast<size_t>(m); };
  for (size_t m = 0; m < naive_bayes_methods().size(); ++m) {
    TrainOptions fixed_alpha = options;
    fixed_alpha.nb_alpha = grid.nb_alpha[m];
    const TunedSettings nb = tune_settings(corpus, fixed_alpha, Decision::kAnyOf);
    const size_t method = slot(naive_bayes_methods()[m]);
    if (nb.nb_tfidf[m] != grid.nb_tfidf[m]) continue;  // a tie of features, settled otherwise
    ASSERT_EQ(grid.thresholds[method].size(), corpus.num_categories()) << m;
    EXPECT_EQ(nb.thresholds[method], grid.thresholds[method]) << m;
    EXPECT_EQ(nb.method_objective[method], grid.method_objective[method]) << m;
  }
}

}  // namespace
}  // namespace autocat::internal

namespace autocat::internal {
namespace {

// McNemar's test on the documents exactly one candidate gets right: 10
// against 0 reaches z = 3 (10 >= 3 sqrt(10) = 9.49) and 8 against 0 does
// not (8 < 3 sqrt(8) = 8.49); documents not scored yet do not count.
TEST(CandidatesInContentionTest, DropsOnlyWhatIsClearlyWorse) {
  std::vector<LabelledTerms> docs;
  for (int d = 0; d < 40; ++d) docs.push_back({{"word"}, {d % 2 ? "odd" : "even"}});
  const TrainingCorpus corpus = make_training_corpus(docs);
  const auto right = [&](uint32_t d) { return corpus.doc_categories[d].at(0); };
  const auto wrong = [&](uint32_t d) { return 1 - corpus.doc_categories[d].at(0); };
  std::vector<uint8_t> scored(40, 1);
  for (uint32_t d = 30; d < 40; ++d) scored[d] = 0;
  std::vector<uint32_t> best(40), ten_behind(40), eight_behind(40), unscored_only(40);
  for (uint32_t d = 0; d < 40; ++d) {
    best[d] = d < 20 || d >= 30 ? right(d) : wrong(d);
    ten_behind[d] = d < 10 ? right(d) : wrong(d);
    eight_behind[d] = d < 12 ? right(d) : wrong(d);
    // As good as the best on the scored documents, worse on the others.
    unscored_only[d] = d < 20 ? right(d) : wrong(d);
  }
  const std::vector<bool> in =
      candidates_in_contention(corpus, scored, {&ten_behind, &best, &eight_behind, &unscored_only});
  EXPECT_EQ(in, (std::vector<bool>{false, true, true, true}));
}

// One-of cross-validation drops candidates clearly behind after the first
// folds; they are missing from the objectives listed, and the winner is the
// one a run without them chooses.
TEST(TuneSettingsOneOfTest, PrunesClearlyWorseCandidates) {
  std::vector<LabelledTerms> docs;
  const std::vector<std::string> words = {"ball", "goal", "team", "vote", "law", "party",
                                          "chip", "code", "data", "the",  "a",   "of"};
  uint32_t state = 11;
  const auto next = [&](uint32_t n) {
    state = state * 1103515245u + 12345u;
    return (state >> 16) % n;
  };
  const std::vector<std::string> labels = {"sport", "politics", "tech"};
  for (int d = 0; d < 900; ++d) {
    const uint32_t label = static_cast<uint32_t>(d) % 3;
    std::vector<std::string> terms;
    for (int i = 0; i < 6; ++i) {
      terms.push_back(next(2) == 0 ? words[next(12)] : words[label * 3 + next(3)]);
    }
    docs.push_back({terms, {labels[label]}});
  }
  const TrainingCorpus corpus = make_training_corpus(docs);
  const TunedSettings grid = tune_settings(corpus, TrainOptions(), Decision::kOneOf);
  EXPECT_GT(grid.pruned_candidates, 0u);
  size_t listed = grid.rocchio_gamma_objective.size() + grid.svm_c_objective.size() +
                  grid.logreg_c_objective.size();
  for (const auto& alphas : grid.nb_alpha_objective) listed += alphas.size();
  const size_t nb_listed_at_most =
      nb_alpha_candidates().size() * naive_bayes_methods().size();  // chosen features only
  EXPECT_LT(listed, rocchio_gamma_candidates().size() + linear_c_candidates(Method::kSvm).size() +
                        linear_c_candidates(Method::kLogreg).size() + nb_listed_at_most);
  for (const auto& [gamma, objective] : grid.rocchio_gamma_objective) {
    EXPECT_LE(objective, grid.method_objective[static_cast<size_t>(Method::kRocchio)]) << gamma;
  }
  TrainOptions fixed = TrainOptions();
  fixed.rocchio_gamma = grid.rocchio_gamma;
  fixed.svm_c = grid.svm_c;
  fixed.logreg_c = grid.logreg_c;
  const TunedSettings alone = tune_settings(corpus, fixed, Decision::kOneOf);
  for (Method method : {Method::kRocchio, Method::kSvm, Method::kLogreg}) {
    const auto slot = static_cast<size_t>(method);
    EXPECT_EQ(alone.method_objective[slot], grid.method_objective[slot]) << method_name(method);
    EXPECT_EQ(alone.thresholds[slot], grid.thresholds[slot]) << method_name(method);
  }
}

}  // namespace
}  // namespace autocat::internal

namespace autocat::internal {
namespace {

// Documents of three categories, each one of its own words among six drawn
// from words every category uses alike, about as rare: idf alone lets the
// shared words pick the neighbours, relevance frequency (rf) weighs them
// down.
TrainingCorpus shared_words_corpus() {
  std::vector<LabelledTerms> docs;
  const std::vector<std::string> labels = {"sport", "politics", "tech"};
  uint32_t state = 7;
  const auto next = [&](uint32_t n) {
    state = state * 1103515245u + 12345u;
    return (state >> 16) % n;
  };
  for (int d = 0; d < 900; ++d) {
    const uint32_t label = static_cast<uint32_t>(d) % 3;
    std::vector<std::string> terms;
    terms.push_back(labels[label] + std::to_string(next(30)));
    for (int i = 0; i < 6; ++i) terms.push_back("shared" + std::to_string(next(300)));
    docs.push_back({terms, {labels[label]}});
  }
  return make_training_corpus(docs);
}

// kNN's term weightings clearly behind after the first folds are neither
// searched again nor listed, and the winner is the one chosen when the
// weighting is given.
TEST(TuneSettingsOneOfTest, PrunesKnnWeightingsClearlyBehind) {
  const TrainingCorpus corpus = shared_words_corpus();
  const TunedSettings grid = tune_settings(corpus, TrainOptions(), Decision::kOneOf);
  std::set<std::pair<int, double>> listed;
  for (const KnnCandidate& candidate : grid.knn_objective) {
    listed.insert({static_cast<int>(candidate.tf), candidate.concentration});
    EXPECT_LE(candidate.objective, grid.method_objective[static_cast<size_t>(Method::kKnn)]);
  }
  EXPECT_LT(listed.size(), knn_tf_candidates().size() * knn_concentration_candidates().size());
  // Idf alone is clearly behind here, under either tf form.
  for (KnnTf tf : knn_tf_candidates()) {
    EXPECT_EQ(listed.count({static_cast<int>(tf), 0.0}), 0u) << static_cast<int>(tf);
  }
  EXPECT_GT(grid.knn_concentration, 0.0);
  TrainOptions given = TrainOptions();
  given.knn_concentration = grid.knn_concentration;
  const TunedSettings alone = tune_settings(corpus, given, Decision::kOneOf);
  EXPECT_EQ(alone.knn_k, grid.knn_k);
  EXPECT_EQ(alone.knn_tf, grid.knn_tf);
  EXPECT_EQ(alone.method_objective[static_cast<size_t>(Method::kKnn)],
            grid.method_objective[static_cast<size_t>(Method::kKnn)]);
}

// kNN's cost: each document as a query walks the postings of its distinct
// terms, sum_t df(t)^2 over all of them, per token of the collection; a
// uniform sample of a larger model scales it by their sizes.
TEST(KnnCostTest, PostingsPerTokenOfTheCollectionsDocumentsAsQueries) {
  const TrainingCorpus corpus =
      make_training_corpus({{{"a", "b"}, {"x"}}, {{"a", "c", "c"}, {"y"}}, {{"a"}, {"x"}}});
  // df: a 3, b 1, c 1. Queries walk 3 + 1, 3 + 1 and 3 postings; 6 tokens.
  EXPECT_DOUBLE_EQ(knn_postings_per_token(corpus, 0), 11.0 / 6.0);
  EXPECT_DOUBLE_EQ(knn_postings_per_token(corpus, 3), 11.0 / 6.0);
  EXPECT_DOUBLE_EQ(knn_postings_per_token(corpus, 30), 110.0 / 6.0);
}

// kNN past the cost limit is still cross-validated, but combo stacks the
// other members and the default is one of them; without a limit kNN is
// stacked.
TEST(KnnCostTest, KnnPastTheLimitIsLeftOutOfComboAndTheDefault) {
  const TrainingCorpus corpus = shared_words_corpus();
  const double cost = knn_postings_per_token(corpus, 0);
  TrainOptions options;
  options.choose_default_method = true;
  options.knn_cost_limit = 0;  // none
  const TunedSettings stacked = tune_settings(corpus, options, Decision::kOneOf);
  EXPECT_TRUE(stacked.knn_keeps_up);
  EXPECT_DOUBLE_EQ(stacked.knn_postings_per_token, cost);
  const auto has_knn = [](const ComboModel& combo) {
    return std::count(combo.members.begin(), combo.members.end(),
                      static_cast<int32_t>(Method::kKnn)) == 1;
  };
  EXPECT_TRUE(has_knn(stacked.combo));

  options.knn_cost_limit = cost / 2;
  const TunedSettings left_out = tune_settings(corpus, options, Decision::kOneOf);
  EXPECT_FALSE(left_out.knn_keeps_up);
  EXPECT_FALSE(has_knn(left_out.combo));
  EXPECT_EQ(left_out.combo.members.size() + 1, stacked.combo.members.size());
  const auto knn = static_cast<size_t>(Method::kKnn);
  EXPECT_EQ(left_out.method_objective[knn], stacked.method_objective[knn]);
  EXPECT_GE(left_out.method_objective[static_cast<size_t>(Method::kCombo)], 0.0);

  // The default: the best of the other methods.
  const AnalyzerSettings analyzer = resolve_analyzer_options(AnalyzerOptions());
  const ModelState model = fit_model(corpus, analyzer, options);
  EXPECT_FALSE(model.knn_keeps_up);
  EXPECT_NE(model.training.default_method, Method::kKnn);
  double best_other = -1;
  for (size_t m = 0; m < model.method_objective.size(); ++m) {
    if (m != knn) best_other = std::max(best_other, model.method_objective[m]);
  }
  EXPECT_EQ(model.method_objective[static_cast<size_t>(model.training.default_method)], best_other);
  // A limit the collection keeps within changes nothing.
  options.knn_cost_limit = cost * 2;
  EXPECT_TRUE(tune_settings(corpus, options, Decision::kOneOf).knn_keeps_up);
}

// The analyses' judge: svm cross-validated exactly as among every method,
// and nothing else tuned or calibrated.
TEST(TuneSettingsScopeTest, SvmScopeTunesSvmAsEveryMethodDoes) {
  const TrainingCorpus corpus = shared_words_corpus();
  const TunedSettings every = tune_settings(corpus, TrainOptions(), Decision::kOneOf);
  const TunedSettings svm =
      tune_settings(corpus, TrainOptions(), Decision::kOneOf, {}, TuneScope::kSvm);
  const auto slot = [](Method m) { return static_cast<size_t>(m); };
  EXPECT_EQ(svm.svm_c, every.svm_c);
  EXPECT_EQ(svm.svm_c_objective, every.svm_c_objective);
  EXPECT_EQ(svm.method_objective[slot(Method::kSvm)], every.method_objective[slot(Method::kSvm)]);
  for (Method method : all_methods()) {
    if (method == Method::kSvm) continue;
    EXPECT_EQ(svm.method_objective[slot(method)], -1.0) << method_name(method);
    EXPECT_GE(every.method_objective[slot(method)], 0.0) << method_name(method);
  }
  EXPECT_TRUE(svm.logreg_c_objective.empty());
  EXPECT_TRUE(svm.calibration.empty());
  EXPECT_TRUE(svm.combo.empty());
}

TEST(TuneSettingsMethodsTest, NamedMethodsTuneAsEveryMethodDoesAndNoOthers) {
  const TrainingCorpus corpus = shared_words_corpus();
  const TunedSettings every = tune_settings(corpus, TrainOptions(), Decision::kOneOf);
  TrainOptions options;
  options.methods = {Method::kSvm, Method::kComplementNaiveBayes};
  const TunedSettings some = tune_settings(corpus, options, Decision::kOneOf);
  const auto slot = [](Method m) { return static_cast<size_t>(m); };
  for (Method method : all_methods()) {
    const bool named = method == Method::kSvm || method == Method::kComplementNaiveBayes;
    if (named) {
      EXPECT_EQ(some.method_objective[slot(method)], every.method_objective[slot(method)])
          << method_name(method);
      EXPECT_EQ(some.thresholds[slot(method)].size(), corpus.num_categories());
      EXPECT_FALSE(some.calibration[slot(method)].empty()) << method_name(method);
    } else {
      EXPECT_EQ(some.method_objective[slot(method)], -1.0) << method_name(method);
      EXPECT_TRUE(some.thresholds[slot(method)].empty()) << method_name(method);
      EXPECT_TRUE(some.calibration[slot(method)].empty()) << method_name(method);
    }
  }
  EXPECT_TRUE(some.combo.empty());                  // not named
  EXPECT_TRUE(some.nb_alpha_objective[0].empty());  // nb not tried
  EXPECT_EQ(some.nb_alpha_objective[2], every.nb_alpha_objective[2]);
  ASSERT_EQ(some.runs.size(), 2u);
  for (const TuneRun& run : some.runs) EXPECT_TRUE(run.used);

  // combo named: stacked on the two.
  options.methods.push_back(Method::kCombo);
  const TunedSettings stacked = tune_settings(corpus, options, Decision::kOneOf);
  EXPECT_EQ(stacked.combo.members,
            (std::vector<int32_t>{static_cast<int32_t>(Method::kComplementNaiveBayes),
                                  static_cast<int32_t>(Method::kSvm)}));
  EXPECT_GE(stacked.method_objective[slot(Method::kCombo)], 0.0);
}

TEST(TuneSettingsBudgetTest, AmpleBudgetTunesEveryFamilyAsWithoutOne) {
  const TrainingCorpus corpus = shared_words_corpus();
  TrainOptions options;
  options.svm_c = 1.0;  // the budget's svm candidate
  const TunedSettings unbounded = tune_settings(corpus, options, Decision::kOneOf);
  options.time_budget = 600;
  const TunedSettings budgeted =
      tune_settings(corpus, options, Decision::kOneOf, {}, TuneScope::kEveryMethod, 0,
                    std::chrono::steady_clock::now() + std::chrono::seconds(600));
  EXPECT_EQ(budgeted.method_objective, unbounded.method_objective);
  EXPECT_EQ(budgeted.thresholds, unbounded.thresholds);
  EXPECT_EQ(budgeted.knn_k, unbounded.knn_k);
  EXPECT_EQ(budgeted.nb_alpha, unbounded.nb_alpha);
  // svm first, then the cheapest.
  ASSERT_EQ(budgeted.runs.size(), 5u);
  EXPECT_EQ(budgeted.runs[0].methods, std::vector<Method>{Method::kSvm});
  EXPECT_EQ(budgeted.runs[1].methods, std::vector<Method>{Method::kRocchio});
  for (const TuneRun& run : budgeted.runs) {
    EXPECT_TRUE(run.used) << run.reason;
    EXPECT_EQ(run.folds_run, run.folds);
  }
}

TEST(TuneSettingsBudgetTest, SpentBudgetLeavesEveryMethodUntuned) {
  const TrainingCorpus corpus = shared_words_corpus();
  TrainOptions options;
  options.time_budget = 1;
  const TunedSettings tuned =
      tune_settings(corpus, options, Decision::kOneOf, {}, TuneScope::kEveryMethod, 0,
                    std::chrono::steady_clock::now() - std::chrono::seconds(1));
  EXPECT_TRUE(tuned.thresholds.empty());
  for (const TuneRun& run : tuned.runs) {
    EXPECT_FALSE(run.used);
    EXPECT_EQ(run.folds_run, 0u);
    EXPECT_NE(run.reason.find("time budget"), std::string::npos) << run.reason;
  }
  EXPECT_EQ(untuned_default_method(options), Method::kSvm);
  options.methods = {Method::kCombo, Method::kRocchio, Method::kNaiveBayes};
  EXPECT_EQ(untuned_default_method(options), Method::kRocchio);
  EXPECT_EQ(untuned_default_method(TrainOptions()), Method::kKnn);
}

// Any-of holds every candidate's lists until its family chooses: the
// families run one after another (each on every fold), never interleaved,
// so only one family's lists live at a time.
TEST(TuneSettingsAnyOfTest, FamiliesRunOneAfterAnother) {
  const TrainingCorpus corpus = shared_words_corpus();
  std::vector<std::string> families;  // in the order their steps came
  const auto on_progress = [&](uint64_t, uint64_t, const std::string& step) {
    std::string family = step.substr(0, step.find(','));
    if (family == "svm" || family == "logreg") family = "linear";
    const std::string winners = " winners";
    if (family.size() > winners.size() &&
        family.compare(family.size() - winners.size(), winners.size(), winners) == 0) {
      family.resize(family.size() - winners.size());
    }
    if (families.empty() || families.back() != family) families.push_back(family);
  };
  const TunedSettings tuned = tune_settings(corpus, TrainOptions(), Decision::kAnyOf, on_progress);
  ASSERT_FALSE(tuned.thresholds.empty());
  // linear, knn, naive bayes, rocchio, calibrations: each family once.
  EXPECT_EQ(families.size(), 5u) << ::testing::PrintToString(families);
  std::vector<std::string> sorted = families;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::unique(sorted.begin(), sorted.end()), sorted.end())
      << ::testing::PrintToString(families);
}

}  // namespace
}  // namespace autocat::internal
