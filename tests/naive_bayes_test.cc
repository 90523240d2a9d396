#include "classify/methods/naive_bayes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "autocat/error.h"
#include "classify/corpus/weighting.h"
#include "test_util.h"

namespace autocat::internal {
namespace {

using testing_util::split;

// Weight (term, category), whichever form holds the weights.
float weight_of(const NaiveBayesModel& model, TermId term, uint32_t category) {
  std::vector<float> scratch;
  return model.row(term, &scratch)[category];
}

double sum_of(const std::vector<double>& values) {
  return std::accumulate(values.begin(), values.end(), 0.0);
}

// The training set of IIR Examples 13.1 and 13.2 (table 13.1). d4 is "not
// China"; it is labelled "japan". Categories: china = 0, japan = 1. Terms:
// beijing chinese japan macao shanghai tokyo (|V| = 6).
class NaiveBayesTest : public testing::Test {
 protected:
  NaiveBayesTest()
      : corpus_(make_training_corpus({{split("chinese beijing chinese"), {"china"}},
                                      {split("chinese chinese shanghai"), {"china"}},
                                      {split("chinese macao"), {"china"}},
                                      {split("tokyo japan chinese"), {"japan"}}})),
        vocabulary_(corpus_.terms) {}

  DocumentTerms doc(const std::string& text) const {
    return make_document_terms(vocabulary_, split(text));
  }
  TermId id(const std::string& term) const { return static_cast<TermId>(vocabulary_.find(term)); }
  static float weight(const NaiveBayesModel& model, TermId term, uint32_t category) {
    std::vector<float> scratch;
    return model.row(term, &scratch)[category];
  }
  // Prior + constant + sum of the stored float weights, as scoring must add them.
  static double stored_sum(const NaiveBayesModel& model, const DocumentTerms& document,
                           uint32_t category, bool binary) {
    double sum = model.log_prior[category] + model.class_constant[category];
    for (const TermCount& term : document.terms) {
      sum += (binary ? 1.0 : term.count) * weight(model, term.term, category);
    }
    return sum;
  }

