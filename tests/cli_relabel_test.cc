// autocat relabel: one document's categories rewritten in an index, and
// taught to the model with --learn.
#include <gtest/gtest.h>
#include <xapian.h>

#include <string>
#include <vector>

#include "autocat/facets.h"
#include "tests/cli_test_util.h"

namespace autocat {
namespace {

using testing_util::CliResult;
using testing_util::json;
using testing_util::run_autocat;
using testing_util::TempDir;
using testing_util::write_file;

const std::string kTrain = std::string(AUTOCAT_SOURCE_DIR) + "/examples/data/train.jsonl";
const char kComet[] =
    "Observers report the comet has reached naked-eye brightness; its tail stretches across "
    "the sky before sunrise.";

class CliRelabelTest : public testing::Test {
 protected:
  void SetUp() override {
    model_ = dir_.file("model");
    db_ = dir_.file("db");
    ASSERT_EQ(run_autocat({"train", "--model", model_, "--quiet", kTrain}).exit_code, 0);
    write_file(dir_.file("inbox.jsonl"),
               std::string("{\"id\": \"comet\", \"text\": \"") + kComet + "\"}\n" +
                   "{\"id\": \"other\", \"text\": \"Knead the dough and let it rise.\"}\n");
    const CliResult index = run_autocat({"index", "--model", model_, "--db", db_, "--store-text",
                                         "--quiet", dir_.file("inbox.jsonl")});
    ASSERT_EQ(index.exit_code, 0) << index.err;
  }
  // The categories the index holds for `id`, through a category filter.
  std::vector<std::string> stored_categories(const std::string& id) {
    std::vector<std::string> names;
    const Xapian::Database db(db_);
    for (const char* name : {"astronomy", "computing", "cooking", "football", "medicine"}) {
      Xapian::Enquire enquire(db);
      enquire.set_query(category_filter(Xapian::Query("Q" + id), {name}));
      if (enquire.get_mset(0, 10).size() > 0) names.push_back(name);
    }
    return names;
  }
  std::string knn_category_of_comet() {
    write_file(dir_.file("comet.txt"), kComet);
    const CliResult result = run_autocat(
        {"classify", "--model", model_, "--method", "knn", "--k", "1", dir_.file("comet.txt")});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    const size_t tab = result.out.find('\t');
    const size_t space = result.out.find(' ', tab);
    return tab == std::string::npos ? "" : result.out.substr(tab + 1, space - tab - 1);
  }

