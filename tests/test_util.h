// Helpers shared by the tests: temporary directories and fixture paths.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "missing_data.h"

namespace autocat::testing_util {

// Splits on single spaces, dropping empty words: "a  b" -> {"a", "b"}.
inline std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> words;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) words.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

// The lines of `text`, without their '\n'.
inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

// Synthetic term names that sort like their ids: 7 -> "t007".
inline std::string term_name(uint32_t id) {
  std::string name = std::to_string(id);
  if (name.size() < 3) name.insert(0, 3 - name.size(), '0');
  return "t" + name;
}

// A fresh directory removed when the object goes out of scope.
class TempDir {
 public:
  TempDir() {
    std::random_device device;
    path_ = std::filesystem::temp_directory_path() /
            ("autocat-test-" + std::to_string(::getpid()) + "-" + std::to_string(device()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string path() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline std::string test_data(const std::string& name) {
  return std::string(AUTOCAT_TEST_DATA_DIR) + "/" + name;
}

// A file of the real collections: under $AUTOCAT_SHARED_DATA_DIR when set
// (to point a suite at other, e.g. damaged, data), else ../shared/data.
inline std::string shared_data(const std::string& name) {
  const char* dir = std::getenv("AUTOCAT_SHARED_DATA_DIR");
  return std::string(dir != nullptr && *dir != '\0' ? dir : AUTOCAT_SHARED_DATA_DIR) + "/" + name;
}

// True when AUTOCAT_REQUIRE_DATA=1 (CI): absent real data is a failure.
inline bool data_required() {
  const char* value = std::getenv("AUTOCAT_REQUIRE_DATA");
  return value != nullptr && std::string(value) == "1";
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline void write_file(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
}

// The names in directory `dir`, sorted.
inline std::vector<std::string> entries_of(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace autocat::testing_util

// The one legitimate skip: real data at `path` is absent. Counted, so that
// the test main reports the run to ctest as skipped (and any other skip as
// a failure); with AUTOCAT_REQUIRE_DATA=1 the test fails instead.
#define AUTOCAT_SKIP_WITHOUT_DATA(path, what)                                         \
  do {                                                                                \
    if (!std::filesystem::exists(path)) {                                             \
      if (::autocat::testing_util::data_required()) {                                 \
        GTEST_FAIL() << what << " not found at " << (path)                            \
                     << " and AUTOCAT_REQUIRE_DATA=1 (see ../shared/data/README.md)"; \
      }                                                                               \
      ++::autocat::testing_util::missing_data_skips;                                  \
      GTEST_SKIP() << what << " not found at " << (path)                              \
                   << " (see ../shared/data/README.md); NOT checked";                 \
    }                                                                                 \
  } while (false)
