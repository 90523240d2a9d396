// Tests of read_database() and of training from a labelled Xapian database
// (`autocat train --from-db`).
#include "classify/corpus/db_reader.h"

#include <gtest/gtest.h>
#include <xapian.h>

#include <string>
#include <vector>

#include "autocat/error.h"
#include "autocat/facets.h"
#include "classify/decide/categorizer.h"
#include "classify/io/json_text.h"
#include "classify/train/trainer.h"
#include "tests/cli_test_util.h"
#include "tests/test_util.h"

namespace autocat::internal {
namespace {

using testing_util::CliResult;
using testing_util::run_autocat;
using testing_util::TempDir;
using testing_util::test_data;
using testing_util::write_file;

class DbReaderTest : public testing::Test {
 protected:
  void SetUp() override {
    Xapian::WritableDatabase db(db_, Xapian::DB_CREATE_OR_OVERWRITE);
    Xapian::TermGenerator generator;
    generator.set_stemmer(Xapian::Stem("english"));
    // 1: unique id, two labels (one with a capital: XC:Sports), a value.
    Xapian::Document first;
    first.set_data("comet seen through the telescope");
    generator.set_document(first);
    generator.index_text("comet comets telescope");
    first.add_boolean_term("Qfirst");
    first.add_boolean_term(category_term("Sports", "XC"));
    first.add_boolean_term(category_term("astronomy", "XC"));
    first.add_boolean_term("XCAT");  // another prefix's term, not a label
    first.add_value(3, "text of slot three");
    db.add_document(first);
    // 2: no unique id; one label.
    Xapian::Document second;
    second.set_data("soup recipe");
    second.add_boolean_term("XCcooking");
    db.add_document(second);
    // 3: no label.
    Xapian::Document third;
    third.set_data("nothing known");
    db.add_document(third);
    db.commit();
  }

  std::vector<InputDocument> read(const DatabaseInput& input) {
    std::vector<InputDocument> docs;
    warnings_.clear();
    read_database(
        input, [&](InputDocument&& doc) { docs.push_back(std::move(doc)); },
        [&](const std::string& warning) { warnings_.push_back(warning); });
    return docs;
  }

  DatabaseInput input() const {
    DatabaseInput input;
    input.path = db_;
    input.label_prefix = "XC";
    return input;
  }

  template <class E>
  std::string error_of(const DatabaseInput& input) {
    try {
      read(input);
    } catch (const E& e) {
      return e.what();
    }
    ADD_FAILURE() << "no exception of the expected type";
    return std::string();
  }

