// CategoryIndexer::refresh() and snapshot(): a long-lived indexer follows
// new model generations and what other indexers journal, and a snapshot
// keeps one generation for a series of calls.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "autocat/category_indexer.h"
#include "autocat/error.h"
#include "classify/io/model_dir.h"
#include "classify/train/trainer.h"
#include "plugin/indexer_access.h"
#include "tests/test_util.h"

namespace autocat {
namespace {

namespace fs = std::filesystem;

const char kSportsText[] = "The striker scored in the match and the team won the final.";

void train(const std::string& dir) {
  internal::train_model({testing_util::test_data("fixture_train.jsonl")}, dir, TrainOptions(),
                        internal::ReadOptions(), [](const std::string&) {});
}

// Installs a new generation with one more document, of a category the
// model did not have.
void add_generation(const testing_util::TempDir& temp, const std::string& dir) {
  const std::string extra = temp.file("extra.jsonl");
  std::ofstream(extra) << R"({"id": "m-1", "labels": ["music"], "text": "The violinist played )"
                          R"(a sonata with the orchestra."})"
                       << '\n';
  internal::add_to_model({extra}, dir, internal::ReadOptions(), [](const std::string&) {});
}

std::vector<Category> score(const CategoryIndexer& indexer, std::optional<Method> method) {
  ClassifyOptions options;
  options.method = method;
  return indexer.score(kSportsText, options);
}

void expect_same_scores(const std::vector<Category>& got, const std::vector<Category>& expected,
                        const std::string& what) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].name, expected[i].name) << what << " #" << i;
    EXPECT_NEAR(got[i].score, expected[i].score, 1e-12) << what << " #" << i;
  }
}

TEST(CategoryIndexerRefreshTest, NothingChangedCostsNothingAndReturnsFalse) {
  testing_util::TempDir temp;
  const std::string dir = temp.file("model");
  train(dir);
  CategoryIndexer indexer(dir);
  const std::string fingerprint = indexer.model_fingerprint();
  EXPECT_FALSE(indexer.refresh());
  EXPECT_FALSE(indexer.refresh());
  EXPECT_EQ(indexer.model_fingerprint(), fingerprint);
}

TEST(CategoryIndexerRefreshTest, FollowsANewGeneration) {
  testing_util::TempDir temp;
  const std::string dir = temp.file("model");
  train(dir);
  CategoryIndexer indexer(dir);
  const std::vector<std::string>& old_categories = indexer.categories();
  const std::string old_term = indexer.model_term();
  EXPECT_EQ(old_categories, (std::vector<std::string>{"food", "science", "sports"}));

  add_generation(temp, dir);
  // Before the refresh the indexer is on the old generation, which may no
  // longer learn.
  EXPECT_THROW(indexer.learn("s-new", kSportsText, {"sports"}), InvalidArgumentError);
  EXPECT_TRUE(indexer.refresh());
  EXPECT_FALSE(indexer.refresh());
  EXPECT_EQ(indexer.categories(), (std::vector<std::string>{"food", "music", "science", "sports"}));
  EXPECT_NE(indexer.model_term(), old_term);
  EXPECT_EQ(indexer.model_fingerprint(), CategoryIndexer(dir).model_fingerprint());
  // A reference taken before the refresh still reads the old generation's names.
  EXPECT_EQ(old_categories.size(), 3U);
  indexer.learn("s-new", kSportsText, {"sports"});  // no "reopen the model"
  EXPECT_TRUE(CategoryIndexer(dir).refresh() == false);
}

TEST(CategoryIndexerRefreshTest, FollowsAModelDirectoryReplacedByANewTraining) {
  testing_util::TempDir temp;
  const std::string dir = temp.file("model");
  train(dir);
  CategoryIndexer indexer(dir);
  indexer.learn("l-1", kSportsText, {"food"});
  fs::remove_all(dir);
  train(dir);  // the same generation name as before, a different model file
  EXPECT_TRUE(indexer.refresh());
  expect_same_scores(score(indexer, std::nullopt), score(CategoryIndexer(dir), std::nullopt),
                     "after the directory was replaced");
  indexer.learn("l-2", kSportsText, {"food"});
}

