// Tests of category filters, the `category:` QueryParser field and facet
// counts, over an index built with CategoryIndexer from a model trained on
// tests/data/fixture_train.jsonl.
#include "autocat/facets.h"

#include <gtest/gtest.h>
#include <xapian.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "autocat/category_indexer.h"
#include "autocat/error.h"
#include "classify/train/trainer.h"
#include "tests/test_util.h"

namespace autocat {
namespace {

// The app's corpus: fixture_test.jsonl plus two mixed-topic documents and
// one with no known word. Any-of with min_score 0.25 assigns:
//   sp-*  sports; sci-* science; fd-* food;
//   mix-team-chef  food 0.63 + sports 0.37; mix-lab-bread  science 0.60 + food 0.40;
//   unknown        nothing.
struct AppDocument {
  const char* id;
  const char* text;
};
const AppDocument kCorpus[] = {
    {"sp-1", "The football team scored a late goal to win the league match."},
    {"sp-2", "She trained every morning to run faster in the race."},
    {"sp-3", "The referee showed a red card and the team played with ten men."},
    {"sci-1", "The researchers used a microscope to observe bacteria in the experiment."},
    {"sci-2", "A new study measured the energy of particles in the detector."},
    {"sci-3", "Scientists tested the theory with data from the telescope."},
    {"fd-1", "Fry the garlic in olive oil and add the tomato sauce to the pasta."},
    {"fd-2", "The cake needs butter, sugar, eggs and flour before baking."},
    {"fd-3", "Season the soup with salt and pepper and serve it with bread."},
    {"mix-team-chef",
     "The team chef cooked pasta with tomato sauce for the players after the match."},
    {"mix-lab-bread", "A lab experiment measured how heat changes the taste of bread and butter."},
    {"unknown", "Zzyzx qwerty."},
};

struct Count {
  std::string category;
  Xapian::doccount count;
  bool operator==(const Count& other) const {
    return category == other.category && count == other.count;
  }
};

std::ostream& operator<<(std::ostream& out, const Count& count) {
  return out << count.category << "=" << count.count;
}

std::vector<Count> plain(const std::vector<FacetCount>& counts) {
  std::vector<Count> out;
  for (const FacetCount& count : counts) out.push_back({count.category, count.count});
  return out;
}

class FacetsTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    temp_dir_ = new testing_util::TempDir();
    const std::string model_dir = temp_dir_->file("model");
    internal::ReadOptions read_options;
    read_options.split = "train";
    // kNN settings fixed (not cross-validated) and one global threshold, so
    // the scores above follow from the 24 training documents alone.
    TrainOptions train_options;
    train_options.knn_k = 50;
    train_options.knn_similarity_power = 1;
    internal::train_model({testing_util::test_data("fixture_train.jsonl")}, model_dir,
                          train_options, read_options, [](const std::string&) {});
    IndexOptions options;
    options.classify.decision = Decision::kAnyOf;
    options.classify.min_score = 0.25;
    options.classify.tuned_thresholds = false;
    CategoryIndexer indexer(model_dir, options);
    db_ = new Xapian::WritableDatabase(std::string(), Xapian::DB_BACKEND_INMEMORY);
    for (const AppDocument& doc : kCorpus) indexer.index_document(*db_, doc.id, doc.text, doc.id);
    db_->commit();
  }

  static void TearDownTestSuite() {
    delete db_;
    delete temp_dir_;
  }

  // Ids (document data) of every match, sorted.
  static std::vector<std::string> ids(const Xapian::Query& query) {
    Xapian::Enquire enquire(*db_);
    enquire.set_query(query);
    std::vector<std::string> out;
    Xapian::MSet mset = enquire.get_mset(0, db_->get_doccount());
    for (auto it = mset.begin(); it != mset.end(); ++it)
      out.push_back(it.get_document().get_data());
    std::sort(out.begin(), out.end());
    return out;
  }

