// Helpers of the `autocat` CLI tests: run the real binary in a shell with
// captured stdout/stderr, split lines, parse JSON.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "classify/io/json_text.h"
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
inline internal::Json parse(const std::string& text, std::string* error) {
  internal::Json value;
  if (!internal::parse_json(text, &value, error)) return internal::Json();
  return value;
}

// Parses `text` as one JSON value, failing the calling test if it is not.
inline internal::Json json(const std::string& text) {
  std::string error;
  internal::Json value = parse(text, &error);
  EXPECT_TRUE(error.empty()) << error << " in: " << text;
  return value;
}

// The member `key` of `object`, or nullptr if absent (or not an object).
inline const internal::Json* member(const internal::Json& object, const std::string& key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// The number member `key` of `object` (NaN if absent or not a number).
inline double number_at(const internal::Json& object, const std::string& key) {
  const internal::Json* value = member(object, key);
  if (value == nullptr || !value->is_number()) return std::numeric_limits<double>::quiet_NaN();
  return value->get<double>();
}

inline std::string string_at(const internal::Json& object, const std::string& key) {
  const internal::Json* value = member(object, key);
  return value != nullptr && value->is_string() ? value->get<std::string>()
                                                : std::string("<missing>");
}

// Starts AUTOCAT_CLI_PATH with `args` in the background, stdin from
// /dev/null and its output streams to `out` and `err`; returns its process
// id, or -1 if it could not start.
inline pid_t spawn_autocat(const std::vector<std::string>& args,
                           const std::string& out = "/dev/null",
                           const std::string& err = "/dev/null") {
  std::vector<std::string> words = {AUTOCAT_CLI_PATH};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int failed = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return failed == 0 ? pid : -1;
}

// Waits for `pid`: its exit code, or 128 + the signal that ended it (as
// run_autocat reports it); -1 if it cannot be waited for.
inline int wait_for(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace autocat::testing_util
