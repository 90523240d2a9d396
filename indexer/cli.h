// The `autocat` command-line tool: subcommands train, index, classify,
// search, eval, features. Library code so tests can call it in-process.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace autocat::cli {

// Runs one command line (args[0] is the subcommand). Writes results to `out`
// and messages to `err`. Returns the process exit code: 0 on success,
// 1 on a runtime error, 2 on a usage error.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace autocat::cli
