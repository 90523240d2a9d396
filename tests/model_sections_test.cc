// Model file format 2: a Categorizer decodes the core at open and each
// method's section on its first use; results are bit-identical to the same
// model in format 1; a damaged section is refused when first used (with
// ModelFormatError naming the file), never a crash, while the methods that
// do not need it keep working; truncation and a damaged core or section
// table are refused at open.
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "autocat/error.h"
#include "classify/base/method_traits.h"
#include "classify/corpus/document_reader.h"
#include "classify/decide/categorizer.h"
#include "classify/model/model_io.h"
#include "classify/train/trainer.h"
#include "test_util.h"

namespace autocat::internal {
namespace {

namespace fs = std::filesystem;
using testing_util::read_file;
using testing_util::TempDir;
using testing_util::test_data;
using testing_util::write_file;

constexpr size_t kSectionTableStart = kModelHeaderBytes;
constexpr size_t kSectionEntryBytes = 24;

uint64_t get_le(const std::string& bytes, size_t at, int width) {
  uint64_t value = 0;
  for (int i = 0; i < width; ++i) {
    value |= uint64_t(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  }
  return value;
}

void put_le32(uint32_t value, size_t at, std::string* bytes) {
  for (int i = 0; i < 4; ++i) (*bytes)[at + i] = static_cast<char>(value >> (8 * i));
}

// CRC-32 (zlib's polynomial), bit by bit: small inputs only.
uint32_t crc32_of(const std::string& data) {
  uint32_t crc = 0xffffffffu;
  for (unsigned char byte : data) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

// Offset and length of section `kind` (0 core, 1 + ModelPart) of a
// format 2 file's bytes, from its section table.
struct Span {
  uint64_t offset = 0, length = 0;
};
Span section_of(const std::string& bytes, uint32_t kind) {
  const uint64_t count = get_le(bytes, 12, 4);
  for (uint64_t i = 0; i < count; ++i) {
    const size_t at = kSectionTableStart + i * kSectionEntryBytes;
    if (get_le(bytes, at, 4) == kind) return {get_le(bytes, at + 8, 8), get_le(bytes, at + 16, 8)};
  }
  ADD_FAILURE() << "no section " << kind;
  return {};
}
uint32_t kind_of(ModelPart part) { return static_cast<uint32_t>(part) + 1; }

class ModelSectionsTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    ReadOptions read;
    read.split = "train";
    train_model({test_data("fixture_train.jsonl")}, dir_->file("model"), TrainOptions(), read,
                nullptr);
    read_documents(
        {test_data("fixture_train.jsonl")}, ReadOptions(),
        [](InputDocument&& doc) { texts_.push_back(doc.text); }, nullptr);
  }
  static void TearDownTestSuite() {
    delete dir_;
    texts_.clear();
  }

  void SetUp() override {
    // A copy of the model directory each test may damage.
    model_dir_ = scratch_.file("model");
    fs::copy(dir_->file("model"), model_dir_, fs::copy_options::recursive);
    model_file_ = resolve_model_dir(model_dir_).model_file;
  }

  // Flips one byte in the middle of section `kind` of the copy's model file.
  void damage_section(uint32_t kind) {
    std::string bytes = read_file(model_file_);
    const Span span = section_of(bytes, kind);
    ASSERT_GT(span.length, 0u);
    bytes[span.offset + span.length / 2] ^= 0x5a;
    write_file(model_file_, bytes);
  }

  // Expects `f` to throw ModelFormatError naming the model file and `needle`.
  template <class F>
  void ExpectRefused(F f, const std::string& needle) {
    try {
      f();
      ADD_FAILURE() << "expected ModelFormatError mentioning " << needle;
    } catch (const ModelFormatError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(model_file_), std::string::npos) << message;
      EXPECT_NE(message.find(needle), std::string::npos) << message;
    }
  }

