// Tests of the indexing hook: CategoryIndexer over a model trained from
// tests/data/fixture_train.jsonl (categories food, science, sports).
#include "autocat/category_indexer.h"

#include <gtest/gtest.h>
#include <xapian.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "autocat/error.h"
#include "autocat/facets.h"
#include "classify/io/model_dir.h"
#include "classify/model/model_io.h"
#include "classify/train/trainer.h"
#include "tests/test_util.h"

namespace autocat {
namespace {

namespace fs = std::filesystem;

const char kSportsText[] = "The striker scored in the match and the team won the final.";
const char kScienceText[] = "Physicists tested the theory with a new detector in the lab.";
const char kFoodText[] = "Fry the garlic in butter, then simmer the tomato sauce.";

std::vector<std::string> names(const std::vector<Category>& categories) {
  std::vector<std::string> out;
  for (const Category& category : categories) out.push_back(category.name);
  return out;
}

// Every term of `doc` starting with `prefix`, in term order.
std::vector<std::string> terms_with_prefix(const Xapian::Document& doc, const std::string& prefix) {
  std::vector<std::string> out;
  for (auto it = doc.termlist_begin(); it != doc.termlist_end(); ++it) {
    if ((*it).compare(0, prefix.size(), prefix) == 0) out.push_back(*it);
  }
  return out;
}

std::vector<Xapian::termpos> positions(const Xapian::Document& doc, const std::string& term) {
  auto it = doc.termlist_begin();
  it.skip_to(term);
  if (it == doc.termlist_end() || *it != term) return {};
  return std::vector<Xapian::termpos>(it.positionlist_begin(), it.positionlist_end());
}

class CategoryIndexerTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    temp_dir_ = new testing_util::TempDir();
    model_dir_ = new std::string(temp_dir_->file("model"));
    internal::ReadOptions read_options;
    read_options.split = "train";
    internal::train_model({testing_util::test_data("fixture_train.jsonl")}, *model_dir_,
                          TrainOptions(), read_options, [](const std::string&) {});
    indexer_ = new CategoryIndexer(*model_dir_);
  }

  static void TearDownTestSuite() {
    delete indexer_;
    delete model_dir_;
    delete temp_dir_;  // removes the model
  }

  static testing_util::TempDir* temp_dir_;
  static std::string* model_dir_;
  static CategoryIndexer* indexer_;

  Xapian::WritableDatabase db_{std::string(), Xapian::DB_BACKEND_INMEMORY};
};

testing_util::TempDir* CategoryIndexerTest::temp_dir_ = nullptr;
std::string* CategoryIndexerTest::model_dir_ = nullptr;
CategoryIndexer* CategoryIndexerTest::indexer_ = nullptr;

TEST_F(CategoryIndexerTest, ModelCategoriesAndDefaults) {
  EXPECT_EQ(indexer_->categories(), (std::vector<std::string>{"food", "science", "sports"}));
  EXPECT_EQ(indexer_->default_method(), Method::kKnn);
  EXPECT_EQ(indexer_->options().category_prefix, "XC");
  EXPECT_EQ(indexer_->options().category_slot, kDefaultCategorySlot);
}

// Every term of `doc` with its wdf and positions, one line each.
std::vector<std::string> term_dump(const Xapian::Document& doc) {
  std::vector<std::string> out;
  for (Xapian::TermIterator it = doc.termlist_begin(); it != doc.termlist_end(); ++it) {
    std::string line = *it + " wdf=" + std::to_string(it.get_wdf());
    for (Xapian::PositionIterator p = it.positionlist_begin(); p != it.positionlist_end(); ++p) {
      line += " " + std::to_string(*p);
    }
    out.push_back(line);
  }
  return out;
}

