// The kNN index file `train` writes (knn_index_file.h; KnnIndex::write/open): a
// loaded model maps it and finds the same neighbours as an index built
// from the training collection; a damaged or foreign file is refused by
// name; a generation without one still loads.
#include <gtest/gtest.h>
#include <xapian.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>
#include <utility>

#include "autocat/error.h"
#include "classify/corpus/document_reader.h"
#include "classify/corpus/weighting.h"
#include "classify/decide/categorizer.h"
#include "classify/io/model_dir.h"
#include "classify/methods/knn.h"
#include "classify/model/model_io.h"
#include "classify/train/trainer.h"
#include "test_util.h"

namespace autocat::internal {
namespace {

namespace fs = std::filesystem;
using testing_util::read_file;
using testing_util::test_data;
using testing_util::write_file;

class KnnIndexFileTest : public testing::Test {
 protected:
  void SetUp() override {
    train_model({test_data("fixture_train.jsonl")}, model_dir_, TrainOptions(), ReadOptions(),
                nullptr);
    paths_ = resolve_model_dir(model_dir_);
    ReadOptions read;
    read_documents(
        {test_data("fixture_test.jsonl")}, read,
        [&](InputDocument&& doc) { texts_.push_back(std::move(doc.text)); }, nullptr);
    ASSERT_FALSE(texts_.empty());
  }

  // The neighbours of every test text, as `categorizer` finds them.
  std::vector<std::vector<KnnIndex::Neighbour>> neighbours_of(const Categorizer& categorizer) {
    std::vector<std::vector<KnnIndex::Neighbour>> all;
    for (const std::string& text : texts_) {
      const DocumentTerms doc = categorizer.document_terms(categorizer.analyzer().analyze(text));
      all.push_back(categorizer.knn_index().neighbours(doc, 10));
    }
    return all;
  }

  // Overwrites `bytes` at `offset` of the index file.
  void patch(size_t offset, const std::string& bytes) {
    std::string file = read_file(paths_.knn_index);
    ASSERT_LE(offset + bytes.size(), file.size());
    file.replace(offset, bytes.size(), bytes);
    write_file(paths_.knn_index, file);
  }

  // Opening the model works, but kNN refuses the file, naming it.
  void ExpectRefused(const std::string& complaint) {
    const Categorizer categorizer(model_dir_);
    try {
      for (const std::string& text : texts_) categorizer.classify(text, ClassifyOptions());
      FAIL() << "expected ModelFormatError mentioning: " << complaint;
    } catch (const ModelFormatError& e) {
      EXPECT_NE(std::string(e.what()).find(paths_.knn_index), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(complaint), std::string::npos) << e.what();
    }
  }