  // Runs `query` with a CategoryFacetSpy that sees every match.
  static void spy_on(const Xapian::Query& query, CategoryFacetSpy* spy) {
    Xapian::Enquire enquire(*db_);
    enquire.set_query(query);
    enquire.add_matchspy(spy);
    enquire.get_mset(0, 10, db_->get_doccount());
  }

  static testing_util::TempDir* temp_dir_;
  static Xapian::WritableDatabase* db_;
};

testing_util::TempDir* FacetsTest::temp_dir_ = nullptr;
Xapian::WritableDatabase* FacetsTest::db_ = nullptr;

TEST_F(FacetsTest, CorpusIsCategorizedAsExpected) {
  EXPECT_EQ(ids(Xapian::Query("XCfood")),
            (std::vector<std::string>{"fd-1", "fd-2", "fd-3", "mix-lab-bread", "mix-team-chef"}));
  EXPECT_EQ(ids(Xapian::Query("XCscience")),
            (std::vector<std::string>{"mix-lab-bread", "sci-1", "sci-2", "sci-3"}));
  EXPECT_EQ(ids(Xapian::Query("XCsports")),
            (std::vector<std::string>{"mix-team-chef", "sp-1", "sp-2", "sp-3"}));
}

TEST_F(FacetsTest, FilterRestrictsResults) {
  const Xapian::Query team("team");
  EXPECT_EQ(ids(team), (std::vector<std::string>{"mix-team-chef", "sp-1", "sp-3"}));
  EXPECT_EQ(ids(category_filter(team, {"food"})), std::vector<std::string>{"mix-team-chef"});
  EXPECT_EQ(ids(category_filter(team, {"sports"})),
            (std::vector<std::string>{"mix-team-chef", "sp-1", "sp-3"}));
  EXPECT_TRUE(ids(category_filter(team, {"science"})).empty());
  // Several categories: any of them.
  const Xapian::Query butter("butter");
  EXPECT_EQ(ids(category_filter(butter, {"science", "sports"})),
            std::vector<std::string>{"mix-lab-bread"});
  EXPECT_EQ(ids(category_filter(butter, {"food", "science"})),
            (std::vector<std::string>{"fd-2", "mix-lab-bread"}));
  EXPECT_TRUE(ids(category_filter(butter, {"no-such-category"})).empty());
}

TEST_F(FacetsTest, FilterKeepsWeights) {
  Xapian::Enquire enquire(*db_);
  enquire.set_query(Xapian::Query("team"));
  Xapian::MSet unfiltered = enquire.get_mset(0, 10);
  enquire.set_query(category_filter(Xapian::Query("team"), {"food"}));
  Xapian::MSet filtered = enquire.get_mset(0, 10);
  ASSERT_EQ(filtered.size(), 1u);
  for (auto it = unfiltered.begin(); it != unfiltered.end(); ++it) {
    if (*it == *filtered.begin()) {
      EXPECT_DOUBLE_EQ(it.get_weight(), filtered.begin().get_weight());
    }
  }
}

TEST_F(FacetsTest, EmptyQueryMeansEveryDocumentOfTheCategories) {
  const Xapian::Query query = category_filter(Xapian::Query(), {"science"});
  EXPECT_EQ(ids(query), (std::vector<std::string>{"mix-lab-bread", "sci-1", "sci-2", "sci-3"}));
  Xapian::Enquire enquire(*db_);
  enquire.set_query(query);
  Xapian::MSet mset = enquire.get_mset(0, 10);
  for (auto it = mset.begin(); it != mset.end(); ++it) EXPECT_EQ(it.get_weight(), 0.0);
}

TEST_F(FacetsTest, NoCategoriesReturnsTheQuery) {
  const Xapian::Query team("team");
  EXPECT_EQ(category_filter(team, {}).get_description(), team.get_description());
  EXPECT_TRUE(category_filter(Xapian::Query(), {}).empty());
}