  static std::vector<double> scores(const Categorizer& categorizer, const std::string& text,
                                    Method method) {
    std::vector<Token> tokens;
    categorizer.analyzer().analyze(text, &tokens);
    ClassifyOptions options;
    options.method = method;
    return categorizer.scores(categorizer.document_terms(tokens), options);
  }

  inline static TempDir* dir_ = nullptr;
  inline static std::vector<std::string> texts_;
  TempDir scratch_;
  std::string model_dir_;
  std::string model_file_;
};

TEST_F(ModelSectionsTest, TrainWritesFormatTwo) {
  const std::string bytes = read_file(model_file_);
  EXPECT_EQ(get_le(bytes, 8, 4), 2u);
  ModelState state;
  EXPECT_EQ(ModelFile(model_file_, &state).format_version(), 2u);
}

TEST_F(ModelSectionsTest, ScoresAreBitIdenticalToFormatOne) {
  const Categorizer sectioned(model_dir_);
  const TempDir old_dir;
  const std::string old_model = old_dir.file("model");
  fs::copy(model_dir_, old_model, fs::copy_options::recursive);
  write_model_file(resolve_model_dir(old_model).model_file, read_model_file(model_file_), 1);
  const Categorizer whole(old_model);
  {
    ModelState state;
    ASSERT_EQ(ModelFile(resolve_model_dir(old_model).model_file, &state).format_version(), 1u);
  }
  ASSERT_FALSE(texts_.empty());
  for (Method method : all_methods()) {
    SCOPED_TRACE(method_name(method));
    for (const std::string& text : texts_) {
      EXPECT_EQ(scores(sectioned, text, method), scores(whole, text, method)) << text;
      ClassifyOptions options;
      options.method = method;
      const std::vector<Category> a = sectioned.classify(text, options);
      const std::vector<Category> b = whole.classify(text, options);
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].name, b[i].name);
        EXPECT_EQ(a[i].score, b[i].score);
      }
    }
  }
  // And the whole state is the same, read either way.
  const ModelState& x = sectioned.model();
  const ModelState& y = whole.model();
  EXPECT_EQ(x.terms, y.terms);
  EXPECT_EQ(x.df, y.df);
  EXPECT_EQ(x.rocchio.entry_weight, y.rocchio.entry_weight);
  EXPECT_EQ(x.multinomial_nb.dense_weights(), y.multinomial_nb.dense_weights());
  EXPECT_EQ(x.bernoulli_nb.class_constant, y.bernoulli_nb.class_constant);
  EXPECT_EQ(x.complement_nb.dense_weights(), y.complement_nb.dense_weights());
  // The sectioned file's linear weights are read where the file holds them.
  ASSERT_NE(x.svm.packed_rows, nullptr);
  EXPECT_TRUE(x.svm.entry_weight.empty());
  EXPECT_EQ(y.svm.packed_rows, nullptr);
  EXPECT_EQ(x.svm.num_entries(), y.svm.entry_weight.size());
  EXPECT_EQ(dense_term_weights(x.svm), dense_term_weights(y.svm));
  EXPECT_EQ(dense_term_weights(x.logreg), dense_term_weights(y.logreg));
  EXPECT_EQ(x.logreg.bias, y.logreg.bias);
  // A model read in place writes the same weights back.
  const std::string rewritten = old_dir.file("rewritten.autocat");
  write_model_file(rewritten, x);
  const ModelState z = read_model_file(rewritten);
  EXPECT_EQ(dense_term_weights(z.svm), dense_term_weights(y.svm));
  EXPECT_EQ(z.complement_nb.dense_weights(), y.complement_nb.dense_weights());
  EXPECT_EQ(z.bernoulli_nb.dense_weights(), y.bernoulli_nb.dense_weights());
  EXPECT_EQ(x.thresholds, y.thresholds);
  EXPECT_EQ(x.combo.weights, y.combo.weights);
}

