#include "classify/model_io.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <boost/archive/archive_exception.hpp>
#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "autocat/error.h"

namespace autocat::internal {
namespace {

// Header: magic (8) + format version (u32) + payload bytes (u64) + CRC-32 of
// the payload (u32), all little-endian. The CRC lets a truncated or damaged
// file be refused before Boost parses a single length field from it.
constexpr size_t kHeaderBytes = 8 + 4 + 8 + 4;

void put_le(uint64_t value, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t get_le(const std::string& in, size_t offset, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) {
    value |= uint64_t(static_cast<unsigned char>(in[offset + i])) << (8 * i);
  }
  return value;
}

uint32_t crc32_of(const std::string& data) {
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

// Sizes that every part of a model must agree on; a file that passes the CRC
// but disagrees was written by a buggy or foreign program.
void check_consistency(const std::string& path, const ModelState& m) {
  const size_t terms = m.terms.size(), cats = m.categories.size();
  auto nb_ok = [&](const NaiveBayesModel& nb) {
    return nb.num_categories == cats && nb.log_prior.size() == cats &&
           nb.term_weight.size() == terms * cats &&
           (nb.class_constant.empty() || nb.class_constant.size() == cats);
  };
  const bool ok = m.df.size() == terms && (m.selected.empty() || m.selected.size() == terms) &&
                  m.category_doc_counts.size() == cats && cats > 0 &&
                  m.rocchio.term_start.size() == terms + 1 &&
                  m.rocchio.entry_category.size() == m.rocchio.entry_weight.size() &&
                  m.rocchio.term_start.back() == m.rocchio.entry_weight.size() &&
                  nb_ok(m.multinomial_nb) && nb_ok(m.bernoulli_nb) && nb_ok(m.complement_nb) &&
                  linear_model_consistent(m.svm, terms, cats) &&
                  linear_model_consistent(m.logreg, terms, cats);
  bool thresholds_ok = m.thresholds.empty() || m.thresholds.size() == all_methods().size();
  for (const auto& per_category : m.thresholds) {
    // Empty: that method untuned (added after the file was written).
    thresholds_ok = thresholds_ok && (per_category.empty() || per_category.size() == cats);
  }
  if (!ok || !thresholds_ok) corrupt(path, "model file is inconsistent (sizes disagree)");
  for (uint32_t c : m.rocchio.entry_category) {
    if (c >= cats) corrupt(path, "model file is inconsistent (category out of range)");
  }
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
  std::string header(kModelMagic, sizeof kModelMagic);
  put_le(kModelFormatVersion, 4, &header);
  put_le(payload.size(), 8, &header);
  put_le(crc32_of(payload), 4, &header);

  // Temporary file in the same directory, then rename: readers see the old
  // model or the new one, never half of one.
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw IOError(temp + ": cannot create model file: " + std::strerror(errno));
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(payload.data(), static_cast<std::streamsize>(payload.size()));
    out.flush();
    if (!out) {
      std::remove(temp.c_str());
      throw IOError(temp + ": cannot write model file (disk full?)");
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temp.c_str());
    throw IOError(path + ": cannot replace model file: " + reason);
  }
}

namespace {

// The payload of a model file after every header check and the CRC.
std::string verified_payload(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw NotFoundError(path + ": no such model file");
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw IOError(path + ": cannot open model file: " + std::strerror(errno));
  // One read into a buffer of the file's size: tens of megabytes.
  std::string data(static_cast<size_t>(in.tellg()), '\0');
  in.seekg(0);
  if (!in.read(data.data(), static_cast<std::streamsize>(data.size()))) {
    throw IOError(path + ": cannot read model file");
  }

  if (data.size() < sizeof kModelMagic ||
      std::memcmp(data.data(), kModelMagic, sizeof kModelMagic) != 0) {
    throw ModelFormatError(path + ": not an autocat model file (wrong magic bytes)");
  }
  if (data.size() < kHeaderBytes) corrupt(path, "model file is truncated (incomplete header)");
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
  if (data.size() - kHeaderBytes < length) {
    corrupt(path, "model file is truncated (" + std::to_string(data.size() - kHeaderBytes) +
                      " of " + std::to_string(length) + " payload bytes)");
  }
  if (data.size() - kHeaderBytes > length) corrupt(path, "model file has trailing bytes");
  data.erase(0, kHeaderBytes);
  if (crc32_of(data) != expected_crc) corrupt(path, "model file is corrupted (checksum mismatch)");
  return data;
}

// Decodes `payload` into `object`, translating Boost's failures.
template <class T>
void decode(const std::string& path, const std::string& payload, T* object) {
  try {
    std::istringstream stream(payload, std::ios::binary);
    boost::archive::binary_iarchive archive(stream);
    archive >> *object;
  } catch (const boost::archive::archive_exception& e) {
    corrupt(path, std::string("model file cannot be decoded (") + e.what() + ")");
  } catch (const std::bad_alloc&) {
    corrupt(path, "model file cannot be decoded (absurd sizes)");
  } catch (const std::length_error&) {
    corrupt(path, "model file cannot be decoded (absurd sizes)");
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

}  // namespace

ModelState read_model_file(const std::string& path) {
  ModelState state;
  decode(path, verified_payload(path), &state);
  check_consistency(path, state);
  return state;
}

AnalyzerSettings read_analyzer_settings(const std::string& path) {
  AnalyzerOnly head;
  decode(path, verified_payload(path), &head);
  return head.analyzer;
}

}  // namespace autocat::internal