TEST_F(FacetsTest, CustomPrefixFilter) {
  EXPECT_EQ(category_filter(Xapian::Query("a"), {"x", "y"}, "XTOPIC").get_description(),
            "Query((a FILTER (XTOPICx OR XTOPICy)))");
  EXPECT_THROW(category_filter(Xapian::Query("a"), {"x"}, ""), InvalidArgumentError);
}

TEST_F(FacetsTest, QueryParserCategoryField) {
  Xapian::QueryParser parser;
  parser.set_database(*db_);
  add_category_prefix(parser);
  auto parse = [&parser](const std::string& text) { return parser.parse_query(text); };

  EXPECT_EQ(parse("team category:food").get_description(), "Query((team@1 FILTER XCfood))");
  EXPECT_EQ(ids(parse("team category:food")), std::vector<std::string>{"mix-team-chef"});
  EXPECT_EQ(ids(parse("category:science")),
            (std::vector<std::string>{"mix-lab-bread", "sci-1", "sci-2", "sci-3"}));
  // Two categories in one query: any of them.
  EXPECT_EQ(ids(parse("pasta category:food category:sports")),
            (std::vector<std::string>{"fd-1", "mix-team-chef"}));
  EXPECT_EQ(ids(parse("team -category:sports")), std::vector<std::string>{});
  EXPECT_EQ(ids(parse("butter -category:science")), std::vector<std::string>{"fd-2"});
}

TEST_F(FacetsTest, CategoryTermsFollowXapiansPrefixConvention) {
  // Whatever the name, category_term() is what a stock QueryParser's
  // add_boolean_prefix("category", prefix) produces, and it decodes back.
  const std::vector<std::string> names = {"sci.med", "Sports", "New York", "new york", "Été",
                                          "体育",    "Наука",  ":colon",   "C++",      "9lives",
                                          "a:B",     "X",      "ÉCONOMIE"};
  for (const std::string prefix : {"XC", "XTOPIC", "K"}) {
    Xapian::QueryParser stock;
    stock.add_boolean_prefix("category", prefix);
    for (const std::string& name : names) {
      const std::string term = category_term(name, prefix);
      EXPECT_EQ(stock.parse_query("category:\"" + name + "\"").get_description(),
                "Query(0 * " + term + ")")
          << prefix << " " << name;
      EXPECT_EQ(category_from_term(term, prefix), name) << term;
    }
  }
  EXPECT_EQ(category_term("Sports"), "XC:Sports");
  EXPECT_EQ(category_term("sports"), "XCsports");
  EXPECT_EQ(category_term("Sports", "K"), "KSports");  // one-letter prefixes take no colon
  // Terms the convention cannot produce are not categories.
  EXPECT_EQ(category_from_term("XCOLORred"), "");
  EXPECT_EQ(category_from_term("XC:red"), "");
  EXPECT_EQ(category_from_term("XC"), "");
  EXPECT_EQ(category_from_term("Qdoc"), "");
}

TEST_F(FacetsTest, ReservedPrefixesAreRefused) {
  for (const std::string prefix : {"", "Q", "QX", "Z", "ZC", "X", "xc", "X-C", "XC:"}) {
    EXPECT_THROW(check_category_prefix(prefix), InvalidArgumentError) << prefix;
    EXPECT_THROW(category_filter(Xapian::Query("a"), {"x"}, prefix), InvalidArgumentError);
  }
  for (const std::string prefix : {"XC", "XTOPIC", "K", "B"}) {
    EXPECT_NO_THROW(check_category_prefix(prefix)) << prefix;
  }
}

