// What `autocat index` guarantees about the application's database: it
// refuses to mix models, prefixes or slots, and to write inside a model
// directory; an error or a kill leaves complete documents and a re-run
// completes without duplicates; a second writer fails at once. Runs the real
// binary on the fixture corpus (tests/data/fixture_*).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xapian.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "autocat/category_indexer.h"
#include "autocat/types.h"
#include "classify/io/model_dir.h"
#include "tests/cli_test_util.h"
#include "tests/test_util.h"

extern char** environ;

namespace autocat {
namespace {

using testing_util::CliResult;
using testing_util::json;
using testing_util::lines_of;
using testing_util::number_at;
using testing_util::read_file;
using testing_util::run_autocat;
using testing_util::spawn_autocat;
using testing_util::TempDir;
using testing_util::test_data;
using testing_util::wait_for;
using testing_util::write_file;

using Clock = std::chrono::steady_clock;

// 42 documents: 24 + 9 JSON Lines records and a folder tree of 9 files.
const size_t kCorpusDocuments = 42;
std::vector<std::string> corpus() {
  return {test_data("fixture_train.jsonl"), test_data("fixture_test.jsonl"),
          test_data("fixture_tree")};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// What a database written by `autocat index` holds, and every way a
// document in it is not complete.
struct DatabaseCheck {
  Xapian::doccount documents = 0;
  size_t distinct_ids = 0;
  std::vector<std::string> problems;
};

DatabaseCheck check_database(const std::string& path) {
  DatabaseCheck check;
  Xapian::Database db;
  try {
    db = Xapian::Database(path);
  } catch (const Xapian::Error& e) {
    check.problems.push_back(path + " does not open: " + e.get_description());
    return check;
  }
  check.documents = db.get_doccount();
  for (auto it = db.allterms_begin(kIdPrefix); it != db.allterms_end(kIdPrefix); ++it) {
    ++check.distinct_ids;
    if (it.get_termfreq() != 1) check.problems.push_back(*it + " is on several documents");
  }
  for (auto it = db.postlist_begin(""); it != db.postlist_end(""); ++it) {
    const Xapian::Document doc = db.get_document(*it);
    const std::string name = "document " + std::to_string(*it);
    std::vector<std::string> ids;
    std::set<std::string> category_terms;
    size_t text_terms = 0;
    for (auto term = doc.termlist_begin(); term != doc.termlist_end(); ++term) {
      const std::string& t = *term;
      if (t.rfind(kIdPrefix, 0) == 0) {
        ids.push_back(t);
      } else if (t.rfind(kDefaultCategoryPrefix, 0) == 0) {
        category_terms.insert(t.substr(kDefaultCategoryPrefix.size()));
      } else {
        ++text_terms;
      }
    }
    std::set<std::string> slot_categories;
    for (const Category& category : decode_categories(doc.get_value(kDefaultCategorySlot))) {
      slot_categories.insert(category.name);
    }
    if (ids.size() != 1)
      check.problems.push_back(name + " has " + std::to_string(ids.size()) + " id terms");
    if (category_terms != slot_categories) {
      check.problems.push_back(name + ": category terms and value slot disagree");
    }
    if (text_terms == 0 || doc.get_data().empty()) {
      check.problems.push_back(name + " has no text terms or no data");
    }
  }
  return check;
}

class CliIndexSafetyTest : public testing::Test {
 protected:
  // Two models of the same data that analyze differently: training is the
  // slow part, so the suite shares them.
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    model_ = dir_->file("model");
    other_model_ = dir_->file("stemmed-model");
    train_errors_ = new std::string();
    for (const auto& [dir, extra] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {model_, {}}, {other_model_, {"--stemmer", "english"}}}) {
      std::vector<std::string> args = {"train", "--model", dir};
      args.insert(args.end(), extra.begin(), extra.end());
      args.push_back(test_data("fixture_train.jsonl"));
      const CliResult trained = run_autocat(args);
      if (trained.exit_code != 0) *train_errors_ += trained.err;
    }
  }
  static void TearDownTestSuite() {
    delete train_errors_;
    delete dir_;
    train_errors_ = nullptr;
    dir_ = nullptr;
  }
  void SetUp() override { ASSERT_EQ(*train_errors_, ""); }

