// The live-learning journal (classify/io/journal.h): round trip, a torn last
// record ignored and cut off, damage refused, appends under the lock; an
// append is all or nothing; fault injection at every byte (flipped bits,
// truncation, zero fill) loses nothing valid and cuts only torn tails;
// format 1 journals still read and appended to.
#include "classify/io/journal.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <chrono>
#include <cstdint>
#include <filesystem>

#include "autocat/error.h"
#include "classify/io/model_dir.h"
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
  append({learn("a")});
  append({learn("b")});
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

// A complete last record failing its checksum is not a partial write: a
// crash leaves a short file or zeros, not a whole record of other bytes.
TEST_F(JournalTest, LastRecordFailingItsChecksumIsDamage) {
  append({learn("a"), learn("b")});
  std::string bytes = read_file(paths_.journal);
  const std::string whole = bytes;
  bytes[bytes.size() - 7] ^= 0x5a;  // inside the last record
  write_file(paths_.journal, bytes);
  EXPECT_THROW(read_journal(paths_.journal), ModelFormatError);
  // Zeros over the end of the last record are a crash's, and torn.
  bytes = whole;
  std::fill(bytes.end() - 3, bytes.end(), '\0');
  write_file(paths_.journal, bytes);
  const JournalContents contents = read_journal(paths_.journal);
  EXPECT_TRUE(contents.records.empty());  // the batch had no commit
  EXPECT_NE(contents.torn.find("torn"), std::string::npos) << contents.torn;
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
    EXPECT_NE(message.find("byte 8 "), std::string::npos) << message;
    EXPECT_NE(message.find("move the file aside"), std::string::npos) << message;
  }
  end_ = 0;
  EXPECT_THROW(append({learn("c")}), ModelFormatError);
  EXPECT_EQ(read_file(paths_.journal), bytes);

  write_file(paths_.journal, "NOTAJRNL");
  EXPECT_THROW(read_journal(paths_.journal), ModelFormatError);
}

// Where each record starts in a format 2 journal (its header says how long
// it is).
std::vector<size_t> record_starts(const std::string& bytes) {
  std::vector<size_t> starts;
  for (size_t at = kJournalHeaderBytes; at + 12 <= bytes.size();) {
    starts.push_back(at);
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + at);
    at += 12 + (uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24);
  }
  return starts;
}

// The start of the record holding byte `offset`.
size_t record_of(const std::vector<size_t>& starts, size_t offset) {
  size_t start = starts.front();
  for (size_t s : starts) {
    if (s <= offset) start = s;
  }
  return start;
}

std::vector<std::string> ids(const JournalContents& contents) {
  std::vector<std::string> out;
  for (const JournalRecord& record : contents.records) out.push_back(record.id);
  return out;
}

// A writer that knows where the journal ended checks the whole file again
// when something else wrote to it since: damage done under a running
// writer (serve) is found before anything is appended after it.
TEST_F(JournalTest, AWriterFindsDamageDoneSinceItsLastAppend) {
  append({learn("a")});
  append({learn("b")});
  std::string bytes = read_file(paths_.journal);
  bytes[kJournalHeaderBytes + 14] ^= 0x01;  // inside the first record
  write_file(paths_.journal, bytes);
  try {
    append({learn("c")});  // end_ is where this writer left the file
    FAIL() << "appended after the damage";
  } catch (const ModelFormatError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("byte 8 "), std::string::npos) << message;
    EXPECT_EQ(message.find("nothing was cut off or appended"), std::string::npos) << message;
    EXPECT_NE(message.find("autocat journal salvage --model " + dir_.file("m")), std::string::npos)
        << message;
  }
  EXPECT_EQ(read_file(paths_.journal), bytes);
}

