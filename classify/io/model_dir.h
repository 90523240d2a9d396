// A model directory: which generation holds the model now, and the one
// writer at a time that installs a new one.
//
// Layout: DIR/CURRENT holds the name of one generation directory
// ("gen-000007"); DIR/gen-000007/ holds that model's training database
// (`training`), model file (`model.autocat`) and, once documents are learned
// or forgotten on the open model, its journal (`journal`, see journal.h). A writer builds a new
// generation beside the installed one, flushes it to disk, then switches
// models by renaming a new CURRENT over the old one: a single atomic step,
// so a crash anywhere leaves the old model or the new one, complete.
// Readers resolve CURRENT once and then read only that generation, which
// nothing modifies but journal appends, so they take no lock. The previous generation is kept
// until the next install, so a reader that resolved CURRENT just before a
// switch can still open its files. Directories written before generations
// (DIR/model.autocat + DIR/training) still load; the next `train` or
// `train --add` converts them.
//
// Every path into a model directory goes through resolve_model_dir(); never
// join kModelFileName or kTrainingDbName to a model directory by hand.
//
// Thread safety: resolve_model_dir() may be called from any thread. One
// ModelDirWriter per directory at a time: its lock (flock on
// DIR/autocat.lock) refuses a second, in this process or another. A
// journal append holds the same lock (ModelDirLock) for the append only.
#pragma once

#include <functional>
#include <string>

#include "classify/io/filenames.h"

namespace autocat::internal {

// The files of the model a directory holds.
struct ModelPaths {
  std::string model_file;   // the model file
  std::string training_db;  // the training collection (a Xapian database)
  // kNN's postings as classification reads them (knn.h), written by train;
  // generations from before it have none and rebuild them at load.
  std::string knn_index;
  std::string journal;  // documents learned and forgotten since (may not exist)
};

// The files of the model installed in `model_dir`; they need not exist.
// Throws ModelFormatError naming DIR/CURRENT if it names no generation.
ModelPaths resolve_model_dir(const std::string& model_dir);

// Installs one new model in a directory: takes the lock, cleans up what
// killed runs left, and hands out a fresh generation to write into;
// install() switches to it. Destroyed without install(), it removes the
// generation and the installed model stays as it was.
// Holds DIR/autocat.lock for a short write into the installed generation
// (a journal append), waiting up to `timeout_ms` for a ModelDirWriter or
// another holder to let go. Throws IOError naming the directory if it cannot
// (a train running longer than the timeout: try again once it is done).
// Why `model_dir` (a directory) has no installed model, in words naming
// the missing file: CURRENT gone beside generation directories, the model
// file of the generation CURRENT names, or no model at all. Starts with
// the path that is missing (or `model_dir`), no trailing hint.
std::string missing_model_reason(const std::string& model_dir);

class ModelDirLock {
 public:
  ModelDirLock(const std::string& model_dir, int timeout_ms);
  ~ModelDirLock();
  ModelDirLock(const ModelDirLock&) = delete;
  ModelDirLock& operator=(const ModelDirLock&) = delete;

 private:
  int fd_ = -1;
};

class ModelDirWriter {
 public:
  using Warn = std::function<void(const std::string&)>;

  // Creates `model_dir` if missing. Throws InvalidArgumentError if it is
  // not empty and not an autocat model directory (autocat deletes nothing
  // it did not create), IOError if another writer holds its lock.
  ModelDirWriter(const std::string& model_dir, Warn on_warning);
  ~ModelDirWriter();
  ModelDirWriter(const ModelDirWriter&) = delete;
  ModelDirWriter& operator=(const ModelDirWriter&) = delete;

  // True if a model is installed (model file and training database).
  bool has_model() const { return has_model_; }
  // The installed model's files (in either layout).
  const ModelPaths& current() const { return current_; }
  // Where this run writes its model: a new, empty generation directory.
  const ModelPaths& next() const { return next_; }

  // Flushes the new generation to disk and makes it the installed model in
  // one atomic rename, then removes generations older than the previous
  // one. REQUIRES: next() holds a complete model; called once.
  void install();

 private:
  void remove_leftovers(unsigned keep_a, unsigned keep_b);
  void warn(const std::string& message) const;

  // Closes the lock file (releasing the lock) however the writer ends,
  // including a constructor that throws.
  struct LockFd {
    int fd = -1;
    ~LockFd();
  };

  std::string dir_;
  Warn on_warning_;
  LockFd lock_;
  ModelPaths current_;
  ModelPaths next_;
  bool has_model_ = false;
  bool old_layout_ = false;          // the installed model is DIR/model.autocat + DIR/training
  unsigned current_generation_ = 0;  // 0: none
  unsigned next_generation_ = 0;
  bool installed_ = false;
};

}  // namespace autocat::internal
