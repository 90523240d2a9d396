#include "classify/model/model_io.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <new>
#include <sstream>

#include "autocat/error.h"
#include "classify/train/trainer.h"
#include "test_util.h"

// Every allocation of this test program goes through here, so a test can
// check that decoding a crafted file never asks for much more memory than
// the file holds. Requests above 256 MB fail at once instead of exhausting
// the machine (so the tests stay safe even where the bound is missing).
namespace {
std::atomic<size_t> largest_allocation{0};
constexpr size_t kRefusedAllocation = size_t(256) << 20;
}  // namespace

void* operator new(size_t bytes) {
  size_t seen = largest_allocation.load();
  while (bytes > seen && !largest_allocation.compare_exchange_weak(seen, bytes)) {
  }
  if (bytes > kRefusedAllocation) throw std::bad_alloc();
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}
// The non-throwing form (std::stable_sort's buffer) too, so that every
// allocation the deletes below free is one of ours.
void* operator new(size_t bytes, const std::nothrow_t& /*tag*/) noexcept {
  try {
    return operator new(bytes);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
// GCC flags free() of what its own operator new allocated; here both are ours.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t /*bytes*/) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace autocat::internal {
namespace {

using testing_util::read_file;
using testing_util::TempDir;
using testing_util::write_file;

constexpr double kNeverAssignForTest = 2.0;

class ModelIoTest : public testing::Test {
 protected:
  void SetUp() override {
    const TrainingCorpus corpus = make_training_corpus({
        {{"goal", "match", "goal"}, {"sports"}},
        {{"match", "team"}, {"sports"}},
        {{"atom", "energy"}, {"science"}},
        {{"energy", "cell", "atom"}, {"science"}},
    });
    AnalyzerSettings analyzer;
    analyzer.stopwords = {"a", "the"};
    model_ = fit_model(corpus, analyzer, TrainOptions());
    // Too few documents to tune thresholds; set some to check they round-trip.
    model_.thresholds.assign(all_methods().size(), {0.25, kNeverAssignForTest});
    path_ = dir_.file("model.autocat");
    write_model_file(path_, model_);
  }

  // Expects reading the file to throw ModelFormatError mentioning `needle`
  // and the file's path.
  void ExpectRefused(const std::string& needle) {
    try {
      read_model_file(path_);
      FAIL() << "expected ModelFormatError";
    } catch (const ModelFormatError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(path_), std::string::npos) << message;
      EXPECT_NE(message.find(needle), std::string::npos) << message;
    }
  }

  TempDir dir_;
  ModelState model_;
  std::string path_;
};

TEST_F(ModelIoTest, RoundTripKeepsEveryField) {
  const ModelState loaded = read_model_file(path_);
  EXPECT_EQ(loaded.categories, (std::vector<std::string>{"science", "sports"}));
  EXPECT_EQ(loaded.terms, model_.terms);
  EXPECT_EQ(loaded.df, model_.df);
  EXPECT_EQ(loaded.num_docs, 4u);
  EXPECT_EQ(loaded.analyzer.stopwords, model_.analyzer.stopwords);
  EXPECT_EQ(loaded.rocchio.entry_weight, model_.rocchio.entry_weight);
  EXPECT_EQ(loaded.multinomial_nb.dense_weights(), model_.multinomial_nb.dense_weights());
  EXPECT_EQ(loaded.bernoulli_nb.class_constant, model_.bernoulli_nb.class_constant);
  EXPECT_EQ(loaded.complement_nb.dense_weights(), model_.complement_nb.dense_weights());
  EXPECT_EQ(loaded.thresholds, model_.thresholds);
}

TEST_F(ModelIoTest, RoundTripKeepsDecisionSettings) {
  model_.decision = Decision::kAnyOf;
  model_.has_unlabelled = true;
  model_.knn_k = 150;
  model_.knn_similarity_power = 2;
  model_.rocchio_gamma = 1.5;
  model_.knn_objective = {{50, 1, 0.8, 0.0, KnnTf::kSublinear},
                          {150, 2, 0.9, 0.5, KnnTf::kDoubleLog}};
  model_.knn_concentration = 0.5;
  model_.knn_tf = KnnTf::kDoubleLog;
  model_.knn_term_weight.assign(model_.terms.size(), 0.25f);
  model_.knn_term_weight.back() = 2.5f;
  model_.rocchio_gamma_objective = {{0.0, 0.7}, {1.5, 0.75}};
  model_.training.knn_concentration = 0.5;
  model_.training.decision = Decision::kAnyOf;
  model_.training.knn_k = 150;
  model_.training.knn_similarity_power = 2;
  model_.training.threshold_folds = 4;
  write_model_file(path_, model_);
  const ModelState loaded = read_model_file(path_);
  EXPECT_EQ(loaded.decision, Decision::kAnyOf);
  EXPECT_TRUE(loaded.has_unlabelled);
  EXPECT_EQ(loaded.knn_k, 150);
  EXPECT_EQ(loaded.knn_similarity_power, 2);
  EXPECT_EQ(loaded.rocchio_gamma, 1.5);
  ASSERT_EQ(loaded.knn_objective.size(), 2u);
  EXPECT_EQ(loaded.knn_objective[1].k, 150);
  EXPECT_EQ(loaded.knn_objective[1].similarity_power, 2);
  EXPECT_EQ(loaded.knn_objective[1].objective, 0.9);
  EXPECT_EQ(loaded.knn_objective[1].concentration, 0.5);
  EXPECT_EQ(loaded.knn_objective[0].tf, KnnTf::kSublinear);
  EXPECT_EQ(loaded.knn_objective[1].tf, KnnTf::kDoubleLog);
  EXPECT_EQ(loaded.knn_concentration, 0.5);
  EXPECT_EQ(loaded.knn_tf, KnnTf::kDoubleLog);
  EXPECT_EQ(loaded.knn_term_weight, model_.knn_term_weight);
  EXPECT_EQ(loaded.training.knn_concentration, 0.5);
  EXPECT_EQ(loaded.rocchio_gamma_objective, model_.rocchio_gamma_objective);
  EXPECT_EQ(loaded.training.decision, std::optional<Decision>(Decision::kAnyOf));
  EXPECT_EQ(loaded.training.knn_k, 150);
  EXPECT_EQ(loaded.training.knn_similarity_power, 2);
  EXPECT_EQ(loaded.training.threshold_folds, 4);
  // Unset stays unset ("detect from the data").
  model_.training.decision.reset();
  write_model_file(path_, model_);
  EXPECT_FALSE(read_model_file(path_).training.decision.has_value());
}

// A model file written before decision modes existed (tests/data, trained
// on examples/data/train.jsonl on 2026-11-22) still loads, as a one-of
// model with k 50 and no "other".
TEST(ModelIoCompatibilityTest, ModelsFromBeforeDecisionModesLoad) {
  const ModelState old = read_model_file(testing_util::test_data("model-2026-11-22-v0.autocat"));
  EXPECT_EQ(old.categories, (std::vector<std::string>{"astronomy", "computing", "cooking",
                                                      "football", "medicine"}));
  EXPECT_EQ(old.num_docs, 112u);
  EXPECT_EQ(old.decision, Decision::kOneOf);
  EXPECT_FALSE(old.has_unlabelled);
  EXPECT_EQ(old.knn_k, kDefaultKnnK);
  EXPECT_EQ(old.knn_similarity_power, 1);
  EXPECT_EQ(old.rocchio_gamma, 0.0);
  EXPECT_FALSE(old.training.decision.has_value());
  EXPECT_EQ(old.thresholds.size(), all_methods().size());
  EXPECT_FALSE(old.rocchio.entry_weight.empty());
  // From before n-grams and cross-validated alpha / default method: words only.
  EXPECT_EQ(old.analyzer.ngrams, 1);
  EXPECT_EQ(old.training.analyzer.ngrams, 1);
  EXPECT_FALSE(old.training.choose_default_method);
  EXPECT_TRUE(old.method_objective.empty());
  EXPECT_TRUE(old.nb_alpha_objective.empty());
}

// A model file written just before kNN's class-concentration weights
// (tests/data, examples/data/train.jsonl trained on 2026-11-24, format
// version 5) loads with kNN weighing terms by idf alone, as it was trained,
// and `train --add` keeps that.
TEST(ModelIoCompatibilityTest, ModelsFromBeforeKnnConcentrationLoad) {
  const ModelState old = read_model_file(testing_util::test_data("model-2026-11-24-v5.autocat"));
  EXPECT_EQ(old.num_docs, 112u);
  EXPECT_EQ(old.knn_k, 10);
  EXPECT_EQ(old.knn_similarity_power, 2);
  EXPECT_EQ(old.knn_concentration, 0.0);
  EXPECT_EQ(old.knn_tf, KnnTf::kSublinear);  // as it was trained
  EXPECT_TRUE(old.knn_term_weight.empty());
  EXPECT_EQ(old.training.knn_concentration, 0.0);
  // kNN was stacked at any size then: `train --add` keeps that.
  EXPECT_EQ(old.training.knn_cost_limit, 0.0);
  ASSERT_FALSE(old.knn_objective.empty());
  for (const KnnCandidate& candidate : old.knn_objective) {
    EXPECT_EQ(candidate.concentration, 0.0);
    EXPECT_EQ(candidate.tf, KnnTf::kSublinear);
    EXPECT_GT(candidate.objective, 0.0);
  }
  EXPECT_FALSE(old.combo.empty());
  EXPECT_EQ(old.training.tuning_sample, 50000);
  // Its Naive Bayes weights were stored dense (NaiveBayesModel version 1).
  EXPECT_EQ(old.complement_nb.term_weight.size(), old.terms.size() * old.categories.size());
  EXPECT_TRUE(std::any_of(old.complement_nb.term_weight.begin(),
                          old.complement_nb.term_weight.end(), [](float w) { return w != 0.0f; }));
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Many categories: most Naive Bayes weights are those of terms a category
// never saw, which the file stores as per-term and per-category values
// rather than one float each. Loading rebuilds every weight bit for bit, so
// scores do not change.
TEST(ModelIoSparseTest, ManyCategoriesNaiveBayesIsStoredSparseAndLoadsBitIdentical) {
  constexpr int kCategories = 300;
  std::vector<LabelledTerms> documents;
  uint64_t state = 7;
  const auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return uint32_t(state >> 33);
  };
  for (int d = 0; d < 2 * kCategories; ++d) {
    const int c = d % kCategories;
    LabelledTerms doc;
    for (int i = 0; i < 8; ++i) doc.terms.push_back("w" + std::to_string(next() % 1500));
    for (int i = 0; i < 3; ++i) {
      doc.terms.push_back("c" + std::to_string(c) + "x" + std::to_string(next() % 4));
    }
    doc.labels = {"cat" + std::to_string(c)};
    documents.push_back(std::move(doc));
  }
  const TrainingCorpus corpus = make_training_corpus(documents);
  TrainOptions options;
  options.tune_thresholds = false;
  const ModelState model = fit_model(corpus, AnalyzerSettings(), options);
  TempDir dir;
  const std::string path = dir.file("model.autocat");
  write_model_file(path, model);

  const uint64_t dense_nb_bytes = sizeof(float) * 3 * corpus.num_terms() * uint64_t{kCategories};
  ASSERT_EQ(model.multinomial_nb.dense_weights().size(),
            corpus.num_terms() * uint64_t{kCategories});

  // The linear models (SVM, logistic regression) are stored apart; the three
  // Naive Bayes sections together must take a fraction of their dense size.
  const std::string bytes = read_file(path);
  // The lengths of sections first..last, from the section table (kind,
  // CRC, offset, length per section).
  const auto section_bytes = [&](uint32_t first, uint32_t last) {
    uint64_t total = 0;
    for (uint32_t i = 0; i < 1 + kNumModelParts; ++i) {
      uint32_t kind = 0;
      uint64_t length = 0;
      std::memcpy(&kind, bytes.data() + 24 + 24 * i, 4);
      std::memcpy(&length, bytes.data() + 24 + 24 * i + 16, 8);
      if (kind >= first && kind <= last) total += length;
    }
    return total;
  };
  const uint64_t nb_bytes = section_bytes(1 + uint32_t(ModelPart::kMultinomialNb),
                                          1 + uint32_t(ModelPart::kComplementNb));
  EXPECT_LT(nb_bytes, dense_nb_bytes / 8) << "dense Naive Bayes weights: " << dense_nb_bytes;
  // The linear models' non-zero weights take about 5 bytes each, not 8
  // (category and weight).
  const uint64_t linear_entries = model.svm.entry_weight.size() + model.logreg.entry_weight.size();
  ASSERT_GT(linear_entries, 0u);
  EXPECT_LT(section_bytes(1 + uint32_t(ModelPart::kSvm), 1 + uint32_t(ModelPart::kLogreg)),
            linear_entries * 6);

  const ModelState loaded = read_model_file(path);
  const std::pair<const NaiveBayesModel*, const NaiveBayesModel*> pairs[] = {
      {&model.multinomial_nb, &loaded.multinomial_nb},
      {&model.bernoulli_nb, &loaded.bernoulli_nb},
      {&model.complement_nb, &loaded.complement_nb}};
  for (const auto& [fitted, read] :
       {std::pair(&model.svm, &loaded.svm), std::pair(&model.logreg, &loaded.logreg)}) {
    EXPECT_EQ(fitted->term_start, read->term_start);
    EXPECT_EQ(fitted->entry_category, read->entry_category);
    EXPECT_TRUE(same_bits(fitted->entry_weight, read->entry_weight));
    EXPECT_TRUE(same_bits(fitted->bias, read->bias));
  }
  for (const auto& [fitted, read] : pairs) {
    SCOPED_TRACE(fitted->variant);
    EXPECT_TRUE(same_bits(fitted->dense_weights(), read->dense_weights()));
    // Held sparse in memory too: about the file's entries, not terms x
    // categories.
    ASSERT_TRUE(read->weight_rows);
    EXPECT_TRUE(read->term_weight.empty());
    EXPECT_LT(read->weight_rows->entry_weight.size(),
              corpus.num_terms() * uint64_t{kCategories} / 8);
    EXPECT_EQ(fitted->class_constant, read->class_constant);
    EXPECT_EQ(fitted->log_prior, read->log_prior);
    EXPECT_TRUE(same_bits(fitted->idf, read->idf));
    const NaiveBayesClassifier before(*fitted), after(*read);
    for (uint32_t d = 0; d < 20; ++d) {
      DocumentTerms doc;
      for (uint64_t p = 0; p < corpus.postings_start.size() - 1; ++p) {
        for (uint64_t i = corpus.postings_start[p]; i < corpus.postings_start[p + 1]; ++i) {
          if (corpus.posting_doc[i] == d) doc.terms.push_back({TermId(p), corpus.posting_wdf[i]});
        }
      }
      std::vector<double> expected, actual;
      before.score(doc, ClassifyOptions(), &expected);
      after.score(doc, ClassifyOptions(), &actual);
      EXPECT_EQ(expected, actual);
    }
  }
}

// The sparse form is decoded only if it is consistent; otherwise the
// weights stay empty and the model's check refuses the file.
TEST(ModelIoSparseTest, InconsistentSparseWeightsDecodeToNothing) {
  NaiveBayesModel model;
  model.variant = static_cast<int>(Method::kNaiveBayes);
  model.num_categories = 2;
  NbSparseWeights sparse;
  sparse.num_terms = 2;
  sparse.zero_row = {0, 0};
  sparse.column_default = {-1.0f, -2.0f};
  sparse.row_entries = {1, 0};
  sparse.entry_category = {1};
  sparse.entry_weight = {-0.5f};
  model.decode_sparse(sparse);
  EXPECT_EQ(model.term_weight, (std::vector<float>{-1.0f, -0.5f, -1.0f, -2.0f}));
  sparse.entry_category = {2};  // no such category
  model.decode_sparse(sparse);
  EXPECT_TRUE(model.term_weight.empty());
  sparse.entry_category = {1};
  sparse.row_entries = {1, 1};  // more entries than listed
  model.decode_sparse(sparse);
  EXPECT_TRUE(model.term_weight.empty());
}

// A sparse form read from a file is decoded only for the term and category
// counts of the model's core: a few crafted bytes cannot make the loader
// allocate weights for terms the model does not have.
TEST(ModelIoSparseTest, PendingSparseWeightsMustMatchTheCore) {
  NbSparseWeights sparse;
  sparse.num_terms = 2;
  sparse.zero_row = {0, 1};
  sparse.column_default = {-1.0f, -2.0f};
  sparse.row_entries = {0, 0};
  NaiveBayesModel model;
  model.variant = static_cast<int>(Method::kNaiveBayes);
  model.num_categories = 2;
  model.pending_sparse = std::make_shared<const NbSparseWeights>(sparse);
  model.decode_pending(/*terms=*/3, /*categories=*/2);  // the core has 3 terms
  EXPECT_EQ(model.num_terms(), 0U);
  EXPECT_EQ(model.pending_sparse, nullptr);
  model.pending_sparse = std::make_shared<const NbSparseWeights>(sparse);
  model.decode_pending(/*terms=*/2, /*categories=*/3);
  EXPECT_EQ(model.num_terms(), 0U);
  model.pending_sparse = std::make_shared<const NbSparseWeights>(sparse);
  model.decode_pending(/*terms=*/2, /*categories=*/2);
  EXPECT_EQ(model.dense_weights(), (std::vector<float>{-1.0f, -2.0f, 0.0f, 0.0f}));
}

// A linear model archives its packed weights a piece at a time: the bytes
// are those of the whole packed vector archived at once, for a model whose
// packed weights span many pieces.
TEST(ModelIoSparseTest, LinearWeightsArchivedInPiecesAreTheVectorsBytes) {
  LinearModel model;
  model.num_categories = 7;
  model.c = 0.5;
  model.bias = model.slope = model.intercept = std::vector<float>(7, 0.25f);
  uint32_t state = 3;
  model.term_start.push_back(0);
  for (uint32_t t = 0; t < 200000; ++t) {
    for (uint32_t c = 0; c < 7; ++c) {
      state = state * 1103515245u + 12345u;
      if ((state >> 16) % 3 == 0) continue;
      model.entry_category.push_back(c);
      model.entry_weight.push_back(float(int32_t(state >> 8) % 1000) / 7.0f + 0.5f);
    }
    model.term_start.push_back(model.entry_category.size());
  }
  const std::vector<uint8_t> packed = model.packed_weights();
  ASSERT_GT(packed.size(), size_t{3} << 20);  // several pieces
  EXPECT_EQ(model.packed_bytes(), packed.size());
  std::ostringstream whole(std::ios::binary), pieces(std::ios::binary);
  {
    boost::archive::binary_oarchive archive(whole);
    archive << model.num_categories << packed << model.bias << model.slope << model.intercept
            << model.c;
  }
  {
    boost::archive::binary_oarchive archive(pieces);
    archive << model;
  }
  // Both start with the archive's header; the model's own archive then
  // carries its class's version, and then the same bytes.
  std::ostringstream empty(std::ios::binary);
  { boost::archive::binary_oarchive archive(empty); }
  const std::string expected = whole.str(), got = pieces.str();
  const size_t header = empty.str().size();
  ASSERT_GE(got.size(), expected.size());
  const size_t class_info = got.size() - expected.size();
  EXPECT_LT(class_info, 16U);
  EXPECT_EQ(got.substr(0, header), expected.substr(0, header));
  EXPECT_TRUE(got.compare(header + class_info, std::string::npos, expected, header) == 0);
  LinearModel read;
  std::istringstream in(got, std::ios::binary);
  {
    boost::archive::binary_iarchive archive(in);
    archive >> read;
  }
  EXPECT_EQ(read.term_start, model.term_start);
  EXPECT_EQ(read.entry_category, model.entry_category);
  EXPECT_EQ(read.entry_weight, model.entry_weight);
}

// Packed linear weights: a row listed by category gaps and a row stored
// whole decode to the same entries; any truncation or trailing byte leaves
// a model the check refuses.
TEST(ModelIoSparseTest, PackedLinearWeightsRoundTripAndDamageIsRefused) {
  LinearModel model;
  model.num_categories = 3;
  model.term_start = {0, 2, 2, 5};
  model.entry_category = {0, 2, 0, 1, 2};
  model.entry_weight = {0.5f, -0.25f, 1e-9f, -3.0f, 7.0f};
  model.bias = model.slope = model.intercept = {0.1f, 0.2f, 0.3f};
  const std::vector<uint8_t> packed = model.packed_weights();
  LinearModel read = model;
  read.unpack_weights(packed);
  EXPECT_EQ(read.term_start, model.term_start);
  EXPECT_EQ(read.entry_category, model.entry_category);
  EXPECT_EQ(read.entry_weight, model.entry_weight);
  EXPECT_TRUE(linear_model_consistent(read, 3, 3));
  for (size_t size = 0; size < packed.size(); ++size) {
    read.unpack_weights(std::vector<uint8_t>(packed.begin(), packed.begin() + size));
    EXPECT_FALSE(linear_model_consistent(read, 3, 3)) << size << " bytes";
  }
  std::vector<uint8_t> longer = packed;
  longer.push_back(0);
  read.unpack_weights(longer);
  EXPECT_FALSE(linear_model_consistent(read, 3, 3));
  LinearModel untrained;
  read.unpack_weights(untrained.packed_weights());
  EXPECT_TRUE(read.term_start.empty());
}

TEST_F(ModelIoTest, RoundTripKeepsNgramsAndCrossValidatedChoices) {
  model_.analyzer.ngrams = 2;
  model_.training.analyzer.ngrams = 2;
  model_.training.choose_default_method = true;
  model_.training.nb_alpha.reset();  // cross-validated
  model_.method_objective.assign(all_methods().size(), 0.5);
  model_.nb_alpha_objective = {{{0.01, 0.6}, {1.0, 0.7}}, {{0.3, 0.4}}, {}};
  write_model_file(path_, model_);
  const ModelState loaded = read_model_file(path_);
  EXPECT_EQ(loaded.analyzer.ngrams, 2);
  EXPECT_EQ(loaded.training.analyzer.ngrams, 2);
  EXPECT_TRUE(loaded.training.choose_default_method);
  EXPECT_EQ(loaded.training.nb_alpha, std::nullopt);
  EXPECT_EQ(loaded.method_objective, model_.method_objective);
  EXPECT_EQ(loaded.nb_alpha_objective, model_.nb_alpha_objective);
  EXPECT_EQ(read_analyzer_settings(path_).ngrams, 2);
}

TEST_F(ModelIoTest, AnalyzerSettingsReadAlone) {
  const AnalyzerSettings settings = read_analyzer_settings(path_);
  EXPECT_EQ(settings.stopwords, (std::vector<std::string>{"a", "the"}));
  EXPECT_EQ(settings.stemmer, model_.analyzer.stemmer);
  EXPECT_EQ(settings.max_term_bytes, model_.analyzer.max_term_bytes);
  write_file(path_, read_file(path_).substr(0, 40));
  ExpectRefused("truncated");
  EXPECT_THROW(read_analyzer_settings(path_), ModelFormatError);
}

TEST_F(ModelIoTest, FileStartsWithMagicAndVersion) {
  const std::string bytes = read_file(path_);
  ASSERT_GE(bytes.size(), 12u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("AUTOCAT\0", 8));
  EXPECT_EQ(static_cast<unsigned char>(bytes[8]), kModelFormatVersion);
}

TEST_F(ModelIoTest, NoTemporaryFileLeftBehind) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1);
}

