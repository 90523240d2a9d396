// What the CLI guarantees when a write fails and when models change under
// it: a full disk (simulated with RLIMIT_FSIZE: writes past the limit fail
// with EFBIG) ends `train`, `train --add`, `learn`, `index` and
// `recategorize` with one line naming the file, the old model or database
// intact and the counts reported true; a database records the model its
// documents were categorized with, learning included; a database that keeps
// its text goes on keeping it; only a lock held by another writer is
// reported as one. Runs the real binary on the fixture corpus.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xapian.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "autocat/category_indexer.h"
#include "classify/io/journal.h"
#include "tests/cli_test_util.h"
#include "tests/test_util.h"

namespace autocat {
namespace {

namespace fs = std::filesystem;
using testing_util::CliResult;
using testing_util::json;
using testing_util::lines_of;
using testing_util::number_at;
using testing_util::read_file;
using testing_util::run_autocat;
using testing_util::shell_quote;
using testing_util::spawn_autocat;
using testing_util::string_at;
using testing_util::TempDir;
using testing_util::test_data;
using testing_util::wait_for;
using testing_util::write_file;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Runs the CLI with no file allowed to grow past `max_file_bytes` (what a
// full disk does to the write that needs more room). SIGXFSZ is ignored, so
// the write fails with EFBIG instead of killing the process. The limit
// covers the captured stderr too: keep it above a few kilobytes.
CliResult run_with_file_limit(uint64_t max_file_bytes, const std::vector<std::string>& args) {
  TempDir io;
  std::string command = "trap '' XFSZ; exec prlimit --fsize=" + std::to_string(max_file_bytes) +
                        " " + shell_quote(AUTOCAT_CLI_PATH);
  for (const std::string& arg : args) command += " " + shell_quote(arg);
  command += " </dev/null >" + shell_quote(io.file("out")) + " 2>" + shell_quote(io.file("err"));
  const int status = std::system(command.c_str());
  CliResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_file(io.file("out"));
  result.err = read_file(io.file("err"));
  return result;
}

// Runs the CLI in its own mount namespace, on a fresh 4 MB tmpfs at
// `mount` holding a copy of `copy` (as `name`) and a file filling it to
// `left` bytes free. Needs root.
CliResult run_on_full_tmpfs(const std::string& mount, const std::string& copy,
                            const std::string& name, uint64_t left,
                            const std::vector<std::string>& args, const TempDir& dir) {
  const std::string script = "mount -t tmpfs -o size=4m tmpfs " + shell_quote(mount) +
                             " && cp -r " + shell_quote(copy) + " " +
                             shell_quote(mount + "/" + name) + " && free=$(($(stat -f -c '%a*%S' " +
                             shell_quote(mount) + ") - " + std::to_string(left) +
                             ")) && if [ $free -gt 0 ]; then head -c $free /dev/zero > " +
                             shell_quote(mount) + "/filler; fi; exec \"$0\" \"$@\"";
  std::string command = "unshare --mount --propagation private sh -c " + shell_quote(script) + " " +
                        shell_quote(AUTOCAT_CLI_PATH);
  for (const std::string& arg : args) command += " " + shell_quote(arg);
  command += " </dev/null >" + shell_quote(dir.file("out")) + " 2>" + shell_quote(dir.file("err"));
  const int status = std::system(command.c_str());
  CliResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_file(dir.file("out"));
  result.err = read_file(dir.file("err"));
  return result;
}

// What a failed run must look like: exit 1 and one line, naming `path`.
void expect_one_line_naming(const CliResult& result, const std::string& path) {
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(lines_of(result.err).size(), 1U) << result.err;
  EXPECT_TRUE(contains(result.err, path)) << result.err;
}

uint64_t largest_file(const std::string& dir) {
  uint64_t largest = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) largest = std::max<uint64_t>(largest, entry.file_size());
  }
  return largest;
}

std::string current_generation(const std::string& model_dir) {
  std::string name = read_file(model_dir + "/CURRENT");
  while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
  return name;
}

Xapian::doccount documents_in(const std::string& db) { return Xapian::Database(db).get_doccount(); }

// 42 documents: 24 + 9 JSON Lines records and a folder tree of 9 files.
const Xapian::doccount kCorpusDocuments = 42;
std::vector<std::string> corpus() {
  return {test_data("fixture_train.jsonl"), test_data("fixture_test.jsonl"),
          test_data("fixture_tree")};
}

class CliWriteSafetyTest : public testing::Test {
 protected:
  void SetUp() override {
    model_ = dir_.file("model");
    const CliResult trained =
        run_autocat({"train", "--model", model_, test_data("fixture_train.jsonl")});
    ASSERT_EQ(trained.exit_code, 0) << trained.err;
  }