  static CliResult index(const std::string& model, const std::string& db,
                         std::vector<std::string> extra = {},
                         const std::vector<std::string>& inputs = {
                             test_data("fixture_test.jsonl")}) {
    std::vector<std::string> args = {"index", "--model", model, "--db", db};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), inputs.begin(), inputs.end());
    return run_autocat(args);
  }

  static std::string metadata(const std::string& db, const std::string& key) {
    return Xapian::Database(db).get_metadata(key);
  }

  static TempDir* dir_;
  static std::string model_;
  static std::string other_model_;
  static std::string* train_errors_;
  TempDir scratch_;
};

TempDir* CliIndexSafetyTest::dir_ = nullptr;
std::string CliIndexSafetyTest::model_;
std::string CliIndexSafetyTest::other_model_;
std::string* CliIndexSafetyTest::train_errors_ = nullptr;

TEST_F(CliIndexSafetyTest, RefusesAnotherModelAndKeepsTheRecordedOne) {
  const std::string db = scratch_.file("db");
  ASSERT_EQ(index(model_, db).exit_code, 0);
  const std::string recorded = metadata(db, "autocat:model");
  const std::string fingerprint = metadata(db, "autocat:model_fingerprint");
  EXPECT_EQ(recorded, model_);
  // Size and CRC-32 of the model file.
  const std::string model_file = read_file(internal::resolve_model_dir(model_).model_file);
  char expected[64];
  std::snprintf(expected, sizeof(expected), "crc32:%08lx bytes:%zu",
                crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(model_file.data()),
                      static_cast<uInt>(model_file.size())),
                model_file.size());
  EXPECT_EQ(fingerprint, expected);

  const CliResult other = index(other_model_, db, {}, {test_data("fixture_tree")});
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_EQ(other.out, "");
  ASSERT_EQ(lines_of(other.err).size(), 1u) << other.err;
  EXPECT_EQ(other.err.rfind("autocat: " + db + ": ", 0), 0u) << other.err;
  EXPECT_TRUE(contains(other.err, model_)) << other.err;
  EXPECT_TRUE(contains(other.err, other_model_)) << other.err;
  EXPECT_TRUE(contains(other.err, "--switch-model")) << other.err;
  // Nothing changed: the same model, and only the first run's documents.
  EXPECT_EQ(metadata(db, "autocat:model"), recorded);
  EXPECT_EQ(metadata(db, "autocat:model_fingerprint"), fingerprint);
  EXPECT_EQ(Xapian::Database(db).get_doccount(), 9u);
}

TEST_F(CliIndexSafetyTest, RefusesAModelRetrainedInPlace) {
  const std::string model = scratch_.file("model");
  std::filesystem::copy(model_, model, std::filesystem::copy_options::recursive);
  const std::string db = scratch_.file("db");
  ASSERT_EQ(index(model, db).exit_code, 0);
  const CliResult retrained = run_autocat(
      {"train", "--model", model, "--stemmer", "english", test_data("fixture_train.jsonl")});
  ASSERT_EQ(retrained.exit_code, 0) << retrained.err;

  const CliResult again = index(model, db);
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_TRUE(contains(again.err, "the model " + model + " changed since")) << again.err;
}

TEST_F(CliIndexSafetyTest, AcceptsTheSameModelCopiedElsewhere) {
  const std::string copy = scratch_.file("copy");
  std::filesystem::copy(model_, copy, std::filesystem::copy_options::recursive);
  const std::string db = scratch_.file("db");
  ASSERT_EQ(index(model_, db).exit_code, 0);
  const CliResult again = index(copy, db, {}, {test_data("fixture_tree")});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.err, "");
  // The identity is the content: search now finds the model at its new path.
  EXPECT_EQ(metadata(db, "autocat:model"), copy);
  EXPECT_EQ(Xapian::Database(db).get_doccount(), 18u);
}

TEST_F(CliIndexSafetyTest, RefusesAnotherPrefixOrSlotAndDefaultsToTheRecordedOnes) {
  const std::string db = scratch_.file("db");
  ASSERT_EQ(index(model_, db, {"--prefix", "XTOPIC", "--slot", "7"}).exit_code, 0);

  for (const std::vector<std::string>& options :
       {std::vector<std::string>{"--prefix", "XC"}, std::vector<std::string>{"--slot", "200"}}) {
    const CliResult refused = index(model_, db, options, {test_data("fixture_tree")});
    EXPECT_EQ(refused.exit_code, 1) << options[0];
    EXPECT_TRUE(contains(refused.err, db + ": ")) << refused.err;
    EXPECT_TRUE(contains(refused.err, options[0] + " is " + options[1])) << refused.err;
  }
  EXPECT_EQ(metadata(db, "autocat:category_prefix"), "XTOPIC");
  EXPECT_EQ(metadata(db, "autocat:category_slot"), "7");

  // Without --prefix and --slot the database's own are used.
  const CliResult more = index(model_, db, {}, {test_data("fixture_tree")});
  ASSERT_EQ(more.exit_code, 0) << more.err;
  const Xapian::Database database(db);
  EXPECT_EQ(database.get_doccount(), 18u);
  EXPECT_EQ(database.get_termfreq("XTOPICsports"), 6u);
  EXPECT_EQ(database.get_termfreq("XCsports"), 0u);
}