TEST_F(ModelIoTest, RefusesForeignFile) {
  write_file(path_, "{\"this\": \"is json, not a model\"}\n");
  ExpectRefused("not an autocat model file");
}

TEST_F(ModelIoTest, RefusesEmptyFile) {
  write_file(path_, "");
  ExpectRefused("not an autocat model file");
}

TEST_F(ModelIoTest, RefusesNewerFormat) {
  std::string bytes = read_file(path_);
  bytes[8] = static_cast<char>(kModelFormatVersion + 1);
  write_file(path_, bytes);
  ExpectRefused("newer than this autocat reads");
}

TEST_F(ModelIoTest, RefusesTruncatedFile) {
  const std::string bytes = read_file(path_);
  write_file(path_, bytes.substr(0, bytes.size() / 2));
  ExpectRefused("truncated");
}

TEST_F(ModelIoTest, RefusesTruncatedHeader) {
  write_file(path_, read_file(path_).substr(0, 14));
  ExpectRefused("truncated");
}

TEST_F(ModelIoTest, RefusesFlippedByte) {
  std::string bytes = read_file(path_);
  bytes[bytes.size() - 3] ^= 0x5a;
  write_file(path_, bytes);
  ExpectRefused("checksum");
}

// A model whose every size agrees, written through the normal writer, but
// whose cross-references or settings are wrong (as a buggy or crafted
// writer could produce: the CRC is valid).
struct BadModel {
  const char* name;
  std::function<void(ModelState*)> spoil;
  const char* complaint;
};

