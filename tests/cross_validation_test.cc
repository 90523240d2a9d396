#include "classify/train/cross_validation.h"

#include <gtest/gtest.h>
#include <xapian.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "autocat/error.h"
#include "classify/decide/categorizer.h"
#include "classify/io/json_text.h"
#include "classify/model/model_io.h"
#include "classify/train/thresholds.h"
#include "classify/train/trainer.h"
#include "tests/test_util.h"

namespace autocat::internal {
namespace {

using testing_util::TempDir;

// `per_category` documents labelled with each name, in that order, then
// `unlabelled` documents without labels. Each document has its category's
// own term, a shared term, a numbered term and a term of its own (so that
// no two are copies, which stratified_folds keeps together).
std::vector<LabelledTerms> synthetic_documents(const std::vector<std::string>& names,
                                               const std::vector<int>& per_category,
                                               int unlabelled = 0) {
  std::vector<LabelledTerms> docs;
  int serial = 0;
  for (size_t c = 0; c < names.size(); ++c) {
    for (int i = 0; i < per_category[c]; ++i, ++serial) {
      docs.push_back({{"own" + names[c], "own" + names[c], "shared",
                       "n" + std::to_string(serial % 7), "doc" + std::to_string(serial)},
                      {names[c]}});
    }
  }
  for (int i = 0; i < unlabelled; ++i) {
    docs.push_back({{"shared", "n1", "other", "doc" + std::to_string(serial++)}, {}});
  }
  return docs;
}

// counts[fold][category] (the last column: unlabelled documents).
std::vector<std::vector<uint32_t>> fold_category_counts(const TrainingCorpus& corpus,
                                                        const std::vector<uint32_t>& fold_of,
                                                        uint32_t folds) {
  std::vector<std::vector<uint32_t>> counts(folds,
                                            std::vector<uint32_t>(corpus.num_categories() + 1));
  for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
    const std::vector<uint32_t>& labels = corpus.doc_categories[d];
    if (labels.empty()) ++counts[fold_of[d]][corpus.num_categories()];
    for (uint32_t c : labels) ++counts[fold_of[d]][c];
  }
  return counts;
}

TEST(StratifiedFoldsTest, EveryCategoryIsSpreadEvenly) {
  const TrainingCorpus corpus =
      make_training_corpus(synthetic_documents({"x", "y", "z"}, {10, 7, 5}, 3));
  const std::vector<uint32_t> fold_of = stratified_folds(corpus, 5, 1);
  ASSERT_EQ(fold_of.size(), 25u);
  const auto counts = fold_category_counts(corpus, fold_of, 5);
  for (size_t c = 0; c <= corpus.num_categories(); ++c) {
    uint32_t low = UINT32_MAX, high = 0;
    for (const auto& fold : counts) {
      low = std::min(low, fold[c]);
      high = std::max(high, fold[c]);
    }
    EXPECT_LE(high - low, 1u) << "category " << c;
  }
  for (const auto& fold : counts) {
    EXPECT_EQ(fold[0], 2u);  // x: 10 over 5 folds
    EXPECT_EQ(fold[2], 1u);  // z: 5 over 5 folds
  }
  std::vector<uint32_t> sizes(5, 0);
  for (uint32_t fold : fold_of) ++sizes[fold];
  EXPECT_EQ(sizes, (std::vector<uint32_t>{5, 5, 5, 5, 5}));
}

TEST(StratifiedFoldsTest, DeterministicForASeed) {
  const TrainingCorpus corpus = make_training_corpus(synthetic_documents({"x", "y"}, {9, 6}));
  EXPECT_EQ(stratified_folds(corpus, 3, 7), stratified_folds(corpus, 3, 7));
  EXPECT_NE(stratified_folds(corpus, 3, 7), stratified_folds(corpus, 3, 8));
}

// std::mt19937 is specified to the bit and the shuffle and the draw are our
// own, so this split is the same with every compiler and standard library.
// Expected: worked out with an independent MT19937 (the reference
// algorithm; its 10000th draw from seed 5489 is 4123659995 as the standard
// requires): the draws below 6, 5, 4, 3, 2 shuffle x, then below 4, 3, 2
// shuffle y, and the ten documents are dealt round-robin.
TEST(StratifiedFoldsTest, SameSplitOnEveryPlatform) {
  const TrainingCorpus corpus = make_training_corpus(synthetic_documents({"x", "y"}, {6, 4}));
  EXPECT_EQ(stratified_folds(corpus, 3, 1), (std::vector<uint32_t>{0, 2, 2, 0, 1, 1, 0, 0, 2, 1}));
}

// A document goes with its rarest label: the four documents that also carry
// "rare" land in four different folds.
TEST(StratifiedFoldsTest, MultiLabelDocumentsGoWithTheirRarestLabel) {
  std::vector<LabelledTerms> docs;
  for (int i = 0; i < 12; ++i) docs.push_back({{"a", "b", "doc" + std::to_string(i)}, {"common"}});
  for (int i = 0; i < 4; ++i) {
    docs.push_back({{"a", "c", "rare" + std::to_string(i)}, {"common", "rare"}});
  }
  const TrainingCorpus corpus = make_training_corpus(docs);
  for (uint32_t seed : {1u, 2u, 3u}) {
    const auto counts = fold_category_counts(corpus, stratified_folds(corpus, 4, seed), 4);
    for (const auto& fold : counts) {
      EXPECT_EQ(fold[1], 1u);  // rare
      EXPECT_EQ(fold[0], 4u);  // common: 16 over 4 folds
    }
  }
}

TEST(StratifiedFoldsTest, RefusesTooFewFoldsOrTooSmallCategories) {
  const TrainingCorpus corpus =
      make_training_corpus(synthetic_documents({"x", "y", "z"}, {10, 7, 5}));
  EXPECT_THROW(stratified_folds(corpus, 1, 1), InvalidArgumentError);
  EXPECT_THROW(stratified_folds(corpus, 0, 1), InvalidArgumentError);
  EXPECT_NO_THROW(stratified_folds(corpus, 5, 1));
  try {
    stratified_folds(corpus, 6, 1);
    FAIL() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_EQ(std::string(e.what()),
              "6 folds need at least 6 documents in every category; category 'z' has 5 (use "
              "fewer folds)");
  }
}

// Each group (rarest label) keeps its share of the sample, rounded up, or
// kMinTuningSampleGroup documents, or all of them if it has fewer.
// Copies have the same terms with the same counts, whatever their token
// order or labels; a different count is another document, and documents
// without terms are never copies of each other.
TEST(CopyGroupsTest, SameTermsAndCountsAreCopiesOfTheFirst) {
  const TrainingCorpus corpus = make_training_corpus({
      {{"bread", "butter"}, {"food"}},          // 0
      {{"goal", "match", "match"}, {"sport"}},  // 1
      {{"butter", "bread"}, {"sport"}},         // 2: copy of 0 (order, label differ)
      {{"goal", "match"}, {"sport"}},           // 3: another count of "match"
      {{"match", "goal", "match"}, {"sport"}},  // 4: copy of 1
      {{}, {"food"}},                           // 5: no terms
      {{}, {"food"}},                           // 6: no terms, not a copy of 5
      {{"bread", "butter"}, {"food"}},          // 7: copy of 0
  });
  EXPECT_EQ(copy_groups(corpus), (std::vector<uint32_t>{0, 1, 0, 3, 1, 5, 6, 0}));
}

// Every copy is held out in the fold of the document it copies; without
// the copies, the split is the one stratified_folds() makes anyway.
TEST(StratifiedFoldsTest, CopiesShareTheirOriginalsFold) {
  std::vector<LabelledTerms> docs = synthetic_documents({"x", "y"}, {10, 10});
  const size_t distinct = docs.size();
  for (size_t d = 0; d < distinct; d += 3) docs.push_back(docs[d]);  // 7 copies
  const TrainingCorpus corpus = make_training_corpus(docs);
  const std::vector<uint32_t> original = copy_groups(corpus);
  uint32_t copies = 0;
  for (uint32_t seed : {1u, 2u, 3u}) {
    const std::vector<uint32_t> fold_of = stratified_folds(corpus, 4, seed);
    copies = 0;
    std::set<uint32_t> folds_with_copies;
    for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
      if (original[d] == d) continue;
      ++copies;
      EXPECT_EQ(fold_of[d], fold_of[original[d]]) << "document " << d << ", seed " << seed;
      folds_with_copies.insert(fold_of[d]);
    }
    EXPECT_GT(folds_with_copies.size(), 1u) << "seed " << seed;
  }
  EXPECT_EQ(copies, 7u);

