#include "classify/train/trainer.h"

#include <gtest/gtest.h>
#include <xapian.h>

#include <algorithm>
#include <filesystem>
#include <functional>

#include "autocat/error.h"
#include "classify/corpus/weighting.h"
#include "classify/decide/categorizer.h"
#include "classify/io/model_dir.h"
#include "classify/methods/knn.h"
#include "classify/methods/knn_index_file.h"
#include "classify/model/model_io.h"
#include "classify/train/thresholds.h"
#include "test_util.h"

namespace autocat::internal {
namespace {

using testing_util::read_file;
using testing_util::test_data;
using testing_util::write_file;

// The phases of a training run, in order.
std::vector<std::string> phase_names(const TrainReport& report) {
  std::vector<std::string> names;
  for (const TrainPhase& phase : report.phases) names.push_back(phase.phase);
  return names;
}

// The names in `dir`, sorted.
std::vector<std::string> entries_of(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class TrainerTest : public testing::Test {
 protected:
  void SetUp() override {
    // The training fixture split in two: the first 15 lines, then the rest.
    const std::vector<std::string> lines = testing_util::split_lines(read_file(fixture_));
    ASSERT_EQ(lines.size(), 24u);
    std::string first, second;
    for (size_t i = 0; i < lines.size(); ++i) (i < 15 ? first : second) += lines[i] + "\n";
    write_file(dir_.file("first.jsonl"), first);
    write_file(dir_.file("second.jsonl"), second);
  }

  ModelState model_in(const std::string& model_dir) {
    return read_model_file(resolve_model_dir(model_dir).model_file);
  }

  testing_util::TempDir dir_;
  const std::string fixture_ = test_data("fixture_train.jsonl");
};

TEST_F(TrainerTest, AddingInTwoStepsEqualsTrainingAtOnce) {
  const std::string at_once = dir_.file("at-once"), in_steps = dir_.file("in-steps");
  train_model({fixture_}, at_once, TrainOptions(), ReadOptions(), nullptr);
  train_model({dir_.file("first.jsonl")}, in_steps, TrainOptions(), ReadOptions(), nullptr);
  const TrainReport report =
      add_to_model({dir_.file("second.jsonl")}, in_steps, ReadOptions(), nullptr);
  EXPECT_EQ(report.added, 9u);
  EXPECT_EQ(report.documents, 24u);
  // The second part brings a category: the first part's thresholds cannot
  // be kept, so --add cross-validates as a new training would.
  EXPECT_FALSE(report.settings_kept);
  EXPECT_NE(report.retune_reason.find("categories changed: 1 new (food)"), std::string::npos)
      << report.retune_reason;
  EXPECT_EQ(report.cross_validations, 1u);

  const ModelState a = model_in(at_once), b = model_in(in_steps);
  EXPECT_EQ(a.categories, b.categories);
  EXPECT_EQ(a.terms, b.terms);
  EXPECT_EQ(a.df, b.df);
  EXPECT_EQ(a.rocchio.entry_weight, b.rocchio.entry_weight);
  EXPECT_EQ(a.multinomial_nb.dense_weights(), b.multinomial_nb.dense_weights());
  EXPECT_EQ(a.thresholds, b.thresholds);
  // kNN reads the swapped-in training database and accepts it.
  const Categorizer categorizer(in_steps);
  EXPECT_EQ(categorizer.knn_index().num_docs(), 24u);
}

// The trainer writes each part as it is fitted, and fits the linear
// methods with the corpus's postings on disk: the model file holds exactly
// what fit_model() fits in memory from the same collection.
TEST_F(TrainerTest, ModelFileHoldsWhatFitModelFitsInMemory) {
  const std::string model_dir = dir_.file("model");
  train_model({fixture_}, model_dir, TrainOptions(), ReadOptions(), nullptr);
  const ModelPaths paths = resolve_model_dir(model_dir);
  const ModelState written = read_model_file(paths.model_file);
  const TrainingCorpus corpus = load_training_corpus(Xapian::Database(paths.training_db));
  const ModelState fitted = fit_model(corpus, written.analyzer, written.training);
  EXPECT_EQ(written.rocchio.entry_weight, fitted.rocchio.entry_weight);
  EXPECT_EQ(written.multinomial_nb.dense_weights(), fitted.multinomial_nb.dense_weights());
  EXPECT_EQ(written.bernoulli_nb.dense_weights(), fitted.bernoulli_nb.dense_weights());
  EXPECT_EQ(written.complement_nb.dense_weights(), fitted.complement_nb.dense_weights());
  ASSERT_FALSE(written.svm.entry_weight.empty());
  EXPECT_EQ(written.svm.entry_weight, fitted.svm.entry_weight);
  EXPECT_EQ(written.svm.slope, fitted.svm.slope);
  EXPECT_EQ(written.svm.bias, fitted.svm.bias);
  EXPECT_EQ(written.logreg.entry_weight, fitted.logreg.entry_weight);
  EXPECT_EQ(written.logreg.intercept, fitted.logreg.intercept);
  EXPECT_EQ(written.thresholds, fitted.thresholds);
  EXPECT_EQ(written.calibration.size(), fitted.calibration.size());
  // Nothing but the generation's own files is left in its directory.
  EXPECT_EQ(entries_of(std::filesystem::path(paths.model_file).parent_path().string()),
            (std::vector<std::string>{"knn.index", "model.autocat", "training"}));
}

// kNN with the terms' relevance frequency: the model keeps the weights,
// the index file written at training holds them, and classification
// through the mapped file equals the index built in memory.
TEST_F(TrainerTest, KnnConcentrationWeightsReachTheIndexFile) {
  const std::string model_dir = dir_.file("model");
  TrainOptions options;
  options.knn_concentration = 1.0;
  train_model({fixture_}, model_dir, options, ReadOptions(), nullptr);
  const Categorizer on_disk(model_dir);
  const ModelState& model = on_disk.model();
  EXPECT_EQ(model.knn_concentration, 1.0);
  const TrainingCorpus corpus = load_training_corpus(Xapian::Database(on_disk.paths().training_db));
  const std::vector<float> idf = compute_idf(model.df, model.num_docs, model.selected);
  EXPECT_EQ(model.knn_term_weight, knn_term_weights(corpus, idf, 1.0));
  EXPECT_NE(model.knn_term_weight, idf);
  ASSERT_TRUE(on_disk.knn_index().mapped());
  EXPECT_EQ(on_disk.knn_index().idf(), model.knn_term_weight);
  const Categorizer in_memory(model, std::make_shared<const TrainingCorpus>(corpus));
  ClassifyOptions classify;
  classify.method = Method::kKnn;
  for (const char* text : {"goal match team", "stock market shares", "election vote"}) {
    const DocumentTerms doc = on_disk.document_terms(on_disk.analyzer().analyze(text));
    EXPECT_EQ(on_disk.scores(doc, classify), in_memory.scores(doc, classify)) << text;
  }
  // Cross-validation's choice among the candidates is kept the same way.
  const std::string tuned_dir = dir_.file("tuned");
  train_model({fixture_}, tuned_dir, TrainOptions(), ReadOptions(), nullptr);
  const ModelState tuned = model_in(tuned_dir);
  EXPECT_EQ(tuned.knn_term_weight.empty(), tuned.knn_concentration == 0.0);
  const std::vector<double>& candidates = knn_concentration_candidates();
  EXPECT_NE(std::find(candidates.begin(), candidates.end(), tuned.knn_concentration),
            candidates.end());
}

// A collection larger than tuning_sample is tuned on a sample the trainer
// reads before the whole corpus: the same settings and weights as
// fit_model() sampling the corpus in memory.
TEST_F(TrainerTest, LargeCollectionIsTunedOnASampleReadBeforeTheCorpus) {
  std::string lines;
  const std::vector<std::string> topics = {"apple", "river", "engine"};
  for (int i = 0; i < 240; ++i) {
    const std::string& topic = topics[i % 3];
    lines += "{\"id\": \"d" + std::to_string(i) + "\", \"text\": \"" + topic + " " + topic +
             "s word" + std::to_string(i % 17) + " shared" + std::to_string(i % 5) +
             "\", \"labels\": [\"" + topic + "\"]}\n";
  }
  write_file(dir_.file("many.jsonl"), lines);
  TrainOptions options;
  options.tuning_sample = 100;  // 50 of each category's 80 (the floor)
  const std::string model_dir = dir_.file("sampled");
  const TrainReport report =
      train_model({dir_.file("many.jsonl")}, model_dir, options, ReadOptions(), nullptr);
  EXPECT_TRUE(report.tuned_on_sample);
  EXPECT_EQ(report.tuned_on_documents, 150u);

  const ModelPaths paths = resolve_model_dir(model_dir);
  const ModelState written = read_model_file(paths.model_file);
  const TrainingCorpus corpus = load_training_corpus(Xapian::Database(paths.training_db));
  const ModelState fitted = fit_model(corpus, written.analyzer, written.training);
  EXPECT_EQ(fitted.tuned_on_documents, 150u);
  ASSERT_FALSE(written.thresholds.empty());
  EXPECT_EQ(written.thresholds, fitted.thresholds);
  EXPECT_EQ(written.knn_k, fitted.knn_k);
  EXPECT_EQ(written.method_objective, fitted.method_objective);
  EXPECT_EQ(written.svm.entry_weight, fitted.svm.entry_weight);
  EXPECT_EQ(written.svm.slope, fitted.svm.slope);
  EXPECT_EQ(written.complement_nb.dense_weights(), fitted.complement_nb.dense_weights());
}

TEST_F(TrainerTest, AddingKnownIdsReplacesThem) {
  const std::string model = dir_.file("model");
  train_model({fixture_}, model, TrainOptions(), ReadOptions(), nullptr);
  const TrainReport report =
      add_to_model({dir_.file("first.jsonl")}, model, ReadOptions(), nullptr);
  EXPECT_EQ(report.added, 15u);
  EXPECT_EQ(report.documents, 24u);
}

TEST_F(TrainerTest, AddingKeepsTheModelsSettings) {
  TrainOptions options;
  options.analyzer.stemmer = "english";
  options.nb_alpha = 0.5;
  options.default_method = Method::kRocchio;
  const std::string model = dir_.file("model");
  train_model({dir_.file("first.jsonl")}, model, options, ReadOptions(), nullptr);
  const TrainReport report =
      add_to_model({dir_.file("second.jsonl")}, model, ReadOptions(), nullptr);
  EXPECT_EQ(report.default_method, Method::kRocchio);
  const ModelState state = model_in(model);
  EXPECT_EQ(state.analyzer.stemmer, "english");
  EXPECT_DOUBLE_EQ(state.training.nb_alpha.value_or(0), 0.5);
  EXPECT_EQ(state.training.default_method, Method::kRocchio);
  EXPECT_EQ(state.training.analyzer.stemmer, "english");
}

// A setting given is used as given, so one out of range is refused (unset,
// std::nullopt, is the way to ask for cross-validation), and no model is
// written.
TEST_F(TrainerTest, GivenSettingsOutOfRangeAreRefused) {
  const std::vector<std::pair<std::function<void(TrainOptions*)>, std::string>> cases = {
      {[](TrainOptions* o) { o->nb_alpha = 0.0; }, "--alpha"},
      {[](TrainOptions* o) { o->svm_c = -1.0; }, "C of svm"},
      {[](TrainOptions* o) { o->logreg_c = 0.0; }, "C of svm"},
      {[](TrainOptions* o) { o->knn_k = 0; }, "kNN k"},
      {[](TrainOptions* o) { o->knn_similarity_power = 3; }, "similarity power"},
      {[](TrainOptions* o) { o->knn_concentration = -1.0; }, "concentration"},
      {[](TrainOptions* o) { o->rocchio_gamma = -0.5; }, "Rocchio gamma"},
  };
  for (const auto& [set, message] : cases) {
    TrainOptions options;
    set(&options);
    const std::string model = dir_.file("refused");
    try {
      train_model({fixture_}, model, options, ReadOptions(), nullptr);
      ADD_FAILURE() << "accepted: " << message;
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("unset: cross-validate"), std::string::npos);
    }
    EXPECT_FALSE(std::filesystem::exists(model + "/CURRENT")) << message;
  }
}

TEST_F(TrainerTest, FailedAddLeavesTheModelUnchanged) {
  const std::string model = dir_.file("model");
  train_model({dir_.file("first.jsonl")}, model, TrainOptions(), ReadOptions(), nullptr);
  const std::string before = read_file(resolve_model_dir(model).model_file);
  write_file(dir_.file("empty.jsonl"),
             "{\"id\": \"e\", \"labels\": [\"food\"], \"text\": \"  \"}\n");
  EXPECT_THROW(add_to_model({dir_.file("empty.jsonl")}, model, ReadOptions(), nullptr),
               InvalidArgumentError);
  write_file(dir_.file("broken.jsonl"), "{\"id\": \"b\", \"text\": \"unterminated\n");
  EXPECT_THROW(add_to_model({dir_.file("broken.jsonl")}, model, ReadOptions(), nullptr),
               InvalidArgumentError);
  EXPECT_EQ(read_file(resolve_model_dir(model).model_file), before);
  EXPECT_EQ(Categorizer(model).knn_index().num_docs(), 15u);
  EXPECT_EQ(entries_of(model), (std::vector<std::string>{"CURRENT", "autocat.lock", "gen-000001"}));
}

TEST_F(TrainerTest, AddingToNoModelIsNotFound) {
  try {
    add_to_model({fixture_}, dir_.file("absent"), ReadOptions(), nullptr);
    FAIL() << "expected NotFoundError";
  } catch (const NotFoundError& e) {
    EXPECT_NE(std::string(e.what()).find(dir_.file("absent")), std::string::npos) << e.what();
  }
}

TEST_F(TrainerTest, RetrainingAFailedRunKeepsTheOldModel) {
  const std::string model = dir_.file("model");
  train_model({fixture_}, model, TrainOptions(), ReadOptions(), nullptr);
  const std::string before = read_file(resolve_model_dir(model).model_file);
  write_file(dir_.file("unlabelled.jsonl"), "{\"id\": \"u\", \"text\": \"no labels here\"}\n");
  EXPECT_THROW(
      train_model({dir_.file("unlabelled.jsonl")}, model, TrainOptions(), ReadOptions(), nullptr),
      InvalidArgumentError);
  EXPECT_EQ(read_file(resolve_model_dir(model).model_file), before);
  EXPECT_EQ(Categorizer(model).knn_index().num_docs(), 24u);
  EXPECT_EQ(entries_of(model), (std::vector<std::string>{"CURRENT", "autocat.lock", "gen-000001"}));
}

TEST_F(TrainerTest, EmptyLabelsAreNoneAndMissingLabelsAreSkipped) {
  // "labels": [] is an example of "none of these categories"; a record
  // without the key says nothing and is skipped unless keep_unlabelled.
  std::string input = read_file(fixture_);
  input += "{\"id\": \"none-1\", \"labels\": [], \"text\": \"Weather report: rain.\"}\n";
  input += "{\"id\": \"none-2\", \"labels\": [], \"text\": \"Traffic jams downtown.\"}\n";
  input += "{\"id\": \"unsaid\", \"text\": \"Nobody labelled this.\"}\n";
  write_file(dir_.file("mixed.jsonl"), input);
  TrainOptions options;
  options.threshold_folds = 0;
  const TrainReport report = train_model({dir_.file("mixed.jsonl")}, dir_.file("default"), options,
                                         ReadOptions(), nullptr);
  EXPECT_EQ(report.documents, 26u);
  EXPECT_EQ(report.skipped_unlabelled, 1u);
  // Documents kept without labels make the model any-of, as before.
  EXPECT_EQ(report.decision, Decision::kAnyOf);
  options.keep_unlabelled = true;
  const TrainReport kept =
      train_model({dir_.file("mixed.jsonl")}, dir_.file("kept"), options, ReadOptions(), nullptr);
  EXPECT_EQ(kept.documents, 27u);
  EXPECT_EQ(kept.skipped_unlabelled, 0u);
}

// Analysis runs a chunk ahead of the writer (trainer.cc): across many
// chunks, the training database still holds the documents in input order,
// and empty documents are skipped and reported in order.
TEST_F(TrainerTest, DocumentsCrossingManyAnalysisChunksAreWrittenInInputOrder) {
  const char* words[] = {"apple pie oven", "comet orbit telescope", "goal match referee"};
  const char* labels[] = {"food", "science", "sports"};
  std::string jsonl;
  std::vector<std::string> expected_ids, expected_warnings;
  for (int i = 0; i < 1000; ++i) {
    const std::string id = "doc" + std::to_string(i);
    const bool empty = i % 97 == 0;  // punctuation only: no terms
    jsonl += "{\"id\": \"" + id + "\", \"labels\": [\"" + labels[i % 3] + "\"], \"text\": \"" +
             (empty ? std::string("?!") : words[i % 3] + std::string(" n") + std::to_string(i)) +
             "\"}\n";
    if (empty) {
      expected_warnings.push_back(dir_.file("many.jsonl") + ":" + std::to_string(i + 1) +
                                  ": skipped: no terms after analysis");
    } else {
      expected_ids.push_back(id);
    }
  }
  write_file(dir_.file("many.jsonl"), jsonl);
  std::vector<std::string> warnings;
  TrainOptions options;
  options.tune_thresholds = false;
  const TrainReport report =
      train_model({dir_.file("many.jsonl")}, dir_.file("model"), options, ReadOptions(),
                  [&](const std::string& warning) { warnings.push_back(warning); });
  EXPECT_EQ(report.added, expected_ids.size());
  EXPECT_EQ(report.skipped_empty, expected_warnings.size());
  EXPECT_EQ(warnings, expected_warnings);

  const Xapian::Database db(resolve_model_dir(dir_.file("model")).training_db);
  ASSERT_EQ(db.get_doccount(), expected_ids.size());
  for (Xapian::docid docid = 1; docid <= db.get_lastdocid(); ++docid) {
    EXPECT_EQ(db.get_document(docid).get_data(), expected_ids[docid - 1]) << docid;
  }
}

// train --add keeps the settings cross-validation chose (and the
// thresholds and calibrations) and refits the classifiers on the grown
// collection without cross-validating; --retune cross-validates again.
TEST_F(TrainerTest, AddKeepsTheTunedSettingsUnlessRetuned) {
  const std::string model_dir = dir_.file("model");
  const TrainReport trained =
      train_model({fixture_}, model_dir, TrainOptions(), ReadOptions(), nullptr);
  EXPECT_EQ(trained.cross_validations, 1u);
  EXPECT_FALSE(trained.settings_kept);
  const ModelState before = model_in(model_dir);
  ASSERT_FALSE(before.thresholds.empty());

  // The test fixture's documents: the same three categories.
  std::vector<TrainProgress> events;
  const TrainReport added =
      add_to_model({test_data("fixture_test.jsonl")}, model_dir, ReadOptions(), nullptr,
                   [&](const TrainProgress& progress) { events.push_back(progress); });
  EXPECT_TRUE(added.settings_kept);
  EXPECT_EQ(added.cross_validations, 0u);
  EXPECT_EQ(added.retune_reason, "");
  EXPECT_TRUE(added.tuned);
  // No cross-validation phase; every phase reported as it begins (done 0)
  // and ends.
  EXPECT_EQ(phase_names(added),
            (std::vector<std::string>{"copy collection", "fold journal", "read", "keep settings",
                                      "load collection", "fit", "write"}));
  std::vector<std::string> begun, ended;
  for (const TrainProgress& event : events) {
    if (event.finished) {
      ended.push_back(event.phase);
    } else if (begun.empty() || begun.back() != event.phase) {
      EXPECT_EQ(event.done, 0u) << event.phase;
      begun.push_back(event.phase);
    }
  }
  EXPECT_EQ(begun, phase_names(added));
  EXPECT_EQ(ended, phase_names(added));
  const ModelState after = model_in(model_dir);
  EXPECT_GT(after.num_docs, before.num_docs);
  EXPECT_EQ(after.categories, before.categories);
  EXPECT_EQ(after.thresholds, before.thresholds);
  EXPECT_EQ(after.training.default_method, before.training.default_method);
  EXPECT_EQ(after.decision, before.decision);
  EXPECT_EQ(after.knn_k, before.knn_k);
  EXPECT_EQ(after.knn_similarity_power, before.knn_similarity_power);
  EXPECT_EQ(after.knn_concentration, before.knn_concentration);
  EXPECT_EQ(after.rocchio_gamma, before.rocchio_gamma);
  for (const auto& [a, b] : {std::pair{&after.multinomial_nb, &before.multinomial_nb},
                             {&after.bernoulli_nb, &before.bernoulli_nb},
                             {&after.complement_nb, &before.complement_nb}}) {
    EXPECT_EQ(a->alpha, b->alpha);
    EXPECT_EQ(a->tfidf(), b->tfidf());
  }
  EXPECT_EQ(after.svm.c, before.svm.c);
  EXPECT_EQ(after.logreg.c, before.logreg.c);
  EXPECT_EQ(after.svm.slope, before.svm.slope);
  EXPECT_EQ(after.svm.intercept, before.svm.intercept);
  ASSERT_EQ(after.calibration.size(), before.calibration.size());
  for (size_t m = 0; m < after.calibration.size(); ++m) {
    EXPECT_EQ(after.calibration[m].slope, before.calibration[m].slope) << m;
    EXPECT_EQ(after.calibration[m].intercept, before.calibration[m].intercept) << m;
  }
  EXPECT_EQ(after.combo.weights, before.combo.weights);
  EXPECT_EQ(after.method_objective, before.method_objective);
  // The classifiers themselves are fitted on the new collection.
  EXPECT_NE(after.terms, before.terms);
  EXPECT_NE(after.rocchio.entry_weight, before.rocchio.entry_weight);
  EXPECT_NE(after.svm.entry_weight, before.svm.entry_weight);
  const Categorizer categorizer(model_dir);
  EXPECT_EQ(categorizer.knn_index().num_docs(), after.num_docs);

  // --retune: the thresholds are those cross-validation gives on the new
  // collection, as a new training's.
  write_file(dir_.file("one.jsonl"),
             "{\"id\": \"extra-1\", \"labels\": [\"food\"], \"text\": \"Simmer the soup "
             "with garlic and basil.\"}\n");
  const TrainReport retuned = add_to_model({dir_.file("one.jsonl")}, model_dir, ReadOptions(),
                                           nullptr, {}, /*retune=*/true);
  EXPECT_FALSE(retuned.settings_kept);
  EXPECT_EQ(retuned.cross_validations, 1u);
  EXPECT_EQ(phase_names(retuned),
            (std::vector<std::string>{"copy collection", "fold journal", "read", "load collection",
                                      "cross-validate", "fit", "write"}));
  const ModelState tuned = model_in(model_dir);
  const TrainingCorpus corpus =
      load_training_corpus(Xapian::Database(resolve_model_dir(model_dir).training_db));
  EXPECT_EQ(tuned.thresholds, tune_settings(corpus, tuned.training, tuned.decision).thresholds);
}

// train --add keeps kNN's tf transform as it keeps the other settings: the
// refitted model and the index file it writes use it.
TEST_F(TrainerTest, AddKeepsTheKnnTfTransform) {
  const std::string model_dir = dir_.file("model");
  train_model({fixture_}, model_dir, TrainOptions(), ReadOptions(), nullptr);
  // Whichever cross-validation chose, the model is made to hold the other.
  ModelState state = model_in(model_dir);
  const KnnTf other = state.knn_tf == KnnTf::kSublinear ? KnnTf::kDoubleLog : KnnTf::kSublinear;
  state.knn_tf = other;
  write_model_file(resolve_model_dir(model_dir).model_file, state);
  const TrainReport added =
      add_to_model({test_data("fixture_test.jsonl")}, model_dir, ReadOptions(), nullptr);
  EXPECT_TRUE(added.settings_kept);
  EXPECT_EQ(added.knn_tf, other);
  const ModelState after = model_in(model_dir);
  EXPECT_EQ(after.knn_tf, other);
  const ModelPaths paths = resolve_model_dir(model_dir);
  const TrainingCorpus corpus = load_training_corpus(Xapian::Database(paths.training_db));
  const std::string expected = dir_.file("expected.index");
  write_knn_index(corpus, after.knn_weights(compute_idf(after.df, after.num_docs, after.selected)),
                  other, expected);
  EXPECT_EQ(testing_util::read_file(paths.knn_index), testing_util::read_file(expected));
  EXPECT_EQ(Categorizer(model_dir).knn_index().tf(), other);
}

// A document with two labels turns a detected one-of model into any-of:
// its one-of thresholds cannot serve, so --add cross-validates again.
TEST_F(TrainerTest, AddRetunesWhenTheDecisionModeChanges) {
  const std::string model_dir = dir_.file("model");
  train_model({fixture_}, model_dir, TrainOptions(), ReadOptions(), nullptr);
  ASSERT_EQ(model_in(model_dir).decision, Decision::kOneOf);
  write_file(dir_.file("two.jsonl"),
             "{\"id\": \"both\", \"labels\": [\"food\", \"science\"], \"text\": \"The "
             "chemistry of baking bread.\"}\n");
  const TrainReport report =
      add_to_model({dir_.file("two.jsonl")}, model_dir, ReadOptions(), nullptr);
  EXPECT_FALSE(report.settings_kept);
  EXPECT_EQ(report.cross_validations, 1u);
  EXPECT_NE(report.retune_reason.find("decision mode changed to any-of"), std::string::npos)
      << report.retune_reason;
  EXPECT_EQ(model_in(model_dir).decision, Decision::kAnyOf);
}

}  // namespace
}  // namespace autocat::internal