  std::vector<std::string> index_args(const std::string& db) const {
    std::vector<std::string> args = {"index",        "--model", model_, "--db",      db,
                                     "--store-text", "--batch", "5",    "--threads", "1"};
    for (const std::string& input : corpus()) args.push_back(input);
    return args;
  }

  // A second model that categorizes differently (for recategorize).
  std::string other_model() {
    const std::string other = dir_.file("other-model");
    const CliResult trained = run_autocat(
        {"train", "--model", other, "--stemmer", "english", test_data("fixture_train.jsonl")});
    EXPECT_EQ(trained.exit_code, 0) << trained.err;
    return other;
  }

  TempDir dir_;
  std::string model_;
};

// Full disk while `train` writes the new generation: first its training
// database, then its model file (archived by Boost, whose destructor used
// to end the process with std::terminate on the write error).
TEST_F(CliWriteSafetyTest, TrainOnAFullDiskKeepsTheOldModel) {
  const std::string generation = current_generation(model_);
  const std::string model_file = model_ + "/" + generation + "/model.autocat";
  const std::string model_bytes = read_file(model_file);
  const uint64_t training = largest_file(model_ + "/" + generation + "/training");
  ASSERT_LT(training + 4096, model_bytes.size()) << "the fixture's model outgrew the test";

  const std::vector<std::pair<uint64_t, std::string>> limits = {
      {4096, "training"},                                      // the training database
      {(training + model_bytes.size()) / 2, "model.autocat"},  // the model file
      {model_bytes.size() - 1, "model.autocat"}};
  for (const auto& [limit, file] : limits) {
    SCOPED_TRACE("file size limit " + std::to_string(limit));
    const CliResult result =
        run_with_file_limit(limit, {"train", "--model", model_, test_data("fixture_train.jsonl")});
    expect_one_line_naming(result, model_);
    EXPECT_TRUE(contains(result.err, file)) << result.err;
    EXPECT_TRUE(contains(result.err, "free space")) << result.err;
    EXPECT_EQ(current_generation(model_), generation);
    EXPECT_EQ(read_file(model_file), model_bytes);
  }
  const CliResult classified =
      run_autocat({"classify", "--model", model_, test_data("fixture_test.jsonl")});
  EXPECT_EQ(classified.exit_code, 0) << classified.err;
}

TEST_F(CliWriteSafetyTest, TrainAddOnAFullDiskKeepsTheOldModel) {
  // The examples' model file is larger than any file of its training
  // database (five categories' weights over 1,637 terms), so a file size
  // limit can let the database's copy through and stop the model's write.
  const std::string model = dir_.file("examples-model");
  const std::string examples = std::string(AUTOCAT_SOURCE_DIR) + "/examples/data/train.jsonl";
  ASSERT_EQ(run_autocat({"train", "--quiet", "--model", model, examples}).exit_code, 0);
  const std::string generation = current_generation(model);
  const std::string model_file = model + "/" + generation + "/model.autocat";
  const std::string model_bytes = read_file(model_file);
  // The sizes `train --add` needs, measured on a copy.
  const std::string copy = dir_.file("copy");
  fs::copy(model, copy, fs::copy_options::recursive);
  const CliResult added =
      run_autocat({"train", "--add", "--model", copy, test_data("fixture_test.jsonl")});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  const std::string added_generation = copy + "/" + current_generation(copy);
  const uint64_t training = largest_file(added_generation + "/training");
  const uint64_t model_size = fs::file_size(added_generation + "/model.autocat");
  ASSERT_LT(training + 4096, model_size) << "the fixture's model outgrew the test";

  for (const auto& [limit, file] : std::vector<std::pair<uint64_t, std::string>>{
           {4096, "training"},  // copying the training database
           {training - 1, "training"},
           {(training + model_size) / 2, "model.autocat"}}) {
    SCOPED_TRACE("file size limit " + std::to_string(limit));
    const CliResult result = run_with_file_limit(
        limit, {"train", "--add", "--model", model, test_data("fixture_test.jsonl")});
    expect_one_line_naming(result, model);
    EXPECT_TRUE(contains(result.err, file)) << result.err;
    EXPECT_TRUE(contains(result.err, "free space")) << result.err;
    EXPECT_EQ(current_generation(model), generation);
    EXPECT_EQ(read_file(model_file), model_bytes);
  }
}

// A full disk (ENOSPC, not a file size limit) while `train --add` copies
// the training database: the error says so and names the file.
TEST_F(CliWriteSafetyTest, TrainAddCopyOnAFullDiskSaysTheDiskIsFull) {
  if (::geteuid() != 0) return;  // mounting a tmpfs needs root
  const std::string mount = dir_.file("tmpfs");
  fs::create_directory(mount);
  const CliResult result = run_on_full_tmpfs(
      mount, model_, "model", 20000,
      {"train", "--add", "--model", mount + "/model", test_data("fixture_test.jsonl")}, dir_);
  expect_one_line_naming(result, mount + "/model/");
  EXPECT_TRUE(contains(result.err, "/training/")) << result.err;
  EXPECT_TRUE(contains(result.err, "No space left on device")) << result.err;
}

// An error after CURRENT was renamed (its directory's fsync failing) leaves
// the new model installed: its generation must not be removed under it.
TEST_F(CliWriteSafetyTest, AnErrorAfterTheSwitchKeepsTheInstalledModelWhole) {
  ::setenv("AUTOCAT_CRASH_AT", "renamed:CURRENT:fail", 1);
  const CliResult failed =
      run_autocat({"train", "--model", model_, test_data("fixture_train.jsonl")});
  ::unsetenv("AUTOCAT_CRASH_AT");
  EXPECT_EQ(failed.exit_code, 1) << failed.err;
  EXPECT_TRUE(fs::exists(model_ + "/" + current_generation(model_) + "/model.autocat"));
  const CliResult classified =
      run_autocat({"classify", "--model", model_, test_data("fixture_test.jsonl")});
  EXPECT_EQ(classified.exit_code, 0) << classified.err;
}

// learn's journal append on a full disk: nothing learned, the journal as it was.
TEST_F(CliWriteSafetyTest, LearnOnAFullDiskLearnsNothing) {
  std::string words;
  for (int i = 0; i < 3000; ++i) words += " word" + std::to_string(i);
  const std::string input = dir_.file("learn.jsonl");
  write_file(input, "{\"id\": \"big-1\", \"labels\": [\"food\"], \"text\": \"" + words + "\"}\n");
  const std::string journal = model_ + "/" + current_generation(model_) + "/journal";
  const CliResult result = run_with_file_limit(8192, {"learn", "--model", model_, input});
  expect_one_line_naming(result, journal);
  std::error_code ec;
  EXPECT_EQ(fs::exists(journal, ec) ? fs::file_size(journal) : 0U, 0U);
  const CliResult refit = run_autocat({"train", "--add", "--model", model_});
  EXPECT_TRUE(contains(refit.err, "no document learned or forgotten")) << refit.err;
}

// The number in "... the first N documents of this run" or "holds the N documents".
long reported_documents(const std::string& err) {
  std::smatch match;
  if (std::regex_search(err, match, std::regex("(the first|holds the) ([0-9]+) documents"))) {
    return std::stol(match[2]);
  }
  return -1;
}

// A full disk stops `index` at a commit: what it reports as committed is
// what the database holds (a failed commit drops its documents, and a second
// commit then "succeeds" with nothing to write).
TEST_F(CliWriteSafetyTest, IndexOnAFullDiskReportsWhatIsCommitted) {
  int partial = 0;
  // The room reserved before each commit (64 KiB and more) sets the range.
  for (uint64_t limit = 8192; limit <= 196608; limit += 16384) {
    SCOPED_TRACE("file size limit " + std::to_string(limit));
    const std::string db = dir_.file("db-" + std::to_string(limit));
    const CliResult result = run_with_file_limit(limit, index_args(db));
    if (result.exit_code == 0) {
      EXPECT_EQ(documents_in(db), kCorpusDocuments);
      continue;
    }
    expect_one_line_naming(result, db);
    const long reported = reported_documents(result.err);
    EXPECT_EQ(reported, static_cast<long>(documents_in(db))) << result.err;
    if (reported > 0) ++partial;
    // The same command with room completes it.
    const CliResult rerun = run_autocat(index_args(db));
    EXPECT_EQ(rerun.exit_code, 0) << rerun.err;
    EXPECT_EQ(documents_in(db), kCorpusDocuments);
  }
  EXPECT_GT(partial, 0) << "no limit stopped index after a commit";
}

TEST_F(CliWriteSafetyTest, RecategorizeOnAFullDiskReportsWhatIsCommitted) {
  const std::string other = other_model();
  const std::string full_db = dir_.file("full-db");
  ASSERT_EQ(run_autocat(index_args(full_db)).exit_code, 0);
  const uint64_t size = largest_file(full_db);
  int failed = 0;
  for (uint64_t limit = 8192; limit <= size; limit += 4096) {
    SCOPED_TRACE("file size limit " + std::to_string(limit));
    const std::string db = dir_.file("db-" + std::to_string(limit));
    fs::copy(full_db, db, fs::copy_options::recursive);
    const CliResult result = run_with_file_limit(
        limit, {"recategorize", "--model", other, "--db", db, "--batch", "2", "--threads", "1"});
    if (result.exit_code == 0) continue;
    ++failed;
    expect_one_line_naming(result, db);
    const CategoryIndexer indexer(other, IndexOptions());
    const Xapian::Database reader(db);
    const long done = static_cast<long>(reader.get_termfreq(indexer.model_term()));
    std::smatch match;
    long reported = 0;
    if (std::regex_search(result.err, match, std::regex("the first ([0-9]+) of this run"))) {
      reported = std::stol(match[1]);
    }
    EXPECT_EQ(reported, done) << result.err;
    EXPECT_EQ(reader.get_doccount(), kCorpusDocuments);
  }
  EXPECT_GT(failed, 0) << "no limit stopped recategorize";
}

// The categories document `id` of `db` holds, as the value slot says.
std::string categories_of(const std::string& db, const std::string& id) {
  const Xapian::Database reader(db);
  Xapian::PostingIterator it = reader.postlist_begin("Q" + id);
  return it == reader.postlist_end("Q" + id) ? "" : reader.get_document(*it).get_value(200);
}

// Xapian's glass backend writes value streams from a destructor during
// commit: a full disk there used to end relabel, recategorize and index with
// std::terminate (exit 134). Every fill level ends in success or one line
// naming the database; relabel --learn teaches the model only what the
// index committed. Full disks come from a file size limit and, as root,
// from a 4 MB tmpfs in a private mount namespace filled to each level.
TEST_F(CliWriteSafetyTest, AFullDiskNeverAbortsACommit) {
  const std::string db = dir_.file("db");
  ASSERT_EQ(run_autocat(index_args(db)).exit_code, 0);
  const std::string other = other_model();
  const std::string journal = model_ + "/" + current_generation(model_) + "/journal";
  const std::string before = categories_of(db, "sp-01");
  // One case: the fill level (file size limit, or bytes left on the tmpfs).
  // `on_db` is readable here after a run unless it was on the tmpfs.
  const auto check = [&](const std::string& level, const std::string& on_db,
                         const std::function<CliResult(const std::vector<std::string>&)>& run) {
    SCOPED_TRACE(level);
    const CliResult relabeled = run(
        {"relabel", "--db", on_db, "--model", model_, "--learn", "--category", "food", "sp-01"});
    ASSERT_NE(relabeled.exit_code, 134) << relabeled.err;
    // Whether the model holds the correction: the journal's last record
    // for the document teaches it "food" (a failed commit may have been
    // learned and then undone).
    bool learned = false;
    for (const internal::JournalRecord& record : internal::read_journal(journal).records) {
      if (record.id == "sp-01") {
        learned = record.kind == internal::JournalRecord::Kind::kLearn &&
                  record.labels == std::vector<std::string>{"food"};
      }
    }
    std::error_code ec;
    if (relabeled.exit_code != 0) {
      expect_one_line_naming(relabeled, on_db);
      EXPECT_FALSE(learned) << "the model learned what the index did not commit";
      if (fs::exists(on_db + "/iamglass")) {
        EXPECT_EQ(categories_of(on_db, "sp-01"), before);
      }
    } else {
      EXPECT_TRUE(learned);
    }
    fs::remove(journal, ec);
    const CliResult recategorized =
        run({"recategorize", "--model", other, "--db", on_db, "--batch", "2", "--threads", "1"});
    ASSERT_NE(recategorized.exit_code, 134) << recategorized.err;
    if (recategorized.exit_code != 0) expect_one_line_naming(recategorized, on_db);
    std::vector<std::string> index = index_args(on_db + "-new");
    const CliResult indexed = run(index);
    ASSERT_NE(indexed.exit_code, 134) << indexed.err;
    if (indexed.exit_code != 0) expect_one_line_naming(indexed, on_db + "-new");
  };
  for (uint64_t limit = 8192; limit <= 65536; limit += 16384) {
    const std::string copy = dir_.file("limit-" + std::to_string(limit));
    fs::copy(db, copy, fs::copy_options::recursive);
    check("file size limit " + std::to_string(limit), copy,
          [&](const std::vector<std::string>& args) { return run_with_file_limit(limit, args); });
  }
  if (::geteuid() != 0) return;  // mounting a tmpfs needs root
  const std::string mount = dir_.file("tmpfs");
  fs::create_directory(mount);
  for (uint64_t left = 0; left <= 400000; left += 40000) {
    // Each command runs in its own namespace, on a fresh tmpfs holding a
    // copy of DB and a file filling it to `left` bytes free.
    check("bytes left " + std::to_string(left), mount + "/db",
          [&](const std::vector<std::string>& args) {
            return run_on_full_tmpfs(mount, db, "db", left, args, dir_);
          });
  }
}

// Re-indexing a database built with --store-text, without the flag, keeps
// storing the text, so recategorize still has it.
TEST_F(CliWriteSafetyTest, ReindexingWithoutStoreTextKeepsTheText) {
  const std::string db = dir_.file("db");
  ASSERT_EQ(run_autocat(index_args(db)).exit_code, 0);
  std::vector<std::string> again = {"index", "--model", model_, "--db", db};
  for (const std::string& input : corpus()) again.push_back(input);
  const CliResult reindexed = run_autocat(again);
  ASSERT_EQ(reindexed.exit_code, 0) << reindexed.err;
  {
    const Xapian::Database reader(db);
    for (auto it = reader.postlist_begin(""); it != reader.postlist_end(""); ++it) {
      EXPECT_FALSE(reader.get_document(*it).get_value(201).empty()) << "document " << *it;
    }
  }
  const CliResult recategorized =
      run_autocat({"recategorize", "--model", other_model(), "--db", db, "--json"});
  ASSERT_EQ(recategorized.exit_code, 0) << recategorized.err;
  const internal::Json output = json(recategorized.out);
  const internal::Json* databases = testing_util::member(output, "databases");
  ASSERT_TRUE(databases != nullptr && databases->is_array() && databases->size() == 1);
  const internal::Json& result = (*databases)[0];
  EXPECT_EQ(number_at(result, "recategorized"), kCorpusDocuments);
  EXPECT_EQ(number_at(result, "without_text"), 0);
}

// Writes `generation` into DIR/CURRENT in one step, as an install does.
void switch_current(const std::string& model_dir, const std::string& generation) {
  const std::string temporary = model_dir + "/CURRENT.test";
  write_file(temporary, generation + "\n");
  fs::rename(temporary, model_dir + "/CURRENT");
}

// Waits (up to 5 s) until process `pid` has mapped or opened a file whose
// path contains `part`.
bool wait_until_opened(pid_t pid, const std::string& part) {
  for (int i = 0; i < 500; ++i) {
    if (contains(read_file("/proc/" + std::to_string(pid) + "/maps"), part)) return true;
    std::error_code ec;
    for (const auto& fd : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
      if (contains(fs::read_symlink(fd.path(), ec).string(), part)) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Every document of `db` carries the model term of the fingerprint the
// database records.
void expect_documents_carry_the_recorded_model(const std::string& db) {
  const Xapian::Database reader(db);
  const std::string recorded = reader.get_metadata("autocat:model_fingerprint");
  ASSERT_FALSE(recorded.empty());
  const std::string term = model_version_term(recorded);
  EXPECT_EQ(reader.get_termfreq(term), reader.get_doccount())
      << db << " records " << recorded << " but its documents carry another model's term";
}

// A model installed while `index` runs (after it opened its model) must not
// be what the database records.
TEST_F(CliWriteSafetyTest, IndexRecordsTheModelItOpened) {
  const std::string first = current_generation(model_);
  ASSERT_EQ(
      run_autocat({"train", "--add", "--model", model_, test_data("fixture_test.jsonl")}).exit_code,
      0);
  const std::string second = current_generation(model_);
  ASSERT_NE(first, second);
  const std::string db = dir_.file("db");
  ::setenv("AUTOCAT_CRASH_AT", "index-model-opened:pause", 1);
  const pid_t pid = spawn_autocat(index_args(db));
  ::unsetenv("AUTOCAT_CRASH_AT");
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(wait_until_opened(pid, second + "/training/postlist.glass"));
  switch_current(model_, first);  // "another train installed a model"
  EXPECT_EQ(wait_for(pid), 0);
  expect_documents_carry_the_recorded_model(db);
}

TEST_F(CliWriteSafetyTest, RecategorizeRecordsTheModelItOpened) {
  const std::string db = dir_.file("db");
  ASSERT_EQ(run_autocat(index_args(db)).exit_code, 0);
  const std::string first = current_generation(model_);
  ASSERT_EQ(
      run_autocat({"train", "--add", "--model", model_, test_data("fixture_test.jsonl")}).exit_code,
      0);
  const std::string second = current_generation(model_);
  switch_current(model_, first);
  ::setenv("AUTOCAT_CRASH_AT", "recategorize-open-model:pause", 1);
  const pid_t pid = spawn_autocat({"recategorize", "--model", model_, "--db", db});
  ::unsetenv("AUTOCAT_CRASH_AT");
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(wait_until_opened(pid, db + "/postlist.glass"));  // DB open, the model not yet
  switch_current(model_, second);
  EXPECT_EQ(wait_for(pid), 0);
  expect_documents_carry_the_recorded_model(db);
}

// Learning changes what the model decides: the database's documents no
// longer carry its term, so recategorize does them again; --all forces it.
TEST_F(CliWriteSafetyTest, LearningMakesRecategorizeDoTheDocumentsAgain) {
  const std::string db = dir_.file("db");
  ASSERT_EQ(run_autocat(index_args(db)).exit_code, 0);
  auto recategorize = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"recategorize", "--model", model_, "--db", db, "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult result = run_autocat(args);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    const internal::Json output = json(result.out);
    const internal::Json* databases = testing_util::member(output, "databases");
    return databases != nullptr && databases->is_array() && !databases->empty()
               ? number_at((*databases)[0], "recategorized")
               : -1.0;
  };
  EXPECT_EQ(recategorize({}), 0);
  EXPECT_EQ(recategorize({"--all"}), kCorpusDocuments);

  const std::string input = dir_.file("learn.jsonl");
  write_file(input,
             "{\"id\": \"t-sp-01\", \"labels\": [\"food\"], \"text\": \"The striker scored a "
             "goal and the team won the match.\"}\n");
  const CliResult learned = run_autocat({"learn", "--model", model_, input});
  ASSERT_EQ(learned.exit_code, 0) << learned.err;

  // index accepts the same model after learning, and says what it means.
  const std::string extra = dir_.file("extra.jsonl");
  write_file(extra, "{\"id\": \"x-1\", \"text\": \"The chef roasted the vegetables.\"}\n");
  const CliResult indexed =
      run_autocat({"index", "--model", model_, "--db", db, "--store-text", extra});
  ASSERT_EQ(indexed.exit_code, 0) << indexed.err;
  EXPECT_TRUE(contains(indexed.err, "recategorize")) << indexed.err;

  // The documents categorized before learning are done again, the new one not.
  EXPECT_EQ(recategorize({}), kCorpusDocuments);
  expect_documents_carry_the_recorded_model(db);
  EXPECT_EQ(recategorize({}), 0);
}

// A lock that cannot be taken for another reason than another writer (here
// the lock file is a directory; a read-only mount or a missing permission
// fail the same way) passes the reason on.
TEST_F(CliWriteSafetyTest, OnlyALockHeldIsReportedAsLocked) {
  const std::string db = dir_.file("db");
  ASSERT_EQ(run_autocat(index_args(db)).exit_code, 0);
  fs::remove(db + "/flintlock");
  fs::create_directory(db + "/flintlock");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"index", "--model", model_, "--db", db, test_data("fixture_test.jsonl")},
           {"recategorize", "--model", model_, "--db", db}}) {
    SCOPED_TRACE(args[0]);
    const CliResult result = run_autocat(args);
    expect_one_line_naming(result, db);
    EXPECT_FALSE(contains(result.err, "locked by another writer")) << result.err;
    EXPECT_TRUE(contains(result.err, "Is a directory")) << result.err;
  }
}