  CrossValidationOptions options;
  options.folds = 4;
  options.methods = {Method::kRocchio};
  TrainOptions train;
  train.tune_thresholds = false;
  const CrossValidationResult result =
      cross_validate(corpus, resolve_analyzer_options(AnalyzerOptions()), train, options);
  EXPECT_EQ(result.copied_documents, 7u);
  for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
    EXPECT_EQ(result.fold_of[d], result.fold_of[original[d]]) << "document " << d;
  }
}

TEST(TuningSampleTest, KeepsEachCategorysShareAndAFloorForRareOnes) {
  const TrainingCorpus corpus =
      make_training_corpus(synthetic_documents({"big", "mid", "rare"}, {3000, 900, 20}, 80));
  const std::vector<uint8_t> keep = tuning_sample(corpus, 392, 1);  // a tenth of 3920 + 80
  const auto counts = fold_category_counts(corpus, std::vector<uint32_t>(keep.begin(), keep.end()),
                                           2);  // "fold" 1 = kept
  EXPECT_EQ(counts[1][0], 294u);                // big: ceil(3000 * 0.098)
  EXPECT_EQ(counts[1][1], 89u);                 // mid: ceil(900 * 0.098)
  EXPECT_EQ(counts[1][2], 20u);                 // rare: all 20, below the floor of 50
  EXPECT_EQ(counts[1][3], 50u);                 // unlabelled: the floor (ceil(80 * 0.098) = 8)
  EXPECT_EQ(tuning_sample(corpus, 392, 1), keep);
  EXPECT_NE(tuning_sample(corpus, 392, 2), keep);
  // A sample as large as the collection keeps everything.
  const std::vector<uint8_t> all = tuning_sample(corpus, corpus.num_docs(), 1);
  EXPECT_EQ(std::count(all.begin(), all.end(), 1), corpus.num_docs());
}

