// The review queue of `autocat serve` (indexer/review_queue.h) over a small
// on-disk index: candidates from the category slot and the runner-up slot,
// editor-set documents left out, filters and pages, writes it is told of
// and changes it is not, and the re-ranking around a correction with a
// scorer that stands in for the live model.
#include "indexer/review_queue.h"

#include <gtest/gtest.h>
#include <xapian.h>

#include <string>
#include <vector>

#include "autocat/category_indexer.h"
#include "tests/test_util.h"

namespace autocat::cli {
namespace {

using autocat::testing_util::TempDir;

constexpr Xapian::valueno kTextSlot = 201;

struct Doc {
  std::string text;
  std::vector<Category> categories;
  std::string runner_up;  // "NAME\tSCORE" or empty
  bool edited = false;
};

class ReviewQueueTest : public testing::Test {
 protected:
  void SetUp() override { db_path_ = dir_.path() + "/db"; }

  void write(const std::vector<Doc>& docs) {
    Xapian::WritableDatabase db(db_path_, Xapian::DB_CREATE_OR_OPEN);
    for (const Doc& d : docs) db.add_document(document(d));
    db.commit();
  }

  static Xapian::Document document(const Doc& d) {
    Xapian::Document doc;
    Xapian::TermGenerator terms;
    terms.set_document(doc);
    terms.index_text(d.text);
    doc.add_value(kDefaultCategorySlot, encode_categories(d.categories));
    if (!d.runner_up.empty()) doc.add_value(kDefaultRunnerUpSlot, d.runner_up);
    doc.add_value(kTextSlot, d.text);
    if (d.edited) doc.add_boolean_term(kEditorSetTerm);
    return doc;
  }

  ReviewQueue& queue(ReviewQueue::Scorer scorer = nullptr) {
    ReviewQueueOptions options;
    options.text_slot = kTextSlot;
    if (!scorer) {
      scorer = [](const std::string&) -> std::vector<Category> { return {}; };
    }
    queue_ = std::make_unique<ReviewQueue>(db_path_, options, scorer);
    return *queue_;
  }

  ReviewPage page(const ReviewFilter& filter = ReviewFilter(), size_t offset = 0,
                  size_t limit = 100) {
    return queue_->page(Xapian::Database(db_path_), filter, offset, limit);
  }

  static std::vector<Xapian::docid> ids(const ReviewPage& page) {
    std::vector<Xapian::docid> out;
    for (const ReviewItem& item : page.items) out.push_back(item.docid);
    return out;
  }

