// Multi-label accuracy on real data: Reuters-21578 ModApte. Train on split
// "train" (unlabelled documents kept as examples of "no category"),
// categorize split "test" with each method's default any-of decision, and
// score the categories with at least one training and one test document
// (90); test documents with none of them count as "no category" documents.
// Floors are the measured micro-F1 minus a margin (BENCHMARKS.md). Skipped,
// loudly, when ../shared/data is absent ($AUTOCAT_SHARED_DATA_DIR overrides
// it; AUTOCAT_REQUIRE_DATA=1 fails instead).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "classify/corpus/document_reader.h"
#include "classify/decide/categorizer.h"
#include "classify/decide/rules.h"
#include "classify/metrics/evaluation.h"
#include "classify/train/trainer.h"
#include "test_util.h"

namespace autocat::internal {
namespace {

// Floors = micro-F1 and macro-F1 measured minus 0.003: results repeat bit
// for bit, so any loss beyond rounding fails. Measured 2026-11-23
// (RelWithDebInfo), micro-F1 (macro-F1): knn 0.852905 (0.510958), rocchio
// 0.811120 (0.572415), nb 0.728052 (0.161162), cnb 0.777446 (0.308138).
// Re-measure when a classifier changes.
struct Floors {
  double micro_f1;
  double macro_f1;
};
// kNN's macro-F1 measured 0.5075 with calibrated scores (branch combo): vote
// shares near 1 and their cuts saturate the sigmoid to the same probability,
// which flips a few borderline decisions of rare categories.
// With relevance-frequency term weights (2026-11-26): 0.8624 (0.5319).
// Categories of 2-4 training documents with proportional cuts of their own
// where the folds show they pay (2026-11-26): kNN 0.8629 (0.5767), Rocchio
// 0.8120 (0.5663), svm 0.8800 (0.6094), logreg 0.8722 (0.5910).
constexpr Floors kKnnFloor = {0.8599, 0.5737};
constexpr Floors kRocchioFloor = {0.8090, 0.5633};
// Naive Bayes features chosen by cross-validation, bnb's cuts re-tuned where
// the clamp merged its extreme posteriors (2026-11-23, RelWithDebInfo): nb
// 0.7570 (0.3194), bnb 0.7121 (0.2985), cnb 0.8301 (0.4723).
constexpr Floors kNaiveBayesFloor = {0.7540, 0.3164};
constexpr Floors kBernoulliFloor = {0.7091, 0.2955};
constexpr Floors kComplementFloor = {0.8271, 0.4693};
// svm 0.8816 (0.5837; C = 1), logreg 0.8722 (0.5224; C = 30), measured
// 2026-11-23 (Release, any-of with tuned thresholds).
constexpr Floors kSvmFloor = {0.8770, 0.6064};
constexpr Floors kLogregFloor = {0.8692, 0.5880};
// combo 0.882401 (0.565622), measured 2026-11-24 (RelWithDebInfo).
constexpr Floors kComboFloor = {0.8794, 0.5626};

const std::string kReuters = testing_util::shared_data("reuters21578-modapte.jsonl");

struct TestDoc {
  DocumentTerms terms;
  std::vector<uint32_t> truth;         // model category indexes
  std::vector<size_t> rules_matching;  // rules of examples/rules/reuters.rules
};

// F1 of rules alone and of kNN + rules on examples/rules/reuters.rules,
// measured 2026-11-23 (RelWithDebInfo) minus 0.003: earn 0.928 / 0.970, acq
// 0.813 / 0.930, crude 0.620 / 0.809 (kNN alone: 0.973, 0.937, 0.888).
struct RuleFloor {
  const char* category;
  double rules_f1;
  double knn_with_rules_f1;
};
constexpr RuleFloor kRuleFloors[] = {
    {"earn", 0.925, 0.967}, {"acq", 0.810, 0.927}, {"crude", 0.617, 0.806}};

class ReutersTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(kReuters)) return;
    // A damaged collection must fail the tests, not skip them: the
    // exception is kept and reported by SetUp().
    try {
      train_and_read();
    } catch (const std::exception& e) {
      setup_error_ = new std::string(e.what());
    }
  }
  static void train_and_read() {
    dir_ = new testing_util::TempDir();
    ReadOptions train;
    train.split = "train";
    TrainOptions options;
    options.keep_unlabelled = true;
    report_ = train_model({kReuters}, dir_->file("model"), options, train, nullptr);
    categorizer_ = new Categorizer(dir_->file("model"));
    rules_ =
        new RuleSet(RuleSet::load(std::string(AUTOCAT_SOURCE_DIR) + "/examples/rules/reuters.rules",
                                  categorizer_->categories()));
    docs_ = new std::vector<TestDoc>();
    scored_ = new std::vector<uint8_t>(categorizer_->categories().size(), 0);
    ReadOptions test;
    test.split = "test";
    read_documents(
        {kReuters}, test,
        [](InputDocument&& doc) {
          TestDoc labelled;
          labelled.terms = categorizer_->document_terms(categorizer_->analyzer().analyze(doc.text));
          labelled.rules_matching = rules_->matching(doc.text, doc.title);
          for (const auto& label : doc.labels) {
            const int64_t c = categorizer_->category_index(label);
            if (c < 0) continue;
            labelled.truth.push_back(static_cast<uint32_t>(c));
            (*scored_)[static_cast<size_t>(c)] = 1;
          }
          docs_->push_back(std::move(labelled));
        },
        nullptr);
  }
  static void TearDownTestSuite() {
    delete categorizer_;
    delete rules_;
    delete docs_;
    delete scored_;
    delete dir_;
    delete setup_error_;
  }
  void SetUp() override {
    AUTOCAT_SKIP_WITHOUT_DATA(kReuters, "Reuters-21578 data");
    if (setup_error_ != nullptr) FAIL() << "setting up the suite failed: " << *setup_error_;
    ASSERT_NE(categorizer_, nullptr);
  }

  // Evaluation over the scored categories only.
  static Evaluation evaluate(Method method) {
    std::vector<std::string> names;
    std::vector<int64_t> renumber(scored_->size(), -1);
    for (size_t c = 0; c < scored_->size(); ++c) {
      if (!(*scored_)[c]) continue;
      renumber[c] = static_cast<int64_t>(names.size());
      names.push_back(categorizer_->categories()[c]);
    }
    Evaluation evaluation(names);
    ClassifyOptions options;
    options.method = method;
    for (const TestDoc& doc : *docs_) {
      std::vector<uint32_t> truth, assigned;
      for (uint32_t c : doc.truth) truth.push_back(static_cast<uint32_t>(renumber[c]));
      for (const Category& category :
           categorizer_->decide(categorizer_->scores(doc.terms, options), options)) {
        const int64_t c =
            renumber[static_cast<size_t>(categorizer_->category_index(category.name))];
        if (c >= 0) assigned.push_back(static_cast<uint32_t>(c));
      }
      evaluation.add(truth, assigned);
    }
    RecordProperty("micro_f1", std::to_string(evaluation.micro_f1()));
    RecordProperty("macro_f1", std::to_string(evaluation.macro_f1()));
    return evaluation;
  }

  static testing_util::TempDir* dir_;
  static std::string* setup_error_;  // what SetUpTestSuite() threw
  static TrainReport report_;
  static Categorizer* categorizer_;
  static RuleSet* rules_;
  static std::vector<TestDoc>* docs_;
  static std::vector<uint8_t>* scored_;
};