  static constexpr uint32_t kChina = 0, kJapan = 1;
  const std::vector<uint8_t> all_terms_;
  TrainingCorpus corpus_;
  Vocabulary vocabulary_;
};

TEST_F(NaiveBayesTest, CorpusIsIirTable13_1) {
  ASSERT_EQ(corpus_.categories, (std::vector<std::string>{"china", "japan"}));
  ASSERT_EQ(corpus_.num_terms(), 6u);
}

// IIR Example 13.1: P(t|c) = (T_ct + 1) / (sum T_ct' + |V|) with |V| = 6:
// china has 8 tokens (5 chinese), japan 3 (1 chinese, 1 tokyo, 1 japan).
TEST_F(NaiveBayesTest, MultinomialIirExample13_1) {
  const NaiveBayesModel model = train_multinomial_nb(corpus_, all_terms_, 1.0);
  EXPECT_EQ(model.variant, static_cast<int>(Method::kNaiveBayes));
  EXPECT_DOUBLE_EQ(model.log_prior[kChina], std::log(3.0 / 4));
  EXPECT_DOUBLE_EQ(model.log_prior[kJapan], std::log(1.0 / 4));
  EXPECT_FLOAT_EQ(weight(model, id("chinese"), kChina), std::log(6.0 / 14));  // 3/7
  EXPECT_FLOAT_EQ(weight(model, id("tokyo"), kChina), std::log(1.0 / 14));
  EXPECT_FLOAT_EQ(weight(model, id("japan"), kChina), std::log(1.0 / 14));
  EXPECT_FLOAT_EQ(weight(model, id("chinese"), kJapan), std::log(2.0 / 9));
  EXPECT_FLOAT_EQ(weight(model, id("tokyo"), kJapan), std::log(2.0 / 9));
  EXPECT_FLOAT_EQ(weight(model, id("beijing"), kJapan), std::log(1.0 / 9));

  const DocumentTerms d5 = doc("chinese chinese chinese tokyo japan");
  NaiveBayesClassifier classifier(model);
  std::vector<double> log_scores;
  classifier.log_scores(d5, &log_scores);
  // 3/4 (3/7)^3 (1/14)^2 ~ 0.0003 and 1/4 (2/9)^5 ~ 0.0001 (IIR rounds
  // 0.000301 and 0.000135 to one digit).
  const double china = 3.0 / 4 * std::pow(3.0 / 7, 3) * std::pow(1.0 / 14, 2);
  const double japan = 1.0 / 4 * std::pow(2.0 / 9, 5);
  EXPECT_NEAR(china, 0.0003, 0.00005);
  EXPECT_NEAR(japan, 0.0001, 0.00005);
  // Exactly the sum of the stored weights; those are floats (relative error
  // 6e-8 each), so the maths holds to 1e-6, not 1e-9.
  EXPECT_NEAR(log_scores[kChina], stored_sum(model, d5, kChina, false), 1e-12);
  EXPECT_NEAR(log_scores[kJapan], stored_sum(model, d5, kJapan, false), 1e-12);
  EXPECT_NEAR(log_scores[kChina], std::log(china), 1e-6);
  EXPECT_NEAR(log_scores[kJapan], std::log(japan), 1e-6);

  std::vector<double> posterior;
  classifier.score(d5, ClassifyOptions(), &posterior);
  EXPECT_NEAR(posterior[kChina], china / (china + japan), 1e-7);
  EXPECT_NEAR(posterior[kJapan], japan / (china + japan), 1e-7);
  EXPECT_GT(posterior[kChina], posterior[kJapan]);
}

// IIR Example 13.2: P(t|c) = (N_ct + 1) / (N_c + 2); every vocabulary term
// counts, present or not, and d5's three "chinese" count once.
TEST_F(NaiveBayesTest, BernoulliIirExample13_2) {
  const NaiveBayesModel model = train_bernoulli_nb(corpus_, all_terms_, 1.0);
  EXPECT_EQ(model.variant, static_cast<int>(Method::kBernoulliNaiveBayes));
  // china: chinese 4/5, japan = tokyo 1/5, beijing = macao = shanghai 2/5.
  // japan: chinese = japan = tokyo 2/3, beijing = macao = shanghai 1/3.
  EXPECT_NEAR(model.class_constant[kChina],
              std::log(1.0 / 5) + 2 * std::log(4.0 / 5) + 3 * std::log(3.0 / 5), 1e-12);
  EXPECT_NEAR(model.class_constant[kJapan], 3 * std::log(1.0 / 3) + 3 * std::log(2.0 / 3), 1e-12);
  EXPECT_FLOAT_EQ(weight(model, id("chinese"), kChina), std::log(4.0));  // (4/5) / (1/5)
  EXPECT_FLOAT_EQ(weight(model, id("beijing"), kJapan), std::log(0.5));  // (1/3) / (2/3)

  const DocumentTerms d5 = doc("chinese chinese chinese tokyo japan");
  // 3/4 * 4/5 * 1/5 * 1/5 * (1 - 2/5)^3 ~ 0.005 and 1/4 * (2/3)^3 * (1 - 1/3)^3 ~ 0.022.
  const double china = 3.0 / 4 * 4.0 / 5 * 1.0 / 5 * 1.0 / 5 * std::pow(3.0 / 5, 3);
  const double japan = 1.0 / 4 * std::pow(2.0 / 3, 3) * std::pow(2.0 / 3, 3);
  EXPECT_NEAR(china, 0.005, 0.0005);
  EXPECT_NEAR(japan, 0.022, 0.0005);
  NaiveBayesClassifier classifier(model);
  std::vector<double> log_scores;
  classifier.log_scores(d5, &log_scores);
  EXPECT_NEAR(log_scores[kChina], stored_sum(model, d5, kChina, true), 1e-12);
  EXPECT_NEAR(log_scores[kJapan], stored_sum(model, d5, kJapan, true), 1e-12);
  EXPECT_NEAR(log_scores[kChina], std::log(china), 1e-6);
  EXPECT_NEAR(log_scores[kJapan], std::log(japan), 1e-6);

  std::vector<double> posterior;
  classifier.score(d5, ClassifyOptions(), &posterior);
  EXPECT_NEAR(posterior[kJapan], japan / (china + japan), 1e-7);
  EXPECT_LT(posterior[kChina], posterior[kJapan]);  // not China, unlike multinomial
}

// Complement NB on the same data. Complement of china = d4 (3 tokens):
// theta~ = chinese, japan, tokyo 2/9; beijing, macao, shanghai 1/9.
// Complement of japan = d1..d3 (8 tokens): chinese 6/14; beijing, macao,
// shanghai 2/14; japan, tokyo 1/14. Score = -sum count * log theta~.
TEST_F(NaiveBayesTest, ComplementWeightsAreNegatedComplementLogs) {
  const NaiveBayesModel model = train_complement_nb(corpus_, all_terms_, 1.0);
  EXPECT_EQ(model.variant, static_cast<int>(Method::kComplementNaiveBayes));
  EXPECT_EQ(model.log_prior, (std::vector<double>{0.0, 0.0}));
  EXPECT_FLOAT_EQ(weight(model, id("chinese"), kChina), -std::log(2.0 / 9));
  EXPECT_FLOAT_EQ(weight(model, id("macao"), kChina), -std::log(1.0 / 9));
  EXPECT_FLOAT_EQ(weight(model, id("macao"), kJapan), -std::log(2.0 / 14));
  EXPECT_FLOAT_EQ(weight(model, id("tokyo"), kJapan), -std::log(1.0 / 14));

  // The small complement of china is smoothed towards uniform, so its
  // weights stay low: without Rennie's weight normalization this document
  // leans to japan (multinomial NB above says china).
  const DocumentTerms d5 = doc("chinese chinese chinese tokyo japan");
  NaiveBayesClassifier classifier(model);
  std::vector<double> log_scores;
  classifier.log_scores(d5, &log_scores);
  const double china = 5 * std::log(9.0 / 2);                        // ~7.52
  const double japan = 3 * std::log(14.0 / 6) + 2 * std::log(14.0);  // ~7.82
  EXPECT_NEAR(log_scores[kChina], china, 1e-5);
  EXPECT_NEAR(log_scores[kJapan], japan, 1e-5);
  std::vector<double> posterior;
  classifier.score(d5, ClassifyOptions(), &posterior);
  EXPECT_NEAR(posterior[kJapan], 1 / (1 + std::exp(china - japan)), 1e-6);  // softmax
  EXPECT_GT(posterior[kJapan], posterior[kChina]);
}

TEST_F(NaiveBayesTest, PosteriorsAreProbabilities) {
  for (const NaiveBayesModel& model : {train_multinomial_nb(corpus_, all_terms_, 1.0),
                                       train_bernoulli_nb(corpus_, all_terms_, 1.0),
                                       train_complement_nb(corpus_, all_terms_, 0.5)}) {
    NaiveBayesClassifier classifier(model);
    for (const char* text : {"chinese", "tokyo japan", "beijing shanghai macao tokyo",
                             "chinese chinese chinese tokyo japan"}) {
      std::vector<double> posterior;
      classifier.score(doc(text), ClassifyOptions(), &posterior);
      ASSERT_EQ(posterior.size(), 2u);
      for (double p : posterior) {
        EXPECT_GE(p, 0.0);
        EXPECT_LE(p, 1.0);
      }
      EXPECT_NEAR(sum_of(posterior), 1.0, 1e-12) << model.variant << " " << text;
    }
  }
}

TEST_F(NaiveBayesTest, UnknownTermsAreIgnored) {
  for (const NaiveBayesModel& model : {train_multinomial_nb(corpus_, all_terms_, 1.0),
                                       train_bernoulli_nb(corpus_, all_terms_, 1.0),
                                       train_complement_nb(corpus_, all_terms_, 1.0)}) {
    NaiveBayesClassifier classifier(model);
    std::vector<double> known, mixed, out_of_range;
    classifier.log_scores(doc("chinese tokyo"), &known);
    const DocumentTerms with_unknown = doc("osaka chinese kyoto tokyo chinese2");
    EXPECT_EQ(with_unknown.known_tokens, 2u);
    EXPECT_EQ(with_unknown.total_tokens, 5u);
    classifier.log_scores(with_unknown, &mixed);
    EXPECT_EQ(known, mixed);
    // An id past the model's vocabulary (a newer vocabulary) is skipped too.
    DocumentTerms beyond = doc("chinese tokyo");
    beyond.terms.push_back(TermCount{corpus_.num_terms() + 5, 3});
    classifier.log_scores(beyond, &out_of_range);
    EXPECT_EQ(known, out_of_range);
  }
}

TEST_F(NaiveBayesTest, DocumentWithoutKnownTermsScoresZero) {
  const NaiveBayesModel model = train_bernoulli_nb(corpus_, all_terms_, 1.0);
  NaiveBayesClassifier classifier(model);
  std::vector<double> posterior;
  classifier.score(doc("osaka kyoto"), ClassifyOptions(), &posterior);
  EXPECT_EQ(posterior, (std::vector<double>{0.0, 0.0}));
  classifier.score(DocumentTerms(), ClassifyOptions(), &posterior);
  EXPECT_EQ(posterior, (std::vector<double>{0.0, 0.0}));
}

// Only chinese, japan and tokyo selected: |V| = 3, so china's P(chinese) =
// (5 + 1) / (5 + 3) and japan's = (1 + 1) / (3 + 3); the other terms weigh 0.
TEST_F(NaiveBayesTest, FeatureSelectionShrinksTheVocabulary) {
  std::vector<uint8_t> selected(corpus_.num_terms(), 0);
  for (const char* term : {"chinese", "japan", "tokyo"}) selected[id(term)] = 1;
  const NaiveBayesModel multinomial = train_multinomial_nb(corpus_, selected, 1.0);
  EXPECT_FLOAT_EQ(weight_of(multinomial, id("chinese"), kChina), std::log(6.0 / 8));
  EXPECT_FLOAT_EQ(weight_of(multinomial, id("tokyo"), kChina), std::log(1.0 / 8));
  EXPECT_FLOAT_EQ(weight_of(multinomial, id("chinese"), kJapan), std::log(2.0 / 6));
  EXPECT_EQ(weight_of(multinomial, id("beijing"), kChina), 0.0f);
  EXPECT_EQ(weight_of(multinomial, id("beijing"), kJapan), 0.0f);

  // Bernoulli: the vocabulary sum covers the selected terms only.
  const NaiveBayesModel bernoulli = train_bernoulli_nb(corpus_, selected, 1.0);
  EXPECT_NEAR(bernoulli.class_constant[kChina], std::log(1.0 / 5) + 2 * std::log(4.0 / 5), 1e-12);
  EXPECT_EQ(weight_of(bernoulli, id("macao"), kChina), 0.0f);

  // Complement: |V| counts the selected terms only (complement of japan:
  // d1..d3, 5 selected tokens, + 3; of china: d4, 3 tokens, + 3).
  const NaiveBayesModel complement = train_complement_nb(corpus_, selected, 1.0);
  EXPECT_FLOAT_EQ(weight_of(complement, id("tokyo"), kJapan), -std::log(1.0 / 8));
  EXPECT_FLOAT_EQ(weight_of(complement, id("chinese"), kChina), -std::log(2.0 / 6));
  EXPECT_EQ(weight_of(complement, id("macao"), kJapan), 0.0f);

  // A document with only deselected terms has no evidence: all zeros.
  for (const NaiveBayesModel* model : {&multinomial, &bernoulli, &complement}) {
    NaiveBayesClassifier classifier(*model);
    std::vector<double> posterior;
    classifier.score(doc("beijing macao"), ClassifyOptions(), &posterior);
    EXPECT_EQ(posterior, (std::vector<double>{0.0, 0.0}));
    classifier.score(doc("beijing tokyo"), ClassifyOptions(), &posterior);
    EXPECT_NEAR(sum_of(posterior), 1.0, 1e-12);
  }
}

// 100,000 tokens: the products underflow any double, the log sums do not.
TEST_F(NaiveBayesTest, LongDocumentDoesNotUnderflow) {
  DocumentTerms long_doc;
  long_doc.terms = {
      {id("beijing"), 20000}, {id("chinese"), 50000}, {id("japan"), 15000}, {id("tokyo"), 15000}};
  long_doc.known_tokens = long_doc.total_tokens = 100000;
  for (const NaiveBayesModel& model : {train_multinomial_nb(corpus_, all_terms_, 1.0),
                                       train_bernoulli_nb(corpus_, all_terms_, 1.0),
                                       train_complement_nb(corpus_, all_terms_, 1.0)}) {
    NaiveBayesClassifier classifier(model);
    std::vector<double> log_scores, posterior;
    classifier.log_scores(long_doc, &log_scores);
    for (double s : log_scores) EXPECT_TRUE(std::isfinite(s));
    classifier.score(long_doc, ClassifyOptions(), &posterior);
    for (double p : posterior) EXPECT_TRUE(std::isfinite(p));
    EXPECT_NEAR(sum_of(posterior), 1.0, 1e-12);
  }
  // Multinomial log scores: china ~ -160455, japan ~ -164272.
  const NaiveBayesModel model = train_multinomial_nb(corpus_, all_terms_, 1.0);
  std::vector<double> posterior;
  NaiveBayesClassifier(model).score(long_doc, ClassifyOptions(), &posterior);
  EXPECT_EQ(posterior[kChina], 1.0);
  EXPECT_EQ(posterior[kJapan], 0.0);  // exp(-3817) underflows to 0, harmlessly
}

// A document with two labels counts once for each; priors are normalized
// over the sum of category counts (a: 2, b: 2, c: 1 of 5).
TEST(NaiveBayesMultiLabelTest, DocumentCountsForEachOfItsCategories) {
  const TrainingCorpus corpus = make_training_corpus({{{"x", "y"}, {"a"}},
                                                      {{"x", "z", "z"}, {"a", "b"}},
                                                      {{"z"}, {"b"}},
                                                      {{"y"}, {"c"}},
                                                      {{"y", "w"}, {}}});
  ASSERT_EQ(corpus.categories, (std::vector<std::string>{"a", "b", "c"}));
  const NaiveBayesModel multinomial = train_multinomial_nb(corpus, {}, 1.0);
  EXPECT_DOUBLE_EQ(multinomial.log_prior[0], std::log(2.0 / 5));
  EXPECT_DOUBLE_EQ(multinomial.log_prior[1], std::log(2.0 / 5));
  EXPECT_DOUBLE_EQ(multinomial.log_prior[2], std::log(1.0 / 5));
  // Terms w x y z; b's tokens: x 1, z 3 of 4; |V| = 4.
  EXPECT_FLOAT_EQ(weight_of(multinomial, 3, 1), std::log(4.0 / 8));  // z in b
  EXPECT_FLOAT_EQ(weight_of(multinomial, 1, 1), std::log(2.0 / 8));  // x in b
  // Bernoulli: x is in both documents of a; P = (2 + 1) / (2 + 2).
  const NaiveBayesModel bernoulli = train_bernoulli_nb(corpus, {}, 1.0);
  EXPECT_FLOAT_EQ(weight_of(bernoulli, 1, 0), std::log(3.0));  // (3/4) / (1/4)
  // Complement of b: documents 0, 3 and the unlabelled 4 (x 1, y 3, w 1).
  const NaiveBayesModel complement = train_complement_nb(corpus, {}, 1.0);
  // theta~: w 2/9, x 2/9, y 4/9, z 1/9. Weights are scaled by a constant,
  // so compare ratios: y in b against x in b.
  EXPECT_FLOAT_EQ(weight_of(complement, 2, 1) / weight_of(complement, 1, 1),
                  std::log(9.0 / 4) / std::log(9.0 / 2));
}

// Skewed classes: six "sport" documents, two "tech" ones. "chip team" has a
// term seen only in tech and one seen in 5 of 6 sport documents. Its
// multinomial likelihood favours tech, but the 3:1 prior flips the decision
// to sport; complement NB has no prior and picks tech, and still classifies
// every training document into its own class.
TEST(NaiveBayesSkewTest, ComplementIsNotDominatedByTheLargeClass) {
  std::vector<LabelledTerms> documents = {
      {split("goal match team"), {"sport"}},  {split("goal team fans"), {"sport"}},
      {split("match score team"), {"sport"}}, {split("team goal score"), {"sport"}},
      {split("fans match goal"), {"sport"}},  {split("score team match"), {"sport"}},
      {split("chip match"), {"tech"}},        {split("chip cpu"), {"tech"}}};
  const TrainingCorpus corpus = make_training_corpus(documents);
  const Vocabulary vocabulary(corpus.terms);
  const uint32_t sport = 0, tech = 1;
  const NaiveBayesModel multinomial = train_multinomial_nb(corpus, {}, 1.0);
  const NaiveBayesModel complement = train_complement_nb(corpus, {}, 1.0);
  const DocumentTerms test = make_document_terms(vocabulary, split("chip team"));

  std::vector<double> scores;
  NaiveBayesClassifier(multinomial).log_scores(test, &scores);
  EXPECT_GT(scores[tech] - multinomial.log_prior[tech],
            scores[sport] - multinomial.log_prior[sport]);
  EXPECT_GT(scores[sport], scores[tech]);

  NaiveBayesClassifier classifier(complement);
  classifier.score(test, ClassifyOptions(), &scores);
  EXPECT_GT(scores[tech], scores[sport]);
  EXPECT_NEAR(sum_of(scores), 1.0, 1e-12);
  for (const LabelledTerms& document : documents) {
    classifier.score(make_document_terms(vocabulary, document.terms), ClassifyOptions(), &scores);
    const uint32_t expected = document.labels[0] == "sport" ? sport : tech;
    EXPECT_GT(scores[expected], scores[1 - expected]) << document.terms[0];
  }
}

TEST_F(NaiveBayesTest, RejectsBadArguments) {
  EXPECT_THROW(train_multinomial_nb(corpus_, all_terms_, 0.0), InvalidArgumentError);
  EXPECT_THROW(train_bernoulli_nb(corpus_, all_terms_, -1.0), InvalidArgumentError);
  EXPECT_THROW(train_complement_nb(corpus_, all_terms_, std::nan("")), InvalidArgumentError);
  EXPECT_THROW(train_multinomial_nb(corpus_, std::vector<uint8_t>(2, 1), 1.0),
               InvalidArgumentError);
  EXPECT_THROW(train_multinomial_nb(TrainingCorpus(), all_terms_, 1.0), InvalidArgumentError);
}

TEST_F(NaiveBayesTest, RejectsInconsistentModel) {
  NaiveBayesModel model = train_multinomial_nb(corpus_, all_terms_, 1.0);
  model.make_dense();
  model.term_weight.pop_back();
  EXPECT_THROW(NaiveBayesClassifier{model}, ModelFormatError);
  model = train_multinomial_nb(corpus_, all_terms_, 1.0);
  model.variant = static_cast<int>(Method::kRocchio);
  EXPECT_THROW(NaiveBayesClassifier{model}, ModelFormatError);
  model = train_multinomial_nb(corpus_, all_terms_, 1.0);
  model.log_prior.clear();
  EXPECT_THROW(NaiveBayesClassifier{model}, ModelFormatError);
}

TEST_F(NaiveBayesTest, MethodIsTheModelVariant) {
  EXPECT_EQ(NaiveBayesClassifier(train_multinomial_nb(corpus_, all_terms_, 1.0)).method(),
            Method::kNaiveBayes);
}

// Cross-validation fits models whose held-out documents use few of the
// terms: the rows of wanted terms, the priors and the class constants are
// exactly those of the full model, and the other rows are left at 0.
TEST_F(NaiveBayesTest, WantedTermsGetTheFullModelsWeights) {
  std::vector<uint8_t> wanted(corpus_.num_terms(), 0);
  wanted[id("chinese")] = wanted[id("tokyo")] = 1;
  const std::vector<float> idf(corpus_.num_terms(), 1.5f);
  const auto check = [&](const NaiveBayesModel& full, const NaiveBayesModel& part) {
    EXPECT_EQ(full.log_prior, part.log_prior);
    EXPECT_EQ(full.class_constant, part.class_constant);
    for (TermId t = 0; t < corpus_.num_terms(); ++t) {
      for (uint32_t c = 0; c < full.num_categories; ++c) {
        EXPECT_EQ(weight(part, t, c), wanted[t] ? weight(full, t, c) : 0.0f) << t << " " << c;
      }
    }
  };
  for (const std::vector<float>& features_idf : {std::vector<float>(), idf}) {
    const TermAmount amount = features_idf.empty() ? TermAmount::kCount : TermAmount::kTfidf;
    const CategorySums sums = sum_categories(corpus_, amount, {}, features_idf);
    check(multinomial_nb_from_sums(sums, {}, 0.5, features_idf),
          multinomial_nb_from_sums(sums, {}, 0.5, features_idf, wanted));
    check(complement_nb_from_sums(sums, {}, 0.5, features_idf),
          complement_nb_from_sums(sums, {}, 0.5, features_idf, wanted));
  }
  const CategorySums presence = sum_categories(corpus_, TermAmount::kPresence, {}, {});
  check(bernoulli_nb_from_sums(presence, {}, 0.5),
        bernoulli_nb_from_sums(presence, {}, 0.5, wanted));
  EXPECT_THROW(bernoulli_nb_from_sums(presence, {}, 0.5, std::vector<uint8_t>(2, 1)),
               InvalidArgumentError);
}

// The weights and class constants of each variant straight from the
// textbook formulas over a dense terms x categories matrix of amounts (the
// way they were once fitted): the sparse fit (NbWeightRows: per-category
// defaults, complement NB's totals minus each category's own amounts)
// must give the same model, and scoring from the sparse rows the same
// scores, bit for bit, as scoring its dense copy.
struct DenseReference {
  std::vector<double> weight;  // term-major
  std::vector<double> class_constant;
};

DenseReference dense_reference(const TrainingCorpus& corpus, Method method,
                               const std::vector<uint8_t>& selected, double alpha,
                               const std::vector<float>& idf) {
  const size_t terms = corpus.num_terms();
  const size_t cats = corpus.num_categories();
  const bool bernoulli = method == Method::kBernoulliNaiveBayes;
  std::vector<double> inverse_norm(corpus.num_docs(), 1.0);
  if (!idf.empty()) {
    std::vector<double> norm2(corpus.num_docs(), 0.0);
    for (TermId t = 0; t < terms; ++t) {
      for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
        const double x = selected[t] ? sublinear_tf(corpus.posting_wdf[p]) * idf[t] : 0.0;
        norm2[corpus.posting_doc[p]] += x * x;
      }
    }
    for (size_t d = 0; d < norm2.size(); ++d) inverse_norm[d] = 1.0 / std::sqrt(norm2[d]);
  }
  std::vector<double> amount(terms * cats, 0.0), total(terms, 0.0);
  std::vector<double> docs(cats, 0.0);
  for (const auto& labels : corpus.doc_categories) {
    for (uint32_t c : labels) docs[c] += 1;
  }
  for (TermId t = 0; t < terms; ++t) {
    if (!selected[t]) continue;
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      const uint32_t d = corpus.posting_doc[p];
      const double value = bernoulli ? 1.0
                           : idf.empty()
                               ? corpus.posting_wdf[p]
                               : sublinear_tf(corpus.posting_wdf[p]) * idf[t] * inverse_norm[d];
      total[t] += value;
      for (uint32_t c : corpus.doc_categories[d]) amount[t * cats + c] += value;
    }
  }
  const double vocabulary = std::count(selected.begin(), selected.end(), 1);
  DenseReference out{std::vector<double>(terms * cats, 0.0), std::vector<double>(cats, 0.0)};
  for (size_t c = 0; c < cats; ++c) {
    double denominator = 0.0;
    for (TermId t = 0; t < terms; ++t) {
      if (!selected[t]) continue;
      const double own = amount[t * cats + c];
      denominator += method == Method::kComplementNaiveBayes ? total[t] - own : own;
    }
    denominator += alpha * vocabulary;
    for (TermId t = 0; t < terms; ++t) {
      if (!selected[t]) continue;
      const double own = amount[t * cats + c];
      double& w = out.weight[t * cats + c];
      if (method == Method::kNaiveBayes) {
        w = std::log((own + alpha) / denominator);
      } else if (method == Method::kComplementNaiveBayes) {
        w = -std::log((total[t] - own + alpha) / denominator);
      } else {
        const double p = (own + alpha) / (docs[c] + 2 * alpha);
        w = std::log(p / (1 - p));
        out.class_constant[c] += std::log(1 - p);
      }
    }
  }
  return out;
}