  testing_util::TempDir dir_;
  const std::string model_dir_ = dir_.file("model");
  ModelPaths paths_;
  std::vector<std::string> texts_;
};

bool same(const std::vector<std::vector<KnnIndex::Neighbour>>& a,
          const std::vector<std::vector<KnnIndex::Neighbour>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return false;
    for (size_t j = 0; j < a[i].size(); ++j) {
      if (a[i][j].doc != b[i][j].doc || a[i][j].similarity != b[i][j].similarity) return false;
    }
  }
  return true;
}

// The streaming writer training uses gives the bytes of the in-memory
// index's own writer: multi-label and unlabelled documents, a term left out
// by feature selection (idf 0), repeated terms, and the fixture collection.
TEST(KnnIndexStreamedFileTest, SameBytesAsTheInMemoryIndexWrites) {
  testing_util::TempDir dir;
  const TrainingCorpus small = make_training_corpus({
      {{"apple", "pie", "apple", "oven"}, {"food"}},
      {{"comet", "orbit", "apple"}, {"science", "food"}},
      {{"goal", "match", "comet", "comet", "comet"}, {"sports"}},
      {{"pie", "goal"}, {}},
      {{"orbit", "telescope", "orbit"}, {"science"}},
  });
  std::vector<float> small_idf = compute_idf(small.df, small.num_docs(), {});
  small_idf[1] = 0.0f;  // a term feature selection left out
  const TrainingCorpus fixture =
      load_training_corpus(Xapian::Database(resolve_model_dir([&] {
                                              const std::string model = dir.file("model");
                                              train_model({test_data("fixture_train.jsonl")}, model,
                                                          TrainOptions(), ReadOptions(), nullptr);
                                              return model;
                                            }())
                                                .training_db));
  const std::vector<float> fixture_idf = compute_idf(fixture.df, fixture.num_docs(), {});
  for (const auto& [corpus, idf] :
       {std::pair(&small, &std::as_const(small_idf)), std::pair(&fixture, &fixture_idf)}) {
    const std::string in_memory = dir.file("in-memory.index"),
                      streamed = dir.file("streamed.index");
    std::string sublinear;
    for (KnnTf tf : {KnnTf::kSublinear, KnnTf::kDoubleLog}) {
      KnnIndex(*corpus, *idf, tf).write(in_memory);
      write_knn_index(*corpus, *idf, tf, streamed);
      EXPECT_EQ(read_file(streamed), read_file(in_memory))
          << corpus->num_docs() << " documents, " << knn_tf_name(tf) << " tf";
      // Training writes it from a corpus whose term strings it dropped.
      TrainingCorpus without_strings = *corpus;
      std::vector<std::string>().swap(without_strings.terms);
      const std::string from_postings = dir.file("from-postings.index");
      write_knn_index(without_strings, *idf, tf, from_postings);
      EXPECT_EQ(read_file(from_postings), read_file(in_memory)) << knn_tf_name(tf) << " tf";
      // Both corpora repeat terms: the transforms' weights differ.
      if (tf == KnnTf::kSublinear) {
        sublinear = read_file(streamed);
      } else if (corpus == &small) {
        EXPECT_TRUE(read_file(streamed) != sublinear);  // small repeats terms
      }
    }
  }
  EXPECT_THROW(write_knn_index(small, {1.0f}, KnnTf::kSublinear, dir.file("bad.index")),
               InvalidArgumentError);
}

// The two-step arrays: the streaming writer gives the in-memory index's
// bytes with them too; the file maps them back and searches as the index it
// was written from; a file from before them (version 1) opens and its
// two-step search is the exact one; a damaged section is refused by name.
TEST(KnnIndexTwoStepFileTest, WrittenMappedAndOldFilesStillOpen) {
  testing_util::TempDir dir;
  std::vector<LabelledTerms> docs;
  for (int d = 0; d < 300; ++d) {
    std::vector<std::string> terms;
    for (int i = 0; i < 12; ++i) terms.push_back("t" + std::to_string((d * 7 + i * i) % 90));
    docs.push_back({terms, {"c" + std::to_string(d % 3)}});
  }
  const TrainingCorpus corpus = make_training_corpus(docs);
  const std::vector<float> idf = compute_idf(corpus.df, corpus.num_docs(), {});
  const std::string in_memory = dir.file("in-memory.index"), streamed = dir.file("streamed.index"),
                    old = dir.file("old.index");
  KnnIndex built(corpus, idf);
  built.build_two_step(15);
  ASSERT_GT(built.num_pruned_postings(), 0u);
  built.write(in_memory);
  write_knn_index(corpus, idf, KnnTf::kSublinear, streamed, 15);
  EXPECT_EQ(read_file(streamed), read_file(in_memory));
  TrainingCorpus without_strings = corpus;
  std::vector<std::string>().swap(without_strings.terms);
  const std::string from_postings = dir.file("from-postings.index");
  write_knn_index(without_strings, idf, KnnTf::kSublinear, from_postings, 15);
  EXPECT_EQ(read_file(from_postings), read_file(in_memory));
  write_knn_index(corpus, idf, KnnTf::kSublinear, old);  // version 1
  EXPECT_LT(read_file(old).size(), read_file(streamed).size());

  const auto mapped = KnnIndex::open(streamed, idf, corpus.num_docs(), corpus.num_categories());
  ASSERT_TRUE(mapped != nullptr && mapped->has_two_step());
  EXPECT_EQ(mapped->prune_length(), 15u);
  const auto before = KnnIndex::open(old, idf, corpus.num_docs(), corpus.num_categories());
  ASSERT_TRUE(before != nullptr);
  EXPECT_FALSE(before->has_two_step());
  const Vocabulary vocabulary(corpus.terms);
  KnnTwoStepParams params;
  params.min_candidates = 0;
  params.candidates_per_k = 2;
  params.always = true;
  for (int d = 0; d < 300; d += 37) {
    const DocumentTerms query = make_document_terms(vocabulary, docs[size_t(d)].terms);
    const auto from_memory =
        built.neighbours(query, 10, 0, 1.0, KnnSearch::kTwoStep, nullptr, params);
    const auto from_file =
        mapped->neighbours(query, 10, 0, 1.0, KnnSearch::kTwoStep, nullptr, params);
    ASSERT_EQ(from_file.size(), from_memory.size());
    for (size_t i = 0; i < from_file.size(); ++i) {
      EXPECT_EQ(from_file[i].doc, from_memory[i].doc);
      EXPECT_EQ(from_file[i].similarity, from_memory[i].similarity);
    }
    const auto exact = built.neighbours(query, 10, 0, 1.0, KnnSearch::kPostingWalk);
    const auto fallback =
        before->neighbours(query, 10, 0, 1.0, KnnSearch::kTwoStep, nullptr, params);
    ASSERT_EQ(fallback.size(), exact.size());
    for (size_t i = 0; i < exact.size(); ++i) EXPECT_EQ(fallback[i].doc, exact[i].doc);
  }

  // The section's magic bytes, damaged.
  std::string bytes = read_file(streamed);
  const size_t section = bytes.find(std::string(kKnnTwoStepMagic, 8));
  ASSERT_NE(section, std::string::npos);
  bytes[section] = 'X';
  write_file(streamed, bytes);
  try {
    KnnIndex::open(streamed, idf, corpus.num_docs(), corpus.num_categories());
    FAIL() << "expected ModelFormatError";
  } catch (const ModelFormatError& e) {
    EXPECT_NE(std::string(e.what()).find(streamed), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("two-step section"), std::string::npos) << e.what();
  }
}

// Training with the two-step search records it in the model and writes the
// arrays; `--knn-search exact` (ClassifyOptions) still classifies exactly.
TEST(KnnIndexTwoStepFileTest, TrainingRecordsTheSearchItTunedWith) {
  testing_util::TempDir dir;
  const std::string model = dir.file("model");
  TrainOptions options;
  options.knn_search = KnnSearchMode::kTwoStep;
  train_model({test_data("fixture_train.jsonl")}, model, options, ReadOptions(), nullptr);
  const Categorizer categorizer(model);
  EXPECT_EQ(categorizer.model().knn_search, KnnSearchMode::kTwoStep);
  EXPECT_TRUE(categorizer.knn_index().has_two_step());
  ClassifyOptions exact;
  exact.knn_search = KnnSearchMode::kExact;
  exact.method = Method::kKnn;
  ClassifyOptions two_step = exact;
  two_step.knn_search = KnnSearchMode::kTwoStep;
  EXPECT_EQ(categorizer.knn_search(ClassifyOptions()), KnnSearchMode::kTwoStep);
  EXPECT_FALSE(categorizer.classify("comet orbit telescope", exact).empty());
  EXPECT_FALSE(categorizer.classify("comet orbit telescope", two_step).empty());

  // A refit keeps the search the model was tuned with.
  add_to_model({test_data("fixture_test.jsonl")}, model, ReadOptions(), nullptr, nullptr,
               /*retune=*/false);
  const Categorizer refitted(model);
  EXPECT_EQ(refitted.model().knn_search, KnnSearchMode::kTwoStep);
  EXPECT_TRUE(refitted.knn_index().has_two_step());

  // Unset, training keeps the exact search.
  const std::string small = dir.file("small");
  train_model({test_data("fixture_train.jsonl")}, small, TrainOptions(), ReadOptions(), nullptr);
  EXPECT_EQ(Categorizer(small).model().knn_search, KnnSearchMode::kExact);
  EXPECT_FALSE(Categorizer(small).knn_index().has_two_step());
}

TEST_F(KnnIndexFileTest, TrainWritesItAndLoadingMapsIt) {
  ASSERT_TRUE(fs::is_regular_file(paths_.knn_index));
  const Categorizer mapped(model_dir_);
  EXPECT_TRUE(mapped.knn_index().mapped());
  EXPECT_EQ(mapped.knn_index().num_docs(), 24u);

  // The same neighbours, bit for bit, as an index built from the training
  // collection (what loading did before the file existed).
  fs::remove(paths_.knn_index);
  const Categorizer rebuilt(model_dir_);
  EXPECT_FALSE(rebuilt.knn_index().mapped());
  const auto expected = neighbours_of(rebuilt);
  EXPECT_TRUE(same(neighbours_of(mapped), expected));
  size_t found = 0;
  for (const auto& list : expected) found += list.size();
  EXPECT_GT(found, texts_.size());  // the comparison compared something
  for (const std::string& text : texts_) {
    const auto a = mapped.classify(text, ClassifyOptions());
    const auto b = rebuilt.classify(text, ClassifyOptions());
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].name, b[i].name);
  }
}

