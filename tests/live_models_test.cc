// Live Rocchio and Naive Bayes (classify/model/live_models.h through
// Categorizer::learn / forget): after learning and forgetting, each live
// model equals the one its train_* function fits on the resulting
// documents with the trained model's frozen parts (idf, vocabulary,
// selection, alpha, gamma); also after reopening (journal replay), without
// the training database, and while other threads classify.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <thread>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "autocat/error.h"
#include "classify/corpus/document_reader.h"
#include "classify/corpus/weighting.h"
#include "classify/decide/categorizer.h"
#include "classify/decide/explain.h"
#include "classify/methods/naive_bayes.h"
#include "classify/methods/rocchio.h"
#include "classify/model/live_models.h"
#include "classify/train/trainer.h"
#include "test_util.h"

namespace autocat::internal {
namespace {

using testing_util::TempDir;
using testing_util::test_data;

const Method kLiveMethods[] = {Method::kRocchio, Method::kNaiveBayes, Method::kBernoulliNaiveBayes,
                               Method::kComplementNaiveBayes};

std::vector<InputDocument> read_fixture(const std::string& name) {
  std::vector<InputDocument> docs;
  read_documents(
      {test_data(name)}, ReadOptions(),
      [&](InputDocument&& doc) { docs.push_back(std::move(doc)); }, nullptr);
  return docs;
}

// A document as a training corpus holds it: its analyzed terms, repeated
// by count, restricted to the model's vocabulary (what learn() sees).
LabelledTerms known_terms(const Categorizer& categorizer, const InputDocument& doc,
                          const std::vector<std::string>& labels) {
  const DocumentTerms terms = categorizer.document_terms(categorizer.analyzer().analyze(doc.text));
  LabelledTerms result;
  for (const TermCount& term : terms.terms) {
    result.terms.insert(result.terms.end(), term.count, categorizer.model().terms[term.term]);
  }
  result.labels = labels;
  return result;
}

// The documents of a corpus, by dense index.
std::vector<LabelledTerms> labelled_documents(const TrainingCorpus& corpus) {
  std::vector<LabelledTerms> docs(corpus.num_docs());
  for (TermId t = 0; t < corpus.num_terms(); ++t) {
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      auto& terms = docs[corpus.posting_doc[p]].terms;
      terms.insert(terms.end(), corpus.posting_wdf[p], corpus.terms[t]);
    }
  }
  for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
    for (uint32_t c : corpus.doc_categories[d]) docs[d].labels.push_back(corpus.categories[c]);
  }
  return docs;
}

// The corpus of `docs` with term ids of `vocabulary` (a superset of their
// terms): the vocabulary the trained model keeps frozen.
TrainingCorpus on_vocabulary(const std::vector<LabelledTerms>& docs,
                             const std::vector<std::string>& vocabulary) {
  const TrainingCorpus built = make_training_corpus(docs);
  TrainingCorpus corpus = built;
  corpus.terms = vocabulary;
  corpus.df.assign(vocabulary.size(), 0);
  corpus.postings_start.assign(vocabulary.size() + 1, 0);
  corpus.posting_doc.clear();
  corpus.posting_wdf.clear();
  for (TermId t = 0; t < vocabulary.size(); ++t) {
    corpus.postings_start[t] = corpus.posting_doc.size();
    const auto it = std::lower_bound(built.terms.begin(), built.terms.end(), vocabulary[t]);
    if (it == built.terms.end() || *it != vocabulary[t]) continue;
    const auto b = static_cast<TermId>(it - built.terms.begin());
    for (uint64_t p = built.postings_start[b]; p < built.postings_start[b + 1]; ++p) {
      corpus.posting_doc.push_back(built.posting_doc[p]);
      corpus.posting_wdf.push_back(built.posting_wdf[p]);
    }
    corpus.df[t] = static_cast<uint32_t>(corpus.posting_doc.size() - corpus.postings_start[t]);
  }
  corpus.postings_start[vocabulary.size()] = corpus.posting_doc.size();
  return corpus;
}

// Largest |a - b| / max(1, |b|) over two equally long arrays.
template <class T>
double max_relative_difference(const std::vector<T>& a, const std::vector<T>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (std::isinf(a[i]) && a[i] == b[i]) continue;
    const double scale = std::max(1.0, std::fabs(double(b[i])));
    worst = std::max(worst, std::fabs(double(a[i]) - double(b[i])) / scale);
  }
  return worst;
}

