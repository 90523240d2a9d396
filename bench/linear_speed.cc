// Linear models alone on 20 Newsgroups (or any labelled JSONL with a
// train/test split): one-thread fit time per loss and C, weight sizes, and
// classification speed (scoring + probabilities, analysis excluded).
//   bench/linear_speed [--data FILE] [--svm-c 0.3,1,3] [--logreg-c 10,30] [--repeat 5]
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "autocat/error.h"
#include "classify/corpus/document_reader.h"
#include "classify/corpus/training_collection.h"
#include "classify/corpus/weighting.h"
#include "classify/methods/linear.h"
#include "classify/text/analyzer.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace autocat::internal;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// CPU seconds of this thread: on a loaded machine, closer to the work done
// than wall time.
double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return double(now.tv_sec) + 1e-9 * double(now.tv_nsec);
}

std::vector<double> parse_doubles(const std::string& text) {
  std::vector<double> values;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) values.push_back(std::stod(item));
  return values;
}

struct LabelledDoc {
  std::vector<Token> tokens;
  std::vector<std::string> labels;
};

std::vector<LabelledDoc> read_split(const std::string& data, const std::string& split,
                                    const Analyzer& analyzer) {
  ReadOptions options;
  options.split = split;
  std::vector<LabelledDoc> docs;
  read_documents(
      {data}, options,
      [&](InputDocument&& doc) {
        docs.push_back({analyzer.analyze(doc.text), doc.labels});
      },
      nullptr);
  return docs;
}

}  // namespace

