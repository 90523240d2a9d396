// Live learning on an open model (Categorizer::learn / forget): kNN sees
// changes at once, they persist in the journal and replay on open, train
// --add folds them in, bad input changes nothing, and learning runs while
// other threads classify.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "autocat/error.h"
#include "classify/decide/categorizer.h"
#include "classify/io/journal.h"
#include "classify/train/trainer.h"
#include "test_util.h"

namespace autocat::internal {
namespace {

using testing_util::read_file;
using testing_util::TempDir;
using testing_util::test_data;
using testing_util::write_file;

const char kComet[] = "The telescope showed the comet's tail and a faint nebula near Jupiter.";

class LiveLearningTest : public testing::Test {
 protected:
  void SetUp() override {
    model_ = dir_.file("model");
    TrainOptions options;
    options.tune_thresholds = false;
    train_model({test_data("fixture_train.jsonl")}, model_, options, ReadOptions(), nullptr);
    knn_.method = Method::kKnn;
    knn_.k = 1;
  }
  std::string best(const Categorizer& categorizer, std::string_view text) const {
    const auto assigned = categorizer.classify(text, knn_);
    return assigned.empty() ? std::string() : assigned.front().name;
  }
  uint64_t journal_bytes(const Categorizer& categorizer) const {
    std::error_code ec;
    const auto size = std::filesystem::file_size(categorizer.paths().journal, ec);
    return ec ? 0 : size;
  }

