#include "classify/model/model_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <boost/archive/archive_exception.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "autocat/error.h"
#include "classify/io/atomic_file.h"
#include "classify/io/bounded_binary_iarchive.h"
#include "classify/io/retry_once.h"

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

namespace {

template <class T>
std::string archive_bytes(const T& object) {
  std::ostringstream stream(std::ios::binary);
  {
    boost::archive::binary_oarchive archive(stream);
    archive << object;
  }
  return stream.str();
}

}  // namespace

// Writes ModelState's fields with empty per-method models in their place:
// the same bytes as a ModelState without them, so the core section is read
// back as a ModelState. Its class version must be ModelState's.
struct ModelCoreForWriting {
  const ModelState* state = nullptr;

  template <class Archive>
  void serialize(Archive& ar, const unsigned int version) {
    static_assert(!Archive::is_loading::value, "the core is read as a ModelState");
    RocchioModel rocchio;
    NaiveBayesModel multinomial_nb, bernoulli_nb, complement_nb;
    LinearModel svm, logreg;
    // Saving reads the fields only (Boost's own save path casts away const too).
    const_cast<ModelState*>(state)->serialize_with(ar, version, rocchio, multinomial_nb,
                                                   bernoulli_nb, complement_nb, svm, logreg);
  }
};

}  // namespace autocat::internal

BOOST_CLASS_VERSION(autocat::internal::ModelCoreForWriting, 6)
static_assert(boost::serialization::version<autocat::internal::ModelCoreForWriting>::value ==
                  boost::serialization::version<autocat::internal::ModelState>::value,
              "the core section is read as a ModelState");

namespace autocat::internal {

// Version 2 layout, all little-endian:
//   magic (8), format version (u32) = 2, section count N (u32), CRC-32 of
//   the section table (u32), 4 zero bytes: kModelHeaderBytes in all;
//   the section table: N entries of kind (u32), CRC-32 of the section
//   (u32), offset (u64), length (u64), kSectionEntryBytes each;
//   the sections, each at an 8-byte aligned offset (zero padding between),
//   the file ending where the last one ends.
// Kinds: 0 the core, a Boost archive read as a ModelState whose per-method
// models are empty; 1 + ModelPart, a Boost archive of that model.
namespace {

constexpr size_t kSectionEntryBytes = 4 + 4 + 8 + 8;
constexpr uint32_t kCoreSection = 0;
constexpr uint32_t kNumSections = 1 + kNumModelParts;

std::string section_name(uint32_t kind) {
  return kind == kCoreSection ? std::string("core") : model_part_name(ModelPart(kind - 1));
}

// An output buffer in front of an AtomicFileSink that keeps the CRC-32
// and count of the bytes that pass through it.
//
// Boost's archive syncs its stream in its destructor, where an exception
// ends the process (std::terminate): so the stream callbacks never throw.
// A write error is kept, every later write is dropped, and flush() throws
// it once the archive is gone.
class SinkBuffer : public std::streambuf {
 public:
  explicit SinkBuffer(AtomicFileSink* sink) : sink_(sink), buffer_(1 << 20) {
    setp(buffer_.data(), buffer_.data() + buffer_.size());
  }
  // Hands what is buffered to the sink; throws the first write error.
  void flush() {
    hand_over();
    if (error_) std::rethrow_exception(error_);
  }
  uint32_t crc() const { return crc_; }

