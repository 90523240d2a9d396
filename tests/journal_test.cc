// The live-learning journal (classify/journal.h): round trip, a torn last
// record ignored and cut off, damage refused, appends under the lock.
#include "classify/journal.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "autocat/error.h"
#include "classify/model_dir.h"
#include "test_util.h"

namespace autocat::internal {
namespace {

using testing_util::read_file;
using testing_util::TempDir;
using testing_util::write_file;

class JournalTest : public testing::Test {
 protected:
  void SetUp() override {
    // A directory that looks like an installed model generation.
    std::filesystem::create_directories(dir_.file("m/gen-000001"));
    write_file(dir_.file("m/CURRENT"), "gen-000001\n");
    write_file(dir_.file("m/gen-000001/model.autocat"), "x");
    paths_ = resolve_model_dir(dir_.file("m"));
  }
  JournalContents append(const std::vector<JournalRecord>& records) {
    return append_journal(dir_.file("m"), paths_.model_file, paths_.journal, records,
                          /*sync=*/true, &end_);
  }
  static JournalRecord learn(const std::string& id) {
    JournalRecord record;
    record.id = id;
    record.labels = {"sports", "news"};
    record.terms = {{"goal", 2}, {"match", 1}, {"\xc3\xa9t\xc3\xa9", 3}};
    return record;
  }
  static JournalRecord forget(const std::string& id) {
    JournalRecord record;
    record.kind = JournalRecord::Kind::kForget;
    record.id = id;
    return record;
  }

  TempDir dir_;
  ModelPaths paths_;
  uint64_t end_ = 0;
};

TEST_F(JournalTest, MissingJournalIsEmpty) {
  const JournalContents contents = read_journal(paths_.journal);
  EXPECT_TRUE(contents.records.empty());
  EXPECT_EQ(contents.valid_bytes, 0u);
  EXPECT_TRUE(contents.torn.empty());
}

TEST_F(JournalTest, RoundTrip) {
  append({learn("a"), forget("b")});
  append({learn("c")});
  EXPECT_EQ(paths_.journal, dir_.file("m/gen-000001/journal"));
  const JournalContents contents = read_journal(paths_.journal);
  ASSERT_EQ(contents.records.size(), 3u);
  EXPECT_EQ(contents.records[0].kind, JournalRecord::Kind::kLearn);
  EXPECT_EQ(contents.records[0].id, "a");
  EXPECT_EQ(contents.records[0].labels, (std::vector<std::string>{"sports", "news"}));
  ASSERT_EQ(contents.records[0].terms.size(), 3u);
  EXPECT_EQ(contents.records[0].terms[2].term, "\xc3\xa9t\xc3\xa9");
  EXPECT_EQ(contents.records[0].terms[2].count, 3u);
  EXPECT_EQ(contents.records[1].kind, JournalRecord::Kind::kForget);
  EXPECT_EQ(contents.records[1].id, "b");
  EXPECT_EQ(contents.records[2].id, "c");
  EXPECT_EQ(contents.valid_bytes, contents.file_bytes);
  EXPECT_EQ(contents.valid_bytes, end_);
  // Reading on from an earlier end gives only what came after it.
  const uint64_t before = end_;
  append({forget("a")});
  const JournalContents more = read_journal(paths_.journal, before);
  ASSERT_EQ(more.records.size(), 1u);
  EXPECT_EQ(more.records[0].id, "a");
}

TEST_F(JournalTest, TornLastRecordIsIgnoredReportedAndCutOff) {
  append({learn("a"), learn("b")});
  const std::string whole = read_file(paths_.journal);
  // Every way a crash can cut the last record: inside its header or payload.
  const size_t whole_size = whole.size();
  for (size_t cut = 1; cut < whole.size() - 1; cut += 7) {
    const std::string torn = whole.substr(0, whole.size() - cut);
    write_file(paths_.journal, torn);
    const JournalContents contents = read_journal(paths_.journal);
    if (torn.size() < kJournalHeaderBytes) {
      EXPECT_TRUE(contents.records.empty());
      continue;
    }
    const size_t records = contents.records.size();
    EXPECT_LE(records, 1u) << cut;
    EXPECT_EQ(contents.torn.empty(), contents.valid_bytes == torn.size()) << cut;
    if (!contents.torn.empty()) {
      EXPECT_NE(contents.torn.find(paths_.journal), std::string::npos) << contents.torn;
    }
  }
  // A torn record at the end, then an append: the tail is cut, nothing else.
  write_file(paths_.journal, whole.substr(0, whole.size() - 3));
  end_ = 0;
  const JournalContents appended = append({forget("z")});
  EXPECT_NE(appended.torn.find("torn"), std::string::npos) << appended.torn;
  const JournalContents contents = read_journal(paths_.journal);
  ASSERT_EQ(contents.records.size(), 2u);
  EXPECT_EQ(contents.records[0].id, "a");
  EXPECT_EQ(contents.records[1].id, "z");
  EXPECT_TRUE(contents.torn.empty());
  EXPECT_EQ(contents.valid_bytes, contents.file_bytes);
  EXPECT_LT(contents.valid_bytes, whole_size);
}

TEST_F(JournalTest, LastRecordFailingItsChecksumIsTorn) {
  append({learn("a"), learn("b")});
  std::string bytes = read_file(paths_.journal);
  bytes.back() ^= 0x5a;
  write_file(paths_.journal, bytes);
  const JournalContents contents = read_journal(paths_.journal);
  ASSERT_EQ(contents.records.size(), 1u);
  EXPECT_NE(contents.torn.find("checksum"), std::string::npos) << contents.torn;
}

TEST_F(JournalTest, DamageBeforeTheEndIsAnErrorAndNothingIsAppended) {
  append({learn("a"), learn("b")});
  std::string bytes = read_file(paths_.journal);
  bytes[kJournalHeaderBytes + 12] ^= 0x5a;  // inside the first record's payload
  write_file(paths_.journal, bytes);
  try {
    read_journal(paths_.journal);
    FAIL() << "damage not detected";
  } catch (const ModelFormatError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(paths_.journal), std::string::npos) << message;
    EXPECT_NE(message.find("byte 8"), std::string::npos) << message;
    EXPECT_NE(message.find("move the file aside"), std::string::npos) << message;
  }
  end_ = 0;
  EXPECT_THROW(append({learn("c")}), ModelFormatError);
  EXPECT_EQ(read_file(paths_.journal), bytes);

  write_file(paths_.journal, "NOTAJRNL");
  EXPECT_THROW(read_journal(paths_.journal), ModelFormatError);
}

TEST_F(JournalTest, AppendRefusesAModelTrainedAgain) {
  append({learn("a")});
  std::filesystem::create_directories(dir_.file("m/gen-000002"));
  write_file(dir_.file("m/CURRENT"), "gen-000002\n");
  try {
    append({learn("b")});
    FAIL() << "append to a replaced generation";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("trained again"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_journal(paths_.journal).records.size(), 1u);
}

TEST_F(JournalTest, LockWaitsForATrainAndTimesOut) {
  // A train holds the directory's lock: a journal lock gives up after its timeout.
  ModelDirWriter writer(dir_.file("m"), nullptr);
  try {
    ModelDirLock lock(dir_.file("m"), 50);
    FAIL() << "lock taken while a train holds it";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("autocat train is writing"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace autocat::internal
