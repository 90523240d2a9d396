// Progress of long commands (train, index, recategorize) on the error
// stream: count, rate and, when the total is known, the time left. Shown when
// stderr is a terminal, or always with --progress; --quiet hides it. Standard
// output (the summary, --json) is never touched.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "indexer/args.h"
#include "indexer/output.h"

namespace autocat::cli {

class Messages;

// --progress (`help` says what it prints) and --quiet.
void add_progress_options(OptionSet& options, const std::string& help);
// Turns `messages`' progress lines on or off as the options say (default:
// when `stderr_is_terminal`). Throws UsageError for both options at once.
void apply_progress_options(const ParsedArgs& args, Messages& messages, bool stderr_is_terminal);
// Whether the process's stderr is a terminal.
bool stderr_is_terminal();

}  // namespace autocat::cli
