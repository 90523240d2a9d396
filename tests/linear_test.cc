// Tests of the linear SVM and logistic regression (classify/methods/linear.h): the
// dual coordinate descent against the optimality (KKT) conditions and a
// brute-force projected-gradient solver, Platt scaling, the probabilities
// the classifier reports, and the model file round trip.
#include "classify/methods/linear.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "autocat/error.h"
#include "classify/corpus/weighting.h"
#include "classify/decide/categorizer.h"
#include "classify/model/model_io.h"
#include "classify/train/thresholds.h"
#include "classify/train/trainer.h"
#include "test_util.h"

namespace autocat::internal {
namespace {

// A random sparse problem with L2-normalized rows, labels from a noisy
// random hyperplane (so it is not separable).
struct Toy {
  LinearProblem problem;
  std::vector<int8_t> y;
};

Toy random_problem(uint32_t rows, uint32_t features, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> truth(features);
  for (double& t : truth) t = normal(rng);
  Toy toy;
  toy.problem.num_features = features;
  toy.problem.row_start.push_back(0);
  for (uint32_t i = 0; i < rows; ++i) {
    std::vector<std::pair<uint32_t, double>> row;
    for (uint32_t j = 0; j < features; ++j) {
      if (rng() % 2 == 0) row.emplace_back(j, std::fabs(normal(rng)) + 0.1);
    }
    if (row.empty()) row.emplace_back(rng() % features, 1.0);
    double norm2 = 0, margin = 0;
    for (const auto& [j, v] : row) norm2 += v * v;
    for (auto& [j, v] : row) {
      v /= std::sqrt(norm2);
      margin += truth[j] * v;
      toy.problem.column.push_back(j);
      toy.problem.value.push_back(static_cast<float>(v));
    }
    toy.problem.row_start.push_back(toy.problem.column.size());
    toy.y.push_back(margin + 0.3 * normal(rng) > 0 ? 1 : -1);
  }
  return toy;
}

std::vector<double> dense_row(const LinearProblem& p, uint32_t i) {
  std::vector<double> x(p.num_features + 1, 0.0);
  for (uint64_t k = p.row_start[i]; k < p.row_start[i + 1]; ++k) x[p.column[k]] = p.value[k];
  x[p.num_features] = 1.0;  // bias feature
  return x;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  return std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
}

// Gradient of the dual objective (see dual_objective) at alpha.
std::vector<double> dual_gradient(const Toy& toy, LinearLoss loss, double c,
                                  const std::vector<double>& alpha) {
  const uint32_t n = toy.problem.num_rows();
  std::vector<double> w(toy.problem.num_features + 1, 0.0);
  for (uint32_t i = 0; i < n; ++i) {
    const std::vector<double> x = dense_row(toy.problem, i);
    for (size_t j = 0; j < x.size(); ++j) w[j] += alpha[i] * toy.y[i] * x[j];
  }
  std::vector<double> g(n);
  for (uint32_t i = 0; i < n; ++i) {
    const double margin = toy.y[i] * dot(w, dense_row(toy.problem, i));
    g[i] = loss == LinearLoss::kSquaredHinge ? margin - 1.0 + alpha[i] / (2 * c)
                                             : margin + std::log(alpha[i] / (c - alpha[i]));
  }
  return g;
}

// Brute force: projected gradient descent with a small fixed step, run long.
std::vector<double> projected_gradient(const Toy& toy, LinearLoss loss, double c) {
  const uint32_t n = toy.problem.num_rows();
  std::vector<double> alpha(n, loss == LinearLoss::kLogistic ? c / 2 : 0.0);
  const double step = loss == LinearLoss::kLogistic ? 0.2 * c / (1 + c * n) : 0.5 / (n + 1 / c);
  for (int iter = 0; iter < 100000; ++iter) {
    const std::vector<double> g = dual_gradient(toy, loss, c, alpha);
    for (uint32_t i = 0; i < n; ++i) {
      alpha[i] -= step * g[i];
      alpha[i] = loss == LinearLoss::kLogistic ? std::clamp(alpha[i], 1e-300, c * (1 - 1e-15))
                                               : std::max(alpha[i], 0.0);
    }
  }
  return alpha;
}

TEST(LinearSolverTest, SquaredHingeMeetsKktAndMatchesBruteForce) {
  const Toy toy = random_problem(24, 6, 7);
  for (double c : {0.1, 1.0, 10.0}) {
    const BinarySolution s =
        solve_binary(toy.problem, toy.y, LinearLoss::kSquaredHinge, c, /*eps=*/1e-9);
    const std::vector<double> g = dual_gradient(toy, LinearLoss::kSquaredHinge, c, s.alpha);
    for (size_t i = 0; i < g.size(); ++i) {
      ASSERT_GE(s.alpha[i], 0.0);
      if (s.alpha[i] > 0) {
        EXPECT_NEAR(g[i], 0.0, 1e-6) << "C " << c << " i " << i;
      } else {
        EXPECT_GE(g[i], -1e-6) << "C " << c << " i " << i;
      }
    }
    const std::vector<double> brute = projected_gradient(toy, LinearLoss::kSquaredHinge, c);
    const double ours = dual_objective(toy.problem, toy.y, LinearLoss::kSquaredHinge, c, s.alpha);
    const double best = dual_objective(toy.problem, toy.y, LinearLoss::kSquaredHinge, c, brute);
    EXPECT_NEAR(ours, best, 1e-6 * std::max(1.0, std::fabs(best))) << "C " << c;
    EXPECT_LE(ours, best + 1e-9);
  }
}

TEST(LinearSolverTest, LogisticMeetsKktAndMatchesBruteForce) {
  const Toy toy = random_problem(20, 5, 11);
  for (double c : {0.5, 4.0}) {
    const BinarySolution s = solve_binary(toy.problem, toy.y, LinearLoss::kLogistic, c, 1e-9);
    const std::vector<double> g = dual_gradient(toy, LinearLoss::kLogistic, c, s.alpha);
    for (size_t i = 0; i < g.size(); ++i) {
      ASSERT_GT(s.alpha[i], 0.0);
      ASSERT_LT(s.alpha[i], c);
      EXPECT_NEAR(g[i], 0.0, 1e-6) << "C " << c << " i " << i;
    }
    const std::vector<double> brute = projected_gradient(toy, LinearLoss::kLogistic, c);
    const double ours = dual_objective(toy.problem, toy.y, LinearLoss::kLogistic, c, s.alpha);
    const double best = dual_objective(toy.problem, toy.y, LinearLoss::kLogistic, c, brute);
    EXPECT_NEAR(ours, best, 1e-6 * std::max(1.0, std::fabs(best))) << "C " << c;
    EXPECT_LE(ours, best + 1e-9);
  }
}

TEST(LinearSolverTest, WarmStartReachesTheSameOptimum) {
  const Toy toy = random_problem(30, 8, 3);
  for (LinearLoss loss : {LinearLoss::kSquaredHinge, LinearLoss::kLogistic}) {
    const BinarySolution small = solve_binary(toy.problem, toy.y, loss, 0.5, 1e-9);
    const BinarySolution cold = solve_binary(toy.problem, toy.y, loss, 2.0, 1e-9);
    const BinarySolution warm = solve_binary(toy.problem, toy.y, loss, 2.0, 1e-9, small.alpha);
    EXPECT_NEAR(dual_objective(toy.problem, toy.y, loss, 2.0, cold.alpha),
                dual_objective(toy.problem, toy.y, loss, 2.0, warm.alpha), 1e-7);
  }
}

TEST(LinearSolverTest, RefusesANonPositiveC) {
  const Toy toy = random_problem(4, 3, 1);
  EXPECT_THROW(solve_binary(toy.problem, toy.y, LinearLoss::kSquaredHinge, 0.0),
               InvalidArgumentError);
}

TEST(PlattTest, RecoversAKnownSigmoid) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> f;
  std::vector<uint8_t> positive;
  for (int i = 0; i < 40000; ++i) {
    const double value = -3.0 + 6.0 * uniform(rng);
    f.push_back(value);
    positive.push_back(uniform(rng) < sigmoid(2.0 * value - 0.5) ? 1 : 0);
  }
  const Sigmoid fitted = fit_platt(f, positive);
  EXPECT_NEAR(fitted.slope, 2.0, 0.1);
  EXPECT_NEAR(fitted.intercept, -0.5, 0.1);
}

TEST(PlattTest, SeparatedScoresStayShortOfCertainty) {
  // Platt's smoothed targets (3 + 1) / (3 + 2) and 1 / (3 + 2): perfectly
  // separated scores still get a finite sigmoid, symmetric here, whose
  // probabilities stay near 0.8 / 0.2 rather than 1 / 0.
  const Sigmoid fitted = fit_platt({-2, -1.5, -1, 1, 1.5, 2}, {0, 0, 0, 1, 1, 1});
  EXPECT_GT(fitted.slope, 0.0);
  EXPECT_NEAR(fitted.intercept, 0.0, 1e-6);
  EXPECT_NEAR(sigmoid(fitted.slope * 1.5 + fitted.intercept), 0.8, 0.05);
  EXPECT_NEAR(sigmoid(fitted.slope * -1.5 + fitted.intercept), 0.2, 0.05);
}

// Three categories with their own words, and words they share.
std::vector<LabelledTerms> toy_documents() {
  const std::vector<std::pair<std::string, std::vector<std::string>>> topics = {
      {"fruit", {"apple", "banana", "cherry", "pear"}},
      {"vehicle", {"car", "engine", "wheel", "brake"}},
      {"weather", {"rain", "cloud", "storm", "wind"}}};
  const std::vector<std::string> shared = {"the", "good", "new", "big"};
  std::mt19937 rng(2);
  std::vector<LabelledTerms> docs;
  for (int i = 0; i < 60; ++i) {
    const auto& [label, words] = topics[i % 3];
    LabelledTerms doc;
    for (int j = 0; j < 6; ++j) doc.terms.push_back(words[rng() % words.size()]);
    for (int j = 0; j < 3; ++j) doc.terms.push_back(shared[rng() % shared.size()]);
    doc.labels.push_back(label);
    docs.push_back(std::move(doc));
  }
  return docs;
}

// Documents whose terms repeat up to `max_repeat` times (so many wdf
// values), over a vocabulary of `vocabulary` words, in three categories.
TrainingCorpus repeating_corpus(uint32_t documents, uint32_t vocabulary, uint32_t max_repeat) {
  std::mt19937 rng(7);
  std::vector<LabelledTerms> docs;
  for (uint32_t i = 0; i < documents; ++i) {
    LabelledTerms doc;
    const uint32_t distinct = 1 + rng() % 12;
    for (uint32_t j = 0; j < distinct; ++j) {
      // Skewed towards low ids, and towards a category's own third.
      const uint32_t word =
          (rng() % (1 + rng() % vocabulary) + (i % 3) * vocabulary / 3) % vocabulary;
      const uint32_t repeat = 1 + (rng() % 4 == 0 ? rng() % max_repeat : 0);
      for (uint32_t r = 0; r < repeat; ++r) doc.terms.push_back("w" + std::to_string(word));
    }
    doc.labels.push_back("c" + std::to_string(i % 3));
    docs.push_back(std::move(doc));
  }
  return make_training_corpus(docs);
}

// Every entry of the two problems, and the solutions on them, bit for bit.
void expect_same_problem(const LinearProblem& compact, const LinearProblem& plain,
                         const TrainingCorpus& corpus) {
  ASSERT_EQ(compact.row_start, plain.row_start);
  ASSERT_EQ(compact.term_of_feature, plain.term_of_feature);
  ASSERT_EQ(compact.num_features, plain.num_features);
  for (uint32_t row = 0; row < plain.num_rows(); ++row) {
    for (uint64_t k = plain.row_start[row]; k < plain.row_start[row + 1]; ++k) {
      ASSERT_EQ(compact.feature_at(k), plain.column[k]) << "row " << row;
      const float a = compact.value_at(row, k), b = plain.value[k];
      ASSERT_EQ(0, std::memcmp(&a, &b, sizeof(float))) << "row " << row << ": " << a << " " << b;
    }
  }
  std::vector<int8_t> y(plain.num_rows());
  for (uint32_t d = 0; d < plain.num_rows(); ++d) y[d] = corpus.doc_categories[d][0] == 0 ? 1 : -1;
  for (LinearLoss loss : {LinearLoss::kSquaredHinge, LinearLoss::kLogistic}) {
    const BinarySolution on_compact = solve_binary(compact, y, loss, 1.0);
    const BinarySolution on_plain = solve_binary(plain, y, loss, 1.0);
    EXPECT_EQ(on_compact.w, on_plain.w);
    EXPECT_EQ(on_compact.alpha, on_plain.alpha);
    EXPECT_EQ(on_compact.epochs, on_plain.epochs);
  }
}

// The compact problem (features and wdf codes in 32 bits, values
// recomputed) holds the plain one's values exactly, so the fits agree bit
// for bit.
TEST(LinearProblemTest, CompactFormHoldsThePlainValuesExactly) {
  const TrainingCorpus corpus = repeating_corpus(400, 300, 40);
  const std::vector<float> idf = compute_idf(corpus.df, corpus.num_docs(), {});
  const LinearProblem compact =
      make_linear_problem(corpus, idf, LinearProblemForm::kCompactWhereItFits);
  const LinearProblem plain = make_linear_problem(corpus, idf, LinearProblemForm::kPlain);
  ASSERT_TRUE(compact.compact);
  ASSERT_FALSE(plain.compact);
  EXPECT_TRUE(compact.value.empty());
  EXPECT_GT(compact.code_tf.size(), 10u);  // many wdf values coded
  EXPECT_LT(compact.memory_bytes(), plain.memory_bytes());
  expect_same_problem(compact, plain, corpus);
}

// `documents` documents labelled c0, c1, ... in turn (`categories` of
// them); document i has distinct(rng) words word(rng, i), each repeated
// repeat(rng) times.
template <class Distinct, class Word, class Repeat>
TrainingCorpus corpus_of_repeats(uint32_t documents, uint32_t categories, uint32_t seed,
                                 Distinct distinct, Word word, Repeat repeat) {
  std::mt19937 rng(seed);
  std::vector<LabelledTerms> docs(documents);
  for (uint32_t i = 0; i < documents; ++i) {
    for (uint32_t j = 0, n = distinct(rng); j < n; ++j) {
      const std::string term = "w" + std::to_string(word(rng, i));
      for (uint32_t r = 0, times = repeat(rng); r < times; ++r) docs[i].terms.push_back(term);
    }
    docs[i].labels.push_back("c" + std::to_string(i % categories));
  }
  return make_training_corpus(docs);
}

// More than 255 distinct wdf values: the commonest have codes, the others
// are escaped with their tf beside the entries, and the values are still
// the plain form's bit for bit.
TEST(LinearProblemTest, RareWdfValuesAreEscapedInTheCompactForm) {
  // One term in 50 repeats up to 2,000 times, the others 1 to 3 times: a
  // few hundred large wdf values, each in few entries.
  const TrainingCorpus corpus = corpus_of_repeats(
      3000, 3, 5, [](std::mt19937& rng) { return 1 + rng() % 12; },
      [](std::mt19937& rng, uint32_t i) { return (rng() % 300 + (i % 3) * 100) % 300; },
      [](std::mt19937& rng) { return rng() % 50 == 0 ? 1 + rng() % 2000 : 1 + rng() % 3; });
  const std::vector<float> idf = compute_idf(corpus.df, corpus.num_docs(), {});
  const LinearProblem compact =
      make_linear_problem(corpus, idf, LinearProblemForm::kCompactWhereItFits);
  const LinearProblem plain = make_linear_problem(corpus, idf, LinearProblemForm::kPlain);
  ASSERT_TRUE(compact.compact);
  EXPECT_EQ(compact.code_tf.size(), 255u);
  EXPECT_FALSE(compact.escaped_entry.empty());
  EXPECT_LE(compact.escaped_entry.size(), compact.num_entries() / 64);
  EXPECT_LT(compact.memory_bytes(), plain.memory_bytes());
  expect_same_problem(compact, plain, corpus);
}

// Where escapes would be more than one entry in 64, the plain form.
TEST(LinearProblemTest, ManyEscapesTakeThePlainForm) {
  // Every term repeats 1 to 3,000 times.
  const TrainingCorpus corpus = corpus_of_repeats(
      600, 2, 11, [](std::mt19937&) { return 4u; },
      [](std::mt19937& rng, uint32_t) { return rng() % 50; },
      [](std::mt19937& rng) { return 1 + rng() % 3000; });
  const std::vector<float> idf = compute_idf(corpus.df, corpus.num_docs(), {});
  const LinearProblem problem =
      make_linear_problem(corpus, idf, LinearProblemForm::kCompactWhereItFits);
  EXPECT_FALSE(problem.compact);
  EXPECT_EQ(problem.value, make_linear_problem(corpus, idf, LinearProblemForm::kPlain).value);
}

// By default a small problem takes the plain form, whose values the
// solvers read without recomputing them.
TEST(LinearProblemTest, SmallProblemsTakeThePlainFormByDefault) {
  const TrainingCorpus corpus = repeating_corpus(400, 300, 40);
  const std::vector<float> idf = compute_idf(corpus.df, corpus.num_docs(), {});
  const LinearProblem problem = make_linear_problem(corpus, idf);
  ASSERT_LT(problem.num_entries(), kCompactFromEntries);
  EXPECT_FALSE(problem.compact);
  EXPECT_FALSE(problem.value.empty());
}

DocumentTerms terms_of(const Categorizer& categorizer, const std::vector<std::string>& words) {
  return make_document_terms(Vocabulary(categorizer.model().terms), words);
}

class LinearModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    corpus_ = std::make_shared<const TrainingCorpus>(make_training_corpus(toy_documents()));
    model_ = fit_model(*corpus_, resolve_analyzer_options(AnalyzerOptions()), TrainOptions());
  }
  std::shared_ptr<const TrainingCorpus> corpus_;
  ModelState model_;
};

