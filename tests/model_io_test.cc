#include "classify/model_io.h"

#include <gtest/gtest.h>

#include "autocat/error.h"
#include "classify/trainer.h"
#include "test_util.h"

namespace autocat::internal {
namespace {

using testing_util::read_file;
using testing_util::TempDir;
using testing_util::write_file;

constexpr double kNeverAssignForTest = 2.0;

class ModelIoTest : public testing::Test {
 protected:
  void SetUp() override {
    const TrainingCorpus corpus = make_training_corpus({
        {{"goal", "match", "goal"}, {"sports"}},
        {{"match", "team"}, {"sports"}},
        {{"atom", "energy"}, {"science"}},
        {{"energy", "cell", "atom"}, {"science"}},
    });
    AnalyzerSettings analyzer;
    analyzer.stopwords = {"a", "the"};
    model_ = fit_model(corpus, analyzer, TrainOptions());
    // Too few documents to tune thresholds; set some to check they round-trip.
    model_.thresholds.assign(all_methods().size(), {0.25, kNeverAssignForTest});
    path_ = dir_.file("model.autocat");
    write_model_file(path_, model_);
  }

  // Expects reading the file to throw ModelFormatError mentioning `needle`
  // and the file's path.
  void ExpectRefused(const std::string& needle) {
    try {
      read_model_file(path_);
      FAIL() << "expected ModelFormatError";
    } catch (const ModelFormatError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(path_), std::string::npos) << message;
      EXPECT_NE(message.find(needle), std::string::npos) << message;
    }
  }

  TempDir dir_;
  ModelState model_;
  std::string path_;
};

TEST_F(ModelIoTest, RoundTripKeepsEveryField) {
  const ModelState loaded = read_model_file(path_);
  EXPECT_EQ(loaded.categories, (std::vector<std::string>{"science", "sports"}));
  EXPECT_EQ(loaded.terms, model_.terms);
  EXPECT_EQ(loaded.df, model_.df);
  EXPECT_EQ(loaded.num_docs, 4u);
  EXPECT_EQ(loaded.analyzer.stopwords, model_.analyzer.stopwords);
  EXPECT_EQ(loaded.rocchio.entry_weight, model_.rocchio.entry_weight);
  EXPECT_EQ(loaded.multinomial_nb.term_weight, model_.multinomial_nb.term_weight);
  EXPECT_EQ(loaded.bernoulli_nb.class_constant, model_.bernoulli_nb.class_constant);
  EXPECT_EQ(loaded.complement_nb.term_weight, model_.complement_nb.term_weight);
  EXPECT_EQ(loaded.thresholds, model_.thresholds);
}

TEST_F(ModelIoTest, RoundTripKeepsDecisionSettings) {
  model_.decision = Decision::kAnyOf;
  model_.has_unlabelled = true;
  model_.knn_k = 150;
  model_.knn_similarity_power = 2;
  model_.rocchio_gamma = 1.5;
  model_.knn_objective = {{50, 1, 0.8}, {150, 2, 0.9}};
  model_.rocchio_gamma_objective = {{0.0, 0.7}, {1.5, 0.75}};
  model_.training.decision = Decision::kAnyOf;
  model_.training.knn_k = 150;
  model_.training.knn_similarity_power = 2;
  model_.training.threshold_folds = 4;
  write_model_file(path_, model_);
  const ModelState loaded = read_model_file(path_);
  EXPECT_EQ(loaded.decision, Decision::kAnyOf);
  EXPECT_TRUE(loaded.has_unlabelled);
  EXPECT_EQ(loaded.knn_k, 150);
  EXPECT_EQ(loaded.knn_similarity_power, 2);
  EXPECT_EQ(loaded.rocchio_gamma, 1.5);
  ASSERT_EQ(loaded.knn_objective.size(), 2u);
  EXPECT_EQ(loaded.knn_objective[1].k, 150);
  EXPECT_EQ(loaded.knn_objective[1].similarity_power, 2);
  EXPECT_EQ(loaded.knn_objective[1].objective, 0.9);
  EXPECT_EQ(loaded.rocchio_gamma_objective, model_.rocchio_gamma_objective);
  EXPECT_EQ(loaded.training.decision, std::optional<Decision>(Decision::kAnyOf));
  EXPECT_EQ(loaded.training.knn_k, 150);
  EXPECT_EQ(loaded.training.knn_similarity_power, 2);
  EXPECT_EQ(loaded.training.threshold_folds, 4);
  // Unset stays unset ("detect from the data").
  model_.training.decision.reset();
  write_model_file(path_, model_);
  EXPECT_FALSE(read_model_file(path_).training.decision.has_value());
}

// A model file written before decision modes existed (tests/data, trained
// on examples/data/train.jsonl on 2026-11-22) still loads, as a one-of
// model with k 50 and no "other".
TEST(ModelIoCompatibilityTest, ModelsFromBeforeDecisionModesLoad) {
  const ModelState old = read_model_file(testing_util::test_data("model-2026-11-22-v0.autocat"));
  EXPECT_EQ(old.categories, (std::vector<std::string>{"astronomy", "computing", "cooking",
                                                      "football", "medicine"}));
  EXPECT_EQ(old.num_docs, 112u);
  EXPECT_EQ(old.decision, Decision::kOneOf);
  EXPECT_FALSE(old.has_unlabelled);
  EXPECT_EQ(old.knn_k, kDefaultKnnK);
  EXPECT_EQ(old.knn_similarity_power, 1);
  EXPECT_EQ(old.rocchio_gamma, 0.0);
  EXPECT_FALSE(old.training.decision.has_value());
  EXPECT_EQ(old.thresholds.size(), all_methods().size());
  EXPECT_FALSE(old.rocchio.entry_weight.empty());
}

TEST_F(ModelIoTest, AnalyzerSettingsReadAlone) {
  const AnalyzerSettings settings = read_analyzer_settings(path_);
  EXPECT_EQ(settings.stopwords, (std::vector<std::string>{"a", "the"}));
  EXPECT_EQ(settings.stemmer, model_.analyzer.stemmer);
  EXPECT_EQ(settings.max_term_bytes, model_.analyzer.max_term_bytes);
  write_file(path_, read_file(path_).substr(0, 40));
  ExpectRefused("truncated");
  EXPECT_THROW(read_analyzer_settings(path_), ModelFormatError);
}

TEST_F(ModelIoTest, FileStartsWithMagicAndVersion) {
  const std::string bytes = read_file(path_);
  ASSERT_GE(bytes.size(), 12u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("AUTOCAT\0", 8));
  EXPECT_EQ(static_cast<unsigned char>(bytes[8]), kModelFormatVersion);
}

TEST_F(ModelIoTest, NoTemporaryFileLeftBehind) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1);
}