TEST_F(CliIndexSafetyTest, SwitchModelRecordsTheNewModelAndSaysWhatHappens) {
  const std::string db = scratch_.file("db");
  ASSERT_EQ(index(model_, db).exit_code, 0);
  const CliResult switched =
      index(other_model_, db, {"--switch-model", "--prefix", "XT"}, {test_data("fixture_tree")});
  ASSERT_EQ(switched.exit_code, 0) << switched.err;
  ASSERT_EQ(lines_of(switched.err).size(), 1u) << switched.err;
  EXPECT_TRUE(contains(switched.err, "warning: " + db + ": --switch-model")) << switched.err;
  EXPECT_TRUE(contains(switched.err, "keep what the earlier model gave them")) << switched.err;
  EXPECT_EQ(metadata(db, "autocat:model"), other_model_);
  EXPECT_EQ(metadata(db, "autocat:category_prefix"), "XT");
  // From now on the new model is the recorded one.
  EXPECT_EQ(index(other_model_, db, {}, {test_data("fixture_tree")}).exit_code, 0);
}

TEST_F(CliIndexSafetyTest, RefusesADatabaseInsideAModelDirectory) {
  const std::string training = internal::resolve_model_dir(model_).training_db;
  const Xapian::doccount training_documents = Xapian::Database(training).get_doccount();
  const std::string inside_other = other_model_ + "/apps/db";
  for (const auto& [model, db] : std::vector<std::pair<std::string, std::string>>{
           {model_, training}, {model_, model_}, {model_, inside_other}}) {
    const CliResult refused = index(model, db);
    EXPECT_EQ(refused.exit_code, 2) << db;
    ASSERT_EQ(lines_of(refused.err).size(), 1u) << refused.err;
    EXPECT_TRUE(contains(refused.err, "--db " + db + " is ")) << refused.err;
    EXPECT_TRUE(
        contains(refused.err, "model directory " + (db == inside_other ? other_model_ : model_)))
        << refused.err;
  }
  EXPECT_EQ(Xapian::Database(training).get_doccount(), training_documents);
  EXPECT_EQ(Xapian::Database(training).get_metadata("autocat:model"), "");
  EXPECT_FALSE(std::filesystem::exists(other_model_ + "/apps"));
}

TEST_F(CliIndexSafetyTest, AMissingInputCreatesNoDatabase) {
  const std::string db = scratch_.file("db");
  const CliResult result = index(model_, db, {}, {scratch_.file("typo.jsonl")});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(contains(result.err, "typo.jsonl: no such file")) << result.err;
  EXPECT_FALSE(std::filesystem::exists(db));
}

TEST_F(CliIndexSafetyTest, ANewDatabaseHasTheUsualPermissions) {
  const std::string db = scratch_.file("db");
  ASSERT_EQ(index(model_, db).exit_code, 0);
  const mode_t mask = umask(0);
  umask(mask);
  struct stat status {};
  ASSERT_EQ(stat(db.c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 0777, 0777 & ~mask);
}

TEST_F(CliIndexSafetyTest, RefusesADirectoryThatIsNotADatabase) {
  const std::string dir = scratch_.file("notes");
  std::filesystem::create_directory(dir);
  write_file(dir + "/todo.txt", "buy milk\n");
  const CliResult result = index(model_, dir);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err, "autocat: " + dir +
                            ": is not a Xapian database (it holds other files); give --db a new "
                            "or empty directory, or a database written by autocat index\n");
  // Nothing was written into it.
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(names, std::vector<std::string>{"todo.txt"});

  // An empty directory becomes a database.
  const std::string empty = scratch_.file("empty");
  std::filesystem::create_directory(empty);
  const CliResult created = index(model_, empty);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_EQ(check_database(empty).documents, 9u);
}