 protected:
  int_type overflow(int_type ch) override {
    if (!hand_over()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  std::streamsize xsputn(const char* data, std::streamsize count) override {
    std::streamsize done = 0;
    while (done < count) {
      if (pptr() == epptr() && !hand_over()) return done;
      const std::streamsize room = epptr() - pptr();
      const std::streamsize n = std::min(room, count - done);
      std::memcpy(pptr(), data + done, static_cast<size_t>(n));
      pbump(static_cast<int>(n));
      done += n;
    }
    return done;
  }
  int sync() override { return hand_over() ? 0 : -1; }

 private:
  // False once a write has failed (the error is kept for flush()).
  bool hand_over() noexcept {
    if (error_) {
      setp(buffer_.data(), buffer_.data() + buffer_.size());
      return false;
    }
    const std::string_view bytes(pbase(), static_cast<size_t>(pptr() - pbase()));
    try {
      crc_ = static_cast<uint32_t>(crc32(crc_, reinterpret_cast<const Bytef*>(bytes.data()),
                                         static_cast<uInt>(bytes.size())));
      if (!bytes.empty()) sink_->append(bytes);
    } catch (...) {
      error_ = std::current_exception();
    }
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return !error_;
  }

  AtomicFileSink* sink_;
  std::exception_ptr error_;
  std::vector<char> buffer_;
  uint32_t crc_ = static_cast<uint32_t>(crc32(0L, Z_NULL, 0));
};

void write_model_file_v1(const std::string& path, const ModelState& state) {
  const std::string payload = archive_bytes(state);
  // Readers see the old model or the new one, never half of one.
  write_file_atomically(path, {model_file_header(payload), payload}, "model file");
}

}  // namespace

void write_model_file_as_fitted(const std::string& path, const FitForWriting& fit) {
  // The sections are archived straight into the file, each through a
  // buffer that checksums and counts what passes; the header and the
  // section table, known only at the end, are written over their
  // placeholders. Nothing the size of the model is held in memory: a model
  // built in a string first doubled training's peak memory at a million
  // documents (a 1.3 GB string, grown by doubling). The table lists the
  // sections by kind; in the file they are in the order they were fitted.
  const uint64_t table_offset = kModelHeaderBytes;
  const uint64_t sections_start = table_offset + kNumSections * kSectionEntryBytes;
  write_file_atomically(
      path,
      [&](AtomicFileSink& sink) {
        sink.append(std::string(sections_start, '\0'));
        std::array<std::string, kNumSections> entries;  // by kind
        auto write_section = [&](uint32_t kind, const auto& object) {
          if (!entries[kind].empty()) {
            throw std::logic_error("model file: section " + section_name(kind) + " written twice");
          }
          sink.append(std::string((8 - sink.size() % 8) % 8, '\0'));
          const uint64_t offset = sink.size();
          SinkBuffer buffer(&sink);
          try {
            std::ostream stream(&buffer);
            boost::archive::binary_oarchive archive(stream);
            archive << object;
            // Written out here, not in the archive's destructor (see SinkBuffer).
            stream.flush();
          } catch (const boost::archive::archive_exception&) {
            buffer.flush();  // the write error that stopped the archive, naming the file
            throw;
          }
          buffer.flush();
          std::string& entry = entries[kind];
          put_le(kind, 4, &entry);
          put_le(buffer.crc(), 4, &entry);
          put_le(offset, 8, &entry);
          put_le(sink.size() - offset, 8, &entry);
        };
        const WritePart write_part = [&](ModelPart part, const ModelState& state) {
          switch (part) {
            case ModelPart::kRocchio:
              return write_section(1 + uint32_t(part), state.rocchio);
            case ModelPart::kMultinomialNb:
              return write_section(1 + uint32_t(part), state.multinomial_nb);
            case ModelPart::kBernoulliNb:
              return write_section(1 + uint32_t(part), state.bernoulli_nb);
            case ModelPart::kComplementNb:
              return write_section(1 + uint32_t(part), state.complement_nb);
            case ModelPart::kSvm:
              return write_section(1 + uint32_t(part), state.svm);
            case ModelPart::kLogreg:
              return write_section(1 + uint32_t(part), state.logreg);
          }
          throw std::logic_error("model file: unknown part");
        };
        const ModelState& state = fit(write_part);
        write_section(kCoreSection, ModelCoreForWriting{&state});
        std::string table;
        for (uint32_t kind = 0; kind < kNumSections; ++kind) {
          if (entries[kind].empty()) {
            throw std::logic_error("model file: section " + section_name(kind) + " not written");
          }
          table += entries[kind];
        }
        std::string header(kModelMagic, sizeof kModelMagic);
        put_le(2, 4, &header);
        put_le(kNumSections, 4, &header);
        put_le(crc32_of(table), 4, &header);
        put_le(0, 4, &header);
        sink.overwrite(0, header);
        sink.overwrite(table_offset, table);
      },
      "model file");
}

void write_model_file(const std::string& path, const ModelState& state, uint32_t format_version) {
  if (format_version == 1) return write_model_file_v1(path, state);
  if (format_version != 2) {
    throw InvalidArgumentError("model file format version " + std::to_string(format_version) +
                               " cannot be written");
  }
  write_model_file_as_fitted(path, [&](const WritePart& write_part) -> const ModelState& {
    for (size_t part = 0; part < kNumModelParts; ++part) {
      write_part(static_cast<ModelPart>(part), state);
    }
    return state;
  });
}

std::string model_file_header(const std::string& payload) {
  std::string header(kModelMagic, sizeof kModelMagic);
  put_le(1, 4, &header);
  put_le(payload.size(), 8, &header);
  put_le(crc32_of(payload), 4, &header);
  return header;
}

namespace {

// The format version of a model file's bytes after the magic and version
// checks.
uint32_t checked_version(const std::string& path, std::string_view data) {
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
  return version;
}

// The payload of a version 1 model file's bytes after every header check
// and the CRC (a view into `data`).
std::string_view verified_payload(const std::string& path, std::string_view data) {
  checked_version(path, data);
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

struct SectionEntry {
  uint32_t crc = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
};
using SectionTable = std::array<SectionEntry, kNumSections>;

// The section table of a version 2 model file's bytes, after checking that
// every section lies inside the file, each kind once, and the file ends
// where the last section does. The sections' own CRCs are checked when they
// are decoded.
SectionTable verified_sections(const std::string& path, std::string_view data) {
  const uint64_t count = get_le(data, 12, 4);
  const auto table_crc = static_cast<uint32_t>(get_le(data, 16, 4));
  if (count == 0 || count > 64) {
    corrupt(path, "model file is corrupted (" + std::to_string(count) + " sections)");
  }
  const uint64_t table_end = kModelHeaderBytes + count * kSectionEntryBytes;
  if (data.size() < table_end) corrupt(path, "model file is truncated (incomplete section table)");
  const std::string_view table = data.substr(kModelHeaderBytes, table_end - kModelHeaderBytes);
  if (crc32_of(table) != table_crc) {
    corrupt(path, "model file is corrupted (checksum mismatch in the section table)");
  }
  SectionTable sections;
  std::array<bool, kNumSections> seen{};
  for (uint64_t i = 0; i < count; ++i) {
    const size_t at = i * kSectionEntryBytes;
    const uint64_t kind = get_le(table, at, 4);
    if (kind >= kNumSections || seen[kind]) {
      corrupt(path,
              "model file is corrupted (unknown or repeated section " + std::to_string(kind) + ")");
    }
    seen[kind] = true;
    SectionEntry& entry = sections[kind];
    entry.crc = static_cast<uint32_t>(get_le(table, at + 4, 4));
    entry.offset = get_le(table, at + 8, 8);
    entry.length = get_le(table, at + 16, 8);
    const std::string name = section_name(static_cast<uint32_t>(kind));
    if (entry.offset < table_end) {
      corrupt(path, "model file is corrupted (the " + name + " section overlaps the header)");
    }
    if (entry.offset > data.size() || entry.length > data.size() - entry.offset) {
      corrupt(path, "model file is truncated (the " + name + " section ends past byte " +
                        std::to_string(data.size()) + ")");
    }
  }
  for (uint32_t kind = 0; kind < kNumSections; ++kind) {
    if (!seen[kind]) {
      corrupt(path, "model file is corrupted (no " + section_name(kind) + " section)");
    }
  }
  // As the writer lays them out: one after another, fewer than 8 zero bytes
  // between, the file ending with the last. So the table's CRCs give the
  // whole file's (model_file_fingerprint).
  std::array<const SectionEntry*, kNumSections> in_order;
  for (uint32_t kind = 0; kind < kNumSections; ++kind) in_order[kind] = &sections[kind];
  std::sort(in_order.begin(), in_order.end(),
            [](const SectionEntry* a, const SectionEntry* b) { return a->offset < b->offset; });
  uint64_t end = table_end;
  for (const SectionEntry* entry : in_order) {
    if (entry->offset < end || entry->offset - end >= 8 ||
        data.substr(end, entry->offset - end).find_first_not_of('\0') != std::string_view::npos) {
      corrupt(path, "model file is corrupted (sections out of place)");
    }
    end = entry->offset + entry->length;
  }
  if (end != data.size()) corrupt(path, "model file has trailing bytes");
  return sections;
}

// A section's bytes after its CRC.
std::string_view verified_section(const std::string& path, std::string_view data,
                                  const SectionTable& sections, uint32_t kind) {
  const SectionEntry& entry = sections[kind];
  const std::string_view bytes = data.substr(entry.offset, entry.length);
  if (crc32_of(bytes) != entry.crc) {
    corrupt(path, "model file is corrupted (checksum mismatch in its " + section_name(kind) +
                      " section)");
  }
  return bytes;
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

  // Drops the pages of bytes [offset, offset + length) from this process
  // once they are decoded (they stay in the page cache and would fault in
  // again if read): resident memory grows with the decoded copies only.
  void release(uint64_t offset, uint64_t length) const {
    const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t begin = (offset + page - 1) / page * page;
    const uint64_t end = (offset + length) / page * page;
    if (data_ != nullptr && begin < end && end <= size_) {
      ::madvise(const_cast<char*>(data_) + begin, end - begin, MADV_DONTNEED);
    }
  }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
};

// Decodes `payload` into `object`, translating every decoding failure. The
// payload passed its CRC, so a failure here means a buggy or crafted file;
// BoundedBinaryIarchive keeps such a file from allocating more than a small
// multiple of its size.
template <class T>
void decode(const std::string& path, std::string_view payload, T* object,
            const std::string& section = std::string()) {
  const auto refuse = [&](const std::string& why) {
    corrupt(path, "model file cannot be decoded (" +
                      (section.empty() ? why : "its " + section + " section: " + why) + ")");
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

// Every size, cross-reference and range the classifiers rely on, in the
// core (check_core) and in each part (check_part, against the core's term
// and category counts). A file that passes the CRC but fails here was
// written by a buggy or crafted program; without these checks it could make
// classification read out of bounds or silently assign nothing.
void check_core(const std::string& path, const ModelState& m) {
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
  check.require(
      t.num_features >= 0 && t.threshold_folds >= 0 && t.commit_batch >= 0 && t.tuning_sample >= 0,
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
  check.require(std::isfinite(m.knn_concentration) && m.knn_concentration >= 0,
                "kNN concentration negative or not finite");
  check.require(m.knn_term_weight.empty() == !(m.knn_concentration > 0) &&
                    (m.knn_term_weight.empty() || m.knn_term_weight.size() == terms),
                "kNN term weights");
  check.require_finite(m.knn_term_weight, "kNN term weights");
  check.require(std::all_of(m.knn_term_weight.begin(), m.knn_term_weight.end(),
                            [](float w) { return w >= 0.0f; }),
                "kNN term weights negative");
  for (const KnnCandidate& candidate : m.knn_objective) {
    check.require(candidate.k >= 1 && !std::isnan(candidate.objective) &&
                      std::isfinite(candidate.concentration),
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

void check_rocchio(const Checker& check, const RocchioModel& r, size_t terms, size_t cats) {
  check.require(r.num_categories == cats, "Rocchio centroid count differs from category count");
  check.require(r.term_start.size() == terms + 1 && r.term_start.front() == 0 &&
                    std::is_sorted(r.term_start.begin(), r.term_start.end()) &&
                    r.term_start.back() == r.entry_category.size() &&
                    r.entry_category.size() == r.entry_weight.size(),
                "Rocchio centroid entries");
  check.require_all_at_most(r.entry_category, static_cast<uint32_t>(cats - 1),
                            "Rocchio category index out of range");
  check.require_finite(r.entry_weight, "Rocchio centroids");
}

void check_nb(const Checker& check, const NaiveBayesModel& nb, Method method, size_t terms,
              size_t cats) {
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
}

void check_linear(const Checker& check, const LinearModel& linear, Method method, size_t terms,
                  size_t cats) {
  const std::string name = method_name(method);
  check.require(linear_model_consistent(linear, terms, cats), name + " weights");
  for (const std::vector<float>* values :
       {&linear.entry_weight, &linear.bias, &linear.slope, &linear.intercept}) {
    check.require_finite(*values, "linear model weights");
  }
}

void check_part_model(const Checker& check, const RocchioModel& model, ModelPart /*part*/,
                      size_t terms, size_t cats) {
  check_rocchio(check, model, terms, cats);
}
void check_part_model(const Checker& check, const NaiveBayesModel& model, ModelPart part,
                      size_t terms, size_t cats) {
  check_nb(check, model, Method(static_cast<uint32_t>(part) + 1), terms, cats);
}
void check_part_model(const Checker& check, const LinearModel& model, ModelPart part, size_t terms,
                      size_t cats) {
  check_linear(check, model, Method(static_cast<uint32_t>(part) + 1), terms, cats);
}

// Checks part `part` of `m` against m's core.
void check_part(const std::string& path, const ModelState& m, ModelPart part) {
  const Checker check(path);
  const size_t terms = m.terms.size(), cats = m.categories.size();
  switch (part) {
    case ModelPart::kRocchio:
      return check_rocchio(check, m.rocchio, terms, cats);
    case ModelPart::kMultinomialNb:
      return check_nb(check, m.multinomial_nb, Method::kNaiveBayes, terms, cats);
    case ModelPart::kBernoulliNb:
      return check_nb(check, m.bernoulli_nb, Method::kBernoulliNaiveBayes, terms, cats);
    case ModelPart::kComplementNb:
      return check_nb(check, m.complement_nb, Method::kComplementNaiveBayes, terms, cats);
    case ModelPart::kSvm:
      return check_linear(check, m.svm, Method::kSvm, terms, cats);
    case ModelPart::kLogreg:
      return check_linear(check, m.logreg, Method::kLogreg, terms, cats);
  }
}

void decode_pending_parts(ModelState* m) {
  for (NaiveBayesModel* nb : {&m->multinomial_nb, &m->bernoulli_nb, &m->complement_nb}) {
    nb->decode_pending(m->terms.size(), m->categories.size());
  }
}

void check_model_state(const std::string& path, const ModelState& m) {
  check_core(path, m);
  for (size_t p = 0; p < kNumModelParts; ++p) check_part(path, m, ModelPart(p));
}

}  // namespace

bool model_part_of(Method method, ModelPart* part) {
  if (method == Method::kKnn || method == Method::kCombo || !valid_method(method)) return false;
  *part = ModelPart(static_cast<uint32_t>(method) - 1);
  return true;
}

std::string model_part_name(ModelPart part) {
  return method_name(Method(static_cast<uint32_t>(part) + 1));
}

struct ModelFile::Rep {
  std::string path;
  uint32_t version = 0;
  std::unique_ptr<MappedModelFile> file;  // version 2 only
  SectionTable sections;
  std::array<RetryOnce, kNumModelParts> once;
};

namespace {

// Naive Bayes sections may hold their weights in a sparse form, decoded
// only once the core's counts are checked against it.
void decode_pending_part(NaiveBayesModel* model, size_t terms, size_t cats) {
  model->decode_pending(terms, cats);
}
template <class Model>
void decode_pending_part(Model* /*model*/, size_t /*terms*/, size_t /*cats*/) {}

// Decodes and checks part `part` of a version 2 file into `state`.
template <class Model>
void load_part(const std::string& path, const MappedModelFile& file, const SectionTable& sections,
               ModelPart part, ModelState* state, Model ModelState::*member) {
  const auto kind = static_cast<uint32_t>(part) + 1;
  Model model;
  decode(path, verified_section(path, file.bytes(), sections, kind), &model, section_name(kind));
  file.release(sections[kind].offset, sections[kind].length);
  decode_pending_part(&model, state->terms.size(), state->categories.size());
  check_part_model(Checker(path), model, part, state->terms.size(), state->categories.size());
  state->*member = std::move(model);
}

}  // namespace

ModelFile::ModelFile(const std::string& path, ModelState* core) : rep_(std::make_unique<Rep>()) {
  rep_->path = path;
  auto file = std::make_unique<MappedModelFile>(path);
  const std::string_view bytes = file->bytes();
  rep_->version = checked_version(path, bytes);
  if (rep_->version == 1) {
    *core = parse_model_file(path, bytes);
    return;  // the mapping goes: nothing is left to decode
  }
  rep_->sections = verified_sections(path, bytes);
  ModelState state;
  decode(path, verified_section(path, bytes, rep_->sections, kCoreSection), &state, "core");
  file->release(rep_->sections[kCoreSection].offset, rep_->sections[kCoreSection].length);
  check_core(path, state);
  *core = std::move(state);
  rep_->file = std::move(file);
}

ModelFile::~ModelFile() = default;

uint32_t ModelFile::format_version() const { return rep_->version; }

void ModelFile::load(ModelPart part, ModelState* state) const {
  if (rep_->version == 1) return;
  rep_->once[static_cast<size_t>(part)].run([&] {
    const std::string& path = rep_->path;
    const MappedModelFile& file = *rep_->file;
    const SectionTable& sections = rep_->sections;
    switch (part) {
      case ModelPart::kRocchio:
        return load_part(path, file, sections, part, state, &ModelState::rocchio);
      case ModelPart::kMultinomialNb:
        return load_part(path, file, sections, part, state, &ModelState::multinomial_nb);
      case ModelPart::kBernoulliNb:
        return load_part(path, file, sections, part, state, &ModelState::bernoulli_nb);
      case ModelPart::kComplementNb:
        return load_part(path, file, sections, part, state, &ModelState::complement_nb);
      case ModelPart::kSvm:
        return load_part(path, file, sections, part, state, &ModelState::svm);
      case ModelPart::kLogreg:
        return load_part(path, file, sections, part, state, &ModelState::logreg);
    }
  });
}

void ModelFile::load_all(ModelState* state) const {
  for (size_t p = 0; p < kNumModelParts; ++p) load(ModelPart(p), state);
}

ModelState parse_model_file(const std::string& path, std::string_view bytes) {
  ModelState state;
  if (checked_version(path, bytes) == 1) {
    decode(path, verified_payload(path, bytes), &state);
    decode_pending_parts(&state);
    check_model_state(path, state);
    return state;
  }
  const SectionTable sections = verified_sections(path, bytes);
  decode(path, verified_section(path, bytes, sections, kCoreSection), &state, "core");
  check_core(path, state);
  const auto decode_part = [&](ModelPart part, auto* model) {
    const auto kind = static_cast<uint32_t>(part) + 1;
    decode(path, verified_section(path, bytes, sections, kind), model, section_name(kind));
  };
  decode_part(ModelPart::kRocchio, &state.rocchio);
  decode_part(ModelPart::kMultinomialNb, &state.multinomial_nb);
  decode_part(ModelPart::kBernoulliNb, &state.bernoulli_nb);
  decode_part(ModelPart::kComplementNb, &state.complement_nb);
  decode_part(ModelPart::kSvm, &state.svm);
  decode_part(ModelPart::kLogreg, &state.logreg);
  decode_pending_parts(&state);
  for (size_t p = 0; p < kNumModelParts; ++p) check_part(path, state, ModelPart(p));
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
  char text[64];
  if (get_le(header, 8, 4) >= 2) {
    // Header and section table: every section's CRC, offset and length.
    const uint64_t count = get_le(header, 12, 4);
    std::string table(count <= 64 ? count * kSectionEntryBytes : 0, '\0');
    in.read(table.data(), static_cast<std::streamsize>(table.size()));
    if (count == 0 || count > 64 || static_cast<size_t>(in.gcount()) != table.size()) {
      corrupt(path, "model file is truncated (incomplete section table)");
    }
    // The whole file's CRC from the header, the table and each section's
    // CRC, with the zero padding between (as verified_sections requires).
    struct Piece {
      uint64_t offset, length;
      uLong crc;
    };
    std::vector<Piece> pieces;
    for (uint64_t i = 0; i < count; ++i) {
      const size_t at = i * kSectionEntryBytes;
      pieces.push_back({get_le(table, at + 8, 8), get_le(table, at + 16, 8),
                        static_cast<uLong>(get_le(table, at + 4, 4))});
    }
    std::sort(pieces.begin(), pieces.end(),
              [](const Piece& a, const Piece& b) { return a.offset < b.offset; });
    const std::string head = header + table;
    uLong crc = crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(head.data()),
                      static_cast<uInt>(head.size()));
    uint64_t end = head.size();
    static const Bytef kZeros[8] = {};
    for (const Piece& piece : pieces) {
      if (piece.offset < end || piece.offset - end >= 8) {
        corrupt(path, "model file is corrupted (sections out of place)");
      }
      crc = crc32(crc, kZeros, static_cast<uInt>(piece.offset - end));
      crc = crc32_combine(crc, piece.crc, static_cast<z_off_t>(piece.length));
      end = piece.offset + piece.length;
    }
    std::snprintf(text, sizeof(text), "crc32:%08x bytes:%llu", static_cast<unsigned>(crc),
                  static_cast<unsigned long long>(end));
    return text;
  }
  const uint64_t payload_bytes = get_le(header, 12, 8);
  const auto payload_crc = static_cast<uLong>(get_le(header, 20, 4));
  const uLong header_crc =
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(header.data()),
            static_cast<uInt>(header.size()));
  const uLong file_crc =
      crc32_combine(header_crc, payload_crc, static_cast<z_off_t>(payload_bytes));
  std::snprintf(text, sizeof(text), "crc32:%08x bytes:%llu", static_cast<unsigned>(file_crc),
                static_cast<unsigned long long>(kModelHeaderBytes + payload_bytes));
  return text;
}

ModelState read_model_file(const std::string& path) {
  ModelState state;
  const ModelFile file(path, &state);
  file.load_all(&state);
  return state;
}

AnalyzerSettings read_analyzer_settings(const std::string& path) {
  const MappedModelFile file(path);
  const std::string_view bytes = file.bytes();
  AnalyzerOnly head;
  if (checked_version(path, bytes) == 1) {
    decode(path, verified_payload(path, bytes), &head);
  } else {
    decode(path, verified_section(path, bytes, verified_sections(path, bytes), kCoreSection), &head,
           "core");
  }
  check_analyzer(Checker(path), path, head.analyzer);
  return head.analyzer;
}

}  // namespace autocat::internal
