// Tests of kNN through posting lists (classify/methods/knn.h) and of the shared
// idf computation (classify/corpus/weighting.h), against brute-force dense cosines.
#include "classify/methods/knn.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
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

using testing_util::split;
using testing_util::term_name;

// Random documents over `num_terms` terms, skewed towards low term ids, one
// label each out of `num_categories`.
std::vector<LabelledTerms> random_documents(uint32_t num_docs, uint32_t num_terms,
                                            uint32_t num_categories, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<LabelledTerms> docs(num_docs);
  for (LabelledTerms& doc : docs) {
    const uint32_t length = 8 + rng() % 25;
    for (uint32_t i = 0; i < length; ++i) {
      doc.terms.push_back(term_name(std::min(rng() % num_terms, rng() % num_terms)));
    }
    doc.labels.push_back("c" + std::to_string(rng() % num_categories));
  }
  return docs;
}

// Each document `copies` times in a row (tied similarities).
std::vector<LabelledTerms> repeated(const std::vector<LabelledTerms>& docs, int copies) {
  std::vector<LabelledTerms> result;
  for (const LabelledTerms& doc : docs) result.insert(result.end(), size_t(copies), doc);
  return result;
}

// Dense tf-idf model computed from the raw token lists, sharing no code with
// the index: tf is 1 + ln tf, or with `double_log` 1 + ln(1 + ln tf).
class BruteForce {
 public:
  explicit BruteForce(const std::vector<LabelledTerms>& docs, bool double_log = false)
      : double_log_(double_log) {
    std::set<std::string> vocabulary;
    for (const LabelledTerms& doc : docs) vocabulary.insert(doc.terms.begin(), doc.terms.end());
    terms_.assign(vocabulary.begin(), vocabulary.end());
    for (size_t t = 0; t < terms_.size(); ++t) ids_[terms_[t]] = t;
    std::vector<double> df(terms_.size(), 0.0);
    std::vector<std::map<size_t, int>> counts;
    for (const LabelledTerms& doc : docs) {
      counts.push_back(count(doc.terms));
      for (const auto& [t, n] : counts.back()) df[t] += 1.0;
    }
    for (double d : df) idf_.push_back(std::log(double(docs.size()) / d));
    for (const auto& c : counts) vectors_.push_back(normalized(c));
  }

  const std::vector<std::string>& terms() const { return terms_; }
  // Normalized tf-idf vector of a token list (unknown tokens ignored).
  std::vector<double> weights(const std::vector<std::string>& tokens) const {
    return normalized(count(tokens));
  }
  double cosine(const std::vector<double>& q, size_t doc) const {
    double dot = 0.0;
    for (size_t t = 0; t < q.size(); ++t) dot += q[t] * vectors_[doc][t];
    return dot;
  }
  // (doc, cosine) of every document with cosine > 0, most similar first.
  std::vector<KnnIndex::Neighbour> ranking(const std::vector<std::string>& tokens) const {
    const std::vector<double> q = weights(tokens);
    std::vector<KnnIndex::Neighbour> all;
    for (size_t d = 0; d < vectors_.size(); ++d) {
      const double sim = cosine(q, d);
      if (sim > 1e-12) all.push_back({uint32_t(d), float(sim)});
    }
    std::stable_sort(all.begin(), all.end(),
                     [](const auto& a, const auto& b) { return a.similarity > b.similarity; });
    return all;
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
  std::vector<double> normalized(const std::map<size_t, int>& counts) const {
    std::vector<double> v(terms_.size(), 0.0);
    double norm2 = 0.0;
    for (const auto& [t, n] : counts) {
      const double tf =
          double_log_ ? 1.0 + std::log(1.0 + std::log(double(n))) : 1.0 + std::log(double(n));
      v[t] = tf * idf_[t];
      norm2 += v[t] * v[t];
    }
    if (norm2 > 0.0) {
      for (double& x : v) x /= std::sqrt(norm2);
    }
    return v;
  }

  bool double_log_ = false;
  std::vector<std::string> terms_;
  std::map<std::string, size_t> ids_;
  std::vector<double> idf_;
  std::vector<std::vector<double>> vectors_;
};

class KnnTest : public testing::Test {
 protected:
  void build(const std::vector<LabelledTerms>& docs, KnnTf tf = KnnTf::kSublinear) {
    docs_ = docs;
    corpus_ = make_training_corpus(docs);
    vocabulary_ = Vocabulary(corpus_.terms);
    idf_ = compute_idf(corpus_.df, corpus_.num_docs(), {});
    index_ = std::make_shared<const KnnIndex>(corpus_, idf_, tf);
  }
  void build_text(const std::vector<std::pair<std::string, std::string>>& label_text,
                  KnnTf tf = KnnTf::kSublinear) {
    std::vector<LabelledTerms> docs;
    for (const auto& [label, text] : label_text) docs.push_back({split(text), {label}});
    build(docs, tf);
  }
  DocumentTerms query(const std::vector<std::string>& tokens) const {
    return make_document_terms(vocabulary_, tokens);
  }
  DocumentTerms query(const std::string& text) const { return query(split(text)); }
  uint32_t category(const std::string& name) const {
    auto it = std::find(corpus_.categories.begin(), corpus_.categories.end(), name);
    return uint32_t(it - corpus_.categories.begin());
  }

