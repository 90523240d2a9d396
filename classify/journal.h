// The journal of an installed model generation: documents learned and
// forgotten on the open model (Categorizer::learn / forget) since it was
// trained. Append-only, one checksummed record per document; a Categorizer
// opening the generation replays it, and `train --add` folds it into the
// next generation's training collection (which starts without a journal).
//
// File: an 8-byte magic ("ACJRNL01"), then records, each
//   u32 payload length | u32 CRC-32 of the payload | payload
// (little-endian). Payload: u8 kind (1 learn, 2 forget), the id, and for a
// learn its labels and its analyzed terms with their counts (strings are a
// u32 length and the bytes). A crash can leave the last record torn (short,
// or failing its checksum at the end of the file): readers ignore and
// report it and the next append cuts it off. A record failing its checksum
// with more bytes after it is damage: an error, and nothing is appended.
//
// Thread safety: free functions. Appends hold the model directory's lock
// (ModelDirLock) so that they never race a train or each other.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace autocat::internal {

inline constexpr char kJournalMagic[] = "ACJRNL01";
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
  uint64_t valid_bytes = 0;  // where the last complete record ends (0: no file)
  uint64_t file_bytes = 0;
  // Non-empty if a torn last record was ignored: one line naming the file.
  std::string torn;
};

// Reads the journal at `path` from byte `from` (0 or the valid_bytes of an
// earlier read); a missing file is empty. Throws ModelFormatError naming
// the file, the byte offset and what to do if it is damaged, IOError if it
// cannot be read.
JournalContents read_journal(const std::string& path, uint64_t from = 0);

// Appends `records` to the journal of the generation `expected_model_file`
// belongs to, under the lock of `model_dir`: creates the file if needed,
// first cuts off a torn tail (reported in the result's `torn`), then writes
// and, if `sync`, fsyncs. `*known_end` (0 = unknown) is where this caller
// last saw the journal end; only what lies past it is checked again, and it
// is set to the new end. Throws IOError (lock, write) or InvalidArgumentError
// if DIR's installed model is no longer `expected_model_file` (retrained
// since it was opened: reopen it); nothing is written then.
JournalContents append_journal(const std::string& model_dir, const std::string& expected_model_file,
                               const std::string& path, const std::vector<JournalRecord>& records,
                               bool sync, uint64_t* known_end);

// How long an append waits for the model directory's lock.
inline constexpr int kJournalLockTimeoutMs = 10000;

}  // namespace autocat::internal