TEST_F(ModelIoTest, RefusesInconsistentModelsWithValidChecksum) {
  const std::vector<BadModel> cases = {
      // classify --method rocchio read out of bounds with this one.
      {"more Rocchio centroids than categories",
       [](ModelState* m) { m->rocchio.num_categories = 7; }, "Rocchio centroid count"},
      {"kNN k of 0 (assigned nothing)", [](ModelState* m) { m->knn_k = 0; }, "kNN k below 1"},
      {"kNN k negative", [](ModelState* m) { m->knn_k = -3; }, "kNN k below 1"},
      {"similarity power 3", [](ModelState* m) { m->knn_similarity_power = 3; }, "power"},
      {"kNN term weights for one term",
       [](ModelState* m) {
         m->knn_concentration = 0.5;
         m->knn_term_weight.assign(1, 1.0f);
       },
       "kNN term weights"},
      {"kNN term weights without a concentration",
       [](ModelState* m) { m->knn_term_weight.assign(m->terms.size(), 1.0f); }, "kNN term weights"},
      {"negative kNN term weight",
       [](ModelState* m) {
         m->knn_concentration = 1;
         m->knn_term_weight.assign(m->terms.size(), -1.0f);
       },
       "kNN term weights negative"},
      {"NaN kNN concentration", [](ModelState* m) { m->knn_concentration = std::nan(""); },
       "kNN concentration"},
      {"kNN tf transform 5", [](ModelState* m) { m->knn_tf = static_cast<KnnTf>(5); },
       "kNN tf transform"},
      {"kNN candidate's tf transform 3",
       [](ModelState* m) {
         m->knn_objective = {{10, 1, 0.5, 0.0, static_cast<KnnTf>(3)}};
       },
       "kNN cross-validation results"},
      {"negative gamma", [](ModelState* m) { m->rocchio_gamma = -1; }, "Rocchio gamma"},
      {"NaN gamma", [](ModelState* m) { m->rocchio_gamma = std::nan(""); }, "Rocchio gamma"},
      {"decision 7", [](ModelState* m) { m->decision = static_cast<Decision>(7); }, "decision"},
      {"training decision 9",
       [](ModelState* m) { m->training.decision = static_cast<Decision>(9); }, "decision"},
      {"default method 42",
       [](ModelState* m) { m->training.default_method = static_cast<Method>(42); },
       "default method"},
      {"unsorted categories", [](ModelState* m) { std::swap(m->categories[0], m->categories[1]); },
       "categories"},
      {"duplicate terms", [](ModelState* m) { m->terms[1] = m->terms[0]; }, "terms"},
      {"df beyond the document count", [](ModelState* m) { m->df[0] = m->num_docs + 1; },
       "more documents"},
      {"selected flag 5", [](ModelState* m) { m->selected.assign(m->terms.size(), 5); },
       "selected"},
      {"thresholds for one method", [](ModelState* m) { m->thresholds.resize(1); },
       "thresholds per method"},
      {"NaN threshold", [](ModelState* m) { m->thresholds[1][0] = std::nan(""); }, "NaN"},
      {"Rocchio term offsets going back",
       [](ModelState* m) { std::swap(m->rocchio.term_start[1], m->rocchio.term_start[2]); },
       "Rocchio centroid entries"},
      {"Rocchio category out of range", [](ModelState* m) { m->rocchio.entry_category[0] = 2; },
       "Rocchio category index"},
      {"infinite centroid weight", [](ModelState* m) { m->rocchio.entry_weight[0] = INFINITY; },
       "non-finite"},
      {"Naive Bayes variant swapped",
       [](ModelState* m) { m->multinomial_nb.variant = static_cast<int>(Method::kRocchio); },
       "variant"},
      {"Naive Bayes weights for fewer terms",
       [](ModelState* m) {
         m->bernoulli_nb.make_dense();
         m->bernoulli_nb.term_weight.pop_back();
       },
       "sizes differ"},
      {"Naive Bayes for more categories",
       [](ModelState* m) { m->complement_nb.num_categories = 3; }, "sizes differ"},
      // Loaded, then refused by NaiveBayesClassifier outside any handler:
      // the model-file fuzzer's abort.
      {"Naive Bayes without class constants",
       [](ModelState* m) { m->bernoulli_nb.class_constant.clear(); }, "sizes differ"},
      {"NaN prior", [](ModelState* m) { m->multinomial_nb.log_prior[0] = std::nan(""); }, "NaN"},
      {"zero alpha", [](ModelState* m) { m->complement_nb.alpha = 0; }, "alpha"},
      {"unknown stemmer", [](ModelState* m) { m->analyzer.stemmer = "klingon"; }, "stemmer"},
      {"max_term_bytes 0", [](ModelState* m) { m->analyzer.max_term_bytes = 0; }, "max_term_bytes"},
      {"training max_term_bytes -1",
       [](ModelState* m) { m->training.analyzer.max_term_bytes = -1; }, "max_term_bytes"},
      {"unsorted stopwords",
       [](ModelState* m) {
         m->analyzer.stopwords = {"the", "a"};
       },
       "stopwords"},
  };
  for (const BadModel& bad : cases) {
    SCOPED_TRACE(bad.name);
    ModelState spoiled = model_;
    bad.spoil(&spoiled);
    write_model_file(path_, spoiled);
    ExpectRefused(bad.complaint);
  }
}

