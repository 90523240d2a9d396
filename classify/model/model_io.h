// Saving and loading models: ModelState (model_state.h) archived with
// Boost.Serialization into the model file (model_file.h, whose format
// comment says what lies where), checked on the way in (model_check.h).
// ModelFile opens a file for use and decodes each method's section on its
// first use.
//
// Thread safety: free functions; ModelFile as noted there.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "classify/model/model_check.h"
#include "classify/model/model_file.h"
#include "classify/model/model_state.h"

namespace autocat::internal {

// A model file opened for use: mapped, its header checked, the core decoded
// and checked at construction; each part decoded, checked and moved into
// the given ModelState by load(), once. A version 1 file is decoded whole
// at construction (load() then does nothing). The mapping is kept while
// parts remain to load; model files are never changed in place (a new model
// is a new generation), and a removed file stays mapped.
//
// Thread safety: load() may be called from many threads at once, for the
// same part or others; each part is decoded once (RetryOnce). A part
// that fails to decode or check throws ModelFormatError naming the file
// and the part, leaves the ModelState's member empty, and throws again on
// the next call.
class ModelFile {
 public:
  // Throws NotFoundError (missing) or ModelFormatError (truncated, foreign,
  // corrupted, newer format, inconsistent core). `map_weights`: the linear
  // methods' weights stay in the mapped file (LinearModel::packed_rows),
  // and the mapping lives as long as they do; else they are copied out.
  ModelFile(const std::string& path, ModelState* core, bool map_weights = false);
  ~ModelFile();
  ModelFile(const ModelFile&) = delete;
  ModelFile& operator=(const ModelFile&) = delete;

  // The file's format version (1 or 2).
  uint32_t format_version() const;
  // Decodes `part` into `state` (the ModelState given to the constructor)
  // unless done already.
  void load(ModelPart part, ModelState* state) const;
  void load_all(ModelState* state) const;

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

// Throws IOError if the file cannot be written. `format_version` 1 writes
// the old single-archive layout (for tests of the old reader).
void write_model_file(const std::string& path, const ModelState& state,
                      uint32_t format_version = kModelFormatVersion);
// Writes a model file (format 2) while the model is fitted, so that each
// method's part can be dropped as soon as it is written. `fit` is called
// once, with a function that writes one part of a state (each part exactly
// once, in any order); it returns the finished state, whose core is written
// last. The file appears atomically when `fit` returns, or not at all if
// it throws. Throws IOError if the file cannot be written.
using WritePart = std::function<void(ModelPart, const ModelState&)>;
using FitForWriting = std::function<const ModelState&(const WritePart&)>;
void write_model_file_as_fitted(const std::string& path, const FitForWriting& fit);
// Throws NotFoundError (missing) or ModelFormatError (truncated, foreign,
// corrupted, newer format).
ModelState read_model_file(const std::string& path);
// The same from the file's bytes (`path` names it in errors); for fuzzing.
ModelState parse_model_file(const std::string& path, std::string_view bytes);
// Only the analyzer settings (the first member of ModelState), for callers
// that analyze queries and need nothing else. Same checks and errors.
AnalyzerSettings read_analyzer_settings(const std::string& path);

}  // namespace autocat::internal
