#include "classify/io/spill_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "autocat/error.h"

namespace autocat::internal {

SpillFile::SpillFile(const std::string& dir, std::string_view prefix, std::string contents)
    : dir_(dir), contents_(std::move(contents)) {
  std::string path = dir + "/" + std::string(prefix) + "XXXXXX";
  fd_ = ::mkstemp(path.data());
  if (fd_ < 0) fail("create", errno);
  ::unlink(path.c_str());  // gone with the descriptor, whatever happens
}

SpillFile::~SpillFile() {
  if (fd_ >= 0) ::close(fd_);
}

void SpillFile::fail(const std::string& what, int error) const {
  throw IOError(dir_ + ": cannot " + what + " " + contents_ +
                " temporary file: " + std::strerror(error) +
                " (training needs free disk space about the size of the training database)");
}

void SpillFile::write_at(uint64_t offset, const void* data, size_t bytes) {
  const char* from = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t written = ::pwrite(fd_, from, bytes, static_cast<off_t>(offset));
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) fail("write", written < 0 ? errno : EIO);
    from += written;
    offset += static_cast<uint64_t>(written);
    bytes -= static_cast<size_t>(written);
  }
}

void SpillFile::read_at(uint64_t offset, void* out, size_t bytes) const {
  char* into = static_cast<char*>(out);
  while (bytes > 0) {
    const ssize_t got = ::pread(fd_, into, bytes, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) fail("read", got < 0 ? errno : EIO);
    into += got;
    offset += static_cast<uint64_t>(got);
    bytes -= static_cast<size_t>(got);
  }
}

SpilledStrings::SpilledStrings(std::vector<std::string>* strings, const std::string& dir,
                               std::string_view prefix, std::string contents)
    : strings_(strings), file_(dir, prefix, std::move(contents)) {
  // Written a megabyte or so at a time.
  constexpr size_t kChunkBytes = size_t{1} << 20;
  std::string chunk;
  uint64_t offset = 0;
  const auto flush = [&] {
    file_.write_at(offset, chunk.data(), chunk.size());
    offset += chunk.size();
    chunk.clear();
  };
  lengths_.reserve(strings->size());
  for (const std::string& s : *strings) {
    lengths_.push_back(static_cast<uint32_t>(s.size()));
    chunk += s;
    if (chunk.size() >= kChunkBytes) flush();
  }
  flush();
  std::vector<std::string>().swap(*strings);
}

void SpilledStrings::restore() {
  uint64_t total = 0;
  for (uint32_t length : lengths_) total += length;
  std::string all(total, '\0');
  file_.read_at(0, all.data(), all.size());
  strings_->clear();
  strings_->reserve(lengths_.size());
  uint64_t at = 0;
  for (uint32_t length : lengths_) {
    strings_->emplace_back(all, at, length);
    at += length;
  }
}

}  // namespace autocat::internal