// The payload of `model` written to `path` in format version 1 (one Boost
// archive; version 2's sections are decoded by the same bounded decoder),
// and a way to write it back with a valid header and CRC, as an attacker
// would after patching it.
std::string v1_payload(const std::string& path, const ModelState& model) {
  write_model_file(path, model, 1);
  return read_file(path).substr(kModelHeaderBytes);
}

void write_with_valid_checksum(const std::string& path, const std::string& payload) {
  write_file(path, model_file_header(payload) + payload);
}

// The offset of the 8-byte little-endian length written just before `text`.
size_t length_field_before(const std::string& payload, const std::string& text) {
  std::string needle;
  for (int i = 0; i < 8; ++i) needle.push_back(static_cast<char>(uint64_t(text.size()) >> (8 * i)));
  needle += text;
  const size_t at = payload.find(needle);
  EXPECT_NE(at, std::string::npos) << text;
  return at;
}

void patch_u64(std::string* payload, size_t offset, uint64_t value) {
  for (int i = 0; i < 8; ++i) (*payload)[offset + i] = static_cast<char>(value >> (8 * i));
}

TEST_F(ModelIoTest, RoundTripWritesAValidChecksumForTheCraftedFiles) {
  write_with_valid_checksum(path_, v1_payload(path_, model_));
  EXPECT_EQ(read_model_file(path_).categories, model_.categories);
}

