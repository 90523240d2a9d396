#include "classify/methods/em.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "autocat/error.h"
#include "classify/corpus/document_reader.h"
#include "classify/io/model_dir.h"
#include "classify/model/model_io.h"
#include "classify/text/analyzer.h"
#include "tests/cli_test_util.h"

namespace autocat::internal {
namespace {

// Two topics, each with 20 words of its own. Labelled document i of a topic
// uses only its words 4i to 4i+3 (i < 3); unlabelled documents draw from all
// 20 and test documents from words 12-19, so only the unlabelled documents
// link words 12-19 to a topic: plain NB knows nothing about them, EM learns
// them. A held-out labelled document shares no word with the other labelled
// documents either, so cross-validation sees EM help too.
class EmTest : public testing::Test {
 protected:
  static constexpr int kTopicWords = 20;

  EmTest() {
    std::mt19937 random(7);
    auto document = [&](const std::string& topic, int first_word, int num_words) {
      std::vector<std::string> terms;
      for (int i = 0; i < 6; ++i) {
        terms.push_back(topic +
                        std::to_string(first_word + static_cast<int>(random() % num_words)));
      }
      return terms;
    };
    std::vector<LabelledTerms> docs;
    for (int i = 0; i < 3; ++i) {
      docs.push_back({document("a", 4 * i, 4), {"alpha"}});
      docs.push_back({document("b", 4 * i, 4), {"beta"}});
    }
    // Unlabelled documents: in the vocabulary (no label), and as term counts.
    std::vector<std::vector<std::string>> unlabelled_terms;
    for (int i = 0; i < 200; ++i) {
      unlabelled_terms.push_back(document(i % 2 == 0 ? "a" : "b", 0, kTopicWords));
      docs.push_back({unlabelled_terms.back(), {}});
    }
    corpus_ = make_training_corpus(docs);
    const Vocabulary vocabulary(corpus_.terms);
    for (const auto& terms : unlabelled_terms) {
      unlabelled_.push_back(make_document_terms(vocabulary, terms));
    }
    // Test documents use only the words no labelled document has.
    for (int i = 0; i < 100; ++i) {
      test_.push_back(make_document_terms(vocabulary, document(i % 2 == 0 ? "a" : "b", 12, 8)));
      truth_.push_back(i % 2 == 0 ? 0 : 1);  // alpha = 0, beta = 1
    }
  }

  double accuracy(const NaiveBayesModel& model) const {
    const NaiveBayesClassifier classifier(model);
    std::vector<double> scores;
    int correct = 0;
    for (size_t i = 0; i < test_.size(); ++i) {
      classifier.log_scores(test_[i], &scores);
      // A tie (no evidence) counts as wrong, not as a lucky first class.
      if (scores[truth_[i]] > scores[1 - truth_[i]]) ++correct;
    }
    return static_cast<double>(correct) / static_cast<double>(test_.size());
  }

