// Reading documents from JSON Lines (plain, gzip or stdin), folder trees and
// plain files.
#include "classify/corpus/document_reader.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>

#include "autocat/error.h"
#include "classify/corpus/db_reader.h"
#include "classify/io/json_text.h"

namespace autocat::internal {

namespace {

namespace fs = std::filesystem;

// JSON Lines are read in chunks of this size.
constexpr size_t kChunkBytes = size_t{1} << 20;
// A file with a NUL byte among its first this many bytes is binary.
constexpr size_t kBinaryProbeBytes = 8192;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

void warn(const WarningCallback& on_warning, const std::string& message) {
  if (on_warning) on_warning(message);
}

std::string errno_message() { return std::strerror(errno); }

// A stream of bytes read in large chunks.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `size` bytes; returns 0 at the end. Throws IOError.
  virtual size_t read(char* buffer, size_t size) = 0;
};

class FileSource : public ByteSource {
 public:
  FileSource(const std::string& name, std::FILE* file) : name_(name), file_(file) {}
  ~FileSource() override { std::fclose(file_); }
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  size_t read(char* buffer, size_t size) override {
    size_t n = std::fread(buffer, 1, size, file_);
    if (n == 0 && std::ferror(file_)) throw IOError(name_ + ": read error: " + errno_message());
    return n;
  }

 private:
  std::string name_;
  std::FILE* file_;
};

// Reads gzip data (or, for standard input, plain data as well).
class GzipSource : public ByteSource {
 public:
  GzipSource(const std::string& name, gzFile file) : name_(name), file_(file) {
    gzbuffer(file_, 256 * 1024);
  }
  ~GzipSource() override { gzclose(file_); }
  GzipSource(const GzipSource&) = delete;
  GzipSource& operator=(const GzipSource&) = delete;

  size_t read(char* buffer, size_t size) override {
    const auto request = static_cast<unsigned>(std::min<size_t>(size, 1u << 30));
    int n = gzread(file_, buffer, request);
    int errnum = Z_OK;
    const char* message = gzerror(file_, &errnum);
    if (n < 0 || (errnum != Z_OK && errnum != Z_BUF_ERROR)) {
      if (errnum == Z_ERRNO) throw IOError(name_ + ": read error: " + errno_message());
      throw IOError(name_ + ": corrupt gzip data: " + message);
    }
    if (n == 0 && errnum == Z_BUF_ERROR) {
      throw IOError(name_ + ": truncated gzip file (unexpected end of file)");
    }
    return static_cast<size_t>(n);
  }

 private:
  std::string name_;
  gzFile file_;
};

std::unique_ptr<ByteSource> open_jsonl(const std::string& path) {
  if (path == "-") {
    int fd = dup(STDIN_FILENO);
    if (fd < 0) throw IOError("<stdin>: cannot read: " + errno_message());
    gzFile file = gzdopen(fd, "rb");
    if (file == nullptr) {
      close(fd);
      throw IOError("<stdin>: cannot read");
    }
    return std::make_unique<GzipSource>("<stdin>", file);
  }
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) throw IOError(path + ": cannot open: " + errno_message());
  if (!ends_with(path, ".gz")) return std::make_unique<FileSource>(path, file);
  unsigned char magic[2] = {0, 0};
  size_t n = std::fread(magic, 1, 2, file);
  std::fclose(file);
  if (n != 2 || magic[0] != 0x1f || magic[1] != 0x8b) {
    throw IOError(path + ": not a gzip file");
  }
  gzFile gz = gzopen(path.c_str(), "rb");
  if (gz == nullptr) throw IOError(path + ": cannot open: " + errno_message());
  return std::make_unique<GzipSource>(path, gz);
}

// The name ids are derived from: the input as given, lexically normalized,
// without a trailing slash.
std::string id_base_of(const std::string& input) {
  if (input == "-") return "stdin";
  std::string base = fs::path(input).lexically_normal().generic_string();
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  return base.empty() ? input : base;
}

std::string display_name(const std::string& input) { return input == "-" ? "<stdin>" : input; }

