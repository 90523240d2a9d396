// Fuzzes the journal decoder past its checksums: the input is a journal
// file (format 1 or 2 by its magic; anything else gets the format 2 magic
// put before it) whose record header and payload checksums are set right,
// as an attacker would, wherever a record's length fits in the file. Every
// failure must be a ModelFormatError; a journal that reads must hold only
// what its bytes can: counts bounded by the record, a document's counts
// summing to a 32-bit length, nothing past the end of the file.

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "autocat/error.h"
#include "classify/io/journal.h"

namespace {

using namespace autocat;
using namespace autocat::internal;

uint32_t get_le32(const std::string& bytes, size_t at) {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i) {
    value |= uint32_t(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  }
  return value;
}

void put_le32(uint32_t value, size_t at, std::string* bytes) {
  for (int i = 0; i < 4; ++i) (*bytes)[at + i] = static_cast<char>(value >> (8 * i));
}

uint32_t crc32_of(const char* data, size_t size) {
  return static_cast<uint32_t>(
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data), static_cast<uInt>(size)));
}

// Sets every record's checksums right, record by record, while the
// lengths fit.
void fix_checksums(std::string* file) {
  const bool v1 = file->compare(0, kJournalHeaderBytes, kJournalMagicV1, kJournalHeaderBytes) == 0;
  const size_t header = v1 ? 8 : 12;
  size_t at = kJournalHeaderBytes;
  while (at + header <= file->size()) {
    const uint32_t length = get_le32(*file, at);
    if (length > file->size() - at - header) break;
    put_le32(crc32_of(file->data() + at + header, length), at + 4, file);
    if (!v1) put_le32(crc32_of(file->data() + at, 8), at + 8, file);
    at += header + length;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string file(reinterpret_cast<const char*>(data), size);
  if (file.size() < kJournalHeaderBytes ||
      (file.compare(0, kJournalHeaderBytes, kJournalMagic, kJournalHeaderBytes) != 0 &&
       file.compare(0, kJournalHeaderBytes, kJournalMagicV1, kJournalHeaderBytes) != 0)) {
    file.insert(0, kJournalMagic, kJournalHeaderBytes);
  }
  fix_checksums(&file);
  JournalContents contents;
  try {
    contents = parse_journal("fuzz.journal", file);
  } catch (const ModelFormatError&) {
    return 0;  // refused cleanly
  }
  if (contents.valid_bytes > file.size()) __builtin_trap();
  if (contents.torn.empty() != (contents.valid_bytes == file.size())) __builtin_trap();
  for (const JournalRecord& record : contents.records) {
    if (record.id.empty() || record.id.size() > file.size()) __builtin_trap();
    if (record.labels.size() > file.size() || record.terms.size() > file.size()) __builtin_trap();
    uint64_t total = 0;
    for (const JournalTerm& term : record.terms) {
      if (term.count == 0) __builtin_trap();
      total += term.count;
    }
    if (total > UINT32_MAX) __builtin_trap();
  }
  return 0;
}
