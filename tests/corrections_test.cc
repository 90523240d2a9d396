// Editors' corrections (autocat/corrections.h): the editor-set mark, its
// protection on re-indexing, the log, undo and the stats.
#include "autocat/corrections.h"

#include <gtest/gtest.h>
#include <xapian.h>

#include <string>
#include <vector>

#include "autocat/error.h"
#include "classify/train/trainer.h"
#include "tests/test_util.h"

namespace autocat {
namespace {

const char kSportsText[] = "The striker scored in the match and the team won the final.";
const char kScienceText[] = "Physicists tested the theory with a new detector in the lab.";
const char kFoodText[] = "Fry the garlic in butter, then simmer the tomato sauce.";

std::vector<std::string> names(const std::vector<Category>& categories) {
  std::vector<std::string> out;
  for (const Category& category : categories) out.push_back(category.name);
  return out;
}

class CorrectionsTest : public testing::Test {
 protected:
  void SetUp() override {
    internal::ReadOptions read;
    read.split = "train";
    internal::train_model({testing_util::test_data("fixture_train.jsonl")}, dir_.file("model"),
                          TrainOptions(), read, [](const std::string&) {});
    indexer_ = std::make_unique<CategoryIndexer>(dir_.file("model"));
    db_ = Xapian::WritableDatabase(dir_.file("db"), Xapian::DB_CREATE);
    indexer_->index_document(db_, "sports", kSportsText);
    indexer_->index_document(db_, "science", kScienceText);
    indexer_->index_document(db_, "food", kFoodText);
    db_.commit();
  }
  Xapian::Document doc(const std::string& id) { return find_document_by_id(db_, id); }
  std::vector<Category> stored(const std::string& id) {
    return decode_categories(doc(id).get_value(kDefaultCategorySlot));
  }
  // True if the model holds `id` as a training document (forget() finds it),
  // which is then taught again so the test can go on.
  bool model_knows(const std::string& id, const std::vector<std::string>& labels) {
    try {
      indexer_->forget(id);
    } catch (const NotFoundError&) {
      return false;
    }
    indexer_->learn(id, doc(id).get_data(), labels);
    return true;
  }
  CorrectionOptions by(const std::string& editor) {
    CorrectionOptions options;
    options.editor = editor;
    return options;
  }