// Fills `doc` from one parsed JSONL record; `number_texts` holds the text
// of its numbers as written. Returns an empty string on success, else the
// reason the record is malformed.
std::string record_to_document(const Json& record, const JsonNumberTexts& number_texts,
                               const std::vector<TextField>& fields, InputDocument* doc) {
  if (!record.is_object()) return "not a JSON object";
  // A member, or nullptr if absent.
  const auto find = [&](const std::string& key) -> const Json* {
    const auto it = record.find(key);
    return it == record.end() ? nullptr : &*it;
  };
  if (fields.empty()) {
    const Json* text = find("text");
    if (text == nullptr) return "missing \"text\"";
    if (!text->is_string()) return "\"text\" is not a string";
    doc->text = text->get<std::string>();
  } else {
    // Repeating a field multiplies its words' counts: the boost works the
    // same way in every classifier and needs nothing in the model.
    for (const TextField& field : fields) {
      const Json* value = find(field.name);
      if (value == nullptr || value->is_null()) continue;
      if (!value->is_string()) {
        return "\"" + field.name + "\" (a --field) is not a string";
      }
      for (int i = 0; i < field.boost; ++i) {
        if (!doc->text.empty()) doc->text += "\n\n";
        doc->text += value->get_ref<const std::string&>();
      }
    }
  }
  if (const Json* id = find("id"); id != nullptr && !id->is_null()) {
    if (id->is_string()) {
      doc->id = id->get<std::string>();
    } else if (id->is_number()) {
      // As written: a double would merge ids beyond 2^53.
      doc->id = number_texts.at("/id");
    } else {
      return "\"id\" is not a string or a number";
    }
  }
  if (const Json* title = find("title"); title != nullptr && !title->is_null()) {
    if (!title->is_string()) return "\"title\" is not a string";
    doc->title = title->get<std::string>();
  }
  if (const Json* labels = find("labels"); labels != nullptr && !labels->is_null()) {
    if (!labels->is_array()) return "\"labels\" is not an array of strings";
    doc->labels_given = true;
    doc->labels.reserve(labels->size());
    for (const Json& label : *labels) {
      if (!label.is_string()) return "\"labels\" is not an array of strings";
      doc->labels.push_back(label.get<std::string>());
    }
  }
  if (const Json* split = find("split"); split != nullptr && !split->is_null()) {
    if (!split->is_string()) return "\"split\" is not a string";
    doc->split = split->get<std::string>();
  }
  return std::string();
}

bool is_blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; });
}

// Reads a whole file into `text`, at most `max_bytes`; returns false if the
// file is longer. Throws IOError naming it if it cannot be read.
bool read_file(const std::string& path, uint64_t max_bytes, std::string* text) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (!file) throw IOError(path + ": cannot open: " + errno_message());
  text->clear();
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > max_bytes) return false;
  if (!ec) text->reserve(static_cast<size_t>(size));
  char chunk[65536];
  while (true) {
    size_t n = std::fread(chunk, 1, sizeof(chunk), file.get());
    text->append(chunk, n);
    // Devices and pipes have no size: stop reading once past the limit.
    if (text->size() > max_bytes) return false;
    if (n < sizeof(chunk)) {
      if (std::ferror(file.get())) throw IOError(path + ": read error: " + errno_message());
      break;
    }
  }
  return true;
}

// Reads the inputs of one read_documents() call, checking every document's
// id against the ids delivered before.
class Reader {
 public:
  Reader(const std::vector<std::string>& inputs, const ReadOptions& options,
         const DocumentCallback& on_document, const WarningCallback& on_warning)
      : inputs_(inputs), options_(options), on_document_(on_document), on_warning_(on_warning) {}

  uint64_t read_all() {
    for (input_ = 0; input_ < inputs_.size(); ++input_) read_input(inputs_[input_]);
    for (const DatabaseInput& database : options_.databases) {
      read_database(
          database,
          [&](InputDocument&& doc) {
            std::string id = std::move(doc.id);
            deliver_file(std::move(doc), std::move(id));
          },
          on_warning_);
    }
    return delivered_;
  }

 private:
  // Where a delivered document came from: line > 0 is a JSONL line of input
  // `input`, else the file `file_paths_[file]`.
  struct Place {
    uint64_t line = 0;
    uint32_t input = 0;
    uint32_t file = 0;
  };

  std::string place_name(const Place& place) const {
    if (place.line == 0) return file_paths_[place.file];
    return display_name(inputs_[place.input]) + ":" + std::to_string(place.line);
  }

  std::string limit_hint() const {
    return "the limit is " + std::to_string(options_.max_document_bytes) +
           " bytes; raise it with --max-document-bytes or split the document";
  }

  // A malformed record or document: skipped with a warning, or an error.
  void reject(const std::string& where, const std::string& reason) {
    if (options_.skip_malformed) {
      warn(on_warning_, where + ": skipped: " + reason);
      return;
    }
    throw InvalidArgumentError(where + ": " + reason + " (use --skip-malformed to skip it)");
  }

