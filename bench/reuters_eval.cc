// End-to-end measurement on Reuters-21578 ModApte (multi-label): train on
// split "train", categorize split "test" with every method, and score the
// categories with at least one training and one test document (90 on
// ModApte). Test documents without any scored label count as documents
// whose correct answer is "no category", as the protocol asks.
//
// usage: reuters_eval [--data FILE] [--work DIR] [--k N,N,...] [--stemmer LANG]
//                     [--keep-unlabelled] [--threshold-folds K] [--alpha A] [--gamma G]
//                     [--knn-k K] [--labelled-test-only] [--reuse]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "autocat/error.h"
#include "bench/bench_util.h"
#include "classify/corpus/document_reader.h"
#include "classify/decide/categorizer.h"
#include "classify/metrics/evaluation.h"
#include "classify/train/trainer.h"

namespace fs = std::filesystem;
using autocat::bench::Clock;
using autocat::bench::parse_list;
using autocat::bench::since;
using autocat::internal::Categorizer;
using autocat::internal::DocumentTerms;

namespace {

struct TestDoc {
  DocumentTerms terms;
  std::vector<uint32_t> truth;  // scored categories only (model indexes)
};

struct Result {
  double micro_f1, macro_f1, micro_p, micro_r, seconds;
  double binary_log_loss;  // mean over documents x scored categories
};

// Evaluates over the scored categories: assignments outside them are dropped.
Result run(const Categorizer& categorizer, const std::vector<TestDoc>& docs,
           const std::vector<uint8_t>& scored, const autocat::ClassifyOptions& options) {
  std::vector<std::string> names;
  std::vector<int64_t> renumber(scored.size(), -1);
  for (size_t c = 0; c < scored.size(); ++c) {
    if (!scored[c]) continue;
    renumber[c] = static_cast<int64_t>(names.size());
    names.push_back(categorizer.categories()[c]);
  }
  autocat::internal::Evaluation evaluation(names);
  const auto start = Clock::now();
  double log_loss = 0;
  uint64_t cells = 0;
  for (const TestDoc& doc : docs) {
    const std::vector<double> scores = categorizer.scores(doc.terms, options);
    const std::vector<autocat::Category> chosen = categorizer.decide(scores, options);
    // Binary log-loss of each scored category (a yes/no question each).
    for (size_t c = 0; c < scores.size(); ++c) {
      if (!scored[c]) continue;
      const bool yes = std::find(doc.truth.begin(), doc.truth.end(), c) != doc.truth.end();
      const double p = std::clamp(yes ? scores[c] : 1.0 - scores[c], 1e-15, 1.0);
      log_loss -= std::log(p);
      ++cells;
    }
    std::vector<uint32_t> assigned, truth;
    for (const auto& category : chosen) {
      const int64_t c = renumber[static_cast<size_t>(categorizer.category_index(category.name))];
      if (c >= 0) assigned.push_back(static_cast<uint32_t>(c));
    }
    for (uint32_t c : doc.truth) truth.push_back(static_cast<uint32_t>(renumber[c]));
    evaluation.add(truth, assigned);
  }
  return Result{
      evaluation.micro_f1(),     evaluation.macro_f1(), evaluation.micro_precision(),
      evaluation.micro_recall(), since(start),          cells ? log_loss / double(cells) : 0.0};
}

}  // namespace

