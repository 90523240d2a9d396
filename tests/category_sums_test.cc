#include "classify/corpus/category_sums.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "classify/corpus/weighting.h"
#include "test_util.h"

namespace autocat::internal {
namespace {

using testing_util::split;

// Three documents, then a fourth that gives "beijing" (so far only in
// china's documents) a second category and adds to "tokyo"'s japan entry.
const std::vector<LabelledTerms> kFirst = {
    {split("chinese beijing chinese"), {"china"}},
    {split("chinese shanghai beijing"), {"china"}},
    {split("tokyo japan chinese"), {"japan"}},
};
const LabelledTerms kFourth = {split("beijing tokyo tokyo"), {"japan"}};

void expect_same_sums(const CategorySums& expected, const CategorySums& actual) {
  ASSERT_EQ(expected.num_terms, actual.num_terms);
  ASSERT_EQ(expected.num_categories, actual.num_categories);
  EXPECT_EQ(expected.category_docs, actual.category_docs);
  EXPECT_EQ(expected.num_entries(), actual.num_entries());
  for (TermId t = 0; t < expected.num_terms; ++t) {
    EXPECT_NEAR(expected.term_total[t], actual.term_total[t], 1e-12) << "term " << t;
    ASSERT_EQ(expected.row(t).size(), actual.row(t).size()) << "term " << t;
    for (uint32_t c = 0; c < expected.num_categories; ++c) {
      EXPECT_NEAR(expected.at(t, c), actual.at(t, c), 1e-12) << "term " << t << ", category " << c;
    }
  }
}

// The packed sums a walk builds, then a document added to them (which
// moves them to a vector per term), equal the walk over every document.
TEST(CategorySumsTest, AddingADocumentToWalkedSumsEqualsWalkingItToo) {
  std::vector<LabelledTerms> all = kFirst;
  all.push_back(kFourth);
  const TrainingCorpus first = make_training_corpus(kFirst);
  const TrainingCorpus whole = make_training_corpus(all);
  ASSERT_EQ(first.terms, whole.terms);  // the fourth brings no new term
  ASSERT_EQ(first.categories, whole.categories);
  // One idf for both, as live learning keeps the trained idf.
  const std::vector<float> idf = compute_idf(first.df, first.num_docs(), {});
  const DocumentTerms fourth = make_document_terms(Vocabulary(first.terms), kFourth.terms);
  const std::vector<uint32_t> japan = {1};
  ASSERT_EQ(whole.categories[1], "japan");
  for (TermAmount amount : {TermAmount::kCount, TermAmount::kPresence, TermAmount::kTfidf}) {
    SCOPED_TRACE(static_cast<int>(amount));
    CategorySums sums = sum_categories(first, amount, {}, idf);
    EXPECT_TRUE(sums.rows.empty());  // packed as walked
    add_document(fourth, japan, +1.0, {}, idf, &sums);
    EXPECT_FALSE(sums.rows.empty());
    EXPECT_TRUE(sums.entries.empty());
    expect_same_sums(sum_categories(whole, amount, {}, idf), sums);
    // Taken away again: the first three's amounts (the new entry stays, at 0).
    add_document(fourth, japan, -1.0, {}, idf, &sums);
    const CategorySums walked = sum_categories(first, amount, {}, idf);
    for (TermId t = 0; t < walked.num_terms; ++t) {
      for (uint32_t c = 0; c < walked.num_categories; ++c) {
        EXPECT_NEAR(walked.at(t, c), sums.at(t, c), 1e-12) << "term " << t << ", category " << c;
      }
    }
  }
}

// A walk allocates the entries once: no spare capacity, one entry per
// (term, category) pair of the documents.
TEST(CategorySumsTest, WalkedEntriesAreOnePerTermAndCategory) {
  const TrainingCorpus corpus = make_training_corpus(kFirst);
  const CategorySums sums = sum_categories(corpus, TermAmount::kCount, {}, {});
  // chinese: china and japan; beijing, shanghai: china; tokyo, japan: japan.
  EXPECT_EQ(sums.num_entries(), 6u);
  EXPECT_EQ(sums.entries.capacity(), sums.entries.size());
  ASSERT_EQ(sums.row_start.size(), corpus.num_terms() + size_t{1});
  EXPECT_EQ(sums.row_start.back(), 6u);
}

}  // namespace
}  // namespace autocat::internal
