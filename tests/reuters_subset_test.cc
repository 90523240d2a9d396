// Every method end to end on a fifth of Reuters-21578 ModApte (every fifth
// record of the file, both splits): default training (cross-validated
// thresholds, calibration, combo) and any-of classification of the subset's
// test documents. The full collection's floors are in reuters_test.cc,
// which the sanitizer pass of scripts/test.sh leaves out for time (147 s
// under ASan); this suite runs in both passes, so the sanitizers still see
// training and multi-label decisions on real data. Floors are what this
// subset measured minus a margin. Skipped, loudly, when ../shared/data is
// absent.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "classify/corpus/document_reader.h"
#include "classify/decide/categorizer.h"
#include "classify/metrics/evaluation.h"
#include "classify/train/trainer.h"
#include "test_util.h"

namespace autocat::internal {
namespace {

const std::string kReuters = testing_util::shared_data("reuters21578-modapte.jsonl");

// Micro-F1 measured on the subset 2026-11-23 (RelWithDebInfo), minus 0.02:
// knn 0.8241, rocchio 0.7852, nb 0.7397, bnb 0.6579, cnb 0.8027, svm 0.8442,
// logreg 0.8247, combo 0.8437.
struct MethodFloor {
  Method method;
  double micro_f1;
};
constexpr MethodFloor kFloors[] = {
    {Method::kKnn, 0.804},
    {Method::kRocchio, 0.765},
    {Method::kNaiveBayes, 0.719},
    {Method::kBernoulliNaiveBayes, 0.637},
    {Method::kComplementNaiveBayes, 0.782},
    {Method::kSvm, 0.824},
    {Method::kLogreg, 0.804},
    {Method::kCombo, 0.823},
};

TEST(ReutersSubsetTest, EveryMethodOnAFifthOfTheCollection) {
  AUTOCAT_SKIP_WITHOUT_DATA(kReuters, "Reuters-21578 data");
  const testing_util::TempDir dir;
  const std::string subset = dir.file("fifth.jsonl");
  {
    std::ifstream in(kReuters);
    std::ofstream out(subset);
    std::string line;
    for (size_t n = 0; std::getline(in, line); ++n) {
      if (n % 5 == 0) out << line << '\n';
    }
  }
  ReadOptions train;
  train.split = "train";
  const TrainReport report =
      train_model({subset}, dir.file("model"), TrainOptions(), train, nullptr);
  EXPECT_GT(report.documents, 1800u);
  const Categorizer categorizer(dir.file("model"));
  EXPECT_EQ(categorizer.model().decision, Decision::kAnyOf);

  struct TestDoc {
    DocumentTerms terms;
    std::vector<uint32_t> truth;
  };
  std::vector<TestDoc> docs;
  ReadOptions test;
  test.split = "test";
  read_documents(
      {subset}, test,
      [&](InputDocument&& doc) {
        TestDoc labelled;
        labelled.terms = categorizer.document_terms(categorizer.analyzer().analyze(doc.text));
        for (const auto& label : doc.labels) {
          const int64_t c = categorizer.category_index(label);
          if (c >= 0) labelled.truth.push_back(static_cast<uint32_t>(c));
        }
        docs.push_back(std::move(labelled));
      },
      nullptr);
  ASSERT_GT(docs.size(), 600u);

  for (const MethodFloor& floor : kFloors) {
    Evaluation evaluation(categorizer.categories());
    ClassifyOptions options;
    options.method = floor.method;
    for (const TestDoc& doc : docs) {
      std::vector<uint32_t> assigned;
      for (const Category& category :
           categorizer.decide(categorizer.scores(doc.terms, options), options)) {
        assigned.push_back(static_cast<uint32_t>(categorizer.category_index(category.name)));
      }
      evaluation.add(doc.truth, assigned);
    }
    const std::string name = method_name(floor.method);
    std::printf("%s: micro-F1 %.4f, macro-F1 %.4f\n", name.c_str(), evaluation.micro_f1(),
                evaluation.macro_f1());
    RecordProperty(name + "_micro_f1", std::to_string(evaluation.micro_f1()));
    EXPECT_GE(evaluation.micro_f1(), floor.micro_f1) << name;
  }
}

}  // namespace
}  // namespace autocat::internal