TEST_F(ModelIoTest, RefusesForeignFile) {
  write_file(path_, "{\"this\": \"is json, not a model\"}\n");
  ExpectRefused("not an autocat model file");
}

TEST_F(ModelIoTest, RefusesEmptyFile) {
  write_file(path_, "");
  ExpectRefused("not an autocat model file");
}

TEST_F(ModelIoTest, RefusesNewerFormat) {
  std::string bytes = read_file(path_);
  bytes[8] = static_cast<char>(kModelFormatVersion + 1);
  write_file(path_, bytes);
  ExpectRefused("newer than this autocat reads");
}

TEST_F(ModelIoTest, RefusesTruncatedFile) {
  const std::string bytes = read_file(path_);
  write_file(path_, bytes.substr(0, bytes.size() / 2));
  ExpectRefused("truncated");
}

TEST_F(ModelIoTest, RefusesTruncatedHeader) {
  write_file(path_, read_file(path_).substr(0, 14));
  ExpectRefused("truncated");
}

TEST_F(ModelIoTest, RefusesFlippedByte) {
  std::string bytes = read_file(path_);
  bytes[bytes.size() - 3] ^= 0x5a;
  write_file(path_, bytes);
  ExpectRefused("checksum");
}

TEST_F(ModelIoTest, MissingFileIsNotFound) {
  EXPECT_THROW(read_model_file(dir_.file("absent.autocat")), NotFoundError);
}

TEST_F(ModelIoTest, OverwriteReplacesAtomically) {
  ModelState other = model_;
  other.training.nb_alpha = 0.25;
  write_model_file(path_, other);
  EXPECT_DOUBLE_EQ(read_model_file(path_).training.nb_alpha, 0.25);
}

}  // namespace
}  // namespace autocat::internal