  TempDir dir_;
  const std::string db_ = dir_.file("db");
  std::vector<std::string> warnings_;
};

TEST_F(DbReaderTest, ReadsLabelsIdsAndData) {
  const std::vector<InputDocument> docs = read(input());
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[0].id, "first");  // the Q term
  EXPECT_EQ(docs[0].labels, std::vector<std::string>({"Sports", "astronomy"}));
  EXPECT_TRUE(docs[0].labels_given);
  EXPECT_EQ(docs[0].text, "comet seen through the telescope");
  EXPECT_EQ(docs[0].source, db_ + "#1");
  EXPECT_EQ(docs[1].id, "2");  // no Q term: the docid
  EXPECT_EQ(docs[1].labels, std::vector<std::string>({"cooking"}));
  EXPECT_TRUE(docs[2].labels.empty());
  EXPECT_FALSE(docs[2].labels_given);  // skipped by train unless --keep-unlabelled
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(DbReaderTest, TextFromValueOrTerms) {
  DatabaseInput from_value = input();
  from_value.text_from = DatabaseText::kValue;
  from_value.value_slot = 3;
  EXPECT_EQ(read(from_value)[0].text, "text of slot three");

  DatabaseInput from_terms = input();
  from_terms.text_from = DatabaseText::kTerms;
  const std::string text = read(from_terms)[0].text;
  // Unprefixed words, each as often as indexed; no stems, ids or labels.
  EXPECT_EQ(text, "comet comets telescope ");
  EXPECT_EQ(text.find("Z"), std::string::npos);
}

TEST_F(DbReaderTest, FilterKnowsCategoryLabelIdAndWords) {
  const auto ids_for = [&](const std::string& filter) {
    DatabaseInput filtered = input();
    filtered.filter = filter;
    std::vector<std::string> ids;
    for (const InputDocument& doc : read(filtered)) ids.push_back(doc.id);
    return ids;
  };
  EXPECT_EQ(ids_for("category:cooking"), std::vector<std::string>({"2"}));
  EXPECT_EQ(ids_for("label:Sports"), std::vector<std::string>({"first"}));
  EXPECT_EQ(ids_for("id:first"), std::vector<std::string>({"first"}));
  EXPECT_EQ(ids_for("comets"), std::vector<std::string>({"first"}));  // stemmed as search
  EXPECT_EQ(ids_for("category:astronomy OR category:cooking"),
            std::vector<std::string>({"first", "2"}));
}

TEST_F(DbReaderTest, ErrorsNameTheDatabaseAndWhatToDo) {
  DatabaseInput missing = input();
  missing.path = dir_.file("nowhere");
  EXPECT_NE(error_of<NotFoundError>(missing).find(dir_.file("nowhere") + ": no such database"),
            std::string::npos);

  DatabaseInput not_a_db = input();
  not_a_db.path = dir_.file("empty");
  std::filesystem::create_directories(not_a_db.path);
  EXPECT_NE(error_of<InvalidArgumentError>(not_a_db).find("not a Xapian database"),
            std::string::npos);

  DatabaseInput other_prefix = input();
  other_prefix.label_prefix = "XK";
  EXPECT_NE(error_of<InvalidArgumentError>(other_prefix)
                .find(db_ + ": no document has a term with prefix XK; check --label-prefix"),
            std::string::npos);

  DatabaseInput reserved = input();
  reserved.label_prefix = "Q";
  EXPECT_NE(error_of<InvalidArgumentError>(reserved).find("--label-prefix"), std::string::npos);

  DatabaseInput no_match = input();
  no_match.filter = "category:nothing";
  EXPECT_NE(error_of<InvalidArgumentError>(no_match).find("matching --filter"), std::string::npos);

  DatabaseInput bad_query = input();
  bad_query.filter = "comet AND";
  EXPECT_NE(error_of<InvalidArgumentError>(bad_query).find("not a valid query"), std::string::npos);
}

// A database labelled the way an application's editors might: the fixture's
// documents with Capitalized labels under prefix XT, stems, unique ids.
std::string build_labelled_database(const TempDir& dir) {
  const std::string path = dir.file("app-db");
  Xapian::WritableDatabase db(path, Xapian::DB_CREATE_OR_OVERWRITE);
  Xapian::TermGenerator generator;
  generator.set_stemmer(Xapian::Stem("english"));
  read_documents(
      {test_data("fixture_train.jsonl")}, ReadOptions(),
      [&](InputDocument&& input) {
        Xapian::Document doc;
        doc.set_data(input.text);
        generator.set_document(doc);
        generator.index_text(input.text);
        doc.add_boolean_term("Q" + input.id);
        for (std::string label : input.labels) {
          label[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(label[0])));
          doc.add_boolean_term(category_term(label, "XT"));
        }
        db.add_document(doc);
      },
      nullptr);
  db.commit();
  return path;
}

TEST(TrainFromDatabase, TrainsAndClassifies) {
  TempDir dir;
  ReadOptions read;
  DatabaseInput database;
  database.path = build_labelled_database(dir);
  database.label_prefix = "XT";
  for (DatabaseText text_from : {DatabaseText::kData, DatabaseText::kTerms}) {
    database.text_from = text_from;
    read.databases = {database};
    TrainOptions options;
    options.threshold_folds = 0;
    const std::string model = dir.file("model" + std::to_string(static_cast<int>(text_from)));
    const TrainReport report = train_model({}, model, options, read, nullptr);
    EXPECT_EQ(report.documents, 24u);
    EXPECT_EQ(report.categories, 3u);
    const Categorizer categorizer(model);
    const std::vector<Category> got =
        categorizer.classify("the goalkeeper saved a penalty in the match", ClassifyOptions());
    ASSERT_FALSE(got.empty());
    EXPECT_EQ(got[0].name, "Sports");
  }
}

TEST(TrainFromDatabase, CommandLineOnAnAutocatIndex) {
  TempDir dir;
  const std::string model = dir.file("model"), db = dir.file("index");
  ASSERT_EQ(run_autocat({"train", "--model", model, "--threshold-folds", "0",
                         test_data("fixture_train.jsonl")})
                .exit_code,
            0);
  const CliResult indexed =
      run_autocat({"index", "--model", model, "--db", db, test_data("fixture_train.jsonl")});
  ASSERT_EQ(indexed.exit_code, 0) << indexed.err;
  // The categories autocat index assigned become the labels of a new model.
  const std::string again = dir.file("again");
  const CliResult trained =
      run_autocat({"train", "--model", again, "--from-db", db, "--label-prefix", "XC",
                   "--text-from", "terms", "--threshold-folds", "0", "--json"});
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  Json summary;
  std::string error;
  ASSERT_TRUE(parse_json(trained.out, &summary, &error)) << error;
  EXPECT_EQ(summary.at("documents").get<double>(), 24);
  EXPECT_EQ(trained.err, "");  // --text-from terms: no warning about the data
  write_file(dir.file("query.txt"), "The basketball team won the game");
  const CliResult classified = run_autocat({"classify", "--model", again, dir.file("query.txt")});
  ASSERT_EQ(classified.exit_code, 0) << classified.err;
  EXPECT_NE(classified.out.find("sports"), std::string::npos) << classified.out;

  // Data is autocat index's snippet: train says so.
  const CliResult from_data = run_autocat({"train", "--model", dir.file("from-data"), "--from-db",
                                           db, "--label-prefix", "XC", "--threshold-folds", "0"});
  EXPECT_EQ(from_data.exit_code, 0) << from_data.err;
  EXPECT_NE(from_data.err.find("--text-from terms"), std::string::npos) << from_data.err;

  // Usage errors name the option.
  EXPECT_NE(run_autocat({"train", "--model", again, "--from-db", db}).err.find("--label-prefix"),
            std::string::npos);
  EXPECT_NE(run_autocat({"train", "--model", again, "--from-db", db, "--label-prefix", "XC",
                         "--text-from", "value:x"})
                .err.find("choose data, value:N"),
            std::string::npos);
  EXPECT_NE(
      run_autocat({"train", "--model", again, "--filter", "x", test_data("fixture_train.jsonl")})
          .err.find("--filter needs --from-db"),
      std::string::npos);
}

}  // namespace
}  // namespace autocat::internal
