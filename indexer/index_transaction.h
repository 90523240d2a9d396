// Writing to an index so that a full disk ends in an error naming it, never
// in an abort.
//
// Xapian 1.4's glass backend writes the last chunk of each changed value
// stream from a destructor (ValueUpdater, inside commit()): when that write
// fails (a full disk), the exception leaves a destructor and std::terminate
// ends the process, and a WritableDatabase destroyed with changes pending
// commits them the same way. So the changes are made inside a Xapian
// transaction (which the database's destructor cancels instead of
// committing), and before each commit room is reserved past the end of the
// postings table, where those writes go (fallocate, keeping the file's
// size): without room the commit is refused before Xapian writes anything.
//
// Thread safety: none; one per WritableDatabase, as Xapian's writer.
#pragma once

#include <xapian.h>

#include <cstdint>
#include <string>

namespace autocat::cli {

// Room reserved past the end of the postings table of the database at
// `db_path` for one commit of about `pending` bytes of changes (see above),
// released (what the commit did not use) when destroyed. Throws IOError
// naming the database when the file system has no room; reserves nothing
// where it cannot (no glass or chert table, no fallocate).
class CommitRoom {
 public:
  CommitRoom(const std::string& db_path, uint64_t pending);
  ~CommitRoom();
  CommitRoom(const CommitRoom&) = delete;
  CommitRoom& operator=(const CommitRoom&) = delete;

 private:
  [[noreturn]] void refuse(const std::string& db_path, int error, uint64_t bytes);

  int fd_ = -1;
  uint64_t start_ = 0;
  uint64_t end_ = 0;
};

class IndexTransaction {
 public:
  // Commits what `db` holds pending (which must touch no value slot), then
  // begins a transaction. `db_path` names the database in messages.
  IndexTransaction(Xapian::WritableDatabase& db, std::string db_path);
  // Cancels what was changed since the last commit.
  ~IndexTransaction();
  IndexTransaction(const IndexTransaction&) = delete;
  IndexTransaction& operator=(const IndexTransaction&) = delete;

  // Counts `bytes` (a document's text, data and values) into what the next
  // commit writes, for the room reserved.
  void changed(uint64_t bytes) { pending_ += bytes; }

  // Commits the changes since the last commit, then begins the next
  // transaction. Throws IOError naming the database, "no space left",
  // when the room is not there, and passes Xapian's errors on; either way
  // those changes are dropped and the database keeps its last commit.
  void commit();

 private:
  void begin();

  Xapian::WritableDatabase& db_;
  std::string db_path_;
  uint64_t pending_ = 0;
  bool active_ = false;
};

// What `doc` adds to a commit, about: its data, values and terms.
uint64_t document_bytes(const Xapian::Document& doc);

}  // namespace autocat::cli