// What Xapian leaves when killed while creating a database (as autocat
// index did before it created databases beside their place): no later run
// can open it, and the error says why and what to do.
TEST_F(CliIndexSafetyTest, ADatabaseWhoseCreationWasInterruptedIsExplained) {
  const std::string db = scratch_.file("db");
  std::filesystem::create_directory(db);
  for (const char* name : {"flintlock", "postlist.glass", "termlist.glass", "v.tmp"}) {
    write_file(db + "/" + name, "");
  }
  const CliResult result = index(model_, db);
  EXPECT_EQ(result.exit_code, 1);
  ASSERT_EQ(lines_of(result.err).size(), 1u) << result.err;
  EXPECT_EQ(result.err.rfind("autocat: " + db + ": cannot open the database: ", 0), 0u)
      << result.err;
  EXPECT_TRUE(contains(result.err,
                       "its creation was interrupted, so it holds no document: "
                       "remove it and run again"))
      << result.err;
}

TEST_F(CliIndexSafetyTest, AnErrorMidRunSaysWhatIsInTheDatabase) {
  const std::string db = scratch_.file("db");
  const std::string input = scratch_.file("docs.jsonl");
  const std::string good =
      "{\"id\": \"a\", \"text\": \"The striker scored in the match.\"}\n"
      "{\"id\": \"b\", \"text\": \"Bake the bread with butter.\"}\n"
      "{\"id\": \"c\", \"text\": \"The telescope found a comet.\"}\n";
  const std::string last = "{\"id\": \"e\", \"text\": \"The team won the final.\"}\n";
  write_file(input, good + "{\"id\": \"d\", \"text\": \n" + last);
  const CliResult failed = index(model_, db, {"--batch", "2"}, {input});
  EXPECT_EQ(failed.exit_code, 1);
  EXPECT_EQ(failed.out, "");
  ASSERT_EQ(lines_of(failed.err).size(), 1u) << failed.err;
  EXPECT_TRUE(contains(failed.err, input + ":4")) << failed.err;
  EXPECT_TRUE(contains(failed.err, db + " holds the 3 documents of this run")) << failed.err;
  EXPECT_TRUE(contains(failed.err, "run the same command again")) << failed.err;
  const DatabaseCheck check = check_database(db);
  EXPECT_EQ(check.documents, 3u);
  EXPECT_EQ(check.problems, std::vector<std::string>());

  // Fixed, the same command completes the database without duplicates.
  write_file(input, good + "{\"id\": \"d\", \"text\": \"Soup of the day.\"}\n" + last);
  const CliResult rerun = index(model_, db, {"--batch", "2", "--json"}, {input});
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  const internal::Json summary = json(lines_of(rerun.out).at(0));
  EXPECT_EQ(number_at(summary, "documents"), 5);
  EXPECT_EQ(number_at(summary, "replaced"), 3);
  EXPECT_EQ(number_at(summary, "db_documents"), 5);
}

TEST_F(CliIndexSafetyTest, SummaryCountsReplacedDocuments) {
  const std::string db = scratch_.file("db");
  const CliResult first = index(model_, db);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_FALSE(contains(first.out, "replaced")) << first.out;
  const CliResult second = index(model_, db, {}, corpus());
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_TRUE(contains(second.out, "\n9 documents replaced earlier ones with the same id\n"))
      << second.out;
  EXPECT_TRUE(contains(second.out, "now holds 42 documents")) << second.out;
}

// Everything Xapian stores of each document, by docid: a database written
// with several threads must be this, byte for byte, as with one.
std::vector<std::string> dump_documents(const std::string& path) {
  std::vector<std::string> dump;
  const Xapian::Database db(path);
  for (auto it = db.postlist_begin(""); it != db.postlist_end(""); ++it) {
    const Xapian::Document doc = db.get_document(*it);
    std::string text = "docid " + std::to_string(*it) + " data " + doc.get_data() + "\n";
    for (auto term = doc.termlist_begin(); term != doc.termlist_end(); ++term) {
      text += *term + " wdf " + std::to_string(term.get_wdf()) + " at";
      for (auto pos = term.positionlist_begin(); pos != term.positionlist_end(); ++pos) {
        text += ' ' + std::to_string(*pos);
      }
      text += '\n';
    }
    for (auto value = doc.values_begin(); value != doc.values_end(); ++value) {
      text += "value " + std::to_string(value.get_valueno()) + " " + *value + "\n";
    }
    dump.push_back(std::move(text));
  }
  return dump;
}