int main(int argc, char** argv) try {
  std::string data = std::string(AUTOCAT_SOURCE_DIR) + "/../shared/data/reuters21578-modapte.jsonl";
  std::string work = "/tmp/autocat-reuters-bench";
  std::vector<int> ks = {0};  // 0 = the model's k
  bool reuse = false;
  // Yang & Liu's protocol: only test documents with a scored category.
  bool labelled_test_only = false;
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
    else if (arg == "--keep-unlabelled")
      train_options.keep_unlabelled = true;
    else if (arg == "--threshold-folds")
      train_options.threshold_folds = std::stoi(value());
    else if (arg == "--alpha")
      train_options.nb_alpha = std::stod(value());
    else if (arg == "--gamma")
      train_options.rocchio_gamma = std::stod(value());
    else if (arg == "--knn-k")
      train_options.knn_k = std::stoi(value());
    else if (arg == "--labelled-test-only")
      labelled_test_only = true;
    else if (arg == "--reuse")
      reuse = true;
    else {
      std::cerr << "usage: reuters_eval [--data FILE] [--work DIR] [--k N,N] [--stemmer L] "
                   "[--keep-unlabelled] [--threshold-folds K] [--alpha A] [--gamma G] [--knn-k K] "
                   "[--labelled-test-only] [--reuse]\n";
      return arg == "--help" ? 0 : 2;
    }
  }
  if (!fs::exists(data)) {
    std::cerr << "reuters_eval: " << data << ": not found (see ../shared/data/README.md)\n";
    return 1;
  }
  const std::string model_dir = work + "/model";
  const auto warn = [](const std::string& message) { std::cerr << "warning: " << message << "\n"; };
  if (!reuse) {
    fs::remove_all(work);
    fs::create_directories(work);
    autocat::internal::ReadOptions train_read;
    train_read.split = "train";
    const autocat::internal::TrainReport report =
        autocat::internal::train_model({data}, model_dir, train_options, train_read, warn);
    std::printf(
        "training: %llu docs (%llu skipped unlabelled), %u categories, %.2f s (fit %.2f s)\n",
        static_cast<unsigned long long>(report.documents),
        static_cast<unsigned long long>(report.skipped_unlabelled), report.categories,
        report.total_seconds, report.fit_seconds);
  }
  const Categorizer categorizer(model_dir);
  categorizer.knn_index();
  std::printf("chosen by cross-validation: k = %d, vote power %d, Rocchio gamma = %g\n",
              categorizer.knn_k(), categorizer.model().knn_similarity_power,
              categorizer.model().rocchio_gamma);
  for (const auto& candidate : categorizer.model().knn_objective) {
    std::printf("  cv objective knn k=%d power=%d: %.4f\n", candidate.k, candidate.similarity_power,
                candidate.objective);
  }
  for (const auto& [gamma, value] : categorizer.model().rocchio_gamma_objective) {
    std::printf("  cv objective rocchio gamma=%g: %.4f\n", gamma, value);
  }
  autocat::bench::print_linear_summary(categorizer.model(), model_dir);

  // Test split: every document, labelled or not.
  autocat::internal::ReadOptions test_read;
  test_read.split = "test";
  std::vector<autocat::internal::InputDocument> raw;
  autocat::internal::read_documents(
      {data}, test_read, [&](autocat::internal::InputDocument&& d) { raw.push_back(std::move(d)); },
      warn);
  std::vector<uint8_t> scored(categorizer.categories().size(), 0);
  for (const auto& doc : raw) {
    for (const auto& label : doc.labels) {
      const int64_t c = categorizer.category_index(label);
      if (c >= 0) scored[static_cast<size_t>(c)] = 1;
    }
  }
  std::vector<TestDoc> docs;
  size_t no_category = 0;
  for (const auto& doc : raw) {
    TestDoc test;
    test.terms = categorizer.document_terms(categorizer.analyzer().analyze(doc.text));
    for (const auto& label : doc.labels) {
      const int64_t c = categorizer.category_index(label);
      if (c >= 0) test.truth.push_back(static_cast<uint32_t>(c));
    }
    no_category += test.truth.empty() ? 1 : 0;
    if (labelled_test_only && test.truth.empty()) continue;
    docs.push_back(std::move(test));
  }
  std::printf("test: %zu documents (%zu with no scored category), %ld scored categories\n\n",
              docs.size(), no_category,
              static_cast<long>(std::count(scored.begin(), scored.end(), 1)));

  std::printf(
      "| method | decision | micro-F1 | macro-F1 | micro-P | micro-R | docs/s | binary "
      "log-loss |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|\n");
  auto report = [&](const std::string& method, const std::string& setting,
                    const autocat::ClassifyOptions& options) {
    const Result r = run(categorizer, docs, scored, options);
    std::printf("| %s | %s | %.4f | %.4f | %.4f | %.4f | %.0f | %.4f |\n", method.c_str(),
                setting.c_str(), r.micro_f1, r.macro_f1, r.micro_p, r.micro_r,
                docs.size() / r.seconds, r.binary_log_loss);
  };
  for (autocat::Method method : autocat::all_methods()) {
    const std::vector<int> method_ks = method == autocat::Method::kKnn ? ks : std::vector<int>{0};
    for (int k : method_ks) {
      const std::string name =
          autocat::method_name(method) + (method == autocat::Method::kKnn
                                              ? " k=" + std::to_string(categorizer.knn_k(k))
                                              : std::string());
      autocat::ClassifyOptions options;
      options.method = method;
      options.k = k;  // 0: the model's
      options.decision = autocat::Decision::kAnyOf;
      report(name, "any-of, tuned thresholds", options);
      options.decision = autocat::Decision::kOneOf;
      options.other = false;
      report(name, "one-of", options);
      options.other = true;
      report(name, "one-of + other", options);
    }
  }
  return 0;
} catch (const Xapian::Error& e) {
  std::cerr << "reuters_eval: " << e.get_description() << "\n";
  return 1;
} catch (const std::exception& e) {
  std::cerr << "reuters_eval: " << e.what() << "\n";
  return 1;
}
