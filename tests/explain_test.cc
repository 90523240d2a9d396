// Explanations (classify/decide/explain.h) and `autocat explain`, on a model trained
// from the fixture corpus (split "train": food, science, sports).
#include "classify/decide/explain.h"

#include <gtest/gtest.h>
#include <xapian.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "classify/corpus/weighting.h"
#include "classify/decide/categorizer.h"
#include "classify/io/model_dir.h"
#include "classify/methods/calibration.h"
#include "classify/methods/combo.h"
#include "classify/methods/knn_index_file.h"
#include "classify/methods/naive_bayes.h"
#include "classify/model/model_io.h"
#include "tests/cli_test_util.h"
#include "tests/test_util.h"

namespace autocat::internal {
namespace {

using testing_util::CliResult;
using testing_util::json;
using testing_util::lines_of;
using testing_util::number_at;
using testing_util::run_autocat;
using testing_util::string_at;
using testing_util::TempDir;
using testing_util::test_data;
using testing_util::write_file;

const char kSportsText[] = "The striker scored in the match and the team won the final.";

// Everything: every neighbour of k, every contributing term.
ExplainOptions all_of(Method method) {
  ExplainOptions options;
  options.classify.method = method;
  options.max_categories = 1000;
  options.max_neighbours = 1000;
  options.max_terms = 1000;
  return options;
}

// Labels of the training documents of the fixture, by id.
std::map<std::string, std::vector<std::string>> fixture_training_labels() {
  std::map<std::string, std::vector<std::string>> labels;
  std::istringstream in(testing_util::read_file(test_data("fixture_train.jsonl")));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    Json record;
    std::string error;
    EXPECT_TRUE(parse_json(line, &record, &error)) << error;
    if (string_at(record, "split") != "train") continue;
    std::vector<std::string>& names = labels[string_at(record, "id")];
    for (const Json& label : record.at("labels")) {
      names.push_back(label.get<std::string>());
    }
  }
  return labels;
}

class ExplainTest : public testing::Test {
 protected:
  // One model for the whole suite, trained with the real tool.
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    model_ = dir_->file("model");
    const CliResult trained = run_autocat(
        {"train", "--model", model_, "--split", "train", test_data("fixture_train.jsonl")});
    train_error_ = trained.exit_code == 0
                       ? ""
                       : trained.err + " (exit " + std::to_string(trained.exit_code) + ")";
    if (train_error_.empty()) categorizer_ = new Categorizer(model_);
  }
  static void TearDownTestSuite() {
    delete categorizer_;
    delete dir_;
    categorizer_ = nullptr;
    dir_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(categorizer_, nullptr) << train_error_; }

  static DocumentTerms terms_of(const std::string& text) {
    return categorizer_->document_terms(categorizer_->analyzer().analyze(text));
  }
  static uint32_t category_index(const std::string& name) {
    const auto& names = categorizer_->categories();
    return static_cast<uint32_t>(std::find(names.begin(), names.end(), name) - names.begin());
  }
  // Writes one JSON Lines document and returns the file's path.
  std::string input(const std::string& id, const std::string& text) {
    Json record = internal::Json::object();
    record["id"] = internal::Json(id);
    record["text"] = internal::Json(text);
    const std::string path = scratch_.file(id + ".jsonl");
    write_file(path, internal::dump_json(record) + "\n");
    return path;
  }

  static TempDir* dir_;
  static std::string model_;
  static std::string train_error_;
  static Categorizer* categorizer_;
  TempDir scratch_;
};

TempDir* ExplainTest::dir_ = nullptr;
std::string ExplainTest::model_;
std::string ExplainTest::train_error_;
Categorizer* ExplainTest::categorizer_ = nullptr;