TEST_F(FacetsTest, QuotedCategoryValuesPassThroughExactly) {
  // Issue 8.12: category:"New York" must keep both words and their case.
  Xapian::QueryParser parser;
  configure_query_parser(parser, "english");
  EXPECT_EQ(parser.parse_query("category:\"New York\"", kQueryParserFlags).get_description(),
            "Query(0 * XC:New York)");
  EXPECT_EQ(parser.parse_query("category:Été", kQueryParserFlags).get_description(),
            "Query(0 * XCÉté)");

  Xapian::QueryParser custom;
  add_category_prefix(custom, "XTOPIC");
  EXPECT_EQ(custom.parse_query("word category:a").get_description(),
            "Query((word@1 FILTER XTOPICa))");
}

TEST_F(FacetsTest, FilteredCountsMatchTheSpy) {
  for (const Xapian::Query& query :
       {Xapian::Query(Xapian::Query::MatchAll), Xapian::Query("team"), Xapian::Query("Zthe"),
        category_filter(Xapian::Query(), {"food"}), Xapian::Query("nosuchword")}) {
    CategoryFacetSpy spy;
    spy_on(query, &spy);
    Xapian::doccount matching = 0;
    EXPECT_EQ(plain(category_counts(*db_, query, &matching)), plain(spy.counts()))
        << query.get_description();
    EXPECT_EQ(matching, spy.documents_seen());
  }
  Xapian::doccount matching = 7;
  EXPECT_TRUE(category_counts(*db_, Xapian::Query(), &matching).empty());
  EXPECT_EQ(matching, 0u);
}

TEST_F(FacetsTest, SpyCountsMultiValuedCategoriesOverMatches) {
  CategoryFacetSpy everything;
  spy_on(Xapian::Query::MatchAll, &everything);
  EXPECT_EQ(everything.documents_seen(), 12u);
  EXPECT_EQ(plain(everything.counts()),
            (std::vector<Count>{{"food", 5}, {"science", 4}, {"sports", 4}}));

  CategoryFacetSpy team;
  spy_on(Xapian::Query("team"), &team);
  EXPECT_EQ(team.documents_seen(), 3u);
  EXPECT_EQ(plain(team.counts()), (std::vector<Count>{{"sports", 3}, {"food", 1}}));

  CategoryFacetSpy other_slot(kDefaultCategorySlot + 1);  // an empty slot
  spy_on(Xapian::Query("team"), &other_slot);
  EXPECT_EQ(other_slot.documents_seen(), 3u);
  EXPECT_TRUE(other_slot.counts().empty());
}

TEST_F(FacetsTest, SpyWithFilteredQuery) {
  CategoryFacetSpy spy;
  spy_on(category_filter(Xapian::Query(), {"food"}), &spy);
  EXPECT_EQ(spy.documents_seen(), 5u);
  EXPECT_EQ(plain(spy.counts()), (std::vector<Count>{{"food", 5}, {"science", 1}, {"sports", 1}}));
}

TEST_F(FacetsTest, SpySerialisationRoundTrip) {
  CategoryFacetSpy spy(42);
  EXPECT_EQ(spy.name(), "autocat::CategoryFacetSpy");
  Xapian::Registry registry;
  std::unique_ptr<Xapian::MatchSpy> copy(spy.unserialise(spy.serialise(), registry));
  EXPECT_EQ(copy->get_description(),
            "autocat::CategoryFacetSpy(slot=42, documents_seen=0, categories=0)");
  std::unique_ptr<Xapian::MatchSpy> clone(spy.clone());
  EXPECT_EQ(clone->get_description(), copy->get_description());
  EXPECT_THROW(spy.unserialise(spy.serialise() + "x", registry), Xapian::SerialisationError);
  EXPECT_THROW(spy.unserialise("", registry), Xapian::SerialisationError);

  // The registry finds it by name, as a remote server would.
  registry.register_match_spy(spy);
  ASSERT_NE(registry.get_match_spy("autocat::CategoryFacetSpy"), nullptr);
}

