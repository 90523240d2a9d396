// Tests of rule categories (classify/decide/rules.h): the file format and its
// errors, what a query matches, and how assign, veto and evidence change the
// learned decision.
#include "classify/decide/rules.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "autocat/error.h"
#include "classify/train/trainer.h"
#include "tests/test_util.h"

namespace autocat::internal {
namespace {

using testing_util::split;

const std::vector<std::string> kCategories = {"a", "b", "c"};

RuleSet parse(const std::string& text, const std::vector<std::string>& categories = kCategories) {
  std::istringstream in(text);
  return RuleSet::parse(in, "my.rules", categories);
}

std::string parse_error(const std::string& text) {
  try {
    parse(text);
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(RulesTest, ParsesModesAndSkipsCommentsAndBlankLines) {
  const RuleSet rules = parse(
      "# comment\n"
      "\n"
      "a\tassign\tapple\n"
      "b\tveto\tbanana OR blueberry\n"
      "c\tevidence:+0.25\tcherry\n"
      "c\tevidence:-0.5\tcoconut\n");
  ASSERT_EQ(rules.rules().size(), 4u);
  EXPECT_EQ(rules.rules()[0].mode, RuleMode::kAssign);
  EXPECT_EQ(rules.rules()[0].source, "my.rules:3");
  EXPECT_EQ(rules.rules()[1].mode, RuleMode::kVeto);
  EXPECT_EQ(rules.rules()[1].query, "banana OR blueberry");
  EXPECT_EQ(rules.rules()[2].mode, RuleMode::kEvidence);
  EXPECT_DOUBLE_EQ(rules.rules()[2].weight, 0.25);
  EXPECT_DOUBLE_EQ(rules.rules()[3].weight, -0.5);
  EXPECT_EQ(rule_mode_text(rules.rules()[3]), "evidence:-0.5");
}

TEST(RulesTest, ErrorsNameFileAndLine) {
  EXPECT_NE(
      parse_error("a\tassign\tapple\nzz\tassign\tx\n").find("my.rules:2: unknown category 'zz'"),
      std::string::npos);
  EXPECT_NE(parse_error("a\tassign\t(apple\n").find("my.rules:1: bad query '(apple'"),
            std::string::npos);
  EXPECT_NE(parse_error("\na\tmaybe\tapple\n").find("my.rules:2: unknown mode 'maybe'"),
            std::string::npos);
  EXPECT_NE(parse_error("a\tevidence:0.3\tapple\n").find("my.rules:1: evidence weight"),
            std::string::npos);
  EXPECT_NE(parse_error("a\tevidence:+2\tapple\n").find("my.rules:1: evidence weight"),
            std::string::npos);
  EXPECT_NE(
      parse_error("a assign apple\n").find("my.rules:1: expected CATEGORY<TAB>MODE<TAB>QUERY"),
      std::string::npos);
  EXPECT_NE(parse_error("a\tassign\t \n").find("my.rules:1: empty query"), std::string::npos);
  // Without a category list any category is accepted (rules test without a model).
  EXPECT_EQ(parse("zz\tassign\tx\n", {}).rules().size(), 1u);
  EXPECT_THROW(RuleSet::load("/nonexistent/my.rules", kCategories), NotFoundError);
}

TEST(RulesTest, QueriesMatchStemsPhrasesBooleansAndTitle) {
  const RuleSet rules = parse(
      "a\tassign\tprofit\n"             // 0: stem: matches "profits"
      "a\tassign\t\"net profit\"\n"     // 1: phrase
      "a\tassign\tnet loss\n"           // 2: default AND
      "a\tassign\tnet NOT profit\n"     // 3
      "a\tassign\ttitle:quarterly\n");  // 4: the title only
  EXPECT_EQ(rules.matching("Net profits rose", ""), (std::vector<size_t>{0}));
  EXPECT_EQ(rules.matching("The net profit rose", ""), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(rules.matching("a loss, net of tax", ""), (std::vector<size_t>{2, 3}));
  EXPECT_EQ(rules.matching("quarterly figures", ""), (std::vector<size_t>{}));
  EXPECT_EQ(rules.matching("figures", "Quarterly results"), (std::vector<size_t>{4}));
}

// Rules are parsed once at load; matching a document must not parse them again
// nor hand the matcher thousands of terms the document lacks.
TEST(RulesTest, ManyOrTermsCostLittlePerDocument) {
  std::string big;
  for (int i = 0; i < 5000; ++i) big += (i == 0 ? "" : " OR ") + ("word" + std::to_string(i));
  const RuleSet rules = parse("a\tassign\t" + big +
                              "\n"
                              "b\tassign\t(alpha OR beta) AND NOT gamma\n"
                              "c\tassign\talpha OR (beta AND delta) OR \"net profit\"\n");
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0; round < 10; ++round) {
    EXPECT_EQ(rules.matching("it said word4321 twice", ""), (std::vector<size_t>{0}));
    EXPECT_EQ(rules.matching("nothing at all", ""), (std::vector<size_t>{}));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 2.0) << "20 documents against a rule of 5000 OR'd terms";
  // Pruning keeps the meaning of the other operators.
  EXPECT_EQ(rules.matching("alpha", ""), (std::vector<size_t>{1, 2}));
  EXPECT_EQ(rules.matching("alpha gamma", ""), (std::vector<size_t>{2}));
  EXPECT_EQ(rules.matching("beta gamma", ""), (std::vector<size_t>{}));
  EXPECT_EQ(rules.matching("beta delta", ""), (std::vector<size_t>{1, 2}));
  EXPECT_EQ(rules.matching("profit net", ""), (std::vector<size_t>{}));
  EXPECT_EQ(rules.matching("net profit word7", ""), (std::vector<size_t>{0, 2}));
}

// What a document lacks is left out of each query before matching: the
// result must be what the whole query gives.
TEST(RulesTest, MatchingIsUnchangedByWhatTheDocumentLacks) {
  const RuleSet rules = parse(
      "a\tassign\tcomet NOT gamma NOT delta\n"
      "a\tassign\t(alpha OR beta) AND (gamma OR delta)\n"
      "a\tassign\tcomet OR (gamma NOT delta)\n"
      "a\tassign\talpha XOR beta\n"
      "a\tassign\t(alpha OR zeta) NOT (gamma OR \"net profit\")\n");
  EXPECT_EQ(rules.matching("comet", ""), (std::vector<size_t>{0, 2}));
  EXPECT_EQ(rules.matching("comet delta", ""), (std::vector<size_t>{2}));
  EXPECT_EQ(rules.matching("beta gamma", ""), (std::vector<size_t>{1, 2, 3}));
  EXPECT_EQ(rules.matching("alpha beta", ""), (std::vector<size_t>{4}));
  EXPECT_EQ(rules.matching("zeta", ""), (std::vector<size_t>{4}));
  EXPECT_EQ(rules.matching("zeta net profit", ""), (std::vector<size_t>{}));
  EXPECT_EQ(rules.matching("zeta profit net", ""), (std::vector<size_t>{4}));
}

// An oversized or deeply nested query is one short line naming the rule.
TEST(RulesTest, QuerySizeAndNestingAreBounded) {
  std::string long_query;
  while (long_query.size() <= kMaxRuleQueryBytes) long_query += "apple OR ";
  long_query += "pear";
  const std::string too_long = parse_error("a\tassign\tapple\na\tassign\t" + long_query + "\n");
  EXPECT_EQ(too_long.rfind("my.rules:2: query 'apple OR apple", 0), 0u) << too_long.substr(0, 300);
  EXPECT_NE(too_long.find("is longer than " + std::to_string(kMaxRuleQueryBytes) + " bytes"),
            std::string::npos)
      << too_long.substr(0, 300);

  const std::string deep = std::string(20000, '(') + "apple" + std::string(20000, ')');
  const std::string too_deep = parse_error("a\tassign\t" + deep + "\n");
  EXPECT_EQ(too_deep.rfind("my.rules:1: query '(((", 0), 0u) << too_deep.substr(0, 300);
  EXPECT_NE(too_deep.find("nests parentheses more than"), std::string::npos)
      << too_deep.substr(0, 300);
  for (const std::string& message : {too_long, too_deep}) {
    EXPECT_LT(message.size(), 300u);
    EXPECT_EQ(message.find('\n'), std::string::npos);
  }
  // Within the bounds, nesting still works.
  std::string nested = "apple";
  for (int i = 0; i < 50; ++i) nested = "(pear" + std::to_string(i) + " OR " + nested + ")";
  EXPECT_EQ(parse("a\tassign\t" + nested + "\n").matching("apple pie", ""),
            (std::vector<size_t>{0}));
}

std::unique_ptr<Categorizer> fitted(bool multi_label) {
  std::vector<LabelledTerms> docs;
  for (int i = 0; i < 6; ++i) {
    docs.push_back({split("apple apricot avocado"), {"a"}});
    docs.push_back({split("banana blueberry"), {"b"}});
    docs.push_back({split("cherry coconut"), {"c"}});
  }
  if (multi_label) docs.push_back({split("apple banana"), {"a", "b"}});
  auto corpus = std::make_shared<const TrainingCorpus>(make_training_corpus(docs));
  ModelState model = fit_model(*corpus, resolve_analyzer_options(AnalyzerOptions()), {});
  return std::make_unique<Categorizer>(std::move(model), corpus);
}

std::vector<std::string> names(const std::vector<Category>& categories) {
  std::vector<std::string> out;
  for (const Category& category : categories) out.push_back(category.name);
  return out;
}

TEST(RulesTest, AssignVetoAndEvidenceChangeTheDecision) {
  const auto categorizer = fitted(false);  // one-of
  ASSERT_EQ(categorizer->decision_mode(ClassifyOptions()), Decision::kOneOf);
  ClassifyOptions options;
  options.method = Method::kRocchio;
  const RuleSet rules = parse(
      "c\tassign\tcherry\n"
      "a\tveto\tveto\n"
      "b\tevidence:+0.9\tboost\n"
      "c\tveto\tnocherry\n");
  const std::vector<double> scores = {0.6, 0.3, 0.1};

  // No rule fires: the learned decision, untouched.
  DecisionTrace plain = rules.decide(*categorizer, scores, "nothing", "", options);
  EXPECT_EQ(names(plain.assigned), (std::vector<std::string>{"a"}));
  EXPECT_TRUE(plain.rules.empty());

  // assign adds its category with score 1, first.
  DecisionTrace assigned = rules.decide(*categorizer, scores, "cherry", "", options);
  EXPECT_EQ(names(assigned.assigned), (std::vector<std::string>{"c", "a"}));
  EXPECT_DOUBLE_EQ(assigned.assigned[0].score, 1.0);
  ASSERT_EQ(assigned.rules.size(), 1u);
  EXPECT_EQ(assigned.rules[0].source, "my.rules:1");
  EXPECT_NE(assigned.reason.find("assign c (my.rules:1)"), std::string::npos);

  // veto: one-of falls to the next best category.
  DecisionTrace vetoed = rules.decide(*categorizer, scores, "veto", "", options);
  EXPECT_EQ(names(vetoed.assigned), (std::vector<std::string>{"b"}));

  // evidence lifts b's score over a's.
  DecisionTrace boosted = rules.decide(*categorizer, scores, "boost", "", options);
  EXPECT_EQ(names(boosted.assigned), (std::vector<std::string>{"b"}));
  EXPECT_DOUBLE_EQ(boosted.assigned[0].score, 1.0);  // 0.3 + 0.9, clamped

  // A veto beats an assign of the same category.
  DecisionTrace both = rules.decide(*categorizer, scores, "cherry nocherry", "", options);
  EXPECT_EQ(names(both.assigned), (std::vector<std::string>{"a"}));
  EXPECT_EQ(both.rules.size(), 2u);
}

}  // namespace
}  // namespace autocat::internal