  // Checks the id of `doc` (from `place`) and passes the document on.
  void deliver(InputDocument&& doc, const Place& place) {
    if (doc.id.size() > kMaxIdBytes) {
      reject(doc.source, "id is " + std::to_string(doc.id.size()) + " bytes long, over the " +
                             std::to_string(kMaxIdBytes) +
                             "-byte limit of Xapian terms; give a shorter \"id\"" +
                             (place.line == 0 ? " (or name the input by a shorter path)" : ""));
      return;
    }
    // A label becomes a category name, which every output and the Python
    // module must be able to decode; an id is only shown.
    for (const std::string& label : doc.labels) {
      if (!is_valid_utf8(label)) {
        reject(doc.source, "label \"" + printable(label) +
                               "\" is not valid UTF-8; category names must be UTF-8 (convert "
                               "the input, e.g. with iconv)");
        return;
      }
    }
    if (!is_valid_utf8(doc.id)) {
      warn(on_warning_, doc.source +
                            ": id is not valid UTF-8; JSON output shows U+FFFD in place of the "
                            "invalid bytes");
    }
    auto [first, inserted] = seen_.try_emplace(doc.id, place);
    if (!inserted) {
      const std::string message = doc.source + ": duplicate id \"" + doc.id + "\" (first at " +
                                  place_name(first->second) + ")";
      if (!options_.allow_duplicate_ids) {
        throw InvalidArgumentError(message +
                                   "; give every document its own \"id\", or pass "
                                   "--allow-duplicate-ids to let the later one replace the "
                                   "earlier");
      }
      warn(on_warning_, message + "; allowed by --allow-duplicate-ids");
    }
    ++delivered_;
    if (on_document_) on_document_(std::move(doc));
  }

  // Delivers a whole-file document (doc.source is its path).
  void deliver_file(InputDocument&& doc, std::string id) {
    doc.id = std::move(id);
    Place place;
    place.input = static_cast<uint32_t>(input_);
    place.file = static_cast<uint32_t>(file_paths_.size());
    file_paths_.push_back(doc.source);
    deliver(std::move(doc), place);
  }

  void read_input(const std::string& input) {
    if (input == "-") {
      read_jsonl(input);
      return;
    }
    std::error_code ec;
    const fs::file_status status = fs::status(input, ec);
    if (status.type() == fs::file_type::not_found) {
      throw NotFoundError(input + ": no such file or directory");
    }
    if (ec) throw IOError(input + ": " + ec.message());
    if (fs::is_directory(status)) {
      walk_directory(fs::path(input), fs::path(input));
    } else if (ends_with(input, ".jsonl") || ends_with(input, ".jsonl.gz")) {
      read_jsonl(input);
    } else {
      InputDocument doc;
      if (!read_text_file(input, &doc)) return;
      deliver_file(std::move(doc), id_base_of(input));
    }
  }