TEST_F(ExplainTest, DenseIndexesMapToTrainingDocidsInOrder) {
  Explainer explainer(*categorizer_);
  const std::vector<Xapian::docid>& docids = explainer.training_docids();
  const KnnIndex& index = categorizer_->knn_index();
  ASSERT_EQ(docids.size(), index.num_docs());
  EXPECT_EQ(docids.size(), 22u);
  EXPECT_TRUE(std::is_sorted(docids.begin(), docids.end()));
  // Each document's XC terms are the labels KnnIndex holds for its index,
  // and its data is the id of its Q term.
  Xapian::Database db(resolve_model_dir(model_).training_db);
  for (uint32_t d = 0; d < docids.size(); ++d) {
    const Xapian::Document doc = db.get_document(docids[d]);
    std::vector<uint32_t> labels;
    bool has_id_term = false;
    for (auto it = doc.termlist_begin(); it != doc.termlist_end(); ++it) {
      const std::string term = *it;
      if (term.rfind("XC", 0) == 0) labels.push_back(category_index(term.substr(2)));
      if (term == "Q" + doc.get_data()) has_id_term = true;
    }
    std::sort(labels.begin(), labels.end());
    EXPECT_EQ(labels, index.doc_categories(d).to_vector()) << doc.get_data();
    EXPECT_TRUE(has_id_term) << doc.get_data();
  }
}

TEST_F(ExplainTest, KnnNeighboursOfASportsText) {
  Explainer explainer(*categorizer_);
  const DocumentTerms doc = terms_of(kSportsText);
  const Explanation e = explainer.explain(doc, all_of(Method::kKnn));
  EXPECT_EQ(e.method, Method::kKnn);
  ASSERT_EQ(e.assigned.size(), 1u);
  EXPECT_EQ(e.assigned[0].name, "sports");
  EXPECT_TRUE(e.note.empty()) << e.note;

  // Exactly KnnIndex::neighbours(), most similar first.
  const std::vector<KnnIndex::Neighbour> expected =
      categorizer_->knn_index().neighbours(doc, categorizer_->knn_k());
  ASSERT_EQ(e.neighbours.size(), expected.size());
  ASSERT_FALSE(e.neighbours.empty());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(e.neighbours[i].doc, expected[i].doc);
    EXPECT_EQ(e.neighbours[i].similarity, double(expected[i].similarity));
    if (i > 0) {
      EXPECT_GE(e.neighbours[i - 1].similarity, e.neighbours[i].similarity);
    }
  }
  // Ids and labels are those of the fixture; most neighbours are sports.
  const auto fixture = fixture_training_labels();
  size_t sports = 0;
  for (const ExplainedNeighbour& neighbour : e.neighbours) {
    auto it = fixture.find(neighbour.id);
    ASSERT_NE(it, fixture.end()) << neighbour.id;
    EXPECT_EQ(neighbour.labels, it->second) << neighbour.id;
    sports += neighbour.labels == std::vector<std::string>{"sports"};
  }
  EXPECT_GT(2 * sports, e.neighbours.size());
  EXPECT_EQ(e.neighbours[0].id, "sp-01");
  EXPECT_EQ(e.neighbours[0].labels, std::vector<std::string>{"sports"});

  // Top categories: sports first, every category listed.
  ASSERT_EQ(e.top.size(), 3u);
  EXPECT_EQ(e.top[0].name, "sports");
  EXPECT_EQ(e.top[0].score, e.assigned[0].score);
}

TEST_F(ExplainTest, KnnTermsSumToTheNearestNeighboursSimilarity) {
  Explainer explainer(*categorizer_);
  const Explanation e = explainer.explain(terms_of(kSportsText), all_of(Method::kKnn));
  EXPECT_EQ(e.category, "sports");
  EXPECT_EQ(e.neighbour, "sp-01");  // the nearest neighbour is itself sports
  ASSERT_FALSE(e.neighbours.empty());
  EXPECT_NEAR(e.terms_total, e.neighbours[0].similarity, 1e-5);
  ASSERT_EQ(e.terms.size(), e.num_contributing_terms);
  double sum = 0;
  for (size_t i = 0; i < e.terms.size(); ++i) {
    EXPECT_GT(e.terms[i].contribution, 0.0) << e.terms[i].term;
    if (i > 0) {
      EXPECT_GE(e.terms[i - 1].contribution, e.terms[i].contribution);
    }
    sum += e.terms[i].contribution;
  }
  EXPECT_NEAR(sum, e.terms_total, 1e-12);
  // "The striker scored ... match ... team won" shares these with sp-01
  // ("The striker scored twice as the home team won the match 3-1.").
  std::set<std::string> shared;
  for (const TermContribution& term : e.terms) shared.insert(term.term);
  EXPECT_EQ(shared, (std::set<std::string>{"match", "scored", "striker", "team", "won"}));
}