// A string length of 2^33 used to allocate 8 GB before failing.
TEST_F(ModelIoTest, HugeStringLengthIsRefusedWithoutAllocating) {
  std::string payload = v1_payload(path_, model_);
  patch_u64(&payload, length_field_before(payload, "science"), uint64_t(1) << 33);
  write_with_valid_checksum(path_, payload);
  largest_allocation = 0;
  ExpectRefused("bytes are left");
  EXPECT_LT(largest_allocation.load(), 64 * read_file(path_).size());
}

// An element count of 2^40 for a vector of strings (the categories).
TEST_F(ModelIoTest, HugeCollectionCountIsRefusedWithoutAllocating) {
  std::string payload = v1_payload(path_, model_);
  // The count, a 4-byte item version, then the first string's length.
  patch_u64(&payload, length_field_before(payload, "science") - 12, uint64_t(1) << 40);
  write_with_valid_checksum(path_, payload);
  largest_allocation = 0;
  ExpectRefused("bytes are left");
  EXPECT_LT(largest_allocation.load(), 64 * read_file(path_).size());
}

// A count that fits the file's size but not its element size (8 bytes per
// uint64 offset) is refused too, before the vector is sized.
TEST_F(ModelIoTest, CountBeyondTheBytesLeftForItsElementsIsRefused) {
  std::string payload = v1_payload(path_, model_);
  // The Rocchio term offsets: terms + 1 uint64 values, the first being 0.
  std::string needle;
  const uint64_t count = model_.rocchio.term_start.size();
  for (int i = 0; i < 8; ++i) needle.push_back(static_cast<char>(count >> (8 * i)));
  needle += std::string(8, '\0');  // term_start[0]
  const size_t at = payload.find(needle);
  ASSERT_NE(at, std::string::npos);
  patch_u64(&payload, at, payload.size() - at - 8);  // one byte per element would fit
  write_with_valid_checksum(path_, payload);
  ExpectRefused("bytes are left");
}