  testing_util::TempDir dir_;
  std::unique_ptr<CategoryIndexer> indexer_;
  Xapian::WritableDatabase db_;
};

TEST_F(CorrectionsTest, CorrectionMarksLogsAndTeaches) {
  ASSERT_EQ(names(stored("sports")), std::vector<std::string>{"sports"});
  EXPECT_FALSE(is_editor_set(doc("sports")));
  const Correction correction = correct_document(db_, *indexer_, "sports", {"food"}, by("ana"));
  EXPECT_EQ(correction.seq, 1u);
  EXPECT_TRUE(correction.learned);
  EXPECT_EQ(correction.model_top, "sports");
  EXPECT_EQ(names(correction.previous), std::vector<std::string>{"sports"});
  EXPECT_FALSE(correction.previous_editor.has_value());

  EXPECT_EQ(names(stored("sports")), std::vector<std::string>{"food"});
  EXPECT_EQ(stored("sports")[0].score, 1.0);
  EXPECT_TRUE(is_editor_set(doc("sports")));
  EXPECT_EQ(editor_mark(doc("sports"))->name, "ana");
  EXPECT_EQ(doc("sports").get_value(kDefaultEditorSlot), "ana\t" + correction.at);
  EXPECT_EQ(db_.get_termfreq(kEditorSetTerm), 1u);
  EXPECT_TRUE(model_knows("sports", {"food"}));

  const CorrectionPage page = list_corrections(Xapian::Database(dir_.file("db")), 0, 10);
  ASSERT_EQ(page.total, 1u);
  ASSERT_EQ(page.corrections.size(), 1u);
  EXPECT_EQ(page.corrections[0].id, "sports");
  EXPECT_EQ(page.corrections[0].categories, std::vector<std::string>{"food"});
  EXPECT_EQ(page.corrections[0].editor, "ana");
  EXPECT_EQ(correction_json(page.corrections[0]), correction_json(correction));
}

TEST_F(CorrectionsTest, BadCorrectionsChangeNothing) {
  EXPECT_THROW(correct_document(db_, *indexer_, "sports", {"gardening"}), InvalidArgumentError);
  EXPECT_THROW(correct_document(db_, *indexer_, "nobody", {"food"}), NotFoundError);
  ASSERT_EQ(indexer_->decision_mode(), Decision::kOneOf);
  try {
    correct_document(db_, *indexer_, "sports", {"food", "science"});
    FAIL() << "a one-of model took two categories";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("one-of"), std::string::npos) << e.what();
  }
  EXPECT_EQ(names(stored("sports")), std::vector<std::string>{"sports"});
  EXPECT_FALSE(is_editor_set(doc("sports")));
  EXPECT_EQ(list_corrections(db_, 0, 10).total, 0u);
  EXPECT_FALSE(model_knows("sports", {"sports"}));
}

TEST_F(CorrectionsTest, ReindexingKeepsTheEditorsLabels) {
  correct_document(db_, *indexer_, "sports", {"science"}, by("ana"));
  const std::string mark = doc("sports").get_value(kDefaultEditorSlot);
  // The text changes; the model would say food.
  EXPECT_EQ(names(indexer_->index_document(db_, "sports", kFoodText)),
            std::vector<std::string>{"food"});
  EXPECT_EQ(names(stored("sports")), std::vector<std::string>{"science"});
  EXPECT_TRUE(is_editor_set(doc("sports")));
  EXPECT_EQ(doc("sports").get_value(kDefaultEditorSlot), mark);
  EXPECT_EQ(db_.get_termfreq("XCfood"), 1u);  // the food document alone
  EXPECT_EQ(db_.get_termfreq("garlic"), 2u);  // the new text is indexed

  indexer_->index_documents(db_, {{"sports", kSportsText, ""}});
  EXPECT_EQ(names(stored("sports")), std::vector<std::string>{"science"});

  PreparedDocument fresh = indexer_->prepare_documents({{"sports", kSportsText, ""}})[0];
  EXPECT_EQ(replace_keeping_editor_labels(db_, fresh.id_term, fresh.document, *indexer_,
                                          /*overwrite_editor_set=*/true),
            Replaced::kReplaced);
  EXPECT_EQ(names(stored("sports")), std::vector<std::string>{"sports"});
  EXPECT_FALSE(is_editor_set(doc("sports")));
}

TEST_F(CorrectionsTest, RunnerUpIsTheBestCategoryNotAssigned) {
  const std::vector<Category> runner_up =
      decode_categories(doc("science").get_value(kDefaultRunnerUpSlot));
  ASSERT_EQ(runner_up.size(), 1u);
  EXPECT_NE(runner_up[0].name, "science");
  const std::vector<Category> scores = indexer_->score(kScienceText);
  ASSERT_GE(scores.size(), 2u);
  EXPECT_EQ(runner_up[0].name, scores[1].name);
  correct_document(db_, *indexer_, "science", {"food"});
  EXPECT_EQ(doc("science").get_value(kDefaultRunnerUpSlot), "");
}

TEST_F(CorrectionsTest, UndoRestoresIndexAndModelNewestFirst) {
  const Correction first = correct_document(db_, *indexer_, "sports", {"food"}, by("ana"));
  const Correction second = correct_document(db_, *indexer_, "sports", {"science"}, by("ben"));
  ASSERT_TRUE(second.previous_editor.has_value());
  EXPECT_EQ(second.previous_editor->name, "ana");
  EXPECT_THROW(undo_correction(db_, *indexer_, first.seq, "ana", Xapian::BAD_VALUENO),
               ConflictError);
  EXPECT_THROW(undo_correction(db_, *indexer_, 99, "ana", Xapian::BAD_VALUENO), NotFoundError);

  std::vector<Correction> undone =
      undo_correction(db_, *indexer_, second.seq, "ben", Xapian::BAD_VALUENO);
  ASSERT_EQ(undone.size(), 1u);
  EXPECT_TRUE(undone[0].undone);
  EXPECT_EQ(undone[0].undone_by, "ben");
  EXPECT_EQ(names(stored("sports")), std::vector<std::string>{"food"});
  EXPECT_EQ(editor_mark(doc("sports"))->name, "ana");
  EXPECT_TRUE(model_knows("sports", {"food"}));
  EXPECT_THROW(undo_correction(db_, *indexer_, second.seq, "ben", Xapian::BAD_VALUENO),
               ConflictError);

  undo_correction(db_, *indexer_, first.seq, "ana", Xapian::BAD_VALUENO);
  EXPECT_EQ(names(stored("sports")), std::vector<std::string>{"sports"});
  EXPECT_FALSE(is_editor_set(doc("sports")));
  EXPECT_EQ(doc("sports").get_value(kDefaultEditorSlot), "");
  EXPECT_FALSE(model_knows("sports", {"sports"}));
  EXPECT_TRUE(corrections_in_force(db_).empty());
  EXPECT_TRUE(list_corrections(db_, 0, 10).corrections[0].undone);
}

TEST_F(CorrectionsTest, BulkCorrectionIsOneBatchUndoneTogether) {
  correct_document(db_, *indexer_, "food", {"science"}, by("ana"));
  EXPECT_THROW(correct_documents(db_, *indexer_, {"sports", "science"}, {"food", "sports"}, {}),
               InvalidArgumentError);
  CorrectionOptions options = by("ben");
  options.batch = 7;
  const std::vector<Correction> batch =
      correct_documents(db_, *indexer_, {"sports", "science"}, {"food"}, {}, options);
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[0].seq, 2u);
  EXPECT_EQ(batch[1].seq, 3u);
  EXPECT_EQ(batch[1].batch, 7u);
  EXPECT_EQ(names(stored("sports")), std::vector<std::string>{"food"});
  EXPECT_EQ(names(stored("science")), std::vector<std::string>{"food"});
  EXPECT_EQ(corrections_in_force(db_).size(), 3u);

