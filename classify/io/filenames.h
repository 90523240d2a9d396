// The names of the files in a model directory, in one place: the directory
// code (model_dir.h) that cleans up after killed runs must know every file
// the layers above write there.
//
// DIR/CURRENT                  which generation is installed
// DIR/autocat.lock             the writers' lock
// DIR/gen-NNNNNN/model.autocat the model file (model/model_file.h)
// DIR/gen-NNNNNN/training      the training collection, a Xapian database
// DIR/gen-NNNNNN/knn.index     kNN's postings (methods/knn_index_file.h)
// DIR/gen-NNNNNN/journal       documents learned and forgotten since (io/journal.h)
//
// Thread safety: constants only.
#pragma once

#include <string>
#include <string_view>

namespace autocat::internal {

inline const std::string kCurrentFileName = "CURRENT";
inline const std::string kLockFileName = "autocat.lock";
inline const std::string kJournalFileName = "journal";
inline const std::string kModelFileName = "model.autocat";
inline const std::string kTrainingDbName = "training";
// Inside a new generation while train compares analyses of short texts
// (TrainOptions::choose_short_text_analysis): one candidate's collection.
inline const std::string kCandidateDbName = "training.candidate";
inline const std::string kKnnIndexFileName = "knn.index";

// The spill files training makes in a new generation (SpillFile,
// io/spill_file.h) are named by a prefix, one per kind, plus mkstemp's 6
// characters: the postings and the term strings during the linear fits
// (SpilledPostings, SpilledStrings), the linear weights until they are
// packed. Each is unlinked as soon as it is open, but a process killed in
// between leaves it behind: is_spill_file() lets the next train remove it.
inline constexpr std::string_view kSpillFilePrefix = "postings.spill-";
inline constexpr std::string_view kWeightsSpillFilePrefix = "weights.spill-";
inline constexpr std::string_view kTermsSpillFilePrefix = "terms.spill-";
inline bool is_spill_file(std::string_view name) {
  for (const std::string_view prefix :
       {kSpillFilePrefix, kWeightsSpillFilePrefix, kTermsSpillFilePrefix}) {
    if (name.size() == prefix.size() + 6 && name.compare(0, prefix.size(), prefix) == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace autocat::internal
