#include "indexer/progress.h"

#include <unistd.h>

#include <cmath>

#include "autocat/error.h"
#include "indexer/output.h"

namespace autocat::cli {

const std::vector<OptionSpec>& progress_option_specs() {
  static const std::vector<OptionSpec> specs = {{"progress", false}, {"quiet", false}};
  return specs;
}

void apply_progress_options(const ParsedArgs& args, Messages& messages, bool stderr_is_terminal) {
  if (args.has("progress") && args.has("quiet")) {
    throw UsageError("--progress and --quiet exclude each other");
  }
  messages.set_progress(args.has("progress") || (stderr_is_terminal && !args.has("quiet")));
}

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

std::string count_of(uint64_t count, const std::string& unit) {
  const bool singular = count == 1 && !unit.empty() && unit.back() == 's';
  return std::to_string(count) + ' ' + (singular ? unit.substr(0, unit.size() - 1) : unit);
}

std::string progress_line(const std::string& verb, uint64_t done, uint64_t total,
                          double elapsed_seconds, const std::string& unit) {
  const double per_second = rate(done, elapsed_seconds);
  std::string line = verb + ' ';
  line += total != 0 ? std::to_string(done) + '/' + std::to_string(total) + ' ' + unit
                     : count_of(done, unit);
  line += " (" + format_fixed(per_second, per_second < 10 ? 1 : 0) + "/s";
  if (total > done && per_second > 0) {
    const double left = static_cast<double>(total - done) / per_second;
    line += ", ETA " + format_fixed(std::ceil(left), 0) + "s";
  }
  return line + ")";
}

std::string phase_line(const std::string& phase, const std::string& unit, uint64_t done,
                       uint64_t total, double phase_seconds, const std::string& detail) {
  std::string line = unit.empty() ? phase + " (" + format_fixed(phase_seconds, 0) + "s)"
                                  : progress_line(phase, done, total, phase_seconds, unit);
  return detail.empty() ? line : line + ": " + detail;
}

std::string phase_done_line(const std::string& phase, const std::string& unit, uint64_t done,
                            double seconds, const std::string& detail) {
  std::string line = phase;
  if (!detail.empty()) line += " (" + detail + ")";
  line += ": ";
  if (!unit.empty()) line += count_of(done, unit) + " in ";
  line += format_fixed(seconds, 1) + "s";
  if (unit == "documents" && done != 0) {
    line += " (" + format_fixed(rate(done, seconds), 0) + "/s)";
  }
  return line;
}

}  // namespace autocat::cli
