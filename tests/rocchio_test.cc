// Tests of Rocchio centroids and scoring (classify/methods/rocchio.h) against a
// brute-force dense computation.
#include "classify/methods/rocchio.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "autocat/error.h"
#include "classify/corpus/training_collection.h"
#include "classify/corpus/weighting.h"
#include "test_util.h"

namespace autocat::internal {
namespace {

using Matrix = std::vector<std::vector<double>>;  // [category][term]

using testing_util::split;
using testing_util::term_name;

// Random documents skewed towards low term ids; every fourth document on
// average has a second label.
std::vector<LabelledTerms> random_documents(uint32_t num_docs, uint32_t num_terms,
                                            uint32_t num_categories, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<LabelledTerms> docs(num_docs);
  for (LabelledTerms& doc : docs) {
    const uint32_t length = 8 + rng() % 25;
    const uint32_t category = rng() % num_categories;
    for (uint32_t i = 0; i < length; ++i) {
      // Half the tokens come from a band of terms typical of the category.
      const uint32_t t = rng() % 2 == 0 ? std::min(rng() % num_terms, rng() % num_terms)
                                        : (category * 7 + rng() % 10) % num_terms;
      doc.terms.push_back(term_name(t));
    }
    doc.labels.push_back("c" + std::to_string(category));
    if (rng() % 4 == 0) doc.labels.push_back("c" + std::to_string(rng() % num_categories));
  }
  return docs;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0.0;
  for (size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

void normalize(std::vector<double>* v) {
  const double norm = std::sqrt(dot(*v, *v));
  if (norm > 0.0) {
    for (double& x : *v) x /= norm;
  }
}

// Dense Rocchio computed from the raw token lists, sharing no code with
// the trainer.
class BruteForce {
 public:
  BruteForce(const std::vector<LabelledTerms>& docs, double gamma) {
    std::set<std::string> vocabulary, labels;
    for (const LabelledTerms& doc : docs) {
      vocabulary.insert(doc.terms.begin(), doc.terms.end());
      labels.insert(doc.labels.begin(), doc.labels.end());
    }
    terms_.assign(vocabulary.begin(), vocabulary.end());
    for (size_t t = 0; t < terms_.size(); ++t) ids_[terms_[t]] = t;
    categories_.assign(labels.begin(), labels.end());
    std::vector<double> df(terms_.size(), 0.0);
    for (const LabelledTerms& doc : docs) {
      for (const auto& [t, n] : count(doc.terms)) df[t] += 1.0;
    }
    for (double d : df) idf_.push_back(std::log(double(docs.size()) / d));

    const size_t num_categories = categories_.size();
    Matrix mean(num_categories, std::vector<double>(terms_.size(), 0.0));
    std::vector<double> members(num_categories, 0.0);
    for (const LabelledTerms& doc : docs) {
      const std::vector<double> v = weights(doc.terms);
      std::set<std::string> doc_labels(doc.labels.begin(), doc.labels.end());
      for (const std::string& label : doc_labels) {
        const size_t c =
            size_t(std::find(categories_.begin(), categories_.end(), label) - categories_.begin());
        members[c] += 1.0;
        for (size_t t = 0; t < v.size(); ++t) mean[c][t] += v[t];
      }
    }
    for (size_t c = 0; c < num_categories; ++c) {
      for (double& x : mean[c]) x /= members[c];
    }
    centroids_ = mean;
    if (gamma > 0.0 && num_categories > 1) {
      for (size_t c = 0; c < num_categories; ++c) {
        for (size_t t = 0; t < terms_.size(); ++t) {
          double others = 0.0;
          for (size_t o = 0; o < num_categories; ++o) {
            if (o != c) others += mean[o][t];
          }
          others /= double(num_categories - 1);
          centroids_[c][t] = std::max(0.0, mean[c][t] - gamma * others);
        }
      }
    }
    for (std::vector<double>& centroid : centroids_) normalize(&centroid);
  }

  const std::vector<std::string>& terms() const { return terms_; }
  const std::vector<std::string>& categories() const { return categories_; }
  const Matrix& centroids() const { return centroids_; }
  // Normalized tf-idf vector of a token list (unknown tokens ignored).
  std::vector<double> weights(const std::vector<std::string>& tokens) const {
    std::vector<double> v(terms_.size(), 0.0);
    for (const auto& [t, n] : count(tokens)) v[t] = (1.0 + std::log(double(n))) * idf_[t];
    normalize(&v);
    return v;
  }

 private:
  std::map<size_t, int> count(const std::vector<std::string>& tokens) const {
    std::map<size_t, int> counts;
    for (const std::string& token : tokens) {
      auto it = ids_.find(token);
      if (it != ids_.end()) ++counts[it->second];
    }
    return counts;
  }

  std::vector<std::string> terms_;
  std::vector<std::string> categories_;
  std::map<std::string, size_t> ids_;
  std::vector<double> idf_;
  Matrix centroids_;
};

class RocchioTest : public testing::Test {
 protected:
  void build(const std::vector<LabelledTerms>& docs, double gamma) {
    docs_ = docs;
    corpus_ = make_training_corpus(docs);
    vocabulary_ = Vocabulary(corpus_.terms);
    idf_ = compute_idf(corpus_.df, corpus_.num_docs(), {});
    model_ = train_rocchio(corpus_, idf_, gamma);
  }
  void build_text(const std::vector<std::pair<std::string, std::string>>& label_text,
                  double gamma) {
    std::vector<LabelledTerms> docs;
    for (const auto& [label, text] : label_text) docs.push_back({split(text), {label}});
    build(docs, gamma);
  }
  DocumentTerms query(const std::vector<std::string>& tokens) const {
    return make_document_terms(vocabulary_, tokens);
  }
  DocumentTerms query(const std::string& text) const { return query(split(text)); }
  std::vector<double> score(const std::string& text) const {
    RocchioClassifier classifier(model_, idf_);
    std::vector<double> scores;
    classifier.score(query(text), ClassifyOptions(), &scores);
    return scores;
  }
  // The model's centroids as a dense [category][term] matrix.
  Matrix dense_centroids() const {
    Matrix dense(model_.num_categories, std::vector<double>(corpus_.num_terms(), 0.0));
    for (TermId t = 0; t < corpus_.num_terms(); ++t) {
      for (uint64_t e = model_.term_start[t]; e < model_.term_start[t + 1]; ++e) {
        dense[model_.entry_category[e]][t] = model_.entry_weight[e];
      }
    }
    return dense;
  }
  void expect_centroids(const BruteForce& brute) const {
    ASSERT_EQ(brute.terms(), corpus_.terms);
    ASSERT_EQ(brute.categories(), corpus_.categories);
    const Matrix actual = dense_centroids();
    for (size_t c = 0; c < actual.size(); ++c) {
      for (size_t t = 0; t < actual[c].size(); ++t) {
        EXPECT_NEAR(actual[c][t], brute.centroids()[c][t], 1e-6)
            << "category " << c << " term " << corpus_.terms[t];
      }
    }
  }

  std::vector<LabelledTerms> docs_;
  TrainingCorpus corpus_;
  Vocabulary vocabulary_;
  std::vector<float> idf_;
  RocchioModel model_;
};

TEST_F(RocchioTest, CentroidsMatchBruteForce) {
  build(random_documents(200, 50, 5, 31), 0.0);
  expect_centroids(BruteForce(docs_, 0.0));
}

TEST_F(RocchioTest, CentroidsWithGammaMatchBruteForce) {
  for (double gamma : {0.25, 1.0}) {
    // Two categories are the fewest that have "others" to subtract.
    for (uint32_t categories : {5u, 2u}) {
      SCOPED_TRACE(std::to_string(gamma) + ", " + std::to_string(categories) + " categories");
      build(random_documents(200, 50, categories, 32), gamma);
      expect_centroids(BruteForce(docs_, gamma));
    }
  }
}

TEST_F(RocchioTest, StorageIsSparseAndSortedByCategory) {
  build(random_documents(200, 50, 5, 33), 0.5);
  ASSERT_EQ(model_.term_start.size(), corpus_.num_terms() + 1u);
  EXPECT_EQ(model_.term_start.back(), model_.entry_weight.size());
  EXPECT_EQ(model_.num_categories, 5u);
  for (TermId t = 0; t < corpus_.num_terms(); ++t) {
    for (uint64_t e = model_.term_start[t]; e < model_.term_start[t + 1]; ++e) {
      EXPECT_GT(model_.entry_weight[e], 0.0f);
      if (e > model_.term_start[t]) {
        EXPECT_LT(model_.entry_category[e - 1], model_.entry_category[e]);
      }
    }
  }
  // Each centroid has unit length.
  for (const std::vector<double>& centroid : dense_centroids()) {
    EXPECT_NEAR(dot(centroid, centroid), 1.0, 1e-5);
  }
}

TEST_F(RocchioTest, ScoresAreCosinesToTheCentroids) {
  for (double gamma : {0.0, 0.5}) {
    build(random_documents(200, 50, 5, 34), gamma);
    const BruteForce brute(docs_, gamma);
    RocchioClassifier classifier(model_, idf_);
    for (const LabelledTerms& q : random_documents(20, 60, 5, 35)) {
      std::vector<double> scores;
      classifier.score(query(q.terms), ClassifyOptions(), &scores);
      ASSERT_EQ(scores.size(), 5u);
      const std::vector<double> v = brute.weights(q.terms);
      for (size_t c = 0; c < scores.size(); ++c) {
        EXPECT_NEAR(scores[c], dot(v, brute.centroids()[c]), 1e-5);
      }
    }
  }
}

TEST_F(RocchioTest, DocumentIdenticalToTheOnlyDocumentOfItsClassScoresOne) {
  build_text({{"fruit", "apple pear apple plum"},
              {"veg", "carrot leek pear"},
              {"veg", "leek onion"},
              {"tool", "hammer nail saw"}},
             0.0);
  const std::vector<double> scores = score("pear apple plum apple");
  ASSERT_EQ(scores.size(), 3u);  // fruit, tool, veg
  EXPECT_NEAR(scores[0], 1.0, 1e-6);
  EXPECT_EQ(scores[1], 0.0);
  EXPECT_GT(scores[2], 0.0);  // shares "pear"
  EXPECT_LT(scores[2], 0.5);
}

TEST_F(RocchioTest, GammaRemovesWhatTheOtherCategoriesShare) {
  const std::vector<std::pair<std::string, std::string>> docs = {
      {"a", "shared apple"}, {"b", "shared banana"}, {"c", "shared cherry"}, {"d", "date"}};
  build_text(docs, 0.0);
  const std::vector<double> plain_shared = score("shared");
  const std::vector<double> plain_apple = score("apple");
  EXPECT_GT(plain_shared[0], 0.0);
  EXPECT_LT(plain_apple[0], 1.0);

  // "shared" has the same weight s in a, b and c, none in d: with gamma 1,
  // a keeps s - (2s / 3) > 0 of it; with gamma 2 nothing.
  build_text(docs, 1.0);
  const std::vector<double> some_shared = score("shared");
  EXPECT_GT(some_shared[0], 0.0);
  EXPECT_LT(some_shared[0], plain_shared[0]);
  EXPECT_GT(score("apple")[0], plain_apple[0]);

  build_text(docs, 2.0);
  EXPECT_EQ(score("shared"), std::vector<double>(4, 0.0));
  EXPECT_NEAR(score("apple")[0], 1.0, 1e-6);
  EXPECT_NEAR(score("date")[3], 1.0, 1e-6);
}

TEST_F(RocchioTest, QueryWithoutKnownTermsScoresZero) {
  build_text({{"a", "red green"}, {"b", "yellow blue"}, {"b", "red"}}, 0.0);
  RocchioClassifier classifier(model_, idf_);
  std::vector<double> scores = {0.5, 0.5, 0.5};
  classifier.score(query("purple orange"), ClassifyOptions(), &scores);
  EXPECT_EQ(scores, std::vector<double>(2, 0.0));
  classifier.score(DocumentTerms(), ClassifyOptions(), &scores);
  EXPECT_EQ(scores, std::vector<double>(2, 0.0));
}

TEST_F(RocchioTest, TermInEveryDocumentContributesNothing) {
  build_text({{"a", "the cat"}, {"b", "the dog"}, {"b", "the dog dog"}}, 0.0);
  EXPECT_EQ(score("the"), std::vector<double>(2, 0.0));
  EXPECT_EQ(score("the cat"), score("cat"));
  const TermId the = TermId(vocabulary_.find("the"));
  EXPECT_EQ(model_.term_start[the], model_.term_start[the + 1]);
}

TEST_F(RocchioTest, ConcurrentScoringGivesIdenticalResults) {
  build(random_documents(300, 80, 6, 41), 0.3);
  RocchioClassifier classifier(model_, idf_);
  const std::vector<LabelledTerms> queries = random_documents(300, 80, 6, 42);
  std::vector<std::vector<double>> serial(queries.size());
  for (size_t i = 0; i < queries.size(); ++i) {
    classifier.score(query(queries[i].terms), ClassifyOptions(), &serial[i]);
  }
  std::vector<std::vector<std::vector<double>>> parallel(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < parallel.size(); ++t) {
    threads.emplace_back([&, t] {
      parallel[t].resize(queries.size());
      for (size_t j = 0; j < queries.size(); ++j) {
        const size_t i = (j + t * queries.size() / 4) % queries.size();
        classifier.score(query(queries[i].terms), ClassifyOptions(), &parallel[t][i]);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const auto& results : parallel) EXPECT_EQ(results, serial);
}

TEST_F(RocchioTest, RejectsInvalidInput) {
  build_text({{"a", "x y"}, {"b", "y z"}}, 0.0);
  EXPECT_THROW(train_rocchio(corpus_, std::vector<float>(2, 1.0f), 0.0), InvalidArgumentError);
  EXPECT_THROW(train_rocchio(corpus_, idf_, -0.5), InvalidArgumentError);

  RocchioModel bad_category = model_;
  ASSERT_FALSE(bad_category.entry_category.empty());
  bad_category.entry_category[0] = 7;
  EXPECT_THROW(RocchioClassifier classifier(bad_category, idf_), InvalidArgumentError);
  RocchioModel bad_offsets = model_;
  bad_offsets.term_start.back() += 1;
  EXPECT_THROW(RocchioClassifier classifier(bad_offsets, idf_), InvalidArgumentError);
  const std::vector<float> short_idf(1, 1.0f);
  EXPECT_THROW(RocchioClassifier classifier(model_, short_idf), InvalidArgumentError);
}

}  // namespace
}  // namespace autocat::internal
