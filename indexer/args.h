// The options of the `autocat` subcommands, declared once each (name, value
// name, help) on a CLI11 app: CLI11 splits the command line ("--k 5" or
// "--k=5", "--" ends options, "-" is an argument) and writes the help from
// the declarations; ParsedArgs holds what was given, and its typed accessors
// check numbers and ranges with autocat's own wording. Every problem is
// reported by throwing UsageError; nothing here prints or exits.
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

namespace CLI {
class App;
}  // namespace CLI

namespace autocat::cli {

// A command line the user got wrong. what() is the reason only; the caller
// adds "autocat SUBCOMMAND: " and the pointer to --help.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Declares a command's options on its CLI11 app, in the order the help lists
// them. An option already declared is left as it is, so shared groups may
// overlap (eval takes the decision and the training options, both with
// --one-of).
class OptionSet {
 public:
  explicit OptionSet(CLI::App& app) : app_(app) {}

  // "--json": given or not.
  void flag(const std::string& name, const std::string& help);
  // "--k N": one value; given twice is an error.
  void value(const std::string& name, const std::string& value_name, const std::string& help);
  // "--db DB", repeatable: every value, in order.
  void values(const std::string& name, const std::string& value_name, const std::string& help);
  // Options declared from now on are listed under "heading:" in the help
  // (default "options").
  void group(const std::string& heading) { group_ = heading; }

 private:
  bool declared(const std::string& name) const;

  CLI::App& app_;
  std::string group_ = "options";
};

// What the command line gave: the options by name (without the dashes) and
// the arguments.
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

  // Forgets the option (eval takes "--method all" before the methods are
  // checked).
  void erase(const std::string& name) { options_.erase(name); }
  // Drops the first argument (`rules test`: the subcommand's name).
  void shift() { positional_.erase(positional_.begin()); }

 private:
  friend ParsedArgs parse_args(CLI::App& app, const std::vector<std::string>& args);
  std::map<std::string, std::vector<std::string>> options_;
  std::vector<std::string> positional_;
};

// Prepares `app` for a command: autocat's help layout with `usage` (the
// usage lines and description) before the options and `footer` after them.
// Declare the options with an OptionSet, then call finish_app(), which adds
// -h/--help and the arguments.
void start_app(CLI::App& app, const std::string& usage, const std::string& footer);
void finish_app(CLI::App& app);

// The long names (without dashes) of the options `define` declares, in order.
std::vector<std::string> declared_names(void (*define)(OptionSet& options));

// Parses `args` (the words after the subcommand) with `app`. A word starting
// with "-" (other than "-" itself) before "--" must be a declared option;
// a valued option needs a value that does not start with "--". Throws
// UsageError.
ParsedArgs parse_args(CLI::App& app, const std::vector<std::string>& args);

// True if `args` asks for help: "--help" or "-h" before any "--". Help wins
// over anything else on the line.
bool wants_help(const std::vector<std::string>& args);

// Parses --select (mi, chi2, df, kl); throws UsageError listing the choices.
FeatureSelection parse_selection(const std::string& name);

// Checks a category term prefix (autocat::check_category_prefix: capitals,
// not X alone, not starting with the reserved Q or Z). Throws UsageError.
void check_prefix(const std::string& prefix);

}  // namespace autocat::cli
