// Saving and loading ModelState: Boost archives into and out of the model
// file's sections.
#include "classify/model/model_io.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <boost/archive/archive_exception.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <cstring>
#include <exception>
#include <sstream>
#include <string_view>

#include "autocat/error.h"
#include "classify/io/atomic_file.h"
#include "classify/io/bounded_binary_iarchive.h"
#include "classify/io/retry_once.h"

namespace autocat::internal {

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

BOOST_CLASS_VERSION(autocat::internal::ModelCoreForWriting, 9)
static_assert(boost::serialization::version<autocat::internal::ModelCoreForWriting>::value ==
                  boost::serialization::version<autocat::internal::ModelState>::value,
              "the core section is read as a ModelState");

namespace autocat::internal {
namespace {

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
  const uint64_t sections_start = table_offset + kNumModelSections * kModelSectionEntryBytes;
  write_file_atomically(
      path,
      [&](AtomicFileSink& sink) {
        sink.append(std::string(sections_start, '\0'));
        std::array<std::string, kNumModelSections> entries;  // by kind
        auto write_section = [&](uint32_t kind, const auto& object) {
          if (!entries[kind].empty()) {
            throw std::logic_error("model file: section " + model_section_name(kind) +
                                   " written twice");
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
          entries[kind] = model_section_entry(kind, buffer.crc(), offset, sink.size() - offset);
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
        write_section(kModelCoreSection, ModelCoreForWriting{&state});
        std::string table;
        for (uint32_t kind = 0; kind < kNumModelSections; ++kind) {
          if (entries[kind].empty()) {
            throw std::logic_error("model file: section " + model_section_name(kind) +
                                   " not written");
          }
          table += entries[kind];
        }
        sink.overwrite(0, model_file_header_v2(kNumModelSections, table));
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

namespace {

// Decodes `payload` into `object`, translating every decoding failure. The
// payload passed its CRC, so a failure here means a buggy or crafted file;
// BoundedBinaryIarchive keeps such a file from allocating more than a small
// multiple of its size.
template <class T>
void decode(const std::string& path, std::string_view payload, T* object,
            const std::string& section = std::string(),
            const std::shared_ptr<const MappedModelFile>& mapped = nullptr) {
  const auto refuse = [&](const std::string& why) {
    refuse_model_file(path, "model file cannot be decoded (" +
                                (section.empty() ? why : "its " + section + " section: " + why) +
                                ")");
  };
  try {
    BoundedInputBuffer::Release release;
    if (mapped) {
      release = [mapped](const char* data, size_t size) {
        mapped->release(static_cast<uint64_t>(data - mapped->bytes().data()), size);
      };
    }
    BoundedInputBuffer buffer(payload.data(), payload.size(), mapped, release);
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

void decode_pending_parts(ModelState* m) {
  for (NaiveBayesModel* nb : {&m->multinomial_nb, &m->bernoulli_nb, &m->complement_nb}) {
    nb->decode_pending(m->terms.size(), m->categories.size());
  }
}

}  // namespace

struct ModelFile::Rep {
  std::string path;
  uint32_t version = 0;
  std::shared_ptr<const MappedModelFile> file;  // version 2 only
  bool map_weights = false;
  ModelSectionTable sections;
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
void load_part(const std::string& path, const std::shared_ptr<const MappedModelFile>& mapped,
               bool map_weights, const ModelSectionTable& sections, ModelPart part,
               ModelState* state, Model ModelState::*member) {
  const MappedModelFile& file = *mapped;
  const auto kind = static_cast<uint32_t>(part) + 1;
  Model model;
  decode(path, verified_model_section(path, file.bytes(), sections, kind, &file), &model,
         model_section_name(kind), map_weights ? mapped : nullptr);
  file.release(sections[kind].offset, sections[kind].length);
  decode_pending_part(&model, state->terms.size(), state->categories.size());
  check_part_model(path, model, part, state->terms.size(), state->categories.size());
  state->*member = std::move(model);
}

}  // namespace

ModelFile::ModelFile(const std::string& path, ModelState* core, bool map_weights)
    : rep_(std::make_unique<Rep>()) {
  rep_->path = path;
  rep_->map_weights = map_weights;
  auto file = std::make_shared<MappedModelFile>(path);
  const std::string_view bytes = file->bytes();
  rep_->version = checked_model_version(path, bytes);
  if (rep_->version == 1) {
    *core = parse_model_file(path, bytes);
    return;  // the mapping goes: nothing is left to decode
  }
  rep_->sections = verified_model_sections(path, bytes);
  ModelState state;
  decode(path, verified_model_section(path, bytes, rep_->sections, kModelCoreSection, file.get()),
         &state, "core");
  file->release(rep_->sections[kModelCoreSection].offset, rep_->sections[kModelCoreSection].length);
  check_model_core(path, state);
  *core = std::move(state);
  rep_->file = std::move(file);
}

ModelFile::~ModelFile() = default;

uint32_t ModelFile::format_version() const { return rep_->version; }

void ModelFile::load(ModelPart part, ModelState* state) const {
  if (rep_->version == 1) return;
  rep_->once[static_cast<size_t>(part)].run([&] {
    const std::string& path = rep_->path;
    const std::shared_ptr<const MappedModelFile>& file = rep_->file;
    const bool map = rep_->map_weights;
    const ModelSectionTable& sections = rep_->sections;
    switch (part) {
      case ModelPart::kRocchio:
        return load_part(path, file, map, sections, part, state, &ModelState::rocchio);
      case ModelPart::kMultinomialNb:
        return load_part(path, file, map, sections, part, state, &ModelState::multinomial_nb);
      case ModelPart::kBernoulliNb:
        return load_part(path, file, map, sections, part, state, &ModelState::bernoulli_nb);
      case ModelPart::kComplementNb:
        return load_part(path, file, map, sections, part, state, &ModelState::complement_nb);
      case ModelPart::kSvm:
        return load_part(path, file, map, sections, part, state, &ModelState::svm);
      case ModelPart::kLogreg:
        return load_part(path, file, map, sections, part, state, &ModelState::logreg);
    }
  });
}

void ModelFile::load_all(ModelState* state) const {
  for (size_t p = 0; p < kNumModelParts; ++p) load(ModelPart(p), state);
}

ModelState parse_model_file(const std::string& path, std::string_view bytes) {
  ModelState state;
  if (checked_model_version(path, bytes) == 1) {
    decode(path, verified_model_payload(path, bytes), &state);
    decode_pending_parts(&state);
    check_model_state(path, state);
    return state;
  }
  const ModelSectionTable sections = verified_model_sections(path, bytes);
  decode(path, verified_model_section(path, bytes, sections, kModelCoreSection), &state, "core");
  check_model_core(path, state);
  const auto decode_part = [&](ModelPart part, auto* model) {
    const auto kind = static_cast<uint32_t>(part) + 1;
    decode(path, verified_model_section(path, bytes, sections, kind), model,
           model_section_name(kind));
  };
  decode_part(ModelPart::kRocchio, &state.rocchio);
  decode_part(ModelPart::kMultinomialNb, &state.multinomial_nb);
  decode_part(ModelPart::kBernoulliNb, &state.bernoulli_nb);
  decode_part(ModelPart::kComplementNb, &state.complement_nb);
  decode_part(ModelPart::kSvm, &state.svm);
  decode_part(ModelPart::kLogreg, &state.logreg);
  decode_pending_parts(&state);
  for (size_t p = 0; p < kNumModelParts; ++p) check_model_part(path, state, ModelPart(p));
  return state;
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
  if (checked_model_version(path, bytes) == 1) {
    decode(path, verified_model_payload(path, bytes), &head);
  } else {
    decode(path,
           verified_model_section(path, bytes, verified_model_sections(path, bytes),
                                  kModelCoreSection),
           &head, "core");
  }
  check_model_analyzer(path, head.analyzer);
  return head.analyzer;
}

}  // namespace autocat::internal
