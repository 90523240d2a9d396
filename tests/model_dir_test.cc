#include "classify/io/model_dir.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "autocat/error.h"
#include "classify/decide/categorizer.h"
#include "classify/train/trainer.h"
#include "tests/cli_test_util.h"
#include "tests/test_util.h"

extern char** environ;

namespace autocat::internal {
namespace {

namespace fs = std::filesystem;
using testing_util::CliResult;
using testing_util::entries_of;
using testing_util::read_file;
using testing_util::run_autocat;
using testing_util::spawn_autocat;
using testing_util::test_data;
using testing_util::wait_for;
using testing_util::write_file;

// Sets AUTOCAT_CRASH_AT (see atomic_file.h) for this scope: the test hook
// of this process and of the autocat processes it starts.
class CrashAt {
 public:
  explicit CrashAt(const std::string& setting) { ::setenv("AUTOCAT_CRASH_AT", setting.c_str(), 1); }
  ~CrashAt() { ::unsetenv("AUTOCAT_CRASH_AT"); }
  CrashAt(const CrashAt&) = delete;
  CrashAt& operator=(const CrashAt&) = delete;
};

class ModelDirTest : public testing::Test {
 public:
  void SetUp() override {
    // The training fixture split in two: the first 15 lines, then the rest.
    const std::vector<std::string> lines = testing_util::split_lines(read_file(fixture_));
    ASSERT_EQ(lines.size(), 24u);
    std::string first, second;
    for (size_t i = 0; i < lines.size(); ++i) (i < 15 ? first : second) += lines[i] + "\n";
    first_ = dir_.file("first.jsonl");
    second_ = dir_.file("second.jsonl");
    write_file(first_, first);
    write_file(second_, second);
  }

  // The number of training documents of the model in `model_dir`, checked
  // whole: the model file and the training database agree (kNN refuses a
  // database that is not the model's) and, with `cli`, autocat classify runs.
  static uint32_t complete_model_docs(const std::string& model_dir, bool cli = true) {
    const Categorizer categorizer(model_dir);
    const uint32_t docs = categorizer.model().num_docs;
    EXPECT_EQ(categorizer.knn_index().num_docs(), docs) << model_dir;
    if (cli) {
      const CliResult classified = run_autocat(
          {"classify", "--model", model_dir, "--method", "knn", test_data("fixture_test.jsonl")});
      EXPECT_EQ(classified.exit_code, 0) << classified.err;
    }
    return docs;
  }

  // The generation directories in `model_dir`.
  static size_t generations_in(const std::string& model_dir) {
    const std::vector<std::string> names = entries_of(model_dir);
    return std::count_if(names.begin(), names.end(),
                         [](const std::string& name) { return name.rfind("gen-", 0) == 0; });
  }