  TrainingCorpus corpus_;
  std::vector<DocumentTerms> unlabelled_;
  std::vector<DocumentTerms> test_;
  std::vector<uint32_t> truth_;
};

TEST_F(EmTest, UnlabelledDocumentsTeachTheWordsLabelledOnesLack) {
  const double plain = accuracy(train_multinomial_nb(corpus_, {}, 1.0));
  const EmResult em = run_naive_bayes_em(corpus_, unlabelled_, {}, 1.0, /*lambda=*/1.0,
                                         /*max_iterations=*/20, /*tolerance=*/1e-6);
  EXPECT_LT(plain, 0.1);  // every test word is unseen in the labelled documents
  EXPECT_GE(accuracy(em.model), 0.95);
  EXPECT_GT(em.report.iterations, 0);
  EXPECT_EQ(em.report.unlabelled_docs, 200u);
  EXPECT_EQ(em.report.lambda, 1.0);
}

TEST_F(EmTest, LogLikelihoodNeverDecreases) {
  for (double lambda : {0.1, 1.0}) {
    const EmResult em = run_naive_bayes_em(corpus_, unlabelled_, {}, 1.0, lambda, 30, 0.0);
    const std::vector<double>& likelihood = em.report.log_likelihood;
    ASSERT_EQ(likelihood.size(), static_cast<size_t>(em.report.iterations) + 1);
    ASSERT_GE(likelihood.size(), 3u);
    for (size_t k = 1; k < likelihood.size(); ++k) {
      EXPECT_GE(likelihood[k], likelihood[k - 1] - 1e-9 * std::fabs(likelihood[k - 1]))
          << "lambda " << lambda << ", iteration " << k;
    }
    EXPECT_GT(likelihood.back(), likelihood.front());
  }
}

TEST_F(EmTest, StopsAtTheIterationLimitOrWhenTheLikelihoodSettles) {
  const EmResult limited = run_naive_bayes_em(corpus_, unlabelled_, {}, 1.0, 1.0, 2, 0.0);
  EXPECT_EQ(limited.report.iterations, 2);
  EXPECT_FALSE(limited.report.converged);
  const EmResult settled = run_naive_bayes_em(corpus_, unlabelled_, {}, 1.0, 1.0, 100, 1e-3);
  EXPECT_TRUE(settled.report.converged);
  EXPECT_LT(settled.report.iterations, 100);
  const std::vector<double>& likelihood = settled.report.log_likelihood;
  const double last = likelihood.back(), before = likelihood[likelihood.size() - 2];
  EXPECT_LT(std::fabs(last - before), 1e-3 * std::fabs(before));
}

TEST_F(EmTest, LambdaZeroIsPlainNaiveBayes) {
  EmOptions options;
  options.lambda_grid = {0.0};
  const EmResult em = train_multinomial_nb_em(corpus_, unlabelled_, {}, 1.0, options);
  const NaiveBayesModel plain = train_multinomial_nb(corpus_, {}, 1.0);
  EXPECT_EQ(em.report.iterations, 0);
  EXPECT_EQ(em.report.lambda, 0.0);
  const std::vector<float> plain_weight = plain.dense_weights();
  ASSERT_EQ(em.model.term_weight.size(), plain_weight.size());
  for (size_t i = 0; i < plain_weight.size(); ++i) {
    EXPECT_NEAR(em.model.term_weight[i], plain_weight[i], 1e-6) << i;
  }
  for (uint32_t c = 0; c < plain.num_categories; ++c) {
    EXPECT_NEAR(em.model.log_prior[c], plain.log_prior[c], 1e-12);
  }
}

TEST_F(EmTest, CrossValidationPrefersUnlabelledDocumentsWhenTheyHelp) {
  const EmResult em = train_multinomial_nb_em(corpus_, unlabelled_, {}, 1.0, EmOptions());
  ASSERT_EQ(em.report.lambda_accuracy.size(), EmOptions().lambda_grid.size());
  EXPECT_GT(em.report.lambda, 0.0);
  EXPECT_GT(em.report.iterations, 0);
  EXPECT_GE(accuracy(em.model), 0.95);
}

TEST_F(EmTest, UnselectedTermsGetNoWeight) {
  std::vector<uint8_t> selected(corpus_.num_terms(), 1);
  selected[0] = 0;
  const EmResult em = run_naive_bayes_em(corpus_, unlabelled_, selected, 1.0, 1.0, 5, 0.0);
  for (uint32_t c = 0; c < em.model.num_categories; ++c) {
    EXPECT_EQ(em.model.term_weight[c], 0.0f);
  }
}

TEST_F(EmTest, RejectsBadSettings) {
  EXPECT_THROW(run_naive_bayes_em(corpus_, unlabelled_, {}, 0.0, 1.0, 5, 0.0),
               InvalidArgumentError);
  EXPECT_THROW(run_naive_bayes_em(corpus_, unlabelled_, {}, 1.0, -1.0, 5, 0.0),
               InvalidArgumentError);
  EmOptions options;
  options.lambda_grid.clear();
  EXPECT_THROW(train_multinomial_nb_em(corpus_, unlabelled_, {}, 1.0, options),
               InvalidArgumentError);
}

// `autocat train --unlabelled`: two topics, two labelled documents each, and
// unlabelled documents (one of them labelled: its label is ignored).
class TrainUnlabelledCliTest : public testing::Test {
 protected:
  TrainUnlabelledCliTest() {
    testing_util::write_file(dir_.file("labelled.jsonl"),
                             R"({"id":"l1","text":"football goal striker","labels":["sport"]}
{"id":"l2","text":"referee penalty stadium","labels":["sport"]}
{"id":"l3","text":"compiler kernel memory","labels":["computing"]}
{"id":"l4","text":"processor linux software","labels":["computing"]}
)");
    testing_util::write_file(dir_.file("unlabelled.jsonl"),
                             R"({"id":"u1","text":"football referee league coach"}
{"id":"u2","text":"striker penalty match coach"}
{"id":"u3","text":"kernel linux debugger thread"}
{"id":"u4","text":"compiler software cache thread","labels":["sport"]}
{"id":"u5","text":"nothing known here"}
)");
  }
  testing_util::TempDir dir_;
};

TEST_F(TrainUnlabelledCliTest, ReportsLambdaIterationsAndLikelihood) {
  const std::string model = dir_.file("model");
  const testing_util::CliResult result = testing_util::run_autocat(
      {"train", "--model", model, "--unlabelled", dir_.file("unlabelled.jsonl"), "--em-lambda", "1",
       "--json", dir_.file("labelled.jsonl")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const Json summary = testing_util::json(result.out);
  EXPECT_EQ(summary.at("documents").get<double>(), 4);  // unlabelled ones stay out
  const Json* em = testing_util::member(summary, "em");
  ASSERT_TRUE(em != nullptr && em->is_object()) << result.out;
  EXPECT_EQ(em->at("unlabelled_read").get<double>(), 5);
  EXPECT_EQ(em->at("unlabelled_used").get<double>(), 4);  // u5 has no known term
  EXPECT_EQ(em->at("lambda").get<double>(), 1);
  const double iterations = em->at("iterations").get<double>();
  EXPECT_GE(iterations, 1);
  const Json& likelihood = em->at("log_likelihood");
  ASSERT_EQ(likelihood.size(), static_cast<size_t>(iterations) + 1);
  for (size_t k = 1; k < likelihood.size(); ++k) {
    EXPECT_GE(likelihood[k].get<double>(), likelihood[k - 1].get<double>() - 1e-6);
  }
  EXPECT_TRUE(em->at("lambda_cross_validation").empty());  // lambda was given

  // The model file records what EM did.
  const ModelState state = read_model_file(resolve_model_dir(model).model_file);
  EXPECT_EQ(state.em.lambda, 1.0);
  EXPECT_EQ(state.em.iterations, static_cast<int>(iterations));
  EXPECT_EQ(state.em.unlabelled_docs, 4u);
  EXPECT_EQ(state.num_docs, 4u);

  // The human summary prints the log-likelihood of every iteration.
  const testing_util::CliResult text =
      testing_util::run_autocat({"train", "--model", dir_.file("model2"), "--unlabelled",
                                 dir_.file("unlabelled.jsonl"), dir_.file("labelled.jsonl")});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("iteration 0  log-likelihood"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("unlabelled"), std::string::npos) << text.out;
}

TEST_F(TrainUnlabelledCliTest, RefusesEmOptionsThatCannotApply) {
  const testing_util::CliResult no_input = testing_util::run_autocat(
      {"train", "--model", dir_.file("model"), "--em-lambda", "1", dir_.file("labelled.jsonl")});
  EXPECT_EQ(no_input.exit_code, 2);
  EXPECT_NE(no_input.err.find("--em-lambda needs --unlabelled INPUT"), std::string::npos)
      << no_input.err;
  const testing_util::CliResult with_add =
      testing_util::run_autocat({"train", "--model", dir_.file("model"), "--add", "--unlabelled",
                                 dir_.file("unlabelled.jsonl"), dir_.file("labelled.jsonl")});
  EXPECT_EQ(with_add.exit_code, 2);
  EXPECT_NE(with_add.err.find("need a new model"), std::string::npos) << with_add.err;
  const testing_util::CliResult missing =
      testing_util::run_autocat({"train", "--model", dir_.file("model"), "--unlabelled",
                                 dir_.file("absent.jsonl"), dir_.file("labelled.jsonl")});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("absent.jsonl"), std::string::npos) << missing.err;
}

// --unlabelled-db: the unlabelled documents come from an application's
// index (here one `autocat index --store-text` wrote), as --unlabelled
// would read them from the same records.
TEST_F(TrainUnlabelledCliTest, ReadsUnlabelledDocumentsFromAnApplicationIndex) {
  const std::string first = dir_.file("first"), app = dir_.file("app.db");
  ASSERT_EQ(
      testing_util::run_autocat({"train", "--model", first, dir_.file("labelled.jsonl")}).exit_code,
      0);
  // Titled records: the document data is the title, so only the stored
  // text gives EM the words.
  std::string titled;
  for (const std::string& line :
       testing_util::split_lines(testing_util::read_file(dir_.file("unlabelled.jsonl")))) {
    titled += "{\"title\":\"untitled\"," + line.substr(1) + "\n";
  }
  testing_util::write_file(dir_.file("titled.jsonl"), titled);
  const testing_util::CliResult indexed = testing_util::run_autocat(
      {"index", "--model", first, "--db", app, "--store-text", dir_.file("titled.jsonl")});
  ASSERT_EQ(indexed.exit_code, 0) << indexed.err;

  const auto em_of = [&](const std::vector<std::string>& source, const std::string& model) {
    std::vector<std::string> args = {"train", "--model", model, "--em-lambda", "1", "--json"};
    args.insert(args.end(), source.begin(), source.end());
    args.push_back(dir_.file("labelled.jsonl"));
    const testing_util::CliResult result = testing_util::run_autocat(args);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return testing_util::json(result.out);
  };
  const Json from_db = em_of({"--unlabelled-db", app}, dir_.file("m-db"));
  const Json from_file =
      em_of({"--unlabelled", dir_.file("unlabelled.jsonl")}, dir_.file("m-file"));
  const Json* em = testing_util::member(from_db, "em");
  ASSERT_TRUE(em != nullptr && em->is_object());
  EXPECT_EQ(em->at("unlabelled_read").get<double>(), 5);
  EXPECT_EQ(em->at("unlabelled_used").get<double>(), 4);  // u5 has no known term
  EXPECT_EQ(from_db.at("documents").get<double>(), 4);    // they stay out of the collection
  const Json& db_likelihood = em->at("log_likelihood");
  const Json& file_likelihood = from_file.at("em").at("log_likelihood");
  ASSERT_EQ(db_likelihood.size(), file_likelihood.size());
  for (size_t k = 0; k < db_likelihood.size(); ++k) {
    EXPECT_DOUBLE_EQ(db_likelihood[k].get<double>(), file_likelihood[k].get<double>()) << k;
  }

  const testing_util::CliResult missing =
      testing_util::run_autocat({"train", "--model", dir_.file("m-missing"), "--unlabelled-db",
                                 dir_.file("absent.db"), dir_.file("labelled.jsonl")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("absent.db"), std::string::npos) << missing.err;
}

// Model files from before EM (ModelState version < 2) load with EM not used.
TEST(EmModelFileTest, OlderModelsLoadWithoutEm) {
  const ModelState old = read_model_file(testing_util::test_data("model-2026-11-22-v0.autocat"));
  EXPECT_EQ(old.em.iterations, 0);
  EXPECT_EQ(old.em.lambda, 0.0);
  EXPECT_TRUE(old.em.log_likelihood.empty());
  EXPECT_EQ(old.num_docs, 112u);
}

// 20 Newsgroups bydate, 20 labelled documents per category from split
// "train" (drawn as bench/em_eval does with seed 1), the rest unlabelled,
// lambda 1 (no cross-validation, to keep the test short). Measured
// (BENCHMARKS.md): plain NB 0.4701, EM 0.5879; floors 0.003 below.
TEST(EmNewsgroupsTest, UnlabelledDocumentsCutTheErrorOfFewLabels) {
  const std::string data = std::string(AUTOCAT_SHARED_DATA_DIR) + "/20news-bydate.jsonl.gz";
  if (!std::filesystem::exists(data)) {
    GTEST_SKIP() << "20 Newsgroups data not found at " << data
                 << " (see ../shared/data/README.md); EM accuracy NOT checked";
  }
  const Analyzer analyzer(resolve_analyzer_options(AnalyzerOptions()));
  struct Doc {
    std::vector<std::string> terms;
    std::string label;
  };
  auto read_split = [&](const std::string& split) {
    std::vector<Doc> docs;
    ReadOptions options;
    options.split = split;
    read_documents(
        {data}, options,
        [&](InputDocument&& input) {
          if (input.labels.size() != 1) return;
          Doc doc;
          for (const Token& token : analyzer.analyze(input.text)) doc.terms.push_back(token.term);
          doc.label = input.labels[0];
          docs.push_back(std::move(doc));
        },
        nullptr);
    return docs;
  };
  const std::vector<Doc> train = read_split("train");
  const std::vector<Doc> test = read_split("test");
  const int per_category = 20, seed = 1;
  std::map<std::string, std::vector<size_t>> by_label;
  for (size_t i = 0; i < train.size(); ++i) by_label[train[i].label].push_back(i);
  std::vector<char> is_labelled(train.size(), 0);
  std::mt19937_64 random(static_cast<uint64_t>(seed) * 1000003u + per_category);
  for (const auto& [label, indexes] : by_label) {
    std::vector<size_t> order = indexes;
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[random() % i]);
    for (size_t i = 0; i < order.size() && i < per_category; ++i) is_labelled[order[i]] = 1;
  }
  std::vector<LabelledTerms> labelled;
  for (size_t i = 0; i < train.size(); ++i) {
    if (is_labelled[i]) labelled.push_back({train[i].terms, {train[i].label}});
  }
  const TrainingCorpus corpus = make_training_corpus(labelled);
  const Vocabulary vocabulary(corpus.terms);
  std::vector<DocumentTerms> unlabelled;
  for (size_t i = 0; i < train.size(); ++i) {
    if (!is_labelled[i]) unlabelled.push_back(make_document_terms(vocabulary, train[i].terms));
  }
  auto accuracy = [&](const NaiveBayesModel& model) {
    const NaiveBayesClassifier classifier(model);
    std::vector<double> scores;
    size_t correct = 0;
    for (const Doc& doc : test) {
      classifier.log_scores(make_document_terms(vocabulary, doc.terms), &scores);
      const auto best = std::max_element(scores.begin(), scores.end()) - scores.begin();
      correct += corpus.categories[static_cast<size_t>(best)] == doc.label ? 1 : 0;
    }
    return static_cast<double>(correct) / static_cast<double>(test.size());
  };
  const double plain = accuracy(train_multinomial_nb(corpus, {}, 1.0));
  EmOptions options;
  options.lambda = 1.0;
  const EmResult em = train_multinomial_nb_em(corpus, unlabelled, {}, 1.0, options);
  const double with_em = accuracy(em.model);
  EXPECT_GE(plain, 0.4701 - 0.003);
  EXPECT_GE(with_em, 0.5879 - 0.003);
  EXPECT_GT(em.report.iterations, 0);
  std::printf("20NG, 20 labelled per category: NB %.4f, EM %.4f (%d iterations)\n", plain, with_em,
              em.report.iterations);
}

}  // namespace
}  // namespace autocat::internal
