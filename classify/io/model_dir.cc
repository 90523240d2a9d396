#include "classify/io/model_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "autocat/error.h"
#include "classify/io/atomic_file.h"
#include "classify/io/filenames.h"

namespace autocat::internal {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kGenerationPrefix = "gen-";
// Collections of autocat versions before generations were built here.
const std::string kOldNewTrainingDbName = kTrainingDbName + ".new";

std::string generation_name(unsigned number) {
  std::string digits = std::to_string(number);
  if (digits.size() < 6) digits.insert(0, 6 - digits.size(), '0');
  return std::string(kGenerationPrefix) + digits;
}

// The number of a generation directory's name, or 0 if `name` is not one.
unsigned generation_number(const std::string& name) {
  if (name.size() < kGenerationPrefix.size() + 6 || name.size() > kGenerationPrefix.size() + 9 ||
      name.compare(0, kGenerationPrefix.size(), kGenerationPrefix) != 0) {
    return 0;
  }
  unsigned number = 0;
  for (size_t i = kGenerationPrefix.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return 0;
    number = number * 10 + static_cast<unsigned>(name[i] - '0');
  }
  return number;
}

ModelPaths paths_in(const fs::path& dir) {
  return ModelPaths{(dir / kModelFileName).string(), (dir / kTrainingDbName).string(),
                    (dir / kKnnIndexFileName).string(), (dir / kJournalFileName).string()};
}

// The generation CURRENT names, or 0 if there is no CURRENT.
unsigned read_current(const fs::path& dir) {
  const fs::path current = dir / kCurrentFileName;
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(current, ec);
  if (!fs::exists(status)) return 0;
  std::string name;
  if (fs::is_regular_file(status)) {
    std::ifstream in(current);
    std::getline(in, name);
  }
  const unsigned number = generation_number(name);
  if (number == 0) {
    throw ModelFormatError(current.string() +
                           ": does not name a model generation (gen-NNNNNN); train the model "
                           "again with autocat train --model " +
                           dir.string() + " INPUT...");
  }
  return number;
}

// Files a Xapian database consists of (glass, and chert for old ones),
// with v.tmp, the version file of a commit in progress.
bool is_xapian_file(const std::string& name) {
  auto ends_with = [&](std::string_view tail) {
    return name.size() > tail.size() &&
           name.compare(name.size() - tail.size(), tail.size(), tail.data(), tail.size()) == 0;
  };
  return name == "flintlock" || name == "v.tmp" || name.rfind("iamglass", 0) == 0 ||
         name.rfind("iamchert", 0) == 0 || ends_with(".glass") || ends_with(".DB") ||
         ends_with(".baseA") || ends_with(".baseB");
}

// Removes the entries of `dir` that `ours` accepts, then `dir` itself if
// that left it empty. Returns false if something autocat did not create
// kept it (it is left in place).
bool remove_ours(const fs::path& dir, const std::function<bool(const fs::directory_entry&)>& ours) {
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(dir, ec)))
    return !fs::exists(fs::symlink_status(dir, ec));
  std::vector<fs::path> doomed;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (ours(entry)) doomed.push_back(entry.path());
  }
  for (const fs::path& path : doomed) {
    if (fs::is_directory(fs::symlink_status(path, ec))) continue;  // handled by `ours`
    fs::remove(path, ec);
  }
  return fs::remove(dir, ec) && !ec;
}

bool remove_xapian_database(const fs::path& dir) {
  return remove_ours(dir, [](const fs::directory_entry& entry) {
    std::error_code ec;
    return entry.is_regular_file(ec) && !entry.is_symlink(ec) &&
           is_xapian_file(entry.path().filename().string());
  });
}

bool remove_generation(const fs::path& dir) {
  return remove_ours(dir, [](const fs::directory_entry& entry) {
    std::error_code ec;
    const std::string name = entry.path().filename().string();
    if ((name == kTrainingDbName || name == kCandidateDbName) && entry.is_directory(ec) &&
        !entry.is_symlink(ec)) {
      remove_xapian_database(entry.path());
      return false;  // removed (or kept) already
    }
    return !entry.is_directory(ec) &&
           (name == kModelFileName || name == kJournalFileName || name == kKnnIndexFileName ||
            is_temporary_file_of(name, kModelFileName) ||
            is_temporary_file_of(name, kKnnIndexFileName) ||
            is_temporary_file_of(name, kCurrentFileName) || is_spill_file(name));
  });
}