TEST_F(FacetsTest, MergeResultsRoundTrip) {
  CategoryFacetSpy shard1;
  spy_on(Xapian::Query("team"), &shard1);
  CategoryFacetSpy shard2;
  spy_on(Xapian::Query("butter"), &shard2);

  CategoryFacetSpy merged;
  merged.merge_results(shard1.serialise_results());
  EXPECT_EQ(merged.documents_seen(), shard1.documents_seen());
  EXPECT_EQ(plain(merged.counts()), plain(shard1.counts()));
  EXPECT_EQ(merged.serialise_results(), shard1.serialise_results());

  merged.merge_results(shard2.serialise_results());
  EXPECT_EQ(merged.documents_seen(), 5u);  // team: 3, butter: fd-2, mix-lab-bread
  EXPECT_EQ(plain(merged.counts()),
            (std::vector<Count>{{"food", 3}, {"sports", 3}, {"science", 1}}));
  merged.merge_results(CategoryFacetSpy().serialise_results());
  EXPECT_EQ(merged.documents_seen(), 5u);

  // Bad input throws and leaves the counts alone.
  const std::string good = shard1.serialise_results();
  for (size_t cut = 0; cut < good.size(); ++cut) {
    EXPECT_THROW(merged.merge_results(good.substr(0, cut)), Xapian::SerialisationError) << cut;
  }
  EXPECT_THROW(merged.merge_results(good + "junk"), Xapian::SerialisationError);
  EXPECT_EQ(merged.documents_seen(), 5u);
}

TEST_F(FacetsTest, CountsTieBreakByName) {
  CategoryFacetSpy spy;
  Xapian::Document doc;
  doc.add_value(kDefaultCategorySlot, encode_categories({{"zeta", 0.5}, {"alpha", 0.5}}));
  spy(doc, 0.0);
  doc.add_value(kDefaultCategorySlot, encode_categories({{"mid", 1.0}}));
  spy(doc, 0.0);
  spy(doc, 0.0);
  EXPECT_EQ(plain(spy.counts()), (std::vector<Count>{{"mid", 2}, {"alpha", 1}, {"zeta", 1}}));
  EXPECT_EQ(spy.documents_seen(), 3u);
}

TEST_F(FacetsTest, CollectionCounts) {
  EXPECT_EQ(plain(collection_category_counts(*db_)),
            (std::vector<Count>{{"food", 5}, {"science", 4}, {"sports", 4}}));
  EXPECT_TRUE(collection_category_counts(*db_, "XTOPIC").empty());
  Xapian::WritableDatabase empty(std::string(), Xapian::DB_BACKEND_INMEMORY);
  EXPECT_TRUE(collection_category_counts(empty).empty());
  EXPECT_THROW(collection_category_counts(*db_, ""), InvalidArgumentError);
}

TEST_F(FacetsTest, CategoryScoreReadsTheSlot) {
  const std::string value = encode_categories({{"food", 0.625}, {"sports", 0.375}, {"f", 1}});
  EXPECT_EQ(category_score(value, "food"), 0.625);
  EXPECT_EQ(category_score(value, "sports"), 0.375);
  EXPECT_EQ(category_score(value, "f"), 1.0);
  EXPECT_FALSE(category_score(value, "foo").has_value());  // a prefix of a name is not it
  EXPECT_FALSE(category_score(value, "science").has_value());
  EXPECT_FALSE(category_score("", "food").has_value());
  EXPECT_EQ(category_score("bare", "bare"), 0.0);  // decode_categories() reads it so too
}