double nb_difference(const NaiveBayesModel& a, const NaiveBayesModel& b) {
  EXPECT_EQ(a.variant, b.variant);
  EXPECT_EQ(a.alpha, b.alpha);
  EXPECT_EQ(a.idf, b.idf);
  EXPECT_EQ(a.num_terms(), b.num_terms());
  return std::max({max_relative_difference(a.dense_weights(), b.dense_weights()),
                   max_relative_difference(a.log_prior, b.log_prior),
                   max_relative_difference(a.class_constant, b.class_constant)});
}

// Centroids as dense term x category weights.
std::vector<float> dense_centroids(const RocchioModel& model) {
  const size_t num_terms = model.term_start.size() - 1;
  std::vector<float> dense(num_terms * model.num_categories, 0.0f);
  for (size_t t = 0; t < num_terms; ++t) {
    for (uint64_t e = model.term_start[t]; e < model.term_start[t + 1]; ++e) {
      dense[t * model.num_categories + model.entry_category[e]] = model.entry_weight[e];
    }
  }
  return dense;
}

// The model train_* fits for `method` on `corpus` with `trained`'s frozen
// parts: its idf, selection, alpha, tf-idf choice and gamma.
struct BatchModels {
  RocchioModel rocchio;
  NaiveBayesModel nb, bnb, cnb;
};
BatchModels batch_models(const TrainingCorpus& corpus, const ModelState& trained) {
  const std::vector<float> idf = compute_idf(trained.df, trained.num_docs, trained.selected);
  const std::vector<float> no_idf;
  BatchModels batch;
  batch.rocchio = train_rocchio(corpus, idf, trained.rocchio_gamma);
  batch.nb = train_multinomial_nb(corpus, trained.selected, trained.multinomial_nb.alpha,
                                  trained.multinomial_nb.tfidf() ? idf : no_idf);
  batch.bnb = train_bernoulli_nb(corpus, trained.selected, trained.bernoulli_nb.alpha);
  batch.cnb = train_complement_nb(corpus, trained.selected, trained.complement_nb.alpha,
                                  trained.complement_nb.tfidf() ? idf : no_idf);
  return batch;
}

// Largest difference between each live model and its batch counterpart.
double live_vs_batch(const Categorizer& categorizer, const BatchModels& batch) {
  double worst = 0;
  for (Method method : kLiveMethods) {
    const auto live = categorizer.live_model(method);
    EXPECT_NE(live, nullptr) << method_name(method);
    if (!live) return 1e9;
    switch (method) {
      case Method::kRocchio:
        worst = std::max(worst, max_relative_difference(dense_centroids(live->rocchio),
                                                        dense_centroids(batch.rocchio)));
        break;
      case Method::kNaiveBayes:
        worst = std::max(worst, nb_difference(live->naive_bayes, batch.nb));
        break;
      case Method::kBernoulliNaiveBayes:
        worst = std::max(worst, nb_difference(live->naive_bayes, batch.bnb));
        break;
      default:
        worst = std::max(worst, nb_difference(live->naive_bayes, batch.cnb));
        break;
    }
  }
  return worst;
}

// How far the models moved from the trained ones: the test compares
// something that changed, not the trained model with itself.
double trained_vs_batch(const ModelState& trained, const BatchModels& batch) {
  return std::min(
      {max_relative_difference(dense_centroids(trained.rocchio), dense_centroids(batch.rocchio)),
       nb_difference(trained.multinomial_nb, batch.nb),
       nb_difference(trained.bernoulli_nb, batch.bnb),
       nb_difference(trained.complement_nb, batch.cnb)});
}

constexpr double kTolerance = 1e-5;

TrainOptions frozen_options() {
  TrainOptions options;
  options.tune_thresholds = false;
  options.rocchio_gamma = 0.3;  // gamma's negative part touches every category
  options.nb_alpha = 0.5;
  options.feature_selection = FeatureSelection::kChiSquare;
  options.num_features = 120;  // some terms left out of the vocabulary
  return options;
}

// In memory, both NB weightings: counts and tf-idf vectors.
class LiveModelsWeightingTest : public testing::TestWithParam<bool> {};

