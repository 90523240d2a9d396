#include "classify/corpus/training_collection.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <tuple>

#include "autocat/error.h"
#include "classify/train/cross_validation.h"
#include "test_util.h"

namespace autocat::internal {
namespace {

std::vector<Token> tokens_of(const std::vector<std::string>& terms) {
  std::vector<Token> tokens;
  for (size_t i = 0; i < terms.size(); ++i) tokens.push_back(Token{terms[i], uint32_t(i + 1)});
  return tokens;
}

void expect_same_corpus(const TrainingCorpus& a, const TrainingCorpus& b) {
  EXPECT_EQ(a.terms, b.terms);
  EXPECT_EQ(a.df, b.df);
  EXPECT_EQ(a.postings_start, b.postings_start);
  EXPECT_EQ(a.posting_doc, b.posting_doc);
  EXPECT_EQ(a.posting_wdf, b.posting_wdf);
  EXPECT_EQ(a.categories, b.categories);
  EXPECT_EQ(a.doc_categories, b.doc_categories);
  EXPECT_EQ(a.doc_length, b.doc_length);
}

class TrainingCollectionTest : public testing::Test {
 protected:
  void SetUp() override {
    TrainingCollectionWriter writer(dir_.file("training"));
    writer.add("d1", tokens_of({"chinese", "beijing", "chinese"}), {"china"});
    writer.add("d2", tokens_of({"chinese", "chinese", "shanghai"}), {"china"});
    writer.add("d3", tokens_of({"chinese", "macao"}), {"china", "asia"});
    writer.add("d4", tokens_of({"tokyo", "japan", "chinese"}), {"japan"});
    writer.commit();
  }
  testing_util::TempDir dir_;
};

TEST_F(TrainingCollectionTest, DatabaseHoldsTermsLabelsAndIds) {
  Xapian::Database db(dir_.file("training"));
  EXPECT_EQ(db.get_doccount(), 4u);
  EXPECT_EQ(db.get_termfreq("chinese"), 4u);
  EXPECT_EQ(db.get_collection_freq("chinese"), 6u);
  EXPECT_EQ(db.get_termfreq("XCchina"), 3u);
  EXPECT_EQ(db.get_termfreq("Qd3"), 1u);
  // Label and id terms add nothing to document length.
  auto doc = db.postlist_begin("Qd1");
  EXPECT_EQ(doc.get_doclength(), 3u);
}

TEST_F(TrainingCollectionTest, CorpusReadThroughPostingLists) {
  const TrainingCorpus corpus = load_training_corpus(Xapian::Database(dir_.file("training")));
  EXPECT_EQ(corpus.num_docs(), 4u);
  EXPECT_EQ(corpus.categories, (std::vector<std::string>{"asia", "china", "japan"}));
  EXPECT_EQ(corpus.terms, (std::vector<std::string>{"beijing", "chinese", "japan", "macao",
                                                    "shanghai", "tokyo"}));
  EXPECT_EQ(corpus.df, (std::vector<uint32_t>{1, 4, 1, 1, 1, 1}));
  EXPECT_EQ(corpus.doc_length, (std::vector<uint32_t>{3, 3, 2, 3}));
  EXPECT_EQ(corpus.category_doc_counts(), (std::vector<uint32_t>{1, 3, 1}));
  EXPECT_EQ(corpus.doc_categories[2], (std::vector<uint32_t>{0, 1}));
  // "chinese" postings: wdf 2, 2, 1, 1 in docs 0..3.
  const uint64_t begin = corpus.postings_start[1], end = corpus.postings_start[2];
  ASSERT_EQ(end - begin, 4u);
  const std::vector<uint32_t> wdf = corpus.posting_wdf.to_vector();
  EXPECT_EQ(std::vector<uint32_t>(wdf.begin() + begin, wdf.begin() + end),
            (std::vector<uint32_t>{2, 2, 1, 1}));
}

// Postings moved to disk come back the same, are visited in term order
// (in pieces where a term crosses a read block: blocks of 3 postings split
// "chinese"'s 4), and leave no file behind.
TEST_F(TrainingCollectionTest, SpilledPostingsComeBackTheSame) {
  TrainingCorpus corpus = load_training_corpus(Xapian::Database(dir_.file("training")));
  const TrainingCorpus original = corpus;
  const std::string spill_dir = dir_.file("spill");
  std::filesystem::create_directory(spill_dir);
  {
    SpilledPostings spilled(&corpus, spill_dir, /*block_postings=*/3);
    EXPECT_TRUE(corpus.posting_doc.empty());
    EXPECT_TRUE(corpus.posting_wdf.empty());
    EXPECT_TRUE(std::filesystem::is_empty(spill_dir));  // unlinked at once
    std::vector<uint32_t> terms_seen, docs, wdfs;
    size_t pieces = 0;
    spilled.for_each_term_postings(
        [&](TermId term, const uint32_t* doc, const uint32_t* wdf, size_t count) {
          ++pieces;
          EXPECT_GT(count, 0u);
          for (size_t i = 0; i < count; ++i) {
            terms_seen.push_back(term);
            docs.push_back(doc[i]);
            wdfs.push_back(wdf[i]);
          }
        });
    EXPECT_EQ(docs, original.posting_doc);
    EXPECT_EQ(wdfs, original.posting_wdf.to_vector());
    std::vector<uint32_t> expected_terms;
    for (TermId t = 0; t < original.num_terms(); ++t) {
      expected_terms.insert(expected_terms.end(),
                            original.postings_start[t + 1] - original.postings_start[t], t);
    }
    EXPECT_EQ(terms_seen, expected_terms);
    // 6 terms, 9 postings in blocks [0,3) [3,6) [6,9): "chinese" (postings
    // 1-4) is cut at 3, nothing else is.
    EXPECT_EQ(pieces, 7u);
    spilled.restore();
  }
  EXPECT_EQ(corpus.posting_doc, original.posting_doc);
  EXPECT_EQ(corpus.posting_wdf, original.posting_wdf);
  EXPECT_THROW(SpilledPostings(&corpus, dir_.file("no-such-dir")), IOError);
  EXPECT_EQ(corpus.posting_doc, original.posting_doc);  // kept on failure
}

// Within-document frequencies are held in a byte where they fit; larger
// ones (a term repeated 255 times or more) come back whole, from memory
// and from the spill file.
TEST_F(TrainingCollectionTest, LargeWdfValuesKeepTheirValue) {
  std::vector<LabelledTerms> documents(3);
  for (uint32_t d = 0; d < 3; ++d) {
    const uint32_t repeat[] = {254, 255, 70000};
    documents[d].terms.assign(repeat[d], "word");
    documents[d].terms.push_back("other");
    documents[d].labels = {"label"};
  }
  TrainingCorpus corpus = make_training_corpus(documents);
  ASSERT_EQ(corpus.terms, (std::vector<std::string>{"other", "word"}));
  EXPECT_EQ(corpus.posting_wdf.to_vector(), (std::vector<uint32_t>{1, 1, 1, 254, 255, 70000}));
  const TrainingCorpus original = corpus;
  const std::string spill_dir = dir_.file("spill-large");
  std::filesystem::create_directory(spill_dir);
  {
    SpilledPostings spilled(&corpus, spill_dir, /*block_postings=*/4);
    std::vector<uint32_t> wdfs;
    spilled.for_each_term_postings([&](TermId, const uint32_t*, const uint32_t* wdf, size_t count) {
      wdfs.insert(wdfs.end(), wdf, wdf + count);
    });
    EXPECT_EQ(wdfs, original.posting_wdf.to_vector());
    spilled.restore();
  }
  EXPECT_EQ(corpus.posting_wdf, original.posting_wdf);
  // Overwritten and cut: the table follows.
  corpus.posting_wdf.set(5, 3);
  corpus.posting_wdf.set(3, 1000);
  EXPECT_EQ(corpus.posting_wdf[5], 3u);
  EXPECT_EQ(corpus.posting_wdf[3], 1000u);
  corpus.posting_wdf.resize(4);
  corpus.posting_wdf.resize(6);
  EXPECT_EQ(corpus.posting_wdf.to_vector(), (std::vector<uint32_t>{1, 1, 1, 1000, 0, 0}));
}

// A sample read from the database is the corpus of those documents alone,
// as fold_corpus() makes it from the whole corpus, with every category.
TEST_F(TrainingCollectionTest, SampleReadFromTheDatabaseIsTheFoldCorpus) {
  const Xapian::Database db(dir_.file("training"));
  const TrainingCorpus whole = load_training_corpus(db);
  const std::vector<uint8_t> keep = {0, 1, 0, 1};  // d2 ("china"), d4 ("japan")
  const TrainingCorpus sample = load_training_corpus(db, keep);
  const TrainingCorpus expected = fold_corpus(whole, keep).corpus;
  EXPECT_EQ(sample.terms, expected.terms);
  EXPECT_EQ(sample.terms, (std::vector<std::string>{"chinese", "japan", "shanghai", "tokyo"}));
  EXPECT_EQ(sample.df, expected.df);
  EXPECT_EQ(sample.postings_start, expected.postings_start);
  EXPECT_EQ(sample.posting_doc, expected.posting_doc);
  EXPECT_EQ(sample.posting_wdf, expected.posting_wdf);
  EXPECT_EQ(sample.categories, whole.categories);  // "asia" too, though no kept document has it
  EXPECT_EQ(sample.doc_categories, expected.doc_categories);
  EXPECT_EQ(sample.doc_length, expected.doc_length);

  const TrainingCorpus labels = load_training_labels(db);
  EXPECT_EQ(labels.categories, whole.categories);
  EXPECT_EQ(labels.doc_categories, whole.doc_categories);
  EXPECT_EQ(labels.doc_length, whole.doc_length);
  EXPECT_TRUE(labels.terms.empty());
  EXPECT_TRUE(labels.posting_doc.empty());
}

TEST_F(TrainingCollectionTest, SameAsInMemoryCorpus) {
  const TrainingCorpus from_db = load_training_corpus(Xapian::Database(dir_.file("training")));
  const TrainingCorpus direct = make_training_corpus({
      {{"chinese", "beijing", "chinese"}, {"china"}},
      {{"chinese", "chinese", "shanghai"}, {"china"}},
      {{"chinese", "macao"}, {"china", "asia"}},
      {{"tokyo", "japan", "chinese"}, {"japan"}},
  });
  expect_same_corpus(from_db, direct);
}

TEST_F(TrainingCollectionTest, SameIdReplaces) {
  {
    TrainingCollectionWriter writer(dir_.file("again"));
    writer.add("x", tokens_of({"one"}), {"a"});
    writer.add("x", tokens_of({"two"}), {"b"});
    writer.commit();
  }
  Xapian::Database db(dir_.file("again"));
  EXPECT_EQ(db.get_doccount(), 1u);
  EXPECT_EQ(db.get_termfreq("two"), 1u);
  EXPECT_EQ(db.get_termfreq("one"), 0u);
}

// The builder gives what a collection written with the same documents
// reads back as: replaced ids in their first place, their old terms and
// labels gone, labels given twice once, unlabelled documents kept.
TEST_F(TrainingCollectionTest, BuilderMatchesTheCollectionWrittenAndReadBack) {
  const std::vector<std::tuple<std::string, std::vector<std::string>, std::vector<std::string>>>
      documents = {
          {"a", {"zeta", "alpha", "zeta"}, {"z", "x"}},
          {"b", {"only", "in", "b"}, {"gone"}},
          {"c", {"alpha", "beta"}, {}},
          {"b", {"beta", "beta", "omega"}, {"x", "x"}},
          {"d", {"alpha"}, {"y"}},
      };
  TrainingCorpusBuilder builder;
  {
    TrainingCollectionWriter writer(dir_.file("replaced"));
    for (const auto& [id, terms, labels] : documents) {
      writer.add(id, tokens_of(terms), labels);
      builder.add(id, tokens_of(terms), labels);
    }
    writer.commit();
  }
  const TrainingCorpus from_db = load_training_corpus(Xapian::Database(dir_.file("replaced")));
  const TrainingCorpus built = builder.build();
  EXPECT_EQ(built.terms, (std::vector<std::string>{"alpha", "beta", "omega", "zeta"}));
  EXPECT_EQ(built.categories, (std::vector<std::string>{"x", "y", "z"}));
  expect_same_corpus(from_db, built);
}

TEST_F(TrainingCollectionTest, SecondWriterIsRefused) {
  TrainingCollectionWriter writer(dir_.file("locked"));
  EXPECT_THROW(TrainingCollectionWriter second(dir_.file("locked")), Xapian::DatabaseLockError);
}

TEST(VocabularyTest, DocumentTermsCountKnownTermsOnly) {
  const std::vector<std::string> terms = {"apple", "banana", "cherry"};
  const Vocabulary vocabulary(terms);
  const DocumentTerms doc = make_document_terms(
      vocabulary, std::vector<std::string>{"cherry", "kiwi", "apple", "cherry"});
  ASSERT_EQ(doc.terms.size(), 2u);
  EXPECT_EQ(doc.terms[0].term, 0u);
  EXPECT_EQ(doc.terms[0].count, 1u);
  EXPECT_EQ(doc.terms[1].term, 2u);
  EXPECT_EQ(doc.terms[1].count, 2u);
  EXPECT_EQ(doc.known_tokens, 3u);
  EXPECT_EQ(doc.total_tokens, 4u);
  EXPECT_EQ(vocabulary.find("kiwi"), -1);
}

// The open-addressing table: every term of a large vocabulary (many
// collisions) finds its id, a repeated term keeps its first id, and absent
// terms, including prefixes and extensions of present ones, find nothing.
TEST(VocabularyTest, LargeVocabularyFindsEveryTermAndOnlyThem) {
  std::vector<std::string> terms;
  for (int i = 0; i < 20000; ++i) terms.push_back("t" + std::to_string(i * 7919 % 100003));
  terms.push_back(terms[5]);  // a repeat, id 20000
  const Vocabulary vocabulary(terms);
  EXPECT_EQ(vocabulary.size(), 20000u);
  for (TermId t = 0; t < 20000; ++t) ASSERT_EQ(vocabulary.find(terms[t]), int64_t(t)) << terms[t];
  EXPECT_EQ(vocabulary.find(terms[20000]), 5);
  for (const std::string absent : {"", "t", "u1", "t1000030", "t7919x"}) {
    EXPECT_EQ(vocabulary.find(absent), -1) << absent;
  }
  EXPECT_EQ(Vocabulary().find("t0"), -1);
}

// A sorted, unique list (a model's terms) takes the build without string
// comparisons; a sorted list with a repeat does not.
TEST(VocabularyTest, SortedVocabularyFindsEveryTermAndOnlyThem) {
  std::vector<std::string> terms;
  for (int i = 0; i < 50000; ++i) terms.push_back("t" + std::to_string(i * 7919 % 100003));
  std::sort(terms.begin(), terms.end());
  const Vocabulary vocabulary(terms);
  EXPECT_EQ(vocabulary.size(), terms.size());
  for (TermId t = 0; t < terms.size(); ++t) {
    ASSERT_EQ(vocabulary.find(terms[t]), int64_t(t)) << terms[t];
  }
  for (const std::string absent : {"", "t", "u1", "t1000030", "t7919x"}) {
    EXPECT_EQ(vocabulary.find(absent), -1) << absent;
  }
  std::vector<std::string> repeated = {"a", "b", "b", "c"};
  const Vocabulary with_repeat(repeated);
  EXPECT_EQ(with_repeat.size(), 3u);
  EXPECT_EQ(with_repeat.find("b"), 1);
  EXPECT_EQ(with_repeat.find("c"), 3);
  std::vector<std::string> few = {"x"};
  EXPECT_EQ(Vocabulary(few).find("x"), 0);
}

}  // namespace
}  // namespace autocat::internal
