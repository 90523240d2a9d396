// What learning one document costs against classifying one, in one open
// model: each round learns a document (journaled without fsync), then
// scores a document with the method, which refits the method's live model;
// then scores it again, which only classifies. Prints the first round
// (the live state is built then) and the mean of the others.
//
// usage: learn_cost MODEL_DIR LEARN.jsonl METHOD [ROUNDS]
// MODEL_DIR is written (its journal grows): give it a copy.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "autocat/types.h"
#include "bench/bench_util.h"

using autocat::bench::Clock;
using autocat::bench::since;

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: learn_cost MODEL_DIR LEARN.jsonl METHOD [ROUNDS]\n");
    return 2;
  }
  try {
    namespace ai = autocat::internal;
    const int rounds = argc == 5 ? std::atoi(argv[4]) : 20;
    std::vector<ai::InputDocument> docs;
    ai::read_documents(
        {argv[2]}, ai::ReadOptions(),
        [&](ai::InputDocument&& doc) { docs.push_back(std::move(doc)); }, nullptr);
    if (docs.size() < static_cast<size_t>(rounds) || rounds < 2) {
      std::fprintf(stderr, "learn_cost: need at least ROUNDS (>= 2) documents in %s\n", argv[2]);
      return 2;
    }
    const auto open_start = Clock::now();
    ai::Categorizer categorizer(argv[1]);
    const double open_seconds = since(open_start);
    autocat::ClassifyOptions options;
    options.method = autocat::parse_method(argv[3]);
    if (!options.method) {
      std::fprintf(stderr, "learn_cost: unknown method %s\n", argv[3]);
      return 2;
    }
    double first_learn = 0, first_score = 0, learn_and_score = 0, score_only = 0;
    for (int r = 0; r < rounds; ++r) {
      const ai::InputDocument& doc = docs[r];
      const ai::DocumentTerms terms =
          categorizer.document_terms(categorizer.analyzer().analyze(doc.text));
      const auto start = Clock::now();
      categorizer.learn({ai::LearnedDocument{doc.id, doc.text, doc.labels}}, /*sync=*/false);
      const double learned = since(start);
      categorizer.scores(terms, options);
      const double scored = since(start);
      const auto again = Clock::now();
      categorizer.scores(terms, options);
      const double rescored = since(again);
      if (r == 0) {
        first_learn = learned;
        first_score = scored - learned;
      } else {
        learn_and_score += scored;
        score_only += rescored;
      }
    }
    std::printf(
        "{\"method\": \"%s\", \"open_s\": %.4f, \"first_learn_s\": %.4f, "
        "\"first_score_s\": %.4f, \"learn_and_score_ms\": %.3f, \"score_ms\": %.3f}\n",
        argv[3], open_seconds, first_learn, first_score, 1000 * learn_and_score / (rounds - 1),
        1000 * score_only / (rounds - 1));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "learn_cost: %s\n", e.what());
    return 1;
  }
  return 0;
}