TEST_P(LiveModelsWeightingTest, LearnedOneAtATimeEqualsBatchWithFrozenParts) {
  const bool tfidf = GetParam();
  const TrainOptions options = frozen_options();
  const AnalyzerSettings settings = resolve_analyzer_options(options.analyzer);
  const Analyzer analyzer(settings);
  std::vector<LabelledTerms> train_docs;
  for (const InputDocument& doc : read_fixture("fixture_train.jsonl")) {
    std::vector<Token> tokens;
    analyzer.analyze(doc.text, &tokens);
    LabelledTerms terms;
    for (const Token& token : tokens) terms.terms.push_back(token.term);
    terms.labels = doc.labels;
    train_docs.push_back(std::move(terms));
  }
  auto corpus = std::make_shared<const TrainingCorpus>(make_training_corpus(train_docs));
  ModelState model = fit_model(*corpus, settings, options);
  ASSERT_FALSE(model.selected.empty());
  const std::vector<float> idf = compute_idf(model.df, model.num_docs, model.selected);
  const std::vector<float> no_idf;
  model.multinomial_nb = train_multinomial_nb(*corpus, model.selected, 0.5, tfidf ? idf : no_idf);
  model.complement_nb = train_complement_nb(*corpus, model.selected, 0.5, tfidf ? idf : no_idf);
  Categorizer categorizer(model, corpus);

  std::vector<LabelledTerms> all_docs = labelled_documents(*corpus);
  const std::vector<InputDocument> learned = read_fixture("fixture_test.jsonl");
  for (const InputDocument& doc : learned) {
    categorizer.learn(doc.id, doc.text, doc.labels);
    all_docs.push_back(known_terms(categorizer, doc, doc.labels));
  }
  // Forgetting a learned document subtracts exactly what it added.
  categorizer.forget(learned[2].id);
  all_docs.erase(all_docs.begin() + static_cast<std::ptrdiff_t>(corpus->num_docs() + 2));

  const BatchModels batch = batch_models(on_vocabulary(all_docs, model.terms), model);
  EXPECT_GT(trained_vs_batch(model, batch), 100 * kTolerance);
  EXPECT_LE(live_vs_batch(categorizer, batch), kTolerance);
  EXPECT_EQ(categorizer.live_model(Method::kNaiveBayes)->naive_bayes.tfidf(), tfidf);
}

INSTANTIATE_TEST_SUITE_P(CountsAndTfidf, LiveModelsWeightingTest, testing::Bool());

class LiveModelsTest : public testing::Test {
 protected:
  void SetUp() override {
    model_ = dir_.file("model");
    train_model({test_data("fixture_train.jsonl")}, model_, frozen_options(), ReadOptions(),
                nullptr);
  }
  // The trained documents by dense index, with their ids.
  std::vector<LabelledTerms> trained_documents(const Categorizer& categorizer,
                                               std::vector<std::string>* ids) const {
    const Xapian::Database db(categorizer.paths().training_db);
    std::vector<Xapian::docid> docids;
    for (auto it = db.postlist_begin(""); it != db.postlist_end(""); ++it) docids.push_back(*it);
    ids->assign(docids.size(), "");
    for (auto term = db.allterms_begin(kIdPrefix); term != db.allterms_end(kIdPrefix); ++term) {
      const auto docid = *db.postlist_begin(*term);
      const auto d = std::lower_bound(docids.begin(), docids.end(), docid) - docids.begin();
      (*ids)[static_cast<size_t>(d)] = (*term).substr(kIdPrefix.size());
    }
    return labelled_documents(load_training_corpus(db));
  }

  TempDir dir_;
  std::string model_;
};