// A model whose kNN takes double-log tf: the file holds the transformed
// weights, and the mapped index weighs queries as the model says, so it
// finds the neighbours (and similarities) of the index built in memory.
TEST_F(KnnIndexFileTest, MappedIndexTakesTheModelsTfTransform) {
  ModelState model = read_model_file(paths_.model_file);
  model.knn_tf = KnnTf::kDoubleLog;
  write_model_file(paths_.model_file, model);
  const TrainingCorpus corpus = load_training_corpus(Xapian::Database(paths_.training_db));
  const std::vector<float> idf = compute_idf(model.df, model.num_docs, model.selected);
  write_knn_index(corpus, model.knn_weights(idf), KnnTf::kDoubleLog, paths_.knn_index);
  texts_.push_back("match match match team stock");  // terms repeated and not
  const Categorizer mapped(model_dir_);
  ASSERT_TRUE(mapped.knn_index().mapped());
  EXPECT_EQ(mapped.knn_index().tf(), KnnTf::kDoubleLog);
  fs::remove(paths_.knn_index);
  const Categorizer rebuilt(model_dir_);
  ASSERT_FALSE(rebuilt.knn_index().mapped());
  EXPECT_EQ(rebuilt.knn_index().tf(), KnnTf::kDoubleLog);
  EXPECT_TRUE(same(neighbours_of(mapped), neighbours_of(rebuilt)));
  // Sublinear weights would have found other similarities.
  model.knn_tf = KnnTf::kSublinear;
  const Categorizer sublinear(model, std::make_shared<const TrainingCorpus>(corpus));
  EXPECT_FALSE(same(neighbours_of(sublinear), neighbours_of(rebuilt)));
}