TEST_F(LinearModelTest, SeparableDataIsLearnedAndScoresAreProbabilities) {
  ASSERT_FALSE(model_.svm.term_start.empty());
  ASSERT_FALSE(model_.logreg.term_start.empty());
  EXPECT_FALSE(model_.svm_c_objective.empty());  // C was cross-validated
  const Categorizer categorizer(model_, corpus_);
  const std::vector<DocumentTerms> docs = corpus_documents(*corpus_);
  for (Method method : {Method::kSvm, Method::kLogreg}) {
    ClassifyOptions options;
    options.method = method;
    for (uint32_t d = 0; d < corpus_->num_docs(); ++d) {
      const std::vector<double> scores = categorizer.scores(docs[d], options);
      const auto decided = categorizer.decide(scores, options);
      ASSERT_EQ(decided.size(), 1u);
      EXPECT_EQ(decided.front().name, corpus_->categories[corpus_->doc_categories[d].front()]);
      // One-of: probabilities normalized over the categories.
      EXPECT_NEAR(std::accumulate(scores.begin(), scores.end(), 0.0), 1.0, 1e-9);
    }
    // Any-of: each category's own probability, in (0, 1), not normalized.
    options.decision = Decision::kAnyOf;
    const std::vector<double> scores =
        categorizer.scores(terms_of(categorizer, {"apple", "banana"}), options);
    double total = 0;
    for (double p : scores) {
      EXPECT_GT(p, 0.0);
      EXPECT_LT(p, 1.0);
      total += p;
    }
    EXPECT_GT(scores[0], 0.5) << method_name(method);  // fruit
    EXPECT_LT(scores[1], 0.5) << method_name(method);
    EXPECT_GT(std::fabs(total - 1.0), 1e-6);
  }
}