// With class-concentration term weights (--knn-concentration 1) the terms
// still sum to the nearest neighbour's similarity: explain weighs them as
// the index does.
TEST_F(ExplainTest, KnnTermsSumToTheSimilarityWithConcentrationWeights) {
  const std::string model = scratch_.file("concentration");
  const CliResult trained =
      run_autocat({"train", "--model", model, "--split", "train", "--knn-concentration", "1",
                   test_data("fixture_train.jsonl")});
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  const Categorizer categorizer(model);
  ASSERT_EQ(categorizer.model().knn_concentration, 1.0);
  Explainer explainer(categorizer);
  const Explanation e =
      explainer.explain(categorizer.document_terms(categorizer.analyzer().analyze(kSportsText)),
                        all_of(Method::kKnn));
  ASSERT_FALSE(e.neighbours.empty());
  ASSERT_FALSE(e.terms.empty());
  EXPECT_NEAR(e.terms_total, e.neighbours[0].similarity, 1e-5);
  // A weighting different from idf alone: the suite's model (same data)
  // finds another similarity for its nearest neighbour.
  Explainer plain(*categorizer_);
  const Explanation idf_alone = plain.explain(terms_of(kSportsText), all_of(Method::kKnn));
  if (categorizer_->model().knn_concentration != 1.0) {
    EXPECT_NE(e.neighbours[0].similarity, idf_alone.neighbours[0].similarity);
  }
}

// With double-log tf the terms still sum to the nearest neighbour's
// similarity: explain weighs the query and the neighbour as the index does.
// The text repeats its terms, where the transforms differ.
TEST_F(ExplainTest, KnnTermsSumToTheSimilarityWithDoubleLogTf) {
  const std::string model = scratch_.file("double-log");
  const CliResult trained = run_autocat(
      {"train", "--model", model, "--split", "train", test_data("fixture_train.jsonl")});
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  // The model and its index file made over with double-log tf.
  const ModelPaths paths = resolve_model_dir(model);
  ModelState state = read_model_file(paths.model_file);
  state.knn_tf = KnnTf::kDoubleLog;
  write_model_file(paths.model_file, state);
  const TrainingCorpus corpus = load_training_corpus(Xapian::Database(paths.training_db));
  write_knn_index(corpus, state.knn_weights(compute_idf(state.df, state.num_docs, state.selected)),
                  KnnTf::kDoubleLog, paths.knn_index);
  const Categorizer categorizer(model);
  ASSERT_EQ(categorizer.knn_index().tf(), KnnTf::kDoubleLog);
  const std::string text = "The striker striker scored scored scored in the match match.";
  Explainer explainer(categorizer);
  const Explanation e = explainer.explain(
      categorizer.document_terms(categorizer.analyzer().analyze(text)), all_of(Method::kKnn));
  ASSERT_FALSE(e.neighbours.empty());
  ASSERT_FALSE(e.terms.empty());
  EXPECT_NEAR(e.terms_total, e.neighbours[0].similarity, 1e-5);
  // Sublinear tf finds another similarity for the same text.
  state.knn_tf = KnnTf::kSublinear;
  const Categorizer sublinear(state, std::make_shared<const TrainingCorpus>(corpus));
  const auto found = sublinear.knn_index().neighbours(
      sublinear.document_terms(sublinear.analyzer().analyze(text)), 1);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_GT(std::fabs(found[0].similarity - e.neighbours[0].similarity), 1e-4);
}

