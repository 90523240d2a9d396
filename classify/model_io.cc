#include "classify/model_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <boost/archive/archive_exception.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "autocat/error.h"
#include "classify/atomic_file.h"
#include "classify/bounded_binary_iarchive.h"

namespace autocat::internal {
namespace {

// Header: magic (8) + format version (u32) + payload bytes (u64) + CRC-32 of
// the payload (u32), all little-endian. The CRC lets a truncated or damaged
// file be refused before Boost parses a single length field from it.

void put_le(uint64_t value, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t get_le(std::string_view in, size_t offset, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) {
    value |= uint64_t(static_cast<unsigned char>(in[offset + i])) << (8 * i);
  }
  return value;
}

uint32_t crc32_of(std::string_view data) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* bytes = reinterpret_cast<const Bytef*>(data.data());
  size_t left = data.size();
  while (left > 0) {
    const uInt chunk = static_cast<uInt>(std::min<size_t>(left, 1u << 30));
    crc = crc32(crc, bytes, chunk);
    bytes += chunk;
    left -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

[[noreturn]] void corrupt(const std::string& path, const std::string& what) {
  throw ModelFormatError(path + ": " + what + "; train the model again with autocat train");
}

}  // namespace

bool linear_model_consistent(const LinearModel& model, size_t terms, size_t categories) {
  if (model.term_start.empty()) {
    return model.entry_category.empty() && model.entry_weight.empty() && model.bias.empty();
  }
  if (model.num_categories != categories || model.term_start.size() != terms + 1 ||
      model.term_start.front() != 0 || model.entry_category.size() != model.entry_weight.size() ||
      model.term_start.back() != model.entry_weight.size() || model.bias.size() != categories ||
      model.slope.size() != categories || model.intercept.size() != categories ||
      !std::is_sorted(model.term_start.begin(), model.term_start.end())) {
    return false;
  }
  return std::all_of(model.entry_category.begin(), model.entry_category.end(),
                     [&](uint32_t c) { return c < categories; });
}

void write_model_file(const std::string& path, const ModelState& state) {
  std::ostringstream payload_stream(std::ios::binary);
  {
    boost::archive::binary_oarchive archive(payload_stream);
    archive << state;
  }
  const std::string payload = payload_stream.str();
  // Readers see the old model or the new one, never half of one.
  write_file_atomically(path, {model_file_header(payload), payload}, "model file");
}

std::string model_file_header(const std::string& payload) {
  std::string header(kModelMagic, sizeof kModelMagic);
  put_le(kModelFormatVersion, 4, &header);
  put_le(payload.size(), 8, &header);
  put_le(crc32_of(payload), 4, &header);
  return header;
}

namespace {

// The payload of a model file's bytes after every header check and the CRC
// (a view into `data`).
std::string_view verified_payload(const std::string& path, std::string_view data) {
  if (data.size() < sizeof kModelMagic ||
      std::memcmp(data.data(), kModelMagic, sizeof kModelMagic) != 0) {
    throw ModelFormatError(path + ": not an autocat model file (wrong magic bytes)");
  }
  if (data.size() < kModelHeaderBytes) corrupt(path, "model file is truncated (incomplete header)");
  const auto version = static_cast<uint32_t>(get_le(data, 8, 4));
  if (version > kModelFormatVersion) {
    throw ModelFormatError(path + ": model format version " + std::to_string(version) +
                           " is newer than this autocat reads (version " +
                           std::to_string(kModelFormatVersion) +
                           "); upgrade autocat or train the model again");
  }
  if (version == 0) corrupt(path, "model format version 0 is not valid");
  const uint64_t length = get_le(data, 12, 8);
  const auto expected_crc = static_cast<uint32_t>(get_le(data, 20, 4));
  if (data.size() - kModelHeaderBytes < length) {
    corrupt(path, "model file is truncated (" + std::to_string(data.size() - kModelHeaderBytes) +
                      " of " + std::to_string(length) + " payload bytes)");
  }
  if (data.size() - kModelHeaderBytes > length) corrupt(path, "model file has trailing bytes");
  data.remove_prefix(kModelHeaderBytes);
  if (crc32_of(data) != expected_crc) corrupt(path, "model file is corrupted (checksum mismatch)");
  return data;
}

// A model file's bytes, mapped read-only while they are decoded: the
// checksum and the decoder read the page cache directly. Reading the file
// into a buffer first cost a copy of every byte plus the buffer's page
// faults (about 40% of opening a 1.3 GB model). Model files are never
// changed in place (a new model is a new generation), so the mapping cannot
// shrink under the reader.
class MappedModelFile {
 public:
  explicit MappedModelFile(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw NotFoundError(path + ": no such model file");
    if (!std::filesystem::is_regular_file(path, ec)) {
      throw ModelFormatError(path + ": not a model file (a directory or special file); train the " +
                             "model again with autocat train");
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw IOError(path + ": cannot open model file: " + std::strerror(errno));
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
      const int error = errno;
      ::close(fd);
      throw IOError(path + ": cannot read model file: " + std::strerror(error));
    }
    size_ = static_cast<size_t>(info.st_size);
    if (size_ > 0) {
      void* address = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      const int error = errno;
      ::close(fd);
      if (address == MAP_FAILED) {
        throw IOError(path + ": cannot map model file: " + std::strerror(error));
      }
      data_ = static_cast<const char*>(address);
      ::madvise(address, size_, MADV_SEQUENTIAL);
    } else {
      ::close(fd);
    }
  }
  ~MappedModelFile() {
    if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
  }
  MappedModelFile(const MappedModelFile&) = delete;
  MappedModelFile& operator=(const MappedModelFile&) = delete;