// Categories solved on several threads give exactly the one-thread path.
TEST_F(LinearModelTest, ConcurrentCategoriesGiveTheSameModels) {
  const std::vector<float> idf = compute_idf(corpus_->df, corpus_->num_docs(), {});
  const LinearProblem problem = make_linear_problem(*corpus_, idf);
  for (LinearLoss loss : {LinearLoss::kSquaredHinge, LinearLoss::kLogistic}) {
    const std::vector<LinearModel> one = train_linear_path(problem, *corpus_, loss, {0.1, 1, 10});
    const std::vector<LinearModel> three =
        train_linear_path(problem, *corpus_, loss, {0.1, 1, 10}, 3);
    ASSERT_EQ(one.size(), three.size());
    for (size_t k = 0; k < one.size(); ++k) {
      EXPECT_EQ(one[k].term_start, three[k].term_start);
      EXPECT_EQ(one[k].entry_category, three[k].entry_category);
      EXPECT_EQ(one[k].entry_weight, three[k].entry_weight);
      EXPECT_EQ(one[k].bias, three[k].bias);
    }
    EXPECT_FALSE(one[1].entry_weight.empty());
  }
}

// Weights packed straight from the fitted blocks (as training writes
// them) are the bytes the entries pack to, and read back to the entries.
TEST(LinearPackedFitTest, PackedWeightsAreTheEntriesPacked) {
  const TrainingCorpus corpus = repeating_corpus(400, 300, 5);
  const std::vector<float> idf = compute_idf(corpus.df, corpus.num_docs(), {});
  const LinearProblem problem = make_linear_problem(corpus, idf);
  for (LinearLoss loss : {LinearLoss::kSquaredHinge, LinearLoss::kLogistic}) {
    for (double c : {0.001, 1.0}) {  // a small C leaves many weights at zero: list rows
      std::vector<LinearModel> models(2);
      for (bool packed : {false, true}) {
        for_each_linear_path_model(
            problem, corpus, loss, {c}, 2,
            [&](size_t, LinearModel&& model) { models[packed] = std::move(model); }, nullptr,
            nullptr, 0.1, packed);
      }
      const LinearModel &entries = models[0], &packed = models[1];
      ASSERT_FALSE(entries.entry_weight.empty());
      ASSERT_NE(packed.packed_rows, nullptr);
      EXPECT_TRUE(packed.entry_weight.empty());
      const std::vector<uint8_t> expected = entries.packed_weights();
      ASSERT_EQ(packed.packed_rows->size, expected.size());
      EXPECT_EQ(0, std::memcmp(packed.packed_rows->bytes, expected.data(), expected.size()));
      EXPECT_EQ(packed.num_entries(), entries.num_entries());
      EXPECT_EQ(packed.bias, entries.bias);
    }
  }
}