TEST_F(ExplainTest, RocchioTermsSumToTheScore) {
  Explainer explainer(*categorizer_);
  ClassifyOptions classify;
  classify.method = Method::kRocchio;
  for (const char* text : {kSportsText, "The chemistry lab measured the reaction of the particle.",
                           "Bake the bread with butter, flour and a pinch of salt."}) {
    const DocumentTerms doc = terms_of(text);
    const Explanation e = explainer.explain(doc, all_of(Method::kRocchio));
    // The terms add up to the raw cosine, before calibration maps it to a
    // probability (calibration.h).
    std::vector<double> cosines(categorizer_->categories().size());
    categorizer_->classifier(Method::kRocchio).score(doc, classify, &cosines);
    ASSERT_EQ(e.assigned.size(), 1u) << text;
    EXPECT_EQ(e.category, e.assigned[0].name);
    EXPECT_NEAR(e.terms_total, cosines[category_index(e.category)], 1e-5) << text;
    double sum = 0;
    for (const TermContribution& term : e.terms) sum += term.contribution;
    EXPECT_NEAR(sum, e.terms_total, 1e-12) << text;
    EXPECT_TRUE(e.neighbours.empty());
    EXPECT_EQ(e.base, 0.0);
  }
}

TEST_F(ExplainTest, NaiveBayesTermsSumToTheLogScoreGap) {
  Explainer explainer(*categorizer_);
  const struct {
    Method method;
    const NaiveBayesModel& model;
  } cases[] = {{Method::kNaiveBayes, categorizer_->model().multinomial_nb},
               {Method::kBernoulliNaiveBayes, categorizer_->model().bernoulli_nb},
               {Method::kComplementNaiveBayes, categorizer_->model().complement_nb}};
  for (const auto& c : cases) {
    const DocumentTerms doc = terms_of(kSportsText);
    const Explanation e = explainer.explain(doc, all_of(c.method));
    ClassifyOptions classify;
    classify.method = c.method;
    const std::vector<Category> ranked = categorizer_->ranked(categorizer_->scores(doc, classify));
    ASSERT_EQ(e.assigned.size(), 1u);
    EXPECT_EQ(e.category, "sports") << method_name(c.method);
    EXPECT_EQ(e.versus, ranked[1].name) << method_name(c.method);

    std::vector<double> log_scores;
    NaiveBayesClassifier(c.model).log_scores(doc, &log_scores);
    const double gap =
        log_scores[category_index(e.category)] - log_scores[category_index(e.versus)];
    EXPECT_GT(gap, 0.0);
    EXPECT_NEAR(e.terms_total + e.base, gap, 1e-4) << method_name(c.method);
    double sum = 0;
    for (const TermContribution& term : e.terms) sum += term.contribution;
    EXPECT_NEAR(sum, e.terms_total, 1e-9) << method_name(c.method);
    for (size_t i = 1; i < e.terms.size(); ++i) {
      EXPECT_GE(e.terms[i - 1].contribution, e.terms[i].contribution);
    }
  }
}

