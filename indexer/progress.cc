#include "indexer/progress.h"

#include <unistd.h>

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

}  // namespace autocat::cli