  TempDir dir_;
  std::string model_;
  ClassifyOptions knn_;
};

TEST_F(LiveLearningTest, KnnSeesALearnedDocumentAtOnceAndAfterReopening) {
  Categorizer categorizer(model_);
  ASSERT_EQ(best(categorizer, kComet), "science");
  ClassifyOptions nb;
  nb.method = Method::kNaiveBayes;
  const DocumentTerms comet = categorizer.document_terms(categorizer.analyzer().analyze(kComet));
  const auto food = static_cast<size_t>(categorizer.category_index("food"));
  const double nb_food_before = categorizer.scores(comet, nb)[food];
  EXPECT_EQ(categorizer.live_model(Method::kNaiveBayes), nullptr);
  categorizer.learn("live-1", kComet, {"food"});
  EXPECT_EQ(best(categorizer, kComet), "food");
  // Naive Bayes sees it at once too (its counts moved towards food).
  EXPECT_NE(categorizer.live_model(Method::kNaiveBayes), nullptr);
  EXPECT_GT(categorizer.scores(comet, nb)[food], nb_food_before);
  const LiveStatus status = categorizer.live_status();
  EXPECT_EQ(status.learned_now, 1u);
  EXPECT_EQ(status.learned_present, 1u);

  const Categorizer reopened(model_);
  EXPECT_EQ(best(reopened, kComet), "food");
  EXPECT_EQ(reopened.live_status().replayed, 1u);
  EXPECT_TRUE(reopened.live_status().warnings.empty());
}

TEST_F(LiveLearningTest, ForgetHidesTrainedAndLearnedDocuments) {
  Categorizer categorizer(model_);
  categorizer.learn("live-1", kComet, {"food"});
  categorizer.forget("live-1");
  EXPECT_EQ(best(categorizer, kComet), "science");
  // A trained document: its text is its own nearest neighbour until forgotten.
  const std::string striker = "The striker scored twice as the home team won the match 3-1.";
  const auto before = categorizer.live_index().neighbours(
      categorizer.document_terms(categorizer.analyzer().analyze(striker)), 1);
  ASSERT_EQ(before.size(), 1u);
  EXPECT_NEAR(before[0].similarity, 1.0, 1e-5);
  categorizer.forget("sp-01");
  const auto after = categorizer.live_index().neighbours(
      categorizer.document_terms(categorizer.analyzer().analyze(striker)), 1);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_NE(after[0].doc, before[0].doc);
  EXPECT_LT(after[0].similarity, 0.99f);

  const Categorizer reopened(model_);
  EXPECT_EQ(reopened.live_status().replayed, 3u);
  EXPECT_EQ(reopened.live_index().learned_docs(), 0u);
  EXPECT_EQ(reopened.live_index().forgotten_docs(), 1u);
  EXPECT_FALSE(reopened.live_index().contains("sp-01"));
  EXPECT_TRUE(reopened.live_index().contains("sp-02"));
}

TEST_F(LiveLearningTest, BadInputNamesTheProblemAndChangesNothing) {
  Categorizer categorizer(model_);
  categorizer.learn("live-1", kComet, {"food"});
  const uint64_t bytes = journal_bytes(categorizer);
  ASSERT_GT(bytes, 0u);
  auto expect_error = [&](auto&& call, const std::string& needle) {
    try {
      call();
      ADD_FAILURE() << "no error; expected one with: " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
    EXPECT_EQ(journal_bytes(categorizer), bytes) << needle;
  };
  expect_error([&] { categorizer.learn("x", kComet, {"gardening"}); }, "'gardening'");
  expect_error([&] { categorizer.learn("x", kComet, {"gardening"}); }, "train --add");
  expect_error([&] { categorizer.learn("x", kComet, {}); }, "no labels");
  expect_error([&] { categorizer.learn("", kComet, {"food"}); }, "no id");
  expect_error([&] { categorizer.learn("x", "  ", {"food"}); }, "no terms");
  // A batch is all or nothing: its second document is bad.
  expect_error(
      [&] {
        categorizer.learn({{"ok", kComet, {"food"}}, {"bad", kComet, {"gardening"}}});
      },
      "'bad'");
  expect_error([&] { categorizer.forget("no-such-id"); }, "'no-such-id'");
  expect_error([&] { categorizer.forget(std::vector<std::string>{"sp-01", "nope"}); }, "'nope'");
  EXPECT_TRUE(categorizer.live_index().contains("sp-01"));
  EXPECT_FALSE(categorizer.live_index().contains("ok"));
  EXPECT_EQ(categorizer.live_status().learned_present, 1u);
}

TEST_F(LiveLearningTest, TornJournalRecordIsReportedAndTheNextLearnCutsIt) {
  {
    Categorizer categorizer(model_);
    categorizer.learn("live-1", kComet, {"food"});
    categorizer.learn("live-2", "Bake the bread with yeast and flour.", {"science"});
  }
  const std::string journal = resolve_model_dir(model_).journal;
  const std::string whole = read_file(journal);
  write_file(journal, whole.substr(0, whole.size() - 5));  // a crash mid-append
  Categorizer categorizer(model_);
  const LiveStatus status = categorizer.live_status();
  EXPECT_EQ(status.replayed, 1u);
  ASSERT_EQ(status.warnings.size(), 1u);
  EXPECT_NE(status.warnings[0].find("torn"), std::string::npos) << status.warnings[0];
  EXPECT_NE(status.warnings[0].find(journal), std::string::npos) << status.warnings[0];
  EXPECT_EQ(best(categorizer, kComet), "food");
  categorizer.learn("live-3", "Bake the bread with yeast and flour.", {"science"});
  const Categorizer reopened(model_);
  EXPECT_EQ(reopened.live_status().replayed, 2u);
  EXPECT_TRUE(reopened.live_status().warnings.empty());
  EXPECT_TRUE(reopened.live_index().contains("live-3"));
  EXPECT_FALSE(reopened.live_index().contains("live-2"));
}

TEST_F(LiveLearningTest, TrainAddFoldsTheJournalIntoTheNextGeneration) {
  Categorizer categorizer(model_);
  categorizer.learn("live-1", kComet, {"food"});
  categorizer.forget("sp-01");
  const std::string old_journal = categorizer.paths().journal;
  // A refit: no inputs, only the journal.
  const TrainReport report = add_to_model({}, model_, ReadOptions(), nullptr);
  EXPECT_EQ(report.journal_learned, 1u);
  EXPECT_EQ(report.journal_forgotten, 1u);
  EXPECT_EQ(report.documents, 24u);  // 24 trained + 1 learned - 1 forgotten

  const Categorizer refitted(model_);
  EXPECT_NE(refitted.paths().journal, old_journal);
  EXPECT_FALSE(std::filesystem::exists(refitted.paths().journal));
  EXPECT_EQ(refitted.live_status().replayed, 0u);
  EXPECT_EQ(refitted.knn_index().num_docs(), 24u);
  EXPECT_TRUE(refitted.live_index().contains("live-1"));
  EXPECT_FALSE(refitted.live_index().contains("sp-01"));
  EXPECT_EQ(best(refitted, kComet), "food");

  // The categorizer opened before the refit may no longer write.
  try {
    categorizer.learn("live-2", kComet, {"food"});
    FAIL() << "learned into a replaced generation";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("reopen the model"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(categorizer.live_index().contains("live-2"));
  // Nothing left to fold: a second refit is refused.
  EXPECT_THROW(add_to_model({}, model_, ReadOptions(), nullptr), InvalidArgumentError);
}

// An open model that outlived two trains (its generation, training database
// included, removed): learn and forget say to reopen it, not to train one.
TEST_F(LiveLearningTest, LearnOnAModelTrainedTwiceSinceSaysReopenIt) {
  Categorizer categorizer(model_);
  TrainOptions options;
  options.tune_thresholds = false;
  for (int i = 0; i < 2; ++i) {
    train_model({test_data("fixture_train.jsonl")}, model_, options, ReadOptions(), nullptr);
  }
  for (const bool learning : {true, false}) {
    try {
      if (learning) {
        categorizer.learn("live-1", kComet, {"food"});
      } else {
        categorizer.forget("sp-01");
      }
      FAIL() << "changed a removed generation";
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("reopen the model"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("train one"), std::string::npos) << e.what();
    }
  }
}

// A crafted journal record (checksums right) saying a term occurs 2^31
// times: train --add folds it in as a count, not 2^31 tokens in memory.
TEST_F(LiveLearningTest, TrainAddFoldsAHugeTermCountWithoutSpellingItOut) {
  std::string journal;
  {
    Categorizer categorizer(model_);
    categorizer.learn("live-1", kComet, {"food"});
    journal = categorizer.paths().journal;
  }
  JournalRecord record;
  record.id = "live-2";
  record.labels = {"food"};
  record.terms = {{"bread", uint32_t{1} << 31}, {"yeast", 1}};
  write_file(journal, read_file(journal) + encode_journal_records({record}, 2));
  ASSERT_EQ(read_journal(journal).records.size(), 2u);
  const TrainReport report = add_to_model({}, model_, ReadOptions(), nullptr);
  EXPECT_EQ(report.journal_learned, 2u);
  const Categorizer refitted(model_);
  EXPECT_TRUE(refitted.live_index().contains("live-2"));
}

// Every reader gets the journal's warnings once each: a torn tail at open,
// records whose category the model lacks when they are replayed.
TEST_F(LiveLearningTest, WarningsAreTakenOnceEach) {
  std::string journal;
  {
    Categorizer categorizer(model_);
    categorizer.learn("live-1", kComet, {"food"});
    journal = categorizer.paths().journal;
  }
  JournalRecord unknown;
  unknown.id = "live-2";
  unknown.labels = {"no-such-category"};
  unknown.terms = {{"bread", 1}};
  write_file(journal, read_file(journal) + encode_journal_records({unknown}, 2) + "torn");
  const Categorizer categorizer(model_);
  std::vector<std::string> warnings = categorizer.take_warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("torn"), std::string::npos) << warnings[0];
  EXPECT_TRUE(categorizer.take_warnings().empty());
  best(categorizer, kComet);  // kNN replays the journal
  warnings = categorizer.take_warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("no-such-category"), std::string::npos) << warnings[0];
  EXPECT_TRUE(categorizer.take_warnings().empty());
  EXPECT_EQ(categorizer.live_status().warnings.size(), 2u);
}

TEST_F(LiveLearningTest, TrainingANewModelWarnsThatTheJournalIsNotCarriedOver) {
  {
    Categorizer categorizer(model_);
    categorizer.learn("live-1", kComet, {"food"});
  }
  std::vector<std::string> warnings;
  TrainOptions options;
  options.tune_thresholds = false;
  train_model({test_data("fixture_train.jsonl")}, model_, options, ReadOptions(),
              [&](const std::string& warning) { warnings.push_back(warning); });
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("journal"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("train --add"), std::string::npos) << warnings[0];
  const Categorizer retrained(model_);
  EXPECT_FALSE(retrained.live_index().contains("live-1"));
  EXPECT_EQ(best(retrained, kComet), "science");
}

TEST_F(LiveLearningTest, ConcurrentLearnForgetAndClassify) {
  Categorizer categorizer(model_);
  const std::vector<std::string> texts = {kComet, "Bake the bread with yeast and flour.",
                                          "The goalkeeper saved a penalty."};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> classified{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&, t] {
      ClassifyOptions options;
      options.method = Method::kKnn;
      options.k = 5;
      size_t i = size_t(t);
      while (!stop.load()) {
        const auto assigned = categorizer.classify(texts[i++ % texts.size()], options);
        EXPECT_EQ(assigned.size(), 1u);
        ++classified;
      }
    });
  }
  std::vector<std::thread> writers;
  constexpr int kPerWriter = 40;
  for (int w = 0; w < 2; ++w) {
    writers.emplace_back([&, w] {
      // The readers are running before the first learn: otherwise fast
      // writers could finish before any classification started.
      while (classified.load() < readers.size()) std::this_thread::yield();
      const std::vector<std::string> labels = {"food", "science", "sports"};
      for (int i = 0; i < kPerWriter; ++i) {
        const std::string id = "w" + std::to_string(w) + "-" + std::to_string(i);
        categorizer.learn({{id, texts[size_t(i) % texts.size()], {labels[size_t(i) % 3]}}},
                          /*sync=*/false);
        if (i % 4 == 3) categorizer.forget({id}, /*sync=*/false);
      }
    });
  }
  for (std::thread& writer : writers) writer.join();
  stop = true;
  for (std::thread& reader : readers) reader.join();
  EXPECT_GT(classified.load(), 0u);
  const uint32_t expected = 2 * (kPerWriter - kPerWriter / 4);
  EXPECT_EQ(categorizer.live_status().learned_present, expected);
  // Every call reached the journal, in an order that replays to the same set.
  const Categorizer reopened(model_);
  EXPECT_EQ(reopened.live_status().replayed, uint64_t(2 * (kPerWriter + kPerWriter / 4)));
  EXPECT_EQ(reopened.live_index().learned_docs(), expected);
}

}  // namespace
}  // namespace autocat::internal
