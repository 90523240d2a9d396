#include "indexer/index_transaction.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "autocat/error.h"
#include "classify/corpus/training_collection.h"

namespace autocat::cli {

namespace {

// Room reserved past the postings table's end for a commit: what the
// changes hold, four times over (a value chunk is rewritten whole, and each
// changed B-tree block goes to a new place), and 64 KiB for the blocks
// on the way to them.
uint64_t room_for(uint64_t pending) { return 4 * pending + (uint64_t{1} << 16); }

}  // namespace

CommitRoom::CommitRoom(const std::string& db_path, uint64_t pending) {
  const uint64_t bytes = room_for(pending);
  for (const char* table : {"/postlist.glass", "/postlist.DB"}) {
    fd_ = ::open((db_path + table).c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ >= 0) break;
  }
  struct stat status {};
  if (fd_ < 0 || ::fstat(fd_, &status) != 0) return;
  start_ = uint64_t(status.st_size);
  // fallocate ignores the file size limit, which the writes then meet.
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      start_ + bytes > uint64_t(limit.rlim_cur)) {
    refuse(db_path, EFBIG, bytes);
  }
  if (::fallocate(fd_, FALLOC_FL_KEEP_SIZE, off_t(start_), off_t(bytes)) == 0) {
    end_ = start_ + bytes;
    return;
  }
  const int error = errno;
  if (error == ENOSPC || error == EDQUOT || error == EFBIG) refuse(db_path, error, bytes);
}

CommitRoom::~CommitRoom() {
  if (fd_ < 0) return;
  struct stat status {};
  if (end_ != 0 && ::fstat(fd_, &status) == 0 && uint64_t(status.st_size) < end_) {
    const uint64_t from = std::max<uint64_t>(start_, uint64_t(status.st_size));
    [[maybe_unused]] const int ignored = ::fallocate(
        fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off_t(from), off_t(end_ - from));
  }
  ::close(fd_);
}

void CommitRoom::refuse(const std::string& db_path, int error, uint64_t bytes) {
  ::close(fd_);
  fd_ = -1;
  throw IOError(db_path + ": cannot commit: " + std::strerror(error) + " (it needs about " +
                std::to_string((bytes + 1023) >> 10) +
                " KiB); nothing of it was written, the database keeps its last commit: free "
                "space (or raise the file size limit) and run again");
}

uint64_t document_bytes(const Xapian::Document& doc) {
  uint64_t bytes = doc.get_data().size();
  for (auto it = doc.values_begin(); it != doc.values_end(); ++it) bytes += (*it).size() + 8;
  for (auto it = doc.termlist_begin(); it != doc.termlist_end(); ++it) bytes += (*it).size() + 8;
  return bytes;
}

IndexTransaction::IndexTransaction(Xapian::WritableDatabase& db, std::string db_path)
    : db_(db), db_path_(std::move(db_path)) {
  try {
    begin();
  } catch (const Xapian::Error& e) {
    throw IOError(db_path_ + ": cannot commit: " + internal::xapian_reason(e) +
                  "; the database keeps its last commit: free space and run again");
  }
}

IndexTransaction::~IndexTransaction() {
  if (!active_) return;
  try {
    db_.cancel_transaction();
  } catch (const Xapian::Error&) {
    // The database was closed by a failed commit: nothing is pending.
  }
}

void IndexTransaction::begin() {
  db_.begin_transaction(/*flushed=*/true);
  active_ = true;
  pending_ = 0;
}

void IndexTransaction::commit() {
  std::string failure;
  try {
    const CommitRoom room(db_path_, pending_);
    active_ = false;
    db_.commit_transaction();
  } catch (const Xapian::Error& e) {
    failure = db_path_ + ": cannot commit: " + internal::xapian_reason(e) +
              "; the database keeps its last commit";
  } catch (const Error& e) {
    failure = e.what();
  }
  if (!failure.empty() && active_) {
    active_ = false;
    db_.cancel_transaction();  // drops the changes, writes nothing
  }
  try {
    begin();
  } catch (const Xapian::Error&) {
    // Closed by a failed commit: the error below says why.
    if (failure.empty()) throw;
  }
  if (!failure.empty()) throw IOError(failure);
}

}  // namespace autocat::cli