  std::string_view bytes() const { return {data_, size_}; }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
};

// Decodes `payload` into `object`, translating every decoding failure. The
// payload passed its CRC, so a failure here means a buggy or crafted file;
// BoundedBinaryIarchive keeps such a file from allocating more than a small
// multiple of its size.
template <class T>
void decode(const std::string& path, std::string_view payload, T* object) {
  const auto refuse = [&](const std::string& why) {
    corrupt(path, "model file cannot be decoded (" + why + ")");
  };
  try {
    BoundedInputBuffer buffer(payload.data(), payload.size());
    BoundedBinaryIarchive archive(buffer);
    archive >> *object;
  } catch (const ImpossibleLengthError& e) {
    refuse(e.what());
  } catch (const boost::archive::archive_exception& e) {
    refuse(e.what());
  } catch (const std::bad_alloc&) {
    refuse("absurd sizes");
  } catch (const std::length_error&) {
    refuse("absurd sizes");
  }
}

// Reads like ModelState (same class header) but stops after its first
// member, so the vocabulary and classifier state are never decoded.
struct AnalyzerOnly {
  AnalyzerSettings analyzer;
  template <class Archive>
  void serialize(Archive& ar, const unsigned int /*version*/) {
    ar& analyzer;
  }
};

// Reports the first problem of a decoded model. Messages are built only on
// failure: the loops below run over millions of weights.
class Checker {
 public:
  explicit Checker(const std::string& path) : path_(path) {}

  void require(bool ok, const char* what) const {
    if (!ok) fail(what);
  }
  void require(bool ok, const std::string& what) const {
    if (!ok) fail(what);
  }

  template <class Number>
  void require_not_nan(const std::vector<Number>& values, const std::string& what) const {
    const bool ok =
        std::none_of(values.begin(), values.end(), [](Number v) { return std::isnan(v); });
    if (!ok) fail(what + " holds NaN");
  }
  template <class Number>
  void require_finite(const std::vector<Number>& values, const std::string& what) const {
    const bool ok =
        std::all_of(values.begin(), values.end(), [](Number v) { return std::isfinite(v); });
    if (!ok) fail(what + " holds a non-finite number");
  }
  template <class Value>
  void require_all_at_most(const std::vector<Value>& values, Value limit, const char* what) const {
    const bool ok = std::all_of(values.begin(), values.end(), [&](Value v) { return v <= limit; });
    if (!ok) fail(what);
  }

  void require_sorted_unique(const std::vector<std::string>& names, const std::string& what) const {
    const bool ok =
        std::adjacent_find(names.begin(), names.end(),
                           [](const auto& a, const auto& b) { return !(a < b); }) == names.end();
    if (!ok) fail(what + " are not sorted and unique");
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    corrupt(path_, "model file is inconsistent (" + what + ")");
  }

