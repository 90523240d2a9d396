// Semi-supervised EM on 20 Newsgroups bydate (Nigam et al. 2000): N labelled
// documents per category drawn from split "train" with a fixed seed, the rest
// of split "train" unlabelled; test accuracy of multinomial NB on split
// "test" without and with EM (lambda chosen by 5-fold cross-validation on the
// labelled documents), iterations and time. One thread.
//
// usage: em_eval [--data FILE] [--labelled N,N,...] [--seeds S] [--vocabulary labelled|all]
//                [--max-iterations N] [--lambda L] [--alpha A] [--length N]
// --vocabulary labelled (default) is what `autocat train --unlabelled` does:
// the vocabulary is the labelled documents' terms, unlabelled documents are
// mapped onto it. "all" also takes the unlabelled documents' terms into the
// vocabulary, as Nigam et al. did. --lambda fixes lambda (no
// cross-validation); --length sets EmOptions::normalized_length.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "classify/corpus/document_reader.h"
#include "classify/methods/em.h"
#include "classify/methods/naive_bayes.h"
#include "classify/text/analyzer.h"

using autocat::bench::Clock;
using autocat::bench::parse_list;
using autocat::bench::since;
namespace ai = autocat::internal;

namespace {

struct Doc {
  std::vector<std::string> terms;
  std::string label;
};

std::vector<Doc> read_split(const std::string& data, const std::string& split,
                            const ai::Analyzer& analyzer) {
  std::vector<Doc> docs;
  ai::ReadOptions options;
  options.split = split;
  std::vector<ai::Token> tokens;
  ai::read_documents(
      {data}, options,
      [&](ai::InputDocument&& input) {
        if (input.labels.size() != 1) return;
        tokens.clear();
        analyzer.analyze(input.text, &tokens);
        Doc doc;
        for (const ai::Token& token : tokens) doc.terms.push_back(token.term);
        doc.label = input.labels[0];
        docs.push_back(std::move(doc));
      },
      nullptr);
  return docs;
}

double accuracy(const ai::NaiveBayesModel& model, const std::vector<ai::DocumentTerms>& test,
                const std::vector<uint32_t>& truth) {
  const ai::NaiveBayesClassifier classifier(model);
  std::vector<double> scores;
  size_t correct = 0;
  for (size_t i = 0; i < test.size(); ++i) {
    classifier.log_scores(test[i], &scores);
    const auto best =
        static_cast<uint32_t>(std::max_element(scores.begin(), scores.end()) - scores.begin());
    correct += best == truth[i] ? 1 : 0;
  }
  return static_cast<double>(correct) / static_cast<double>(test.size());
}

}  // namespace