TEST_F(CategoryIndexerTest, TextIsIndexedAsXapiansTermGeneratorDoes) {
  const std::string text = "The Doctors said: the flu season peaks. 我们今天去北京大学看比赛 Été";
  IndexOptions options;
  options.categorize = false;
  for (const std::string stemmer : {"english", "none", "french"}) {
    options.stemmer = stemmer;
    CategoryIndexer indexer(*model_dir_, options);
    Xapian::Document before;  // a previous document must not shift positions
    indexer.index("one two three", before);
    Xapian::Document ours;
    indexer.index(text, ours);

    Xapian::Document stock;
    Xapian::TermGenerator generator;
    generator.set_stemmer(Xapian::Stem(stemmer));
    generator.set_flags(Xapian::TermGenerator::FLAG_CJK_NGRAM);
    generator.set_document(stock);
    generator.index_text(text);
    EXPECT_EQ(term_dump(ours), term_dump(stock)) << stemmer;
  }
}

TEST_F(CategoryIndexerTest, QueryParserConfiguredLikeTheIndexFindsTheText) {
  Xapian::WritableDatabase db(std::string(), Xapian::DB_BACKEND_INMEMORY);
  indexer_->index_document(db, "cjk", "我们今天去北京大学看比赛");
  indexer_->index_document(db, "en", "The doctors said the flu season peaks in winter.");
  Xapian::QueryParser parser;
  parser.set_database(db);
  indexer_->configure_query_parser(parser);
  auto count = [&](const std::string& query) {
    Xapian::Enquire enquire(db);
    enquire.set_query(parser.parse_query(query, kQueryParserFlags));
    return enquire.get_mset(0, 10).size();
  };
  EXPECT_EQ(count("北京大学"), 1u);
  EXPECT_EQ(count("北京"), 1u);
  EXPECT_EQ(count("doctor"), 1u);                   // stemmed query, Z terms
  EXPECT_EQ(count("the AND doctor AND peak"), 1u);  // stopword dropped outside phrases
  EXPECT_EQ(count("\"the flu season\""), 1u);       // kept inside
  EXPECT_EQ(count("doctor category:sports"), 0u);
}

TEST_F(CategoryIndexerTest, RefusesReservedPrefixesAndUnknownStemmers) {
  for (const std::string prefix : {"", "Q", "QC", "Z", "ZC", "X", "xc", "X1", "XC:"}) {
    IndexOptions options;
    options.category_prefix = prefix;
    EXPECT_THROW(CategoryIndexer(*model_dir_, options), InvalidArgumentError) << prefix;
  }
  IndexOptions options;
  options.stemmer = "klingon";
  EXPECT_THROW(CategoryIndexer(*model_dir_, options), InvalidArgumentError);
}

TEST_F(CategoryIndexerTest, CategorizeOnTopicText) {
  EXPECT_EQ(names(indexer_->categorize(kSportsText)), std::vector<std::string>{"sports"});
  EXPECT_EQ(names(indexer_->categorize(kScienceText)), std::vector<std::string>{"science"});
  EXPECT_EQ(names(indexer_->categorize(kFoodText)), std::vector<std::string>{"food"});
  // Non-English training text is found through ICU segmentation.
  EXPECT_EQ(names(indexer_->categorize("科学家发现了新的材料。")),
            std::vector<std::string>{"science"});
}

TEST_F(CategoryIndexerTest, ScoreRanksEveryCategory) {
  std::vector<Category> scores = indexer_->score(kSportsText);
  ASSERT_EQ(scores.size(), 3u);
  EXPECT_EQ(scores[0].name, "sports");
  EXPECT_GT(scores[0].score, 0.5);
  for (size_t i = 1; i < scores.size(); ++i) EXPECT_GE(scores[i - 1].score, scores[i].score);
  // The categorize() answer is the best of score().
  std::vector<Category> assigned = indexer_->categorize(kSportsText);
  ASSERT_EQ(assigned.size(), 1u);
  EXPECT_DOUBLE_EQ(assigned[0].score, scores[0].score);
}

TEST_F(CategoryIndexerTest, PerCallOptions) {
  ClassifyOptions options;
  options.method = Method::kNaiveBayes;
  EXPECT_EQ(names(indexer_->categorize(kFoodText, options)), std::vector<std::string>{"food"});
  options.min_score = 1.1;  // nothing can reach it
  EXPECT_TRUE(indexer_->categorize(kFoodText, options).empty());
}

