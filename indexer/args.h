// Command-line parsing for the `autocat` subcommands: long options with or
// without values ("--k 5" or "--k=5"), repeatable options, positional
// arguments, "--" to end options. Typed accessors validate numbers and
// ranges. Every problem is reported by throwing UsageError; nothing here
// prints or exits.
//
// Thread safety: plain values; no shared state.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "autocat/options.h"
#include "autocat/types.h"

namespace autocat::cli {

// A command line the user got wrong. what() is the reason only; the caller
// adds "autocat SUBCOMMAND: " and the pointer to --help.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OptionSpec {
  std::string name;          // long name without the dashes: "model"
  bool takes_value = false;  // "--model DIR" rather than a flag
  bool repeatable = false;   // may be given more than once ("--category")
};

class ParsedArgs {
 public:
  // True if the option was given (flag or valued).
  bool has(const std::string& name) const;
  // The option's value, or `fallback` if it was not given.
  std::string value(const std::string& name, const std::string& fallback = std::string()) const;
  // Every value of a repeatable option, in order.
  std::vector<std::string> values(const std::string& name) const;
  // The value of a required option; throws UsageError if it was not given.
  std::string required(const std::string& name) const;

  // Integer in [min, max]; `fallback` when absent. Throws UsageError naming
  // the option for a non-number or an out-of-range value.
  int64_t integer(const std::string& name, int64_t fallback, int64_t min, int64_t max) const;
  // Finite number in [min, max].
  double number(const std::string& name, double fallback, double min, double max) const;
  // --method: nullopt when absent; UsageError listing the methods if unknown.
  std::optional<Method> method(const std::string& name = "method") const;

  const std::vector<std::string>& positional() const { return positional_; }

 private:
  friend ParsedArgs parse_args(const std::vector<std::string>& args,
                               const std::vector<OptionSpec>& specs);
  std::map<std::string, std::vector<std::string>> options_;
  std::vector<std::string> positional_;
};

// Parses `args` (the words after the subcommand). A word starting with "-"
// (other than "-" itself, which is positional) must be a known option. A
// valued option whose value is missing or starts with "--" is an error.
// Throws UsageError.
ParsedArgs parse_args(const std::vector<std::string>& args, const std::vector<OptionSpec>& specs);

// True if `args` asks for help: "--help" or "-h" before any "--".
bool wants_help(const std::vector<std::string>& args);

// Parses --select (mi, chi2, df, kl); throws UsageError listing the choices.
FeatureSelection parse_selection(const std::string& name);

// Checks a category term prefix (autocat::check_category_prefix: capitals,
// not X alone, not starting with the reserved Q or Z). Throws UsageError.
void check_prefix(const std::string& prefix);

}  // namespace autocat::cli