// Each category's weights waiting in a spill file, read back a block at a
// time, pack to the bytes the weights held in memory pack to: across
// several blocks (a block is 16 M weights, so 1,200 categories make blocks
// of 13,981 terms, and the 36,007 terms here three), and nothing is left in
// the directory. A directory that is not there is an IOError.
TEST(LinearPackedFitTest, SpilledWeightsPackTheSame) {
  constexpr uint32_t kCategories = 1200, kWordsPerDocument = 30;
  std::vector<LabelledTerms> documents;
  for (uint32_t i = 0; i < kCategories; ++i) {
    LabelledTerms doc;
    for (uint32_t j = 0; j < kWordsPerDocument; ++j) {
      doc.terms.push_back("w" + std::to_string(i * kWordsPerDocument + j));
    }
    doc.terms.push_back("shared" + std::to_string(i % 7));
    doc.labels.push_back("c" + std::to_string(i));
    documents.push_back(std::move(doc));
  }
  const TrainingCorpus corpus = make_training_corpus(documents);
  ASSERT_EQ(corpus.num_terms(), kCategories * kWordsPerDocument + 7);
  const std::vector<float> idf = compute_idf(corpus.df, corpus.num_docs(), {});
  const LinearProblem problem = make_linear_problem(corpus, idf);
  const testing_util::TempDir spill_dir;
  std::vector<LinearModel> models(2);
  for (bool spilled : {false, true}) {
    for_each_linear_path_model(
        problem, corpus, LinearLoss::kSquaredHinge, {1.0}, 2,
        [&](size_t, LinearModel&& model) { models[spilled] = std::move(model); }, nullptr, nullptr,
        0.1, /*packed=*/true, spilled ? spill_dir.path() : std::string());
  }
  const LinearModel &in_memory = models[0], &spilled = models[1];
  ASSERT_NE(in_memory.packed_rows, nullptr);
  ASSERT_NE(spilled.packed_rows, nullptr);
  ASSERT_EQ(spilled.packed_rows->size, in_memory.packed_rows->size);
  EXPECT_EQ(0, std::memcmp(spilled.packed_rows->bytes, in_memory.packed_rows->bytes,
                           in_memory.packed_rows->size));
  EXPECT_GT(spilled.num_entries(), uint64_t{kCategories} * kWordsPerDocument);
  EXPECT_EQ(spilled.bias, in_memory.bias);
  EXPECT_TRUE(std::filesystem::is_empty(spill_dir.path()));
  EXPECT_THROW(
      for_each_linear_path_model(
          problem, corpus, LinearLoss::kSquaredHinge, {1.0}, 2, [](size_t, LinearModel&&) {},
          nullptr, nullptr, 0.1, /*packed=*/true, spill_dir.file("missing")),
      IOError);
}