namespace autocat::internal {
namespace {

// A model whose kNN weights raised the terms' class concentration (files
// before version 7) cannot have them recomputed by a refit: train --add
// cross-validates again and says why.
TEST(TrainerOldKnnWeightsTest, AddRetunesAModelWithClassConcentrationWeights) {
  testing_util::TempDir dir;
  const std::string model_dir = dir.file("model");
  TrainOptions options;
  options.knn_concentration = 0.5;
  train_model({testing_util::test_data("fixture_train.jsonl")}, model_dir, options, ReadOptions(),
              nullptr);
  const std::string model_file = resolve_model_dir(model_dir).model_file;
  ModelState state = read_model_file(model_file);
  ASSERT_TRUE(state.knn_relevance_frequency);
  state.knn_relevance_frequency = false;
  write_model_file(model_file, state);
  const TrainReport added = add_to_model({testing_util::test_data("fixture_test.jsonl")}, model_dir,
                                         ReadOptions(), nullptr);
  EXPECT_FALSE(added.settings_kept);
  EXPECT_NE(added.retune_reason.find("predate relevance frequency"), std::string::npos)
      << added.retune_reason;
  EXPECT_TRUE(read_model_file(resolve_model_dir(model_dir).model_file).knn_relevance_frequency);
}

}  // namespace
}  // namespace autocat::internal
