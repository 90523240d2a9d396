#include "indexer/args.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <system_error>

#include "autocat/error.h"
#include "autocat/facets.h"
#include "indexer/output.h"

namespace autocat::cli {

namespace {

std::string single_quoted(const std::string& text) { return "'" + text + "'"; }

std::string method_choices() {
  std::string choices;
  for (Method method : all_methods()) {
    if (!choices.empty()) choices += ", ";
    choices += method_name(method);
  }
  return choices;
}

}  // namespace

bool ParsedArgs::has(const std::string& name) const { return options_.count(name) != 0; }

std::string ParsedArgs::value(const std::string& name, const std::string& fallback) const {
  auto it = options_.find(name);
  if (it == options_.end() || it->second.empty()) return fallback;
  return it->second.back();
}

std::vector<std::string> ParsedArgs::values(const std::string& name) const {
  auto it = options_.find(name);
  return it == options_.end() ? std::vector<std::string>() : it->second;
}

std::string ParsedArgs::required(const std::string& name) const {
  if (!has(name)) throw UsageError("--" + name + " is required");
  return value(name);
}

int64_t ParsedArgs::integer(const std::string& name, int64_t fallback, int64_t min,
                            int64_t max) const {
  if (!has(name)) return fallback;
  const std::string text = value(name);
  int64_t result = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, result);
  if (text.empty() || ec == std::errc::invalid_argument || ptr != end) {
    throw UsageError("--" + name + " needs a whole number, got " + single_quoted(text));
  }
  if (ec == std::errc::result_out_of_range || result < min || result > max) {
    throw UsageError("--" + name + " must be between " + std::to_string(min) + " and " +
                     std::to_string(max) + ", got " + text);
  }
  return result;
}

double ParsedArgs::number(const std::string& name, double fallback, double min, double max) const {
  if (!has(name)) return fallback;
  const std::string text = value(name);
  double result = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, result);
  if (text.empty() || ec == std::errc::invalid_argument || ptr != end || !std::isfinite(result)) {
    throw UsageError("--" + name + " needs a number, got " + single_quoted(text));
  }
  if (ec == std::errc::result_out_of_range || result < min || result > max) {
    throw UsageError("--" + name + " must be between " + format_number(min) + " and " +
                     format_number(max) + ", got " + text);
  }
  return result;
}

std::optional<Method> ParsedArgs::method(const std::string& name) const {
  if (!has(name)) return std::nullopt;
  const std::string text = value(name);
  std::optional<Method> method = parse_method(text);
  if (!method) {
    throw UsageError("unknown method " + single_quoted(text) + "; choose one of " +
                     method_choices());
  }
  return method;
}

namespace {

// Help entries: the option in 23 columns, the text wrapped at 80. A line
// break in the help starts a new line; its leading spaces are kept.
constexpr size_t kHelpColumn = 23;
constexpr size_t kHelpWidth = 80;

// Appends `text` (one line of help, no line breaks) at `column` of the
// current line, breaking lines before a word that would pass kHelpWidth;
// a continuation line is indented like `text` itself.
void append_wrapped(const std::string& text, size_t column, std::string* out) {
  const size_t first = std::min(text.find_first_not_of(' '), text.size());
  const std::string indent = std::string(kHelpColumn, ' ') + text.substr(0, first);
  *out += text.substr(0, first);
  column += first;
  bool line_empty = true;
  for (size_t start = first; start < text.size();) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line_empty && column + 1 + word.size() > kHelpWidth) {
      *out += "\n" + indent;
      column = indent.size();
    } else if (!line_empty) {
      *out += ' ';
      ++column;
    }
    *out += word;
    column += word.size();
    line_empty = false;
    start = end + 1;
  }
}

// "  --k N                help..." (or "  -h, --help ...").
std::string option_entry(const CLI::Option& option) {
  std::string names;
  for (const std::string& name : option.get_snames()) names += "-" + name + ", ";
  for (const std::string& name : option.get_lnames()) names += "--" + name + ", ";
  names.resize(names.size() - 2);
  std::string entry = "  " + names;
  if (!option.get_type_name().empty()) entry += " " + option.get_type_name();
  entry += entry.size() + 2 <= kHelpColumn ? std::string(kHelpColumn - entry.size(), ' ') : "  ";
  size_t column = entry.size();
  const std::string& help = option.get_description();
  for (size_t start = 0; start <= help.size();) {
    size_t end = help.find('\n', start);
    if (end == std::string::npos) end = help.size();
    if (start != 0) {
      entry += "\n" + std::string(kHelpColumn, ' ');
      column = kHelpColumn;
    }
    append_wrapped(help.substr(start, end - start), column, &entry);
    start = end + 1;
  }
  return entry + "\n";
}

