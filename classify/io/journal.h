// The journal of an installed model generation: documents learned and
// forgotten on the open model (Categorizer::learn / forget) since it was
// trained. Append-only, one checksummed record per document; a Categorizer
// opening the generation replays it, and `train --add` folds it into the
// next generation's training collection (which starts without a journal).
//
// File (format 2): an 8-byte magic ("ACJRNL02"), then records, each
//   u32 payload length | u32 CRC-32 of the payload |
//   u32 CRC-32 of those 8 header bytes | payload
// (little-endian). Payload: u8 kind, then
//   1 learn:  the id, its labels (u32 count, strings) and its analyzed terms
//             (u32 count, each a string and a u32 count of occurrences, >= 1)
//   2 forget: the id
//   3 commit: u32 number of records since the previous commit, u8 0xC3
// (strings are a u32 length and the bytes). Each append (one learn or
// forget call: a whole batch) writes its records and then one commit
// record; records become visible only with their commit, so a batch is all
// or nothing. The commit's last byte is never zero, so a complete journal
// never ends in a zero byte.
//
// Torn versus damaged. What a crash during an append can leave after the
// last commit is torn: a short header, a record cut short (its checksummed
// header says it is longer than the bytes left), records without their
// commit, or a tail that is all zeros from inside a record on (some file
// systems extend the file before writing its blocks). Readers ignore a torn
// tail and report it (JournalContents::torn); the next append cuts it off.
// Anything else that fails (a header or payload checksum with nonzero bytes
// to the end, a record that does not parse, a commit counting the wrong
// number of records) is damage: ModelFormatError naming the file and the
// byte offset, and nothing is appended.
//
// Format 1 ("ACJRNL01", autocat before batched appends) is still read, and
// appends to a format 1 journal stay format 1 (until the next train starts
// a format 2 one): records are
//   u32 payload length | u32 CRC-32 of the payload | payload
// with the same payloads and no commit (every record counts, so a batch
// cut by a crash is partly there). Its header has no checksum: a record
// longer than the bytes left is torn only if no valid record starts after
// it, a last record failing its checksum only if its payload is all zeros.
//
// Thread safety: free functions. Appends hold the model directory's lock
// (ModelDirLock) so that they never race a train or each other.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace autocat::internal {

inline constexpr char kJournalMagic[] = "ACJRNL02";
inline constexpr char kJournalMagicV1[] = "ACJRNL01";
inline constexpr size_t kJournalHeaderBytes = 8;

struct JournalTerm {
  std::string term;  // an analyzed term as the training collection holds it
  uint32_t count = 0;
};

struct JournalRecord {
  enum class Kind : uint8_t { kLearn = 1, kForget = 2 };
  Kind kind = Kind::kLearn;
  std::string id;
  std::vector<std::string> labels;  // learn only
  std::vector<JournalTerm> terms;   // learn only
};

struct JournalContents {
  std::vector<JournalRecord> records;
  uint64_t valid_bytes = 0;  // where the last committed record ends (0: no file)
  uint64_t file_bytes = 0;
  int version = 0;  // 1 or 2 (0: no file, or an incomplete magic)
  // Non-empty if a torn tail was ignored: one line naming the file.
  std::string torn;
};

// The bytes of `records` as appended to a journal of format `version` (1
// or 2; format 2 ends them with their commit record). For tests and fuzzers.
std::string encode_journal_records(const std::vector<JournalRecord>& records, int version);

// Parses a whole journal file held in `bytes` (`path` names it in
// messages), as read_journal does.
JournalContents parse_journal(const std::string& path, const std::string& bytes);

// Reads the journal at `path` from byte `from` (0 or the valid_bytes of an
// earlier read); a missing file is empty. Throws ModelFormatError naming
// the file, the byte offset and what to do if it is damaged, IOError if it
// cannot be read.
JournalContents read_journal(const std::string& path, uint64_t from = 0);

// A damaged journal's intact part, as `autocat journal salvage` writes it:
// every whole batch (format 2: records with their commit; format 1: a
// record), before and after the damage, in order, under the file's magic.
struct JournalSalvage {
  struct Range {
    uint64_t begin = 0;  // byte offsets in the damaged file, end excluded
    uint64_t end = 0;
  };
  std::string bytes;        // the salvaged journal
  uint64_t records = 0;     // learn and forget records kept
  std::vector<Range> lost;  // the bytes left out, in order
};

// Salvages the journal held in `bytes` (see JournalSalvage). A journal
// without damage comes back whole, less a torn tail.
JournalSalvage salvage_journal(const std::string& bytes);

// Appends `records` to the journal of the generation `expected_model_file`
// belongs to, under the lock of `model_dir`: creates the file if needed,
// first cuts off a torn tail (reported in the result's `torn`), then writes
// them as one batch (format 2: with their commit record) and, if `sync`,
// fsyncs. A damaged journal (ModelFormatError) is left as it is. `*known_end` (0 = unknown) is
// where this caller last saw the journal end; only what lies past it is checked again, and it is
// set to the new end. The result's `records` are those others appended past `*known_end` (all of
// the journal's if it is 0), in order, before the new ones. Throws IOError (lock, write) or
// InvalidArgumentError if DIR's installed model is no longer `expected_model_file` (retrained since
// it was opened: reopen it); nothing is written then.
JournalContents append_journal(const std::string& model_dir, const std::string& expected_model_file,
                               const std::string& path, const std::vector<JournalRecord>& records,
                               bool sync, uint64_t* known_end);

// Why a learn or forget on a model trained again since it was opened is
// refused (after the model directory's name).
inline constexpr char kTrainedAgainSinceOpened[] =
    "the model was trained again since it was opened; nothing was learned or forgotten: reopen "
    "the model and repeat";

// How long an append waits for the model directory's lock.
inline constexpr int kJournalLockTimeoutMs = 10000;

}  // namespace autocat::internal