TEST_F(CliIndexSafetyTest, ThreadsWriteTheSameDatabaseAsOne) {
  // The corpus, then the test file again: its 9 ids are replaced, in order.
  std::vector<std::string> inputs = corpus();
  inputs.push_back(test_data("fixture_test.jsonl"));
  std::vector<std::vector<std::string>> dumps;
  for (const std::string threads : {"1", "4"}) {
    const std::string db = scratch_.file("db" + threads);
    const CliResult result = index(model_, db,
                                   {"--threads", threads, "--batch", "5", "--allow-duplicate-ids",
                                    "--method", "knn", "--json"},
                                   inputs);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const internal::Json summary = json(lines_of(result.out).at(0));
    EXPECT_EQ(number_at(summary, "documents"), kCorpusDocuments + 9);
    EXPECT_EQ(number_at(summary, "replaced"), 9);
    EXPECT_EQ(check_database(db).problems, std::vector<std::string>());
    dumps.push_back(dump_documents(db));
  }
  EXPECT_EQ(dumps[0].size(), kCorpusDocuments);
  EXPECT_EQ(dumps[0], dumps[1]);
}

TEST_F(CliIndexSafetyTest, EachDocumentRecordsTheModelThatCategorizedIt) {
  const std::string db = scratch_.file("db");
  ASSERT_EQ(index(model_, db).exit_code, 0);
  const std::string first_fingerprint = metadata(db, "autocat:model_fingerprint");
  ASSERT_EQ(index(other_model_, db, {"--switch-model"}, {test_data("fixture_tree")}).exit_code, 0);
  const std::string second_fingerprint = metadata(db, "autocat:model_fingerprint");
  ASSERT_NE(first_fingerprint, second_fingerprint);
  // "crc32:1a2b3c4d bytes:123" -> "XAUTOCATMODEL1a2b3c4d-123".
  auto term_of = [](const std::string& fingerprint) {
    const std::string crc = fingerprint.substr(fingerprint.find(':') + 1, 8);
    return "XAUTOCATMODEL" + crc + "-" + fingerprint.substr(fingerprint.rfind(':') + 1);
  };
  const Xapian::Database check(db);
  EXPECT_EQ(check.get_termfreq(term_of(first_fingerprint)), 9u);
  EXPECT_EQ(check.get_termfreq(term_of(second_fingerprint)), 9u);
  size_t model_terms = 0;
  for (auto it = check.allterms_begin("XAUTOCATMODEL"); it != check.allterms_end("XAUTOCATMODEL");
       ++it) {
    ++model_terms;
  }
  EXPECT_EQ(model_terms, 2u);

  // Without categories no model categorized the documents: no term.
  const std::string plain = scratch_.file("plain");
  ASSERT_EQ(index(model_, plain, {"--no-categories"}).exit_code, 0);
  const Xapian::Database uncategorized(plain);
  EXPECT_EQ(uncategorized.allterms_begin("XAUTOCATMODEL"),
            uncategorized.allterms_end("XAUTOCATMODEL"));
}

