// Helpers of the `autocat` CLI tests: run the real binary in a shell with
// captured stdout/stderr, split lines, parse JSON.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "classify/json.h"
#include "tests/test_util.h"

namespace autocat::testing_util {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Quotes `word` for /bin/sh.
inline std::string shell_quote(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

// Runs AUTOCAT_CLI_PATH with `args`; standard input comes from `stdin_path`
// (default /dev/null). Captures both output streams.
inline CliResult run_autocat(const std::vector<std::string>& args,
                             const std::string& stdin_path = "/dev/null") {
  TempDir io;
  std::string command = shell_quote(AUTOCAT_CLI_PATH);
  for (const std::string& arg : args) command += " " + shell_quote(arg);
  command += " <" + shell_quote(stdin_path) + " >" + shell_quote(io.file("out")) + " 2>" +
             shell_quote(io.file("err"));
  const int status = std::system(command.c_str());
  CliResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_file(io.file("out"));
  result.err = read_file(io.file("err"));
  return result;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// Parses one JSON text; on failure returns null and records `error`.
inline internal::JsonValue parse(const std::string& text, std::string* error) {
  internal::JsonValue value;
  if (!internal::parse_json(text, &value, error)) return internal::JsonValue();
  return value;
}

// Parses `text` as one JSON value, failing the calling test if it is not.
inline internal::JsonValue json(const std::string& text) {
  std::string error;
  internal::JsonValue value = parse(text, &error);
  EXPECT_TRUE(error.empty()) << error << " in: " << text;
  return value;
}

// The number member `key` of `object` (NaN if absent or not a number).
inline double number_at(const internal::JsonValue& object, const std::string& key) {
  const internal::JsonValue* value = object.find(key);
  if (value == nullptr || value->type() != internal::JsonValue::Type::kNumber)
    return std::numeric_limits<double>::quiet_NaN();
  return value->as_number();
}

inline std::string string_at(const internal::JsonValue& object, const std::string& key) {
  const internal::JsonValue* value = object.find(key);
  return value != nullptr && value->is_string() ? value->as_string() : std::string("<missing>");
}

}  // namespace autocat::testing_util
