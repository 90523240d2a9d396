// Live svm and logreg (classify/methods/live_linear.h through Categorizer::learn /
// forget), and combo over them: a document they get wrong, learned once
// with its label, is classified right; forgetting it restores the trained
// scores; a reopened model replays to the same scores; and readers score
// while a writer learns.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>

#include "classify/corpus/document_reader.h"
#include "classify/decide/categorizer.h"
#include "classify/train/trainer.h"
#include "test_util.h"

namespace autocat::internal {
namespace {

using testing_util::TempDir;
using testing_util::test_data;

const Method kLinearAndCombo[] = {Method::kSvm, Method::kLogreg, Method::kCombo};

// Sports words only: every method calls it sports.
const char kMatch[] = "The team scored a goal to win the match.";

class LiveLinearTest : public testing::Test {
 protected:
  void SetUp() override {
    model_ = dir_.file("model");
    TrainOptions options;
    options.tune_thresholds = false;
    train_model({test_data("fixture_train.jsonl")}, model_, options, ReadOptions(), nullptr);
  }
  static std::vector<double> scores(const Categorizer& categorizer, const std::string& text,
                                    Method method) {
    ClassifyOptions options;
    options.method = method;
    return categorizer.scores(categorizer.document_terms(categorizer.analyzer().analyze(text)),
                              options);
  }
  static std::string top(const Categorizer& categorizer, const std::string& text, Method method) {
    const std::vector<double> s = scores(categorizer, text, method);
    return categorizer.categories()[size_t(std::max_element(s.begin(), s.end()) - s.begin())];
  }

