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
