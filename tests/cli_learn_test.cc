// autocat learn / forget, and train --add as a refit that folds them in.
#include <gtest/gtest.h>
#include <xapian.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "autocat/facets.h"
#include "tests/cli_test_util.h"

namespace autocat {
namespace {

using testing_util::CliResult;
using testing_util::json;
using testing_util::run_autocat;
using testing_util::TempDir;
using testing_util::write_file;

const std::string kTrain = std::string(AUTOCAT_SOURCE_DIR) + "/examples/data/train.jsonl";
const char kComet[] =
    "Observers report the comet has reached naked-eye brightness; its tail stretches across "
    "the sky before sunrise.";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class CliLearnTest : public testing::Test {
 protected:
  void SetUp() override {
    model_ = dir_.file("model");
    ASSERT_EQ(run_autocat({"train", "--model", model_, "--quiet", kTrain}).exit_code, 0);
    write_file(dir_.file("comet.txt"), kComet);
  }
  // The kNN (k = 1) category of the comet text.
  std::string comet_category() {
    const CliResult result = run_autocat(
        {"classify", "--model", model_, "--method", "knn", "--k", "1", dir_.file("comet.txt")});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    const size_t tab = result.out.find('\t');
    const size_t space = result.out.find(' ', tab);
    return tab == std::string::npos ? "" : result.out.substr(tab + 1, space - tab - 1);
  }
  std::string jsonl(const std::string& name, const std::string& lines) {
    write_file(dir_.file(name), lines);
    return dir_.file(name);
  }

  TempDir dir_;
  std::string model_;
};

TEST_F(CliLearnTest, LearnForgetAndRefit) {
  ASSERT_EQ(comet_category(), "astronomy");
  const std::string input = jsonl(
      "learn.jsonl", std::string("{\"id\": \"live-1\", \"labels\": [\"cooking\"], \"text\": \"") +
                         kComet + "\"}\n");
  const CliResult learned = run_autocat({"learn", "--model", model_, "--json", input});
  ASSERT_EQ(learned.exit_code, 0) << learned.err;
  const internal::Json summary = json(learned.out);
  EXPECT_EQ(testing_util::number_at(summary, "learned"), 1);
  EXPECT_EQ(comet_category(), "cooking");  // another process replays the journal

  const CliResult text = run_autocat({"forget", "--model", model_, "live-1"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(contains(text.out, "forgot 1 document of model")) << text.out;
  EXPECT_EQ(comet_category(), "astronomy");

  ASSERT_EQ(run_autocat({"learn", "--model", model_, input}).exit_code, 0);
  const CliResult refit = run_autocat({"train", "--model", model_, "--add", "--json"});
  ASSERT_EQ(refit.exit_code, 0) << refit.err;
  const internal::Json report = json(refit.out);
  EXPECT_EQ(testing_util::number_at(report, "journal_learned"), 2);
  EXPECT_EQ(testing_util::number_at(report, "journal_forgotten"), 1);
  EXPECT_EQ(testing_util::number_at(report, "documents"), 113);
  EXPECT_EQ(comet_category(), "cooking");
  // The new generation starts with an empty journal: nothing left to refit.
  const CliResult again = run_autocat({"train", "--model", model_, "--add"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_TRUE(contains(again.err, "nothing to refit")) << again.err;
}

// A journal damaged in its middle: every command refuses it (saying so
// truly), `journal salvage` keeps the batches on both sides, keeps the
// damaged file aside and reports the bytes lost; the model opens again.
TEST_F(CliLearnTest, JournalSalvageKeepsTheRecordsAroundTheDamage) {
  for (const std::string id : {"s-1", "s-2", "s-3"}) {
    const std::string input =
        jsonl(id + ".jsonl", "{\"id\": \"" + id + "\", \"labels\": [\"cooking\"], \"text\": \"" +
                                 kComet + "\"}\n");
    ASSERT_EQ(run_autocat({"learn", "--model", model_, input}).exit_code, 0);
  }
  std::string journal;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(model_)) {
    if (entry.path().filename() == "journal") journal = entry.path().string();
  }
  std::string bytes = testing_util::read_file(journal);
  bytes[bytes.size() / 2] ^= 0x40;  // the second learn's batch
  write_file(journal, bytes);
  const CliResult refused = run_autocat({"classify", "--model", model_, dir_.file("comet.txt")});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_TRUE(contains(refused.err, "journal salvage")) << refused.err;

  const CliResult salvaged = run_autocat({"journal", "salvage", "--model", model_, "--json"});
  ASSERT_EQ(salvaged.exit_code, 0) << salvaged.err;
  const internal::Json report = json(salvaged.out);
  EXPECT_EQ(testing_util::number_at(report, "records"), 2);
  const internal::Json* lost = testing_util::member(report, "lost");
  ASSERT_TRUE(lost != nullptr && lost->is_array() && lost->size() == 1U) << salvaged.out;
  EXPECT_EQ(testing_util::read_file(testing_util::string_at(report, "kept_aside")), bytes);
  EXPECT_EQ(comet_category(), "cooking");
  const CliResult again = run_autocat({"journal", "salvage", "--model", model_});
  EXPECT_TRUE(contains(again.out, "no damage (2 records)")) << again.out;
}

TEST_F(CliLearnTest, BadInputNamesTheDocumentAndLearnsNothing) {
  const std::string input = jsonl(
      "bad.jsonl", std::string("{\"id\": \"ok\", \"labels\": [\"cooking\"], \"text\": \"") +
                       kComet + "\"}\n{\"id\": \"new\", \"labels\": [\"gardening\"], \"text\": \"" +
                       kComet + "\"}\n");
  const CliResult unknown = run_autocat({"learn", "--model", model_, input});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_TRUE(contains(unknown.err, "bad.jsonl:2")) << unknown.err;
  EXPECT_TRUE(contains(unknown.err, "'gardening'")) << unknown.err;
  EXPECT_TRUE(contains(unknown.err, "train --add")) << unknown.err;
  const std::string unlabelled =
      jsonl("none.jsonl", std::string("{\"id\": \"u\", \"text\": \"") + kComet + "\"}\n");
  const CliResult none = run_autocat({"learn", "--model", model_, unlabelled});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_TRUE(contains(none.err, "none.jsonl:1")) << none.err;
  EXPECT_TRUE(contains(none.err, "no labels")) << none.err;
  EXPECT_EQ(comet_category(), "astronomy");
  // No journal was even created.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(model_)) {
    EXPECT_NE(entry.path().filename(), "journal");
  }

  const CliResult forget = run_autocat({"forget", "--model", model_, "astro-01", "no-such-id"});
  EXPECT_EQ(forget.exit_code, 1);
  EXPECT_TRUE(contains(forget.err, "'no-such-id'")) << forget.err;
  const CliResult missing = run_autocat({"learn", "--model", dir_.file("nowhere"), input});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(contains(missing.err, "nowhere")) << missing.err;

  EXPECT_EQ(run_autocat({"learn", "--model", model_}).exit_code, 2);
  EXPECT_EQ(run_autocat({"forget", "--model", model_}).exit_code, 2);
  EXPECT_EQ(run_autocat({"learn", "--model", model_, "--from-db", dir_.file("db"), "x"}).exit_code,
            2);
  EXPECT_EQ(run_autocat({"learn", "--model", model_, "--ids", "x"}).exit_code, 2);
}

// A learn killed in the middle of its journal append (SIGKILL between the
// two halves of the write) leaves a torn record: the model still opens
// without it, and the next learn cuts it off, says so and appends after it.
TEST_F(CliLearnTest, KilledMidAppendLeavesATornRecordTheNextLearnCutsOff) {
  const std::string input = jsonl(
      "learn.jsonl", std::string("{\"id\": \"live-1\", \"labels\": [\"cooking\"], \"text\": \"") +
                         kComet + "\"}\n");
  ::setenv("AUTOCAT_CRASH_AT", "journal-half-written", 1);
  const CliResult killed = run_autocat({"learn", "--model", model_, input});
  ::unsetenv("AUTOCAT_CRASH_AT");
  EXPECT_EQ(killed.exit_code, 128 + 9) << killed.err;
  EXPECT_EQ(comet_category(), "astronomy");  // opens, without the torn record

  const CliResult learned = run_autocat({"learn", "--model", model_, input});
  ASSERT_EQ(learned.exit_code, 0) << learned.err;
  EXPECT_TRUE(contains(learned.err, "torn")) << learned.err;
  EXPECT_EQ(comet_category(), "cooking");
  // The lock died with the killed process: a refit takes it and folds one document.
  const CliResult refit = run_autocat({"train", "--model", model_, "--add", "--json"});
  ASSERT_EQ(refit.exit_code, 0) << refit.err;
  EXPECT_EQ(testing_util::number_at(json(refit.out), "journal_learned"), 1);
}

// A forget of 40 ids killed halfway through its journal append: none of
// them is forgotten (the run's records count only with its commit), and
// running the same forget again succeeds.
TEST_F(CliLearnTest, KilledMidForgetForgetsNothingAndTheRerunSucceeds) {
  std::string lines;
  std::vector<std::string> forget = {"forget", "--model", model_};
  for (int i = 0; i < 40; ++i) {
    const std::string id = "live-" + std::to_string(i);
    lines += "{\"id\": \"" + id + "\", \"labels\": [\"cooking\"], \"text\": \"Stir the risotto " +
             std::to_string(i) + " times.\"}\n";
    forget.push_back(id);
  }
  const CliResult learned = run_autocat({"learn", "--model", model_, jsonl("learn.jsonl", lines)});
  ASSERT_EQ(learned.exit_code, 0) << learned.err;

  ::setenv("AUTOCAT_CRASH_AT", "journal-half-written", 1);
  const CliResult killed = run_autocat(forget);
  ::unsetenv("AUTOCAT_CRASH_AT");
  EXPECT_EQ(killed.exit_code, 128 + 9) << killed.err;
  const CliResult again = run_autocat(forget);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(contains(again.err, "torn")) << again.err;
  const CliResult refit = run_autocat({"train", "--model", model_, "--add", "--json"});
  ASSERT_EQ(refit.exit_code, 0) << refit.err;
  EXPECT_EQ(testing_util::number_at(json(refit.out), "journal_learned"), 40);
  EXPECT_EQ(testing_util::number_at(json(refit.out), "journal_forgotten"), 40);
}

// Every command reading a model reports the journal's warnings on stderr,
// once: here a torn tail.
TEST_F(CliLearnTest, ReadersReportATornJournalTailOnce) {
  const std::string input = jsonl(
      "learn.jsonl", std::string("{\"id\": \"live-1\", \"labels\": [\"cooking\"], \"text\": \"") +
                         kComet + "\"}\n");
  ASSERT_EQ(run_autocat({"learn", "--model", model_, input}).exit_code, 0);
  std::string journal;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(model_)) {
    if (entry.path().filename() == "journal") journal = entry.path().string();
  }
  ASSERT_FALSE(journal.empty());
  // A crash after 4 bytes of the next append's first header.
  write_file(journal, testing_util::read_file(journal) + "torn");
  const std::string two =
      jsonl("two.jsonl", std::string("{\"id\": \"a\", \"text\": \"") + kComet +
                             "\"}\n{\"id\": \"b\", \"text\": \"" + kComet + "\"}\n");
  const std::string labelled = jsonl(
      "labelled.jsonl",
      std::string("{\"id\": \"a\", \"labels\": [\"astronomy\"], \"text\": \"") + kComet + "\"}\n");
  const std::vector<std::vector<std::string>> readers = {
      {"classify", "--model", model_, "--method", "knn", two},
      {"classify", "--model", model_, "--method", "nb", two},
      {"explain", "--model", model_, two},
      {"eval", "--model", model_, labelled},
      {"index", "--model", model_, "--db", dir_.file("db"), two},
  };
  for (const std::vector<std::string>& reader : readers) {
    const CliResult result = run_autocat(reader);
    EXPECT_EQ(result.exit_code, 0) << reader[0] << ": " << result.err;
    const std::string warning = journal + ": ignored a torn tail";
    const size_t first = result.err.find(warning);
    EXPECT_NE(first, std::string::npos) << reader[0] << ": " << result.err;
    EXPECT_EQ(result.err.find(warning, first + 1), std::string::npos)
        << reader[0] << ": " << result.err;
  }
}

// A node that only classifies (no training database) cannot replay the
// journal: each reader says so once, per method family, on stderr.
TEST_F(CliLearnTest, ClassifyOnlyNodeWarnsThatTheJournalIsNotApplied) {
  const std::string input = jsonl(
      "learn.jsonl", std::string("{\"id\": \"live-1\", \"labels\": [\"cooking\"], \"text\": \"") +
                         kComet + "\"}\n");
  ASSERT_EQ(run_autocat({"learn", "--model", model_, input}).exit_code, 0);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(model_)) {
    if (entry.path().filename() == "training") {
      std::filesystem::remove_all(entry.path());
      break;
    }
  }
  for (const char* method : {"knn", "nb"}) {
    const CliResult result =
        run_autocat({"classify", "--model", model_, "--method", method, dir_.file("comet.txt")});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    const std::string warning = "without the journal's documents";
    const size_t first = result.err.find(warning);
    EXPECT_NE(first, std::string::npos) << method << ": " << result.err;
    EXPECT_EQ(result.err.find(warning, first + 1), std::string::npos)
        << method << ": " << result.err;
  }
}

TEST_F(CliLearnTest, FromDbLearnsAnEditorsCorrection) {
  // The application indexed the comet text; an editor moved it to cooking.
  const std::string db = dir_.file("db");
  const std::string docs =
      jsonl("docs.jsonl", std::string("{\"id\": \"doc-1\", \"text\": \"") + kComet + "\"}\n" +
                              "{\"id\": \"doc-2\", \"text\": \"Stir the risotto slowly.\"}\n");
  ASSERT_EQ(run_autocat({"index", "--model", model_, "--db", db, "--store-text", docs}).exit_code,
            0);
  {
    Xapian::WritableDatabase writable(db, Xapian::DB_OPEN);
    const Xapian::docid id = *writable.postlist_begin("Qdoc-1");
    Xapian::Document doc = writable.get_document(id);
    ASSERT_NO_THROW(doc.remove_term(category_term("astronomy")));
    doc.add_boolean_term(category_term("cooking"));
    writable.replace_document(id, doc);
    writable.commit();
  }
  // Categories no editor marked are the model's own: not taught by default.
  const CliResult unmarked =
      run_autocat({"learn", "--model", model_, "--from-db", db, "--ids", "doc-1"});
  EXPECT_EQ(unmarked.exit_code, 1);
  EXPECT_TRUE(contains(unmarked.err, "document 'doc-1' was not labelled by an editor"))
      << unmarked.err;
  EXPECT_EQ(comet_category(), "astronomy");
  {
    Xapian::WritableDatabase writable(db, Xapian::DB_OPEN);
    const Xapian::docid id = *writable.postlist_begin("Qdoc-1");
    Xapian::Document doc = writable.get_document(id);
    doc.add_boolean_term("XAUTOCATEDITED");
    writable.replace_document(id, doc);
    writable.commit();
  }
  const CliResult unknown =
      run_autocat({"learn", "--model", model_, "--from-db", db, "--ids", "doc-1", "doc-9"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_TRUE(contains(unknown.err, db)) << unknown.err;
  EXPECT_TRUE(contains(unknown.err, "'doc-9'")) << unknown.err;
  EXPECT_EQ(comet_category(), "astronomy");

  const CliResult learned = run_autocat(
      {"learn", "--model", model_, "--from-db", db, "--ids", "doc-1", "doc-2", "--json"});
  ASSERT_EQ(learned.exit_code, 0) << learned.err;
  EXPECT_EQ(testing_util::number_at(json(learned.out), "learned"), 1);
  EXPECT_TRUE(contains(learned.err, "document 'doc-2' skipped: not labelled by an editor"))
      << learned.err;
  EXPECT_EQ(comet_category(), "cooking");
}

// A label that is not UTF-8 is refused as in train, naming the line.
TEST_F(CliLearnTest, LabelThatIsNotUtf8IsRefused) {
  const std::string input =
      jsonl("bytes.jsonl",
            "{\"id\": \"live-1\", \"labels\": [\"cooking\"], \"text\": \"soup\"}\n"
            "{\"id\": \"live-2\", \"labels\": [\"cook\xE9\"], \"text\": \"stew\"}\n");
  const CliResult refused = run_autocat({"learn", "--model", model_, input});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_TRUE(contains(refused.err, input + ":2: label \"cook\\xe9\" is not valid UTF-8"))
      << refused.err;
  EXPECT_EQ(refused.err.find('\n'), refused.err.size() - 1) << refused.err;
}

// Without --store-text, autocat index keeps only the title or the first 200
// bytes of a text as data: learn refuses to learn that snippet in place of
// the document unless told where the text is to come from.
TEST_F(CliLearnTest, FromDbWithoutStoredTextRefusesTheSnippet) {
  const std::string db = dir_.file("db");
  std::string long_text = kComet;
  while (long_text.size() < 600) long_text += std::string(" ") + kComet;
  const std::string docs =
      jsonl("docs.jsonl", "{\"id\": \"doc-1\", \"text\": \"" + long_text + "\"}\n");
  ASSERT_EQ(run_autocat({"index", "--model", model_, "--db", db, docs}).exit_code, 0);
  {
    Xapian::WritableDatabase writable(db, Xapian::DB_OPEN);
    const Xapian::docid id = *writable.postlist_begin("Qdoc-1");
    Xapian::Document doc = writable.get_document(id);
    ASSERT_NO_THROW(doc.remove_term(category_term("astronomy")));
    doc.add_boolean_term(category_term("cooking"));
    doc.add_boolean_term("XAUTOCATEDITED");
    writable.replace_document(id, doc);
    writable.commit();
  }
  const CliResult refused =
      run_autocat({"learn", "--model", model_, "--from-db", db, "--ids", "doc-1"});
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_EQ(refused.err.find('\n'), refused.err.size() - 1) << refused.err;  // one line
  EXPECT_TRUE(contains(refused.err, db + ": indexed without --store-text")) << refused.err;
  EXPECT_TRUE(contains(refused.err, "--text-from terms")) << refused.err;
  EXPECT_EQ(comet_category(), "astronomy");  // nothing learned

  const CliResult learned = run_autocat(
      {"learn", "--model", model_, "--from-db", db, "--ids", "doc-1", "--text-from", "terms"});
  ASSERT_EQ(learned.exit_code, 0) << learned.err;
  EXPECT_EQ(comet_category(), "cooking");
  EXPECT_EQ(run_autocat({"learn", "--model", model_, "--from-db", db, "--ids", "doc-1",
                         "--text-from", "data"})
                .exit_code,
            0);
  EXPECT_EQ(run_autocat({"learn", "--model", model_, "--from-db", db, "--ids", "doc-1",
                         "--text-from", "bogus"})
                .exit_code,
            2);
}

// The boolean member `key` of `object` (false if absent).
bool bool_at(const internal::Json& object, const std::string& key) {
  const internal::Json* value = testing_util::member(object, key);
  return value != nullptr && value->is_boolean() && value->get<bool>();
}

// train --add keeps the model's cross-validated settings and says so;
// --retune cross-validates again.
TEST_F(CliLearnTest, AddKeepsTheSettingsAndRetuneCrossValidates) {
  const CliResult trained =
      run_autocat({"train", "--model", dir_.file("other"), "--quiet", "--json", kTrain});
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  EXPECT_EQ(testing_util::number_at(json(trained.out), "cross_validations"), 1);
  EXPECT_FALSE(bool_at(json(trained.out), "settings_kept"));

  const std::string input = jsonl(
      "learn.jsonl", std::string("{\"id\": \"live-1\", \"labels\": [\"cooking\"], \"text\": \"") +
                         kComet + "\"}\n");
  const CliResult learned = run_autocat({"learn", "--model", model_, input});
  ASSERT_EQ(learned.exit_code, 0) << learned.err;
  EXPECT_TRUE(contains(learned.out, "learned 1 document into model")) << learned.out;
  const CliResult kept = run_autocat({"train", "--model", model_, "--add", "--json"});
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  const internal::Json report = json(kept.out);
  EXPECT_TRUE(bool_at(report, "settings_kept"));
  EXPECT_EQ(testing_util::number_at(report, "cross_validations"), 0);
  EXPECT_EQ(testing_util::string_at(report, "retune_reason"), "");
  EXPECT_EQ(testing_util::number_at(report, "tuned_on_documents"), 0);
  // The stored choices are reported as they were.
  const internal::Json first = json(trained.out);
  for (const char* key : {"knn_k", "rocchio_gamma", "svm_c", "logreg_c", "knn_similarity_power"}) {
    EXPECT_EQ(testing_util::number_at(report, key), testing_util::number_at(first, key)) << key;
  }
  EXPECT_EQ(testing_util::string_at(report, "default_method"),
            testing_util::string_at(first, "default_method"));
  EXPECT_EQ(comet_category(), "cooking");

  ASSERT_EQ(run_autocat({"forget", "--model", model_, "live-1"}).exit_code, 0);
  const CliResult human = run_autocat({"train", "--model", model_, "--add", "--progress"});
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_TRUE(contains(human.out, "kept from the model (no cross-validation")) << human.out;
  // Progress names the phases and counts the collection trained on, not
  // the documents this run read (none).
  EXPECT_TRUE(contains(human.err, "fold journal: 1 document in ")) << human.err;
  EXPECT_TRUE(contains(human.err, "keep settings: ")) << human.err;
  EXPECT_FALSE(contains(human.err, "cross-validate")) << human.err;
  EXPECT_TRUE(contains(human.err, "trained on 112 documents (")) << human.err;

  ASSERT_EQ(run_autocat({"learn", "--model", model_, input}).exit_code, 0);
  const CliResult retuned =
      run_autocat({"train", "--model", model_, "--add", "--retune", "--json"});
  ASSERT_EQ(retuned.exit_code, 0) << retuned.err;
  EXPECT_FALSE(bool_at(json(retuned.out), "settings_kept"));
  EXPECT_EQ(testing_util::number_at(json(retuned.out), "cross_validations"), 1);
  EXPECT_EQ(testing_util::number_at(json(retuned.out), "tuned_on_documents"), 113);

  const CliResult alone = run_autocat({"train", "--model", model_, "--retune", kTrain});
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_TRUE(contains(alone.err, "--retune goes with --add")) << alone.err;
}

}  // namespace
}  // namespace autocat