  TempDir dir_;
  std::string model_;
};

TEST_F(LiveLinearTest, MisclassifiedDocumentLearnedOnceIsClassifiedRight) {
  Categorizer categorizer(model_);
  for (Method method : kLinearAndCombo) {
    ASSERT_EQ(top(categorizer, kMatch, method), "sports") << method_name(method);
  }
  // An editor files it under food, once.
  categorizer.learn("editor-1", kMatch, {"food"});
  for (Method method : kLinearAndCombo) {
    EXPECT_EQ(top(categorizer, kMatch, method), "food") << method_name(method);
  }
  // A reopened model replays the journal to the same weights.
  const Categorizer reopened(model_);
  for (Method method : kLinearAndCombo) {
    const std::vector<double> live = scores(categorizer, kMatch, method);
    const std::vector<double> replayed = scores(reopened, kMatch, method);
    for (size_t c = 0; c < live.size(); ++c) {
      EXPECT_NEAR(replayed[c], live[c], 1e-12) << method_name(method);
    }
  }
}

TEST_F(LiveLinearTest, LearnedDocumentLeavesDocumentsWithoutItsTermsAsScored) {
  Categorizer categorizer(model_);
  const std::string unrelated = "Bake the bread until the crust turns golden.";
  std::vector<std::vector<double>> before;
  for (Method method : {Method::kSvm, Method::kLogreg}) {
    before.push_back(scores(categorizer, unrelated, method));
  }
  categorizer.learn("editor-1", kMatch, {"food"});
  size_t k = 0;
  for (Method method : {Method::kSvm, Method::kLogreg}) {
    ASSERT_NE(top(categorizer, kMatch, method), "sports");  // it learned
    const std::vector<double> after = scores(categorizer, unrelated, method);
    for (size_t c = 0; c < after.size(); ++c) {
      EXPECT_NEAR(after[c], before[k][c], 1e-12) << method_name(method);
    }
    ++k;
  }
}

TEST_F(LiveLinearTest, ForgettingWhatWasLearnedRestoresTheTrainedScores) {
  Categorizer categorizer(model_);
  const std::vector<std::string> texts = {kMatch, "Bake the fish and serve it with rice.",
                                          "The experiment measured the particle."};
  std::vector<std::vector<double>> before;
  for (Method method : kLinearAndCombo) {
    for (const std::string& text : texts) before.push_back(scores(categorizer, text, method));
  }
  categorizer.learn("editor-1", kMatch, {"food"});
  categorizer.learn("editor-2", texts[1], {"science"});
  size_t k = 0;
  for (Method method : kLinearAndCombo) {
    // Every method moved on the learned text.
    const std::vector<double> now = scores(categorizer, kMatch, method);
    double moved = 0;
    for (size_t c = 0; c < now.size(); ++c)
      moved = std::max(moved, std::fabs(now[c] - before[k][c]));
    EXPECT_GT(moved, 1e-3) << method_name(method);
    k += texts.size();
  }
  categorizer.forget("editor-2");
  categorizer.forget("editor-1");
  k = 0;
  for (Method method : kLinearAndCombo) {
    for (const std::string& text : texts) {
      const std::vector<double> after = scores(categorizer, text, method);
      ASSERT_EQ(after.size(), before[k].size());
      for (size_t c = 0; c < after.size(); ++c) {
        EXPECT_NEAR(after[c], before[k][c], 1e-9) << method_name(method) << " " << text;
      }
      ++k;
    }
  }
}

TEST_F(LiveLinearTest, ForgettingATrainedDocumentTakesItsShareOut) {
  Categorizer categorizer(model_);
  // sp-01 is the training document closest to kMatch: without it, svm and
  // logreg are less sure that kMatch is sports.
  const auto sports = size_t(categorizer.category_index("sports"));
  std::vector<double> before;
  for (Method method : {Method::kSvm, Method::kLogreg}) {
    before.push_back(scores(categorizer, kMatch, method)[sports]);
  }
  categorizer.forget("sp-01");
  size_t k = 0;
  for (Method method : {Method::kSvm, Method::kLogreg}) {
    EXPECT_LT(scores(categorizer, kMatch, method)[sports], before[k++] - 1e-4)
        << method_name(method);
  }
}

// Under ThreadSanitizer in CI: readers score with svm, logreg and combo
// (each score after a change publishes new weights) while a writer learns
// and forgets.
TEST_F(LiveLinearTest, ConcurrentLearnAndClassifyWithLinearModels) {
  Categorizer categorizer(model_);
  std::vector<InputDocument> learned;
  read_documents(
      {test_data("fixture_test.jsonl")}, ReadOptions(),
      [&](InputDocument&& doc) { learned.push_back(std::move(doc)); }, nullptr);
  std::atomic<bool> done{false};
  std::atomic<int> scored{0};
  std::vector<std::thread> readers;
  for (Method method : kLinearAndCombo) {
    readers.emplace_back([&, method] {
      ClassifyOptions options;
      options.method = method;
      size_t i = 0;
      while (!done.load()) {
        const auto assigned = categorizer.classify(learned[i++ % learned.size()].text, options);
        EXPECT_FALSE(assigned.empty());
        ++scored;
      }
    });
  }
  for (int round = 0; round < 20; ++round) {
    const InputDocument& doc = learned[size_t(round) % learned.size()];
    const std::string id = "live-" + std::to_string(round);
    categorizer.learn(id, doc.text, doc.labels);
    if (round % 3 == 0) categorizer.forget(id);
  }
  while (scored.load() < 50) std::this_thread::yield();
  done = true;
  for (std::thread& reader : readers) reader.join();
  // After the writer: a reopen replays to the same optimum, to the solver's
  // tolerance (the readers' fits came at other points of the stream).
  const Categorizer reopened(model_);
  for (Method method : kLinearAndCombo) {
    const std::vector<double> live = scores(categorizer, learned[0].text, method);
    const std::vector<double> replayed = scores(reopened, learned[0].text, method);
    for (size_t c = 0; c < live.size(); ++c) {
      EXPECT_NEAR(replayed[c], live[c], 1e-3) << method_name(method);
    }
  }
}

}  // namespace
}  // namespace autocat::internal