// combo: each member's raw and calibrated score of the best category and its
// stacking weight; with the bias they give the stacked probability, which
// one-of divides by the sum over categories to get the score.
TEST_F(ExplainTest, ComboMembersAddUpToTheScore) {
  const ComboModel& combo = categorizer_->model().combo;
  ASSERT_FALSE(combo.empty()) << "the fixture model is tuned, so combo is stacked";
  const std::vector<Calibration>& calibration = categorizer_->model().calibration;
  Explainer explainer(*categorizer_);
  for (const char* text : {kSportsText, "The chemistry lab measured the reaction of the particle.",
                           "Bake the bread with butter, flour and a pinch of salt."}) {
    const DocumentTerms doc = terms_of(text);
    const Explanation e = explainer.explain(doc, all_of(Method::kCombo));
    ASSERT_EQ(e.assigned.size(), 1u) << text;
    EXPECT_EQ(e.category, e.assigned[0].name);
    EXPECT_TRUE(e.stacked);
    const uint32_t c = category_index(e.category);
    ASSERT_EQ(e.members.size(), combo.members.size()) << text;
    double sum = 0;
    std::vector<std::vector<double>> logits(e.members.size());
    for (size_t m = 0; m < e.members.size(); ++m) {
      const ComboMemberPart& part = e.members[m];
      EXPECT_EQ(static_cast<int32_t>(part.method), combo.members[m]);
      ClassifyOptions member;
      member.method = part.method;
      std::vector<double> raw(categorizer_->categories().size());
      categorizer_->classifier(part.method).score(doc, member, &raw);
      EXPECT_DOUBLE_EQ(part.score, raw[c]) << method_name(part.method);
      for (uint32_t other = 0; other < raw.size(); ++other) {
        logits[m].push_back(
            calibrated_logit(calibration[static_cast<size_t>(part.method)], other, raw[other]));
      }
      const double logit =
          calibrated_logit(calibration[static_cast<size_t>(part.method)], c, raw[c]);
      EXPECT_DOUBLE_EQ(part.logit, logit) << method_name(part.method);
      EXPECT_NEAR(part.probability, 1.0 / (1.0 + std::exp(-logit)), 1e-12);
      EXPECT_FLOAT_EQ(static_cast<float>(part.weight), combo.weights[c * combo.stride() + m]);
      EXPECT_DOUBLE_EQ(part.contribution, part.logit * part.weight);
      sum += part.contribution;
    }
    EXPECT_NEAR(e.terms_total, sum, 1e-12) << text;
    EXPECT_FLOAT_EQ(static_cast<float>(e.base),
                    combo.weights[c * combo.stride() + combo.members.size()]);
    EXPECT_NEAR(e.stacked_probability, 1.0 / (1.0 + std::exp(-(e.base + sum))), 1e-12) << text;
    // One-of: the stacked probabilities of all categories divide it.
    std::vector<double> stacked(logits[0].size());
    combo_probabilities(combo, Decision::kAnyOf, logits, &stacked);
    double total = 0;
    for (double p : stacked) total += p;
    EXPECT_NEAR(stacked[c], e.stacked_probability, 1e-9) << text;
    EXPECT_NEAR(e.assigned[0].score, e.stacked_probability / total, 1e-9) << text;
  }

  // The command line shows the same parts.
  CliResult result =
      run_autocat({"explain", "--model", model_, "--method", "combo", input("s1", kSportsText)});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("  members for sports (contribution = calibrated log-odds x stacking "
                            "weight):\n"),
            std::string::npos)
      << result.out;
  for (int32_t member : combo.members) {
    EXPECT_NE(result.out.find("\n    " + method_name(static_cast<Method>(member)) + " "),
              std::string::npos)
        << result.out;
  }
  EXPECT_NE(result.out.find("(one-of divides by the sum over categories)"), std::string::npos)
      << result.out;
  result = run_autocat(
      {"explain", "--model", model_, "--method", "combo", "--json", input("s2", kSportsText)});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const Json line = json(lines_of(result.out)[0]);
  const Json* members = testing_util::member(line, "members");
  ASSERT_TRUE(members != nullptr && members->is_array()) << result.out;
  ASSERT_EQ(members->size(), combo.members.size());
  for (const Json& part : *members) {
    for (const char* field : {"score", "probability", "logit", "weight", "contribution"}) {
      EXPECT_TRUE(testing_util::member(part, field) != nullptr && part.at(field).is_number())
          << field;
    }
    EXPECT_NEAR(number_at(part, "contribution"),
                number_at(part, "logit") * number_at(part, "weight"), 1e-9);
  }
  EXPECT_GT(number_at(line.at("terms_for"), "stacked_probability"), 0.0);
}