// Ids of the matches `decider` accepts, in MSet order.
std::vector<std::string> decided_ids(const Xapian::Database& db, const Xapian::Query& query,
                                     const Xapian::MatchDecider& decider) {
  Xapian::Enquire enquire(db);
  enquire.set_query(query);
  const Xapian::MSet mset = enquire.get_mset(0, db.get_doccount(), nullptr, &decider);
  std::vector<std::string> out;
  for (auto it = mset.begin(); it != mset.end(); ++it) out.push_back(it.get_document().get_data());
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(FacetsTest, ScoreDeciderKeepsDocumentsAtOrAboveTheScore) {
  const std::vector<std::vector<std::string>> category_sets = {
      {"food"}, {"science"}, {"food", "sports"}, {"no-such-category"}};
  for (const Xapian::Query& query : {Xapian::Query(Xapian::Query::MatchAll), Xapian::Query("the"),
                                     Xapian::Query("team"), Xapian::Query("butter")}) {
    for (const std::vector<std::string>& categories : category_sets) {
      for (double min_score : {0.0, 0.3, 0.5, 0.62, 0.9, 1.5}) {
        // Brute force: every match's stored scores read back.
        std::vector<std::string> expected;
        std::map<std::string, Xapian::doccount> expected_counts;
        Xapian::Enquire enquire(*db_);
        enquire.set_query(query);
        const Xapian::MSet all = enquire.get_mset(0, db_->get_doccount());
        for (auto it = all.begin(); it != all.end(); ++it) {
          const Xapian::Document doc = it.get_document();
          const std::vector<Category> stored =
              decode_categories(doc.get_value(kDefaultCategorySlot));
          bool keep = false;
          for (const Category& category : stored) {
            keep = keep || (std::find(categories.begin(), categories.end(), category.name) !=
                                categories.end() &&
                            category.score >= min_score);
          }
          if (!keep) continue;
          expected.push_back(doc.get_data());
          for (const Category& category : stored) ++expected_counts[category.name];
        }
        std::sort(expected.begin(), expected.end());
        const CategoryScoreDecider decider(categories, min_score);
        const std::string what =
            query.get_description() + " " + categories[0] + " >= " + std::to_string(min_score);
        EXPECT_EQ(decided_ids(*db_, query, decider), expected) << what;
        // The facet counts follow the filter: only the documents kept.
        Xapian::doccount matching = 99;
        std::map<std::string, Xapian::doccount> counts;
        for (const FacetCount& count : category_counts(*db_, query, decider, &matching)) {
          counts[count.category] = count.count;
        }
        EXPECT_EQ(counts, expected_counts) << what;
        EXPECT_EQ(matching, expected.size()) << what;
      }
    }
  }
  // The filter does cut: food >= 0.5 keeps some food documents, not all
  // (the mixed ones score lower).
  const std::vector<std::string> food_half =
      decided_ids(*db_, Xapian::Query::MatchAll, CategoryScoreDecider({"food"}, 0.5));
  EXPECT_GT(food_half.size(), 0u);
  EXPECT_LT(food_half.size(), ids(category_filter(Xapian::Query(), {"food"})).size());
  Xapian::doccount matching = 7;
  EXPECT_TRUE(
      category_counts(*db_, Xapian::Query(), CategoryScoreDecider({"food"}, 0), &matching).empty());
  EXPECT_EQ(matching, 0u);
}

TEST_F(FacetsTest, ScoreKeyMakerSortsByTheCategorysScoreThenRelevance) {
  for (const Xapian::Query& query :
       {Xapian::Query(Xapian::Query::MatchAll), Xapian::Query("the"), Xapian::Query("team"),
        Xapian::Query(Xapian::Query::OP_OR, Xapian::Query("butter"), Xapian::Query("pasta"))}) {
    for (const std::string category : {"food", "sports", "science"}) {
      CategoryScoreKeyMaker key_maker(category);
      Xapian::Enquire enquire(*db_);
      enquire.set_query(query);
      enquire.set_sort_by_key_then_relevance(&key_maker, true);
      const Xapian::MSet mset = enquire.get_mset(0, db_->get_doccount());
      Xapian::Enquire plain_enquire(*db_);
      plain_enquire.set_query(query);
      ASSERT_EQ(mset.size(), plain_enquire.get_mset(0, db_->get_doccount()).size());
      // (has the category, its score, weight) never increases down the list.
      std::vector<std::tuple<bool, double, double>> keys;
      for (auto it = mset.begin(); it != mset.end(); ++it) {
        const std::optional<double> score =
            category_score(it.get_document().get_value(kDefaultCategorySlot), category);
        keys.emplace_back(score.has_value(), score.value_or(0), it.get_weight());
      }
      EXPECT_TRUE(std::is_sorted(keys.rbegin(), keys.rend()))
          << query.get_description() << " by " << category;
    }
  }
  // The five food documents first, then the seven others.
  CategoryScoreKeyMaker food("food");
  Xapian::Enquire enquire(*db_);
  enquire.set_query(Xapian::Query::MatchAll);
  enquire.set_sort_by_key_then_relevance(&food, true);
  const Xapian::MSet mset = enquire.get_mset(0, 100);
  std::vector<std::string> order;
  for (auto it = mset.begin(); it != mset.end(); ++it)
    order.push_back(it.get_document().get_data());
  ASSERT_EQ(order.size(), 12u);
  std::vector<std::string> first(order.begin(), order.begin() + 5);
  std::sort(first.begin(), first.end());
  EXPECT_EQ(first, ids(Xapian::Query("XCfood")));
  EXPECT_EQ(food(Xapian::Document()), "");
}

TEST_F(FacetsTest, ScoreFilterAndSortRefuseBadSettings) {
  EXPECT_THROW(CategoryScoreDecider({}, 0.5), InvalidArgumentError);
  EXPECT_THROW(CategoryScoreDecider({"food", ""}, 0.5), InvalidArgumentError);
  EXPECT_THROW(CategoryScoreDecider({"food"}, std::nan("")), InvalidArgumentError);
  EXPECT_THROW(CategoryScoreKeyMaker(""), InvalidArgumentError);
}

// The multi-label path end to end: a model trained on multi-label data
// decides any-of by default, documents get several category terms, and
// facet counts equal the counts of the terms themselves.
class MultiLabelFacetsTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    temp_dir_ = new testing_util::TempDir();
    const std::string train = temp_dir_->file("train.jsonl");
    {
      std::ofstream out(train);
      const char* sports[] = {"the team won the match with a late goal",
                              "players trained for the league final",
                              "the striker scored twice in the match"};
      const char* food[] = {"the chef cooked pasta with tomato sauce",
                            "bake the bread with butter and flour",
                            "the soup needs salt pepper and garlic"};
      const char* both[] = {"the team chef cooked pasta for the players after the match",
                            "players ate bread and soup before the league match",
                            "the chef fed the team pasta with garlic before the final"};
      int id = 0;
      for (int round = 0; round < 4; ++round) {
        for (const char* text : sports) {
          out << "{\"id\":\"" << id++ << "\",\"labels\":[\"sports\"],\"text\":\"" << text
              << "\"}\n";
        }
        for (const char* text : food) {
          out << "{\"id\":\"" << id++ << "\",\"labels\":[\"food\"],\"text\":\"" << text << "\"}\n";
        }
        for (const char* text : both) {
          out << "{\"id\":\"" << id++ << "\",\"labels\":[\"sports\",\"food\"],\"text\":\"" << text
              << "\"}\n";
        }
      }
    }
    model_dir_ = new std::string(temp_dir_->file("model"));
    internal::train_model({train}, *model_dir_, TrainOptions(), internal::ReadOptions(),
                          [](const std::string&) {});
    const CategoryIndexer indexer(*model_dir_);  // default options: the model's any-of
    db_ = new Xapian::WritableDatabase(std::string(), Xapian::DB_BACKEND_INMEMORY);
    const char* texts[] = {
        "the goalkeeper saved the match for the team",
        "the chef made tomato sauce and fresh pasta",
        "after the match the team chef served pasta and bread to the players",
        "a late goal won the league final",
        "garlic bread with butter",
        "the players had soup with the chef after training for the league match",
    };
    int id = 0;
    for (const char* text : texts) indexer.index_document(*db_, std::to_string(id++), text);
    db_->commit();
  }
  static void TearDownTestSuite() {
    delete db_;
    delete model_dir_;
    delete temp_dir_;
  }

  static testing_util::TempDir* temp_dir_;
  static std::string* model_dir_;
  static Xapian::WritableDatabase* db_;
};
testing_util::TempDir* MultiLabelFacetsTest::temp_dir_ = nullptr;
std::string* MultiLabelFacetsTest::model_dir_ = nullptr;
Xapian::WritableDatabase* MultiLabelFacetsTest::db_ = nullptr;

