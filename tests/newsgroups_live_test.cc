// Live learning at scale, on 20 Newsgroups bydate: a kNN model batch-trained
// on half of the training split (every other document) learns the other half one
// document at a time (Categorizer::learn, journaled), and is compared on the
// test split with a model batch-trained on the whole split (same k, no
// tuning, so only the learning path differs); Rocchio, multinomial and
// complement NB likewise (their live models, classify/model/live_models.h). Prints the cost per
// learned document (with and without an fsync per document), the classify speed with the overlay
// and while another thread learns, the replay time of a reopened model, and checks that train --add
// folds the journal into exactly the batch model. Skipped, loudly, when
// ../shared/data is absent (see newsgroups_test.cc).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#include <tuple>

#include "classify/corpus/document_reader.h"
#include "classify/corpus/weighting.h"
#include "classify/decide/categorizer.h"
#include "classify/io/json_text.h"
#include "classify/methods/live_linear.h"
#include "classify/metrics/evaluation.h"
#include "classify/train/trainer.h"
#include "test_util.h"

namespace autocat::internal {
namespace {

namespace fs = std::filesystem;

const std::string kNewsgroups = testing_util::shared_data("20news-bydate.jsonl.gz");
// Learned documents change no idf and no norm of the trained ones: measured
// 2026-11-23, the learned model's accuracy is within 0.01 of the batch
// model's (see live-result notes); a larger gap fails.
constexpr double kMaxAccuracyGap = 0.01;
constexpr int kK = 30;
// Rocchio and NB learned vs batch: measured 2026-11-23 (see incr-result
// notes); a larger gap fails.
constexpr double kMaxLiveModelGap = 0.01;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct TestDoc {
  std::string text;
  std::string label;
};

std::vector<InputDocument> read_split(const std::string& split) {
  ReadOptions options;
  options.split = split;
  std::vector<InputDocument> docs;
  read_documents(
      {kNewsgroups}, options, [&](InputDocument&& doc) { docs.push_back(doc); }, nullptr);
  return docs;
}

void write_jsonl(const std::string& path, const std::vector<InputDocument>& docs) {
  std::ofstream out(path);
  for (const InputDocument& doc : docs) {
    Json object = internal::Json::object();
    object["id"] = internal::Json(doc.id);
    Json labels = internal::Json::array();
    for (const std::string& label : doc.labels) labels.push_back(internal::Json(label));
    object["labels"] = std::move(labels);
    object["text"] = internal::Json(doc.text);
    out << internal::dump_json(object) << '\n';
  }
}

struct Accuracy {
  double accuracy = 0;  // kNN's
  double docs_per_second = 0;
  // Rocchio's and Naive Bayes' (multinomial, complement), live once the
  // model learned something.
  double rocchio = 0, nb = 0, cnb = 0;
  // Their classify speed, docs/s (scoring and deciding, after a warm-up
  // score that fits a live model).
  double rocchio_speed = 0, nb_speed = 0, cnb_speed = 0;
};

Accuracy evaluate(const Categorizer& categorizer, const std::vector<InputDocument>& test,
                  bool all_methods = true) {
  ClassifyOptions options;
  options.method = Method::kKnn;
  options.k = kK;
  // Analysis is timed apart: the classify speed is the kNN search's.
  std::vector<DocumentTerms> docs;
  docs.reserve(test.size());
  for (const InputDocument& doc : test) {
    docs.push_back(categorizer.document_terms(categorizer.analyzer().analyze(doc.text)));
  }
  const auto accuracy = [&](Method method) {
    ClassifyOptions method_options = options;
    method_options.method = method;
    size_t correct = 0;
    for (size_t i = 0; i < docs.size(); ++i) {
      const auto assigned =
          categorizer.decide(categorizer.scores(docs[i], method_options), method_options);
      if (!assigned.empty() && assigned.front().name == test[i].labels.front()) ++correct;
    }
    return double(correct) / double(docs.size());
  };
  categorizer.knn_index();
  Accuracy result;
  const auto start = std::chrono::steady_clock::now();
  result.accuracy = accuracy(Method::kKnn);
  result.docs_per_second = double(docs.size()) / seconds_since(start);
  if (all_methods) {
    const auto timed = [&](Method method, double* speed) {
      ClassifyOptions warm_up = options;  // a live model is fitted here, not timed
      warm_up.method = method;
      categorizer.scores(docs.front(), warm_up);
      const auto method_start = std::chrono::steady_clock::now();
      const double value = accuracy(method);
      *speed = double(docs.size()) / seconds_since(method_start);
      return value;
    };
    result.rocchio = timed(Method::kRocchio, &result.rocchio_speed);
    result.nb = timed(Method::kNaiveBayes, &result.nb_speed);
    result.cnb = timed(Method::kComplementNaiveBayes, &result.cnb_speed);
  }
  return result;
}

TEST(NewsgroupsLiveTest, LearningHalfTheTrainingSplitMatchesBatchTraining) {
  AUTOCAT_SKIP_WITHOUT_DATA(kNewsgroups, "20 Newsgroups data");
  testing_util::TempDir dir;
  const std::vector<InputDocument> train = read_split("train");
  const std::vector<InputDocument> test = read_split("test");
  ASSERT_EQ(train.size(), 11314u);
  // The collection is sorted by newsgroup: the halves are the even and the
  // odd documents, so each half holds every newsgroup. The batch model
  // reads the first half, then the second, as the refit adds them.
  std::vector<InputDocument> first, second;
  for (size_t i = 0; i < train.size(); ++i) (i % 2 == 0 ? first : second).push_back(train[i]);
  const size_t half = first.size();
  std::vector<InputDocument> all = first;
  all.insert(all.end(), second.begin(), second.end());
  write_jsonl(dir.file("first.jsonl"), first);
  write_jsonl(dir.file("all.jsonl"), all);

  TrainOptions options;
  options.tune_thresholds = false;  // the same k and votes for both models
  options.knn_k = kK;
  train_model({dir.file("first.jsonl")}, dir.file("half"), options, ReadOptions(), nullptr);
  train_model({dir.file("all.jsonl")}, dir.file("batch"), options, ReadOptions(), nullptr);
  fs::copy(dir.file("half"), dir.file("half-nosync"), fs::copy_options::recursive);
  fs::copy(dir.file("half"), dir.file("half-busy"), fs::copy_options::recursive);

  const Accuracy batch = evaluate(Categorizer(dir.file("batch")), test);
  const Categorizer half_model(dir.file("half"));
  const Accuracy before = evaluate(half_model, test);

  // One document per call, each journaled and fsynced, as an application would.
  Categorizer learner(dir.file("half"));
  learner.knn_index();
  auto start = std::chrono::steady_clock::now();
  for (const InputDocument& doc : second) learner.learn(doc.id, doc.text, doc.labels);
  const double learn_seconds = seconds_since(start);
  start = std::chrono::steady_clock::now();
  Categorizer nosync(dir.file("half-nosync"));
  nosync.knn_index();
  const double open_seconds = seconds_since(start);  // without a journal
  // The first learn also reads the training database for Rocchio's and
  // NB's category sums.
  start = std::chrono::steady_clock::now();
  nosync.learn({LearnedDocument{second[0].id, second[0].text, second[0].labels}}, false);
  const double first_learn_seconds = seconds_since(start);
  start = std::chrono::steady_clock::now();
  for (size_t i = 1; i < second.size(); ++i) {
    const InputDocument& doc = second[i];
    nosync.learn({LearnedDocument{doc.id, doc.text, doc.labels}}, /*sync=*/false);
  }
  const double nosync_seconds =
      seconds_since(start) * double(second.size()) / double(second.size() - 1);
  // A model is fitted from the sums at its first score after a change:
  // what learning costs per document when every learn is followed by a
  // score of that method (the worst case; a batch of learns shares one fit).
  const Method kLive[] = {Method::kRocchio, Method::kNaiveBayes, Method::kBernoulliNaiveBayes,
                          Method::kComplementNaiveBayes};
  double fit_seconds[4] = {0, 0, 0, 0};
  constexpr int kFits = 5;
  for (int round = 0; round < kFits; ++round) {
    const InputDocument& doc = second[size_t(round)];
    nosync.learn({LearnedDocument{doc.id, doc.text, doc.labels}}, /*sync=*/false);
    for (int m = 0; m < 4; ++m) {
      start = std::chrono::steady_clock::now();
      ASSERT_NE(nosync.live_model(kLive[m]), nullptr);
      fit_seconds[m] += seconds_since(start) / kFits;
    }
  }
  ASSERT_EQ(learner.live_status().learned_present, second.size());

  // One thread classifies the test split over and over while another learns.
  Categorizer busy(dir.file("half-busy"));
  std::vector<DocumentTerms> queries;
  for (const InputDocument& doc : test) {
    queries.push_back(busy.document_terms(busy.analyzer().analyze(doc.text)));
  }
  busy.knn_index();
  std::atomic<bool> learning{true};
  uint64_t classified = 0;
  std::thread reader([&] {
    ClassifyOptions knn;
    knn.method = Method::kKnn;
    knn.k = kK;
    for (size_t i = 0; learning.load(); i = (i + 1) % queries.size(), ++classified) {
      busy.decide(busy.scores(queries[i], knn), knn);
    }
  });
  start = std::chrono::steady_clock::now();
  for (const InputDocument& doc : second) {
    busy.learn({LearnedDocument{doc.id, doc.text, doc.labels}}, /*sync=*/false);
  }
  const double busy_seconds = seconds_since(start);
  learning = false;
  reader.join();
  const Accuracy learned = evaluate(learner, test);

  start = std::chrono::steady_clock::now();
  const Categorizer reopened(dir.file("half"));
  reopened.knn_index();
  const double replay_seconds = seconds_since(start);
  EXPECT_EQ(reopened.live_status().replayed, second.size());
  const Accuracy replayed = evaluate(reopened, test);

  start = std::chrono::steady_clock::now();
  const TrainReport refit = add_to_model({}, dir.file("half"), ReadOptions(), nullptr);
  const double refit_seconds = seconds_since(start);
  EXPECT_EQ(refit.journal_learned, second.size());
  const Accuracy folded = evaluate(Categorizer(dir.file("half")), test, /*all_methods=*/false);

  const double n = double(second.size());
  std::printf(
      "20NG bydate, kNN k=%d, no tuning; test split %zu documents\n"
      "  batch, whole training split (%zu):   accuracy %.4f, classify %.0f docs/s\n"
      "  batch, first half (%zu):             accuracy %.4f, classify %.0f docs/s\n"
      "  first half + %zu learned one by one: accuracy %.4f, classify %.0f docs/s\n"
      "  reopened (journal replayed):         accuracy %.4f, open + kNN index %.2f s "
      "(%.2f s without a journal)\n"
      "  learn, fsync per document:   %.3f ms per document (%.0f docs/s)\n"
      "  learn, no fsync:             %.3f ms per document (%.0f docs/s)\n"
      "  learn, no fsync, while another thread classifies: %.3f ms per document; "
      "classify meanwhile %.0f docs/s\n"
      "  train --add refit folding the journal: %.1f s, accuracy %.4f\n"
      "  first learn (reads the category sums of %zu terms x %zu categories): %.2f s\n"
      "  fit from the sums at the next score: rocchio %.1f ms, nb %.1f ms, bnb %.1f ms, "
      "cnb %.1f ms\n"
      "  accuracy       batch   half    learned replayed\n"
      "    rocchio      %.4f  %.4f  %.4f  %.4f\n"
      "    nb           %.4f  %.4f  %.4f  %.4f\n"
      "    cnb          %.4f  %.4f  %.4f  %.4f\n"
      "  classify docs/s half (trained) vs learned (live): rocchio %.0f vs %.0f, nb %.0f vs "
      "%.0f, cnb %.0f vs %.0f\n",
      kK, test.size(), train.size(), batch.accuracy, batch.docs_per_second, half, before.accuracy,
      before.docs_per_second, second.size(), learned.accuracy, learned.docs_per_second,
      replayed.accuracy, replay_seconds, open_seconds, 1000 * learn_seconds / n, n / learn_seconds,
      1000 * nosync_seconds / n, n / nosync_seconds, 1000 * busy_seconds / n,
      double(classified) / busy_seconds, refit_seconds, folded.accuracy,
      half_model.model().terms.size(), half_model.categories().size(), first_learn_seconds,
      1000 * fit_seconds[0], 1000 * fit_seconds[1], 1000 * fit_seconds[2], 1000 * fit_seconds[3],
      batch.rocchio, before.rocchio, learned.rocchio, replayed.rocchio, batch.nb, before.nb,
      learned.nb, replayed.nb, batch.cnb, before.cnb, learned.cnb, replayed.cnb,
      before.rocchio_speed, learned.rocchio_speed, before.nb_speed, learned.nb_speed,
      before.cnb_speed, learned.cnb_speed);
  RecordProperty("batch_accuracy", std::to_string(batch.accuracy));
  RecordProperty("learned_accuracy", std::to_string(learned.accuracy));

  EXPECT_GT(learned.accuracy, before.accuracy + 0.005);  // the learned half helps
  EXPECT_NEAR(learned.accuracy, batch.accuracy, kMaxAccuracyGap);
  EXPECT_EQ(replayed.accuracy, learned.accuracy);
  // Rocchio and NB learn too (frozen idf, vocabulary and alpha: see
  // live_models.h), and the reopened model replays to the same accuracy.
  for (const auto& [name, b, h, l, r] :
       {std::tuple{"rocchio", batch.rocchio, before.rocchio, learned.rocchio, replayed.rocchio},
        std::tuple{"nb", batch.nb, before.nb, learned.nb, replayed.nb},
        std::tuple{"cnb", batch.cnb, before.cnb, learned.cnb, replayed.cnb}}) {
    EXPECT_GT(l, h + 0.005) << name;
    EXPECT_NEAR(l, b, kMaxLiveModelGap) << name;
    EXPECT_NEAR(r, l, 1e-4) << name;
  }
  // The refit holds exactly the batch model's documents, in the same order.
  EXPECT_EQ(refit.documents, train.size());
  EXPECT_EQ(folded.accuracy, batch.accuracy);
}

// svm and the default method (combo) on the same halves, trained with the
// default options (C tuned, combo stacked): learning the second half one
// document at a time (live_linear.h: the learned documents' own dual
// variables, the trained ones frozen) comes within kMaxAccuracyGap of the
// batch model.
TEST(NewsgroupsLiveTest, LinearAndComboLearningHalfMatchBatchTraining) {
  AUTOCAT_SKIP_WITHOUT_DATA(kNewsgroups, "20 Newsgroups data");
  testing_util::TempDir dir;
  const std::vector<InputDocument> train = read_split("train");
  const std::vector<InputDocument> test = read_split("test");
  std::vector<InputDocument> first, second;
  for (size_t i = 0; i < train.size(); ++i) (i % 2 == 0 ? first : second).push_back(train[i]);
  std::vector<InputDocument> all = first;
  all.insert(all.end(), second.begin(), second.end());
  write_jsonl(dir.file("first.jsonl"), first);
  write_jsonl(dir.file("all.jsonl"), all);
  TrainOptions options;
  options.choose_default_method = true;  // as autocat train does
  train_model({dir.file("first.jsonl")}, dir.file("half"), options, ReadOptions(), nullptr);
  train_model({dir.file("all.jsonl")}, dir.file("batch"), options, ReadOptions(), nullptr);

  const auto accuracy = [&](const Categorizer& categorizer, std::optional<Method> method) {
    ClassifyOptions options;
    options.method = method;
    size_t correct = 0;
    for (const InputDocument& doc : test) {
      const auto assigned = categorizer.decide(
          categorizer.scores(categorizer.document_terms(categorizer.analyzer().analyze(doc.text)),
                             options),
          options);
      if (!assigned.empty() && assigned.front().name == doc.labels.front()) ++correct;
    }
    return double(correct) / double(test.size());
  };
  const Categorizer batch(dir.file("batch"));
  Categorizer learner(dir.file("half"));
  const double batch_svm = accuracy(batch, Method::kSvm);
  const double batch_default = accuracy(batch, std::nullopt);
  const double half_svm = accuracy(learner, Method::kSvm);
  const double half_default = accuracy(learner, std::nullopt);
  // The first learn reads the training database (the sums of Rocchio and NB).
  learner.learn({LearnedDocument{second[0].id, second[0].text, second[0].labels}}, false);
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 1; i < second.size(); ++i) {
    const InputDocument& doc = second[i];
    learner.learn({LearnedDocument{doc.id, doc.text, doc.labels}}, /*sync=*/false);
  }
  const double learn_ms = 1000 * seconds_since(start) / double(second.size() - 1);
  // A score after a change publishes the linear weights' correction.
  ClassifyOptions svm;
  svm.method = Method::kSvm;
  const DocumentTerms probe = learner.document_terms(learner.analyzer().analyze(test.front().text));
  auto fit_start = std::chrono::steady_clock::now();
  learner.scores(probe, svm);
  const double first_fit_ms = 1000 * seconds_since(fit_start);
  double fit_ms = 0;
  constexpr int kFits = 5;
  for (int round = 0; round < kFits; ++round) {
    const InputDocument& doc = second[size_t(round)];
    learner.learn({LearnedDocument{doc.id, doc.text, doc.labels}}, /*sync=*/false);
    fit_start = std::chrono::steady_clock::now();
    learner.scores(probe, svm);
    fit_ms += 1000 * seconds_since(fit_start) / kFits;
  }
  // The linear part alone, analysis apart: svm's and logreg's learn().
  double linear_ms[2] = {0, 0};
  {
    const ModelState& model = learner.model();
    const std::vector<float> idf = compute_idf(model.df, model.num_docs, model.selected);
    std::vector<DocumentTerms> docs;
    std::vector<std::vector<uint32_t>> categories;
    for (const InputDocument& doc : second) {
      docs.push_back(learner.document_terms(learner.analyzer().analyze(doc.text)));
      categories.push_back({uint32_t(learner.category_index(doc.labels.front()))});
    }
    int k = 0;
    for (const LinearModel* linear : {&model.svm, &model.logreg}) {
      LiveLinear live(k == 0 ? Method::kSvm : Method::kLogreg, *linear, idf, model.decision);
      const auto linear_start = std::chrono::steady_clock::now();
      for (size_t i = 0; i < docs.size(); ++i) live.learn(second[i].id, docs[i], categories[i]);
      linear_ms[k++] = 1000 * seconds_since(linear_start) / double(docs.size());
    }
  }
  const double learned_svm = accuracy(learner, Method::kSvm);
  const double learned_default = accuracy(learner, std::nullopt);
  std::printf(
      "20NG bydate, default training; first half + %zu learned one by one\n"
      "  accuracy       batch   half    learned\n"
      "    svm          %.4f  %.4f  %.4f\n"
      "    default (%s) %.4f  %.4f  %.4f\n"
      "  learn, no fsync, every method: %.3f ms per document; first svm score (fits the %zu "
      "learned): %.0f ms; svm score after one more learn: %.1f ms\n"
      "  learn, linear part alone (analysis apart): svm %.3f ms, logreg %.3f ms per document\n",
      second.size(), batch_svm, half_svm, learned_svm, method_name(batch.default_method()).c_str(),
      batch_default, half_default, learned_default, learn_ms, second.size(), first_fit_ms, fit_ms,
      linear_ms[0], linear_ms[1]);
  EXPECT_GT(learned_svm, half_svm + 0.005);
  EXPECT_NEAR(learned_svm, batch_svm, kMaxAccuracyGap);
  EXPECT_GT(learned_default, half_default + 0.005);
  EXPECT_NEAR(learned_default, batch_default, kMaxAccuracyGap);
}

}  // namespace
}  // namespace autocat::internal