// A collection larger than TrainOptions::tuning_sample is cross-validated
// on the sample alone: the same settings and thresholds as tuning on the
// sample's corpus by hand; the models themselves are fitted on everything.
TEST(TuningSampleTest, FitModelTunesOnTheSampleAndFitsOnEverything) {
  const TrainingCorpus corpus =
      make_training_corpus(synthetic_documents({"x", "y", "z"}, {400, 250, 120}));
  const AnalyzerSettings analyzer = resolve_analyzer_options(AnalyzerOptions());
  TrainOptions options;
  options.tuning_sample = 200;
  const ModelState model = fit_model(corpus, analyzer, options);
  const FoldCorpus sample = fold_corpus(corpus, tuning_sample(corpus, 200, 1));
  EXPECT_EQ(model.tuned_on_documents, sample.corpus.num_docs());
  EXPECT_LT(sample.corpus.num_docs(), 260u);
  const TunedSettings by_hand = tune_settings(sample.corpus, options, model.decision);
  ASSERT_FALSE(by_hand.thresholds.empty());
  EXPECT_EQ(model.thresholds, by_hand.thresholds);
  EXPECT_EQ(model.knn_k, by_hand.knn_k);
  EXPECT_EQ(model.method_objective, by_hand.method_objective);
  EXPECT_EQ(model.num_docs, corpus.num_docs());
  EXPECT_EQ(model.category_doc_counts, (std::vector<uint32_t>{400, 250, 120}));

  options.tuning_sample = 0;  // every document
  EXPECT_EQ(fit_model(corpus, analyzer, options).tuned_on_documents, corpus.num_docs());
}