  std::vector<LabelledTerms> docs_;
  TrainingCorpus corpus_;
  Vocabulary vocabulary_;
  std::vector<float> idf_;
  std::shared_ptr<const KnnIndex> index_;
};

// Same documents, same similarities (to 1e-5) and same order. Where two true
// similarities are closer than float resolution the order is not defined by
// the data, so only the similarity is compared there.
void expect_same_ranking(const std::vector<KnnIndex::Neighbour>& expected,
                         const std::vector<KnnIndex::Neighbour>& actual) {
  ASSERT_EQ(expected.size(), actual.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(expected[i].similarity, actual[i].similarity, 1e-5) << "rank " << i;
    const bool near_tie =
        (i > 0 && expected[i - 1].similarity - expected[i].similarity < 1e-6) ||
        (i + 1 < expected.size() && expected[i].similarity - expected[i + 1].similarity < 1e-6);
    if (!near_tie) {
      EXPECT_EQ(expected[i].doc, actual[i].doc) << "rank " << i;
    }
  }
}

TEST_F(KnnTest, ExactCosineMatchesBruteForce) {
  build(random_documents(200, 50, 4, 20261122));
  const BruteForce brute(docs_);
  ASSERT_EQ(brute.terms(), corpus_.terms);
  std::vector<LabelledTerms> queries = random_documents(20, 60, 4, 7);  // some unknown terms
  for (uint32_t d : {0u, 17u, 99u, 199u}) queries.push_back(docs_[d]);
  for (const LabelledTerms& q : queries) {
    const auto expected = brute.ranking(q.terms);
    ASSERT_FALSE(expected.empty());
    const auto all = index_->neighbours(query(q.terms), 200);
    expect_same_ranking(expected, all);
    // The top k is a prefix of the full ranking.
    const auto top = index_->neighbours(query(q.terms), 7);
    ASSERT_EQ(top.size(), 7u);
    for (size_t i = 0; i < top.size(); ++i) {
      EXPECT_EQ(top[i].doc, all[i].doc);
      EXPECT_EQ(top[i].similarity, all[i].similarity);
    }
  }
}

// Queries of rare terms walk fewer postings than half the corpus size, which
// takes the path that records touched documents instead of scanning all.
TEST_F(KnnTest, ShortPostingWalksMatchBruteForce) {
  build(random_documents(400, 300, 4, 77));
  const BruteForce brute(docs_);
  std::mt19937 rng(78);
  int checked = 0;
  for (int i = 0; i < 30; ++i) {
    std::vector<std::string> tokens;
    for (int j = 0; j < 3; ++j) tokens.push_back(term_name(150 + rng() % 150));
    const DocumentTerms doc = query(tokens);
    uint64_t postings = 0;
    for (const TermCount& tc : doc.terms) postings += corpus_.df[tc.term];
    ASSERT_LT(postings, corpus_.num_docs() / 2);
    if (postings == 0) continue;
    expect_same_ranking(brute.ranking(tokens), index_->neighbours(doc, 400));
    ++checked;
  }
  EXPECT_GT(checked, 20);
}

// Same documents in the same order with the same float similarities.
void expect_same_neighbours(const std::vector<KnnIndex::Neighbour>& expected,
                            const std::vector<KnnIndex::Neighbour>& actual, int k) {
  ASSERT_EQ(expected.size(), actual.size()) << "k=" << k;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(expected[i].doc, actual[i].doc) << "k=" << k << " rank " << i;
    EXPECT_EQ(expected[i].similarity, actual[i].similarity) << "k=" << k << " rank " << i;
  }
}

// The max-score search returns the exhaustive walk's neighbours with the
// same float similarities, including at ties (every document appears three
// times), and it does skip postings on this corpus.
TEST_F(KnnTest, MaxScoreGivesTheExhaustiveNeighboursBitForBit) {
  build(repeated(random_documents(1000, 400, 5, 4242), 3));
  std::vector<LabelledTerms> queries = random_documents(40, 420, 5, 4343);
  for (uint32_t d = 0; d < 60; ++d) queries.push_back(docs_[d * 31]);
  int pruned_calls = 0, calls = 0;
  for (const LabelledTerms& q : queries) {
    const DocumentTerms doc = query(q.terms);
    for (int k : {1, 10, 50, 300}) {
      KnnSearchStats exhaustive_stats, max_score_stats;
      const auto expected =
          index_->neighbours(doc, k, 0, 1.0, KnnSearch::kExhaustive, &exhaustive_stats);
      const auto actual =
          index_->neighbours(doc, k, 0, 1.0, KnnSearch::kMaxScore, &max_score_stats);
      expect_same_neighbours(expected, actual, k);
      EXPECT_LE(max_score_stats.postings_walked, exhaustive_stats.postings_walked);
      pruned_calls += max_score_stats.postings_walked < exhaustive_stats.postings_walked;
      ++calls;
    }
  }
  // The test means something only if pruning happened often (71 of the 400
  // calls skip postings; the cost model leaves short queries exhaustive).
  EXPECT_GE(pruned_calls, 60) << pruned_calls << " of " << calls;
}

// The default search adds the longest posting lists as dense columns and
// max-score looks candidates up in them; both must give the neighbours of
// the posting-by-posting walk bit for bit. Thirty terms over 600 documents
// put several terms in over a quarter of the documents.
TEST_F(KnnTest, DenseColumnsGiveThePostingWalkNeighboursBitForBit) {
  build(repeated(random_documents(300, 30, 5, 515), 2));  // ties
  std::vector<LabelledTerms> queries = random_documents(40, 35, 5, 516);
  for (uint32_t d = 0; d < 20; ++d) queries.push_back(docs_[d * 29]);
  int dense_calls = 0, calls = 0;
  for (const LabelledTerms& q : queries) {
    const DocumentTerms doc = query(q.terms);
    for (int k : {1, 10, 50, 300, 1000}) {
      const auto expected = index_->neighbours(doc, k, 0, 1.0, KnnSearch::kPostingWalk);
      for (KnnSearch search : {KnnSearch::kExhaustive, KnnSearch::kMaxScore}) {
        KnnSearchStats stats;
        const auto actual = index_->neighbours(doc, k, 0, 1.0, search, &stats);
        expect_same_neighbours(expected, actual, k);
        dense_calls += stats.dense_terms > 0;
        ++calls;
      }
    }
  }
  // Most queries hold a common term; the test means something only if the
  // columns were used.
  EXPECT_GE(dense_calls, calls / 2) << dense_calls << " of " << calls;
}

