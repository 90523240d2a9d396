// Reading training input: documents read, checked, analyzed (on a second
// thread) and written to the training collection, and the short texts kept
// for the choice of analysis.
//
// Thread safety: add_documents() analyzes on one helper thread of its own;
// call it from one thread at a time per collection writer.
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

// Reads, analyzes and adds the documents of `inputs` to `writer`. Returns
// the number of labelled documents added. Reading and writing the training
// database run on this thread while another thread analyzes the next chunk
// and builds its documents' terms (the writes are the larger share, so the
// analysis thread takes all it can). Documents are written in input order,
// so the collection is the same as with one thread.
uint64_t add_documents(const std::vector<std::string>& inputs, const ReadOptions& read_options,
                       const Analyzer& analyzer, bool keep_unlabelled,
                       TrainingCollectionWriter* writer, TrainReport* report,
                       const WarningCallback& on_warning, PhaseTracker* phases,
                       KeptTexts* kept = nullptr);

}  // namespace autocat::internal
