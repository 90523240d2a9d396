// A test suite sharing one model trained on tests/data/fixture_train.jsonl
// (split "train"; categories food, science, sports) with the default
// options: derive a fixture from TrainedFixtureTest and use dir_ and
// categorizer_. Trained once per test suite.
#pragma once

#include <gtest/gtest.h>

#include "classify/decide/categorizer.h"
#include "classify/train/trainer.h"
#include "test_util.h"

namespace autocat::testing_util {

class TrainedFixtureTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    internal::ReadOptions read;
    read.split = "train";
    internal::train_model({test_data("fixture_train.jsonl")}, dir_->file("model"), TrainOptions(),
                          read, nullptr);
    categorizer_ = new internal::Categorizer(dir_->file("model"));
  }
  static void TearDownTestSuite() {
    delete categorizer_;
    delete dir_;
  }
  inline static TempDir* dir_ = nullptr;
  inline static internal::Categorizer* categorizer_ = nullptr;
};

}  // namespace autocat::testing_util