TEST(NaiveBayesSparseTest, SparseFitEqualsTheDenseFormulas) {
  // 40 categories, 300 terms; multi-label, an unlabelled document, a
  // selection that leaves terms out.
  std::mt19937 random(7);
  std::vector<LabelledTerms> docs;
  for (int d = 0; d < 160; ++d) {
    LabelledTerms doc;
    for (int i = 0; i < 12; ++i) doc.terms.push_back("t" + std::to_string(random() % 300));
    if (d % 17 != 0) doc.labels.push_back("c" + std::to_string(d % 40));
    if (d % 5 == 0) doc.labels.push_back("c" + std::to_string((d / 5) % 40));
    docs.push_back(doc);
  }
  const TrainingCorpus corpus = make_training_corpus(docs);
  std::vector<uint8_t> selected(corpus.num_terms(), 1);
  for (TermId t = 0; t < selected.size(); t += 7) selected[t] = 0;
  const std::vector<float> idf = compute_idf(corpus.df, corpus.num_docs(), selected);
  const size_t cats = corpus.num_categories();
  const Vocabulary vocabulary(corpus.terms);
  std::vector<DocumentTerms> queries;
  for (const LabelledTerms& doc : docs) {
    if (queries.size() < 20) queries.push_back(make_document_terms(vocabulary, doc.terms));
  }
  for (Method method :
       {Method::kNaiveBayes, Method::kBernoulliNaiveBayes, Method::kComplementNaiveBayes}) {
    for (bool tfidf : {false, true}) {
      if (tfidf && method == Method::kBernoulliNaiveBayes) continue;
      const std::vector<float> features_idf = tfidf ? idf : std::vector<float>();
      const DenseReference reference = dense_reference(corpus, method, selected, 0.3, features_idf);
      const TermAmount amount = method == Method::kBernoulliNaiveBayes ? TermAmount::kPresence
                                : tfidf                                ? TermAmount::kTfidf
                                                                       : TermAmount::kCount;
      const CategorySums sums = sum_categories(corpus, amount, selected, features_idf);
      EXPECT_LT(sums.num_entries(), corpus.num_terms() * cats / 4);
      const NaiveBayesModel sparse =
          method == Method::kNaiveBayes
              ? multinomial_nb_from_sums(sums, selected, 0.3, features_idf)
          : method == Method::kBernoulliNaiveBayes
              ? bernoulli_nb_from_sums(sums, selected, 0.3)
              : complement_nb_from_sums(sums, selected, 0.3, features_idf);
      ASSERT_TRUE(sparse.weight_rows);
      EXPECT_TRUE(sparse.term_weight.empty());
      const std::vector<float> weights = sparse.dense_weights();
      ASSERT_EQ(weights.size(), reference.weight.size());
      for (size_t i = 0; i < weights.size(); ++i) {
        EXPECT_NEAR(weights[i], reference.weight[i],
                    2e-6 * std::max(1.0, std::fabs(reference.weight[i])))
            << static_cast<int>(method) << " " << tfidf << " " << i;
      }
      for (size_t c = 0; c < cats; ++c) {
        EXPECT_NEAR(sparse.class_constant[c], reference.class_constant[c],
                    1e-9 * std::max(1.0, std::fabs(reference.class_constant[c])));
      }
      NaiveBayesModel dense = sparse;
      dense.make_dense();
      EXPECT_FALSE(dense.weight_rows);
      EXPECT_EQ(dense.term_weight, weights);
      const NaiveBayesClassifier from_rows(sparse), from_dense(dense);
      std::vector<double> a, b;
      for (const DocumentTerms& query : queries) {
        from_rows.score(query, ClassifyOptions(), &a);
        from_dense.score(query, ClassifyOptions(), &b);
        EXPECT_EQ(a, b);
      }
    }
  }
}

}  // namespace
}  // namespace autocat::internal