// autocat's help: the usage and description, the options by group in the
// order they were declared, then the footer (examples).
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_help(const CLI::App* app, std::string, CLI::AppFormatMode) const override {
    std::vector<std::string> groups;
    for (const CLI::Option* option : app->get_options()) {
      const std::string& group = option->get_group();
      if (!group.empty() && std::find(groups.begin(), groups.end(), group) == groups.end()) {
        groups.push_back(group);
      }
    }
    std::string help = app->get_description();
    for (const std::string& group : groups) {
      help += "\n" + group + ":\n";
      for (const CLI::Option* option : app->get_options()) {
        if (option->get_group() == group) help += option_entry(*option);
      }
    }
    return help + app->get_footer();
  }
};

constexpr char kArguments[] = "ARGUMENTS";

}  // namespace

bool OptionSet::declared(const std::string& name) const {
  return app_.get_option_no_throw(name) != nullptr;
}

void OptionSet::flag(const std::string& name, const std::string& help) {
  if (declared(name)) return;
  app_.add_flag(name, help)->take_last()->group(group_);
}

void OptionSet::value(const std::string& name, const std::string& value_name,
                      const std::string& help) {
  if (declared(name)) return;
  // take_last: CLI11 keeps every value and parse_args() refuses a second.
  app_.add_option(name, help)->take_last()->type_name(value_name)->group(group_);
}

void OptionSet::values(const std::string& name, const std::string& value_name,
                       const std::string& help) {
  if (declared(name)) return;
  app_.add_option(name, help)->take_all()->type_name(value_name)->group(group_);
}

void start_app(CLI::App& app, const std::string& usage, const std::string& footer) {
  app.formatter(std::make_shared<HelpFormatter>());
  app.description(usage);
  app.footer(footer);
  app.set_help_flag();  // finish_app() adds it last, so the help lists it last
}

void finish_app(CLI::App& app) {
  app.set_help_flag("-h,--help", "show this help")->group("options");
  app.add_option(kArguments)
      ->expected(0, CLI::detail::expected_max_vector_size)
      ->take_all()
      ->allow_extra_args()
      ->group("");
}

std::vector<std::string> declared_names(void (*define)(OptionSet& options)) {
  CLI::App app;
  app.set_help_flag();
  OptionSet options(app);
  define(options);
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options()) names.push_back(option->get_lnames().front());
  return names;
}

ParsedArgs parse_args(CLI::App& app, const std::vector<std::string>& args) {
  for (const std::string& word : args) {
    if (word == "--") break;
    // CLI11 takes "--json=VALUE" for a flag, and the next word as the value
    // of "--k=": both are mistakes here.
    const size_t equals = word.find('=');
    if (word.rfind("--", 0) != 0 || equals == std::string::npos) continue;
    const std::string name = word.substr(0, equals);
    const CLI::Option* option = app.get_option_no_throw(name);
    if (option != nullptr && option->get_items_expected_max() == 0) {
      throw UsageError(name + " takes no value");
    }
    if (option != nullptr && equals + 1 == word.size()) throw UsageError(name + " needs a value");
  }
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them backwards
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    throw;
  } catch (const CLI::ExtrasError&) {
    std::string word = app.remaining().empty() ? std::string() : app.remaining().front();
    if (word.rfind("--", 0) == 0) word = word.substr(0, word.find('='));
    throw UsageError("unknown option " + single_quoted(word));
  } catch (const CLI::ArgumentMismatch&) {
    // Only a valued option last on the line lacks its value: CLI11 takes
    // the next word, whatever it is, as the value.
    std::string word = args.empty() ? std::string() : args.back();
    throw UsageError(word.substr(0, word.find('=')) + " needs a value");
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  ParsedArgs parsed;
  for (const CLI::Option* option : app.get_options()) {
    if (option->count() == 0) continue;
    if (!option->nonpositional()) {
      parsed.positional_ = option->results();
      continue;
    }
    const std::string name = option->get_lnames().front();
    const std::string dashed = "--" + name;
    const bool takes_value = option->get_items_expected_max() != 0;
    if (option->count() > 1 &&
        option->get_multi_option_policy() != CLI::MultiOptionPolicy::TakeAll) {
      throw UsageError(dashed + " given more than once");
    }
    std::vector<std::string>& slot = parsed.options_[name];
    for (const std::string& result : option->results()) {
      if (!takes_value) {
        slot.emplace_back();  // a flag: given
        continue;
      }
      if (result.rfind("--", 0) == 0) throw UsageError(dashed + " needs a value");
      slot.push_back(result);
    }
  }
  return parsed;
}

bool wants_help(const std::vector<std::string>& args) {
  for (const std::string& word : args) {
    if (word == "--") return false;
    if (word == "--help" || word == "-h") return true;
  }
  return false;
}

FeatureSelection parse_selection(const std::string& name) {
  std::optional<FeatureSelection> selection = parse_feature_selection(name);
  if (!selection || *selection == FeatureSelection::kNone) {
    throw UsageError("unknown selection measure " + single_quoted(name) +
                     "; choose one of mi, chi2, df, kl");
  }
  return *selection;
}

void check_prefix(const std::string& prefix) {
  try {
    check_category_prefix(prefix);
  } catch (const InvalidArgumentError& e) {
    throw UsageError(std::string("--prefix: ") + e.what());
  }
}

}  // namespace autocat::cli