// The double-log tf transform, in the documents and the query alike: every
// search gives the brute-force cosines, and the searches agree bit for bit.
TEST_F(KnnTest, DoubleLogTfMatchesBruteForceInEverySearch) {
  // Long documents over few terms: many counts above 1, where the
  // transforms differ.
  std::vector<LabelledTerms> docs = repeated(random_documents(300, 40, 4, 606), 2);
  for (size_t d = 0; d < docs.size(); d += 3) {
    docs[d].terms.insert(docs[d].terms.end(), docs[d].terms.begin(), docs[d].terms.end());
  }
  build(docs, KnnTf::kDoubleLog);
  EXPECT_EQ(index_->tf(), KnnTf::kDoubleLog);
  const BruteForce brute(docs_, true);
  const BruteForce sublinear(docs_, false);
  std::vector<LabelledTerms> queries = random_documents(30, 45, 4, 607);
  for (uint32_t d = 0; d < 20; ++d) queries.push_back(docs_[d * 29]);
  int differs = 0;
  for (const LabelledTerms& q : queries) {
    const DocumentTerms doc = query(q.terms);
    const auto all = index_->neighbours(doc, 600);
    expect_same_ranking(brute.ranking(q.terms), all);
    differs +=
        std::fabs(sublinear.ranking(q.terms).front().similarity - all.front().similarity) > 1e-4;
    for (int k : {1, 10, 50, 300}) {
      const auto expected = index_->neighbours(doc, k, 0, 1.0, KnnSearch::kPostingWalk);
      for (KnnSearch search : {KnnSearch::kExhaustive, KnnSearch::kMaxScore}) {
        expect_same_neighbours(expected, index_->neighbours(doc, k, 0, 1.0, search), k);
      }
    }
  }
  // The transform made a difference (else the test shows nothing).
  EXPECT_GT(differs, 10);
}

TEST_F(KnnTest, TrainingDocumentIsItsOwnNearestNeighbour) {
  build(random_documents(200, 50, 4, 99));
  for (uint32_t d : {3u, 42u, 150u}) {
    const auto top = index_->neighbours(query(docs_[d].terms), 1);
    ASSERT_EQ(top.size(), 1u);
    EXPECT_NEAR(top[0].similarity, 1.0, 1e-5);
  }
}

TEST_F(KnnTest, HandComputedCosines) {
  // N = 4: idf(apple) = idf(pear) = ln 2, idf(fig) = idf(kiwi) = ln 4.
  build_text({{"a", "apple pear"}, {"a", "apple apple fig"}, {"b", "pear kiwi"}, {"b", "kiwi"}});
  const double l2 = std::log(2.0), l4 = std::log(4.0);
  // Query "apple": cosine with doc 0 = l2 / sqrt(2 l2^2) = 1/sqrt 2.
  // Doc 1 = ((1 + ln 2) l2, l4): cosine = (1 + ln 2) l2 / |doc 1|.
  const double doc1 = (1 + std::log(2.0)) * l2 / std::hypot((1 + std::log(2.0)) * l2, l4);
  const auto result = index_->neighbours(query("apple"), 10);
  ASSERT_EQ(result.size(), 2u);
  EXPECT_EQ(result[0].doc, 0u);
  EXPECT_NEAR(result[0].similarity, 1 / std::sqrt(2.0), 1e-6);
  EXPECT_EQ(result[1].doc, 1u);
  EXPECT_NEAR(result[1].similarity, doc1, 1e-6);
}

// As above with double-log tf: doc 1 = ((1 + ln(1 + ln 2)) l2, l4); the
// query "apple apple" weighs apple 1 + ln(1 + ln 2), which normalizes away.
TEST_F(KnnTest, HandComputedCosinesWithDoubleLogTf) {
  build_text({{"a", "apple pear"}, {"a", "apple apple fig"}, {"b", "pear kiwi"}, {"b", "kiwi"}},
             KnnTf::kDoubleLog);
  const double l2 = std::log(2.0), l4 = std::log(4.0);
  const double tf2 = 1 + std::log(1 + std::log(2.0));
  const double doc1 = tf2 * l2 / std::hypot(tf2 * l2, l4);
  for (const char* text : {"apple", "apple apple"}) {
    const auto result = index_->neighbours(query(text), 10);
    ASSERT_EQ(result.size(), 2u);
    EXPECT_EQ(result[0].doc, 0u);
    EXPECT_NEAR(result[0].similarity, 1 / std::sqrt(2.0), 1e-6);
    EXPECT_EQ(result[1].doc, 1u);
    EXPECT_NEAR(result[1].similarity, doc1, 1e-6);
  }
  // "apple apple fig" is doc 1 itself: cosine 1 only if the query's counts
  // take the documents' transform.
  EXPECT_NEAR(index_->neighbours(query("apple apple fig"), 1)[0].similarity, 1.0, 1e-6);
}

TEST_F(KnnTest, KLargerThanCorpusReturnsEveryMatchingDocument) {
  build_text({{"a", "red green"}, {"a", "red blue"}, {"b", "yellow"}, {"b", "black white"}});
  const auto result = index_->neighbours(query("red"), 1000);
  ASSERT_EQ(result.size(), 2u);  // docs without "red" have similarity 0
  EXPECT_EQ(result[0].doc, 0u);
  EXPECT_EQ(result[1].doc, 1u);
  EXPECT_TRUE(index_->neighbours(query("red"), 0).empty());
}

TEST_F(KnnTest, QueryWithoutKnownTermsScoresZero) {
  build_text({{"a", "red green"}, {"b", "yellow blue"}});
  KnnClassifier classifier(index_);
  std::vector<double> scores = {0.5, 0.5, 0.5};
  classifier.score(query("purple orange"), ClassifyOptions(), &scores);
  EXPECT_EQ(scores, std::vector<double>(2, 0.0));
  classifier.score(DocumentTerms(), ClassifyOptions(), &scores);
  EXPECT_EQ(scores, std::vector<double>(2, 0.0));
}

TEST_F(KnnTest, TermInEveryDocumentContributesNothing) {
  build_text({{"a", "the cat sat"}, {"a", "the cat ran"}, {"b", "the dog sat"}, {"b", "the"}});
  EXPECT_EQ(idf_[vocabulary_.find("the")], 0.0f);
  EXPECT_TRUE(index_->neighbours(query("the the"), 10).empty());
  const auto with = index_->neighbours(query("the cat"), 10);
  const auto without = index_->neighbours(query("cat"), 10);
  ASSERT_EQ(with.size(), without.size());
  for (size_t i = 0; i < with.size(); ++i) {
    EXPECT_EQ(with[i].doc, without[i].doc);
    EXPECT_EQ(with[i].similarity, without[i].similarity);
  }
  // Doc 3 ("the") has norm 0: no postings, never a neighbour.
  // Postings kept: cat x2, sat x2, ran, dog.
  EXPECT_EQ(index_->num_postings(), 6u);
}

