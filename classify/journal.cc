#include "classify/journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "autocat/error.h"
#include "classify/atomic_file.h"
#include "classify/model_dir.h"

namespace autocat::internal {
namespace {

// A record longer than this is not one autocat wrote (documents are capped
// at 64 MiB of text by default; their terms take less).
constexpr uint32_t kMaxRecordBytes = uint32_t{1} << 30;

void put_u32(std::string* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void put_string(std::string* out, const std::string& value) {
  put_u32(out, static_cast<uint32_t>(value.size()));
  out->append(value);
}

uint32_t get_u32(const unsigned char* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

uint32_t checksum(const char* data, size_t size) {
  return static_cast<uint32_t>(
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data), static_cast<uInt>(size)));
}

std::string encode(const JournalRecord& record) {
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
  std::string out;
  put_u32(&out, static_cast<uint32_t>(payload.size()));
  put_u32(&out, checksum(payload.data(), payload.size()));
  return out + payload;
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
    *value = get_u32(reinterpret_cast<const unsigned char*>(p_));
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
  bool done() const { return p_ == end_; }

 private:
  const char* p_;
  const char* end_;
};

bool decode(const char* data, size_t size, JournalRecord* record) {
  PayloadReader in(data, size);
  uint8_t kind = 0;
  if (!in.u8(&kind) || !in.string(&record->id)) return false;
  if (kind == static_cast<uint8_t>(JournalRecord::Kind::kForget)) {
    record->kind = JournalRecord::Kind::kForget;
    return in.done();
  }
  if (kind != static_cast<uint8_t>(JournalRecord::Kind::kLearn)) return false;
  record->kind = JournalRecord::Kind::kLearn;
  uint32_t count = 0;
  if (!in.u32(&count) || count > size) return false;
  record->labels.resize(count);
  for (std::string& label : record->labels) {
    if (!in.string(&label)) return false;
  }
  if (!in.u32(&count) || count > size) return false;
  record->terms.resize(count);
  for (JournalTerm& term : record->terms) {
    if (!in.string(&term.term) || !in.u32(&term.count)) return false;
  }
  return in.done();
}

std::string damaged(const std::string& path, uint64_t offset, const std::string& what) {
  return path + ": damaged at byte " + std::to_string(offset) + " (" + what +
         "); the model works without it: move the file aside to open the model without the "
         "documents learned since it was trained (or restore it from a backup)";
}

// Parses `bytes` (the file from `from` on) into `contents`.
void parse(const std::string& path, const std::string& bytes, uint64_t from,
           JournalContents* contents) {
  const char* const data = bytes.data();
  size_t at = 0;
  if (from == 0) {
    if (bytes.size() < kJournalHeaderBytes) {
      if (!bytes.empty()) {
        contents->torn = path + ": ignored an incomplete header (" + std::to_string(bytes.size()) +
                         " bytes, a crash while the journal was created)";
      }
      contents->valid_bytes = 0;
      return;
    }
    if (std::memcmp(data, kJournalMagic, kJournalHeaderBytes) != 0) {
      throw ModelFormatError(damaged(path, 0, "not an autocat journal: wrong magic"));
    }
    at = kJournalHeaderBytes;
  }
  for (;;) {
    contents->valid_bytes = from + at;
    const size_t left = bytes.size() - at;
    if (left == 0) return;
    const uint64_t offset = from + at;
    if (left < 8) {
      contents->torn = path + ": ignored a torn last record at byte " + std::to_string(offset) +
                       " (" + std::to_string(left) + " bytes; a crash while it was written)";
      return;
    }
    const auto* header = reinterpret_cast<const unsigned char*>(data + at);
    const uint32_t size = get_u32(header);
    const uint32_t sum = get_u32(header + 4);
    if (size > kMaxRecordBytes) {
      throw ModelFormatError(damaged(path, offset, "impossible record length"));
    }
    if (size > left - 8) {
      contents->torn = path + ": ignored a torn last record at byte " + std::to_string(offset) +
                       " (" + std::to_string(left) + " of " + std::to_string(size + 8) +
                       " bytes; a crash while it was written)";
      return;
    }
    const char* payload = data + at + 8;
    if (checksum(payload, size) != sum) {
      if (size == left - 8) {
        contents->torn = path + ": ignored a last record failing its checksum at byte " +
                         std::to_string(offset) + " (a crash while it was written)";
        return;
      }
      throw ModelFormatError(damaged(path, offset, "checksum mismatch with records after it"));
    }
    JournalRecord record;
    if (!decode(payload, size, &record)) {
      throw ModelFormatError(damaged(path, offset, "a record that does not parse"));
    }
    contents->records.push_back(std::move(record));
    at += 8 + size;
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

}  // namespace

JournalContents read_journal(const std::string& path, uint64_t from) {
  JournalContents contents;
  Fd file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0) {
    if (errno == ENOENT) return contents;
    throw IOError(path + ": cannot open the journal: " + std::strerror(errno));
  }
  struct stat status {};
  if (::fstat(file.fd, &status) != 0) {
    throw IOError(path + ": cannot read the journal: " + std::strerror(errno));
  }
  contents.file_bytes = uint64_t(status.st_size);
  if (from > contents.file_bytes) {
    throw ModelFormatError(path + ": shorter (" + std::to_string(contents.file_bytes) +
                           " bytes) than when it was read (" + std::to_string(from) +
                           "): it was cut by something other than autocat; reopen the model");
  }
  parse(path, read_from(file.fd, path, from, contents.file_bytes), from, &contents);
  return contents;
}

JournalContents append_journal(const std::string& model_dir, const std::string& expected_model_file,
                               const std::string& path, const std::vector<JournalRecord>& records,
                               bool sync, uint64_t* known_end) {
  const ModelDirLock lock(model_dir, kJournalLockTimeoutMs);
  if (resolve_model_dir(model_dir).model_file != expected_model_file) {
    throw InvalidArgumentError(model_dir +
                               ": the model was trained again since it was opened; nothing "
                               "was learned or forgotten: open it again and repeat");
  }
  crash_point("journal-locked");
  Fd file;
  file.fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (file.fd < 0) {
    throw IOError(path + ": cannot open the journal for writing: " + std::strerror(errno));
  }
  struct stat status {};
  if (::fstat(file.fd, &status) != 0) {
    throw IOError(path + ": cannot read the journal: " + std::strerror(errno));
  }
  const uint64_t size = uint64_t(status.st_size);
  const uint64_t from = *known_end <= size ? *known_end : 0;
  JournalContents contents;
  contents.file_bytes = size;
  parse(path, read_from(file.fd, path, from, size), from, &contents);
  contents.records.clear();  // what others appended is not this caller's business here
  const bool created = contents.valid_bytes == 0;

  std::string bytes;
  if (created) bytes.assign(kJournalMagic, kJournalHeaderBytes);
  for (const JournalRecord& record : records) bytes += encode(record);
  // Cut a torn tail first, so the new records follow complete ones.
  if (contents.valid_bytes != size && ::ftruncate(file.fd, off_t(contents.valid_bytes)) != 0) {
    throw IOError(path + ": cannot cut off the torn last record: " + std::strerror(errno));
  }
  uint64_t at = contents.valid_bytes;
  size_t done = 0;
  // Written in two halves, so that the crash tests can stop between them
  // and leave a torn record, as a crash during the write would.
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
  contents.valid_bytes = contents.file_bytes = at;
  *known_end = at;
  return contents;
}

}  // namespace autocat::internal
