#include "classify/io/journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "autocat/error.h"
#include "classify/io/atomic_file.h"
#include "classify/io/model_dir.h"

namespace autocat::internal {
namespace {

// A record longer than this is not one autocat wrote (documents are capped
// at 64 MiB of text by default; their terms take less).
constexpr uint32_t kMaxRecordBytes = uint32_t{1} << 30;
// The shortest payload: a kind, a string length and a one-byte id (or a
// commit's count and end marker).
constexpr size_t kMinPayloadBytes = 6;
constexpr uint8_t kCommitKind = 3;
// The commit record's last byte: nonzero, so that a complete journal never
// ends in zeros and a zero-filled tail is always a crash's.
constexpr uint8_t kCommitEnd = 0xC3;

size_t header_bytes(int version) { return version == 1 ? 8 : 12; }

void put_u32(std::string* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void put_string(std::string* out, const std::string& value) {
  put_u32(out, static_cast<uint32_t>(value.size()));
  out->append(value);
}

uint32_t get_u32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return uint32_t(u[0]) | uint32_t(u[1]) << 8 | uint32_t(u[2]) << 16 | uint32_t(u[3]) << 24;
}

uint32_t checksum(const char* data, size_t size) {
  return static_cast<uint32_t>(
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data), static_cast<uInt>(size)));
}

// One record: its header for `version`, then `payload`.
std::string frame(const std::string& payload, int version) {
  std::string out;
  put_u32(&out, static_cast<uint32_t>(payload.size()));
  put_u32(&out, checksum(payload.data(), payload.size()));
  if (version != 1) put_u32(&out, checksum(out.data(), 8));
  return out + payload;
}

std::string encode(const JournalRecord& record, int version) {
  std::string payload;
  payload.push_back(static_cast<char>(record.kind));
  put_string(&payload, record.id);
  if (record.kind == JournalRecord::Kind::kLearn) {
    put_u32(&payload, static_cast<uint32_t>(record.labels.size()));
    for (const std::string& label : record.labels) put_string(&payload, label);
    put_u32(&payload, static_cast<uint32_t>(record.terms.size()));
    for (const JournalTerm& term : record.terms) {
      put_string(&payload, term.term);
      put_u32(&payload, term.count);
    }
  }
  return frame(payload, version);
}

// Parses one payload whose checksum matched; false if it is malformed.
class PayloadReader {
 public:
  PayloadReader(const char* data, size_t size) : p_(data), end_(data + size) {}
  bool u8(uint8_t* value) {
    if (p_ == end_) return false;
    *value = static_cast<uint8_t>(*p_++);
    return true;
  }
  bool u32(uint32_t* value) {
    if (end_ - p_ < 4) return false;
    *value = get_u32(p_);
    p_ += 4;
    return true;
  }
  bool string(std::string* value) {
    uint32_t size = 0;
    if (!u32(&size) || uint64_t(end_ - p_) < size) return false;
    value->assign(p_, size);
    p_ += size;
    return true;
  }
  // A count of entries each taking at least `entry_bytes`: bounded by the
  // bytes left, so that a crafted count cannot allocate more than the
  // record holds.
  bool count(uint32_t* value, size_t entry_bytes) {
    return u32(value) && *value <= size_t(end_ - p_) / entry_bytes;
  }
  bool done() const { return p_ == end_; }

 private:
  const char* p_;
  const char* end_;
};

// Decodes a payload into `record`, or, for a commit, sets `*commit_count`
// and `*commit` true. False if the payload is malformed.
bool decode(const char* data, size_t size, int version, JournalRecord* record, bool* commit,
            uint32_t* commit_count) {
  PayloadReader in(data, size);
  uint8_t kind = 0;
  *commit = false;
  if (!in.u8(&kind)) return false;
  if (kind == kCommitKind && version != 1) {
    uint8_t end = 0;
    *commit = true;
    return in.u32(commit_count) && in.u8(&end) && end == kCommitEnd && in.done();
  }
  if (!in.string(&record->id) || record->id.empty()) return false;
  if (kind == static_cast<uint8_t>(JournalRecord::Kind::kForget)) {
    record->kind = JournalRecord::Kind::kForget;
    return in.done();
  }
  if (kind != static_cast<uint8_t>(JournalRecord::Kind::kLearn)) return false;
  record->kind = JournalRecord::Kind::kLearn;
  uint32_t count = 0;
  if (!in.count(&count, 4)) return false;  // a label is at least its length
  record->labels.resize(count);
  for (std::string& label : record->labels) {
    if (!in.string(&label)) return false;
  }
  if (!in.count(&count, 8)) return false;  // a term: its length and its count
  record->terms.resize(count);
  // A document's length (the sum of its counts) is a 32-bit number in the
  // training database, as in Xapian.
  uint64_t total = 0;
  for (JournalTerm& term : record->terms) {
    if (!in.string(&term.term) || !in.u32(&term.count) || term.count == 0) return false;
    total += term.count;
    if (total > UINT32_MAX) return false;
  }
  return in.done();
}