TEST_F(CategoryIndexerTest, IndexAddsTermsWithPositionsCategoryTermAndValue) {
  Xapian::Document doc;
  std::vector<Category> assigned = indexer_->index(kSportsText, doc);
  ASSERT_EQ(names(assigned), std::vector<std::string>{"sports"});

  // Every word has a position, stopwords too: "The(1) striker(2) scored(3) in(4) the(5)
  // match(6) and(7) the(8) ..."; stems have none.
  EXPECT_EQ(positions(doc, "striker"), std::vector<Xapian::termpos>{2});
  EXPECT_EQ(positions(doc, "match"), std::vector<Xapian::termpos>{6});
  EXPECT_EQ(positions(doc, "the"), (std::vector<Xapian::termpos>{1, 5, 8, 11}));
  EXPECT_EQ(terms_with_prefix(doc, "Zscore"), std::vector<std::string>{"Zscore"});
  EXPECT_TRUE(positions(doc, "Zscore").empty());
  EXPECT_EQ(terms_with_prefix(doc, "XC"), std::vector<std::string>{"XCsports"});
  EXPECT_EQ(doc.get_value(kDefaultCategorySlot), encode_categories(assigned));
  std::vector<Category> stored = decode_categories(doc.get_value(kDefaultCategorySlot));
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].name, "sports");
  EXPECT_NEAR(stored[0].score, assigned[0].score, 1e-5);

  // The document searches like any other.
  db_.add_document(doc);
  Xapian::Enquire enquire(db_);
  const std::vector<std::string> phrase = {"striker", "scored"};
  enquire.set_query(Xapian::Query(Xapian::Query::OP_PHRASE, phrase.begin(), phrase.end()));
  EXPECT_EQ(enquire.get_mset(0, 10).size(), 1u);
}

TEST_F(CategoryIndexerTest, ApplicationTermsValuesAndDataUntouched) {
  Xapian::Document doc;
  doc.set_data("app data");
  doc.add_boolean_term("Hexample.com");
  doc.add_term("XCOLORred");  // starts with "XC" but is not a category term
  doc.add_posting("headline", 1);
  doc.add_value(0, "app value");
  doc.add_value(kDefaultCategorySlot + 1, "neighbour slot");

  indexer_->index(kFoodText, doc);
  indexer_->index(kScienceText, doc);  // the re-index removes only category terms

  EXPECT_EQ(doc.get_data(), "app data");
  EXPECT_EQ(doc.get_value(0), "app value");
  EXPECT_EQ(doc.get_value(kDefaultCategorySlot + 1), "neighbour slot");
  EXPECT_EQ(positions(doc, "headline"), std::vector<Xapian::termpos>{1});
  EXPECT_EQ(terms_with_prefix(doc, "H"), std::vector<std::string>{"Hexample.com"});
  EXPECT_EQ(terms_with_prefix(doc, "XC"), (std::vector<std::string>{"XCOLORred", "XCscience"}));
}

TEST_F(CategoryIndexerTest, ReindexReplacesCategoryTermsAndValue) {
  Xapian::Document doc;
  ASSERT_EQ(names(indexer_->index(kSportsText, doc)), std::vector<std::string>{"sports"});
  ASSERT_EQ(names(indexer_->index(kFoodText, doc)), std::vector<std::string>{"food"});
  EXPECT_EQ(terms_with_prefix(doc, "XC"), std::vector<std::string>{"XCfood"});
  EXPECT_EQ(names(decode_categories(doc.get_value(kDefaultCategorySlot))),
            std::vector<std::string>{"food"});

  // Text with no known term: the old category goes; one-of assigns the most
  // frequent training category instead.
  const std::vector<Category> fallback = indexer_->index("zzyzx qwertyuiop", doc);
  ASSERT_EQ(fallback.size(), 1u);
  EXPECT_EQ(terms_with_prefix(doc, "XC"), std::vector<std::string>{"XC" + fallback[0].name});
  EXPECT_EQ(names(decode_categories(doc.get_value(kDefaultCategorySlot))),
            std::vector<std::string>{fallback[0].name});
}