TEST_F(MultiLabelFacetsTest, DocumentsGetSeveralCategoryTerms) {
  const CategoryIndexer indexer(*model_dir_);
  EXPECT_EQ(indexer.categorize("the team chef cooked pasta for the players after the match").size(),
            2u);
  size_t with_two = 0;
  for (Xapian::docid id = 1; id <= db_->get_lastdocid(); ++id) {
    const Xapian::Document doc = db_->get_document(id);
    std::vector<std::string> terms;
    for (auto t = doc.termlist_begin(); t != doc.termlist_end(); ++t) {
      if ((*t).rfind("XC", 0) == 0) terms.push_back((*t).substr(2));
    }
    with_two += terms.size() >= 2 ? 1 : 0;
    // The value slot holds exactly the categories of the terms.
    std::vector<std::string> stored;
    for (const Category& c : decode_categories(doc.get_value(kDefaultCategorySlot))) {
      stored.push_back(c.name);
    }
    std::sort(stored.begin(), stored.end());
    EXPECT_EQ(stored, terms) << doc.get_data();
  }
  EXPECT_GE(with_two, 2u);
}

// Brute force: how many documents matching `query` carry each category term.
std::map<std::string, Xapian::doccount> term_counts(const Xapian::Database& db,
                                                    const Xapian::MSet& mset) {
  std::map<std::string, Xapian::doccount> counts;
  for (auto it = mset.begin(); it != mset.end(); ++it) {
    const Xapian::Document doc = db.get_document(*it);
    for (auto t = doc.termlist_begin(); t != doc.termlist_end(); ++t) {
      if ((*t).rfind("XC", 0) == 0) ++counts[(*t).substr(2)];
    }
  }
  return counts;
}