  TempDir dir_;
  std::string db_path_;
  std::unique_ptr<ReviewQueue> queue_;
};

TEST_F(ReviewQueueTest, TopTwoCandidatesLeastSureFirstWithoutEditorSet) {
  write({{"one", {{"a", 0.6}}, "b\t0.3"},           // 1: one-of with a runner-up: 0.3
         {"two", {{"a", 0.9}}, ""},                 // 2: no runner-up: its score, 0.9
         {"three", {{"b", 0.45}, {"a", 0.5}}, ""},  // 3: any-of: 0.05
         {"four", {{"a", 0.1}}, "b\t0.1", true},    // 4: set by an editor
         {"five", {{"c", 0.7}}, "c\t0.6"}});        // 5: a runner-up naming itself is ignored
  queue();
  const ReviewPage all = page();
  EXPECT_EQ(all.total, 4u);
  EXPECT_EQ(ids(all), (std::vector<Xapian::docid>{3, 1, 5, 2}));
  ASSERT_EQ(all.items[1].candidates.size(), 2u);
  EXPECT_EQ(all.items[1].candidates[0].name, "a");
  EXPECT_EQ(all.items[1].candidates[1].name, "b");
  EXPECT_DOUBLE_EQ(all.items[1].margin, 0.3);
  EXPECT_EQ(all.items[0].candidates[0].name, "a");  // best first
  EXPECT_NEAR(all.items[0].margin, 0.05, 1e-12);
  EXPECT_EQ(all.items[2].candidates.size(), 1u);
  EXPECT_FALSE(all.items[0].rescored);
}

TEST_F(ReviewQueueTest, FiltersAndPages) {
  write({{"one", {{"a", 0.6}}, "b\t0.3"},
         {"two", {{"a", 0.9}}, ""},
         {"three", {{"b", 0.45}, {"a", 0.5}}, ""},
         {"four", {{"c", 0.2}}, ""}});
  queue();
  ReviewFilter b;
  b.categories = {"b"};
  EXPECT_EQ(ids(page(b)), (std::vector<Xapian::docid>{3, 1}));
  ReviewFilter b_or_c;
  b_or_c.categories = {"c", "b"};
  EXPECT_EQ(ids(page(b_or_c)), (std::vector<Xapian::docid>{3, 4, 1}));
  ReviewFilter matching;
  matching.matching.emplace(std::unordered_set<Xapian::docid>{2, 4});
  const ReviewPage kept = page(matching);
  EXPECT_EQ(ids(kept), (std::vector<Xapian::docid>{4, 2}));
  EXPECT_EQ(kept.total, 2u);
  const ReviewPage second = page(ReviewFilter(), 1, 2);
  EXPECT_EQ(ids(second), (std::vector<Xapian::docid>{4, 1}));
  EXPECT_EQ(second.total, 4u);
}

TEST_F(ReviewQueueTest, FollowsWritesToldAndUntold) {
  write({{"one", {{"a", 0.6}}, "b\t0.3"}, {"two", {{"a", 0.9}}, ""}});
  queue();
  EXPECT_EQ(page().total, 2u);
  // Told: document 1 set by an editor leaves the queue.
  {
    Xapian::WritableDatabase db(db_path_, Xapian::DB_OPEN);
    const Xapian::rev before = db.get_revision();
    Xapian::Document doc = db.get_document(1);
    doc.add_boolean_term(kEditorSetTerm);
    db.replace_document(1, doc);
    db.commit();
    db.close();
    queue_->written(Xapian::Database(db_path_), before, {1});
  }
  EXPECT_EQ(ids(page()), (std::vector<Xapian::docid>{2}));
  // Untold (another process): the queue is rebuilt from the index.
  write({{"three", {{"b", 0.45}, {"a", 0.5}}, ""}});
  EXPECT_EQ(ids(page()), (std::vector<Xapian::docid>{3, 2}));
}

TEST_F(ReviewQueueTest, ReranksTheDocumentsLikeTheCorrectedOne) {
  // Documents 1-3 share words with the corrected document 4; 5 shares none.
  write({{"apple banana cherry", {{"a", 0.9}}, "b\t0.1"},
         {"apple banana grape", {{"a", 0.8}}, "b\t0.1"},
         {"cherry banana plum", {{"a", 0.7}}, "b\t0.1"},
         {"apple banana cherry plum", {{"a", 0.6}}, "b\t0.2"},
         {"zebra yak walrus", {{"a", 0.95}}, "b\t0.1"}});
  int calls = 0;
  queue([&calls](const std::string& text) -> std::vector<Category> {
    ++calls;
    // The updated model: unsure about fruit, the more so with "grape".
    if (text.find("grape") != std::string::npos) return {{"b", 0.51}, {"a", 0.49}};
    return {{"a", 0.55}, {"b", 0.45}};
  });
  EXPECT_EQ(ids(page()), (std::vector<Xapian::docid>{4, 3, 2, 1, 5}));
  {
    Xapian::WritableDatabase db(db_path_, Xapian::DB_OPEN);
    const Xapian::rev before = db.get_revision();
    Xapian::Document doc = db.get_document(4);
    doc.add_boolean_term(kEditorSetTerm);
    db.replace_document(4, doc);
    db.commit();
    db.close();
    queue_->written(Xapian::Database(db_path_), before, {4});
  }
  const ReviewPage after = page();  // waits for the re-ranking
  EXPECT_EQ(ids(after), (std::vector<Xapian::docid>{2, 1, 3, 5}));
  EXPECT_TRUE(after.items[0].rescored);
  EXPECT_EQ(after.items[0].candidates[0].name, "b");
  EXPECT_NEAR(after.items[0].margin, 0.02, 1e-12);
  EXPECT_FALSE(after.items[3].rescored);  // nothing in common with the correction
  EXPECT_DOUBLE_EQ(after.items[3].margin, 0.85);
  const RerankStats stats = queue_->rerank_stats();
  EXPECT_EQ(stats.runs, 1u);
  EXPECT_EQ(stats.last_similar, 3u);
  EXPECT_EQ(stats.last_rescored, 3u);
  EXPECT_EQ(calls, 4);  // the corrected document once (the model's refit), then the three
  // The live model's scores outlive a rebuild.
  write({{"kiwi", {{"a", 0.99}}, ""}});
  EXPECT_EQ(ids(page()), (std::vector<Xapian::docid>{2, 1, 3, 5, 6}));
}

}  // namespace
}  // namespace autocat::cli