  void read_jsonl(const std::string& path) {
    std::unique_ptr<ByteSource> source = open_jsonl(path);
    const std::string name = display_name(path);
    const std::string id_base = id_base_of(path);
    const uint64_t max_bytes = options_.max_document_bytes;
    uint64_t line_number = 0;

    auto handle_line = [&](std::string_view line) {
      ++line_number;
      const std::string where = name + ":" + std::to_string(line_number);
      if (line.size() > max_bytes) {
        reject(where,
               "line is longer than " + std::to_string(max_bytes) + " bytes; " + limit_hint());
        return;
      }
      if (line_number == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // BOM
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (is_blank(line)) return;
      Json record;
      JsonNumberTexts number_texts;
      std::string error;
      std::string reason;
      InputDocument doc;
      if (!parse_json(line, &record, &error, &number_texts)) {
        reason = "invalid JSON: " + error;
      } else {
        reason = record_to_document(record, number_texts, options_.fields, &doc);
      }
      if (!reason.empty()) {
        reject(where, reason);
        return;
      }
      if (doc.split != options_.split && !options_.split.empty()) return;
      if (doc.id.empty()) doc.id = id_base + ":" + std::to_string(line_number);
      doc.source = where;
      Place place;
      place.line = line_number;
      place.input = static_cast<uint32_t>(input_);
      deliver(std::move(doc), place);
    };

    std::string buffer;
    size_t line_start = 0;  // start of the current, unfinished line
    size_t scanned = 0;     // no '\n' in [line_start, scanned)
    bool at_end = false;
    bool discarding = false;  // inside a line too long to keep, being skipped
    if (path == "-") {
      // Standard input that does not start with '{' is plain text: one
      // document, so `echo TEXT | autocat classify -` works.
      buffer.resize(kChunkBytes);
      buffer.resize(source->read(&buffer[0], kChunkBytes));
      at_end = buffer.empty();
      size_t first = buffer.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
      while (first < buffer.size() && is_blank(std::string_view(buffer).substr(first, 1))) ++first;
      if (first < buffer.size() && buffer[first] != '{') {
        char chunk[1 << 16];
        for (size_t n; buffer.size() <= max_bytes && (n = source->read(chunk, sizeof chunk)) > 0;) {
          buffer.append(chunk, n);
        }
        if (buffer.size() > max_bytes) {
          reject(name, "standard input is longer than " + std::to_string(max_bytes) + " bytes; " +
                           limit_hint());
          return;
        }
        if (!options_.split.empty()) return;  // plain text has no split
        InputDocument doc;
        doc.source = name;
        doc.text = std::move(buffer);
        deliver_file(std::move(doc), id_base);
        return;
      }
    }
    while (true) {
      const char* found = static_cast<const char*>(
          std::memchr(buffer.data() + scanned, '\n', buffer.size() - scanned));
      if (found != nullptr) {
        const auto newline = static_cast<size_t>(found - buffer.data());
        if (discarding) {
          discarding = false;
        } else {
          handle_line(std::string_view(buffer).substr(line_start, newline - line_start));
        }
        line_start = scanned = newline + 1;
        continue;
      }
      if (at_end) {
        if (line_start < buffer.size() && !discarding) {
          handle_line(std::string_view(buffer).substr(line_start));
        }
        break;
      }
      if (!discarding && buffer.size() - line_start > max_bytes) {
        // Refused before it grows further; when skipping, the rest of the
        // line is read and dropped chunk by chunk.
        handle_line(std::string_view(buffer).substr(line_start));
        discarding = true;
      }
      if (discarding) {
        buffer.clear();
      } else {
        buffer.erase(0, line_start);
      }
      line_start = 0;
      scanned = buffer.size();
      buffer.resize(scanned + kChunkBytes);
      size_t n = source->read(&buffer[scanned], kChunkBytes);
      buffer.resize(scanned + n);
      if (n == 0) at_end = true;
    }
  }

  // Reads one plain-text file as a document; returns false if it was skipped.
  bool read_text_file(const std::string& path, InputDocument* doc) {
    doc->source = path;
    if (!read_file(path, options_.max_document_bytes, &doc->text)) {
      reject(path, "file is larger than " + std::to_string(options_.max_document_bytes) +
                       " bytes; " + limit_hint());
      return false;
    }
    if (doc->text.empty()) {
      warn(on_warning_, path + ": skipped: empty file");
      return false;
    }
    if (std::memchr(doc->text.data(), '\0', std::min(doc->text.size(), kBinaryProbeBytes)) !=
        nullptr) {
      warn(on_warning_, path + ": skipped: binary file");
      return false;
    }
    return true;
  }

  void walk_directory(const fs::path& root, const fs::path& dir) {
    std::vector<fs::directory_entry> entries;
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    if (ec) throw IOError(dir.string() + ": cannot read directory: " + ec.message());
    for (; it != fs::directory_iterator(); it.increment(ec)) {
      if (ec) break;
      if (it->path().filename().native().compare(0, 1, ".") == 0) continue;  // hidden
      entries.push_back(*it);
    }
    if (ec) throw IOError(dir.string() + ": cannot read directory: " + ec.message());
    std::sort(entries.begin(), entries.end(),
              [](const fs::directory_entry& a, const fs::directory_entry& b) {
                return a.path().filename().native() < b.path().filename().native();
              });
    for (const fs::directory_entry& entry : entries) {
      const std::string path = entry.path().string();
      const fs::file_status status = entry.status(ec);
      if (ec && ec != std::errc::no_such_file_or_directory) {
        throw IOError(path + ": " + ec.message());
      }
      if (fs::is_directory(status)) {
        if (entry.is_symlink(ec)) {
          warn(on_warning_, path + ": skipped: symbolic link to a directory");
          continue;
        }
        walk_directory(root, entry.path());
        continue;
      }
      if (!fs::is_regular_file(status)) {
        warn(on_warning_, path + ": skipped: not a regular file");
        continue;
      }
      InputDocument doc;
      if (!read_text_file(path, &doc)) continue;
      const fs::path relative = entry.path().lexically_relative(root);
      if (options_.labels_from_folders) {
        std::string label = relative.parent_path().generic_string();
        doc.labels_given = !label.empty();
        if (!label.empty()) doc.labels.push_back(std::move(label));
      }
      deliver_file(std::move(doc), id_base_of(root.string()) + "/" + relative.generic_string());
    }
  }

  const std::vector<std::string>& inputs_;
  const ReadOptions& options_;
  const DocumentCallback& on_document_;
  const WarningCallback& on_warning_;
  size_t input_ = 0;
  uint64_t delivered_ = 0;
  std::unordered_map<std::string, Place> seen_;  // id -> where it was first delivered
  std::vector<std::string> file_paths_;          // Place::file -> path
};

}  // namespace

uint64_t read_documents(const std::vector<std::string>& inputs, const ReadOptions& options,
                        const DocumentCallback& on_document, const WarningCallback& on_warning) {
  return Reader(inputs, options, on_document, on_warning).read_all();
}

}  // namespace autocat::internal