TEST_F(ModelSectionsTest, OpeningDecodesNoMethodState) {
  const Categorizer categorizer(model_dir_);
  const ModelState& core = categorizer.core();
  EXPECT_FALSE(core.terms.empty());
  EXPECT_TRUE(core.rocchio.term_start.empty());
  EXPECT_EQ(core.multinomial_nb.num_terms(), 0U);
  EXPECT_TRUE(core.svm.term_start.empty());
  scores(categorizer, texts_.front(), Method::kKnn);
  EXPECT_TRUE(core.rocchio.term_start.empty());
  scores(categorizer, texts_.front(), Method::kNaiveBayes);
  EXPECT_NE(core.multinomial_nb.num_terms(), 0U);
  EXPECT_EQ(core.bernoulli_nb.num_terms(), 0U);
  EXPECT_TRUE(core.rocchio.term_start.empty());
  EXPECT_NE(categorizer.model().bernoulli_nb.num_terms(), 0U);
}

// Naive Bayes weights stored sparse (a vocabulary where most terms belong
// to one of ten categories) are read where the mapped file holds them: the same
// scores as the whole file read into memory, and a NaN among them refused
// when the method is first used.
TEST(ModelSectionsSparseTest, SparseNaiveBayesRowsAreReadInPlace) {
  const TempDir dir;
  std::string jsonl;
  // Ten categories: a term of one category is one exception in a row of ten.
  for (int d = 0; d < 100; ++d) {
    const int category = d % 10;
    std::string text = "shared common";
    for (int w = 0; w < 12; ++w) {
      text += " c" + std::to_string(category) + "w" + std::to_string((d * 12 + w) % 300);
    }
    jsonl += "{\"id\": \"d" + std::to_string(d) + "\", \"labels\": [\"cat" +
             std::to_string(category) + "\"], \"text\": \"" + text + "\"}\n";
  }
  write_file(dir.file("train.jsonl"), jsonl);
  train_model({dir.file("train.jsonl")}, dir.file("model"), TrainOptions(), ReadOptions(), nullptr);
  const std::string model_file = resolve_model_dir(dir.file("model")).model_file;
  const Categorizer mapped(dir.file("model"));
  const ModelState whole = read_model_file(model_file);
  // The same model in format 1, read whole into memory.
  fs::copy(dir.file("model"), dir.file("whole"), fs::copy_options::recursive);
  write_model_file(resolve_model_dir(dir.file("whole")).model_file, whole, 1);
  const Categorizer in_memory(dir.file("whole"));
  const std::vector<std::string> texts = {"c0w1 c0w2 shared", "c1w5 c2w7 common c2w8",
                                          "nothing known"};
  for (Method method : {Method::kNaiveBayes, Method::kBernoulliNaiveBayes,
                        Method::kComplementNaiveBayes, Method::kCombo}) {
    for (const std::string& text : texts) {
      ClassifyOptions options;
      options.method = method;
      std::vector<Token> tokens;
      mapped.analyzer().analyze(text, &tokens);
      const DocumentTerms doc = mapped.document_terms(tokens);
      EXPECT_EQ(mapped.scores(doc, options), in_memory.scores(doc, options))
          << method_name(method) << ": " << text;
    }
  }
  const ModelState& state = mapped.model();
  for (const NaiveBayesModel* nb :
       {&state.multinomial_nb, &state.bernoulli_nb, &state.complement_nb}) {
    ASSERT_NE(nb->weight_rows, nullptr);
    EXPECT_NE(nb->weight_rows->mapped_owner, nullptr);
  }
  EXPECT_EQ(state.complement_nb.dense_weights(), whole.complement_nb.dense_weights());
  EXPECT_EQ(state.multinomial_nb.dense_weights(), whole.multinomial_nb.dense_weights());

  // A NaN among complement NB's listed weights.
  ModelState bad = whole;
  ASSERT_NE(bad.complement_nb.weight_rows, nullptr);
  NbWeightRows rows = bad.complement_nb.weight_rows->owned();
  ASSERT_FALSE(rows.entry_weight.empty());
  rows.entry_weight[0] = std::numeric_limits<float>::quiet_NaN();
  bad.complement_nb.weight_rows = std::make_shared<const NbWeightRows>(std::move(rows));
  write_model_file(model_file, bad);
  const Categorizer damaged(dir.file("model"));
  ClassifyOptions options;
  options.method = Method::kComplementNaiveBayes;
  std::vector<Token> tokens;
  damaged.analyzer().analyze(texts[0], &tokens);
  EXPECT_THROW(damaged.scores(damaged.document_terms(tokens), options), ModelFormatError);
  options.method = Method::kNaiveBayes;
  EXPECT_NO_THROW(damaged.scores(damaged.document_terms(tokens), options));
}