TEST_F(KnnTest, TiesAreBrokenByLowerDocumentIndex) {
  build_text({{"b", "x y"}, {"a", "z"}, {"a", "x y"}, {"b", "x y"}, {"a", "x y"}});
  const auto result = index_->neighbours(query("x"), 3);
  ASSERT_EQ(result.size(), 3u);
  EXPECT_EQ(result[0].doc, 0u);
  EXPECT_EQ(result[1].doc, 2u);
  EXPECT_EQ(result[2].doc, 3u);
  EXPECT_EQ(result[0].similarity, result[2].similarity);
}

// In a short postings walk documents are offered in the order the postings
// first touch them, not by index: here doc 1 (via "a") before doc 0 (via
// "b"). Once the top k is full, a later document tied with the worst kept
// one must still displace it when its index is lower.
TEST_F(KnnTest, ShortPostingWalkBreaksTiesAtTheTopKFloorByLowerIndex) {
  build_text({{"x", "b"},
              {"y", "a"},
              {"z", "c1"},
              {"z", "c2"},
              {"z", "c3"},
              {"z", "c4"},
              {"z", "c5"},
              {"z", "c6"}});
  ASSERT_LT(vocabulary_.find("a"), vocabulary_.find("b"));
  const DocumentTerms both = query("a b");
  ASSERT_LT(2u, corpus_.num_docs() / 2);  // 2 postings: the touched-documents path
  const auto all = index_->neighbours(both, 8);
  ASSERT_EQ(all.size(), 2u);
  ASSERT_EQ(all[0].similarity, all[1].similarity);
  EXPECT_EQ(all[0].doc, 0u);
  EXPECT_EQ(all[1].doc, 1u);
  const auto top = index_->neighbours(both, 1);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].doc, 0u);
}

// With similarity^2 votes each neighbour votes with its squared cosine.
TEST_F(KnnTest, SquaredSimilarityVotes) {
  build(random_documents(200, 50, 4, 5));
  KnnClassifier classifier(index_, /*similarity_power=*/2);
  ClassifyOptions options;
  options.k = 15;
  int unequal = 0;
  for (const LabelledTerms& q : random_documents(10, 50, 4, 6)) {
    const DocumentTerms doc = query(q.terms);
    std::vector<double> scores;
    classifier.score(doc, options, &scores);
    ASSERT_EQ(scores.size(), 4u);
    std::vector<double> squared(4, 0.0), linear(4, 0.0);
    double squared_total = 0.0, linear_total = 0.0;
    for (const auto& n : index_->neighbours(doc, options.k)) {
      const double s = n.similarity;
      squared_total += s * s;
      linear_total += s;
      squared[corpus_.doc_categories[n.doc].at(0)] += s * s;
      linear[corpus_.doc_categories[n.doc].at(0)] += s;
    }
    for (size_t c = 0; c < 4; ++c) {
      EXPECT_NEAR(scores[c], squared[c] / squared_total, 1e-9);
      if (std::abs(squared[c] / squared_total - linear[c] / linear_total) > 1e-3) ++unequal;
    }
  }
  EXPECT_GT(unequal, 0);  // the queries tell the two vote rules apart
}

TEST_F(KnnTest, VoteSharesAreSimilarityWeightedAndSumToOne) {
  build(random_documents(200, 50, 4, 5));
  KnnClassifier classifier(index_);
  ClassifyOptions options;
  options.k = 15;
  for (const LabelledTerms& q : random_documents(10, 50, 4, 6)) {
    const DocumentTerms doc = query(q.terms);
    std::vector<double> scores;
    classifier.score(doc, options, &scores);
    ASSERT_EQ(scores.size(), 4u);
    double sum = 0.0;
    for (double s : scores) {
      EXPECT_GE(s, 0.0);
      sum += s;
    }
    EXPECT_NEAR(sum, 1.0, 1e-9);
    // Recompute the shares from the neighbours.
    std::vector<double> expected(4, 0.0);
    double total = 0.0;
    for (const auto& n : index_->neighbours(doc, options.k)) {
      total += n.similarity;
      expected[corpus_.doc_categories[n.doc].at(0)] += n.similarity;
    }
    for (size_t c = 0; c < 4; ++c) EXPECT_NEAR(scores[c], expected[c] / total, 1e-9);
  }
}

TEST_F(KnnTest, MultiLabelNeighbourVotesForEachLabel) {
  build(
      {{split("alpha beta"), {"x", "y"}}, {split("alpha gamma"), {"y"}}, {split("delta"), {"z"}}});
  KnnClassifier classifier(index_);
  std::vector<double> scores;
  classifier.score(query("beta"), ClassifyOptions(), &scores);  // only doc 0 matches
  EXPECT_EQ(scores, (std::vector<double>{1.0, 1.0, 0.0}));
}

TEST_F(KnnTest, PrunedWithEveryTermEqualsExact) {
  build(random_documents(200, 50, 4, 11));
  for (const LabelledTerms& q : random_documents(10, 50, 4, 12)) {
    const DocumentTerms doc = query(q.terms);
    const auto exact = index_->neighbours(doc, 20);
    for (int max_terms : {int(doc.terms.size()), 1000}) {
      const auto pruned = index_->neighbours(doc, 20, max_terms, 1.0);
      ASSERT_EQ(exact.size(), pruned.size());
      for (size_t i = 0; i < exact.size(); ++i) {
        EXPECT_EQ(exact[i].doc, pruned[i].doc);
        EXPECT_EQ(exact[i].similarity, pruned[i].similarity);
      }
    }
  }
}