TEST_F(CategoryIndexerTest, ReindexRemovesCategoriesListedInTheOldSlot) {
  // A category of another model, recorded in the slot, is removed too.
  Xapian::Document doc;
  doc.add_boolean_term("XCretired");
  doc.add_value(kDefaultCategorySlot, encode_categories({{"retired", 0.9}}));
  indexer_->index(kSportsText, doc);
  EXPECT_EQ(terms_with_prefix(doc, "XC"), std::vector<std::string>{"XCsports"});
}

TEST_F(CategoryIndexerTest, IndexWithoutText) {
  IndexOptions options;
  options.index_text = false;
  CategoryIndexer indexer(*model_dir_, options);
  Xapian::Document doc;
  EXPECT_EQ(names(indexer.index(kSportsText, doc)), std::vector<std::string>{"sports"});
  EXPECT_EQ(doc.termlist_count(), 2u);  // only XCsports and the model term
  EXPECT_EQ(terms_with_prefix(doc, "XC"), std::vector<std::string>{"XCsports"});
  EXPECT_EQ(terms_with_prefix(doc, kModelTermPrefix),
            std::vector<std::string>{indexer.model_term()});
}

TEST_F(CategoryIndexerTest, EachCategorizedDocumentRecordsTheModel) {
  // The term names the model file: its CRC-32 and size, as the whole file
  // gives them (computed from the header alone).
  const std::string model_file = internal::resolve_model_dir(*model_dir_).model_file;
  const std::string bytes = testing_util::read_file(model_file);
  char expected[64];
  std::snprintf(expected, sizeof expected, "%08x-%zu",
                static_cast<unsigned>(crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()),
                                            static_cast<uInt>(bytes.size()))),
                bytes.size());
  EXPECT_EQ(indexer_->model_term(), kModelTermPrefix + expected);

  indexer_->index_document(db_, "doc-1", kSportsText);
  db_.commit();
  EXPECT_EQ(db_.get_termfreq(indexer_->model_term()), 1u);

  // Another model re-indexing the document replaces the term.
  const std::string other_dir = temp_dir_->file("other-model");
  TrainOptions options;
  options.knn_k = 3;
  internal::train_model({testing_util::test_data("fixture_train.jsonl")}, other_dir, options,
                        internal::ReadOptions(), [](const std::string&) {});
  const CategoryIndexer other(other_dir);
  ASSERT_NE(other.model_term(), indexer_->model_term());
  other.index_document(db_, "doc-1", kSportsText);
  db_.commit();
  EXPECT_EQ(db_.get_termfreq(indexer_->model_term()), 0u);
  const Xapian::Document doc = db_.get_document(*db_.postlist_begin("Qdoc-1"));
  EXPECT_EQ(terms_with_prefix(doc, kModelTermPrefix), std::vector<std::string>{other.model_term()});

  // Indexing without categorizing records no model.
  IndexOptions plain;
  plain.categorize = false;
  const CategoryIndexer text_only(*model_dir_, plain);
  EXPECT_EQ(text_only.model_term(), "");
  Xapian::Document bare;
  text_only.index(kSportsText, bare);
  EXPECT_TRUE(terms_with_prefix(bare, kModelTermPrefix).empty());
}

// Learning changes what the model decides, so an indexer opened after it
// names another model: documents categorized before carry the older term.
TEST_F(CategoryIndexerTest, LearningChangesTheModelTermOfIndexersOpenedAfter) {
  const std::string dir = temp_dir_->file("learning-model");
  internal::train_model({testing_util::test_data("fixture_train.jsonl")}, dir, TrainOptions(),
                        internal::ReadOptions(), [](const std::string&) {});
  CategoryIndexer before(dir);
  const std::string term = before.model_term();
  EXPECT_EQ(before.model_fingerprint(),
            internal::model_file_fingerprint(internal::resolve_model_dir(dir).model_file));
  EXPECT_EQ(model_version_term(before.model_fingerprint()), term);

  before.learn("learned-1", kSportsText, {"food"});
  EXPECT_EQ(before.model_term(), term);  // this object's term names the model as opened
  const CategoryIndexer after(dir);
  EXPECT_NE(after.model_term(), term);
  EXPECT_EQ(model_version_term(after.model_fingerprint()), after.model_term());
  EXPECT_EQ(after.model_fingerprint().rfind(before.model_fingerprint() + " journal:", 0), 0U)
      << after.model_fingerprint();
  EXPECT_EQ(CategoryIndexer(dir).model_term(), after.model_term());  // nothing learned since
}