// Every method's section damaged in turn: the model opens, kNN and the
// other methods classify, the damaged one is refused on each use.
TEST_F(ModelSectionsTest, DamagedSectionIsRefusedWhenFirstUsed) {
  const std::string pristine = read_file(model_file_);
  for (Method damaged : all_methods()) {
    ModelPart part;
    if (!model_part_of(damaged, &part)) continue;
    SCOPED_TRACE(method_name(damaged));
    write_file(model_file_, pristine);
    damage_section(kind_of(part));
    const Categorizer categorizer(model_dir_);
    for (int attempt = 0; attempt < 2; ++attempt) {
      ExpectRefused([&] { scores(categorizer, texts_.front(), damaged); },
                    "checksum mismatch in its " + model_part_name(part) + " section");
    }
    for (Method other : all_methods()) {
      ModelPart other_part;
      if (other == damaged || other == Method::kCombo || !model_part_of(other, &other_part)) {
        continue;
      }
      EXPECT_NO_THROW(scores(categorizer, texts_.front(), other)) << method_name(other);
    }
    EXPECT_NO_THROW(scores(categorizer, texts_.front(), Method::kKnn));
    ExpectRefused([&] { categorizer.model(); }, "checksum mismatch");
    ExpectRefused([&] { read_model_file(model_file_); }, "checksum mismatch");
  }
}

// A section whose CRC is right but whose content disagrees with the core
// (a buggy or crafted writer): refused on first use by the same checks as
// format 1 applies at open.
TEST_F(ModelSectionsTest, InconsistentSectionIsRefusedWhenFirstUsed) {
  ModelState spoiled = read_model_file(model_file_);
  spoiled.bernoulli_nb.make_dense();
  spoiled.bernoulli_nb.term_weight.pop_back();
  spoiled.rocchio.entry_category[0] = 99;
  write_model_file(model_file_, spoiled);
  const Categorizer categorizer(model_dir_);
  ExpectRefused([&] { scores(categorizer, texts_.front(), Method::kBernoulliNaiveBayes); },
                "sizes differ");
  ExpectRefused([&] { scores(categorizer, texts_.front(), Method::kRocchio); },
                "Rocchio category index");
  EXPECT_NO_THROW(scores(categorizer, texts_.front(), Method::kNaiveBayes));
  EXPECT_NO_THROW(scores(categorizer, texts_.front(), Method::kKnn));
  {
    // Linear weights a mapped model reads in place: checked when the
    // section is first used, like the weights copied out.
    ModelState bad = read_model_file(resolve_model_dir(dir_->file("model")).model_file);
    ASSERT_GT(bad.svm.entry_weight.size(), 1u);
    ASSERT_GT(bad.logreg.entry_weight.size(), 1u);
    bad.svm.entry_weight[1] = std::numeric_limits<float>::infinity();
    bad.logreg.entry_category[0] = 99;
    write_model_file(model_file_, bad);
    const Categorizer mapped(model_dir_);
    ExpectRefused([&] { scores(mapped, texts_.front(), Method::kSvm); }, "svm weights");
    ExpectRefused([&] { scores(mapped, texts_.front(), Method::kLogreg); }, "logreg weights");
    EXPECT_THROW(read_model_file(model_file_), ModelFormatError);
    write_model_file(model_file_, spoiled);
  }
  // A section that does not decode at all, with valid CRCs (its own in the
  // table, and the table's in the header).
  std::string bytes = read_file(model_file_);
  const Span span = section_of(bytes, kind_of(ModelPart::kSvm));
  bytes.replace(span.offset, span.length, std::string(span.length, '\x7f'));
  const uint64_t count = get_le(bytes, 12, 4);
  for (uint64_t i = 0; i < count; ++i) {
    const size_t at = kSectionTableStart + i * kSectionEntryBytes;
    if (get_le(bytes, at, 4) == kind_of(ModelPart::kSvm)) {
      put_le32(crc32_of(bytes.substr(span.offset, span.length)), at + 4, &bytes);
    }
  }
  put_le32(crc32_of(bytes.substr(kSectionTableStart, count * kSectionEntryBytes)), 16, &bytes);
  write_file(model_file_, bytes);
  const Categorizer garbled(model_dir_);
  ExpectRefused([&] { scores(garbled, texts_.front(), Method::kSvm); },
                "cannot be decoded (its svm section");
  EXPECT_NO_THROW(scores(garbled, texts_.front(), Method::kLogreg));
}