// combo (the default method of larger collections) explains each top
// category, not only the winner: every member's calibrated probability and stacking weight, as
// --json and as two tables of the human output, one row per category.
TEST_F(ExplainTest, ComboShowsEachMembersProbabilityAndWeightForTheTopCategories) {
  const ComboModel& combo = categorizer_->model().combo;
  ASSERT_FALSE(combo.empty()) << "the fixture model is tuned, so combo is stacked";
  const std::vector<Calibration>& calibration = categorizer_->model().calibration;
  const std::string text = "The team scored a goal, then the chef baked bread for the match.";
  const std::string path = input("mixed", text);
  CliResult result = run_autocat(
      {"explain", "--model", model_, "--method", "combo", "--json", "--top", "3", path});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const Json line = json(lines_of(result.out)[0]);
  EXPECT_EQ(string_at(line, "method"), "combo");
  const Json& top = line.at("top");
  ASSERT_EQ(top.size(), 3u);
  const Json* combo_top = testing_util::member(line, "combo_top");
  ASSERT_TRUE(combo_top != nullptr && combo_top->is_array()) << result.out;
  ASSERT_EQ(combo_top->size(), top.size()) << result.out;
  // The members' raw scores, computed here on their own.
  const DocumentTerms doc = terms_of(text);
  std::vector<std::vector<double>> raw(combo.members.size());
  for (size_t m = 0; m < combo.members.size(); ++m) {
    ClassifyOptions member;
    member.method = static_cast<Method>(combo.members[m]);
    raw[m].resize(categorizer_->categories().size());
    categorizer_->classifier(*member.method).score(doc, member, &raw[m]);
  }
  double total = 0;
  for (const Json& entry : *combo_top) total += number_at(entry, "stacked_probability");
  for (size_t i = 0; i < top.size(); ++i) {
    const Json& entry = (*combo_top)[i];
    const std::string name = string_at(entry, "category");
    EXPECT_EQ(name, string_at(top[i], "name"));
    const uint32_t c = category_index(name);
    const Json& members = entry.at("members");
    ASSERT_EQ(members.size(), combo.members.size());
    double sum = 0;
    for (size_t m = 0; m < members.size(); ++m) {
      const auto method = static_cast<Method>(combo.members[m]);
      EXPECT_EQ(string_at(members[m], "method"), method_name(method));
      const double logit = calibrated_logit(calibration[static_cast<size_t>(method)], c, raw[m][c]);
      EXPECT_NEAR(number_at(members[m], "probability"), 1.0 / (1.0 + std::exp(-logit)), 1e-9)
          << name << " " << method_name(method);
      EXPECT_NEAR(number_at(members[m], "weight"), combo.weights[c * combo.stride() + m], 1e-6)
          << name << " " << method_name(method);
      sum += logit * number_at(members[m], "weight");
    }
    EXPECT_NEAR(number_at(entry, "sum"), sum, 1e-9) << name;
    const double base = number_at(entry, "base");
    EXPECT_NEAR(base, combo.weights[c * combo.stride() + combo.members.size()], 1e-6) << name;
    EXPECT_NEAR(number_at(entry, "stacked_probability"), 1.0 / (1.0 + std::exp(-(base + sum))),
                1e-9)
        << name;
    // One-of over all three categories: each score is its stacked
    // probability over their sum.
    EXPECT_NEAR(number_at(top[i], "score"), number_at(entry, "stacked_probability") / total, 1e-9)
        << name;
  }
  // The winner's entry is the detailed one.
  EXPECT_EQ(string_at((*combo_top)[0], "category"), string_at(line.at("terms_for"), "category"));

  result = run_autocat({"explain", "--model", model_, "--method", "combo", "--top", "3", path});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string& out = result.out;
  const size_t probabilities =
      out.find("  members' calibrated probabilities for the top categories");
  const size_t weights = out.find("\n  their stacking weights:\n");
  ASSERT_NE(probabilities, std::string::npos) << out;
  ASSERT_NE(weights, std::string::npos) << out;
  std::string header = "\n    category";
  for (int32_t member : combo.members) header += " +" + method_name(static_cast<Method>(member));
  EXPECT_TRUE(std::regex_search(out.substr(probabilities, weights + 1 - probabilities),
                                std::regex(header + " +stacked\n")))
      << out;
  EXPECT_TRUE(std::regex_search(out.substr(weights), std::regex(header + " +bias\n"))) << out;
  // Each category's row in both tables: the numbers --json gives.
  for (const Json& entry : *combo_top) {
    const std::string name = string_at(entry, "category");
    const std::regex row("\n    " + name + "((?: +-?[0-9]+\\.[0-9]{4})+)\n");
    for (const bool weight_table : {false, true}) {
      const std::string table = weight_table
                                    ? out.substr(weights)
                                    : out.substr(probabilities, weights + 1 - probabilities);
      std::smatch match;
      ASSERT_TRUE(std::regex_search(table, match, row)) << name << "\n" << table;
      std::istringstream numbers(match[1].str());
      std::vector<double> values;
      for (double value = 0; numbers >> value;) values.push_back(value);
      const Json& members = entry.at("members");
      ASSERT_EQ(values.size(), members.size() + 1) << match[0];
      for (size_t m = 0; m < members.size(); ++m) {
        EXPECT_NEAR(values[m], number_at(members[m], weight_table ? "weight" : "probability"),
                    5.1e-5)
            << name << " " << m;
      }
      EXPECT_NEAR(values.back(), number_at(entry, weight_table ? "base" : "stacked_probability"),
                  5.1e-5)
          << name;
    }
  }
}