int main(int argc, char** argv) {
  std::string data = std::string(AUTOCAT_SOURCE_DIR) + "/../shared/data/20news-bydate.jsonl.gz";
  std::vector<int> sizes = {5, 20, 100};
  int seeds = 3;
  bool all_vocabulary = false;
  ai::EmOptions em_options;
  double alpha = 1.0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--data") {
      data = value;
    } else if (flag == "--labelled") {
      sizes = parse_list(value);
    } else if (flag == "--seeds") {
      seeds = std::stoi(value);
    } else if (flag == "--vocabulary") {
      all_vocabulary = value == "all";
    } else if (flag == "--lambda") {
      em_options.lambda = std::stod(value);  // fixed, no cross-validation
    } else if (flag == "--length") {
      em_options.normalized_length = std::stod(value);
    } else if (flag == "--alpha") {
      alpha = std::stod(value);
    } else if (flag == "--max-iterations") {
      em_options.max_iterations = std::stoi(value);
    } else {
      std::cerr << "unknown option " << flag << '\n';
      return 2;
    }
  }
  const ai::Analyzer analyzer(ai::resolve_analyzer_options(autocat::AnalyzerOptions()));
  const auto read_start = Clock::now();
  const std::vector<Doc> train = read_split(data, "train", analyzer);
  const std::vector<Doc> test = read_split(data, "test", analyzer);
  std::printf("read and analyzed %zu train + %zu test documents in %.1f s; vocabulary: %s\n",
              train.size(), test.size(), since(read_start),
              all_vocabulary ? "labelled + unlabelled" : "labelled");
  std::map<std::string, std::vector<size_t>> by_label;
  for (size_t i = 0; i < train.size(); ++i) by_label[train[i].label].push_back(i);

  std::printf("%8s %4s %8s %8s %7s %6s %5s %7s %7s\n", "labelled", "seed", "nb_acc", "em_acc",
              "lambda", "iters", "unlab", "em_s", "err_cut");
  for (int per_category : sizes) {
    double sum_nb = 0, sum_em = 0, sum_iterations = 0, sum_seconds = 0;
    for (int seed = 1; seed <= seeds; ++seed) {
      std::vector<char> is_labelled(train.size(), 0);
      std::mt19937_64 random(static_cast<uint64_t>(seed) * 1000003u + per_category);
      for (const auto& [label, indexes] : by_label) {
        std::vector<size_t> order = indexes;
        for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[random() % i]);
        for (size_t i = 0; i < order.size() && i < static_cast<size_t>(per_category); ++i) {
          is_labelled[order[i]] = 1;
        }
      }
      std::vector<ai::LabelledTerms> corpus_docs;
      for (size_t i = 0; i < train.size(); ++i) {
        if (is_labelled[i]) {
          corpus_docs.push_back({train[i].terms, {train[i].label}});
        } else if (all_vocabulary) {
          corpus_docs.push_back({train[i].terms, {}});  // in the vocabulary, no class
        }
      }
      const ai::TrainingCorpus corpus = ai::make_training_corpus(corpus_docs);
      const ai::Vocabulary vocabulary(corpus.terms);
      std::vector<ai::DocumentTerms> unlabelled;
      for (size_t i = 0; i < train.size(); ++i) {
        if (!is_labelled[i])
          unlabelled.push_back(ai::make_document_terms(vocabulary, train[i].terms));
      }
      std::vector<ai::DocumentTerms> test_terms;
      std::vector<uint32_t> truth;
      for (const Doc& doc : test) {
        const auto category =
            std::lower_bound(corpus.categories.begin(), corpus.categories.end(), doc.label) -
            corpus.categories.begin();
        test_terms.push_back(ai::make_document_terms(vocabulary, doc.terms));
        truth.push_back(static_cast<uint32_t>(category));
      }
      const ai::NaiveBayesModel plain = ai::train_multinomial_nb(corpus, {}, alpha);
      const double nb = accuracy(plain, test_terms, truth);
      const ai::EmResult em =
          ai::train_multinomial_nb_em(corpus, unlabelled, {}, alpha, em_options);
      const double with_em = accuracy(em.model, test_terms, truth);
      std::printf("%8d %4d %8.4f %8.4f %7.2f %6d %5zu %7.1f %6.1f%%\n", per_category, seed, nb,
                  with_em, em.report.lambda, em.report.iterations,
                  static_cast<size_t>(em.report.unlabelled_docs), em.report.seconds,
                  100.0 * ((1 - nb) - (1 - with_em)) / (1 - nb));
      std::fflush(stdout);
      sum_nb += nb;
      sum_em += with_em;
      sum_iterations += em.report.iterations;
      sum_seconds += em.report.seconds;
    }
    const double nb = sum_nb / seeds, with_em = sum_em / seeds;
    std::printf("%8d %4s %8.4f %8.4f %7s %6.1f %5s %7.1f %6.1f%%\n", per_category, "mean", nb,
                with_em, "", sum_iterations / seeds, "", sum_seconds / seeds,
                100.0 * ((1 - nb) - (1 - with_em)) / (1 - nb));
    std::fflush(stdout);
  }
  return 0;
}
