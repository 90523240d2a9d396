#include "classify/io/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "autocat/error.h"
#include "classify/metrics/confusion_plot.h"
#include "classify/metrics/evaluation.h"
#include "classify/model/model_io.h"
#include "tests/test_util.h"

namespace autocat::internal {
namespace {

namespace fs = std::filesystem;
using testing_util::entries_of;
using testing_util::read_file;
using testing_util::write_file;

// The smallest model write_model_file accepts.
ModelState tiny_model() {
  ModelState model;
  model.categories = {"a"};
  model.category_doc_counts = {1};
  model.num_docs = 1;
  model.rocchio.num_categories = 1;
  model.rocchio.term_start = {0};
  const std::pair<NaiveBayesModel*, Method> nbs[] = {
      {&model.multinomial_nb, Method::kNaiveBayes},
      {&model.bernoulli_nb, Method::kBernoulliNaiveBayes},
      {&model.complement_nb, Method::kComplementNaiveBayes}};
  for (const auto& [nb, method] : nbs) {
    nb->variant = static_cast<int>(method);
    nb->alpha = 1.0;
    nb->num_categories = 1;
    nb->log_prior = {0.0};
    nb->class_constant = {0.0};
  }
  return model;
}

Evaluation tiny_evaluation() {
  Evaluation evaluation({"a", "b"});
  evaluation.add({0}, {0});
  evaluation.add({1}, {0});
  return evaluation;
}

TEST(AtomicFileTest, WritesReplacesAndLeavesNoTemporaryFile) {
  testing_util::TempDir dir;
  const std::string path = dir.file("out.txt");
  write_file_atomically(path, {"hello ", "world"}, "the test file");
  EXPECT_EQ(read_file(path), "hello world");
  write_file_atomically(path, {"again"}, "the test file");
  EXPECT_EQ(read_file(path), "again");
  EXPECT_EQ(entries_of(dir.path()), (std::vector<std::string>{"out.txt"}));
  // The usual permissions (0666 & ~umask), not mkstemp's 0600.
  const mode_t mask = ::umask(022);
  ::umask(mask);
  struct stat info {};
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0666 & ~mask);
}

TEST(AtomicFileTest, ASymlinkAtTheTargetIsReplacedNotFollowed) {
  testing_util::TempDir dir;
  const std::string victim = dir.file("victim"), path = dir.file("out.txt");
  write_file(victim, "precious");
  fs::create_symlink(victim, path);
  write_file_atomically(path, {"new"}, "the test file");
  EXPECT_EQ(read_file(victim), "precious");
  EXPECT_FALSE(fs::is_symlink(path));
  EXPECT_EQ(read_file(path), "new");
}

// Symlinks planted at the temporary names earlier versions used
// (<file>.tmp.<pid>, <plot>.tmp-<pid>) must not redirect the writes.
TEST(AtomicFileTest, PlantedSymlinksAtPredictableNamesAreNotFollowed) {
  testing_util::TempDir dir;
  const std::string victim = dir.file("victim");
  write_file(victim, "precious");
  const std::string pid = std::to_string(::getpid());
  const std::string model = dir.file("model.autocat"), plot = dir.file("plot.svg");
  for (const std::string& planted :
       {model + ".tmp." + pid, model + ".tmp-" + pid, plot + ".tmp-" + pid, plot + ".tmp." + pid}) {
    fs::create_symlink(victim, planted);
  }
  write_model_file(model, tiny_model());
  write_confusion_plot(plot, tiny_evaluation(), "t");
  EXPECT_EQ(read_file(victim), "precious");
  EXPECT_FALSE(fs::is_symlink(model));
  EXPECT_FALSE(fs::is_symlink(plot));
  EXPECT_EQ(read_model_file(model).categories, std::vector<std::string>{"a"});
  EXPECT_EQ(read_file(plot).rfind("<?xml", 0), 0u);
}

TEST(AtomicFileTest, AFailedWriteNamesTheFileAndLeavesNothing) {
  testing_util::TempDir dir;
  const std::string in_the_way = dir.file("taken");
  fs::create_directory(in_the_way);
  try {
    write_file_atomically(in_the_way, {"x"}, "the test file");
    FAIL() << "no error";
  } catch (const IOError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(in_the_way + ": cannot write the test file: ", 0), 0u)
        << e.what();
  }
  EXPECT_EQ(entries_of(dir.path()), (std::vector<std::string>{"taken"}));
}

TEST(AtomicFileTest, StreamedWritesAppendAndOverwriteAHeader) {
  testing_util::TempDir dir;
  const std::string path = dir.file("out.bin");
  write_file_atomically(
      path,
      [](AtomicFileSink& sink) {
        sink.append("????");  // a header known only at the end
        for (int i = 0; i < 3; ++i) sink.append("body" + std::to_string(i));
        EXPECT_EQ(sink.size(), 19u);
        sink.overwrite(0, "HEAD");
        sink.overwrite(8, "Y");
        EXPECT_THROW(sink.overwrite(18, "xy"), IOError);
      },
      "the test file");
  EXPECT_EQ(read_file(path), "HEADbodyYbody1body2");
}

TEST(AtomicFileTest, AStreamedWriteThatThrowsKeepsTheOldFile) {
  testing_util::TempDir dir;
  const std::string path = dir.file("out.bin");
  write_file_atomically(path, {"old"}, "the test file");
  EXPECT_THROW(write_file_atomically(
                   path,
                   [](AtomicFileSink& sink) {
                     sink.append("half of the new");
                     throw IOError("disk full, say");
                   },
                   "the test file"),
               IOError);
  EXPECT_EQ(read_file(path), "old");
  EXPECT_EQ(entries_of(dir.path()), (std::vector<std::string>{"out.bin"}));
}

TEST(AtomicFileTest, TemporaryNamesAreRecognized) {
  EXPECT_TRUE(is_temporary_file_of("CURRENT.tmp-aZ09xY", "CURRENT"));
  EXPECT_FALSE(is_temporary_file_of("CURRENT.tmp-aZ09x", "CURRENT"));
  EXPECT_FALSE(is_temporary_file_of("CURRENT.tmp-aZ09x!", "CURRENT"));
  EXPECT_FALSE(is_temporary_file_of("CURRENTS.tmp-aZ09xY", "CURRENT"));
  EXPECT_FALSE(is_temporary_file_of("model.autocat.tmp-aZ09xY", "CURRENT"));
}

}  // namespace
}  // namespace autocat::internal