  TempDir dir_;
  std::string model_, db_;
};

TEST_F(CliRelabelTest, RewritesTheCategoriesInPlaceAndTeachesOnlyWithLearn) {
  ASSERT_EQ(stored_categories("comet"), std::vector<std::string>{"astronomy"});
  ASSERT_EQ(knn_category_of_comet(), "astronomy");

  CliResult result = run_autocat({"relabel", "--db", db_, "--model", model_, "--category",
                                  "cooking", "--editor", "ana", "--json", "comet"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const internal::Json summary = json(result.out);
  EXPECT_EQ(summary["id"], "comet");
  ASSERT_EQ(summary["categories"].size(), 1u);
  EXPECT_EQ(summary["categories"][0]["name"], "cooking");
  EXPECT_EQ(summary["categories"][0]["score"], 1.0);
  EXPECT_EQ(summary["previous"][0]["name"], "astronomy");
  EXPECT_EQ(summary["learned"], false);
  EXPECT_EQ(summary["editor"], "ana");
  EXPECT_EQ(summary["seq"], 1);
  EXPECT_EQ(stored_categories("comet"), (std::vector<std::string>{"cooking"}));
  {
    const Xapian::Database db(db_);
    EXPECT_EQ(db.get_termfreq("XAUTOCATEDITED"), 1u);
    EXPECT_EQ(db.get_document(*db.postlist_begin("Qcomet")).get_value(202).rfind("ana\t", 0), 0u);
  }
  EXPECT_EQ(stored_categories("other"), std::vector<std::string>{"cooking"});
  // The text terms stay: the document is still found by its words.
  Xapian::Enquire enquire{Xapian::Database(db_)};
  enquire.set_query(Xapian::Query("comet"));
  EXPECT_EQ(enquire.get_mset(0, 10).size(), 1u);
  EXPECT_EQ(knn_category_of_comet(), "astronomy") << "the model learned without --learn";

  result = run_autocat({"relabel", "--db", db_, "--model", model_, "--category", "football",
                        "--editor", "ben", "--learn", "comet"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "comet: football (was: cooking); taught to the model in " + model_ +
                            "; correction 2 by ben\n");
  EXPECT_EQ(stored_categories("comet"), std::vector<std::string>{"football"});
  EXPECT_EQ(knn_category_of_comet(), "football");
}

// An editor's label survives recategorize and re-indexing, which say how
// many they kept; autocat corrections exports it as training input.
TEST_F(CliRelabelTest, EditorsLabelsAreKeptAndExported) {
  ASSERT_EQ(run_autocat({"relabel", "--db", db_, "--model", model_, "--category", "medicine",
                         "--editor", "ana", "comet"})
                .exit_code,
            0);
  CliResult result =
      run_autocat({"recategorize", "--model", model_, "--db", db_, "--all", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(json(result.out)["databases"][0]["editor_set_kept"], 1);
  EXPECT_EQ(json(result.out)["databases"][0]["recategorized"], 1);  // "other" alone
  EXPECT_EQ(stored_categories("comet"), std::vector<std::string>{"medicine"});

  result = run_autocat(
      {"index", "--model", model_, "--db", db_, "--json", "--quiet", dir_.file("inbox.jsonl")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(json(result.out)["editor_set_kept"], 1);
  EXPECT_EQ(stored_categories("comet"), std::vector<std::string>{"medicine"});

  result = run_autocat(
      {"recategorize", "--model", model_, "--db", db_, "--all", "--include-editor-set"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("--include-editor-set: 1 editor-set documents"), std::string::npos)
      << result.err;
  EXPECT_EQ(stored_categories("comet"), std::vector<std::string>{"astronomy"});
  result = run_autocat({"corrections", "--db", db_, "--json"});
  EXPECT_EQ(result.out, "") << "the model's categories replaced the correction";

  ASSERT_EQ(run_autocat({"relabel", "--db", db_, "--model", model_, "--category", "medicine",
                         "--editor", "ben", "comet"})
                .exit_code,
            0);
  result = run_autocat({"corrections", "--db", db_, "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const internal::Json record = json(result.out);
  EXPECT_EQ(record["id"], "comet");
  EXPECT_EQ(record["text"], kComet);
  EXPECT_EQ(record["labels"], internal::Json::array({"medicine"}));
  EXPECT_EQ(record["previous"], internal::Json::array({"astronomy"}));
  EXPECT_EQ(record["editor"], "ben");
  result = run_autocat({"corrections", "--db", db_});
  EXPECT_NE(result.out.find("1 correction in force in " + db_), std::string::npos) << result.out;
}

TEST_F(CliRelabelTest, BadInputChangesNothing) {
  CliResult result = run_autocat(
      {"relabel", "--db", db_, "--model", model_, "--category", "gardening", "--learn", "comet"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("category 'gardening' is not in the model"), std::string::npos)
      << result.err;
  result = run_autocat({"relabel", "--db", db_, "--model", model_, "--category", "cooking",
                        "--learn", "no-such-id"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find(db_ + ": no document has the id 'no-such-id'"), std::string::npos)
      << result.err;
  result = run_autocat({"relabel", "--db", db_, "--model", model_, "--category", "cooking",
                        "--category", "medicine", "comet"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("the model decides one-of"), std::string::npos) << result.err;
  result = run_autocat({"relabel", "--db", db_, "--model", model_, "comet"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("give --category C at least once"), std::string::npos) << result.err;
  result = run_autocat({"relabel", "--db", dir_.file("missing"), "--model", model_, "--category",
                        "cooking", "comet"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("no such database"), std::string::npos) << result.err;
  EXPECT_EQ(stored_categories("comet"), std::vector<std::string>{"astronomy"});
  EXPECT_EQ(knn_category_of_comet(), "astronomy");
}

}  // namespace
}  // namespace autocat