testing_util::TempDir* ReutersTest::dir_ = nullptr;
std::string* ReutersTest::setup_error_ = nullptr;
TrainReport ReutersTest::report_;
Categorizer* ReutersTest::categorizer_ = nullptr;
RuleSet* ReutersTest::rules_ = nullptr;
std::vector<TestDoc>* ReutersTest::docs_ = nullptr;
std::vector<uint8_t>* ReutersTest::scored_ = nullptr;

TEST_F(ReutersTest, ModApteCountsAndDetectedMode) {
  EXPECT_EQ(report_.documents, 9603u);  // 7,775 labelled + 1,828 kept unlabelled
  EXPECT_EQ(report_.categories, 115u);
  EXPECT_EQ(docs_->size(), 3299u);
  EXPECT_EQ(std::count(scored_->begin(), scored_->end(), 1), 90);
  // Several labels per document, and documents with none: any-of, "other" on.
  EXPECT_EQ(categorizer_->model().decision, Decision::kAnyOf);
  EXPECT_TRUE(categorizer_->model().has_unlabelled);
}

void expect_floors(const Evaluation& e, const Floors& floors) {
  EXPECT_GE(e.micro_f1(), floors.micro_f1);
  EXPECT_GE(e.macro_f1(), floors.macro_f1);
}

