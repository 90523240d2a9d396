// Dispatch, help and the translation of every failure into one line on the
// error stream plus an exit code: 0 success, 1 runtime error, 2 usage error.
#include "indexer/cli.h"

#include <xapian.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <ostream>

#include "autocat/category_indexer.h"
#include "autocat/error.h"
#include "autocat/version.h"
#include "classify/decide/categorizer.h"
#include "indexer/commands.h"

namespace autocat::cli {

namespace {

constexpr int kExitRuntimeError = 1;
constexpr int kExitUsageError = 2;

const std::vector<Command>& all_commands() {
  static const std::vector<Command> commands = {
      train_command(),   index_command(),       classify_command(), search_command(),
      eval_command(),    features_command(),    explain_command(),  recategorize_command(),
      rules_command(),   split_command(),       learn_command(),    forget_command(),
      relabel_command(), corrections_command(), serve_command(),    journal_command(),
      model_command()};
  return commands;
}

const Command* find_command(const std::string& name) {
  for (const Command& command : all_commands()) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

std::vector<std::string> command_names() {
  std::vector<std::string> names;
  for (const Command& command : all_commands()) names.push_back(command.name);
  return names;
}

void print_overview(std::ostream& out) {
  out << "autocat: automatic text categorization built into a Xapian index\n"
         "\n"
         "usage: autocat COMMAND [OPTIONS] [ARGUMENTS...]\n"
         "\n"
         "commands:\n";
  std::vector<std::vector<std::string>> rows;
  for (const Command& command : all_commands())
    rows.push_back({"  " + command.name, command.summary});
  print_table(out, rows, {});
  out << "\n"
         "Inputs are JSON Lines files (.jsonl, .jsonl.gz: one object per line with \"id\",\n"
         "\"text\", optional \"labels\", \"title\", \"split\"), folder trees whose subfolder\n"
         "names are labels, plain text files, or - for JSON Lines on standard input.\n"
         "A document without \"id\" is named after the input as given: FILE:LINE for a\n"
         "JSON Lines record, the file's path otherwise. An id repeated within one run is\n"
         "an error (--allow-duplicate-ids accepts it). Lines and files over 64 MiB are\n"
         "refused (--max-document-bytes).\n"
         "\n"
         "Run 'autocat COMMAND --help' for the options of a command.\n"
         "Exit status: 0 success, 1 runtime error, 2 usage error.\n";
}

int usage_error(std::ostream& err, const std::string& command, const std::string& reason) {
  err << "autocat " << command << ": " << one_line(reason) << " (see autocat " << command
      << " --help)\n";
  return kExitUsageError;
}

int runtime_error(std::ostream& err, const std::string& reason) {
  err << "autocat: " << one_line(reason) << '\n';
  return kExitRuntimeError;
}

}  // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" ||
      (args[0] == "help" && args.size() == 1)) {
    print_overview(out);
    return 0;
  }
  if (args[0] == "--version") {
    out << "autocat " AUTOCAT_VERSION_STRING " (Xapian " << Xapian::version_string() << ")\n";
    return 0;
  }
  const bool help_command = args[0] == "help";
  const std::string& name = help_command ? args[1] : args[0];
  const Command* command = find_command(name);
  if (command == nullptr) {
    err << "autocat: unknown command '" << one_line(name) << "'; choose one of "
        << join(command_names()) << " (see autocat --help)\n";
    return kExitUsageError;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  CLI::App app;
  start_app(app, command->usage, command->footer);
  OptionSet options(app);
  command->options(options);
  finish_app(app);
  if (help_command || wants_help(rest)) {
    out << app.help();
    return 0;
  }

  Messages messages(err);
  try {
    const int code = command->run(parse_args(app, rest), out, messages);
    out.flush();
    messages.finish();
    return code;
  } catch (const CLI::CallForHelp&) {
    messages.finish();
    out << app.help();
    return 0;
  } catch (const UsageError& e) {
    messages.finish();
    return usage_error(err, command->name, e.what());
  } catch (const Error& e) {
    out.flush();
    messages.finish();
    return runtime_error(err, e.what());
  } catch (const Xapian::Error& e) {
    out.flush();
    messages.finish();
    return runtime_error(err, e.get_description());
  } catch (const std::exception& e) {
    out.flush();
    messages.finish();
    return runtime_error(err, e.what());
  }
}

void add_model_option(OptionSet& options, const std::string& help) {
  options.value("--model", "DIR", help);
}

void add_reader_options(OptionSet& options, ReaderOptionSet which) {
  options.value("--split", "NAME", "use only JSON Lines records whose \"split\" is NAME");
  options.flag("--skip-malformed", "skip malformed JSON lines with a warning instead of failing");
  if (which.duplicate_ids) {
    options.flag("--allow-duplicate-ids",
                 "accept an id given twice (warning); the later document replaces the earlier "
                 "where ids are stored (default: error)");
  }
  options.value("--max-document-bytes", "N",
                "longest JSON line or text file read (default " +
                    std::to_string(internal::kDefaultMaxDocumentBytes) + ")");
  if (which.fields) {
    options.values("--field", "NAME[^B]",
                   "JSON Lines: the text is these fields, in order, each repeated B times "
                   "(default 1) so its words weigh B times as much (repeatable; default: the "
                   "\"text\" field alone; a missing field adds nothing)");
  }
}

internal::ReadOptions read_options(const ParsedArgs& args) {
  internal::ReadOptions options;
  options.split = args.value("split");
  options.skip_malformed = args.has("skip-malformed");
  options.allow_duplicate_ids = args.has("allow-duplicate-ids");
  options.max_document_bytes = static_cast<uint64_t>(
      args.integer("max-document-bytes", static_cast<int64_t>(internal::kDefaultMaxDocumentBytes),
                   1, int64_t{1} << 40));
  for (const std::string& field : args.values("field")) {
    options.fields.push_back(parse_text_field(field));
  }
  return options;
}

internal::TextField parse_text_field(const std::string& spec) {
  internal::TextField field;
  const size_t caret = spec.rfind('^');
  field.name = spec.substr(0, caret);
  if (caret != std::string::npos) {
    const std::string boost = spec.substr(caret + 1);
    const bool digits = !boost.empty() && boost.size() <= 3 &&
                        boost.find_first_not_of("0123456789") == std::string::npos;
    field.boost = digits ? std::stoi(boost) : 0;
    if (field.boost < 1 || field.boost > 100) {
      throw UsageError("--field " + spec + ": the boost after ^ must be a whole number from 1 to " +
                       "100 (the field's text is repeated that many times)");
    }
  }
  if (field.name.empty()) throw UsageError("--field " + spec + ": no field name before ^");
  return field;
}

void add_method_option(OptionSet& options, const std::string& more, const std::string& before) {
  std::string help = before;
  for (Method method : all_methods()) {
    help += (help.size() == before.size() ? "" : ", ") + method_name(method);
  }
  options.value("--method", "M", help + " " + more);
}

void add_k_option(OptionSet& options) {
  options.value("--k", "N",
                "kNN: neighbours that vote (default: the model's, chosen when training)");
  options.value("--knn-search", "S",
                "kNN: exact (every posting of every term) or two-step (candidates from the "
                "highest-weight postings, rescored by exact cosine) (default: the search the "
                "model was tuned with)");
}

void add_decision_options(OptionSet& options) {
  options.flag("--one-of",
               "assign the single best category (default for models trained on single-label "
               "data)");
  options.flag("--any-of",
               "assign every category that reaches its threshold (default for models trained "
               "on multi-label data; thresholds tuned per category at training time)");
  options.flag("--other",
               "one-of: choose only among categories that reach their threshold (Rocchio: "
               "documents inside the centroid's radius), so a document unlike every category "
               "gets none (default: on for models trained with unlabelled documents)");
  options.flag("--no-other", "one-of: choose among every category (the opposite of --other)");
  options.value("--min-score", "S", "never assign a category scoring below S, 0..1 (default 0)");
  options.value("--threshold", "T", "one threshold T for every category instead of the tuned ones");
}

ClassifyOptions classify_options(const ParsedArgs& args) {
  ClassifyOptions options;
  options.method = args.method();
  options.k = static_cast<int>(args.integer("k", 0, 1, 100000));  // 0 = the model's
  if (args.has("knn-search")) {
    options.knn_search = parse_knn_search(args.value("knn-search"));
    if (!options.knn_search) {
      throw UsageError("--knn-search takes exact or two-step, not '" + args.value("knn-search") +
                       "'");
    }
  }
  if (args.has("any-of") && args.has("one-of")) {
    throw UsageError("--any-of and --one-of exclude each other");
  }
  if (args.has("other") && args.has("no-other")) {
    throw UsageError("--other and --no-other exclude each other");
  }
  if (args.has("min-score") && args.has("threshold")) {
    throw UsageError(
        "--min-score and --threshold exclude each other (--threshold T is "
        "--min-score T without the tuned thresholds)");
  }
  if (args.has("any-of")) options.decision = Decision::kAnyOf;
  if (args.has("one-of")) options.decision = Decision::kOneOf;
  if (args.has("other")) options.other = true;
  if (args.has("no-other")) options.other = false;
  options.min_score = args.number("min-score", options.min_score, 0.0, 1.0);
  if (args.has("threshold")) {
    // One explicit threshold replaces the per-category ones tuned at training.
    options.min_score = args.number("threshold", options.min_score, 0.0, 1.0);
    options.tuned_thresholds = false;
  }
  return options;
}

void report_model_warnings(const internal::Categorizer& categorizer, Messages& messages) {
  for (const std::string& warning : categorizer.take_warnings()) messages.warning(warning);
}

void report_model_warnings(const CategoryIndexer& indexer, Messages& messages) {
  for (const std::string& warning : indexer.take_warnings()) messages.warning(warning);
}

internal::WarningCallback warn_to(Messages& messages) {
  return [&messages](const std::string& text) { messages.warning(text); };
}

void require_inputs(const ParsedArgs& args, const std::string& what) {
  if (args.positional().empty()) throw UsageError("no " + what + " given");
}

std::string json_output(const internal::Json& object) {
  internal::Json versioned = internal::Json::object();
  versioned["schema_version"] = kJsonSchemaVersion;
  versioned.update(object);
  return internal::dump_json(versioned);
}

internal::Json categories_json(const std::vector<Category>& categories) {
  internal::Json list = internal::Json::array();
  for (const Category& category : categories) {
    internal::Json entry = internal::Json::object();
    entry["name"] = category.name;
    entry["score"] = category.score;
    list.push_back(std::move(entry));
  }
  return list;
}

bool is_blank(const std::string& text) {
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f') return false;
  }
  return true;
}

}  // namespace autocat::cli