// A model from before kNN's tf transform was chosen (tests/data, trained on
// examples/data/train.jsonl on 2026-11-26, format version 7, with its
// index file) loads with sublinear tf and finds the neighbours an index
// of sublinear weights finds, bit for bit.
TEST(KnnIndexOldModelTest, ModelsFromBeforeTheTfTransformKeepSublinearTf) {
  testing_util::TempDir dir;
  const std::string model_dir = dir.file("model");
  fs::copy(test_data("model-2026-11-26-v7"), model_dir, fs::copy_options::recursive);
  const Categorizer old(model_dir);
  EXPECT_EQ(old.model().knn_tf, KnnTf::kSublinear);
  ASSERT_FALSE(old.model().knn_objective.empty());
  for (const KnnCandidate& candidate : old.model().knn_objective) {
    EXPECT_EQ(candidate.tf, KnnTf::kSublinear);
  }
  ASSERT_TRUE(old.knn_index().mapped());
  EXPECT_EQ(old.knn_index().tf(), KnnTf::kSublinear);
  const ModelPaths paths = resolve_model_dir(model_dir);
  const TrainingCorpus corpus = load_training_corpus(Xapian::Database(paths.training_db));
  const ModelState& model = old.model();
  const std::vector<float> weights =
      model.knn_weights(compute_idf(model.df, model.num_docs, model.selected));
  const KnnIndex sublinear(corpus, weights, KnnTf::kSublinear);
  const KnnIndex double_log(corpus, weights, KnnTf::kDoubleLog);
  int differs = 0;
  for (const char* text :
       {"the telescope saw a comet and the comet moved", "bake the bread in a hot oven oven",
        "the team scored a goal in the last minute of the match match"}) {
    const DocumentTerms doc = old.document_terms(old.analyzer().analyze(text));
    const auto found = old.knn_index().neighbours(doc, 10);
    EXPECT_TRUE(same({found}, {sublinear.neighbours(doc, 10)})) << text;
    differs += !same({found}, {double_log.neighbours(doc, 10)});
  }
  EXPECT_GT(differs, 0);  // the transform shows in these texts
}

