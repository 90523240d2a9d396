// End-to-end measurement on 20 Newsgroups bydate: train on split "train",
// classify split "test" with every method, report accuracy, macro-F1 and
// single-thread classification speed (analysis excluded), plus training
// time, model size, analyzer throughput and peak memory.
//
// usage: newsgroups_eval [--data FILE] [--work DIR] [--k N,N,...] [--stemmer LANG]
//                        [--stopwords english|none] [--ngrams 1|2|3] [--gamma G] [--alpha A]
//                        [--repeat R] [--validate] [--reuse]
// --validate chooses settings without looking at the test split: it trains
// on 4/5 of split "train" and evaluates on the other 1/5 instead. --reuse
// keeps the model a previous run left in --work DIR (same options!).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "autocat/error.h"
#include "bench/bench_util.h"
#include "classify/corpus/document_reader.h"
#include "classify/decide/categorizer.h"
#include "classify/io/json_text.h"
#include "classify/metrics/evaluation.h"
#include "classify/train/trainer.h"

namespace fs = std::filesystem;
using autocat::bench::Clock;
using autocat::bench::parse_list;
using autocat::bench::since;
using autocat::internal::Categorizer;
using autocat::internal::DocumentTerms;

namespace {

uint64_t directory_bytes(const fs::path& dir) {
  uint64_t bytes = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) bytes += entry.file_size();
  }
  return bytes;
}

using autocat::bench::TestDoc;

struct RunResult {
  double accuracy, macro_f1, seconds, log_loss;
};

RunResult run(const Categorizer& categorizer, const std::vector<TestDoc>& docs,
              const autocat::ClassifyOptions& options, int repeat) {
  autocat::internal::Evaluation evaluation(categorizer.categories());
  autocat::internal::LogLoss log_loss;
  std::vector<double> times;
  for (int r = 0; r < std::max(repeat, 1); ++r) {
    autocat::internal::Evaluation current(categorizer.categories());
    const auto start = Clock::now();
    for (const TestDoc& doc : docs) {
      const std::vector<double> scores = categorizer.scores(doc.terms, options);
      const std::vector<autocat::Category> chosen = categorizer.decide(scores, options);
      std::vector<uint32_t> assigned;
      for (const auto& category : chosen) {
        assigned.push_back(static_cast<uint32_t>(categorizer.category_index(category.name)));
      }
      current.add(doc.truth, assigned);
    }
    times.push_back(since(start));
    evaluation = current;
  }
  // Log-loss outside the timed loop (the scores are recomputed).
  // Calibrated models (format version 4) give probabilities with every method.
  const bool probabilities =
      options.method && (autocat::internal::gives_probabilities(*options.method) ||
                         !categorizer.model().calibration.empty());
  for (const TestDoc& doc : docs) {
    if (!probabilities || doc.truth.size() != 1) break;
    log_loss.add(categorizer.scores(doc.terms, options), doc.truth.front());
  }
  std::sort(times.begin(), times.end());
  return RunResult{evaluation.accuracy(), evaluation.macro_f1(), times[times.size() / 2],
                   probabilities ? log_loss.value() : -1.0};
}

}  // namespace