TEST_F(ExplainTest, LimitsApply) {
  Explainer explainer(*categorizer_);
  ExplainOptions options;
  options.classify.method = Method::kKnn;
  options.max_categories = 2;
  options.max_neighbours = 2;
  options.max_terms = 2;
  const Explanation e = explainer.explain(terms_of(kSportsText), options);
  EXPECT_EQ(e.top.size(), 2u);
  EXPECT_EQ(e.neighbours.size(), 2u);
  EXPECT_EQ(e.terms.size(), 2u);
  EXPECT_EQ(e.num_contributing_terms, 5u);
  const Explanation all = explainer.explain(terms_of(kSportsText), all_of(Method::kKnn));
  EXPECT_EQ(e.terms_total, all.terms_total);
  EXPECT_EQ(e.terms[0].term, all.terms[0].term);
}

TEST_F(ExplainTest, NoKnownTerms) {
  Explainer explainer(*categorizer_);
  for (Method method : all_methods()) {
    const Explanation e = explainer.explain(terms_of("Zyxwv qqqq plorble."), all_of(method));
    EXPECT_FALSE(e.has_known_terms);
    // One-of without "other" assigns the most frequent category even then.
    EXPECT_LE(e.assigned.size(), 1u);
    EXPECT_TRUE(e.neighbours.empty());
    EXPECT_TRUE(e.terms.empty());
    EXPECT_EQ(e.note.rfind("no term of this document is in the model's vocabulary", 0), 0u)
        << e.note;
  }
}

TEST_F(ExplainTest, CliHumanOutput) {
  const CliResult result = run_autocat({"explain", "--model", model_, input("s1", kSportsText)});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  const std::vector<std::string> lines = lines_of(result.out);
  ASSERT_GE(lines.size(), 15u) << result.out;
  EXPECT_EQ(lines[0], "s1: sports");
  EXPECT_EQ(lines[1], "  method knn, k " + std::to_string(categorizer_->knn_k()) +
                          "; 6 of 6 tokens in the vocabulary");
  EXPECT_EQ(lines[2], "  scores:");
  // A calibrated probability (all 6 neighbours' votes were sports).
  EXPECT_EQ(lines[3].rfind("    sports   0.", 0), 0u) << lines[3];
  EXPECT_EQ(lines[6], "  nearest neighbours (similarity, labels):");
  EXPECT_EQ(lines[7].rfind("    sp-01  0.6", 0), 0u) << lines[7];
  EXPECT_NE(result.out.find("terms shared with sp-01, the nearest sports neighbour"),
            std::string::npos)
      << result.out;
}