TEST_F(LinearModelTest, DecisionValueIsTheSumOfTermContributionsAndBias) {
  const std::vector<float> idf = compute_idf(model_.df, model_.num_docs, model_.selected);
  const Categorizer categorizer(model_, corpus_);
  const DocumentTerms doc = terms_of(categorizer, {"rain", "rain", "storm", "good", "car"});
  std::vector<double> values;
  linear_decision_values(model_.svm, idf, doc, &values);
  const std::vector<float> weights = dense_term_weights(model_.svm);
  double norm2 = 0;
  for (const TermCount& tc : doc.terms) norm2 += std::pow(sublinear_tf(tc.count) * idf[tc.term], 2);
  for (uint32_t c = 0; c < model_.svm.num_categories; ++c) {
    double expected = model_.svm.bias[c];
    for (const TermCount& tc : doc.terms) {
      expected += sublinear_tf(tc.count) * idf[tc.term] / std::sqrt(norm2) *
                  weights[size_t(tc.term) * model_.svm.num_categories + c];
    }
    EXPECT_NEAR(values[c], expected, 1e-9);
  }
}

// score() reads a dense copy of the weights; its values must be exactly
// those of the sparse entries (the reference the cross-validation uses).
TEST_F(LinearModelTest, DenseScoringEqualsSparseScoringExactly) {
  const std::vector<float> idf = compute_idf(model_.df, model_.num_docs, model_.selected);
  std::vector<DocumentTerms> docs = corpus_documents(*corpus_);
  DocumentTerms outside;  // a term beyond the vocabulary and a zero count are skipped
  outside.terms = {TermCount{0, 0}, TermCount{1, 3}, TermCount{TermId(idf.size() + 5), 2}};
  docs.push_back(outside);
  for (Method method : {Method::kSvm, Method::kLogreg}) {
    const LinearModel& model = method == Method::kSvm ? model_.svm : model_.logreg;
    const std::vector<float> dense = dense_term_weights(model);
    ASSERT_EQ(dense.size(), idf.size() * model.num_categories);
    const LinearClassifier classifier(method, model, idf, Decision::kAnyOf);
    std::vector<double> sparse_values, dense_values, scores;
    for (const DocumentTerms& doc : docs) {
      linear_decision_values(model, idf, doc, &sparse_values);
      dense_linear_decision_values(model, dense, idf, doc, &dense_values);
      EXPECT_EQ(dense_values, sparse_values) << method_name(method);
      classifier.score(doc, ClassifyOptions(), &scores);
      linear_probabilities(model, Decision::kAnyOf, &sparse_values);
      EXPECT_EQ(scores, sparse_values) << method_name(method);
    }
  }
}