TEST_F(LiveModelsTest, LearnReplaceAndForgetEqualBatchAlsoAfterReopening) {
  Categorizer categorizer(model_);
  // Nothing learned, no journal: the trained models, not live ones.
  for (Method method : kLiveMethods) EXPECT_EQ(categorizer.live_model(method), nullptr);

  std::vector<std::string> ids;
  std::vector<LabelledTerms> docs = trained_documents(categorizer, &ids);
  const std::vector<InputDocument> learned = read_fixture("fixture_test.jsonl");
  for (const InputDocument& doc : learned) {
    categorizer.learn(doc.id, doc.text, doc.labels);
    ids.push_back(doc.id);
    docs.push_back(known_terms(categorizer, doc, doc.labels));
  }
  const auto erase = [&](const std::string& id) {
    const auto at = std::find(ids.begin(), ids.end(), id) - ids.begin();
    ids.erase(ids.begin() + at);
    docs.erase(docs.begin() + at);
  };
  // A trained document forgotten, a learned one forgotten, a learned one
  // relearned under another label, a trained one replaced by learning its id.
  categorizer.forget("sp-02");
  erase("sp-02");
  categorizer.forget(learned[1].id);
  erase(learned[1].id);
  categorizer.learn(learned[0].id, learned[0].text, {"food"});
  erase(learned[0].id);
  docs.push_back(known_terms(categorizer, learned[0], {"food"}));
  categorizer.learn("sp-01", learned[3].text, learned[3].labels);
  erase("sp-01");
  docs.push_back(known_terms(categorizer, learned[3], learned[3].labels));

  const ModelState& trained = categorizer.model();
  const BatchModels batch = batch_models(on_vocabulary(docs, trained.terms), trained);
  EXPECT_GT(trained_vs_batch(trained, batch), 100 * kTolerance);
  EXPECT_LE(live_vs_batch(categorizer, batch), kTolerance);

  const Categorizer reopened(model_);
  EXPECT_LE(live_vs_batch(reopened, batch), kTolerance);
  EXPECT_TRUE(reopened.live_status().warnings.empty());
}

// Words of the sports documents that the feature selection keeps.
const char kMatch[] = "The team scored a goal to win the match.";

TEST_F(LiveModelsTest, ScoresFollowTheLiveModels) {
  Categorizer categorizer(model_);
  const std::string text = kMatch;
  const DocumentTerms doc = categorizer.document_terms(categorizer.analyzer().analyze(text));
  const auto food = static_cast<size_t>(categorizer.category_index("food"));
  std::vector<double> before(4);
  for (Method method : kLiveMethods) {
    ClassifyOptions options;
    options.method = method;
    before[static_cast<size_t>(method) - 1] = categorizer.scores(doc, options)[food];
    EXPECT_EQ(categorizer.classify(text, options).front().name, "sports") << method_name(method);
  }
  // Each score after a change fits the model again: it keeps rising.
  for (int i = 0; i < 3; ++i) {
    categorizer.learn("live-" + std::to_string(i), text, {"food"});
    for (Method method : kLiveMethods) {
      ClassifyOptions options;
      options.method = method;
      const double score = categorizer.scores(doc, options)[food];
      EXPECT_GT(score, before[static_cast<size_t>(method) - 1]) << method_name(method);
      before[static_cast<size_t>(method) - 1] = score;
    }
  }
  for (Method method : kLiveMethods) {
    ClassifyOptions options;
    options.method = method;
    std::vector<double> expected;
    categorizer.live_model(method)->classifier->score(doc, options, &expected);
    EXPECT_EQ(categorizer.scores(doc, options), expected) << method_name(method);
    EXPECT_EQ(categorizer.classify(text, options).front().name, "food") << method_name(method);
  }
}

TEST_F(LiveModelsTest, ExplainShowsTheLiveModels) {
  Categorizer categorizer(model_);
  const DocumentTerms doc = categorizer.document_terms(categorizer.analyzer().analyze(kMatch));
  for (int i = 0; i < 3; ++i) categorizer.learn("live-" + std::to_string(i), kMatch, {"food"});
  ExplainOptions options;
  options.classify.method = Method::kNaiveBayes;
  const Explanation explanation = Explainer(categorizer).explain(doc, options);
  ASSERT_EQ(explanation.category, "food");
  // The gap not due to terms comes from the live priors (3 more food documents).
  const NaiveBayesModel& live = categorizer.live_model(Method::kNaiveBayes)->naive_bayes;
  const auto food = static_cast<size_t>(categorizer.category_index("food"));
  const auto versus = static_cast<size_t>(categorizer.category_index(explanation.versus));
  EXPECT_DOUBLE_EQ(explanation.base, live.log_prior[food] + live.class_constant[food] -
                                         live.log_prior[versus] - live.class_constant[versus]);
  EXPECT_NE(live.log_prior[food], categorizer.model().multinomial_nb.log_prior[food]);
  options.classify.method = Method::kRocchio;
  const Explanation rocchio = Explainer(categorizer).explain(doc, options);
  ASSERT_EQ(rocchio.category, "food");
  EXPECT_FALSE(rocchio.terms.empty());  // the trained food centroid has none of these terms
}

