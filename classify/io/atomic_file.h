// Files replaced in one atomic step, and the crash-test hook.
//
// A temporary file is created beside the target with O_CREAT|O_EXCL|
// O_NOFOLLOW under an unpredictable name (what mkstemp does, but with the
// usual 0666 & ~umask permissions instead of 0600), written, fsynced and
// renamed over the target; the directory is fsynced after. Readers, and a
// crash at any point, see the old file or the new one, never part of one; a
// symlink planted at the target or at a temporary name is never followed.
//
// Thread safety: free functions; concurrent writers of one path each use
// their own temporary file and the last rename wins.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace autocat::internal {

// Suffix of temporary files: "<name>.tmp-" + 6 random letters or digits.
inline constexpr std::string_view kTemporaryInfix = ".tmp-";

// Writes the concatenation of `pieces` to `path` atomically (see above).
// Throws IOError starting with `path`, then "cannot write <what>: <reason>".
void write_file_atomically(const std::string& path, const std::vector<std::string_view>& pieces,
                           const std::string& what);

// Where a streamed atomic write (below) puts its bytes: appended at the
// end, or written over bytes already appended (a header whose lengths and
// checksums are known only at the end).
class AtomicFileSink {
 public:
  virtual ~AtomicFileSink() = default;
  virtual void append(std::string_view bytes) = 0;
  // REQUIRES: offset + bytes.size() <= size().
  virtual void overwrite(uint64_t offset, std::string_view bytes) = 0;
  virtual uint64_t size() const = 0;
};

// The same atomic replacement, for a file too large to build in memory
// first: `write` streams the content into the sink. An exception from
// `write` leaves `path` as it was and removes the temporary file; an
// IOError from the directory's fsync comes after the rename (`path` is
// the new file then).
void write_file_atomically(const std::string& path,
                           const std::function<void(AtomicFileSink&)>& write,
                           const std::string& what);

// True if `name` (a file name, no directory) is a temporary file that
// write_file_atomically created for the file named `target`.
bool is_temporary_file_of(std::string_view name, std::string_view target);

// fsyncs the directory `dir`, so the renames and removals in it survive a
// power loss. Throws IOError naming `dir`.
void sync_directory(const std::string& dir);

// fsyncs every file and directory under `root` (and `root` itself).
// Throws IOError naming the first path that fails.
void sync_tree(const std::string& root);

// Copies the directory `from` (regular files and subdirectories) to `to`,
// which must not exist. Throws IOError naming the file that failed and the
// OS's reason (a full disk says so: ENOSPC, not the "Input/output error"
// std::filesystem::copy reports for a short write).
void copy_directory(const std::string& from, const std::string& to);

// Test hook at a named step of a write. The environment variable
// AUTOCAT_CRASH_AT selects one step and what happens there:
//   "STEP"        the process kills itself with SIGKILL, exactly as if it
//                 had been killed there (no destructor, no cleanup);
//   "STEP:fail"   throws IOError("test failure injected at STEP");
//   "STEP:pause"  sleeps 500 ms (to make two runs overlap).
// Costs one getenv when unset. Only a build configured with
// AUTOCAT_CRASH_POINTS=ON (the default where the tests are built) obeys it;
// in any other build this does nothing.
void crash_point(std::string_view step);

}  // namespace autocat::internal
