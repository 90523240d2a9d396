// Reading training input: documents read, checked, analyzed (on a second
// thread) and written to the training collection (or held back until the
// analysis of short texts is chosen), and the short texts kept for that
// choice.
//
// Thread safety: add_documents() and write_held() analyze on a helper
// thread of their own; call them from one thread at a time per collection
// writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "classify/corpus/document_reader.h"
#include "classify/corpus/training_collection.h"
#include "classify/text/analyzer.h"
#include "classify/train/phase_tracker.h"
#include "classify/train/train_report.h"

namespace autocat::internal {

// How much text train keeps in memory for the choice of analysis (kept
// texts, held documents): short texts take little, 64 MB is a million
// tweets.
inline constexpr size_t kMaxKeptTextBytes = size_t{64} << 20;

// The texts train keeps while it reads, to analyze them again for the
// choice of analysis of short texts (TrainOptions::
// choose_short_text_analysis): all of them up to `max_documents`, past
// that a uniform sample of `max_documents` (reservoir sampling, with a
// fixed seed); given up past kMaxKeptTextBytes.
struct KeptTexts {
  struct Text {
    std::string id;
    std::vector<std::string> labels;
    std::string text;
  };
  std::vector<Text> texts;
  size_t bytes = 0;
  size_t max_documents = 0;
  bool complete = true;  // every document written is in `texts`
  bool sampled = false;  // `texts` is a uniform sample of the documents
  uint64_t offered = 0;  // documents offered to keep()
  std::mt19937_64 sampler{1};
  uint64_t written = 0;  // documents written to the collection
  uint64_t tokens = 0;   // their tokens

  void keep(const InputDocument& doc);
  double mean_tokens() const { return written == 0 ? 0.0 : double(tokens) / double(written); }
};

// The documents of a first reading held back from the training collection,
// texts and all, while they look like short texts (TrainOptions::
// choose_short_text_analysis), whose comparison of analyses may replace
// their analysis: then they are written once, under the analysis chosen,
// instead of twice. Holding stops, and what was held is written, once
// kMinShortTextDocuments documents average more than kShortTextMeanTokens
// terms or the texts pass kMaxKeptTextBytes.
struct HeldDocuments {
  std::vector<InputDocument> documents;
  uint64_t tokens = 0;  // their terms under the analysis given
  size_t bytes = 0;     // their texts
  bool holding = true;  // false once written (or never to hold)

  bool short_so_far() const;
};

// Writes the held documents under `analyzer` to `writer` (not committed)
// and stops holding; with `report`, counts them there as add_documents
// does.
void write_held(HeldDocuments* held, const Analyzer& analyzer, TrainingCollectionWriter* writer,
                TrainReport* report = nullptr, const WarningCallback& on_warning = nullptr);

// Reads, analyzes and adds the documents of `inputs` to `writer`. Returns
// the number of labelled documents added. Reading and writing the training
// database run on this thread while another thread analyzes the next chunk
// and builds its documents' terms (the writes are the larger share, so the
// analysis thread takes all it can). Documents are written in input order,
// so the collection is the same as with one thread. With `held` holding,
// documents are held there instead of written, as long as they look like
// short texts (see HeldDocuments); the caller writes what is left held.
uint64_t add_documents(const std::vector<std::string>& inputs, const ReadOptions& read_options,
                       const Analyzer& analyzer, bool keep_unlabelled,
                       TrainingCollectionWriter* writer, TrainReport* report,
                       const WarningCallback& on_warning, PhaseTracker* phases,
                       KeptTexts* kept = nullptr, HeldDocuments* held = nullptr);

}  // namespace autocat::internal