TEST_F(CategoryIndexerTest, IndexDocumentReplacesById) {
  indexer_->index_document(db_, "doc-1", kSportsText, "First title");
  indexer_->index_document(db_, "doc-2", kScienceText);
  std::vector<Category> assigned = indexer_->index_document(db_, "doc-1", kFoodText);
  db_.commit();
  EXPECT_EQ(names(assigned), std::vector<std::string>{"food"});
  EXPECT_EQ(db_.get_doccount(), 2u);
  EXPECT_EQ(db_.get_termfreq("Qdoc-1"), 1u);
  EXPECT_EQ(db_.get_termfreq("XCsports"), 0u);
  EXPECT_EQ(db_.get_termfreq("XCfood"), 1u);
  EXPECT_EQ(db_.get_termfreq("XCscience"), 1u);
  EXPECT_EQ(db_.get_termfreq("striker"), 0u);  // the old text is gone with the old document

  Xapian::PostingIterator it = db_.postlist_begin("Qdoc-1");
  ASSERT_NE(it, db_.postlist_end("Qdoc-1"));
  Xapian::Document doc = db_.get_document(*it);
  EXPECT_EQ(doc.get_data(), kFoodText);  // no title: the text itself (short enough)
  EXPECT_EQ(terms_with_prefix(doc, "Q"), std::vector<std::string>{"Qdoc-1"});
}

TEST_F(CategoryIndexerTest, IndexDocumentsOnThreadsMatchesOneByOne) {
  std::vector<DocumentToIndex> docs;
  const char* const texts[] = {kSportsText, kScienceText, kFoodText};
  for (int i = 0; i < 30; ++i) {
    docs.push_back({"doc-" + std::to_string(i % 25), texts[i % 3], i % 4 == 0 ? "title" : ""});
  }
  Xapian::WritableDatabase serial(std::string(), Xapian::DB_BACKEND_INMEMORY);
  std::vector<std::vector<std::string>> serial_categories;
  for (const DocumentToIndex& doc : docs) {
    serial_categories.push_back(
        names(indexer_->index_document(serial, doc.id, doc.text, doc.title)));
  }
  const std::vector<std::vector<Category>> assigned = indexer_->index_documents(db_, docs, 4);
  ASSERT_EQ(assigned.size(), docs.size());
  for (size_t i = 0; i < docs.size(); ++i) EXPECT_EQ(names(assigned[i]), serial_categories[i]);
  ASSERT_EQ(db_.get_doccount(), 25u);  // 5 ids given twice: the later replaced the earlier
  ASSERT_EQ(db_.get_lastdocid(), serial.get_lastdocid());
  for (auto it = serial.postlist_begin(""); it != serial.postlist_end(""); ++it) {
    const Xapian::Document expected = serial.get_document(*it);
    const Xapian::Document got = db_.get_document(*it);
    EXPECT_EQ(got.get_data(), expected.get_data());
    EXPECT_EQ(got.serialise(), expected.serialise()) << "docid " << *it;
  }
  // categorize_batch agrees with categorize.
  std::vector<std::string> batch_texts;
  for (const DocumentToIndex& doc : docs) batch_texts.push_back(doc.text);
  const std::vector<std::vector<Category>> batch = indexer_->categorize_batch(batch_texts, 3);
  for (size_t i = 0; i < docs.size(); ++i) {
    EXPECT_EQ(names(batch[i]), names(indexer_->categorize(docs[i].text)));
  }
  // A bad document: the error of the first one in input order.
  docs[7].id.clear();
  docs[20].id = std::string(300, 'x');
  try {
    indexer_->prepare_documents(docs, 4);
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("must not be empty"), std::string::npos) << e.what();
  }
}

