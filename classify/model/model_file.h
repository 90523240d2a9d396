// The model file: magic bytes, format version, payload length and CRC-32,
// then a Boost.Serialization binary archive of ModelState. Written atomically
// (temporary file + rename). Truncated, foreign, corrupted or newer-format
// files are refused with ModelFormatError naming the file.
//
// This file is the byte layout (headers, section table, CRCs) and reading
// the bytes (mapped); the archives inside are model_io.h's.
//
// Thread safety: free functions; a MappedModelFile's const methods may be
// called from many threads.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "classify/model/model_state.h"

namespace autocat::internal {

// "AUTOCAT" + NUL, then a little-endian uint32 format version.
// Version 1: one Boost archive of ModelState after the header.
// Version 2 (2026-11): sections (see "Version 2 layout" below): the
// core (ModelState without its per-method models) and one per ModelPart,
// each with its own offset, length and CRC-32, so that opening a model
// decodes the core only and each method's state on its first use. Version 1
// files still load (whole, at open).
inline constexpr char kModelMagic[8] = {'A', 'U', 'T', 'O', 'C', 'A', 'T', '\0'};
inline constexpr uint32_t kModelFormatVersion = 2;

// Version 1 header: magic (8) + format version (u32) + payload bytes (u64) +
// CRC-32 of the payload (u32), all little-endian. The CRC lets a truncated
// or damaged file be refused before Boost parses a single length field from
// it. model_file_header() returns the header a version 1 model file puts
// before `payload`: kModelHeaderBytes long.
inline constexpr size_t kModelHeaderBytes = 8 + 4 + 8 + 4;
std::string model_file_header(const std::string& payload);

// Version 2 layout, all little-endian:
//   magic (8), format version (u32) = 2, section count N (u32), CRC-32 of
//   the section table (u32), 4 zero bytes: kModelHeaderBytes in all;
//   the section table: N entries of kind (u32), CRC-32 of the section
//   (u32), offset (u64), length (u64), kModelSectionEntryBytes each;
//   the sections, each at an 8-byte aligned offset (zero padding between),
//   the file ending where the last one ends.
// Kinds: 0 the core, a Boost archive read as a ModelState whose per-method
// models are empty; 1 + ModelPart, a Boost archive of that model.
inline constexpr size_t kModelSectionEntryBytes = 4 + 4 + 8 + 8;
inline constexpr uint32_t kModelCoreSection = 0;
inline constexpr uint32_t kNumModelSections = 1 + kNumModelParts;

// "core", or the part's name (model_part_name).
std::string model_section_name(uint32_t kind);
// One entry of a version 2 file's section table (kModelSectionEntryBytes).
std::string model_section_entry(uint32_t kind, uint32_t crc, uint64_t offset, uint64_t length);
// The header of a version 2 file whose section table, of `count` entries,
// is `table` (kModelHeaderBytes).
std::string model_file_header_v2(uint32_t count, std::string_view table);

// Throws ModelFormatError: "<path>: <what>; train the model again ...".
[[noreturn]] void refuse_model_file(const std::string& path, const std::string& what);

// The format version of a model file's bytes after the magic and version
// checks.
uint32_t checked_model_version(const std::string& path, std::string_view data);
// The payload of a version 1 model file's bytes after every header check
// and the CRC (a view into `data`).
std::string_view verified_model_payload(const std::string& path, std::string_view data);

struct ModelSectionEntry {
  uint32_t crc = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
};
using ModelSectionTable = std::array<ModelSectionEntry, kNumModelSections>;

// The section table of a version 2 model file's bytes, after checking that
// every section lies inside the file, each kind once, and the file ends
// where the last section does. The sections' own CRCs are checked when they
// are decoded.
ModelSectionTable verified_model_sections(const std::string& path, std::string_view data);
class MappedModelFile;
// A section's bytes after its CRC. With `mapped` (the file `data` is),
// the pages are dropped as the CRC passes them.
std::string_view verified_model_section(const std::string& path, std::string_view data,
                                        const ModelSectionTable& sections, uint32_t kind,
                                        const MappedModelFile* mapped = nullptr);

// A model file's bytes, mapped read-only while they are decoded: the
// checksum and the decoder read the page cache directly. Reading the file
// into a buffer first cost a copy of every byte plus the buffer's page
// faults, a large share of opening a large model (BENCHMARKS.md, "Model files: size and open
// time"). Model files are never changed in place (a new model is a new generation), so the mapping
// cannot shrink under the reader.
class MappedModelFile {
 public:
  // Throws NotFoundError (missing), ModelFormatError (not a regular file)
  // or IOError.
  explicit MappedModelFile(const std::string& path);
  ~MappedModelFile();
  MappedModelFile(const MappedModelFile&) = delete;
  MappedModelFile& operator=(const MappedModelFile&) = delete;

  std::string_view bytes() const { return {data_, size_}; }

  // Drops the pages of bytes [offset, offset + length) from this process
  // once they are decoded (they stay in the page cache and would fault in
  // again if read): resident memory grows with the decoded copies only.
  void release(uint64_t offset, uint64_t length) const;

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
};

// The identity of the model file at `path`: CRC-32 and size of the whole
// file, "crc32:1a2b3c4d bytes:81234", computed from its header alone (the
// header's CRC of the payload, or version 2's section CRCs, combined with
// the header's own), so it costs one small read. Throws NotFoundError or ModelFormatError naming
// the file.
std::string model_file_fingerprint(const std::string& path);

}  // namespace autocat::internal