  const std::string& path_;
};

bool valid_method(Method method) {
  const auto value = static_cast<size_t>(method);
  return value < all_methods().size();
}

bool valid_decision(Decision decision) {
  return decision == Decision::kOneOf || decision == Decision::kAnyOf;
}

void check_analyzer(const Checker& check, const std::string& path,
                    const AnalyzerSettings& settings) {
  check.require_sorted_unique(settings.stopwords, "stopwords");
  check.require(settings.max_term_bytes >= 1, "max_term_bytes below 1");
  try {
    Analyzer analyzer(settings);  // validates the stemmer language
  } catch (const InvalidArgumentError& e) {
    corrupt(path, std::string("model file has invalid analyzer settings (") + e.what() + ")");
  }
}

// Every size, cross-reference and range the classifiers rely on. A file
// that passes the CRC but fails here was written by a buggy or crafted
// program; without these checks it could make classification read out of
// bounds or silently assign nothing.
void check_model_state(const std::string& path, const ModelState& m) {
  const Checker check(path);
  const size_t terms = m.terms.size(), cats = m.categories.size();
  check_analyzer(check, path, m.analyzer);

  const TrainOptions& t = m.training;
  check.require(valid_method(t.default_method), "default method out of range");
  check.require(!t.decision || valid_decision(*t.decision), "training decision out of range");
  check.require(std::isfinite(t.nb_alpha) && t.nb_alpha >= 0, "nb_alpha negative");
  check.require(!std::isnan(t.rocchio_gamma), "training rocchio_gamma is NaN");
  check.require(t.knn_k >= 0 && t.knn_similarity_power >= 0 && t.knn_similarity_power <= 2,
                "training kNN settings out of range");
  check.require(static_cast<int>(t.feature_selection) >= 0 &&
                    t.feature_selection <= FeatureSelection::kKlDivergence,
                "feature selection out of range");
  check.require(t.analyzer.max_term_bytes >= 1, "training max_term_bytes below 1");
  check.require(t.num_features >= 0 && t.threshold_folds >= 0 && t.commit_batch >= 0,
                "negative training counts");

  check.require(cats > 0, "no categories");
  check.require_sorted_unique(m.categories, "categories");
  check.require(m.category_doc_counts.size() == cats, "category document counts");
  check.require_all_at_most(m.category_doc_counts, m.num_docs,
                            "a category holds more documents than the model");
  check.require_sorted_unique(m.terms, "terms");
  check.require(m.df.size() == terms, "document frequencies");
  check.require_all_at_most(m.df, m.num_docs,
                            "a term occurs in more documents than the model holds");
  check.require(m.selected.empty() || m.selected.size() == terms, "selected terms");
  check.require_all_at_most(m.selected, uint8_t{1}, "selected terms are not 0 or 1");

  check.require(valid_decision(m.decision), "decision out of range");
  check.require(m.knn_k >= 1, "kNN k below 1");
  check.require(m.knn_similarity_power == 1 || m.knn_similarity_power == 2,
                "kNN similarity power not 1 or 2");
  check.require(std::isfinite(m.rocchio_gamma) && m.rocchio_gamma >= 0,
                "Rocchio gamma negative or not finite");
  for (const KnnCandidate& candidate : m.knn_objective) {
    check.require(candidate.k >= 1 && !std::isnan(candidate.objective),
                  "kNN cross-validation results");
  }
  for (const auto& [gamma, objective] : m.rocchio_gamma_objective) {
    check.require(!std::isnan(gamma) && !std::isnan(objective), "Rocchio cross-validation results");
  }

  check.require(m.thresholds.empty() || m.thresholds.size() == all_methods().size(),
                "thresholds per method");
  for (const auto& per_category : m.thresholds) {
    // Empty: that method untuned (added after the file was written).
    check.require(per_category.empty() || per_category.size() == cats, "thresholds per category");
    check.require_not_nan(per_category, "thresholds");
  }

  const RocchioModel& r = m.rocchio;
  check.require(r.num_categories == cats, "Rocchio centroid count differs from category count");
  check.require(r.term_start.size() == terms + 1 && r.term_start.front() == 0 &&
                    std::is_sorted(r.term_start.begin(), r.term_start.end()) &&
                    r.term_start.back() == r.entry_category.size() &&
                    r.entry_category.size() == r.entry_weight.size(),
                "Rocchio centroid entries");
  check.require_all_at_most(r.entry_category, static_cast<uint32_t>(cats - 1),
                            "Rocchio category index out of range");
  check.require_finite(r.entry_weight, "Rocchio centroids");

  const auto check_nb = [&](const NaiveBayesModel& nb, Method method) {
    const std::string name = method_name(method);
    check.require(nb.variant == static_cast<int>(method), name + " variant");
    check.require(std::isfinite(nb.alpha) && nb.alpha > 0, name + " alpha not positive");
    check.require(nb.num_categories == cats && nb.log_prior.size() == cats &&
                      nb.term_weight.size() == terms * cats && nb.class_constant.size() == cats,
                  name + " sizes differ from the category and term counts");
    check.require_not_nan(nb.log_prior, name + " priors");
    check.require_not_nan(nb.term_weight, name + " weights");
    check.require_not_nan(nb.class_constant, name + " constants");
    check.require(
        nb.idf.empty() || (nb.idf.size() == terms && method != Method::kBernoulliNaiveBayes),
        name + " idf values");
    check.require_finite(nb.idf, name + " idf values");
  };
  check_nb(m.multinomial_nb, Method::kNaiveBayes);
  check_nb(m.bernoulli_nb, Method::kBernoulliNaiveBayes);
  check_nb(m.complement_nb, Method::kComplementNaiveBayes);
  check.require(linear_model_consistent(m.svm, terms, cats), "svm weights");
  check.require(linear_model_consistent(m.logreg, terms, cats), "logreg weights");
  for (const LinearModel* linear : {&m.svm, &m.logreg}) {
    for (const std::vector<float>* values :
         {&linear->entry_weight, &linear->bias, &linear->slope, &linear->intercept}) {
      check.require_finite(*values, "linear model weights");
    }
  }
  check.require(m.calibration.empty() || m.calibration.size() == all_methods().size(),
                "calibration per method");
  for (const Calibration& calibration : m.calibration) {
    check.require(calibration.empty() ||
                      (calibration.slope.size() == cats && calibration.intercept.size() == cats),
                  "calibration per category");
    check.require_finite(calibration.slope, "calibration");
    check.require_finite(calibration.intercept, "calibration");
    check.require(
        std::isfinite(calibration.shared_slope) && std::isfinite(calibration.shared_intercept),
        "shared calibration");
  }
  const ComboModel& combo = m.combo;
  if (!combo.empty()) {
    check.require(m.calibration.size() == all_methods().size(), "combo without calibration");
    for (int32_t member : combo.members) {
      check.require(member >= 0 && member < static_cast<int32_t>(Method::kCombo) &&
                        !m.calibration[static_cast<size_t>(member)].empty(),
                    "combo member");
    }
    check.require(combo.num_categories == cats && combo.weights.size() == cats * combo.stride(),
                  "combo weights per category");
    check.require_finite(combo.weights, "combo weights");
  }
}

}  // namespace

ModelState parse_model_file(const std::string& path, std::string_view bytes) {
  ModelState state;
  decode(path, verified_payload(path, bytes), &state);
  check_model_state(path, state);
  return state;
}

std::string model_file_fingerprint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NotFoundError(path + ": cannot read the model file");
  std::string header(kModelHeaderBytes, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header.size()));
  if (static_cast<size_t>(in.gcount()) != header.size() ||
      std::memcmp(header.data(), kModelMagic, sizeof kModelMagic) != 0) {
    throw ModelFormatError(path + ": not an autocat model file (wrong magic bytes or too short)");
  }
  const uint64_t payload_bytes = get_le(header, 12, 8);
  const auto payload_crc = static_cast<uLong>(get_le(header, 20, 4));
  const uLong header_crc =
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(header.data()),
            static_cast<uInt>(header.size()));
  const uLong file_crc =
      crc32_combine(header_crc, payload_crc, static_cast<z_off_t>(payload_bytes));
  char text[64];
  std::snprintf(text, sizeof(text), "crc32:%08x bytes:%llu", static_cast<unsigned>(file_crc),
                static_cast<unsigned long long>(kModelHeaderBytes + payload_bytes));
  return text;
}

ModelState read_model_file(const std::string& path) {
  const MappedModelFile file(path);
  return parse_model_file(path, file.bytes());
}

AnalyzerSettings read_analyzer_settings(const std::string& path) {
  const MappedModelFile file(path);
  AnalyzerOnly head;
  decode(path, verified_payload(path, file.bytes()), &head);
  check_analyzer(Checker(path), path, head.analyzer);
  return head.analyzer;
}

}  // namespace autocat::internal