// Salvage keeps every whole batch on either side of the damage, drops the
// damaged batch whole, and reports the bytes left out.
TEST_F(JournalTest, SalvageKeepsTheIntactBatchesAroundTheDamage) {
  append({learn("a")});
  const uint64_t first = end_;
  append({learn("b"), forget("a")});
  const uint64_t second = end_;
  append({learn("c")});
  std::string bytes = read_file(paths_.journal);
  bytes[first + 20] ^= 0x10;  // the second batch's first record
  EXPECT_THROW(parse_journal("j", bytes), ModelFormatError);
  const JournalSalvage salvage = salvage_journal(bytes);
  EXPECT_EQ(salvage.records, 2U);
  EXPECT_EQ(ids(parse_journal("j", salvage.bytes)), (std::vector<std::string>{"a", "c"}));
  ASSERT_EQ(salvage.lost.size(), 1U);
  EXPECT_EQ(salvage.lost[0].begin, first);
  EXPECT_EQ(salvage.lost[0].end, second);

  // A journal without damage comes back whole.
  const std::string whole = read_file(paths_.journal);
  const JournalSalvage same = salvage_journal(whole);
  EXPECT_EQ(same.bytes, whole);
  EXPECT_TRUE(same.lost.empty());
}

// Anything but a regular file in place of the journal is refused at once
// (a FIFO used to block every reader).
TEST_F(JournalTest, AFifoIsRefused) {
  ASSERT_EQ(::mkfifo(paths_.journal.c_str(), 0600), 0);
  for (int i = 0; i < 2; ++i) {
    try {
      if (i == 0) {
        read_journal(paths_.journal);
      } else {
        append({learn("a")});
      }
      FAIL() << "a FIFO was read as a journal";
    } catch (const IOError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(paths_.journal + ": the journal is a FIFO, not a regular file"),
                std::string::npos)
          << message;
    }
  }
}

// One flipped bit in a record's length field before the end: the record
// seems to reach past the end of the file. That is damage, refused with
// the file and offset, not a torn tail to cut off with every record after it.
TEST_F(JournalTest, FlippedLengthBitBeforeTheEndIsDamageNotATornTail) {
  std::vector<uint64_t> ends;
  for (const char* id : {"a", "b", "c", "d", "e"}) {
    append({learn(id)});
    ends.push_back(end_);
  }
  std::string bytes = read_file(paths_.journal);
  const size_t second = ends[0];  // where the second append starts
  bytes[second + 2] ^= 0x10;      // its length grows by 1 MiB
  write_file(paths_.journal, bytes);
  try {
    read_journal(paths_.journal);
    FAIL() << "damage taken for a torn tail";
  } catch (const ModelFormatError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(paths_.journal), std::string::npos) << message;
    EXPECT_NE(message.find("byte " + std::to_string(second) + " "), std::string::npos) << message;
  }
  end_ = 0;
  EXPECT_THROW(append({learn("f")}), ModelFormatError);
  EXPECT_EQ(read_file(paths_.journal), bytes);  // nothing cut, nothing appended
}

// Zeros after the last record (a file system extending the file before a
// crash): a torn tail, ignored, and cut by the next append.
TEST_F(JournalTest, ZeroFilledTailIsTorn) {
  append({learn("a")});
  append({forget("a")});
  const std::string whole = read_file(paths_.journal);
  for (size_t zeros : {1, 5, 8, 11, 12, 13, 4096}) {
    write_file(paths_.journal, whole + std::string(zeros, '\0'));
    const JournalContents contents = read_journal(paths_.journal);
    EXPECT_EQ(ids(contents), (std::vector<std::string>{"a", "a"})) << zeros;
    EXPECT_EQ(contents.valid_bytes, whole.size()) << zeros;
    EXPECT_NE(contents.torn.find("zero"), std::string::npos) << contents.torn;
  }
  end_ = 0;
  append({learn("b")});
  const JournalContents contents = read_journal(paths_.journal);
  EXPECT_EQ(ids(contents), (std::vector<std::string>{"a", "a", "b"}));
  EXPECT_TRUE(contents.torn.empty()) << contents.torn;
  EXPECT_EQ(read_file(paths_.journal).substr(0, whole.size()), whole);
}

// A crash in the middle of an append: none of its records count, and the
// next append cuts them off.
TEST_F(JournalTest, AnAppendIsAllOrNothing) {
  append({learn("a")});
  const uint64_t before = end_;
  std::vector<JournalRecord> batch;
  for (int i = 0; i < 40; ++i) batch.push_back(forget("d" + std::to_string(i)));
  append(batch);
  const std::string whole = read_file(paths_.journal);
  for (uint64_t cut = before + 1; cut < whole.size(); cut += 13) {
    write_file(paths_.journal, whole.substr(0, cut));
    const JournalContents contents = read_journal(paths_.journal);
    EXPECT_EQ(ids(contents), std::vector<std::string>{"a"}) << cut;
    EXPECT_EQ(contents.valid_bytes, before) << cut;
    EXPECT_FALSE(contents.torn.empty()) << cut;
  }
  write_file(paths_.journal, whole.substr(0, whole.size() - 1));
  end_ = 0;
  append(batch);
  EXPECT_EQ(read_journal(paths_.journal).records.size(), 41u);
  EXPECT_EQ(read_file(paths_.journal), whole);
}