std::string damaged(const std::string& path, uint64_t offset, const std::string& what) {
  const std::string model_dir = std::filesystem::path(path).parent_path().parent_path().string();
  return path + ": damaged at byte " + std::to_string(offset) + " (" + what +
         "); autocat left it as it is and appends nothing to it: `autocat journal salvage "
         "--model " +
         (model_dir.empty() ? std::string("DIR") : model_dir) +
         "` keeps every intact record before and after the damage (the damaged file is kept "
         "aside), or move the file aside to open the model without the documents learned since "
         "it was trained";
}

// How this process last left each journal it appended to: an append
// checks only what lies past its known end when the file is still as left
// (nothing else wrote to it since), and the whole file otherwise, so that
// damage done meanwhile is found before anything is appended after it.
struct FileStamp {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  struct timespec modified {};
  struct timespec changed {};
};

std::mutex& stamps_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::map<std::string, FileStamp>& stamps() {
  static std::map<std::string, FileStamp> map;
  return map;
}

bool same_time(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

bool left_as_written(const std::string& path, const struct stat& status) {
  const std::lock_guard<std::mutex> lock(stamps_mutex());
  const auto found = stamps().find(path);
  if (found == stamps().end()) return false;
  const FileStamp& stamp = found->second;
  return stamp.device == status.st_dev && stamp.inode == status.st_ino &&
         stamp.size == status.st_size && same_time(stamp.modified, status.st_mtim) &&
         same_time(stamp.changed, status.st_ctim);
}

void remember_as_written(const std::string& path, int fd) {
  struct stat status {};
  const std::lock_guard<std::mutex> lock(stamps_mutex());
  if (::fstat(fd, &status) != 0) {
    stamps().erase(path);
    return;
  }
  stamps()[path] =
      FileStamp{status.st_dev, status.st_ino, status.st_size, status.st_mtim, status.st_ctim};
}

// Whether a complete format 1 record (checksum matching, payload parsing)
// starts anywhere in [begin, end) of `data`: then what comes before it is
// not a torn tail. The bytes checksummed are bounded (a torn tail's
// candidates are short strings and counts; a crafted file's could make
// this quadratic): past the bound it cannot tell.
enum class Found { kNo, kYes, kCannotTell };
Found v1_record_starts_in(const char* data, size_t begin, size_t end) {
  uint64_t budget = 64 * uint64_t(end - begin) + (uint64_t{1} << 20);
  for (size_t p = begin; p + 8 + kMinPayloadBytes <= end; ++p) {
    const uint32_t size = get_u32(data + p);
    if (size < kMinPayloadBytes || size > end - p - 8) continue;
    if (size > budget) return Found::kCannotTell;
    budget -= size;
    if (checksum(data + p + 8, size) != get_u32(data + p + 4)) continue;
    JournalRecord record;
    bool commit = false;
    uint32_t count = 0;
    if (decode(data + p + 8, size, 1, &record, &commit, &count)) return Found::kYes;
  }
  return Found::kNo;
}

int version_of(const std::string& path, const char* magic) {
  if (std::memcmp(magic, kJournalMagic, kJournalHeaderBytes) == 0) return 2;
  if (std::memcmp(magic, kJournalMagicV1, kJournalHeaderBytes) == 0) return 1;
  throw ModelFormatError(damaged(path, 0, "not an autocat journal: wrong magic"));
}

// Parses `bytes` (the file from `from` on; `contents->version` set if
// `from` is past the magic) into `contents`.
void parse(const std::string& path, const std::string& bytes, uint64_t from,
           JournalContents* contents) {
  const char* const data = bytes.data();
  size_t at = 0;
  if (from == 0) {
    contents->version = 0;
    if (bytes.size() < kJournalHeaderBytes) {
      if (!bytes.empty()) {
        contents->torn = path + ": ignored an incomplete header (" + std::to_string(bytes.size()) +
                         " bytes, a crash while the journal was created)";
      }
      contents->valid_bytes = 0;
      return;
    }
    contents->version = version_of(path, data);
    at = kJournalHeaderBytes;
  }
  const int version = contents->version;
  const size_t header = header_bytes(version);
  // Where the file's zero-filled tail starts (its size if it ends nonzero).
  size_t zeros = bytes.size();
  while (zeros > at && data[zeros - 1] == 0) --zeros;
  std::vector<JournalRecord> batch;  // format 2: records awaiting their commit
  size_t committed = at;             // where the last commit (format 1: record) ends
  std::string why;                   // set if the tail from `committed` on is torn
  for (;;) {
    const size_t left = bytes.size() - at;
    const uint64_t offset = from + at;
    if (left == 0) {
      if (!batch.empty()) why = "records without their commit";
      break;
    }
    if (zeros <= at) {
      why = "zero-filled";
      break;
    }
    if (left < header) {
      why = "a record header cut short";
      break;
    }
    const uint32_t size = get_u32(data + at);
    const uint32_t sum = get_u32(data + at + 4);
    if (version != 1 && checksum(data + at, 8) != get_u32(data + at + 8)) {
      if (zeros >= at + header) {
        throw ModelFormatError(damaged(path, offset, "record header checksum mismatch"));
      }
      why = "a record header zero-filled";
      break;
    }
    if (size > kMaxRecordBytes) {
      throw ModelFormatError(damaged(path, offset, "impossible record length"));
    }
    if (size > left - header) {
      // Format 1's length is not checksummed: a flipped bit can make a
      // record reach past the end. Torn only if nothing valid follows.
      const Found after =
          version == 1 ? v1_record_starts_in(data, at + 1, bytes.size()) : Found::kNo;
      if (after != Found::kNo) {
        throw ModelFormatError(damaged(
            path, offset,
            after == Found::kYes ? "record length past the end of the file, with records after it"
                                 : "record length past the end of the file, not provably the last "
                                   "record"));
      }
      why = "a record cut short (" + std::to_string(left) + " of " + std::to_string(size + header) +
            " bytes)";
      break;
    }
    const char* payload = data + at + header;
    if (checksum(payload, size) != sum) {
      // Torn if zeros fill the record to the end of the file; format 1,
      // whose records may end in zero bytes, only if its payload is all zeros.
      const bool zero_filled =
          version == 1 ? zeros <= at + header && size == left - header : zeros < at + header + size;
      if (!zero_filled) {
        throw ModelFormatError(damaged(path, offset, "record checksum mismatch"));
      }
      why = "a record failing its checksum, zero-filled";
      break;
    }
    JournalRecord record;
    bool commit = false;
    uint32_t count = 0;
    if (!decode(payload, size, version, &record, &commit, &count)) {
      throw ModelFormatError(damaged(path, offset, "a record that does not parse"));
    }
    at += header + size;
    if (commit) {
      if (batch.empty() || count != batch.size()) {
        throw ModelFormatError(damaged(path, offset,
                                       "a commit of " + std::to_string(count) + " records after " +
                                           std::to_string(batch.size())));
      }
      for (JournalRecord& committed_record : batch) {
        contents->records.push_back(std::move(committed_record));
      }
      batch.clear();
      committed = at;
    } else if (version == 1) {
      contents->records.push_back(std::move(record));
      committed = at;
    } else {
      batch.push_back(std::move(record));
    }
  }
  contents->valid_bytes = from + committed;
  if (!why.empty()) {
    contents->torn = path + ": ignored a torn tail at byte " + std::to_string(from + committed) +
                     " (" + std::to_string(bytes.size() - committed) + " bytes: " + why +
                     (batch.empty() ? std::string()
                                    : ", " + std::to_string(batch.size()) +
                                          " complete records "
                                          "of the append") +
                     "; an append killed while it was written, or one still being written)";
  }
}

std::string read_from(int fd, const std::string& path, uint64_t from, uint64_t size) {
  std::string bytes(size - from, '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pread(fd, bytes.data() + done, bytes.size() - done, off_t(from + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw IOError(path + ": cannot read the journal: " + std::strerror(errno));
    if (n == 0) break;
    done += size_t(n);
  }
  bytes.resize(done);
  return bytes;
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Refuses anything but a regular file: a FIFO would block every reader
// (files are opened with O_NONBLOCK, so the open itself does not).
void require_regular_file(const std::string& path, const struct stat& status) {
  if (S_ISREG(status.st_mode)) return;
  const char* kind = S_ISFIFO(status.st_mode)   ? "a FIFO"
                     : S_ISDIR(status.st_mode)  ? "a directory"
                     : S_ISSOCK(status.st_mode) ? "a socket"
                                                : "a device";
  throw IOError(path + ": the journal is " + kind +
                ", not a regular file; move it aside (the model opens without the documents "
                "learned since it was trained)");
}

// Parses the journal open as `fd` (`size` bytes) from `from` on.
void parse_file(int fd, const std::string& path, uint64_t from, uint64_t size,
                JournalContents* contents) {
  if (from != 0) {
    // Reading on: the format is the magic's.
    const std::string magic = read_from(fd, path, 0, std::min<uint64_t>(size, kJournalHeaderBytes));
    if (magic.size() < kJournalHeaderBytes) {
      throw ModelFormatError(damaged(path, 0, "an incomplete header under records"));
    }
    contents->version = version_of(path, magic.data());
  }
  parse(path, read_from(fd, path, from, size), from, contents);
}

// If a whole batch (format 2: records and their commit; format 1: one
// record) starts at `at` in `bytes`, where it ends, and its record count
// in `*records`; else 0.
size_t whole_batch_at(const std::string& bytes, size_t at, int version, uint64_t* records) {
  const size_t header = header_bytes(version);
  uint64_t seen = 0;
  size_t p = at;
  for (;;) {
    if (bytes.size() - p < header) return 0;
    const char* d = bytes.data() + p;
    const uint32_t size = get_u32(d);
    if (version != 1 && checksum(d, 8) != get_u32(d + 8)) return 0;
    if (size < kMinPayloadBytes || size > kMaxRecordBytes || size > bytes.size() - p - header) {
      return 0;
    }
    if (checksum(d + header, size) != get_u32(d + 4)) return 0;
    JournalRecord record;
    bool commit = false;
    uint32_t count = 0;
    if (!decode(d + header, size, version, &record, &commit, &count)) return 0;
    p += header + size;
    if (version == 1) {
      *records = 1;
      return p;
    }
    if (commit) {
      if (count == 0 || count != seen) return 0;
      *records = seen;
      return p;
    }
    ++seen;
  }
}

}  // namespace

JournalSalvage salvage_journal(const std::string& bytes) {
  JournalSalvage salvage;
  const bool v1 = bytes.size() >= kJournalHeaderBytes &&
                  std::memcmp(bytes.data(), kJournalMagicV1, kJournalHeaderBytes) == 0;
  const bool v2 = bytes.size() >= kJournalHeaderBytes &&
                  std::memcmp(bytes.data(), kJournalMagic, kJournalHeaderBytes) == 0;
  const int version = v1 ? 1 : 2;
  salvage.bytes.assign(v1 ? kJournalMagicV1 : kJournalMagic, kJournalHeaderBytes);
  // Where the bytes being dropped began (none while batches follow whole).
  constexpr uint64_t kNone = UINT64_MAX;
  uint64_t lost_from = v1 || v2 ? kNone : 0;
  size_t at = std::min(bytes.size(), kJournalHeaderBytes);
  while (at < bytes.size()) {
    uint64_t records = 0;
    const size_t end = whole_batch_at(bytes, at, version, &records);
    if (end == 0) {
      if (lost_from == kNone) lost_from = at;
      ++at;
      continue;
    }
    if (lost_from != kNone) salvage.lost.push_back({lost_from, at});
    lost_from = kNone;
    salvage.bytes.append(bytes, at, end - at);
    salvage.records += records;
    at = end;
  }
  if (lost_from != kNone) salvage.lost.push_back({lost_from, bytes.size()});
  return salvage;
}

std::string encode_journal_records(const std::vector<JournalRecord>& records, int version) {
  std::string bytes;
  for (const JournalRecord& record : records) bytes += encode(record, version);
  if (version != 1) {
    std::string commit(1, static_cast<char>(kCommitKind));
    put_u32(&commit, static_cast<uint32_t>(records.size()));
    commit.push_back(static_cast<char>(kCommitEnd));
    bytes += frame(commit, version);
  }
  return bytes;
}

JournalContents parse_journal(const std::string& path, const std::string& bytes) {
  JournalContents contents;
  contents.file_bytes = bytes.size();
  parse(path, bytes, 0, &contents);
  return contents;
}

JournalContents read_journal(const std::string& path, uint64_t from) {
  JournalContents contents;
  Fd file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (file.fd < 0) {
    if (errno == ENOENT) return contents;
    throw IOError(path + ": cannot open the journal: " + std::strerror(errno));
  }
  struct stat status {};
  if (::fstat(file.fd, &status) != 0) {
    throw IOError(path + ": cannot read the journal: " + std::strerror(errno));
  }
  require_regular_file(path, status);
  contents.file_bytes = uint64_t(status.st_size);
  if (from > contents.file_bytes) {
    throw ModelFormatError(path + ": shorter (" + std::to_string(contents.file_bytes) +
                           " bytes) than when it was read (" + std::to_string(from) +
                           "): it was cut by something other than autocat; reopen the model");
  }
  parse_file(file.fd, path, from, contents.file_bytes, &contents);
  return contents;
}

JournalContents append_journal(const std::string& model_dir, const std::string& expected_model_file,
                               const std::string& path, const std::vector<JournalRecord>& records,
                               bool sync, uint64_t* known_end) {
  const ModelDirLock lock(model_dir, kJournalLockTimeoutMs);
  if (resolve_model_dir(model_dir).model_file != expected_model_file) {
    throw InvalidArgumentError(model_dir + ": " + kTrainedAgainSinceOpened);
  }
  crash_point("journal-locked");
  Fd file;
  file.fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
  if (file.fd < 0) {
    throw IOError(path + ": cannot open the journal for writing: " + std::strerror(errno));
  }
  struct stat status {};
  if (::fstat(file.fd, &status) != 0) {
    throw IOError(path + ": cannot read the journal: " + std::strerror(errno));
  }
  require_regular_file(path, status);
  const uint64_t size = uint64_t(status.st_size);
  const uint64_t from = *known_end <= size && left_as_written(path, status) ? *known_end : 0;
  JournalContents contents;
  contents.file_bytes = size;
  // What others appended since `from` stays in `contents.records`, for the
  // caller to apply before its own records (the order a fresh open replays).
  parse_file(file.fd, path, from, size, &contents);
  const bool created = contents.valid_bytes == 0;

  // A format 1 journal stays format 1 (rewriting it would move the
  // offsets other open models hold as their known end) until the next
  // train starts a format 2 one.
  std::string bytes;
  if (created) bytes.assign(kJournalMagic, kJournalHeaderBytes);
  bytes += encode_journal_records(records, created ? 2 : contents.version);
  // Cut a torn tail first, so the new records follow complete ones.
  if (contents.valid_bytes != size && ::ftruncate(file.fd, off_t(contents.valid_bytes)) != 0) {
    throw IOError(path + ": cannot cut off the torn tail: " + std::strerror(errno));
  }
  uint64_t at = contents.valid_bytes;
  size_t done = 0;
  // Written in two halves, so that the crash tests can stop between them
  // and leave a torn batch, as a crash during the write would.
  size_t stop = bytes.size() / 2;
  while (done < bytes.size()) {
    if (done >= stop) {
      crash_point("journal-half-written");
      stop = bytes.size();
    }
    const ssize_t n = ::pwrite(file.fd, bytes.data() + done, stop - done, off_t(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string reason = n < 0 ? std::strerror(errno) : "nothing written";
      // Leave no partial record behind (a reader would ignore it anyway).
      [[maybe_unused]] const int ignored = ::ftruncate(file.fd, off_t(contents.valid_bytes));
      throw IOError(path + ": cannot append to the journal: " + reason +
                    "; nothing was learned or forgotten");
    }
    done += size_t(n);
    at += uint64_t(n);
  }
  if (sync && ::fsync(file.fd) != 0) {
    throw IOError(path + ": cannot flush the journal to disk: " + std::strerror(errno) +
                  "; the records may or may not be there when the model is opened again");
  }
  if (sync && created) sync_directory(std::filesystem::path(path).parent_path().string());
  remember_as_written(path, file.fd);
  contents.valid_bytes = contents.file_bytes = at;
  *known_end = at;
  return contents;
}

}  // namespace autocat::internal