TEST_F(KnnTest, PrunedModeWalksOnlyTheHeaviestTermsButKeepsTheFullNorm) {
  build(random_documents(200, 50, 4, 13));
  const BruteForce brute(docs_);
  // Four query terms, and two: one more than the limit prunes too.
  for (const char* text : {"t001 t002 t030 t030 t045", "t002 t030 t030"}) {
    const std::vector<std::string> tokens = split(text);
    const DocumentTerms doc = query(tokens);
    // The heaviest query term: highest (1 + ln count) * idf.
    TermId heaviest = doc.terms[0].term;
    double best = -1;
    for (const TermCount& tc : doc.terms) {
      const double w = sublinear_tf(tc.count) * idf_[tc.term];
      if (w > best) {
        best = w;
        heaviest = tc.term;
      }
    }
    const std::vector<double> q = brute.weights(tokens);
    const auto pruned = index_->neighbours(doc, 200, 1);
    ASSERT_FALSE(pruned.empty()) << text;
    for (const auto& n : pruned) {
      std::vector<double> only(q.size(), 0.0);
      only[heaviest] = q[heaviest];
      EXPECT_NEAR(n.similarity, brute.cosine(only, n.doc), 1e-5) << text;
    }
    EXPECT_EQ(pruned.size(), corpus_.df[heaviest]) << text;
    EXPECT_LT(pruned.size(), index_->neighbours(doc, 200).size()) << text;
  }
}

TEST_F(KnnTest, PrunedModeSkipsCommonTerms) {
  build_text({{"a", "common rare1"}, {"a", "common x"}, {"b", "common y"}, {"b", "rare2 z"}});
  // df(common) = 3 of 4; a ratio of 0.5 skips it.
  const auto exact = index_->neighbours(query("common rare1"), 10);
  EXPECT_EQ(exact.size(), 3u);
  const auto pruned = index_->neighbours(query("common rare1"), 10, 0, 0.5);
  ASSERT_EQ(pruned.size(), 1u);
  EXPECT_EQ(pruned[0].doc, 0u);
  EXPECT_LT(pruned[0].similarity, exact[0].similarity);
  EXPECT_TRUE(index_->neighbours(query("common"), 10, 0, 0.5).empty());
}

