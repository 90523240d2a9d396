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

std::string progress_line(const std::string& verb, uint64_t done, uint64_t total,
                          double elapsed_seconds) {
  const double per_second = rate(done, elapsed_seconds);
  std::string line = verb + ' ' + std::to_string(done);
  if (total != 0) line += '/' + std::to_string(total);
  line += " documents (" + format_fixed(per_second, 0) + "/s";
  if (total > done && per_second > 0) {
    const double left = static_cast<double>(total - done) / per_second;
    line += ", ETA " + format_fixed(std::ceil(left), 0) + "s";
  }
  return line + ")";
}

}  // namespace autocat::cli