// Too few file descriptors: the OS reason and what to do, naming DB.
TEST_F(CliWriteSafetyTest, TooManyOpenFilesSaysSo) {
  const std::string db = dir_.file("db");
  ASSERT_EQ(run_autocat(index_args(db)).exit_code, 0);
  const std::string command = "exec prlimit --nofile=10 " + shell_quote(AUTOCAT_CLI_PATH) +
                              " index --threads 1 --model " + shell_quote(model_) + " --db " +
                              shell_quote(db) + " " + shell_quote(test_data("fixture_test.jsonl")) +
                              " 2>" + shell_quote(dir_.file("err"));
  const int status = std::system(command.c_str());
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 1);
  const std::string err = read_file(dir_.file("err"));
  EXPECT_EQ(lines_of(err).size(), 1U) << err;
  EXPECT_TRUE(contains(err, db)) << err;
  EXPECT_TRUE(contains(err, "Too many open files")) << err;
  EXPECT_TRUE(contains(err, "ulimit -n")) << err;
}

// A free TCP port on 127.0.0.1 (-1 if none).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

// Starts a stock xapian-tcpsrv serving `db` on 127.0.0.1:`port` in its own
// process group; its pid once it answers, else -1.
pid_t start_tcp_server(const std::string& db, int port) {
  const char kTcpServer[] = AUTOCAT_XAPIAN_TCPSRV;
  const std::string port_text = std::to_string(port);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    ::execl(kTcpServer, kTcpServer, "--interface", "127.0.0.1", "--port", port_text.c_str(),
            "--quiet", db.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  if (pid < 0) return -1;
  for (int i = 0; i < 100; ++i) {
    if (::waitpid(pid, nullptr, WNOHANG) == pid) return -1;
    try {
      Xapian::Remote::open("127.0.0.1", static_cast<unsigned>(port), 1000).get_doccount();
      return pid;
    } catch (const Xapian::NetworkError&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ::kill(pid, SIGTERM);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

// Waits (up to 5 s) until process `pid` has a socket open.
bool wait_until_connected(pid_t pid) {
  for (int i = 0; i < 500; ++i) {
    std::error_code ec;
    for (const auto& fd : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
      if (fs::read_symlink(fd.path(), ec).string().rfind("socket:", 0) == 0) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Serves `db` with a stock xapian-tcpsrv, runs the CLI with `args` (given
// the stub file naming the remote) paused at crash point `step` once it has
// opened it, kills the server there and returns the CLI's exit code and
// stderr. Empty `err` if xapian-tcpsrv is not installed.
CliResult run_losing_the_remote(const std::string& db, const std::string& stub,
                                const std::vector<std::string>& args, const std::string& step,
                                const std::string& err_file) {
  CliResult result;
  pid_t server = -1;
  int port = -1;
  for (int attempt = 0; attempt < 5 && server <= 0; ++attempt) {
    port = free_port();
    if (port > 0) server = start_tcp_server(db, port);
  }
  if (server <= 0) {
    ADD_FAILURE() << "xapian-tcpsrv did not start";
    return result;
  }
  write_file(stub, "remote 127.0.0.1:" + std::to_string(port) + "\n");
  ::setenv("AUTOCAT_CRASH_AT", (step + ":pause").c_str(), 1);
  const pid_t pid = spawn_autocat(args, "/dev/null", err_file);
  ::unsetenv("AUTOCAT_CRASH_AT");
  EXPECT_GT(pid, 0);
  EXPECT_TRUE(wait_until_connected(pid));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the open completes
  ::kill(server, SIGTERM);  // and its connection handlers with it (its process group)
  ::waitpid(server, nullptr, 0);
  // A handler forked as the SIGTERM arrived can inherit it blocked and
  // outlive the server, holding ctest's output pipe open.
  ::kill(-server, SIGKILL);
  result.exit_code = wait_for(pid);
  result.err = read_file(err_file);
  return result;
}

// A remote whose server goes away between opening and reading: the error
// names the stub file and what to do.
TEST_F(CliWriteSafetyTest, ARemoteLostMidQueryNamesTheStub) {
  if (!fs::exists("/usr/bin/xapian-tcpsrv")) GTEST_SKIP() << "xapian-tcpsrv is not installed";
  const std::string db = dir_.file("db");
  ASSERT_EQ(run_autocat(index_args(db)).exit_code, 0);
  const std::string stub = dir_.file("shards.stub");
  const CliResult searched = run_losing_the_remote(db, stub, {"search", "--db", stub, "goal"},
                                                   "search-opened", dir_.file("search.err"));
  expect_one_line_naming(searched, stub);
  EXPECT_TRUE(contains(searched.err, "xapian-tcpsrv")) << searched.err;

  const std::string trained = dir_.file("model-from-db");
  const CliResult training = run_losing_the_remote(
      db, stub, {"train", "--model", trained, "--from-db", stub, "--label-prefix", "XC"},
      "from-db-opened", dir_.file("train.err"));
  expect_one_line_naming(training, stub);
  EXPECT_TRUE(contains(training.err, "xapian-tcpsrv")) << training.err;
}

}  // namespace
}  // namespace autocat
