// Fuzzes the JSON Lines reader: every line through the JSON parser in
// memory (fast), then - for one input in four, chosen by its size so runs
// are repeatable - the input written to a .jsonl file and read through
// read_documents, strictly or with skip_malformed (by the first byte). The
// reader sizes a fresh 1 MB buffer per file, which page faults under ASan:
// about 30 files a second on a loaded 2-core machine. Bad
// input may only end in autocat::Error (a clear message); anything else -
// a crash, another exception, a sanitizer report - is a bug.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "autocat/error.h"
#include "classify/corpus/document_reader.h"
#include "classify/io/json_text.h"

namespace {

// One scratch file per process, removed at exit.
const std::string& scratch_path() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/autocat-fuzz-XXXXXX.jsonl";
    const int fd = mkstemps(pattern.data(), 6);
    if (fd < 0) std::abort();
    close(fd);
    std::atexit([] { std::remove(scratch_path().c_str()); });
    return pattern;
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace autocat::internal;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  while (!rest.empty()) {
    const size_t end = std::min(rest.find('\n'), rest.size());
    Json value;
    JsonNumberTexts number_texts;
    std::string error;
    if (parse_json(rest.substr(0, end), &value, &error, &number_texts)) {
      // Whatever was read is written as UTF-8 JSON that reads back.
      const std::string written = dump_json(value);
      Json again;
      if (!is_valid_utf8(written) || !parse_json(written, &again, &error)) std::abort();
    }
    rest.remove_prefix(std::min(end + 1, rest.size()));
  }

  if (size % 4 != 0) return 0;
  const std::string& path = scratch_path();
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file || std::fwrite(data, 1, size, file) != size || std::fclose(file) != 0) std::abort();
  {
    ReadOptions options;
    options.skip_malformed = size > 0 && (data[0] & 1) != 0;
    size_t bytes_seen = 0;
    try {
      read_documents(
          {path}, options,
          [&](InputDocument&& doc) {
            bytes_seen += doc.id.size() + doc.text.size() + doc.title.size();
            for (const std::string& label : doc.labels) bytes_seen += label.size();
          },
          [](const std::string&) {});
    } catch (const autocat::Error&) {
    }
    // Documents come from the input: never more text than it holds, apart from
    // generated ids and \u escapes (at most 3 bytes from 6).
    if (bytes_seen > 2 * size + 4096) __builtin_trap();
  }
  return 0;
}