TEST_F(LinearModelTest, ModelFileRoundTripKeepsWeightsAndScores) {
  const std::string path = testing::TempDir() + "/linear_round_trip.autocat";
  write_model_file(path, model_);
  const ModelState loaded = read_model_file(path);
  std::filesystem::remove(path);
  for (const auto& [a, b] :
       {std::pair(&model_.svm, &loaded.svm), {&model_.logreg, &loaded.logreg}}) {
    EXPECT_EQ(a->term_start, b->term_start);
    EXPECT_EQ(a->entry_category, b->entry_category);
    EXPECT_EQ(a->entry_weight, b->entry_weight);
    EXPECT_EQ(a->bias, b->bias);
    EXPECT_EQ(a->slope, b->slope);
    EXPECT_EQ(a->intercept, b->intercept);
    EXPECT_EQ(a->c, b->c);
  }
  EXPECT_EQ(loaded.svm_c_objective, model_.svm_c_objective);
  EXPECT_EQ(loaded.thresholds, model_.thresholds);
  EXPECT_FALSE(
      linear_model_consistent(LinearModel{{0, 1}, {0}, {1.0f}, {}, {}, {}, 1, 1.0, nullptr}, 1, 1));
}

// The packed rows a mapped model is scored from: the same weights as the
// entries, the same decision values bit for bit, and damaged bytes refused
// (or, where a flip still parses, read within bounds), never a crash.
TEST_F(LinearModelTest, PackedRowsGiveTheEntriesAndRefuseDamage) {
  for (const LinearModel* model : {&model_.svm, &model_.logreg}) {
    const std::vector<uint8_t> packed = model->packed_weights();
    const auto rows_of = [&](const std::vector<uint8_t>& bytes) {
      auto rows = std::make_shared<PackedLinearRows>();
      rows->bytes = bytes.data();
      rows->size = bytes.size();
      rows->num_categories = model->num_categories;
      return rows;
    };
    auto rows = rows_of(packed);
    ASSERT_TRUE(rows->index());
    ASSERT_EQ(rows->num_terms(), model->num_terms());
    EXPECT_EQ(rows->num_entries, model->entry_weight.size());
    LinearModel mapped = *model;
    mapped.term_start.clear();
    mapped.entry_category.clear();
    mapped.entry_weight.clear();
    mapped.packed_rows = rows;
    EXPECT_TRUE(linear_model_consistent(mapped, model->num_terms(), model->num_categories));
    EXPECT_EQ(dense_term_weights(mapped), dense_term_weights(*model));
    const std::vector<float> idf = compute_idf(model_.df, model_.num_docs, model_.selected);
    std::vector<double> expected, got;
    for (const DocumentTerms& doc : corpus_documents(*corpus_)) {
      linear_decision_values(*model, idf, doc, &expected);
      linear_decision_values(mapped, idf, doc, &got);
      EXPECT_EQ(got, expected);
    }
    // Every truncation is refused.
    for (size_t size = 0; size < packed.size(); size += 1 + packed.size() / 200) {
      std::vector<uint8_t> cut(packed.begin(), packed.begin() + size);
      EXPECT_FALSE(rows_of(cut)->index()) << size;
    }
    // Flipped bytes: refused, or every row read stays inside the bytes.
    std::mt19937 random(7);
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<uint8_t> bad = packed;
      bad[random() % bad.size()] ^= uint8_t(1 + random() % 255);
      auto damaged = rows_of(bad);
      if (!damaged->index()) continue;
      for (uint32_t t = 0; t < damaged->num_terms(); ++t) {
        damaged->for_each_weight(t, [&](uint32_t category, float weight) {
          EXPECT_LT(category, model->num_categories);
          EXPECT_TRUE(std::isfinite(weight));
        });
      }
    }
  }
}

TEST(LinearModelFileTest, OlderModelFileLoadsAndRefusesSvmClearly) {
  const ModelState old = read_model_file(testing_util::test_data("model-2026-11-22-v0.autocat"));
  EXPECT_TRUE(old.svm.term_start.empty());
  LinearClassifier classifier(Method::kSvm, old.svm, {}, Decision::kOneOf);
  DocumentTerms doc;
  doc.terms.push_back(TermCount{0, 1});
  std::vector<double> scores(old.categories.size());
  try {
    classifier.score(doc, ClassifyOptions(), &scores);
    FAIL() << "expected an error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("train it again"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace autocat::internal