TEST_F(CategoryIndexerTest, DocumentDataIsTitleOrOneLineSnippet) {
  indexer_->index_document(db_, "titled", "Some text\nabout a match.", "The Title");
  std::string long_text = "Line one of the recipe.\n\n\tLine two:";
  for (int i = 0; i < 40; ++i) long_text += " garlic é";
  indexer_->index_document(db_, "untitled", long_text);

  auto data_of = [this](const std::string& id) {
    return db_.get_document(*db_.postlist_begin("Q" + id)).get_data();
  };
  EXPECT_EQ(data_of("titled"), "The Title");
  std::string snippet = data_of("untitled");
  EXPECT_LE(snippet.size(), 200u);
  EXPECT_GT(snippet.size(), 190u);
  EXPECT_EQ(snippet.rfind("Line one of the recipe. Line two: garlic é garlic", 0), 0u) << snippet;
  EXPECT_EQ(snippet.find('\n'), std::string::npos);
  // Cut on a character boundary: no partial "é" at the end.
  EXPECT_NE(static_cast<unsigned char>(snippet.back()), 0xC3);
}

TEST_F(CategoryIndexerTest, SnippetBytesOption) {
  IndexOptions options;
  options.snippet_bytes = 10;
  CategoryIndexer indexer(*model_dir_, options);
  indexer.index_document(db_, "a", "Chop  the\nonions and fry them");
  EXPECT_EQ(db_.get_document(*db_.postlist_begin("Qa")).get_data(), "Chop the");
}

TEST_F(CategoryIndexerTest, InvalidIds) {
  EXPECT_THROW(indexer_->index_document(db_, "", kFoodText), InvalidArgumentError);
  const std::string longest(244, 'x');
  indexer_->index_document(db_, longest, kFoodText);
  EXPECT_EQ(db_.get_termfreq("Q" + longest), 1u);
  try {
    indexer_->index_document(db_, longest + "x", kFoodText);
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("at most 244 bytes"), std::string::npos) << e.what();
  }
  EXPECT_EQ(db_.get_doccount(), 1u);
}

TEST_F(CategoryIndexerTest, ConfigurablePrefixAndSlot) {
  IndexOptions options;
  options.category_prefix = "XTOPIC";
  options.category_slot = 7;
  CategoryIndexer indexer(*model_dir_, options);
  Xapian::Document doc;
  indexer.index(kScienceText, doc);
  EXPECT_EQ(terms_with_prefix(doc, "XTOPIC"), std::vector<std::string>{"XTOPICscience"});
  EXPECT_TRUE(terms_with_prefix(doc, "XC").empty());
  EXPECT_EQ(names(decode_categories(doc.get_value(7))), std::vector<std::string>{"science"});
  EXPECT_EQ(doc.get_value(kDefaultCategorySlot), "");
}

TEST_F(CategoryIndexerTest, InvalidOptionsAreRefused) {
  IndexOptions options;
  options.category_prefix = "";
  EXPECT_THROW(CategoryIndexer(*model_dir_, options), InvalidArgumentError);
  options = IndexOptions();
  options.category_slot = Xapian::BAD_VALUENO;
  EXPECT_THROW(CategoryIndexer(*model_dir_, options), InvalidArgumentError);
  options = IndexOptions();
  options.snippet_bytes = -1;
  EXPECT_THROW(CategoryIndexer(*model_dir_, options), InvalidArgumentError);
  options = IndexOptions();
  options.category_prefix = std::string(241, 'X');  // + "science" > 245 bytes
  EXPECT_THROW(CategoryIndexer(*model_dir_, options), InvalidArgumentError);
}

TEST_F(CategoryIndexerTest, UnknownWordsGetTheMostFrequentCategory) {
  // One-of without "other": every document gets a category.
  const std::vector<Category> assigned = indexer_->categorize("zzyzx qwertyuiop");
  ASSERT_EQ(assigned.size(), 1u);
  EXPECT_EQ(assigned[0].score, 0.0);
  Xapian::Document doc;
  EXPECT_EQ(names(indexer_->index("zzyzx qwertyuiop", doc)), names(assigned));
  EXPECT_EQ(positions(doc, "zzyzx"), std::vector<Xapian::termpos>{1});
  EXPECT_EQ(terms_with_prefix(doc, "XC"), std::vector<std::string>{"XC" + assigned[0].name});
  for (const Category& category : indexer_->score("zzyzx")) EXPECT_EQ(category.score, 0.0);
}