// Each Naive Bayes variant refits with its own trained smoothing, also when
// it is the first (or only) method a process scores with after a learn.
TEST_F(LiveModelsTest, EachNaiveBayesAloneRefitsWithItsTrainedAlpha) {
  for (Method method :
       {Method::kBernoulliNaiveBayes, Method::kNaiveBayes, Method::kComplementNaiveBayes}) {
    const std::string copy = dir_.file(std::string("alone-") + method_name(method));
    std::filesystem::copy(model_, copy, std::filesystem::copy_options::recursive);
    Categorizer categorizer(copy);
    categorizer.learn("live-1", "The comet's tail near Jupiter.", {"science"});
    const auto live = categorizer.live_model(method);
    ASSERT_NE(live, nullptr) << method_name(method);
    EXPECT_EQ(live->naive_bayes.alpha, frozen_options().nb_alpha) << method_name(method);
  }
}

TEST_F(LiveModelsTest, LearningWithoutTheTrainingDatabaseFailsAndChangesNothing) {
  Categorizer categorizer(model_);
  std::filesystem::remove_all(categorizer.paths().training_db);
  try {
    categorizer.learn("live-1", "The comet's tail near Jupiter.", {"science"});
    FAIL() << "learned without the training database";
  } catch (const NotFoundError& e) {
    EXPECT_NE(std::string(e.what()).find("training database"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nothing was learned"), std::string::npos) << e.what();
  }
  EXPECT_THROW(categorizer.forget("sp-01"), NotFoundError);
  EXPECT_FALSE(std::filesystem::exists(categorizer.paths().journal));
  ClassifyOptions nb;
  nb.method = Method::kNaiveBayes;
  EXPECT_FALSE(categorizer.classify("The comet's tail near Jupiter.", nb).empty());
}

TEST_F(LiveModelsTest, WithoutAJournalClassificationNeverReadsTheTrainingDatabase) {
  std::filesystem::remove_all(resolve_model_dir(model_).training_db);
  const Categorizer node(model_);
  for (Method method : kLiveMethods) {
    ClassifyOptions options;
    options.method = method;
    EXPECT_EQ(node.classify(kMatch, options).front().name, "sports") << method_name(method);
    EXPECT_EQ(node.live_model(method), nullptr);
  }
  EXPECT_TRUE(node.live_status().warnings.empty());
}

TEST_F(LiveModelsTest, ClassifyOnlyNodeWithAJournalKeepsTheTrainedModelsAndWarns) {
  const std::string text = kMatch;
  std::vector<double> trained_scores;
  ClassifyOptions cnb;
  cnb.method = Method::kComplementNaiveBayes;
  {
    Categorizer categorizer(model_);
    const DocumentTerms doc = categorizer.document_terms(categorizer.analyzer().analyze(text));
    trained_scores = categorizer.scores(doc, cnb);
    categorizer.learn("live-1", text, {"food"});
    ASSERT_NE(categorizer.scores(doc, cnb), trained_scores);
  }
  std::filesystem::remove_all(resolve_model_dir(model_).training_db);
  const Categorizer node(model_);
  const DocumentTerms doc = node.document_terms(node.analyzer().analyze(text));
  EXPECT_EQ(node.scores(doc, cnb), trained_scores);
  EXPECT_EQ(node.live_model(Method::kComplementNaiveBayes), nullptr);
  // kNN too keeps its trained index rather than failing every search.
  ClassifyOptions knn;
  knn.method = Method::kKnn;
  EXPECT_FALSE(node.classify(text, knn).empty());
  const auto warnings = node.live_status().warnings;
  const auto warns = [&](const std::string& what) {
    return std::any_of(warnings.begin(), warnings.end(),
                       [&](const std::string& w) { return w.find(what) != std::string::npos; });
  };
  EXPECT_TRUE(warns("Rocchio, Naive Bayes, svm and logreg classify with the models as trained"));
  EXPECT_TRUE(warns("kNN classifies with the index as trained"));
}

// Under ThreadSanitizer in CI: readers score with Rocchio and NB (each
// score may fit a new model) while a writer learns and forgets.
TEST_F(LiveModelsTest, ConcurrentLearnAndClassifyWithLiveModels) {
  Categorizer categorizer(model_);
  const std::vector<InputDocument> learned = read_fixture("fixture_test.jsonl");
  std::atomic<bool> done{false};
  std::atomic<int> scored{0};
  std::vector<std::thread> readers;
  for (Method method : {Method::kRocchio, Method::kComplementNaiveBayes, Method::kCombo}) {
    readers.emplace_back([&, method] {
      ClassifyOptions options;
      options.method = method;
      size_t i = 0;
      while (!done.load()) {
        const auto assigned = categorizer.classify(learned[i++ % learned.size()].text, options);
        EXPECT_FALSE(assigned.empty());
        ++scored;
      }
    });
  }
  for (int round = 0; round < 20; ++round) {
    const InputDocument& doc = learned[size_t(round) % learned.size()];
    const std::string id = "live-" + std::to_string(round);
    categorizer.learn(id, doc.text, doc.labels);
    if (round % 3 == 0) categorizer.forget(id);
  }
  while (scored.load() < 50) std::this_thread::yield();
  done = true;
  for (std::thread& reader : readers) reader.join();
  // After the writer: the live models are those a reopen replays.
  const Categorizer reopened(model_);
  for (Method method : kLiveMethods) {
    ClassifyOptions options;
    options.method = method;
    const DocumentTerms doc =
        categorizer.document_terms(categorizer.analyzer().analyze(learned[0].text));
    const auto a = categorizer.scores(doc, options);
    const auto b = reopened.scores(doc, options);
    EXPECT_LE(max_relative_difference(a, b), kTolerance) << method_name(method);
  }
}

// Heap bytes in use (0 where the allocator does not say, e.g. under a
// sanitizer's allocator).
size_t heap_in_use() {
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;  // small blocks and mmapped ones
#else
  return 0;
#endif
}

// A first learn on a model of many categories, and the first model of
// every method the sums feed after it, hold memory in proportion to the
// (term, category) pairs of the documents, not categories x vocabulary:
// 2,000 categories of one document each over 2,000 terms hold 20,000
// pairs, where one dense sum would be 4 million doubles (32 MB).
TEST(LiveModelsManyCategoriesTest, FirstLearnHoldsNoCategoriesTimesVocabulary) {
  constexpr uint32_t kCategories = 2000;
  constexpr uint32_t kTerms = 2000;
  std::vector<LabelledTerms> docs;
  for (uint32_t c = 0; c < kCategories; ++c) {
    LabelledTerms doc;
    for (uint32_t i = 0; i < 10; ++i)
      doc.terms.push_back("t" + std::to_string((c * 7 + i * 13) % kTerms));
    doc.labels.push_back("c" + std::to_string(c));
    docs.push_back(std::move(doc));
  }
  auto corpus = std::make_shared<const TrainingCorpus>(make_training_corpus(docs));
  ASSERT_EQ(corpus->num_categories(), kCategories);
  ASSERT_EQ(corpus->num_terms(), kTerms);
  ModelState model;
  model.selected.assign(kTerms, 1);
  model.rocchio_gamma = 0.3;
  model.multinomial_nb.alpha = model.bernoulli_nb.alpha = model.complement_nb.alpha = 0.5;
  const std::vector<float> idf = compute_idf(corpus->df, corpus->num_docs(), model.selected);
  LiveModels live(model, idf, corpus, {}, {});
  DocumentTerms doc;
  for (TermId t : {3U, 70U, 1999U}) doc.terms.push_back(TermCount{t, 2});

  const size_t before = heap_in_use();
  live.learn("new", doc, {5, 1500});
  for (Method method : kLiveMethods) {
    const std::shared_ptr<const LiveModel> fitted = live.model(method);
    ASSERT_TRUE(fitted);
    if (method != Method::kRocchio) {
      EXPECT_TRUE(fitted->naive_bayes.term_weight.empty());
      ASSERT_TRUE(fitted->naive_bayes.weight_rows);
      EXPECT_LE(fitted->naive_bayes.weight_rows->entry_category.size(), 20010U);
    }
  }
  const size_t grown = heap_in_use() - std::min(before, heap_in_use());
  // Three kinds of sums (counts, presence, tf-idf), 20,006 pairs each.
  EXPECT_LE(live.sum_entries(), 3U * 20010U);
  EXPECT_LT(grown, size_t{8} << 20) << "bytes";

  // The learned document counts: category 5 now wins on its terms.
  std::vector<double> scores;
  live.model(Method::kNaiveBayes)->classifier->score(doc, ClassifyOptions(), &scores);
  EXPECT_EQ(std::max_element(scores.begin(), scores.end()) - scores.begin(), 5);
}

}  // namespace
}  // namespace autocat::internal