TEST(CategoryIndexerRefreshTest, AppliesWhatAnotherIndexerJournaled) {
  testing_util::TempDir temp;
  const std::string dir = temp.file("model");
  train(dir);
  CategoryIndexer reader(dir);
  CategoryIndexer writer(dir);
  const std::vector<std::optional<Method>> methods = {std::nullopt, Method::kKnn, Method::kRocchio,
                                                      Method::kNaiveBayes, Method::kSvm};
  std::vector<std::vector<Category>> before;
  for (const auto& method : methods) before.push_back(score(reader, method));

  for (int i = 0; i < 3; ++i) writer.learn("w-" + std::to_string(i), kSportsText, {"food"});
  writer.forget("sp-01");
  for (size_t m = 0; m < methods.size(); ++m) {
    expect_same_scores(score(reader, methods[m]), before[m], "not refreshed yet");
  }
  EXPECT_TRUE(reader.refresh());
  EXPECT_FALSE(reader.refresh());
  const CategoryIndexer fresh(dir);
  for (size_t m = 0; m < methods.size(); ++m) {
    expect_same_scores(score(reader, methods[m]), score(fresh, methods[m]),
                       "refreshed, method " + std::to_string(m));
  }
  EXPECT_NE(score(reader, Method::kKnn)[0].score, before[1][0].score);
}

TEST(CategoryIndexerRefreshTest, LearnAndForgetApplyOthersRecordsFirst) {
  testing_util::TempDir temp;
  const std::string dir = temp.file("model");
  train(dir);
  CategoryIndexer first(dir);
  CategoryIndexer second(dir);
  first.score(kSportsText);  // kNN's index built before the other's records
  second.score(kSportsText);
  const std::vector<std::optional<Method>> methods = {Method::kKnn, Method::kRocchio,
                                                      Method::kNaiveBayes, Method::kSvm};
  second.learn("other-id", kSportsText, {"food"});
  // Without a refresh: `first` applies the other's record, then its own,
  // as a fresh open replays the journal.
  first.learn("mine", kSportsText, {"science"});
  for (const auto& method : methods) {
    expect_same_scores(score(first, method), score(CategoryIndexer(dir), method),
                       "learned after another's learn");
  }
  // A document the other learned can be forgotten without a refresh.
  second.forget("mine");
  for (const auto& method : methods) {
    expect_same_scores(score(second, method), score(CategoryIndexer(dir), method),
                       "forgot what the other learned");
  }
}

TEST(CategoryIndexerRefreshTest, ASnapshotKeepsItsGenerationForAWholeReply) {
  testing_util::TempDir temp;
  const std::string dir = temp.file("model");
  train(dir);
  CategoryIndexer indexer(dir);
  const std::unique_ptr<CategoryIndexer> reply = indexer.snapshot();
  const auto model = internal::IndexerAccess::categorizer(*reply);
  EXPECT_EQ(model, internal::IndexerAccess::categorizer(indexer));  // shared, not reloaded
  const std::vector<Category> scores = reply->score(kSportsText);

  add_generation(temp, dir);
  EXPECT_TRUE(indexer.refresh());
  // The reply goes on with its generation: scores, decision and the model
  // an explanation reads are the ones it began with.
  expect_same_scores(reply->score(kSportsText), scores, "snapshot after the refresh");
  EXPECT_EQ(reply->categories().size(), 3U);
  EXPECT_EQ(internal::IndexerAccess::categorizer(*reply), model);
  EXPECT_NE(internal::IndexerAccess::categorizer(indexer), model);
  EXPECT_EQ(indexer.categories().size(), 4U);
}

TEST(CategoryIndexerRefreshTest, ConcurrentCallsEachSeeOneGeneration) {
  testing_util::TempDir temp;
  const std::string dir = temp.file("model");
  train(dir);
  CategoryIndexer indexer(dir);
  std::atomic<bool> stop{false};
  std::atomic<int> mismatches{0};
  std::thread reader([&] {
    for (int i = 0; i < 2000 && !stop; ++i) {
      const std::unique_ptr<CategoryIndexer> reply = indexer.snapshot();
      const size_t categories = reply->categories().size();
      if (reply->score(kSportsText).size() != categories) ++mismatches;
    }
  });
  add_generation(temp, dir);
  EXPECT_TRUE(indexer.refresh());
  stop = true;
  reader.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(CategoryIndexerRefreshTest, AnUnreadableDirectoryChangesNothing) {
  testing_util::TempDir temp;
  const std::string dir = temp.file("model");
  train(dir);
  CategoryIndexer indexer(dir);
  const std::vector<Category> scores = indexer.score(kSportsText);
  std::ofstream(fs::path(dir) / "CURRENT", std::ios::trunc) << "garbage\n";
  EXPECT_THROW(indexer.refresh(), Error);
  expect_same_scores(indexer.score(kSportsText), scores, "after a failed refresh");
}

}  // namespace
}  // namespace autocat
