// The model size train reports before writing: estimated from the
// collection, near what is written (never far below it), and a target
// without room for it refused before anything is written.
#include "classify/train/model_size.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <string>

#include "autocat/error.h"
#include "classify/corpus/training_collection.h"
#include "classify/io/model_dir.h"
#include "classify/train/trainer.h"
#include "test_util.h"

namespace autocat::internal {
namespace {

namespace fs = std::filesystem;
using testing_util::TempDir;
using testing_util::test_data;

TEST(ModelSizeTest, EstimateIsNearTheWrittenSize) {
  const TempDir dir;
  ReadOptions read;
  read.split = "train";
  const TrainReport report = train_model({test_data("fixture_train.jsonl")}, dir.file("model"),
                                         TrainOptions(), read, nullptr);
  const ModelPaths paths = resolve_model_dir(dir.file("model"));
  const uint64_t model_bytes = fs::file_size(paths.model_file);
  const uint64_t knn_bytes = fs::file_size(paths.knn_index);
  EXPECT_EQ(report.model_file_bytes, model_bytes);
  EXPECT_EQ(report.knn_index_bytes, knn_bytes);
  // The linear weights are counted as dense rows: at most that.
  EXPECT_GE(report.expected_model_file_bytes, model_bytes * 9 / 10);
  EXPECT_LE(report.expected_model_file_bytes, model_bytes * 3);
  EXPECT_EQ(report.expected_knn_index_bytes, knn_bytes);
}

TEST(ModelSizeTest, TooLittleSpaceIsRefusedNamingTheDirectory) {
  const TempDir dir;
  ModelSizeEstimate huge;
  huge.model_file = std::numeric_limits<uint64_t>::max() / 4;
  try {
    check_free_space(dir.path(), huge);
    ADD_FAILURE() << "expected IOError";
  } catch (const IOError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(dir.path()), std::string::npos) << message;
    EXPECT_NE(message.find("not enough free space"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  ModelSizeEstimate small;
  small.model_file = 1000;
  EXPECT_NO_THROW(check_free_space(dir.path(), small));
}

TEST(ModelSizeTest, FormatsBytesInDecimalUnits) {
  EXPECT_EQ(format_bytes(1'900'000'000), "1.9 GB");
  EXPECT_EQ(format_bytes(820'400'000), "820 MB");
  EXPECT_EQ(format_bytes(12'000), "12 kB");
}

}  // namespace
}  // namespace autocat::internal