TEST_F(KnnTest, ConcurrentClassificationGivesIdenticalResults) {
  build(random_documents(300, 80, 5, 21));
  KnnClassifier classifier(index_);
  const std::vector<LabelledTerms> queries = random_documents(200, 80, 5, 22);
  ClassifyOptions options;
  options.k = 10;
  std::vector<std::vector<double>> serial(queries.size());
  for (size_t i = 0; i < queries.size(); ++i) {
    classifier.score(query(queries[i].terms), options, &serial[i]);
  }
  std::vector<std::vector<std::vector<double>>> parallel(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < parallel.size(); ++t) {
    threads.emplace_back([&, t] {
      // Each thread starts at a different query.
      parallel[t].resize(queries.size());
      for (size_t j = 0; j < queries.size(); ++j) {
        const size_t i = (j + t * queries.size() / 4) % queries.size();
        classifier.score(query(queries[i].terms), options, &parallel[t][i]);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const auto& results : parallel) EXPECT_EQ(results, serial);
}

// Two-step whose first stage reads every list whole and keeps every
// document as a candidate is the exact search, bit for bit: the second
// stage adds the products in the exact walk's order.
TEST_F(KnnTest, TwoStepWithEveryDocumentACandidateIsExact) {
  build(repeated(random_documents(800, 300, 5, 515), 2));
  auto index = std::make_shared<KnnIndex>(corpus_, idf_, KnnTf::kDoubleLog);
  index->build_two_step(corpus_.num_docs());  // no list pruned
  ASSERT_TRUE(index->has_two_step());
  EXPECT_EQ(index->num_pruned_postings(), 0u);
  KnnTwoStepParams every;
  every.min_candidates = corpus_.num_docs();
  every.first_stage_terms = 0;
  every.always = true;
  std::vector<LabelledTerms> queries = random_documents(20, 320, 5, 616);
  for (uint32_t d = 0; d < 20; ++d) queries.push_back(docs_[d * 71]);
  for (const LabelledTerms& q : queries) {
    const DocumentTerms doc = query(q.terms);
    for (int k : {1, 10, 50}) {
      KnnSearchStats stats;
      const auto exact = index->neighbours(doc, k, 0, 1.0, KnnSearch::kPostingWalk);
      const auto two_step = index->neighbours(doc, k, 0, 1.0, KnnSearch::kTwoStep, &stats, every);
      EXPECT_GT(stats.rescored, 0u);
      expect_same_neighbours(exact, two_step, k);
    }
  }
}

// With a lossy first stage (short pruned lists, three query terms, twice k
// candidates) two-step misses some exact neighbours, but every neighbour it
// returns carries its true cosine, bit for bit.
TEST_F(KnnTest, TwoStepReturnsTrueCosinesEvenWhenItMissesNeighbours) {
  build(random_documents(1500, 400, 5, 717));
  auto index = std::make_shared<KnnIndex>(corpus_, idf_);
  index->build_two_step(30);
  ASSERT_GT(index->num_pruned_postings(), 0u);
  KnnTwoStepParams lossy;
  lossy.candidates_per_k = 2;
  lossy.min_candidates = 0;
  lossy.first_stage_terms = 3;
  lossy.always = true;
  size_t hits = 0, wanted = 0;
  for (const LabelledTerms& q : random_documents(30, 420, 5, 818)) {
    const DocumentTerms doc = query(q.terms);
    std::map<uint32_t, float> truth;
    for (const auto& n :
         index->neighbours(doc, int(corpus_.num_docs()), 0, 1.0, KnnSearch::kPostingWalk)) {
      truth[n.doc] = n.similarity;
    }
    const int k = 20;
    const auto exact = index->neighbours(doc, k, 0, 1.0, KnnSearch::kPostingWalk);
    const auto cut = index->neighbours(doc, k, 0, 1.0, KnnSearch::kTwoStep, nullptr, lossy);
    ASSERT_EQ(cut.size(), exact.size());
    for (const auto& n : cut) {
      ASSERT_EQ(truth.count(n.doc), 1u) << n.doc;
      EXPECT_EQ(truth[n.doc], n.similarity) << "doc " << n.doc;
    }
    std::set<uint32_t> exact_docs;
    for (const auto& n : exact) exact_docs.insert(n.doc);
    for (const auto& n : cut) hits += exact_docs.count(n.doc);
    wanted += exact.size();
  }
  // Lossy, so that the similarities above were checked on a real cut.
  EXPECT_LT(hits, wanted);
  EXPECT_GT(hits, wanted / 4);  // 235 of 600 when written
}

// Queries and documents of hundreds of distinct terms over a vocabulary of
// tens of thousands: the second stage's query-term table then has
// collisions, its term bitmap false matches, and the matched ranks span
// several 64-bit words. Every candidate rescored, two-step is still the
// exact search bit for bit.
TEST_F(KnnTest, TwoStepRescoresLongDocumentsExactly) {
  std::mt19937 rng(4242);
  auto long_document = [&](uint32_t length) {
    LabelledTerms doc;
    for (uint32_t i = 0; i < length; ++i) {
      doc.terms.push_back(term_name(std::min(rng() % 40000, rng() % 40000)));
    }
    doc.labels.push_back("c" + std::to_string(rng() % 3));
    return doc;
  };
  std::vector<LabelledTerms> docs;
  for (int d = 0; d < 300; ++d) docs.push_back(long_document(150 + rng() % 200));
  build(docs);
  auto index = std::make_shared<KnnIndex>(corpus_, idf_);
  index->build_two_step(corpus_.num_docs());  // no list pruned
  KnnTwoStepParams every;
  every.min_candidates = corpus_.num_docs();
  every.first_stage_terms = 0;
  every.always = true;
  for (int q = 0; q < 10; ++q) {
    const DocumentTerms doc = query(long_document(400).terms);
    ASSERT_GT(doc.terms.size(), 200u);
    for (int k : {1, 20}) {
      KnnSearchStats stats;
      const auto exact = index->neighbours(doc, k, 0, 1.0, KnnSearch::kPostingWalk);
      const auto two_step = index->neighbours(doc, k, 0, 1.0, KnnSearch::kTwoStep, &stats, every);
      EXPECT_GT(stats.rescored, corpus_.num_docs() / 2);  // those sharing a term
      expect_same_neighbours(exact, two_step, k);
    }
  }
}

// Where both stages would cost more than the exact walk (a first-stage
// posting and a rescored entry cost several exact postings), two-step hands
// over to it: no candidate is rescored and the neighbours are the exact
// ones. Where the first stage is short against the walk, it runs.
TEST_F(KnnTest, TwoStepHandsOverToTheExactWalkWhereThatCostsLess) {
  // Three first-stage terms, k = 5 candidates: about 90 postings and 90
  // forward entries, against the exact walk's 300 or so at 200 documents
  // and thousands at 20,000.
  KnnTwoStepParams params;
  params.candidates_per_k = 1;
  params.min_candidates = 0;
  params.first_stage_terms = 3;
  build(random_documents(200, 300, 5, 919));
  auto small = std::make_shared<KnnIndex>(corpus_, idf_);
  small->build_two_step(30);
  for (uint32_t d = 0; d < 200; d += 20) {
    const DocumentTerms doc = query(docs_[d].terms);
    KnnSearchStats walk_stats, stats;
    const auto exact = small->neighbours(doc, 5, 0, 1.0, KnnSearch::kExhaustive, &walk_stats);
    const auto two_step = small->neighbours(doc, 5, 0, 1.0, KnnSearch::kTwoStep, &stats, params);
    EXPECT_EQ(stats.rescored, 0u) << "query " << d;
    EXPECT_EQ(stats.postings_walked, walk_stats.postings_walked);
    expect_same_neighbours(exact, two_step, 5);
  }

  build(random_documents(20000, 300, 5, 920));
  auto large = std::make_shared<KnnIndex>(corpus_, idf_);
  large->build_two_step(30);
  size_t ran = 0;
  for (uint32_t d = 0; d < 20000; d += 2000) {
    KnnSearchStats stats;
    large->neighbours(query(docs_[d].terms), 5, 0, 1.0, KnnSearch::kTwoStep, &stats, params);
    ran += stats.rescored > 0;
  }
  EXPECT_EQ(ran, 10u);
}

TEST_F(KnnTest, RejectsMismatchedIdf) {
  const TrainingCorpus corpus = make_training_corpus({{split("a b"), {"x"}}});
  EXPECT_THROW(KnnIndex index(corpus, std::vector<float>(1, 1.0f)), InvalidArgumentError);
}

TEST(WeightingTest, ComputeIdf) {
  const std::vector<uint32_t> df = {1, 4, 2, 0};
  const std::vector<float> all = compute_idf(df, 4, {});
  ASSERT_EQ(all.size(), 4u);
  EXPECT_FLOAT_EQ(all[0], std::log(4.0f));
  EXPECT_EQ(all[1], 0.0f);
  EXPECT_FLOAT_EQ(all[2], std::log(2.0f));
  EXPECT_EQ(all[3], 0.0f);
  const std::vector<float> some = compute_idf(df, 4, {1, 1, 0, 1});
  EXPECT_FLOAT_EQ(some[0], std::log(4.0f));
  EXPECT_EQ(some[2], 0.0f);
}

// knn_term_weights by hand: w = idf * rf^relevance, rf the largest over
// the categories of log2(2 + a / max(1, b)).
//   a: in two x documents, none else      -> rf = log2(2 + 2 / 1) = 2
//   b: in one x and one y document        -> rf = log2(2 + 1 / 1)
//   c, d: in one y document               -> rf = log2(2 + 1 / 1)
//   e: in three x documents and one y     -> rf = log2(2 + 3 / 1) (x)
TEST(KnnTermWeightsTest, HandComputedRelevanceFrequency) {
  const TrainingCorpus corpus = make_training_corpus({{split("a b e"), {"x"}},
                                                      {split("a e"), {"x"}},
                                                      {split("e"), {"x"}},
                                                      {split("b c e"), {"y"}},
                                                      {split("d"), {"y"}}});
  ASSERT_EQ(corpus.terms, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  const std::vector<float> idf = compute_idf(corpus.df, corpus.num_docs(), {});
  EXPECT_EQ(knn_term_weights(corpus, idf, 0.0), idf);
  const std::vector<float> linear = knn_term_weights(corpus, idf, 1.0);
  EXPECT_NEAR(linear[0], idf[0] * 2.0, 1e-6);
  EXPECT_NEAR(linear[1], idf[1] * std::log2(3.0), 1e-6);
  EXPECT_NEAR(linear[2], idf[2] * std::log2(3.0), 1e-6);
  EXPECT_NEAR(linear[3], idf[3] * std::log2(3.0), 1e-6);
  EXPECT_NEAR(linear[4], idf[4] * std::log2(5.0), 1e-6);
  const std::vector<float> root = knn_term_weights(corpus, idf, 0.5);
  EXPECT_NEAR(root[0], idf[0] * std::sqrt(2.0), 1e-6);
  EXPECT_NEAR(root[4], idf[4] * std::sqrt(std::log2(5.0)), 1e-6);
  // The term confined to one category gains more than the one split evenly.
  EXPECT_GT(linear[0] / idf[0], linear[1] / idf[1]);
  EXPECT_THROW(knn_term_weights(corpus, std::vector<float>(3, 1.0f), 1.0), InvalidArgumentError);
}

// A document with several labels counts in each of them, not outside them:
// a term found only in documents labelled x (and y) is confined to x.
TEST(KnnTermWeightsTest, MultiLabelDocumentsCountInEachCategory) {
  const TrainingCorpus corpus = make_training_corpus(
      {{split("a"), {"x", "y"}}, {split("a"), {"x"}}, {split("b"), {"y"}}, {split("c"), {"z"}}});
  ASSERT_EQ(corpus.terms, (std::vector<std::string>{"a", "b", "c"}));
  const std::vector<float> idf = compute_idf(corpus.df, corpus.num_docs(), {});
  const std::vector<float> weights = knn_term_weights(corpus, idf, 1.0);
  // a: x holds both of its documents (rf 2), y one of two (log2 3).
  EXPECT_NEAR(weights[0], idf[0] * 2.0, 1e-6);
  EXPECT_NEAR(weights[1], idf[1] * std::log2(3.0), 1e-6);
}

// Documents without a label are a class of their own: a term found only in
// them is as concentrated as one found only in a category of the same size.
TEST(KnnTermWeightsTest, UnlabelledDocumentsAreAClass) {
  const TrainingCorpus corpus = make_training_corpus({{split("a"), {"x"}},
                                                      {split("a"), {"x"}},
                                                      {split("b"), {}},
                                                      {split("b"), {}},
                                                      {split("c"), {"y"}},
                                                      {split("c"), {"y"}}});
  ASSERT_EQ(corpus.terms, (std::vector<std::string>{"a", "b", "c"}));
  const std::vector<float> idf = compute_idf(corpus.df, corpus.num_docs(), {});
  const std::vector<float> weights = knn_term_weights(corpus, idf, 1.0);
  EXPECT_GT(weights[0], 0.0f);
  EXPECT_FLOAT_EQ(weights[1], weights[0]);
  EXPECT_FLOAT_EQ(weights[2], weights[0]);
}

TEST(WeightingTest, SublinearTf) {
  EXPECT_EQ(sublinear_tf(0), 0.0);
  EXPECT_EQ(sublinear_tf(1), 1.0);
  EXPECT_DOUBLE_EQ(sublinear_tf(3), 1.0 + std::log(3.0));
}

TEST(WeightingTest, DoubleLogTf) {
  EXPECT_EQ(double_log_tf(0), 0.0);
  EXPECT_EQ(double_log_tf(1), 1.0);
  EXPECT_DOUBLE_EQ(double_log_tf(3), 1.0 + std::log(1.0 + std::log(3.0)));
  // Grows with tf, but slower than sublinear tf.
  for (uint32_t tf = 2; tf < 1000; tf = tf * 3 / 2 + 1) {
    EXPECT_GT(double_log_tf(tf), double_log_tf(tf - 1)) << tf;
    EXPECT_LT(double_log_tf(tf), sublinear_tf(tf)) << tf;
  }
  for (uint32_t tf : {0u, 1u, 2u, 7u, 100u}) {
    EXPECT_EQ(knn_tf(tf, KnnTf::kSublinear), sublinear_tf(tf));
    EXPECT_EQ(knn_tf(tf, KnnTf::kDoubleLog), double_log_tf(tf));
  }
  EXPECT_STREQ(knn_tf_name(KnnTf::kSublinear), "sublinear");
  EXPECT_STREQ(knn_tf_name(KnnTf::kDoubleLog), "double-log");
}

}  // namespace
}  // namespace autocat::internal

namespace autocat::internal {
namespace {

// A learned document is weighted exactly as a training document under the
// base's idf and tf transform: the live index finds the neighbours (and
// similarities) of an index built over base + learned with those.
void expect_learned_documents_match_an_index_built_with_them(KnnTf tf) {
  std::vector<LabelledTerms> docs = random_documents(300, 80, 4, 11);
  const std::vector<LabelledTerms> base_docs(docs.begin(), docs.begin() + 200);
  const TrainingCorpus base_corpus = make_training_corpus(base_docs);
  // Keep the learned documents within the base's vocabulary.
  const Vocabulary vocabulary(base_corpus.terms);
  for (size_t d = 200; d < docs.size(); ++d) {
    auto& terms = docs[d].terms;
    terms.erase(std::remove_if(terms.begin(), terms.end(),
                               [&](const std::string& t) { return vocabulary.find(t) < 0; }),
                terms.end());
    if (terms.empty()) terms.push_back(base_corpus.terms.front());
  }
  const TrainingCorpus full_corpus = make_training_corpus(docs);
  ASSERT_EQ(full_corpus.terms, base_corpus.terms);
  ASSERT_EQ(full_corpus.categories, base_corpus.categories);
  const std::vector<float> idf = compute_idf(base_corpus.df, base_corpus.num_docs(), {});
  const KnnIndex full(full_corpus, idf, tf);

  KnnLiveIndex live(std::make_shared<const KnnIndex>(base_corpus, idf, tf),
                    std::vector<std::string>());
  for (size_t d = 200; d < docs.size(); ++d) {
    std::vector<uint32_t> categories;
    for (const std::string& label : docs[d].labels) {
      categories.push_back(uint32_t(
          std::lower_bound(base_corpus.categories.begin(), base_corpus.categories.end(), label) -
          base_corpus.categories.begin()));
    }
    live.learn("doc-" + std::to_string(d), make_document_terms(vocabulary, docs[d].terms),
               categories);
  }
  EXPECT_EQ(live.learned_docs(), 100u);
  const std::vector<LabelledTerms> queries = random_documents(40, 80, 4, 12);
  size_t learned_neighbours = 0;
  for (const LabelledTerms& query : queries) {
    const DocumentTerms terms = make_document_terms(vocabulary, query.terms);
    const auto expected = full.neighbours(terms, 15);
    const auto got = live.neighbours(terms, 15);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i].similarity, expected[i].similarity, 1e-5);
      // Ties within float rounding may swap; the similarity is what counts.
      if (std::fabs(got[i].similarity - expected[i].similarity) < 1e-6f) continue;
      EXPECT_EQ(got[i].doc, expected[i].doc);
    }
    for (const auto& n : got) learned_neighbours += n.doc >= 200 ? 1 : 0;
  }
  EXPECT_GT(learned_neighbours, 0u);  // the learned documents took part
}

// Learned documents enter both stages of the two-step search: each one
// among the exact neighbours of an index built with them is found, with its
// cosine, over a base searched in two steps.
TEST(KnnLiveIndexTest, LearnedDocumentsAreFoundByTheTwoStepSearch) {
  const std::vector<LabelledTerms> docs = random_documents(600, 80, 4, 31);
  const std::vector<LabelledTerms> base_docs(docs.begin(), docs.begin() + 500);
  const TrainingCorpus base_corpus = make_training_corpus(base_docs);
  const Vocabulary vocabulary(base_corpus.terms);
  const std::vector<float> idf = compute_idf(base_corpus.df, base_corpus.num_docs(), {});
  auto base = std::make_shared<KnnIndex>(base_corpus, idf);
  base->build_two_step(20);
  ASSERT_GT(base->num_pruned_postings(), 0u);
  KnnLiveIndex live(base, std::vector<std::string>());
  std::vector<LabelledTerms> learned(docs.begin() + 500, docs.end());
  for (size_t d = 0; d < learned.size(); ++d) {
    live.learn("doc-" + std::to_string(d), make_document_terms(vocabulary, learned[d].terms), {0});
  }
  size_t learned_found = 0;
  for (const LabelledTerms& q : random_documents(30, 80, 4, 32)) {
    const DocumentTerms terms = make_document_terms(vocabulary, q.terms);
    const auto exact = live.neighbours(terms, 20, 0, 1.0, KnnSearch::kExhaustive);
    const auto two_step = live.neighbours(terms, 20, 0, 1.0, KnnSearch::kTwoStep);
    for (const auto& n : exact) {
      if (n.doc < base->num_docs()) continue;
      const auto found = std::find_if(two_step.begin(), two_step.end(),
                                      [&](const auto& m) { return m.doc == n.doc; });
      ASSERT_NE(found, two_step.end()) << "learned document " << n.doc;
      EXPECT_EQ(found->similarity, n.similarity);
      ++learned_found;
    }
  }
  EXPECT_GT(learned_found, 0u);
}

TEST(KnnLiveIndexTest, LearnedDocumentsMatchAnIndexBuiltWithThem) {
  expect_learned_documents_match_an_index_built_with_them(KnnTf::kSublinear);
}

TEST(KnnLiveIndexTest, LearnedDocumentsMatchAnIndexBuiltWithThemUnderDoubleLogTf) {
  expect_learned_documents_match_an_index_built_with_them(KnnTf::kDoubleLog);
}

TEST(KnnLiveIndexTest, ForgottenDocumentsLeaveTheNeighboursAndKStaysFull) {
  const std::vector<LabelledTerms> docs = random_documents(200, 60, 3, 21);
  const TrainingCorpus corpus = make_training_corpus(docs);
  const std::vector<float> idf = compute_idf(corpus.df, corpus.num_docs(), {});
  std::vector<std::string> ids;
  for (uint32_t d = 0; d < corpus.num_docs(); ++d) ids.push_back("d" + std::to_string(d));
  auto base = std::make_shared<const KnnIndex>(corpus, idf);
  KnnLiveIndex live(base, ids);
  const Vocabulary vocabulary(corpus.terms);
  const DocumentTerms query = make_document_terms(vocabulary, docs[7].terms);
  const auto before = base->neighbours(query, 10);
  ASSERT_EQ(before.size(), 10u);
  // Forget the five nearest: the next five move up, and five more follow.
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_TRUE(live.forget("d" + std::to_string(before[i].doc)));
  }
  EXPECT_FALSE(live.forget("d" + std::to_string(before[0].doc)));  // already gone
  EXPECT_FALSE(live.forget("no-such-id"));
  EXPECT_EQ(live.forgotten_docs(), 5u);
  const auto after = live.neighbours(query, 10);
  ASSERT_EQ(after.size(), 10u);
  const auto wider = base->neighbours(query, 15);
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(after[i].doc, wider[i + 5].doc);
  EXPECT_FALSE(live.contains("d" + std::to_string(before[0].doc)));
  EXPECT_TRUE(live.contains("d" + std::to_string(before[5].doc)));

  // Learning a forgotten id back brings a document of that id back.
  live.learn("d" + std::to_string(before[0].doc), query, {0});
  EXPECT_TRUE(live.contains("d" + std::to_string(before[0].doc)));
  const auto relearned = live.neighbours(query, 1);
  ASSERT_EQ(relearned.size(), 1u);
  EXPECT_EQ(relearned[0].doc, corpus.num_docs());  // learned slot 0
  EXPECT_NEAR(relearned[0].similarity, 1.0, 1e-5);
  // Replacing a learned document by id keeps one copy.
  live.learn("d" + std::to_string(before[0].doc), query, {1});
  EXPECT_EQ(live.learned_docs(), 1u);
  std::vector<double> scores;
  ClassifyOptions options;
  live.score(query, 1, options, 1, &scores);
  ASSERT_EQ(scores.size(), corpus.num_categories());
  EXPECT_EQ(scores[1], 1.0);  // the learned copy, now labelled 1, is the only voter
}

}  // namespace
}  // namespace autocat::internal
