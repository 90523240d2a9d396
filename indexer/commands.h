// The subcommands of `autocat`, one file each (commands_train.cc, ...), and
// the few helpers they share. A command declares its options (the shared
// groups come from the add_*_options functions below); cli::run() parses the
// command line with them (or prints the help they make) and runs the
// command, which throws UsageError for a bad command line and autocat::Error
// (or Xapian::Error) for a runtime failure; cli::run() turns those into
// messages and exit codes.
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

// Declares a subcommand's options (its help comes from them).
using DefineOptions = void (*)(OptionSet& options);
// Runs a subcommand on its parsed command line; returns the exit code.
using CommandFunction = int (*)(const ParsedArgs& args, std::ostream& out, Messages& messages);

struct Command {
  std::string name;     // "train"
  std::string summary;  // one line for the overview
  std::string usage;    // the --help text before the options: usage lines, description
  DefineOptions options;
  std::string footer;  // the --help text after the options: examples
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
Command serve_command();
Command relabel_command();
Command corrections_command();
Command journal_command();
Command model_command();

// --model DIR, with its help for this command.
void add_model_option(OptionSet& options,
                      const std::string& help = "model directory written by autocat train");

// Which reader options a command takes.
struct ReaderOptionSet {
  bool duplicate_ids = true;  // --allow-duplicate-ids
  bool fields = false;        // --field
};
// The reader options of commands reading documents: --split,
// --skip-malformed, --allow-duplicate-ids, --max-document-bytes, --field.
void add_reader_options(OptionSet& options, ReaderOptionSet which = {});
// ReadOptions from the reader options (absent ones keep their defaults).
internal::ReadOptions read_options(const ParsedArgs& args);
// --field NAME[^BOOST] (BOOST a whole number, 1..100, default 1).
internal::TextField parse_text_field(const std::string& spec);

// --method M: `before`, every method (from all_methods(), so a new method
// shows in every command) and then `more` ("(default: ...)").
void add_method_option(OptionSet& options, const std::string& more, const std::string& before = "");
// --k N, kNN's neighbours at classification time.
void add_k_option(OptionSet& options);

// The decision options every categorizing command accepts: --one-of,
// --any-of, --other, --no-other, --min-score, --threshold.
void add_decision_options(OptionSet& options);
// ClassifyOptions from --method, --k and the decision options (absent ones
// keep their defaults).
ClassifyOptions classify_options(const ParsedArgs& args);

// The training options of `autocat train` (and `eval --folds`), listed under
// `heading`, and TrainOptions from them.
void add_train_options(OptionSet& options, const std::string& heading);
TrainOptions train_options(const ParsedArgs& args);
// The names of the training options (without dashes), --method included.
std::vector<std::string> train_option_names();

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