  const std::vector<Correction> undone =
      undo_correction(db_, *indexer_, 3, "ben", Xapian::BAD_VALUENO);
  EXPECT_EQ(undone.size(), 2u);
  EXPECT_EQ(names(stored("sports")), std::vector<std::string>{"sports"});
  EXPECT_EQ(names(stored("science")), std::vector<std::string>{"science"});
  EXPECT_EQ(names(stored("food")), std::vector<std::string>{"science"});
  EXPECT_EQ(corrections_in_force(db_).size(), 1u);
}

TEST_F(CorrectionsTest, DocumentWithoutLearnableTextIsStillCorrected) {
  Xapian::Document empty;
  empty.add_boolean_term("Qblank");
  empty.set_data("!!! ???");
  db_.add_document(empty);
  db_.commit();
  const Correction correction = correct_document(db_, *indexer_, "blank", {"food"});
  EXPECT_FALSE(correction.learned);
  EXPECT_TRUE(is_editor_set(doc("blank")));
  EXPECT_EQ(names(stored("blank")), std::vector<std::string>{"food"});
}

TEST_F(CorrectionsTest, InMemoryDatabasesAreCorrectedToo) {
  Xapian::WritableDatabase memory(std::string(), Xapian::DB_BACKEND_INMEMORY);
  indexer_->index_document(memory, "sports", kSportsText);
  const Correction correction = correct_document(memory, *indexer_, "sports", {"food"}, by("ana"));
  EXPECT_EQ(correction.seq, 1u);
  const Xapian::Document doc = find_document_by_id(memory, "sports");
  EXPECT_TRUE(is_editor_set(doc));
  EXPECT_EQ(names(decode_categories(doc.get_value(kDefaultCategorySlot))),
            std::vector<std::string>{"food"});
  EXPECT_EQ(undo_correction(memory, *indexer_, 1, "ana", Xapian::BAD_VALUENO).size(), 1u);
  EXPECT_FALSE(is_editor_set(find_document_by_id(memory, "sports")));
}

TEST_F(CorrectionsTest, StatsCountTheQueueAndTheAgreement) {
  CorrectionStats stats = correction_stats(db_);
  EXPECT_EQ(stats.documents, 3u);
  EXPECT_EQ(stats.queue, 3u);
  EXPECT_FALSE(stats.agreement.has_value());
  correct_document(db_, *indexer_, "sports", {"sports"});  // the model was right
  correct_document(db_, *indexer_, "food", {"science"});   // it was not
  stats = correction_stats(db_);
  EXPECT_EQ(stats.editor_set, 2u);
  EXPECT_EQ(stats.queue, 1u);
  EXPECT_EQ(stats.agreement_window, 2u);
  EXPECT_DOUBLE_EQ(*stats.agreement, 0.5);
}

}  // namespace
}  // namespace autocat