int main(int argc, char** argv) try {
  std::string data = std::string(AUTOCAT_SOURCE_DIR) + "/../shared/data/20news-bydate.jsonl.gz";
  std::string work = "/tmp/autocat-newsgroups-bench";
  std::vector<int> ks = {1, 5, 10, 20, 30, 50};
  int repeat = 3;
  bool validate = false;
  bool reuse = false;
  autocat::TrainOptions train_options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw autocat::InvalidArgumentError(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--data")
      data = value();
    else if (arg == "--work")
      work = value();
    else if (arg == "--k")
      ks = parse_list(value());
    else if (arg == "--stemmer")
      train_options.analyzer.stemmer = value();
    else if (arg == "--stopwords")
      train_options.analyzer.stopwords = value();
    else if (arg == "--ngrams")
      train_options.analyzer.ngrams = std::stoi(value());
    else if (arg == "--gamma")
      train_options.rocchio_gamma = std::stod(value());
    else if (arg == "--alpha")
      train_options.nb_alpha = std::stod(value());
    else if (arg == "--svm-c")
      train_options.svm_c = std::stod(value());
    else if (arg == "--logreg-c")
      train_options.logreg_c = std::stod(value());
    else if (arg == "--no-knn")
      ks.clear();
    else if (arg == "--reuse")
      reuse = true;
    else if (arg == "--validate")
      validate = true;
    else if (arg == "--repeat")
      repeat = std::stoi(value());
    else {
      std::cerr
          << "usage: newsgroups_eval [--data FILE] [--work DIR] [--k N,N] [--stemmer L] "
             "[--stopwords S] [--ngrams N] [--gamma G] [--alpha A] [--svm-c C] [--logreg-c C] "
             "[--no-knn] [--repeat R] [--validate]\n";
      return arg == "--help" ? 0 : 2;
    }
  }
  if (!fs::exists(data)) {
    std::cerr << "newsgroups_eval: " << data << ": not found (see ../shared/data/README.md)\n";
    return 1;
  }
  if (!reuse) fs::remove_all(work);
  fs::create_directories(work);
  const std::string model_dir = work + "/model";

  autocat::internal::ReadOptions train_read;
  train_read.split = "train";
  std::string train_input = data, test_split = "test";
  if (validate) {
    // Every fifth training document is held out as the evaluation set.
    fs::create_directories(work);
    train_input = work + "/validation.jsonl";
    std::ofstream out(train_input);
    uint64_t n = 0;
    autocat::internal::read_documents(
        {data}, train_read,
        [&](autocat::internal::InputDocument&& d) {
          std::string line = "{\"id\":";
          autocat::internal::append_json_string(d.id, &line);
          line += ",\"split\":\"";
          line += (n++ % 5 == 4) ? "heldout" : "train";
          line += "\",\"labels\":[";
          autocat::internal::append_json_string(d.labels.at(0), &line);
          line += "],\"text\":";
          autocat::internal::append_json_string(d.text, &line);
          out << line << "}\n";
        },
        nullptr);
    data = train_input;
    test_split = "heldout";
  }
  const auto warn = [](const std::string& message) { std::cerr << "warning: " << message << "\n"; };
  autocat::internal::TrainReport report;
  if (reuse && fs::exists(autocat::internal::resolve_model_dir(model_dir).model_file)) {
    std::printf("reusing the model in %s\n", model_dir.c_str());
  } else {
    report = autocat::internal::train_model({data}, model_dir, train_options, train_read, warn);
  }
  std::printf(
      "training: %llu docs, %u categories, %u terms, %.2f s total (%.2f s read+analyze+"
      "write, %.2f s fit)\n",
      static_cast<unsigned long long>(report.documents), report.categories, report.terms,
      report.total_seconds, report.analyze_seconds, report.fit_seconds);
  std::printf("model directory: %.1f MB (model file %.1f MB)\n", directory_bytes(model_dir) / 1e6,
              fs::file_size(autocat::internal::resolve_model_dir(model_dir).model_file) / 1e6);

  auto load_start = Clock::now();
  const Categorizer categorizer(model_dir);
  const double load_seconds = since(load_start);
  load_start = Clock::now();
  const auto& index = categorizer.knn_index();
  std::printf("model load: %.3f s; kNN index build: %.3f s (%llu postings, %.1f MB)\n",
              load_seconds, since(load_start),
              static_cast<unsigned long long>(index.num_postings()), index.memory_bytes() / 1e6);
  autocat::bench::print_linear_summary(categorizer.model(), model_dir);

  // Read and analyze the test split once; classification is timed alone.
  const std::vector<autocat::internal::InputDocument> raw =
      autocat::bench::read_split(data, test_split, warn);
  std::vector<TestDoc> docs;
  uint64_t bytes = 0;
  const auto analyze_start = Clock::now();
  for (const auto& doc : raw) {
    docs.push_back(autocat::bench::analyzed(categorizer, doc));
    bytes += doc.text.size();
  }
  const double analyze_seconds = since(analyze_start);
  std::printf("evaluated on split '%s'\n", test_split.c_str());
  std::printf("analysis of %zu test docs: %.2f s, %.1f MB/s (%.1f MB)\n\n", docs.size(),
              analyze_seconds, bytes / 1e6 / analyze_seconds, bytes / 1e6);

  std::printf("| method | setting | accuracy | macro-F1 | docs/s (median of %d) |\n", repeat);
  std::printf("|---|---|---:|---:|---:|\n");
  autocat::ClassifyOptions options;
  for (int k : ks) {
    options.method = autocat::Method::kKnn;
    options.k = k;
    const RunResult r = run(categorizer, docs, options, repeat);
    std::printf("| knn | k=%d exact | %.4f | %.4f | %.0f |", k, r.accuracy, r.macro_f1,
                docs.size() / r.seconds);
    if (r.log_loss >= 0) std::printf(" log-loss %.4f", r.log_loss);
    std::printf("\n");
  }
  options = autocat::ClassifyOptions();
  for (int terms : {50, 20, 10}) {
    options.method = autocat::Method::kKnn;
    options.knn_max_query_terms = terms;
    const RunResult r = run(categorizer, docs, options, repeat);
    std::printf("| knn | k=%d pruned: top %d query terms | %.4f | %.4f | %.0f |\n", options.k,
                terms, r.accuracy, r.macro_f1, docs.size() / r.seconds);
  }
  for (autocat::Method method :
       {autocat::Method::kRocchio, autocat::Method::kNaiveBayes,
        autocat::Method::kBernoulliNaiveBayes, autocat::Method::kComplementNaiveBayes,
        autocat::Method::kSvm, autocat::Method::kLogreg, autocat::Method::kCombo}) {
    options = autocat::ClassifyOptions();
    options.method = method;
    const RunResult r = run(categorizer, docs, options, repeat);
    std::printf("| %s | default | %.4f | %.4f | %.0f |", autocat::method_name(method).c_str(),
                r.accuracy, r.macro_f1, docs.size() / r.seconds);
    if (r.log_loss >= 0) std::printf(" log-loss %.4f", r.log_loss);
    std::printf("\n");
  }
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("\npeak memory (max RSS): %.0f MB\n", usage.ru_maxrss / 1024.0);
  return 0;
} catch (const Xapian::Error& e) {
  std::cerr << "newsgroups_eval: " << e.get_description() << "\n";
  return 1;
} catch (const std::exception& e) {
  std::cerr << "newsgroups_eval: " << e.what() << "\n";
  return 1;
}