TEST_F(ModelSectionsTest, DamagedCoreOrTableIsRefusedAtOpen) {
  const std::string pristine = read_file(model_file_);
  damage_section(0);
  ExpectRefused([&] { Categorizer categorizer(model_dir_); }, "checksum mismatch in its core");
  std::string bytes = pristine;
  bytes[kSectionTableStart + kSectionEntryBytes + 9] ^= 0x01;  // an offset in the table
  write_file(model_file_, bytes);
  ExpectRefused([&] { Categorizer categorizer(model_dir_); }, "section table");
}

TEST_F(ModelSectionsTest, TruncatedFileIsRefusedAtOpen) {
  const std::string pristine = read_file(model_file_);
  for (size_t keep : {pristine.size() - 1, pristine.size() / 2, size_t(60), size_t(30)}) {
    SCOPED_TRACE(keep);
    write_file(model_file_, pristine.substr(0, keep));
    ExpectRefused([&] { Categorizer categorizer(model_dir_); }, "truncated");
  }
  write_file(model_file_, pristine + std::string(3, '\0'));
  ExpectRefused([&] { Categorizer categorizer(model_dir_); }, "trailing bytes");
}

// The whole-file reader of format 2 (read_model_file, and parse_model_file
// on the bytes) gives the same state, and refuses any damaged section.
TEST_F(ModelSectionsTest, WholeFileReadersAgreeAndRefuseAnyDamage) {
  const std::string bytes = read_file(model_file_);
  const ModelState parsed = parse_model_file(model_file_, bytes);
  const ModelState read = read_model_file(model_file_);
  EXPECT_EQ(parsed.terms, read.terms);
  EXPECT_EQ(parsed.rocchio.entry_weight, read.rocchio.entry_weight);
  EXPECT_EQ(parsed.complement_nb.dense_weights(), read.complement_nb.dense_weights());
  EXPECT_EQ(parsed.logreg.entry_weight, read.logreg.entry_weight);
  for (uint32_t kind = 0; kind <= kNumModelParts; ++kind) {
    SCOPED_TRACE(kind);
    std::string damaged = bytes;
    const Span span = section_of(damaged, kind);
    damaged[span.offset + span.length / 3] ^= 0x11;
    ExpectRefused([&] { parse_model_file(model_file_, damaged); }, "checksum mismatch");
  }
}

