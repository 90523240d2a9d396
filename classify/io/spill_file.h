// A temporary file that holds part of training's data out of memory for a
// while (the postings and the term strings during the linear fits, each
// category's weights until they are packed).
//
// Thread safety: write_at() and read_at() may run on several threads at
// once (positioned reads and writes on one descriptor).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace autocat::internal {

class SpillFile {
 public:
  // Creates the file in `dir`, named `prefix` plus mkstemp's 6 characters,
  // and unlinks it at once: it is gone with the descriptor, even after a
  // crash. `contents` names what it holds in errors ("the training
  // postings'"). Throws IOError naming `dir`.
  SpillFile(const std::string& dir, std::string_view prefix, std::string contents);
  ~SpillFile();
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;

  // Throw IOError naming the directory and asking for free space.
  void write_at(uint64_t offset, const void* data, size_t bytes);
  void read_at(uint64_t offset, void* out, size_t bytes) const;

 private:
  [[noreturn]] void fail(const std::string& what, int error) const;

  std::string dir_;
  std::string contents_;
  int fd_ = -1;
};

// Strings moved out to a SpillFile and back: their lengths stay in memory
// (4 bytes each), their characters wait in the file.
class SpilledStrings {
 public:
  // Writes `strings` to a SpillFile in `dir` (named by `prefix`; `contents`
  // as there) and empties them. Throws IOError (and the strings stay).
  SpilledStrings(std::vector<std::string>* strings, const std::string& dir, std::string_view prefix,
                 std::string contents);
  // Reads the strings back into the vector. Throws IOError.
  void restore();

 private:
  std::vector<std::string>* strings_;
  SpillFile file_;
  std::vector<uint32_t> lengths_;
};

}  // namespace autocat::internal