class FoldCorpusTest : public testing::Test {
 protected:
  std::vector<LabelledTerms> docs_ = {
      {{"a", "b", "b"}, {"x"}}, {{"b", "c"}, {"y"}}, {{"c", "c", "d"}, {"x", "y"}}, {{"a"}, {}}};
  TrainingCorpus corpus_ = make_training_corpus(docs_);
};

// Documents 1 and 3 ("b c", "a"): exactly the corpus of those two alone.
TEST_F(FoldCorpusTest, IsTheCorpusOfTheKeptDocumentsAlone) {
  const FoldCorpus fold = fold_corpus(corpus_, {0, 1, 0, 1});
  const TrainingCorpus alone = make_training_corpus({docs_[1], docs_[3]});
  EXPECT_EQ(fold.corpus.terms, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(fold.corpus.terms, alone.terms);
  EXPECT_EQ(fold.corpus.df, alone.df);
  EXPECT_EQ(fold.corpus.postings_start, alone.postings_start);
  EXPECT_EQ(fold.corpus.posting_doc, alone.posting_doc);
  EXPECT_EQ(fold.corpus.posting_wdf, alone.posting_wdf);
  EXPECT_EQ(fold.corpus.doc_length, alone.doc_length);
  EXPECT_EQ(fold.corpus.doc_categories, (std::vector<std::vector<uint32_t>>{{1}, {}}));
  // Every category stays, so category indexes are the full corpus' ones.
  EXPECT_EQ(fold.corpus.categories, corpus_.categories);
  EXPECT_EQ(fold.fold_term, (std::vector<int64_t>{0, 1, 2, -1}));
}

// Held-out document 2 ("c c d") seen by the fold's model: c is term 2, d is
// unknown (counted only in total_tokens).
TEST_F(FoldCorpusTest, HeldOutDocumentsUseTheFoldsTermIds) {
  const FoldCorpus fold = fold_corpus(corpus_, {0, 1, 0, 1});
  const DocumentTerms doc = fold_document(corpus_documents(corpus_)[2], fold.fold_term);
  ASSERT_EQ(doc.terms.size(), 1u);
  EXPECT_EQ(doc.terms[0].term, 2u);
  EXPECT_EQ(doc.terms[0].count, 2u);
  EXPECT_EQ(doc.known_tokens, 2u);
  EXPECT_EQ(doc.total_tokens, 3u);
}

TEST(MeanAndStdTest, SampleStandardDeviation) {
  // Mean 2.5; squares 2.25 + 0.25 + 0.25 + 2.25 = 5, / 3 -> std sqrt(5/3).
  const MeanStd four = mean_and_std({1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(four.mean, 2.5);
  EXPECT_DOUBLE_EQ(four.std, std::sqrt(5.0 / 3));
  EXPECT_NEAR(four.std, 1.290994, 1e-6);
  EXPECT_EQ(mean_and_std({0.8}).mean, 0.8);
  EXPECT_EQ(mean_and_std({0.8}).std, 0.0);
  EXPECT_EQ(mean_and_std({}).mean, 0.0);
}

TEST(CrossValidateTest, UnlabelledDocumentsCountOrAreSkipped) {
  const TrainingCorpus corpus = make_training_corpus(synthetic_documents({"x", "y"}, {6, 6}, 3));
  const AnalyzerSettings analyzer = resolve_analyzer_options(AnalyzerOptions());
  TrainOptions train;
  train.tune_thresholds = false;
  CrossValidationOptions options;
  options.folds = 3;
  options.methods = {Method::kRocchio};
  // Unlabelled documents make the data any-of, and any-of counts them.
  const CrossValidationResult counted = cross_validate(corpus, analyzer, train, options);
  EXPECT_EQ(counted.decision, Decision::kAnyOf);
  EXPECT_TRUE(counted.count_unlabelled);
  EXPECT_EQ(counted.unlabelled_counted, 3u);
  EXPECT_EQ(counted.methods[0].pooled.documents(), 15u);

  options.count_unlabelled = false;
  const CrossValidationResult skipped = cross_validate(corpus, analyzer, train, options);
  EXPECT_EQ(skipped.unlabelled_skipped, 3u);
  EXPECT_EQ(skipped.unlabelled_counted, 0u);
  EXPECT_EQ(skipped.methods[0].pooled.documents(), 12u);
  EXPECT_EQ(skipped.fold_documents, (std::vector<uint32_t>{5, 5, 5}));
}

// The fixture trained as `autocat train` does, its documents in input order.
class CrossValidateFixtureTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const std::string model = dir_->file("all");
    train_model({testing_util::test_data("fixture_train.jsonl")}, model, TrainOptions(),
                ReadOptions(), nullptr);
    const ModelPaths paths = resolve_model_dir(model);
    corpus_ = new TrainingCorpus(load_training_corpus(Xapian::Database(paths.training_db)));
    analyzer_ = new AnalyzerSettings(read_model_file(paths.model_file).analyzer);
  }
  static void TearDownTestSuite() {
    delete analyzer_;
    delete corpus_;
    delete dir_;
  }

  static TempDir* dir_;
  static TrainingCorpus* corpus_;
  static AnalyzerSettings* analyzer_;
};
TempDir* CrossValidateFixtureTest::dir_ = nullptr;
TrainingCorpus* CrossValidateFixtureTest::corpus_ = nullptr;
AnalyzerSettings* CrossValidateFixtureTest::analyzer_ = nullptr;

// Each fold's numbers are those of a model trained by train_model() on the
// other folds' lines of the fixture and evaluated on its own lines.
TEST_F(CrossValidateFixtureTest, EqualsTrainingOnTheOtherFoldsByHand) {
  const std::vector<std::string> lines = testing_util::split_lines(
      testing_util::read_file(testing_util::test_data("fixture_train.jsonl")));
  ASSERT_EQ(corpus_->num_docs(), lines.size());
  std::vector<Json> records(lines.size());
  for (size_t d = 0; d < lines.size(); ++d) {
    std::string error;
    ASSERT_TRUE(parse_json(lines[d], &records[d], &error)) << error;
    // Corpus document d is line d.
    const std::string label = records[d].at("labels").at(0).get<std::string>();
    ASSERT_EQ(corpus_->categories[corpus_->doc_categories[d].at(0)], label);
  }

  CrossValidationOptions options;
  options.folds = 3;
  options.seed = 11;
  options.methods = all_methods();
  const CrossValidationResult result =
      cross_validate(*corpus_, *analyzer_, TrainOptions(), options);
  ASSERT_EQ(result.methods.size(), all_methods().size());
  EXPECT_EQ(result.decision, Decision::kOneOf);
  EXPECT_EQ(result.fold_documents, (std::vector<uint32_t>{8, 8, 8}));

  TempDir scratch;
  for (uint32_t fold = 0; fold < 3; ++fold) {
    std::string training;
    std::vector<size_t> held_out;
    for (size_t d = 0; d < lines.size(); ++d) {
      if (result.fold_of[d] == fold) {
        held_out.push_back(d);
      } else {
        training += lines[d] + "\n";
      }
    }
    const std::string input = scratch.file("fold" + std::to_string(fold) + ".jsonl");
    testing_util::write_file(input, training);
    const std::string model = scratch.file("model" + std::to_string(fold));
    train_model({input}, model, TrainOptions(), ReadOptions(), nullptr);
    const Categorizer categorizer(model);
    ASSERT_EQ(categorizer.categories(), corpus_->categories);

    for (const MethodFolds& method : result.methods) {
      SCOPED_TRACE(method_name(method.method) + " fold " + std::to_string(fold));
      ClassifyOptions classify;
      classify.method = method.method;
      Evaluation by_hand(corpus_->categories);
      LogLoss log_loss_by_hand;
      for (size_t d : held_out) {
        const DocumentTerms terms = categorizer.document_terms(
            categorizer.analyzer().analyze(records[d].at("text").get<std::string>()));
        const std::vector<double> scores = categorizer.scores(terms, classify);
        std::vector<uint32_t> assigned;
        for (const Category& category : categorizer.decide(scores, classify)) {
          assigned.push_back(static_cast<uint32_t>(categorizer.category_index(category.name)));
        }
        by_hand.add(corpus_->doc_categories[d], assigned);
        log_loss_by_hand.add(scores, corpus_->doc_categories[d].at(0));
      }
      const Evaluation& cross_validated = method.folds.at(fold);
      EXPECT_EQ(cross_validated.documents(), by_hand.documents());
      EXPECT_EQ(cross_validated.accuracy(), by_hand.accuracy());
      EXPECT_EQ(cross_validated.confusion(), by_hand.confusion());
      for (size_t c = 0; c < corpus_->num_categories(); ++c) {
        EXPECT_EQ(cross_validated.per_category()[c].true_positives,
                  by_hand.per_category()[c].true_positives);
        EXPECT_EQ(cross_validated.per_category()[c].false_positives,
                  by_hand.per_category()[c].false_positives);
      }
      if (gives_probabilities(method.method)) {
        ASSERT_EQ(method.fold_log_loss.size(), 3u);
        EXPECT_EQ(method.fold_log_loss[fold].documents(), log_loss_by_hand.documents());
        EXPECT_NEAR(method.fold_log_loss[fold].value(), log_loss_by_hand.value(), 1e-12);
      } else {
        EXPECT_TRUE(method.fold_log_loss.empty());
      }
    }
  }
}

// The pooled evaluation adds up the folds.
TEST_F(CrossValidateFixtureTest, PooledIsTheSumOfTheFolds) {
  CrossValidationOptions options;
  options.folds = 4;
  options.methods = {Method::kNaiveBayes, Method::kKnn};
  const CrossValidationResult result =
      cross_validate(*corpus_, *analyzer_, TrainOptions(), options);
  for (const MethodFolds& method : result.methods) {
    EXPECT_EQ(method.pooled.documents(), 24u);
    std::vector<std::vector<uint64_t>> confusion(3, std::vector<uint64_t>(4, 0));
    double log_loss_total = 0;
    uint64_t log_loss_documents = 0;
    for (size_t f = 0; f < method.folds.size(); ++f) {
      for (size_t t = 0; t < 3; ++t) {
        for (size_t a = 0; a < 4; ++a) confusion[t][a] += method.folds[f].confusion()[t][a];
      }
      if (!method.fold_log_loss.empty()) {
        log_loss_total += method.fold_log_loss[f].value() * method.fold_log_loss[f].documents();
        log_loss_documents += method.fold_log_loss[f].documents();
      }
    }
    EXPECT_EQ(method.pooled.confusion(), confusion);
    if (method.method == Method::kNaiveBayes) {
      // Short fixture documents often share no term with the other folds:
      // those have no distribution and are left out of log-loss.
      const LogLoss& pooled = method.pooled_log_loss;
      EXPECT_EQ(pooled.documents() + pooled.no_evidence(), 24u);
      EXPECT_GT(pooled.documents(), 0u);
      EXPECT_EQ(log_loss_documents, pooled.documents());
      EXPECT_NEAR(pooled.value(), log_loss_total / static_cast<double>(pooled.documents()), 1e-12);
    }
  }
  // The same seed gives the same results.
  const CrossValidationResult again = cross_validate(*corpus_, *analyzer_, TrainOptions(), options);
  EXPECT_EQ(again.fold_of, result.fold_of);
  EXPECT_EQ(again.methods[1].pooled.confusion(), result.methods[1].pooled.confusion());
}

TEST_F(CrossValidateFixtureTest, TooManyFoldsNameTheSmallestCategory) {
  CrossValidationOptions options;
  options.folds = 9;  // every fixture category has 8 documents
  try {
    cross_validate(*corpus_, *analyzer_, TrainOptions(), options);
    FAIL() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("category 'food' has 8"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace autocat::internal