// `train --add` reads a format 1 model whole and writes format 2.
TEST_F(ModelSectionsTest, AddingToAFormatOneModelWritesFormatTwo) {
  write_model_file(model_file_, read_model_file(model_file_), 1);
  ReadOptions read;
  read.split = "test";
  add_to_model({test_data("fixture_train.jsonl")}, model_dir_, read, nullptr);
  const std::string added = resolve_model_dir(model_dir_).model_file;
  EXPECT_NE(added, model_file_);
  EXPECT_EQ(get_le(read_file(added), 8, 4), 2u);
  const Categorizer categorizer(model_dir_);
  for (Method method : all_methods()) {
    EXPECT_EQ(scores(categorizer, texts_.front(), method).size(), categorizer.categories().size());
  }
}

// Many threads use each method at once on a fresh model: each section is
// decoded once and every thread sees the same scores.
TEST_F(ModelSectionsTest, ConcurrentFirstUseDecodesOnce) {
  const Categorizer reference(model_dir_);
  const Categorizer categorizer(model_dir_);
  std::vector<std::vector<std::vector<double>>> expected;
  for (Method method : all_methods()) {
    expected.emplace_back();
    for (const std::string& text : texts_) {
      expected.back().push_back(scores(reference, text, method));
    }
  }
  std::vector<std::thread> threads;
  std::vector<int> mismatches(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (size_t m = 0; m < all_methods().size(); ++m) {
        const Method method = all_methods()[(m + size_t(t)) % all_methods().size()];
        for (size_t d = 0; d < texts_.size(); ++d) {
          if (scores(categorizer, texts_[d], method) != expected[size_t(method)][d]) {
            ++mismatches[size_t(t)];
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(8, 0));
}

// The method table is in the enum's order (find_method_traits indexes it by
// value), and each method's part keeps the section number files were
// written with: Rocchio, nb, bnb, cnb, svm, logreg, kNN and combo in the core.
TEST(MethodTraitsTest, TableFollowsTheEnumAndTheFileSections) {
  const std::vector<MethodTraits>& table = method_table();
  ASSERT_EQ(table.size(), all_methods().size());
  for (size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(table[i].method), i);
    EXPECT_EQ(&method_traits(table[i].method), &table[i]);
    EXPECT_EQ(parse_method(table[i].name), table[i].method);
    EXPECT_EQ(method_name(table[i].method), table[i].name);
  }
  const std::vector<std::pair<Method, int32_t>> sections = {{Method::kKnn, kNoModelPart},
                                                            {Method::kRocchio, 0},
                                                            {Method::kNaiveBayes, 1},
                                                            {Method::kBernoulliNaiveBayes, 2},
                                                            {Method::kComplementNaiveBayes, 3},
                                                            {Method::kSvm, 4},
                                                            {Method::kLogreg, 5},
                                                            {Method::kCombo, kNoModelPart}};
  for (const auto& [method, section] : sections) {
    EXPECT_EQ(method_traits(method).model_part, section) << method_name(method);
    ModelPart part{};
    ASSERT_EQ(model_part_of(method, &part), section != kNoModelPart);
    if (section == kNoModelPart) continue;
    EXPECT_EQ(static_cast<int32_t>(part), section);
    EXPECT_EQ(model_part_name(part), method_name(method));
  }
  EXPECT_EQ(find_method_traits(static_cast<Method>(all_methods().size())), nullptr);
  EXPECT_EQ(method_name(static_cast<Method>(99)), "unknown");
  EXPECT_THROW(method_traits(static_cast<Method>(99)), InvalidArgumentError);
  EXPECT_EQ(methods_of(MethodFamily::kNaiveBayes),
            (std::vector<Method>{Method::kNaiveBayes, Method::kBernoulliNaiveBayes,
                                 Method::kComplementNaiveBayes}));
  EXPECT_EQ(methods_of(MethodFamily::kLinear),
            (std::vector<Method>{Method::kSvm, Method::kLogreg}));
}

}  // namespace
}  // namespace autocat::internal