// Boost copies a stored bool's byte as is; 2 is no bool.
TEST_F(ModelIoTest, BooleanOtherThanZeroOrOneIsRefused) {
  ModelState other = model_;
  model_.has_unlabelled = false;
  other.has_unlabelled = true;
  const std::string without = v1_payload(path_, model_);
  std::string with = v1_payload(path_, other);
  ASSERT_EQ(with.size(), without.size());
  size_t differing = 0, at = 0;
  for (size_t i = 0; i < with.size(); ++i) {
    if (with[i] != without[i]) ++differing, at = i;
  }
  ASSERT_EQ(differing, 1u);
  with[at] = 2;
  write_with_valid_checksum(path_, with);
  ExpectRefused("boolean");
}

TEST_F(ModelIoTest, AnalyzerSettingsAreCheckedToo) {
  model_.analyzer.stemmer = "klingon";
  write_model_file(path_, model_);
  EXPECT_THROW(read_analyzer_settings(path_), ModelFormatError);
  model_.analyzer.stemmer = "none";
  model_.analyzer.ngrams = 4;
  write_model_file(path_, model_);
  EXPECT_THROW(read_analyzer_settings(path_), ModelFormatError);
}

// TrainOptions as version 5 wrote them: the settings chosen by
// cross-validation as plain numbers, 0 or negative meaning "cross-validate".
struct TrainOptionsV5 {
  AnalyzerOptions analyzer;
  Method default_method = Method::kKnn;
  double nb_alpha = 0, rocchio_gamma = -1.0;
  FeatureSelection feature_selection = FeatureSelection::kNone;
  int num_features = 0;
  bool features_per_category = false, tune_thresholds = true, keep_unlabelled = false;
  int commit_batch = 2000, decision = -1, threshold_folds = 5, knn_k = 0, knn_similarity_power = 0;
  double svm_c = 0, logreg_c = 0;
  bool choose_default_method = false;
  int tuning_sample = 50000;
  double knn_concentration = -1.0;

