#include "classify/io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string_view>
#include <thread>
#include <vector>

#include "autocat/error.h"

namespace autocat::internal {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSuffixAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
constexpr size_t kSuffixLength = 6;

std::string random_suffix() {
  // random_device reads getrandom(): not predictable from the pid or time.
  std::random_device device;
  std::uniform_int_distribution<size_t> pick(0, kSuffixAlphabet.size() - 1);
  std::string suffix;
  for (size_t i = 0; i < kSuffixLength; ++i) suffix += kSuffixAlphabet[pick(device)];
  return suffix;
}

// Closes a descriptor and removes a temporary file unless released.
class TemporaryFile {
 public:
  TemporaryFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // Closes the descriptor; returns false (errno set) if close failed.
  bool close() {
    const int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0;
  }
  void release() { path_.clear(); }

 private:
  int fd_;
  std::string path_;
};

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t written = ::write(fd, data.data(), data.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

[[noreturn]] void fail(const std::string& path, const std::string& what, int error) {
  // A full disk (or a file size limit, or a quota) is the usual cause: say what to do.
  const bool no_room = error == ENOSPC || error == EFBIG || error == EDQUOT;
  throw IOError(path + ": cannot write " + what + ": " + std::strerror(error) +
                (no_room ? "; free space (or raise the limit) and run again" : ""));
}

void copy_file_contents(const std::string& from, const std::string& to) {
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw IOError(from + ": cannot read it to copy it: " + std::strerror(errno));
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (out < 0) {
    const int error = errno;
    ::close(in);
    throw IOError(to + ": cannot create it: " + std::strerror(error));
  }
  std::vector<char> buffer(1 << 16);
  int error = 0;
  bool reading = false;
  for (;;) {
    const ssize_t got = ::read(in, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      if (got < 0) {
        error = errno;
        reading = true;
      }
      break;
    }
    if (!write_all(out, std::string_view(buffer.data(), size_t(got)))) {
      error = errno;
      break;
    }
  }
  ::close(in);
  if (::close(out) != 0 && error == 0) error = errno;
  if (error == 0) return;
  if (reading) throw IOError(from + ": cannot read it to copy it: " + std::strerror(error));
  fail(to, "the copy", error);
}

void sync_path(const std::string& path, bool directory) {
  const int fd =
      ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | (directory ? O_DIRECTORY : 0));
  if (fd < 0 || ::fsync(fd) != 0) {
    const int error = errno;
    if (fd >= 0) ::close(fd);
    throw IOError(path + ": cannot flush to disk: " + std::strerror(error));
  }
  ::close(fd);
}

}  // namespace

namespace {

class FileSink : public AtomicFileSink {
 public:
  FileSink(int fd, const std::string& path, const std::string& what)
      : fd_(fd), path_(path), what_(what) {}
  void append(std::string_view bytes) override {
    if (!write_all(fd_, bytes)) fail(path_, what_, errno);
    size_ += bytes.size();
  }
  void overwrite(uint64_t offset, std::string_view bytes) override {
    if (offset > size_ || bytes.size() > size_ - offset) {
      throw IOError(path_ + ": cannot write " + what_ + ": overwrite beyond the end");
    }
    while (!bytes.empty()) {
      const ssize_t written = ::pwrite(fd_, bytes.data(), bytes.size(), static_cast<off_t>(offset));
      if (written < 0) {
        if (errno == EINTR) continue;
        fail(path_, what_, errno);
      }
      bytes.remove_prefix(static_cast<size_t>(written));
      offset += static_cast<uint64_t>(written);
    }
  }
  uint64_t size() const override { return size_; }

 private:
  int fd_;
  const std::string& path_;
  const std::string& what_;
  uint64_t size_ = 0;
};

}  // namespace

void write_file_atomically(const std::string& path,
                           const std::function<void(AtomicFileSink&)>& write,
                           const std::string& what) {
  const fs::path target(path);
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  int fd = -1;
  std::string temporary;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temporary = path + std::string(kTemporaryInfix) + random_suffix();
    fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) fail(path, what, errno);
  }
  if (fd < 0) fail(path, what, EEXIST);
  TemporaryFile file(fd, temporary);
  FileSink sink(file.fd(), path, what);
  write(sink);
  if (::fsync(file.fd()) != 0) fail(path, what, errno);
  if (!file.close()) fail(path, what, errno);
  crash_point("rename:" + target.filename().string());
  if (::rename(temporary.c_str(), path.c_str()) != 0) fail(path, what, errno);
  file.release();
  crash_point("renamed:" + target.filename().string());
  sync_directory(parent.string());
}

void write_file_atomically(const std::string& path, const std::vector<std::string_view>& pieces,
                           const std::string& what) {
  write_file_atomically(
      path,
      [&](AtomicFileSink& sink) {
        for (std::string_view piece : pieces) sink.append(piece);
      },
      what);
}

bool is_temporary_file_of(std::string_view name, std::string_view target) {
  if (name.size() != target.size() + kTemporaryInfix.size() + kSuffixLength) return false;
  if (name.substr(0, target.size()) != target) return false;
  if (name.substr(target.size(), kTemporaryInfix.size()) != kTemporaryInfix) return false;
  for (char c : name.substr(target.size() + kTemporaryInfix.size())) {
    if (kSuffixAlphabet.find(c) == std::string_view::npos) return false;
  }
  return true;
}

void sync_directory(const std::string& dir) { sync_path(dir, /*directory=*/true); }

void sync_tree(const std::string& root) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::file_status status = it->symlink_status(ec);
    if (ec) break;
    if (fs::is_regular_file(status)) sync_path(it->path().string(), /*directory=*/false);
    if (fs::is_directory(status)) sync_path(it->path().string(), /*directory=*/true);
  }
  if (ec) throw IOError(root + ": cannot flush to disk: " + ec.message());
  sync_directory(root);
}

void copy_directory(const std::string& from, const std::string& to) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::create_directory(to, ec) || ec) {
    throw IOError(to + ": cannot create the directory: " +
                  (ec ? ec.message() : std::string("it exists already")));
  }
  for (const fs::directory_entry& entry : fs::directory_iterator(from)) {
    const std::string target = (fs::path(to) / entry.path().filename()).string();
    if (entry.is_directory()) {
      copy_directory(entry.path().string(), target);
    } else if (entry.is_regular_file()) {
      copy_file_contents(entry.path().string(), target);
    }
  }
}

void crash_point(std::string_view step) {
#ifndef AUTOCAT_CRASH_POINTS
  // A build to install: the environment cannot make it kill itself.
  static_cast<void>(step);
  return;
#else
  const char* setting = std::getenv("AUTOCAT_CRASH_AT");
  if (setting == nullptr) return;
  const std::string_view wanted(setting);
  if (wanted.substr(0, step.size()) != step) return;
  const std::string_view action = wanted.substr(step.size());
  if (action.empty()) ::raise(SIGKILL);
  if (action == ":fail") throw IOError("test failure injected at " + std::string(step));
  if (action == ":pause") std::this_thread::sleep_for(std::chrono::milliseconds(500));
#endif
}

}  // namespace autocat::internal
