#include "indexer/args.h"

#include <charconv>
#include <cmath>
#include <system_error>

#include "autocat/error.h"
#include "autocat/facets.h"
#include "indexer/output.h"

namespace autocat::cli {

namespace {

std::string quoted(const std::string& text) { return "'" + text + "'"; }

const OptionSpec* find_spec(const std::vector<OptionSpec>& specs, const std::string& name) {
  for (const OptionSpec& spec : specs) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

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
    throw UsageError("--" + name + " needs a whole number, got " + quoted(text));
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
    throw UsageError("--" + name + " needs a number, got " + quoted(text));
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
    throw UsageError("unknown method " + quoted(text) + "; choose one of " + method_choices());
  }
  return method;
}

ParsedArgs parse_args(const std::vector<std::string>& args, const std::vector<OptionSpec>& specs) {
  ParsedArgs parsed;
  bool options_ended = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (options_ended || word == "-" || word.empty() || word[0] != '-') {
      parsed.positional_.push_back(word);
      continue;
    }
    if (word == "--") {
      options_ended = true;
      continue;
    }
    if (word.size() < 3 || word[1] != '-') {
      throw UsageError("unknown option " + quoted(word));
    }
    std::string name = word.substr(2);
    std::optional<std::string> inline_value;
    const size_t equals = name.find('=');
    if (equals != std::string::npos) {
      inline_value = name.substr(equals + 1);
      name.resize(equals);
    }
    const OptionSpec* spec = find_spec(specs, name);
    if (spec == nullptr) throw UsageError("unknown option '--" + name + "'");
    std::vector<std::string>& slot = parsed.options_[name];
    if (!slot.empty() && !spec->repeatable) {
      throw UsageError("--" + name + " given more than once");
    }
    if (!spec->takes_value) {
      if (inline_value) throw UsageError("--" + name + " takes no value");
      slot.emplace_back();
      continue;
    }
    if (inline_value) {
      slot.push_back(*inline_value);
      continue;
    }
    if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0) {
      throw UsageError("--" + name + " needs a value");
    }
    slot.push_back(args[++i]);
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
    throw UsageError("unknown selection measure " + quoted(name) +
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