TEST_F(KnnIndexFileTest, AddWritesANewOne) {
  const Categorizer before(model_dir_);
  const uint32_t docs = before.knn_index().num_docs();
  write_file(
      dir_.file("more.jsonl"),
      "{\"id\":\"extra-1\",\"labels\":[\"sports\"],\"text\":\"the match ended in a draw\"}\n");
  add_to_model({dir_.file("more.jsonl")}, model_dir_, ReadOptions(), nullptr);
  const Categorizer after(model_dir_);
  EXPECT_TRUE(after.knn_index().mapped());
  EXPECT_EQ(after.knn_index().num_docs(), docs + 1);
}

TEST_F(KnnIndexFileTest, TruncatedFileIsRefusedByName) {
  const std::string file = read_file(paths_.knn_index);
  write_file(paths_.knn_index, file.substr(0, file.size() - 8));
  ExpectRefused("truncated");
}

TEST_F(KnnIndexFileTest, EmptyOrForeignFileIsRefusedByName) {
  write_file(paths_.knn_index, "");
  ExpectRefused("not an autocat kNN index");
  write_file(paths_.knn_index, std::string(4096, 'x'));
  ExpectRefused("not an autocat kNN index");
}

TEST_F(KnnIndexFileTest, DamagedHeaderIsRefusedByName) {
  patch(20, std::string("\x07", 1));  // num_categories, under the header CRC
  ExpectRefused("checksum");
}

TEST_F(KnnIndexFileTest, AnotherModelsFileIsRefusedByName) {
  // The index file of a model of the first 23 training documents.
  const std::vector<std::string> lines =
      testing_util::split_lines(read_file(test_data("fixture_train.jsonl")));
  std::string fewer;
  for (size_t i = 0; i + 1 < lines.size(); ++i) fewer += lines[i] + "\n";
  write_file(dir_.file("fewer.jsonl"), fewer);
  const std::string other = dir_.file("other");
  train_model({dir_.file("fewer.jsonl")}, other, TrainOptions(), ReadOptions(), nullptr);
  fs::copy_file(resolve_model_dir(other).knn_index, paths_.knn_index,
                fs::copy_options::overwrite_existing);
  ExpectRefused("another model");
}

TEST_F(KnnIndexFileTest, DocumentNumberOutOfRangeIsRefusedWhenItsTermIsSearched) {
  // Every posting's document number set to 1000 (> 24 documents): the
  // header and offsets are intact, so only the per-term check can see it.
  std::string file = read_file(paths_.knn_index);
  const Categorizer categorizer(model_dir_);
  uint32_t num_terms = 0;
  uint64_t num_postings = 0;
  std::memcpy(&num_terms, file.data() + 24, 4);
  std::memcpy(&num_postings, file.data() + 32, 8);
  ASSERT_EQ(num_terms, categorizer.vocabulary().size());
  const auto padded = [](uint64_t bytes) { return (bytes + 7) & ~uint64_t{7}; };
  const uint64_t doc_offset = 56 + 2 * padded(4 * uint64_t{num_terms}) +
                              padded(4 * uint64_t{num_terms}) + 8 * (uint64_t{num_terms} + 1);
  const uint32_t far = 1000;
  for (uint64_t p = 0; p < num_postings; ++p) {
    std::memcpy(&file[doc_offset + 4 * p], &far, 4);
  }
  write_file(paths_.knn_index, file);
  ExpectRefused("document number out of range");
}

