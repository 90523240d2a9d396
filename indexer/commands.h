// The subcommands of `autocat`, one file each (commands_train.cc, ...), and
// the few helpers they share. A command parses its own arguments, throws
// UsageError for a bad command line and autocat::Error (or Xapian::Error) for
// a runtime failure; cli::run() turns those into messages and exit codes.
//
// Thread safety: commands run one at a time; they share no state.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "autocat/options.h"
#include "classify/corpus/document_reader.h"
#include "classify/io/json_text.h"
#include "indexer/args.h"
#include "indexer/output.h"

namespace autocat {
class CategoryIndexer;
namespace internal {
class Categorizer;
}  // namespace internal
}  // namespace autocat

namespace autocat::cli {

// Runs a subcommand on the words after its name; returns the exit code.
using CommandFunction = int (*)(const std::vector<std::string>& args, std::ostream& out,
                                Messages& messages);

struct Command {
  std::string name;     // "train"
  std::string summary;  // one line for the overview
  std::string usage;    // the full --help text
  CommandFunction run;
};

Command train_command();
Command index_command();
Command classify_command();
Command search_command();
Command eval_command();
Command features_command();
Command explain_command();
Command recategorize_command();
Command rules_command();
Command split_command();
Command learn_command();
Command forget_command();

// Reader options shared by commands reading documents: --split,
// --skip-malformed, --allow-duplicate-ids and --max-document-bytes.
internal::ReadOptions read_options(const ParsedArgs& args);
// --field NAME[^BOOST] (BOOST a whole number, 1..100, default 1).
internal::TextField parse_text_field(const std::string& spec);

// The help entry of --method: `before`, every method (from all_methods(), so
// a new method shows in every command) and then `more` ("(default: ...)"),
// wrapped like the other entries.
std::string method_help(const std::string& more, const std::string& before = "");

// The decision options every categorizing command accepts, and their help.
const std::vector<OptionSpec>& decision_option_specs();
extern const char kDecisionHelp[];
// ClassifyOptions from --method, --k and kDecisionOptions (the options each
// command declares; absent ones keep their defaults).
ClassifyOptions classify_options(const ParsedArgs& args);

// The training options of `autocat train` (and `eval --folds`), their help,
// and TrainOptions from them.
const std::vector<OptionSpec>& train_option_specs();
std::string train_help();
TrainOptions train_options(const ParsedArgs& args);

// `specs` followed by `more`.
std::vector<OptionSpec> with_options(std::vector<OptionSpec> specs,
                                     const std::vector<OptionSpec>& more);

// A callback passing reader warnings to `messages`.
internal::WarningCallback warn_to(Messages& messages);

// Passes the model's warnings about its journal not reported yet (a torn
// tail, documents it holds that the model cannot take, the journal not
// applied) to `messages`, one line each. Some appear only once a method is
// first used: every command reading a model calls it after opening it and
// after each document.
void report_model_warnings(const internal::Categorizer& categorizer, Messages& messages);
void report_model_warnings(const CategoryIndexer& indexer, Messages& messages);

// Throws UsageError if no positional argument was given.
void require_inputs(const ParsedArgs& args, const std::string& what = "INPUT");

// Version of the --json output format; bump when a field changes meaning or
// goes away (docs/json.md).
constexpr int kJsonSchemaVersion = 1;
// One --json object as text, with "schema_version" as its first member.
std::string json_output(const internal::Json& object);

// [{"name", "score"}, ...] for --json output.
internal::Json categories_json(const std::vector<Category>& categories);

// True if `text` holds only ASCII whitespace.
bool is_blank(const std::string& text);

}  // namespace autocat::cli
