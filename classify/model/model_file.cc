// The model file's byte layout: headers, section table, CRCs, mapping.
#include "classify/model/model_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "autocat/error.h"

namespace autocat::internal {

namespace {

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

}  // namespace

std::string model_file_header(const std::string& payload) {
  std::string header(kModelMagic, sizeof kModelMagic);
  put_le(1, 4, &header);
  put_le(payload.size(), 8, &header);
  put_le(crc32_of(payload), 4, &header);
  return header;
}

std::string model_file_header_v2(uint32_t count, std::string_view table) {
  std::string header(kModelMagic, sizeof kModelMagic);
  put_le(2, 4, &header);
  put_le(count, 4, &header);
  put_le(crc32_of(table), 4, &header);
  put_le(0, 4, &header);
  return header;
}

std::string model_section_entry(uint32_t kind, uint32_t crc, uint64_t offset, uint64_t length) {
  std::string entry;
  put_le(kind, 4, &entry);
  put_le(crc, 4, &entry);
  put_le(offset, 8, &entry);
  put_le(length, 8, &entry);
  return entry;
}

std::string model_section_name(uint32_t kind) {
  return kind == kModelCoreSection ? std::string("core") : model_part_name(ModelPart(kind - 1));
}

void refuse_model_file(const std::string& path, const std::string& what) {
  throw ModelFormatError(path + ": " + what + "; train the model again with autocat train");
}

uint32_t checked_model_version(const std::string& path, std::string_view data) {
  if (data.size() < sizeof kModelMagic ||
      std::memcmp(data.data(), kModelMagic, sizeof kModelMagic) != 0) {
    throw ModelFormatError(path + ": not an autocat model file (wrong magic bytes)");
  }
  if (data.size() < kModelHeaderBytes) {
    refuse_model_file(path, "model file is truncated (incomplete header)");
  }
  const auto version = static_cast<uint32_t>(get_le(data, 8, 4));
  if (version > kModelFormatVersion) {
    throw ModelFormatError(path + ": model format version " + std::to_string(version) +
                           " is newer than this autocat reads (version " +
                           std::to_string(kModelFormatVersion) +
                           "); upgrade autocat or train the model again");
  }
  if (version == 0) refuse_model_file(path, "model format version 0 is not valid");
  return version;
}

std::string_view verified_model_payload(const std::string& path, std::string_view data) {
  checked_model_version(path, data);
  const uint64_t length = get_le(data, 12, 8);
  const auto expected_crc = static_cast<uint32_t>(get_le(data, 20, 4));
  if (data.size() - kModelHeaderBytes < length) {
    refuse_model_file(path, "model file is truncated (" +
                                std::to_string(data.size() - kModelHeaderBytes) + " of " +
                                std::to_string(length) + " payload bytes)");
  }
  if (data.size() - kModelHeaderBytes > length) {
    refuse_model_file(path, "model file has trailing bytes");
  }
  data.remove_prefix(kModelHeaderBytes);
  if (crc32_of(data) != expected_crc) {
    refuse_model_file(path, "model file is corrupted (checksum mismatch)");
  }
  return data;
}

ModelSectionTable verified_model_sections(const std::string& path, std::string_view data) {
  const uint64_t count = get_le(data, 12, 4);
  const auto table_crc = static_cast<uint32_t>(get_le(data, 16, 4));
  if (count == 0 || count > 64) {
    refuse_model_file(path, "model file is corrupted (" + std::to_string(count) + " sections)");
  }
  const uint64_t table_end = kModelHeaderBytes + count * kModelSectionEntryBytes;
  if (data.size() < table_end) {
    refuse_model_file(path, "model file is truncated (incomplete section table)");
  }
  const std::string_view table = data.substr(kModelHeaderBytes, table_end - kModelHeaderBytes);
  if (crc32_of(table) != table_crc) {
    refuse_model_file(path, "model file is corrupted (checksum mismatch in the section table)");
  }
  ModelSectionTable sections;
  std::array<bool, kNumModelSections> seen{};
  for (uint64_t i = 0; i < count; ++i) {
    const size_t at = i * kModelSectionEntryBytes;
    const uint64_t kind = get_le(table, at, 4);
    if (kind >= kNumModelSections || seen[kind]) {
      refuse_model_file(path, "model file is corrupted (unknown or repeated section " +
                                  std::to_string(kind) + ")");
    }
    seen[kind] = true;
    ModelSectionEntry& entry = sections[kind];
    entry.crc = static_cast<uint32_t>(get_le(table, at + 4, 4));
    entry.offset = get_le(table, at + 8, 8);
    entry.length = get_le(table, at + 16, 8);
    const std::string name = model_section_name(static_cast<uint32_t>(kind));
    if (entry.offset < table_end) {
      refuse_model_file(path,
                        "model file is corrupted (the " + name + " section overlaps the header)");
    }
    if (entry.offset > data.size() || entry.length > data.size() - entry.offset) {
      refuse_model_file(path, "model file is truncated (the " + name + " section ends past byte " +
                                  std::to_string(data.size()) + ")");
    }
  }
  for (uint32_t kind = 0; kind < kNumModelSections; ++kind) {
    if (!seen[kind]) {
      refuse_model_file(path,
                        "model file is corrupted (no " + model_section_name(kind) + " section)");
    }
  }
  // As the writer lays them out: one after another, fewer than 8 zero bytes
  // between, the file ending with the last. So the table's CRCs give the
  // whole file's (model_file_fingerprint).
  std::array<const ModelSectionEntry*, kNumModelSections> in_order;
  for (uint32_t kind = 0; kind < kNumModelSections; ++kind) in_order[kind] = &sections[kind];
  std::sort(
      in_order.begin(), in_order.end(),
      [](const ModelSectionEntry* a, const ModelSectionEntry* b) { return a->offset < b->offset; });
  uint64_t end = table_end;
  for (const ModelSectionEntry* entry : in_order) {
    if (entry->offset < end || entry->offset - end >= 8 ||
        data.substr(end, entry->offset - end).find_first_not_of('\0') != std::string_view::npos) {
      refuse_model_file(path, "model file is corrupted (sections out of place)");
    }
    end = entry->offset + entry->length;
  }
  if (end != data.size()) refuse_model_file(path, "model file has trailing bytes");
  return sections;
}

std::string_view verified_model_section(const std::string& path, std::string_view data,
                                        const ModelSectionTable& sections, uint32_t kind,
                                        const MappedModelFile* mapped) {
  const ModelSectionEntry& entry = sections[kind];
  const std::string_view bytes = data.substr(entry.offset, entry.length);
  uint32_t crc = 0;
  if (mapped == nullptr) {
    crc = crc32_of(bytes);
  } else {
    // In steps, each step's pages dropped once checked: a section larger
    // than the memory a document's classification needs never is resident
    // whole.
    constexpr size_t kStep = size_t{32} << 20;
    uLong running = crc32(0L, Z_NULL, 0);
    for (size_t at = 0; at < bytes.size(); at += kStep) {
      const std::string_view step = bytes.substr(at, kStep);
      running = crc32(running, reinterpret_cast<const Bytef*>(step.data()),
                      static_cast<uInt>(step.size()));
      mapped->release(entry.offset + at, step.size());
    }
    crc = static_cast<uint32_t>(running);
  }
  if (crc != entry.crc) {
    refuse_model_file(path, "model file is corrupted (checksum mismatch in its " +
                                model_section_name(kind) + " section)");
  }
  return bytes;
}

MappedModelFile::MappedModelFile(const std::string& path) {
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

MappedModelFile::~MappedModelFile() {
  if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
}

void MappedModelFile::release(uint64_t offset, uint64_t length) const {
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t begin = (offset + page - 1) / page * page;
  const uint64_t end = (offset + length) / page * page;
  if (data_ != nullptr && begin < end && end <= size_) {
    ::madvise(const_cast<char*>(data_) + begin, end - begin, MADV_DONTNEED);
  }
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
    std::string table(count <= 64 ? count * kModelSectionEntryBytes : 0, '\0');
    in.read(table.data(), static_cast<std::streamsize>(table.size()));
    if (count == 0 || count > 64 || static_cast<size_t>(in.gcount()) != table.size()) {
      refuse_model_file(path, "model file is truncated (incomplete section table)");
    }
    // The whole file's CRC from the header, the table and each section's
    // CRC, with the zero padding between (as verified_model_sections requires).
    struct Piece {
      uint64_t offset, length;
      uLong crc;
    };
    std::vector<Piece> pieces;
    for (uint64_t i = 0; i < count; ++i) {
      const size_t at = i * kModelSectionEntryBytes;
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
        refuse_model_file(path, "model file is corrupted (sections out of place)");
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

}  // namespace autocat::internal