TEST_F(CliIndexSafetyTest, ProgressGoesToStderrAndLeavesJsonAlone) {
  // Not a terminal here: no progress unless asked.
  const CliResult plain = index(model_, scratch_.file("plain"), {"--json"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.err, "");

  const CliResult shown = index(model_, scratch_.file("shown"), {"--json", "--progress"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  ASSERT_EQ(lines_of(shown.out).size(), 1u) << shown.out;
  EXPECT_EQ(number_at(json(lines_of(shown.out).at(0)), "documents"), 9);
  ASSERT_FALSE(lines_of(shown.err).empty());
  EXPECT_EQ(lines_of(shown.err).back().rfind("indexed 9 documents (", 0), 0u) << shown.err;

  const CliResult quiet = index(model_, scratch_.file("quiet"), {"--quiet"});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
  EXPECT_EQ(index(model_, scratch_.file("both"), {"--quiet", "--progress"}).exit_code, 2);

  const CliResult trained = run_autocat({"train", "--model", scratch_.file("model"), "--json",
                                         "--progress", test_data("fixture_train.jsonl")});
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  EXPECT_EQ(number_at(json(lines_of(trained.out).at(0)), "documents"), 24);
  EXPECT_EQ(lines_of(trained.err).back().rfind("trained on 24 documents (", 0), 0u) << trained.err;
}

// The categories stored in each document of `db`, by id ("te-01 food").
std::vector<std::string> categories_by_id(const std::string& db_path) {
  std::vector<std::string> listing;
  const Xapian::Database db(db_path);
  for (auto it = db.postlist_begin(""); it != db.postlist_end(""); ++it) {
    const Xapian::Document doc = db.get_document(*it);
    std::string line;
    for (auto term = doc.termlist_begin(); term != doc.termlist_end(); ++term) {
      if ((*term).rfind(kIdPrefix, 0) == 0) line = (*term).substr(kIdPrefix.size()) + line;
      if ((*term).rfind(kDefaultCategoryPrefix, 0) == 0) {
        line += " " + (*term).substr(kDefaultCategoryPrefix.size());
      }
    }
    listing.push_back(line);
  }
  return listing;
}

// Every document's terms other than categories and the model term, with
// their positions, and its data: what search sees of it.
std::vector<std::string> search_side(const std::string& db_path) {
  std::vector<std::string> dump;
  for (std::string text : dump_documents(db_path)) {
    std::string kept;
    size_t start = 0;
    while (start < text.size()) {
      const size_t end = text.find('\n', start);
      const std::string line = text.substr(start, end - start);
      // The runner-up (slot 203) is the model's too.
      if (line.rfind(kDefaultCategoryPrefix, 0) != 0 && line.rfind("XAUTOCATMODEL", 0) != 0 &&
          line.rfind("value " + std::to_string(kDefaultCategorySlot) + " ", 0) != 0 &&
          line.rfind("value " + std::to_string(kDefaultRunnerUpSlot) + " ", 0) != 0) {
        kept += line + '\n';
      }
      start = end + 1;
    }
    dump.push_back(kept);
  }
  return dump;
}

// The first entry of "databases" in recategorize --json output.
internal::Json first_database(const std::string& out) {
  const internal::Json summary = json(lines_of(out).at(0));
  const internal::Json* databases = testing_util::member(summary, "databases");
  if (databases == nullptr || !databases->is_array() || databases->empty()) {
    ADD_FAILURE() << "no databases in " << out;
    return internal::Json::object();
  }
  return databases->front();
}

// The count `key` of a {"name": count} object; 0 when absent.
uint64_t count_at(const internal::Json& counts, const std::string& key) {
  const internal::Json* value = testing_util::member(counts, key);
  return value != nullptr && value->is_number() ? value->get<uint64_t>() : 0;
}

TEST_F(CliIndexSafetyTest, RecategorizeReplacesOnlyTheCategoriesAndResumes) {
  // Model B: the same documents, labels renamed, so its categories differ.
  std::string relabelled = read_file(test_data("fixture_train.jsonl"));
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"[\"food\"]", "[\"cooking\"]"}, {"[\"sports\"]", "[\"games\"]"}}) {
    for (size_t at = relabelled.find(from); at != std::string::npos; at = relabelled.find(from)) {
      relabelled.replace(at, from.size(), to);
    }
  }
  const std::string train_b = scratch_.file("b.jsonl");
  write_file(train_b, relabelled);
  const std::string model_b = scratch_.file("model-b");
  ASSERT_EQ(run_autocat({"train", "--model", model_b, train_b}).exit_code, 0);

  const std::string db = scratch_.file("db");
  ASSERT_EQ(index(model_, db, {"--store-text"}, corpus()).exit_code, 0);
  const std::vector<std::string> before = categories_by_id(db);
  const std::vector<std::string> search_before = search_side(db);
  // What B gives, indexed from scratch.
  const std::string fresh = scratch_.file("fresh");
  ASSERT_EQ(index(model_b, fresh, {}, corpus()).exit_code, 0);
  const std::vector<std::string> expected = categories_by_id(fresh);
  ASSERT_NE(before, expected);

  // Stopped after 10 documents (as if interrupted), then resumed.
  const CliResult first = run_autocat({"recategorize", "--model", model_b, "--db", db, "--limit",
                                       "10", "--batch", "4", "--threads", "3", "--json"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const internal::Json first_db = first_database(first.out);
  EXPECT_EQ(number_at(first_db, "recategorized"), 10);
  EXPECT_EQ(number_at(first_db, "left_by_limit"), kCorpusDocuments - 10);
  const CliResult rest =
      run_autocat({"recategorize", "--model", model_b, "--db", db, "--json", "--progress"});
  ASSERT_EQ(rest.exit_code, 0) << rest.err;
  const internal::Json rest_db = first_database(rest.out);
  EXPECT_EQ(number_at(rest_db, "already"), 10);
  EXPECT_EQ(number_at(rest_db, "recategorized"), kCorpusDocuments - 10);
  EXPECT_TRUE(contains(rest.err, "recategorized 42 documents")) << rest.err;

  EXPECT_EQ(categories_by_id(db), expected);
  EXPECT_EQ(search_side(db), search_before);
  // What changed, by document and category: B renamed food and sports.
  uint64_t changed = 0;
  std::map<std::string, uint64_t> old_counts;
  for (size_t i = 0; i < before.size(); ++i) {
    changed += before[i] != expected[i];
    std::istringstream words(before[i]);
    std::string word;
    words >> word;  // the id
    while (words >> word) ++old_counts[word];
  }
  ASSERT_GT(changed, 0u);
  EXPECT_EQ(number_at(first_db, "changed") + number_at(rest_db, "changed"),
            static_cast<double>(changed));
  EXPECT_EQ(first_db["changed_ids"].size() + rest_db["changed_ids"].size(), changed);
  for (const char* renamed : {"food", "sports"}) {
    EXPECT_EQ(count_at(first_db["lost"], renamed) + count_at(rest_db["lost"], renamed),
              old_counts[renamed])
        << renamed;
  }
  EXPECT_GT(count_at(rest_db["gained"], "cooking"), 0u);
  EXPECT_FALSE(rest_db["gained"].contains("food"));
  EXPECT_EQ(check_database(db).problems, std::vector<std::string>());
  // DB now records B, so indexing more with B needs no --switch-model.
  EXPECT_EQ(index(model_b, db, {"--store-text"}).exit_code, 0);

  // Without stored text there is nothing to categorize: refused, named.
  const std::string plain = scratch_.file("plain");
  ASSERT_EQ(index(model_, plain).exit_code, 0);
  const CliResult refused = run_autocat({"recategorize", "--model", model_b, "--db", plain});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_TRUE(contains(refused.err, plain + ": the documents' text is not stored")) << refused.err;
  EXPECT_TRUE(contains(refused.err, "--store-text")) << refused.err;
}

TEST_F(CliIndexSafetyTest, IndexingNothingWarns) {
  const std::string db = scratch_.file("db");
  const CliResult result = index(model_, db, {"--split", "tset"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.err,
            "autocat: warning: no document indexed: no input record has \"split\": \"tset\"\n");
  EXPECT_TRUE(contains(result.out, "indexed 0 documents")) << result.out;
}

// Kills `autocat index` at random points of its run, half of them around
// the creation of the database: a database that exists opens and holds only
// complete documents, and the same command, run again to the end, completes
// it without duplicates.
TEST_F(CliIndexSafetyTest, KilledIndexLeavesCompleteDocumentsAndRerunCompletes) {
  const std::string db = scratch_.file("db");
  std::vector<std::string> args = {"index", "--model", model_, "--db", db, "--batch", "4"};
  for (const std::string& input : corpus()) args.push_back(input);
  const std::string out = scratch_.file("out"), err = scratch_.file("err");
  using Micros = std::chrono::microseconds;

  // Uninterrupted runs set the time scale: when the database appears, and
  // when the run ends. The first run warms the caches; the faster of two
  // is kept, since a kill scheduled after a run's end tests nothing.
  int64_t creation = std::numeric_limits<int64_t>::max();
  int64_t full_run = std::numeric_limits<int64_t>::max();
  for (int warm = 0; warm < 2; ++warm) {
    std::filesystem::remove_all(db);
    const Clock::time_point start = Clock::now();
    const pid_t pid = spawn_autocat(args, out, err);
    ASSERT_GT(pid, 0);
    while (!std::filesystem::exists(db) && Clock::now() - start < std::chrono::seconds(30)) {
      std::this_thread::sleep_for(Micros(200));
    }
    creation = std::min<int64_t>(creation,
                                 std::chrono::duration_cast<Micros>(Clock::now() - start).count());
    ASSERT_EQ(wait_for(pid), 0) << read_file(err);
    full_run = std::min<int64_t>(full_run,
                                 std::chrono::duration_cast<Micros>(Clock::now() - start).count());
  }

  // Until kTrials runs were really killed: a run that ends before its kill
  // (the machine got faster, e.g. a parallel test finished) shrinks the
  // time scale for the next trial rather than counting as a kill.
  std::mt19937 random(20261123);
  const int kTrials = 6, kMaxAttempts = 4 * kTrials;
  int killed = 0, partial = 0, attempts = 0;
  for (int trial = 0; killed < kTrials && attempts < kMaxAttempts; ++attempts) {
    std::filesystem::remove_all(db);
    const int64_t when = trial % 2 == 0
                             ? std::uniform_int_distribution<int64_t>(0, full_run)(random)
                             : std::uniform_int_distribution<int64_t>(
                                   std::max<int64_t>(0, creation - 3000), creation + 3000)(random);
    const Clock::time_point start = Clock::now();
    const pid_t pid = spawn_autocat(args, out, err);
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_until(start + Micros(when));
    kill(pid, SIGKILL);
    const int code = wait_for(pid);
    ASSERT_TRUE(code == 0 || code == 128 + SIGKILL) << code << ": " << read_file(err);
    if (code == 0) {
      full_run = full_run * 3 / 4;
      creation = creation * 3 / 4;
      continue;
    }
    ++killed;
    if (std::filesystem::exists(db)) {
      const DatabaseCheck check = check_database(db);
      EXPECT_EQ(check.problems, std::vector<std::string>()) << "trial " << trial;
      EXPECT_EQ(check.documents, check.distinct_ids) << "trial " << trial;
      EXPECT_LE(check.documents, kCorpusDocuments) << "trial " << trial;
      if (check.documents < kCorpusDocuments) ++partial;
    }

    ASSERT_EQ(wait_for(spawn_autocat(args, out, err)), 0)
        << "trial " << trial << ": " << read_file(err);
    const DatabaseCheck check = check_database(db);
    EXPECT_EQ(check.problems, std::vector<std::string>()) << "trial " << trial;
    EXPECT_EQ(check.documents, kCorpusDocuments) << "trial " << trial;
    EXPECT_EQ(check.distinct_ids, kCorpusDocuments) << "trial " << trial;
    EXPECT_EQ(metadata(db, "autocat:model"), model_);
    ++trial;
  }
  EXPECT_EQ(killed, kTrials) << "after " << attempts << " runs";
  std::cerr << "killed " << killed << " of " << attempts << " runs, " << partial
            << " left a partial database\n";
  // Nothing is left beside the database: the re-runs removed what the
  // killed runs were creating.
  for (const auto& entry : std::filesystem::directory_iterator(scratch_.file(""))) {
    EXPECT_EQ(entry.path().filename().string().find(".autocat-new-"), std::string::npos)
        << entry.path();
  }
}

// Two `autocat index` into one database at once: the second fails at once,
// naming the database, and the first completes its documents.
TEST_F(CliIndexSafetyTest, ASecondWriterFailsAtOnceWithALockedMessage) {
  const std::string db = scratch_.file("db");
  // The first run reads a FIFO after opening the database: opening the
  // FIFO's other end proves it holds the database's lock.
  const std::string fifo = scratch_.file("incoming.jsonl");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string out = scratch_.file("out"), err = scratch_.file("err");
  const pid_t first = spawn_autocat(
      {"index", "--model", model_, "--db", db, fifo, test_data("fixture_tree")}, out, err);
  ASSERT_GT(first, 0);
  int writer = -1;
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(60);
  while (writer < 0 && Clock::now() < give_up) {
    writer = open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // fails until the reader opened it
    if (writer < 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (writer < 0) kill(first, SIGKILL);
  ASSERT_GE(writer, 0) << "the first run never read its input: " << read_file(err);

  const Clock::time_point second_start = Clock::now();
  const CliResult second = index(model_, db, {}, {test_data("fixture_test.jsonl")});
  const double second_seconds = std::chrono::duration<double>(Clock::now() - second_start).count();
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_EQ(second.err, "autocat: " + db +
                            ": database is locked by another writer; wait for it to finish or "
                            "close it\n");
  EXPECT_LT(second_seconds, 10.0);

  const std::string records =
      "{\"id\": \"late-1\", \"text\": \"The striker scored in the match.\"}\n"
      "{\"id\": \"late-2\", \"text\": \"Bake the bread with butter.\"}\n";
  ASSERT_EQ(write(writer, records.data(), records.size()), static_cast<ssize_t>(records.size()));
  close(writer);
  ASSERT_EQ(wait_for(first), 0) << read_file(err);
  const DatabaseCheck check = check_database(db);
  EXPECT_EQ(check.problems, std::vector<std::string>());
  EXPECT_EQ(check.documents, 11u);
  EXPECT_EQ(check.distinct_ids, 11u);
}

}  // namespace
}  // namespace autocat