TEST_F(ReutersTest, KnnMicroF1Floor) { expect_floors(evaluate(Method::kKnn), kKnnFloor); }

TEST_F(ReutersTest, RocchioMicroF1Floor) {
  expect_floors(evaluate(Method::kRocchio), kRocchioFloor);
}

TEST_F(ReutersTest, NaiveBayesMicroF1Floor) {
  expect_floors(evaluate(Method::kNaiveBayes), kNaiveBayesFloor);
}

TEST_F(ReutersTest, BernoulliNaiveBayesMicroF1Floor) {
  expect_floors(evaluate(Method::kBernoulliNaiveBayes), kBernoulliFloor);
}

TEST_F(ReutersTest, ComplementNaiveBayesMicroF1Floor) {
  expect_floors(evaluate(Method::kComplementNaiveBayes), kComplementFloor);
}

TEST_F(ReutersTest, SvmMicroF1Floor) { expect_floors(evaluate(Method::kSvm), kSvmFloor); }

TEST_F(ReutersTest, LogregMicroF1Floor) { expect_floors(evaluate(Method::kLogreg), kLogregFloor); }

TEST_F(ReutersTest, ComboMicroF1Floor) { expect_floors(evaluate(Method::kCombo), kComboFloor); }

// Rules alone (an assign or positive evidence rule of the category matches,
// no veto does) and kNN with the rules applied, per category of the rules.
TEST_F(ReutersTest, RuleCategoriesF1Floors) {
  ClassifyOptions options;
  options.method = Method::kKnn;
  for (const RuleFloor& floor : kRuleFloors) {
    const int64_t c = categorizer_->category_index(floor.category);
    ASSERT_GE(c, 0) << floor.category;
    uint64_t rules_tp = 0, rules_fp = 0, rules_fn = 0, tp = 0, fp = 0, fn = 0;
    for (const TestDoc& doc : *docs_) {
      const bool actual = std::find(doc.truth.begin(), doc.truth.end(), static_cast<uint32_t>(c)) !=
                          doc.truth.end();
      bool positive = false, veto = false;
      for (size_t r : doc.rules_matching) {
        const Rule& rule = rules_->rules()[r];
        if (rule.category != floor.category) continue;
        if (rule.mode == RuleMode::kVeto) veto = true;
        if (rule.mode == RuleMode::kAssign || (rule.mode == RuleMode::kEvidence && rule.weight > 0))
          positive = true;
      }
      const bool by_rules = positive && !veto;
      rules_tp += by_rules && actual;
      rules_fp += by_rules && !actual;
      rules_fn += !by_rules && actual;
      const DecisionTrace trace = rules_->decide(
          *categorizer_, categorizer_->scores(doc.terms, options), doc.rules_matching, options);
      bool assigned = false;
      for (const Category& category : trace.assigned) assigned |= category.name == floor.category;
      tp += assigned && actual;
      fp += assigned && !actual;
      fn += !assigned && actual;
    }
    auto f1 = [](uint64_t t, uint64_t f_p, uint64_t f_n) {
      return t == 0 ? 0.0 : 2.0 * static_cast<double>(t) / static_cast<double>(2 * t + f_p + f_n);
    };
    RecordProperty(std::string(floor.category) + "_rules_f1",
                   std::to_string(f1(rules_tp, rules_fp, rules_fn)));
    RecordProperty(std::string(floor.category) + "_knn_rules_f1", std::to_string(f1(tp, fp, fn)));
    EXPECT_GE(f1(rules_tp, rules_fp, rules_fn), floor.rules_f1) << floor.category;
    EXPECT_GE(f1(tp, fp, fn), floor.knn_with_rules_f1) << floor.category;
  }
}

}  // namespace
}  // namespace autocat::internal