  template <class Archive>
  void serialize(Archive& ar, const unsigned int /*version*/) {
    ar& analyzer& default_method& nb_alpha& rocchio_gamma& feature_selection& num_features&
        features_per_category& tune_thresholds& keep_unlabelled& commit_batch;
    ar& decision& threshold_folds& knn_k& knn_similarity_power& svm_c& logreg_c&
        choose_default_method& tuning_sample& knn_concentration;
  }
};

// The bytes of `old` as TrainOptions version 5 wrote them, read back as
// today's TrainOptions.
TrainOptions read_v5_options(const TrainOptionsV5& old) {
  std::stringstream blob;
  {
    boost::archive::binary_oarchive out(blob);
    out << old;
  }
  boost::archive::binary_iarchive in(blob);
  TrainOptions options;
  in >> options;
  return options;
}

}  // namespace
}  // namespace autocat::internal

BOOST_CLASS_VERSION(autocat::internal::TrainOptionsV5, 5)

namespace autocat::internal {
namespace {

// Version 5's "0 or negative: cross-validate" loads unset; a value given
// loads as given, 0 included where 0 is a setting (gamma, concentration).
TEST(ModelIoCompatibilityTest, OptionsFromBeforeOptionalSettingsLoad) {
  const TrainOptions chosen = read_v5_options(TrainOptionsV5{});
  EXPECT_EQ(chosen.nb_alpha, std::nullopt);
  EXPECT_EQ(chosen.rocchio_gamma, std::nullopt);
  EXPECT_EQ(chosen.knn_k, std::nullopt);
  EXPECT_EQ(chosen.knn_similarity_power, std::nullopt);
  EXPECT_EQ(chosen.svm_c, std::nullopt);
  EXPECT_EQ(chosen.logreg_c, std::nullopt);
  EXPECT_EQ(chosen.knn_concentration, std::nullopt);
  EXPECT_EQ(chosen.decision, std::nullopt);

  TrainOptionsV5 given;
  given.analyzer.ngrams = 2;
  given.default_method = Method::kSvm;
  given.nb_alpha = 0.5;
  given.rocchio_gamma = 0.0;
  given.feature_selection = FeatureSelection::kChiSquare;
  given.num_features = 300;
  given.decision = static_cast<int>(Decision::kAnyOf);
  given.threshold_folds = 3;
  given.knn_k = 30;
  given.knn_similarity_power = 2;
  given.svm_c = 3.0;
  given.logreg_c = 10.0;
  given.choose_default_method = true;
  given.tuning_sample = 1234;
  given.knn_concentration = 0.0;
  const TrainOptions loaded = read_v5_options(given);
  EXPECT_EQ(loaded.analyzer.ngrams, 2);
  EXPECT_EQ(loaded.default_method, Method::kSvm);
  EXPECT_EQ(loaded.nb_alpha, 0.5);
  EXPECT_EQ(loaded.rocchio_gamma, 0.0);
  EXPECT_EQ(loaded.feature_selection, FeatureSelection::kChiSquare);
  EXPECT_EQ(loaded.num_features, 300);
  EXPECT_EQ(loaded.decision, Decision::kAnyOf);
  EXPECT_EQ(loaded.threshold_folds, 3);
  EXPECT_EQ(loaded.knn_k, 30);
  EXPECT_EQ(loaded.knn_similarity_power, 2);
  EXPECT_EQ(loaded.svm_c, 3.0);
  EXPECT_EQ(loaded.logreg_c, 10.0);
  EXPECT_TRUE(loaded.choose_default_method);
  EXPECT_EQ(loaded.tuning_sample, 1234);
  EXPECT_EQ(loaded.knn_concentration, 0.0);
}

// Version 6 keeps "unset" apart from every value, 0 included.
TEST_F(ModelIoTest, RoundTripKeepsUnsetSettingsApartFromZero) {
  model_.training.rocchio_gamma.reset();
  model_.training.knn_concentration = 0.0;
  model_.training.svm_c = 0.3;
  model_.training.logreg_c.reset();
  model_.training.knn_cost_limit = 2500;
  write_model_file(path_, model_);
  const TrainOptions loaded = read_model_file(path_).training;
  EXPECT_EQ(loaded.rocchio_gamma, std::nullopt);
  EXPECT_EQ(loaded.knn_concentration, 0.0);
  EXPECT_EQ(loaded.svm_c, 0.3);
  EXPECT_EQ(loaded.logreg_c, std::nullopt);
  EXPECT_EQ(loaded.knn_cost_limit, 2500);
}

TEST_F(ModelIoTest, MissingFileIsNotFound) {
  EXPECT_THROW(read_model_file(dir_.file("absent.autocat")), NotFoundError);
}

TEST_F(ModelIoTest, OverwriteReplacesAtomically) {
  ModelState other = model_;
  other.training.nb_alpha = 0.25;
  write_model_file(path_, other);
  EXPECT_DOUBLE_EQ(read_model_file(path_).training.nb_alpha.value_or(0), 0.25);
}

// Writes past `max_file_bytes` fail with EFBIG while it lives (SIGXFSZ
// ignored), as on a full disk; the limit and the signal's handler are
// restored after.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t max_file_bytes) {
    old_handler_ = ::signal(SIGXFSZ, SIG_IGN);
    ::getrlimit(RLIMIT_FSIZE, &old_);
    rlimit limited = old_;
    limited.rlim_cur = max_file_bytes;
    ::setrlimit(RLIMIT_FSIZE, &limited);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    ::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit old_{};
  sighandler_t old_handler_ = SIG_DFL;
};

// A full disk while a section is archived, whether it is found when the
// section is flushed (a small one) or while it is streamed (one larger than
// the write buffer): an IOError naming the file, the old file intact, no
// temporary file left. Boost's archive syncs its stream in its destructor,
// where the error used to end the process.
TEST_F(ModelIoTest, AWriteErrorIsAnIOErrorAndKeepsTheOldFile) {
  const std::string before = read_file(path_);
  ModelState large = model_;
  large.terms.assign(300000, std::string(12, 'x'));  // a core section of about 6 MB
  for (const auto& [state, limit] : std::vector<std::pair<const ModelState*, rlim_t>>{
           {&model_, static_cast<rlim_t>(before.size() / 2)}, {&large, rlim_t{3} << 20}}) {
    SCOPED_TRACE("limit " + std::to_string(limit));
    try {
      const FileSizeLimit full_disk(limit);
      write_model_file(path_, *state);
      ADD_FAILURE() << "expected IOError";
    } catch (const IOError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(path_), std::string::npos) << message;
      EXPECT_NE(message.find("File too large"), std::string::npos) << message;
    }
    EXPECT_EQ(read_file(path_), before);
    int files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
      (void)entry;
      ++files;
    }
    EXPECT_EQ(files, 1);
  }
}

}  // namespace
}  // namespace autocat::internal
