// Progress of long commands (train, index, recategorize) on the error
// stream: count, rate and, when the total is known, the time left. Shown when
// stderr is a terminal, or always with --progress; --quiet hides it. Standard
// output (the summary, --json) is never touched.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "indexer/args.h"

namespace autocat::cli {

class Messages;

// --progress and --quiet, for with_options().
const std::vector<OptionSpec>& progress_option_specs();
// Turns `messages`' progress lines on or off as the options say (default:
// when `stderr_is_terminal`). Throws UsageError for both options at once.
void apply_progress_options(const ParsedArgs& args, Messages& messages, bool stderr_is_terminal);
// Whether the process's stderr is a terminal.
bool stderr_is_terminal();

// "1 document", "2 documents": `count` of a plural `unit`.
std::string count_of(uint64_t count, const std::string& unit);

// One progress line: "indexed 12000 documents (3400/s)", or with a known
// total "recategorized 3000/9000 documents (1500/s, ETA 4s)"; `unit` names
// what is counted. Rates under 10 a second keep one decimal ("0.4/s").
std::string progress_line(const std::string& verb, uint64_t done, uint64_t total,
                          double elapsed_seconds, const std::string& unit = "documents");

// Progress of a command that runs in phases (train). While a phase runs:
// "cross-validate 7/26 fits (0.4/s, ETA 48s): svm, fold 2 of 5" (with a
// count: `unit` not empty), else "write (12s)". When it ends:
// "cross-validate: 26 fits in 31.2s", "write: 0.8s", with the rate for
// documents; `detail` in parentheses after the phase.
std::string phase_line(const std::string& phase, const std::string& unit, uint64_t done,
                       uint64_t total, double phase_seconds, const std::string& detail);
std::string phase_done_line(const std::string& phase, const std::string& unit, uint64_t done,
                            double seconds, const std::string& detail);

}  // namespace autocat::cli