int main(int argc, char** argv) try {
  std::string data = std::string(AUTOCAT_SOURCE_DIR) + "/../shared/data/20news-bydate.jsonl.gz";
  std::vector<double> svm_cs = {1.0}, logreg_cs = {30.0};
  int repeat = 5;
  std::vector<double> prune_fractions;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw autocat::InvalidArgumentError(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--data") {
      data = value();
    } else if (arg == "--svm-c") {
      svm_cs = parse_doubles(value());
    } else if (arg == "--logreg-c") {
      logreg_cs = parse_doubles(value());
    } else if (arg == "--prune") {
      prune_fractions = parse_doubles(value());
    } else if (arg == "--repeat") {
      repeat = std::stoi(value());
    } else {
      std::cerr << "usage: linear_speed [--data FILE] [--svm-c C,C] [--logreg-c C,C] "
                   "[--repeat R] [--prune F,F]\n";
      return arg == "--help" ? 0 : 2;
    }
  }
  if (!std::filesystem::exists(data)) {
    std::cerr << "linear_speed: " << data << ": not found (see ../shared/data/README.md)\n";
    return 1;
  }
  const Analyzer analyzer{AnalyzerSettings()};
  const std::vector<LabelledDoc> train = read_split(data, "train", analyzer);
  const std::vector<LabelledDoc> test = read_split(data, "test", analyzer);
  std::vector<LabelledTerms> labelled;
  for (const LabelledDoc& doc : train) {
    LabelledTerms terms;
    for (const Token& token : doc.tokens) terms.terms.push_back(token.term);
    terms.labels = doc.labels;
    labelled.push_back(std::move(terms));
  }
  const TrainingCorpus corpus = make_training_corpus(labelled);
  const std::vector<float> idf = compute_idf(corpus.df, corpus.num_docs(), {});
  const Vocabulary vocabulary(corpus.terms);
  std::vector<DocumentTerms> test_docs;
  std::vector<int64_t> test_truth;  // one-of: the first label's index, -1 if unknown
  for (const LabelledDoc& doc : test) {
    test_docs.push_back(make_document_terms(vocabulary, doc.tokens));
    const std::string label = doc.labels.empty() ? std::string() : doc.labels.front();
    const auto it = std::lower_bound(corpus.categories.begin(), corpus.categories.end(), label);
    test_truth.push_back(
        it != corpus.categories.end() && *it == label ? it - corpus.categories.begin() : -1);
  }
  // Share of test documents whose best-scoring category is their first label.
  const auto accuracy = [&](const LinearModel& model) {
    std::vector<double> values;
    size_t right = 0;
    for (size_t d = 0; d < test_docs.size(); ++d) {
      linear_decision_values(model, idf, test_docs[d], &values);
      const auto best = std::max_element(values.begin(), values.end()) - values.begin();
      if (!test_docs[d].terms.empty() && best == test_truth[d]) ++right;
    }
    return double(right) / double(test_docs.size());
  };
  std::printf("%u training docs, %u terms, %u categories; %zu test docs\n", corpus.num_docs(),
              corpus.num_terms(), corpus.num_categories(), test_docs.size());

  auto start = Clock::now();
  const LinearProblem problem = make_linear_problem(corpus, idf);
  std::printf("problem: %.2f s, %zu non-zeros\n", since(start),
              static_cast<size_t>(problem.num_entries()));

  for (const LinearLoss loss : {LinearLoss::kSquaredHinge, LinearLoss::kLogistic}) {
    const char* name = loss == LinearLoss::kSquaredHinge ? "svm" : "logreg";
    const std::vector<double>& cs = loss == LinearLoss::kSquaredHinge ? svm_cs : logreg_cs;
    start = Clock::now();
    const double cpu_start = thread_cpu_seconds();
    const std::vector<LinearModel> models = train_linear_path(problem, corpus, loss, cs);
    std::printf("%s fit, C path of %zu (warm-started), one thread: %.2f s (%.2f s CPU)\n", name,
                cs.size(), since(start), thread_cpu_seconds() - cpu_start);
    for (const LinearModel& model : models) {
      const LinearClassifier classifier(
          loss == LinearLoss::kSquaredHinge ? autocat::Method::kSvm : autocat::Method::kLogreg,
          model, idf, autocat::Decision::kOneOf);
      std::vector<double> scores;
      std::vector<double> times, cpu_times;
      double checksum = 0;
      for (int r = 0; r < std::max(repeat, 1); ++r) {
        const auto run_start = Clock::now();
        const double cpu_run_start = thread_cpu_seconds();
        checksum = 0;
        for (const DocumentTerms& doc : test_docs) {
          if (doc.terms.empty()) continue;
          classifier.score(doc, autocat::ClassifyOptions(), &scores);
          checksum += scores[0];
        }
        times.push_back(since(run_start));
        cpu_times.push_back(thread_cpu_seconds() - cpu_run_start);
      }
      std::sort(times.begin(), times.end());
      std::sort(cpu_times.begin(), cpu_times.end());
      std::printf(
          "  C = %g: %zu weights (%.1f MB), classify %.0f docs/s (%.0f per CPU s; median of %d; "
          "checksum %.12g)\n",
          model.c, model.entry_weight.size(), model.weight_bytes() / 1e6,
          test_docs.size() / times[times.size() / 2],
          test_docs.size() / cpu_times[cpu_times.size() / 2], repeat, checksum);
      std::printf("    accuracy (argmax of decision values) %.4f\n", accuracy(model));
      // What-if: drop the smallest weights, keeping the term-major layout.
      for (double fraction : prune_fractions) {
        std::vector<float> magnitudes;
        for (float w : model.entry_weight) magnitudes.push_back(std::fabs(w));
        const size_t cut = size_t(fraction * double(magnitudes.size()));
        if (cut == 0 || cut >= magnitudes.size()) continue;
        std::nth_element(magnitudes.begin(), magnitudes.begin() + ptrdiff_t(cut), magnitudes.end());
        const float floor = magnitudes[cut];
        LinearModel pruned = model;
        pruned.entry_category.clear();
        pruned.entry_weight.clear();
        for (size_t t = 0; t + 1 < model.term_start.size(); ++t) {
          pruned.term_start[t] = pruned.entry_weight.size();
          for (uint64_t e = model.term_start[t]; e < model.term_start[t + 1]; ++e) {
            if (std::fabs(model.entry_weight[e]) < floor) continue;
            pruned.entry_category.push_back(model.entry_category[e]);
            pruned.entry_weight.push_back(model.entry_weight[e]);
          }
        }
        pruned.term_start.back() = pruned.entry_weight.size();
        std::printf(
            "    pruned %.0f%% smallest (|w| < %.2g): %zu weights (%.1f MB), accuracy %.4f\n",
            100 * fraction, floor, pruned.entry_weight.size(), pruned.weight_bytes() / 1e6,
            accuracy(pruned));
      }
    }
  }
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("peak memory (max RSS): %.0f MB\n", usage.ru_maxrss / 1024.0);
  return 0;
} catch (const std::exception& e) {
  std::cerr << "linear_speed: " << e.what() << "\n";
  return 1;
}