// Classifies every test text with `categorizer` in a child process and
// exits 0 if it classifies them or throws ModelFormatError naming the index
// file and saying it changed; 1 on any other outcome. A signal (SIGBUS from
// a mapping past the end of a truncated file) kills the child only, and the
// death test's predicate fails.
void ClassifyOrRefuseChanged(const Categorizer& categorizer, const std::vector<std::string>& texts,
                             const std::string& index_path) {
  try {
    for (const std::string& text : texts) categorizer.classify(text, ClassifyOptions());
  } catch (const ModelFormatError& e) {
    const std::string what = e.what();
    std::_Exit(what.find(index_path) != std::string::npos &&
                       what.find("changed under a running process") != std::string::npos
                   ? 0
                   : 1);
  } catch (...) {
    std::_Exit(1);
  }
  std::_Exit(0);
}

// An operator truncating or rewriting knn.index in place (cp onto it)
// while a process has it mapped: the next search throws ModelFormatError
// naming the file instead of dying of SIGBUS on pages past the new end.
TEST_F(KnnIndexFileTest, TruncatedUnderARunningProcessIsAnErrorNotASignal) {
  const std::string original = read_file(paths_.knn_index);
  for (const uint64_t size : {uint64_t{0}, uint64_t{original.size() / 2}}) {
    SCOPED_TRACE(size);
    write_file(paths_.knn_index, original);
    const Categorizer categorizer(model_dir_);
    categorizer.classify(texts_[0], ClassifyOptions());  // maps the index
    ASSERT_TRUE(categorizer.knn_index().mapped());
    fs::resize_file(paths_.knn_index, size);
    EXPECT_EXIT(ClassifyOrRefuseChanged(categorizer, texts_, paths_.knn_index),
                testing::ExitedWithCode(0), "");
  }
}

// In a child: truncates the mapped index file after `categorizer` mapped
// it, then reads every term's postings as a search does (the pages past
// the new end used to raise SIGBUS), and exits 0 if the check after the
// read refuses the file by name.
void ReadPastTheEndThenRefuse(const Categorizer& categorizer, const std::string& index_path) {
  fs::resize_file(index_path, 0);
  const KnnIndex& index = categorizer.knn_index();
  double sum = 0;
  for (uint32_t t = 0; t < index.idf().size(); ++t) {
    const KnnIndex::TermPostings postings = index.postings(t);
    for (size_t i = 0; i < postings.size; ++i) sum += postings.doc[i] + postings.weight[i];
  }
  try {
    index.check_file_unchanged();
  } catch (const ModelFormatError& e) {
    std::_Exit(std::string(e.what()).find(index_path) != std::string::npos && sum >= 0 ? 0 : 1);
  }
  std::_Exit(1);
}