// Two writers, each remembering where it last saw the journal end: an
// append checks only what follows its known end (another's commits, or a
// torn append it cuts off) and leaves a committed end behind.
TEST_F(JournalTest, AppendsFromAKnownEndSeeOthersBatchesAndCutATornOne) {
  uint64_t mine = 0, theirs = 0;
  const auto append_as = [&](uint64_t* end, const std::vector<JournalRecord>& records) {
    return append_journal(dir_.file("m"), paths_.model_file, paths_.journal, records, true, end);
  };
  append_as(&mine, {learn("a")});
  append_as(&theirs, {learn("b"), learn("c")});
  const uint64_t committed = theirs;
  // Theirs killed halfway through the next append.
  append_as(&theirs, {forget("a"), forget("b")});
  std::string bytes = read_file(paths_.journal);
  write_file(paths_.journal, bytes.substr(0, committed + (bytes.size() - committed) / 2));
  const JournalContents cut = append_as(&mine, {learn("d")});
  EXPECT_FALSE(cut.torn.empty());
  EXPECT_EQ(ids(read_journal(paths_.journal)), (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(mine, read_file(paths_.journal).size());
  // Reading on from an end in the middle of the file gives what follows it.
  EXPECT_EQ(ids(read_journal(paths_.journal, committed)), std::vector<std::string>{"d"});
}

// Fault injection at every byte of a journal of three appends: a flipped
// bit anywhere is damage, refused with the file and the damaged record's
// offset, and nothing is cut or appended; a cut or zeros from any byte to
// the end is a torn tail: the appends before it stay whole, and the next
// append cuts only the tail.
TEST_F(JournalTest, FaultInjectionAtEveryByte) {
  std::vector<uint64_t> batch_ends;
  append({learn("a"), learn("b")});
  batch_ends.push_back(end_);
  append({forget("a")});
  batch_ends.push_back(end_);
  append({learn("c")});
  batch_ends.push_back(end_);
  const std::vector<std::vector<std::string>> expected = {
      {"a", "b"}, {"a", "b", "a"}, {"a", "b", "a", "c"}};
  const std::string whole = read_file(paths_.journal);
  const std::vector<size_t> starts = record_starts(whole);
  ASSERT_EQ(starts.size(), 7u);  // four records, three commits

  // Flipped bits: header (length, payload checksum, header checksum),
  // payload, commit records, the last byte.
  for (size_t offset = kJournalHeaderBytes; offset < whole.size(); ++offset) {
    for (int bit : {0, 4, 7}) {
      std::string bytes = whole;
      bytes[offset] = static_cast<char>(bytes[offset] ^ (1 << bit));
      write_file(paths_.journal, bytes);
      try {
        read_journal(paths_.journal);
        ADD_FAILURE() << "flip at " << offset << " bit " << bit << " not detected";
      } catch (const ModelFormatError& e) {
        const std::string message = e.what();
        const std::string at = "byte " + std::to_string(record_of(starts, offset)) + " ";
        EXPECT_NE(message.find(paths_.journal + ": damaged at " + at), std::string::npos)
            << offset << ": " << message;
      }
      if (offset % 17 == 0) {  // appending reads the same way: spot checks
        end_ = 0;
        EXPECT_THROW(append({learn("z")}), ModelFormatError) << offset;
        EXPECT_EQ(read_file(paths_.journal), bytes) << offset;
      }
    }
  }
  // Zeros inside the file, not reaching its end: damage too.
  for (size_t offset = kJournalHeaderBytes; offset + 4 < whole.size(); ++offset) {
    std::string bytes = whole;
    std::fill(bytes.begin() + offset, bytes.begin() + offset + 4, '\0');
    if (bytes == whole) continue;
    write_file(paths_.journal, bytes);
    EXPECT_THROW(read_journal(paths_.journal), ModelFormatError) << offset;
  }
  // Cut, or zero-filled, from any byte to the end: torn.
  for (size_t cut = 0; cut < whole.size(); ++cut) {
    for (bool zero_fill : {false, true}) {
      if (zero_fill && cut < kJournalHeaderBytes) continue;  // the magic is no tail
      std::string bytes = whole.substr(0, cut);
      if (zero_fill) bytes.resize(whole.size(), '\0');
      write_file(paths_.journal, bytes);
      size_t complete = 0;  // appends wholly before the cut
      while (complete < batch_ends.size() && batch_ends[complete] <= cut) ++complete;
      const uint64_t valid = complete == 0 ? (cut < kJournalHeaderBytes ? 0 : kJournalHeaderBytes)
                                           : batch_ends[complete - 1];
      JournalContents contents;
      ASSERT_NO_THROW(contents = read_journal(paths_.journal)) << cut << " " << zero_fill;
      EXPECT_EQ(ids(contents), complete == 0 ? std::vector<std::string>() : expected[complete - 1])
          << cut << " " << zero_fill;
      EXPECT_EQ(contents.valid_bytes, valid) << cut << " " << zero_fill;
      EXPECT_EQ(contents.torn.empty(), bytes.size() == valid) << cut << " " << zero_fill;
      if (cut % 5 == 0 || zero_fill) {
        end_ = 0;
        append({learn("z")});
        const std::string after = read_file(paths_.journal);
        EXPECT_EQ(after.substr(0, valid), whole.substr(0, valid)) << cut;
        const JournalContents appended = read_journal(paths_.journal);
        EXPECT_TRUE(appended.torn.empty()) << cut << " " << appended.torn;
        ASSERT_FALSE(appended.records.empty()) << cut;
        EXPECT_EQ(appended.records.back().id, "z") << cut;
        EXPECT_EQ(appended.records.size(), ids(contents).size() + 1) << cut;
      }
    }
  }
}

// A journal written before batched appends (format 1) still reads, and
// appends to it stay format 1.
TEST_F(JournalTest, FormatOneJournalsStillReadAndAppend) {
  const std::string v1 = std::string(kJournalMagicV1, kJournalHeaderBytes) +
                         encode_journal_records({learn("a"), forget("b")}, 1) +
                         encode_journal_records({learn("c")}, 1);
  write_file(paths_.journal, v1);
  JournalContents contents = read_journal(paths_.journal);
  EXPECT_EQ(contents.version, 1);
  EXPECT_EQ(ids(contents), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(contents.records[0].terms.size(), 3u);
  append({forget("c")});
  EXPECT_EQ(read_file(paths_.journal), v1 + encode_journal_records({forget("c")}, 1));
  contents = read_journal(paths_.journal);
  EXPECT_EQ(ids(contents), (std::vector<std::string>{"a", "b", "c", "c"}));
  // Reading on from a known end needs the magic's format too.
  EXPECT_EQ(ids(read_journal(paths_.journal, v1.size())), std::vector<std::string>{"c"});
}

// Format 1 has no header checksum: a length reaching past the end is torn
// only if no valid record follows; zeros are torn; payload damage is not.
TEST_F(JournalTest, FormatOneDamageAndTornTails) {
  const std::string first = encode_journal_records({learn("a")}, 1);
  const std::string v1 = std::string(kJournalMagicV1, kJournalHeaderBytes) + first +
                         encode_journal_records({learn("b"), forget("a"), learn("c")}, 1);
  // The tester's case: a length bit flipped in the second record.
  std::string bytes = v1;
  bytes[kJournalHeaderBytes + first.size() + 2] ^= 0x10;
  write_file(paths_.journal, bytes);
  try {
    read_journal(paths_.journal);
    FAIL() << "damage taken for a torn tail";
  } catch (const ModelFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("byte " +
                                         std::to_string(kJournalHeaderBytes + first.size()) + " "),
              std::string::npos)
        << e.what();
  }
  end_ = 0;
  EXPECT_THROW(append({learn("z")}), ModelFormatError);
  EXPECT_EQ(read_file(paths_.journal), bytes);
  // Every flipped bit outside the last record's length is damage.
  const size_t last = v1.size() - encode_journal_records({learn("c")}, 1).size();
  for (size_t offset = kJournalHeaderBytes; offset < v1.size(); ++offset) {
    if (offset >= last && offset < last + 4) continue;
    bytes = v1;
    bytes[offset] ^= 0x08;
    write_file(paths_.journal, bytes);
    EXPECT_THROW(read_journal(paths_.journal), ModelFormatError) << offset;
  }
  // Cut anywhere, or zeros after the end: torn, the whole records kept.
  for (size_t cut = kJournalHeaderBytes; cut < v1.size(); ++cut) {
    write_file(paths_.journal, v1.substr(0, cut));
    JournalContents contents;
    ASSERT_NO_THROW(contents = read_journal(paths_.journal)) << cut;
    EXPECT_LE(contents.valid_bytes, cut);
    EXPECT_EQ(contents.torn.empty(), contents.valid_bytes == cut) << cut;
  }
  write_file(paths_.journal, v1 + std::string(20, '\0'));
  const JournalContents contents = read_journal(paths_.journal);
  EXPECT_EQ(contents.records.size(), 4u);
  EXPECT_FALSE(contents.torn.empty());
}

// A format 1 length past the end followed by bytes crafted so that checking
// them for records would take quadratic time: the check gives up, and what
// it cannot prove torn is refused, quickly.
TEST_F(JournalTest, FormatOneScanForRecordsIsBounded) {
  std::string bytes = std::string(kJournalMagicV1, kJournalHeaderBytes) +
                      encode_journal_records({learn("a")}, 1) +
                      std::string("\xff\xff\xff\x0f\x00\x00\x00\x00", 8);
  for (int i = 0; i < (1 << 19); ++i) bytes += std::string("\x00\x00\x01\x00", 4);
  write_file(paths_.journal, bytes);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(read_journal(paths_.journal), ModelFormatError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

// Crafted records whose checksums match: counts beyond the bytes left, a
// term count of zero or counts summing past 2^32 are refused, not allocated.
TEST_F(JournalTest, CraftedCountsAreBoundedByTheRecord) {
  const auto with_terms = [](std::vector<JournalTerm> terms) {
    JournalRecord record = learn("a");
    record.terms = std::move(terms);
    return std::string(kJournalMagic, kJournalHeaderBytes) + encode_journal_records({record}, 2);
  };
  EXPECT_NO_THROW(parse_journal("j", with_terms({{"x", UINT32_MAX}})));
  EXPECT_THROW(parse_journal("j", with_terms({{"x", UINT32_MAX}, {"y", 1}})), ModelFormatError);
  EXPECT_THROW(parse_journal("j", with_terms({{"x", 0}})), ModelFormatError);
  // Label and term counts of 2^31 in a record of a few bytes, its checksum
  // set right as an attacker would.
  for (const std::string& counts :
       {std::string("\x00\x00\x00\x80", 4), std::string("\x00\x00\x00\x00\x00\x00\x00\x80", 8)}) {
    const std::string payload = std::string(
                                    "\x01\x01\x00\x00\x00"
                                    "a",
                                    6) +
                                counts;
    std::string bytes = kJournalMagicV1;
    for (uint32_t value :
         {uint32_t(payload.size()),
          uint32_t(crc32(0, reinterpret_cast<const Bytef*>(payload.data()), payload.size()))}) {
      for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>(value >> (8 * i)));
    }
    EXPECT_THROW(parse_journal("j", bytes + payload), ModelFormatError);
  }
}

// The fuzzer's seeds (fuzz/seeds/journal, written by hand to the format in
// journal.h) read as the format says.
TEST_F(JournalTest, FuzzerSeedsReadAsTheFormatSays) {
  const std::string seeds = std::string(AUTOCAT_SOURCE_DIR) + "/fuzz/seeds/journal/";
  const std::vector<std::string> all = {"doc-1", "doc-0", "doc-2"};
  JournalContents contents = parse_journal("j", read_file(seeds + "format2.journal"));
  EXPECT_EQ(contents.version, 2);
  EXPECT_EQ(ids(contents), all);
  EXPECT_TRUE(contents.torn.empty());
  contents = parse_journal("j", read_file(seeds + "format1.journal"));
  EXPECT_EQ(contents.version, 1);
  EXPECT_EQ(ids(contents), all);
  contents = parse_journal("j", read_file(seeds + "format2-torn.journal"));
  EXPECT_EQ(ids(contents), std::vector<std::string>{"doc-1"});
  EXPECT_FALSE(contents.torn.empty());
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