TEST_F(MultiLabelFacetsTest, FacetCountsEqualTermCounts) {
  std::map<std::string, Xapian::doccount> everything;
  for (const Xapian::Query& query :
       {Xapian::Query::MatchAll, Xapian::Query("team"), Xapian::Query("pasta")}) {
    Xapian::Enquire enquire(*db_);
    enquire.set_query(query);
    CategoryFacetSpy spy;
    enquire.add_matchspy(&spy);
    const Xapian::MSet mset = enquire.get_mset(0, db_->get_doccount());
    const std::map<std::string, Xapian::doccount> expected = term_counts(*db_, mset);
    std::map<std::string, Xapian::doccount> counted;
    for (const FacetCount& count : spy.counts()) counted[count.category] = count.count;
    EXPECT_EQ(counted, expected) << query.get_description();
    EXPECT_EQ(spy.documents_seen(), mset.size());
    if (query.get_type() == Xapian::Query::LEAF_MATCH_ALL) everything = expected;
  }
  // Collection-wide counts agree, and a document with two categories counts
  // for both: the counts add up to more than the documents.
  std::map<std::string, Xapian::doccount> collection;
  Xapian::doccount total = 0;
  for (const FacetCount& count : collection_category_counts(*db_)) {
    collection[count.category] = count.count;
    total += count.count;
  }
  EXPECT_EQ(collection, everything);
  EXPECT_GT(total, db_->get_doccount());
}

}  // namespace
}  // namespace autocat
