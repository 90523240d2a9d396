// Small helpers shared by the end-to-end benchmark programs.
#pragma once

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "classify/corpus/document_reader.h"
#include "classify/corpus/training_collection.h"
#include "classify/corpus/weighting.h"
#include "classify/decide/categorizer.h"
#include "classify/io/model_dir.h"
#include "classify/methods/linear.h"
#include "classify/model/model_io.h"

namespace autocat::bench {

using Clock = std::chrono::steady_clock;

// Seconds elapsed since `start`.
inline double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// "1,5,10" -> {1, 5, 10}.
inline std::vector<int> parse_list(const std::string& text) {
  std::vector<int> values;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) values.push_back(std::stoi(item));
  return values;
}

// The C chosen for svm and logreg (with every candidate's cross-validated
// objective), their weights' size, and the time one thread takes to fit each
// on the whole training collection at that C (the last step of training).
inline void print_linear_summary(const internal::ModelState& model, const std::string& model_dir) {
  const auto candidates = [](const std::vector<std::pair<double, double>>& objective) {
    std::string text;
    for (const auto& [c, value] : objective) {
      char buffer[64];
      std::snprintf(buffer, sizeof buffer, "%sC=%g: %.4f", text.empty() ? "" : ", ", c, value);
      text += buffer;
    }
    return text;
  };
  // The model directory's current generation (see model_dir.h).
  const Xapian::Database db(internal::resolve_model_dir(model_dir).training_db);
  const internal::TrainingCorpus corpus = internal::load_training_corpus(db);
  const std::vector<float> idf = internal::compute_idf(model.df, model.num_docs, model.selected);
  for (const auto* linear : {&model.svm, &model.logreg}) {
    const bool svm = linear == &model.svm;
    const auto start = Clock::now();
    const internal::LinearModel refit = internal::train_linear(
        corpus, idf, svm ? internal::LinearLoss::kSquaredHinge : internal::LinearLoss::kLogistic,
        linear->c);
    std::printf(
        "%s: C=%g (%s); %zu non-zero weights, %.1f MB; one-thread fit on all documents: %.2f s\n",
        svm ? "svm" : "logreg", linear->c,
        candidates(svm ? model.svm_c_objective : model.logreg_c_objective).c_str(),
        static_cast<size_t>(linear->num_entries()), linear->weight_bytes() / 1e6, since(start));
    (void)refit;
  }
}

// A test document as the benchmarks classify it: analyzed once, so
// classification is timed alone, with its labels as the model's indexes
// (labels the model does not know are dropped).
struct TestDoc {
  internal::DocumentTerms terms;
  std::vector<uint32_t> truth;
};

// The documents of `split` in `data`, as read (text and labels).
inline std::vector<internal::InputDocument> read_split(const std::string& data,
                                                       const std::string& split,
                                                       const internal::WarningCallback& warn) {
  internal::ReadOptions options;
  options.split = split;
  std::vector<internal::InputDocument> docs;
  internal::read_documents(
      {data}, options, [&](internal::InputDocument&& d) { docs.push_back(std::move(d)); }, warn);
  return docs;
}

inline TestDoc analyzed(const internal::Categorizer& categorizer,
                        const internal::InputDocument& doc) {
  TestDoc test;
  test.terms = categorizer.document_terms(categorizer.analyzer().analyze(doc.text));
  for (const auto& label : doc.labels) {
    const int64_t c = categorizer.category_index(label);
    if (c >= 0) test.truth.push_back(static_cast<uint32_t>(c));
  }
  return test;
}

}  // namespace autocat::bench
