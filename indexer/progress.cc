#include "indexer/progress.h"

#include <unistd.h>

#include "autocat/error.h"
#include "indexer/output.h"

namespace autocat::cli {

void add_progress_options(OptionSet& options, const std::string& help) {
  options.flag("--progress", help + " (default: when stderr is a terminal)");
  options.flag("--quiet", "no progress lines");
}

void apply_progress_options(const ParsedArgs& args, Messages& messages, bool stderr_is_terminal) {
  if (args.has("progress") && args.has("quiet")) {
    throw UsageError("--progress and --quiet exclude each other");
  }
  messages.set_progress(args.has("progress") || (stderr_is_terminal && !args.has("quiet")));
}

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

}  // namespace autocat::cli