// Temporary model files of autocat versions before generations:
// model.autocat.tmp.<pid>.
bool is_old_temporary_model_file(const std::string& name) {
  const std::string prefix = kModelFileName + ".tmp.";
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return false;
  return name.find_first_not_of("0123456789", prefix.size()) == std::string::npos;
}

}  // namespace

ModelPaths resolve_model_dir(const std::string& model_dir) {
  const fs::path dir(model_dir);
  const unsigned current = read_current(dir);
  return current == 0 ? paths_in(dir) : paths_in(dir / generation_name(current));
}

std::string missing_model_reason(const std::string& model_dir) {
  const fs::path dir(model_dir);
  std::error_code ec;
  if (!fs::exists(dir / kCurrentFileName, ec)) {
    unsigned newest = 0;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
      newest = std::max(newest, generation_number(entry.path().filename().string()));
    }
    if (newest != 0) {
      return (dir / kCurrentFileName).string() +
             " is missing: it names the installed generation (the newest here is " +
             generation_name(newest) + "); write that name into it to install it again";
    }
    if (!fs::exists(dir / kModelFileName, ec)) {
      return model_dir + ": no model here (" + kModelFileName + " missing)";
    }
  }
  return resolve_model_dir(model_dir).model_file + " is missing";
}

ModelDirLock::ModelDirLock(const std::string& model_dir, int timeout_ms) {
  const std::string lock_path = (fs::path(model_dir) / kLockFileName).string();
  fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (fd_ < 0) {
    throw IOError(lock_path +
                  ": cannot open the model directory's lock file: " + std::strerror(errno));
  }
  // Polled rather than blocking, so that a train holding the lock for
  // minutes turns into an error instead of a hang.
  constexpr int kPollMs = 2;
  for (int waited = 0;; waited += kPollMs) {
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
    const int error = errno;
    if (error != EWOULDBLOCK || waited >= timeout_ms) {
      ::close(fd_);
      fd_ = -1;
      if (error == EWOULDBLOCK) {
        throw IOError(model_dir + ": an autocat train is writing this model directory (its lock " +
                      "was held for " + std::to_string(timeout_ms / 1000) +
                      " s); nothing was learned: try again once it is done, then reopen the "
                      "model");
      }
      throw IOError(lock_path + ": cannot lock the model directory: " + std::strerror(error));
    }
    ::usleep(kPollMs * 1000);
  }
}

ModelDirLock::~ModelDirLock() {
  if (fd_ >= 0) ::close(fd_);
}