// In a child: two threads classify in a loop while the index file is
// truncated under them, `trials` times over; exits 0 if every outcome is
// an answer or ModelFormatError naming the file.
void ClassifyWhileTruncated(const std::string& model_dir, const std::vector<std::string>& texts,
                            const std::string& index_path, int trials) {
  const std::string original = read_file(index_path);
  for (int trial = 0; trial < trials; ++trial) {
    write_file(index_path, original);
    const Categorizer categorizer(model_dir);
    categorizer.classify(texts[0], ClassifyOptions());
    std::atomic<bool> bad{false};
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i) {
      threads.emplace_back([&] {
        for (int round = 0; round < 200; ++round) {
          try {
            for (const std::string& text : texts) categorizer.classify(text, ClassifyOptions());
          } catch (const ModelFormatError& e) {
            if (std::string(e.what()).find(index_path) == std::string::npos) bad = true;
            return;
          }
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200 * (trial % 10)));
    fs::resize_file(index_path, trial % 2 == 0 ? 0 : original.size() / 3);
    for (std::thread& thread : threads) thread.join();
    if (bad) std::_Exit(1);
  }
  std::_Exit(0);
}

// A truncation during a search (not between searches) reads zeros from the
// pages past the new end instead of killing the process with SIGBUS, and
// the search is refused with an error naming the file.
TEST_F(KnnIndexFileTest, TruncatedDuringASearchIsAnErrorNotASignal) {
  const std::string original = read_file(paths_.knn_index);
  {
    const Categorizer categorizer(model_dir_);
    categorizer.classify(texts_[0], ClassifyOptions());
    ASSERT_TRUE(categorizer.knn_index().mapped());
    ASSERT_GT(original.size(), 4096U) << "the index must span two pages";
    EXPECT_EXIT(ReadPastTheEndThenRefuse(categorizer, paths_.knn_index), testing::ExitedWithCode(0),
                "");
  }
  write_file(paths_.knn_index, original);
  EXPECT_EXIT(ClassifyWhileTruncated(model_dir_, texts_, paths_.knn_index, 100),
              testing::ExitedWithCode(0), "");
}

TEST_F(KnnIndexFileTest, RewrittenInPlaceUnderARunningProcessIsAnError) {
  // Another model's index, smaller by a document, copied over this one in
  // place (open with O_TRUNC, write), as `cp` does.
  const std::vector<std::string> lines =
      testing_util::split_lines(read_file(test_data("fixture_train.jsonl")));
  std::string fewer;
  for (size_t i = 0; i + 1 < lines.size(); ++i) fewer += lines[i] + "\n";
  write_file(dir_.file("fewer.jsonl"), fewer);
  const std::string other = dir_.file("other");
  train_model({dir_.file("fewer.jsonl")}, other, TrainOptions(), ReadOptions(), nullptr);
  const Categorizer categorizer(model_dir_);
  categorizer.classify(texts_[0], ClassifyOptions());
  write_file(paths_.knn_index, read_file(resolve_model_dir(other).knn_index));
  EXPECT_EXIT(ClassifyOrRefuseChanged(categorizer, texts_, paths_.knn_index),
              testing::ExitedWithCode(0), "");
  try {
    categorizer.classify(texts_[0], ClassifyOptions());
    FAIL() << "expected ModelFormatError";
  } catch (const ModelFormatError& e) {
    EXPECT_NE(std::string(e.what()).find(paths_.knn_index), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("install generations by rename"), std::string::npos)
        << e.what();
  }
}

// AUTOCAT_KNN_INDEX=read reads the index into private memory: whatever
// happens to the file afterwards, classification answers as before.
TEST_F(KnnIndexFileTest, ReadIntoMemoryOutlivesTheFile) {
  std::vector<std::vector<KnnIndex::Neighbour>> expected;
  {
    const Categorizer mapped(model_dir_);
    expected = neighbours_of(mapped);
  }
  ASSERT_EQ(setenv("AUTOCAT_KNN_INDEX", "read", 1), 0);
  const Categorizer categorizer(model_dir_);
  const auto& index = categorizer.knn_index();
  ASSERT_EQ(unsetenv("AUTOCAT_KNN_INDEX"), 0);
  EXPECT_FALSE(index.mapped());
  EXPECT_TRUE(index.from_file());
  const std::string original = read_file(paths_.knn_index);
  fs::resize_file(paths_.knn_index, 0);
  EXPECT_TRUE(same(neighbours_of(categorizer), expected));

  // An unknown setting is refused, naming the variable.
  write_file(paths_.knn_index, original);
  ASSERT_EQ(setenv("AUTOCAT_KNN_INDEX", "mmap-please", 1), 0);
  const Categorizer unknown(model_dir_);
  EXPECT_THROW(unknown.knn_index(), InvalidArgumentError);
  ASSERT_EQ(unsetenv("AUTOCAT_KNN_INDEX"), 0);
}

}  // namespace
}  // namespace autocat::internal