TEST_F(CategoryIndexerTest, EmptyText) {
  EXPECT_EQ(indexer_->categorize("").size(), 1u);  // the most frequent category
  EXPECT_EQ(indexer_->score("").size(), 3u);
  Xapian::Document doc;
  EXPECT_EQ(indexer_->index("", doc).size(), 1u);
  EXPECT_EQ(doc.termlist_count(), 2u);  // its category term and the model term, no text term
  indexer_->index_document(db_, "empty", "");
  EXPECT_EQ(db_.get_doccount(), 1u);
  EXPECT_EQ(db_.get_document(*db_.postlist_begin("Qempty")).get_data(), "");
}

TEST_F(CategoryIndexerTest, InvalidUtf8Text) {
  const std::string text = "The striker \xff\xfe scored \xc3 in the match\xe2\x82";
  std::vector<Category> assigned = indexer_->index_document(db_, "bad-utf8", text);
  EXPECT_EQ(names(assigned), std::vector<std::string>{"sports"});
  Xapian::Document doc = db_.get_document(*db_.postlist_begin("Qbad-utf8"));
  // The snippet is valid UTF-8: each bad sequence became U+FFFD.
  EXPECT_EQ(doc.get_data(),
            "The striker \xEF\xBF\xBD\xEF\xBF\xBD scored \xEF\xBF\xBD in the match\xEF\xBF\xBD");
  EXPECT_EQ(positions(doc, "striker"), std::vector<Xapian::termpos>{2});
}

// Every answer of every round from every thread equals the serial one:
// the categories, in order, with their exact scores.
TEST_F(CategoryIndexerTest, ConcurrentCategorizeGivesSerialAnswers) {
  const std::vector<std::string> texts = {kSportsText, kScienceText,
                                          kFoodText,   "Bake a cake for the team after the match.",
                                          "zzyzx",     ""};
  const auto answer = [](const std::vector<Category>& assigned) {
    std::string out;
    for (const Category& category : assigned) {
      char score[32];
      std::snprintf(score, sizeof score, "%.17g", category.score);
      out += category.name + "=" + score + " ";
    }
    return out.empty() ? std::string("-") : out;
  };
  std::vector<std::string> serial;
  for (const std::string& text : texts) serial.push_back(answer(indexer_->categorize(text)));
  EXPECT_EQ(serial[0].substr(0, 7), "sports=");
  EXPECT_EQ(serial[1].substr(0, 8), "science=");
  EXPECT_EQ(serial[2].substr(0, 5), "food=");
  EXPECT_NE(serial[3], "-");
  EXPECT_NE(serial[4], "-");  // no known word: the most frequent category
  EXPECT_NE(serial[5], "-");

  // A fresh indexer, so that the threads race for the lazily built kNN index.
  CategoryIndexer indexer(*model_dir_);
  constexpr int kRounds = 20;
  std::vector<std::vector<std::string>> results(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < results.size(); ++t) {
    threads.emplace_back([&indexer, &texts, &results, &answer, t] {
      for (int round = 0; round < kRounds; ++round) {
        for (const std::string& text : texts) {
          const std::string categorized = answer(indexer.categorize(text));
          Xapian::Document doc;  // index() from many threads too, each with its own document
          const std::string indexed = answer(indexer.index(text, doc));
          results[t].push_back(categorized == indexed ? categorized
                                                      : "index() differs: " + indexed);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::vector<std::string> expected;
  for (int round = 0; round < kRounds; ++round) {
    expected.insert(expected.end(), serial.begin(), serial.end());
  }
  for (const auto& result : results) EXPECT_EQ(result, expected);
}

TEST(CategoryIndexerOpenTest, MissingModelDirectory) {
  const std::string missing = (fs::temp_directory_path() / "autocat_no_such_model_dir").string();
  try {
    CategoryIndexer indexer(missing);
    FAIL() << "expected NotFoundError";
  } catch (const NotFoundError& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace autocat