ModelDirWriter::ModelDirWriter(const std::string& model_dir, Warn on_warning)
    : dir_(model_dir), on_warning_(std::move(on_warning)) {
  const fs::path dir(model_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec)) {
    throw IOError(model_dir + ": cannot create model directory: " +
                  (ec ? ec.message() : std::string("not a directory")));
  }
  // Only ever write into (and clean up) a directory autocat made.
  std::string foreign;
  bool ours = false;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == kCurrentFileName || name == kModelFileName || name == kLockFileName) ours = true;
    if (foreign.empty()) foreign = name;
  }
  if (!ours && !foreign.empty()) {
    throw InvalidArgumentError(model_dir + ": not an autocat model directory (it holds '" +
                               foreign + "' but no model); train into a new or empty directory");
  }

  const std::string lock_path = (dir / kLockFileName).string();
  lock_.fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (lock_.fd < 0) {
    throw IOError(lock_path +
                  ": cannot create the model directory's lock file: " + std::strerror(errno));
  }
  // The lock is released when the descriptor closes, also when the process
  // is killed; the lock file itself stays (removing it would race).
  if (::flock(lock_.fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    if (error == EWOULDBLOCK) {
      throw IOError(model_dir +
                    ": another autocat train is writing this model directory; wait for it to "
                    "finish, then run again");
    }
    throw IOError(lock_path + ": cannot lock the model directory: " + std::strerror(error));
  }
  crash_point("locked");

  // CURRENT is only ever renamed in complete, so one that names no
  // generation was edited by hand: refused, left for the user.
  current_generation_ = read_current(dir);
  current_ = current_generation_ == 0 ? paths_in(dir)
                                      : paths_in(dir / generation_name(current_generation_));
  old_layout_ = current_generation_ == 0;
  has_model_ =
      fs::is_regular_file(current_.model_file, ec) && fs::is_directory(current_.training_db, ec);

  // What killed runs left: unfinished generations, temporary files, and the
  // half-built collection of versions before generations.
  unsigned previous = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const unsigned number = generation_number(entry.path().filename().string());
    if (number < current_generation_ && number > previous) previous = number;
  }
  remove_leftovers(current_generation_, previous);
  if (!remove_xapian_database(dir / kOldNewTrainingDbName)) {
    warn((dir / kOldNewTrainingDbName).string() +
         ": left in place: it holds files autocat did not create");
  }

  unsigned highest = current_generation_;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    highest = std::max(highest, generation_number(entry.path().filename().string()));
  }
  next_generation_ = highest + 1;
  const fs::path next_dir = dir / generation_name(next_generation_);
  if (!fs::create_directory(next_dir, ec)) {
    throw IOError(next_dir.string() + ": cannot create the new model generation: " +
                  (ec ? ec.message() : std::string("it exists")));
  }
  next_ = paths_in(next_dir);
}

ModelDirWriter::~ModelDirWriter() {
  if (!installed_ && next_generation_ != 0) {
    remove_generation(fs::path(dir_) / generation_name(next_generation_));
  }
}

ModelDirWriter::LockFd::~LockFd() {
  if (fd >= 0) ::close(fd);
}

void ModelDirWriter::install() {
  const fs::path dir(dir_);
  const std::string generation = generation_name(next_generation_);
  // Everything of the new model reaches the disk before the pointer to it.
  sync_tree((dir / generation).string());
  crash_point("generation-synced");
  try {
    write_file_atomically((dir / kCurrentFileName).string(), {generation + "\n"},
                          "the model pointer");
  } catch (const std::exception&) {
    // An error after the rename (the directory's fsync): CURRENT names the
    // new generation, which must then stay.
    try {
      installed_ = read_current(dir) == next_generation_;
    } catch (const std::exception&) {
      // CURRENT unreadable: the error above says enough.
    }
    throw;
  }
  installed_ = true;
  crash_point("switched");

  remove_leftovers(next_generation_, current_generation_);
  if (old_layout_ && has_model_) {
    // The model in the layout before generations is now unreferenced.
    std::error_code ec;
    fs::remove(dir / kModelFileName, ec);
    fs::remove(dir / kJournalFileName, ec);
    if (!remove_xapian_database(dir / kTrainingDbName)) {
      warn((dir / kTrainingDbName).string() +
           ": left in place: it holds files autocat did not create");
    }
  }
}

void ModelDirWriter::remove_leftovers(unsigned keep_a, unsigned keep_b) {
  const fs::path dir(dir_);
  std::error_code ec;
  std::vector<fs::path> generations, temporaries;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const unsigned number = generation_number(name);
    if (number != 0 && number != keep_a && number != keep_b && entry.is_directory(ec) &&
        !entry.is_symlink(ec)) {
      generations.push_back(entry.path());
    }
    // Only the lock holder writes these, so any found now are a killed run's.
    if (entry.is_regular_file(ec) && !entry.is_symlink(ec) &&
        (is_temporary_file_of(name, kCurrentFileName) ||
         is_temporary_file_of(name, kModelFileName) || is_old_temporary_model_file(name))) {
      temporaries.push_back(entry.path());
    }
  }
  for (const fs::path& path : temporaries) fs::remove(path, ec);
  for (const fs::path& path : generations) {
    if (!remove_generation(path)) {
      warn(path.string() + ": left in place: it holds files autocat did not create");
    }
  }
}

void ModelDirWriter::warn(const std::string& message) const {
  if (on_warning_) on_warning_(message);
}

}  // namespace autocat::internal