TEST_F(ExplainTest, CliJsonHasTheFields) {
  const std::string path = scratch_.file("two.jsonl");
  write_file(path, "{\"id\": \"s1\", \"text\": \"" + std::string(kSportsText) +
                       "\"}\n"
                       "{\"id\": \"f1\", \"text\": \"Bake the bread with butter and flour.\"}\n");
  for (const std::string method : {"knn", "rocchio", "nb", "bnb", "cnb"}) {
    const CliResult result =
        run_autocat({"explain", "--model", model_, "--method", method, "--json", path});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::vector<std::string> lines = lines_of(result.out);
    ASSERT_EQ(lines.size(), 2u) << result.out;
    const Json first = json(lines[0]);
    EXPECT_EQ(string_at(first, "id"), "s1");
    EXPECT_EQ(string_at(first, "method"), method);
    EXPECT_EQ(string_at(json(lines[1]), "id"), "f1");
    const Json* categories = testing_util::member(first, "categories");
    ASSERT_TRUE(categories != nullptr && categories->is_array());
    ASSERT_EQ(categories->size(), 1u);
    EXPECT_EQ(string_at((*categories)[0], "name"), "sports");
    EXPECT_GT(number_at((*categories)[0], "score"), 0.0);
    const Json* top = testing_util::member(first, "top");
    ASSERT_TRUE(top != nullptr && top->is_array());
    EXPECT_EQ(top->size(), 3u);

    const Json* terms = testing_util::member(first, "terms");
    ASSERT_TRUE(terms != nullptr && terms->is_array());
    ASSERT_FALSE(terms->empty());
    EXPECT_LE(terms->size(), 5u);
    for (const Json& term : *terms) {
      EXPECT_NE(string_at(term, "term"), "<missing>");
      EXPECT_FALSE(std::isnan(number_at(term, "contribution")));
    }
    const Json* basis = testing_util::member(first, "terms_for");
    ASSERT_NE(basis, nullptr);
    EXPECT_EQ(string_at(*basis, "category"), "sports");

    const Json* neighbours = testing_util::member(first, "neighbours");
    if (method != "knn") {
      EXPECT_EQ(neighbours, nullptr);
      continue;
    }
    ASSERT_TRUE(neighbours != nullptr && neighbours->is_array());
    ASSERT_FALSE(neighbours->empty());
    EXPECT_LE(neighbours->size(), 5u);
    const Json& nearest = (*neighbours)[0];
    EXPECT_EQ(string_at(nearest, "id"), "sp-01");
    EXPECT_GT(number_at(nearest, "similarity"), 0.0);
    const Json* labels = testing_util::member(nearest, "labels");
    ASSERT_TRUE(labels != nullptr && labels->is_array());
    ASSERT_EQ(labels->size(), 1u);
    EXPECT_EQ((*labels)[0].get<std::string>(), "sports");
    EXPECT_EQ(string_at(*basis, "neighbour"), "sp-01");
  }
}

TEST_F(ExplainTest, CliNoKnownTermsExitsZero) {
  const std::string path = scratch_.file("unknown.txt");
  write_file(path, "Zyxwv qqqq plorble.\n");
  const CliResult human = run_autocat({"explain", "--model", model_, path});
  EXPECT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("no term of this document is in the model's vocabulary"),
            std::string::npos)
      << human.out;
  const CliResult machine = run_autocat({"explain", "--model", model_, "--json", path});
  EXPECT_EQ(machine.exit_code, 0) << machine.err;
  const Json line = json(lines_of(machine.out).at(0));
  EXPECT_EQ(string_at(line, "note"),
            "no term of this document is in the model's vocabulary; no evidence (no known term, "
            "or every score 0): the most frequent training category, as one-of assigns one");
  EXPECT_EQ(line.at("categories").size(), 1u);
}

TEST_F(ExplainTest, CliReadsStandardInput) {
  const CliResult result = run_autocat({"explain", "--model", model_, "--method", "rocchio", "-"},
                                       input("s1", kSportsText));
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(lines_of(result.out).at(0), "s1: sports");
}

TEST_F(ExplainTest, CliHelpAndErrors) {
  const CliResult help = run_autocat({"explain", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(help.out.rfind("usage: autocat explain --model DIR", 0), 0u) << help.out;

  const std::string path = input("s1", kSportsText);
  const CliResult unknown = run_autocat({"explain", "--model", model_, "--method", "bogus", path});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err.rfind("autocat explain: unknown method 'bogus'", 0), 0u) << unknown.err;
  EXPECT_EQ(lines_of(unknown.err).size(), 1u);

  EXPECT_EQ(run_autocat({"explain", path}).exit_code, 2);  // no --model
  EXPECT_EQ(run_autocat({"explain", "--model", model_, "--top", "0", path}).exit_code, 2);

  const std::string missing = scratch_.file("missing.jsonl");
  const CliResult not_found = run_autocat({"explain", "--model", model_, missing});
  EXPECT_EQ(not_found.exit_code, 1);
  EXPECT_EQ(not_found.err.rfind("autocat: " + missing, 0), 0u) << not_found.err;
  EXPECT_EQ(lines_of(not_found.err).size(), 1u);

  const CliResult no_model = run_autocat({"explain", "--model", scratch_.file("none"), path});
  EXPECT_EQ(no_model.exit_code, 1);
  EXPECT_EQ(no_model.err.rfind("autocat: " + scratch_.file("none") + ": ", 0), 0u) << no_model.err;
}

}  // namespace
}  // namespace autocat::internal