 protected:
  testing_util::TempDir dir_;
  const std::string fixture_ = test_data("fixture_train.jsonl");
  std::string first_, second_;
};

TEST_F(ModelDirTest, TrainWritesAGenerationAndPointsCurrentAtIt) {
  const std::string model = dir_.file("model");
  train_model({fixture_}, model, TrainOptions(), ReadOptions(), nullptr);
  EXPECT_EQ(entries_of(model), (std::vector<std::string>{"CURRENT", "autocat.lock", "gen-000001"}));
  EXPECT_EQ(read_file(model + "/CURRENT"), "gen-000001\n");
  const ModelPaths paths = resolve_model_dir(model);
  EXPECT_EQ(paths.model_file, model + "/gen-000001/model.autocat");
  EXPECT_EQ(paths.training_db, model + "/gen-000001/training");
  EXPECT_EQ(complete_model_docs(model), 24u);

  // The previous generation stays (for readers that resolved CURRENT just
  // before the switch); older ones go.
  add_to_model({first_}, model, ReadOptions(), nullptr);
  add_to_model({first_}, model, ReadOptions(), nullptr);
  EXPECT_EQ(entries_of(model),
            (std::vector<std::string>{"CURRENT", "autocat.lock", "gen-000002", "gen-000003"}));
  EXPECT_EQ(complete_model_docs(model), 24u);
}

TEST_F(ModelDirTest, OldLayoutLoadsAndTheNextTrainConvertsIt) {
  // A directory as autocat wrote it before generations: DIR/model.autocat
  // and DIR/training.
  const std::string built = dir_.file("built"), old = dir_.file("old");
  train_model({first_}, built, TrainOptions(), ReadOptions(), nullptr);
  fs::create_directories(old);
  fs::copy(resolve_model_dir(built).model_file, old + "/model.autocat");
  fs::copy(resolve_model_dir(built).training_db, old + "/training", fs::copy_options::recursive);
  EXPECT_EQ(resolve_model_dir(old).model_file, old + "/model.autocat");
  EXPECT_EQ(complete_model_docs(old), 15u);

  const TrainReport report = add_to_model({second_}, old, ReadOptions(), nullptr);
  EXPECT_EQ(report.documents, 24u);
  EXPECT_EQ(entries_of(old), (std::vector<std::string>{"CURRENT", "autocat.lock", "gen-000001"}));
  EXPECT_EQ(complete_model_docs(old), 24u);
}

TEST_F(ModelDirTest, TrainRefusesADirectoryThatIsNotAModelDirectory) {
  const std::string notes = dir_.file("notes");
  fs::create_directories(notes + "/training");
  write_file(notes + "/training/notes.txt", "mine");
  try {
    train_model({fixture_}, notes, TrainOptions(), ReadOptions(), nullptr);
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_EQ(std::string(e.what()),
              notes +
                  ": not an autocat model directory (it holds 'training' but no model); "
                  "train into a new or empty directory");
  }
  EXPECT_EQ(read_file(notes + "/training/notes.txt"), "mine");
  EXPECT_EQ(entries_of(notes), (std::vector<std::string>{"training"}));
}

TEST_F(ModelDirTest, TrainKeepsFilesAutocatDidNotCreate) {
  // A model in the old layout whose training folder also holds the user's
  // notes: train converts the model and removes only Xapian's files.
  const std::string built = dir_.file("built"), old = dir_.file("old");
  train_model({first_}, built, TrainOptions(), ReadOptions(), nullptr);
  fs::create_directories(old);
  fs::copy(resolve_model_dir(built).model_file, old + "/model.autocat");
  fs::copy(resolve_model_dir(built).training_db, old + "/training", fs::copy_options::recursive);
  write_file(old + "/training/notes.txt", "mine");
  write_file(old + "/README", "about this model");
  std::vector<std::string> warnings;
  train_model({fixture_}, old, TrainOptions(), ReadOptions(),
              [&](const std::string& message) { warnings.push_back(message); });
  EXPECT_EQ(read_file(old + "/training/notes.txt"), "mine");
  EXPECT_EQ(read_file(old + "/README"), "about this model");
  EXPECT_EQ(entries_of(old + "/training"), (std::vector<std::string>{"notes.txt"}));
  EXPECT_EQ(warnings,
            (std::vector<std::string>{
                old + "/training: left in place: it holds files autocat did not create"}));
  EXPECT_EQ(complete_model_docs(old), 24u);
}

TEST_F(ModelDirTest, LeftoversOfKilledRunsAreRemoved) {
  const std::string model = dir_.file("model");
  train_model({first_}, model, TrainOptions(), ReadOptions(), nullptr);
  // What killed runs leave: an unfinished generation, temporary files, the
  // half-built collection of autocat before generations.
  fs::create_directories(model + "/gen-000007/training");
  write_file(model + "/gen-000007/training/postlist.glass", "partial");
  write_file(model + "/gen-000007/training/v.tmp", "partial");  // a commit in progress
  write_file(model + "/gen-000007/model.autocat.tmp-Ab12Cd", "partial");
  write_file(model + "/gen-000007/postings.spill-Qw3Er5", "partial");  // killed before unlink
  // Killed while comparing analyses of short texts.
  fs::create_directories(model + "/gen-000007/training.candidate");
  write_file(model + "/gen-000007/training.candidate/termlist.glass", "partial");
  write_file(model + "/CURRENT.tmp-x9Y8z7", "gen-000007\n");
  write_file(model + "/model.autocat.tmp.12345", "partial");
  fs::create_directories(model + "/training.new");
  write_file(model + "/training.new/iamglass", "partial");
  // Not autocat's: stays, with a warning.
  fs::create_directories(model + "/gen-000005");
  write_file(model + "/gen-000005/notes.txt", "mine");
  std::vector<std::string> warnings;
  train_model({fixture_}, model, TrainOptions(), ReadOptions(),
              [&](const std::string& message) { warnings.push_back(message); });
  EXPECT_EQ(entries_of(model), (std::vector<std::string>{"CURRENT", "autocat.lock", "gen-000001",
                                                         "gen-000005", "gen-000006"}));
  EXPECT_EQ(entries_of(model + "/gen-000005"), (std::vector<std::string>{"notes.txt"}));
  ASSERT_FALSE(warnings.empty());
  EXPECT_EQ(warnings.front(),
            model + "/gen-000005: left in place: it holds files autocat did not create");
  EXPECT_EQ(complete_model_docs(model), 24u);
}

TEST_F(ModelDirTest, CurrentNamingNoGenerationIsRefused) {
  const std::string model = dir_.file("model");
  train_model({fixture_}, model, TrainOptions(), ReadOptions(), nullptr);
  write_file(model + "/CURRENT", "../../etc\n");
  EXPECT_THROW(Categorizer{model}, ModelFormatError);
  EXPECT_THROW(train_model({fixture_}, model, TrainOptions(), ReadOptions(), nullptr),
               ModelFormatError);
  EXPECT_EQ(read_file(model + "/CURRENT"), "../../etc\n");
}

TEST_F(ModelDirTest, AnOpenCategorizerOutlivesLaterTrains) {
  const std::string model = dir_.file("model");
  train_model({first_}, model, TrainOptions(), ReadOptions(), nullptr);
  const Categorizer categorizer(model);  // kNN's index not built yet
  train_model({fixture_}, model, TrainOptions(), ReadOptions(), nullptr);
  train_model({fixture_}, model, TrainOptions(), ReadOptions(), nullptr);
  EXPECT_FALSE(fs::exists(model + "/gen-000001"));
  EXPECT_EQ(categorizer.knn_index().num_docs(), 15u);
}

TEST_F(ModelDirTest, AFailureAnywhereLeavesTheOldModel) {
  const std::string model = dir_.file("model");
  train_model({first_}, model, TrainOptions(), ReadOptions(), nullptr);
  const std::string before = read_file(resolve_model_dir(model).model_file);
  for (const char* step : {"locked", "collection-written", "fitted", "rename:model.autocat",
                           "model-written", "generation-synced", "rename:CURRENT"}) {
    const CrashAt fail(std::string(step) + ":fail");
    EXPECT_THROW(train_model({fixture_}, model, TrainOptions(), ReadOptions(), nullptr), IOError)
        << step;
    EXPECT_THROW(add_to_model({second_}, model, ReadOptions(), nullptr), IOError) << step;
    EXPECT_EQ(entries_of(model),
              (std::vector<std::string>{"CURRENT", "autocat.lock", "gen-000001"}))
        << step;
    EXPECT_EQ(read_file(resolve_model_dir(model).model_file), before) << step;
  }
  EXPECT_EQ(complete_model_docs(model), 15u);
}

TEST_F(ModelDirTest, ASecondWriterFailsAtOnceNamingTheDirectory) {
  const std::string model = dir_.file("model");
  train_model({first_}, model, TrainOptions(), ReadOptions(), nullptr);
  const std::string message =
      model +
      ": another autocat train is writing this model directory; wait for it to finish, "
      "then run again";
  {
    const ModelDirWriter writer(model, nullptr);
    try {
      train_model({fixture_}, model, TrainOptions(), ReadOptions(), nullptr);
      FAIL() << "expected IOError";
    } catch (const IOError& e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
    // Another process is refused too (flock, not a flag in this process).
    const CliResult add = run_autocat({"train", "--model", model, "--add", second_});
    EXPECT_EQ(add.exit_code, 1);
    EXPECT_EQ(add.err, "autocat: " + message + "\n");
  }
  EXPECT_EQ(complete_model_docs(model), 15u);
}

// Two `autocat train` into one directory: the second fails at once with the
// clear message, the first completes, the directory holds its model.
TEST_F(ModelDirTest, TwoTrainsAtOnce) {
  const std::string model = dir_.file("model");
  pid_t first = -1;
  {
    // The first run pauses while holding the lock.
    const CrashAt pause("collection-written:pause");
    first = spawn_autocat({"train", "--model", model, fixture_});
  }
  for (int i = 0; i < 5000 && !fs::exists(model + "/gen-000001/training"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const CliResult second = run_autocat({"train", "--model", model, first_});
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_EQ(second.err, "autocat: " + model +
                            ": another autocat train is writing this model directory; wait for "
                            "it to finish, then run again\n");
  EXPECT_EQ(wait_for(first), 0);
  EXPECT_EQ(complete_model_docs(model), 24u);

  // Started together without a pause: whichever loses the race fails with
  // the same message, and the directory holds one complete model.
  const std::string raced = dir_.file("raced");
  const pid_t a = spawn_autocat({"train", "--model", raced, fixture_});
  const pid_t b = spawn_autocat({"train", "--model", raced, first_});
  const int a_exit = wait_for(a), b_exit = wait_for(b);
  EXPECT_TRUE(a_exit == 0 || b_exit == 0) << a_exit << " " << b_exit;
  EXPECT_TRUE((a_exit == 0 || a_exit == 1) && (b_exit == 0 || b_exit == 1))
      << a_exit << " " << b_exit;
  const uint32_t docs = complete_model_docs(raced);
  EXPECT_TRUE(docs == 24u || docs == 15u) << docs;
}

// Killed at every named step of `train` (or `train --add`), the directory
// holds the old model or the new one, complete, and the next run completes.
// `train` alternates between two inputs so each run's model is new.
void kill_at_every_step(const std::string& model, bool add, const std::string& first,
                        const std::string& second, const std::string& all) {
  const std::vector<std::string> steps = {
      "locked",        "collection-written", "fitted",         "rename:model.autocat",
      "model-written", "generation-synced",  "rename:CURRENT", "switched"};
  train_model({first}, model, TrainOptions(), ReadOptions(), nullptr);
  uint32_t old_docs = 15;
  for (size_t i = 0; i < steps.size(); ++i) {
    const std::string& step = steps[i];
    if (add && i > 0) {
      train_model({first}, model, TrainOptions(), ReadOptions(), nullptr);
      old_docs = 15;
    }
    const bool to_all = add || old_docs == 15;
    const std::vector<std::string> args =
        add ? std::vector<std::string>{"train", "--model", model, "--add", second}
            : std::vector<std::string>{"train", "--model", model, to_all ? all : first};
    const uint32_t new_docs = to_all ? 24 : 15;
    {
      const CrashAt crash(step);
      const CliResult killed = run_autocat(args);
      ASSERT_EQ(killed.exit_code, 128 + SIGKILL) << step << ": " << killed.err;
    }
    // Until CURRENT is renamed the old model is in place; after, the new.
    EXPECT_EQ(ModelDirTest::complete_model_docs(model), step == "switched" ? new_docs : old_docs)
        << step;
    const CliResult again = run_autocat(args);
    EXPECT_EQ(again.exit_code, 0) << step << ": " << again.err;
    EXPECT_EQ(ModelDirTest::complete_model_docs(model, /*cli=*/false), new_docs) << step;
    EXPECT_LE(ModelDirTest::generations_in(model), 2u) << step;
    old_docs = new_docs;
  }
}

TEST_F(ModelDirTest, TrainKilledAtEveryStepLeavesTheOldOrTheNewModel) {
  kill_at_every_step(dir_.file("model"), /*add=*/false, first_, second_, fixture_);
}

TEST_F(ModelDirTest, AddKilledAtEveryStepLeavesTheOldOrTheNewModel) {
  kill_at_every_step(dir_.file("model"), /*add=*/true, first_, second_, fixture_);
}

// Killed at random moments (fixed seed), including inside the model switch:
// always the old or the new model, and the next run completes.
TEST_F(ModelDirTest, KilledAtRandomMomentsLeavesTheOldOrTheNewModel) {
  const std::string model = dir_.file("model");
  train_model({first_}, model, TrainOptions(), ReadOptions(), nullptr);
  // How long an undisturbed `train --add` takes here bounds the kill times.
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(wait_for(spawn_autocat({"train", "--model", model, "--add", second_})), 0);
  const auto run_micros = std::chrono::duration_cast<std::chrono::microseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count();
  std::mt19937 random(20261123);
  int64_t window = run_micros;
  int killed = 0;
  // At least 10 trials, and more (up to 30) until 4 runs were really killed:
  // on a busy machine a run can end before its kill time. Each run that
  // finished first narrows the window of kill times.
  for (int trial = 0; trial < 30 && (trial < 10 || killed <= 3); ++trial) {
    std::uniform_int_distribution<int64_t> when(0, window);
    const bool add = trial % 2 == 1;
    train_model({first_}, model, TrainOptions(), ReadOptions(), nullptr);
    const pid_t pid =
        spawn_autocat(add ? std::vector<std::string>{"train", "--model", model, "--add", second_}
                          : std::vector<std::string>{"train", "--model", model, fixture_});
    ASSERT_GT(pid, 0);  // never kill(-1, ...)
    std::this_thread::sleep_for(std::chrono::microseconds(when(random)));
    ::kill(pid, SIGKILL);
    const int exit_code = wait_for(pid);
    killed += exit_code == 128 + SIGKILL;
    if (exit_code != 128 + SIGKILL) window = window * 7 / 10;
    const uint32_t docs = complete_model_docs(model);
    EXPECT_TRUE(docs == 15u || docs == 24u) << "trial " << trial << ": " << docs;
    if (exit_code == 0) {
      EXPECT_EQ(docs, 24u) << "trial " << trial;
    }
  }
  EXPECT_GT(killed, 3);
  const CliResult last = run_autocat({"train", "--model", model, fixture_});
  ASSERT_EQ(last.exit_code, 0) << last.err;
  EXPECT_EQ(complete_model_docs(model), 24u);
  EXPECT_LE(generations_in(model), 2u) << last.err;
}

}  // namespace
}  // namespace autocat::internal
