// Output helpers of the `autocat` tool: number formatting, aligned tables,
// one-line messages on the error stream (warnings with a cap, progress), and
// a stopwatch.
//
// Thread safety: none; a Messages object belongs to one command run.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace autocat::cli {

// `value` with `decimals` digits after the point ("0.8889").
std::string format_fixed(double value, int decimals);
// `value` in the shortest of %g with 6 significant digits ("0.5", "1e-06", "20").
std::string format_number(double value);
// `text` with every line break and tab replaced by a space, so a message
// always stays on one line, and shown safely (internal::printable: other
// control bytes and invalid UTF-8 as \xHH). Every piece of input (ids,
// titles, data, category names, paths) printed as human text goes through it;
// --json output is escaped as JSON instead.
std::string one_line(const std::string& text);
// "a, b, c".
std::string join(const std::vector<std::string>& items, const std::string& separator = ", ");

// Prints rows as columns separated by two spaces, each cell through one_line(). Columns listed in
// `right_aligned` (0-based) are right-aligned (numbers); the last column is
// not padded.
void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows,
                 const std::vector<size_t>& right_aligned);

// Warnings and progress on the error stream, each one line prefixed
// "autocat: ". After `max_warnings` warnings the rest are only counted and
// finish() reports how many were not shown.
class Messages {
 public:
  explicit Messages(std::ostream& err, int max_warnings = 20);
  std::ostream& err() { return err_; }
  // "autocat: warning: TEXT".
  void warning(const std::string& text);
  // Writes "VERB N documents (R/s)" ("indexed 12000 documents (3400/s)"),
  // with a known `total` "VERB N/TOTAL documents (R/s, ETA Ss)", at most once
  // every two seconds of `elapsed_seconds`; nothing while progress is off.
  void progress(const std::string& verb, uint64_t done, double elapsed_seconds, uint64_t total = 0);
  // The last progress line, "VERB N documents (R/s)", when progress is on.
  void progress_done(const std::string& verb, uint64_t done, double elapsed_seconds);
  // A progress line made by the caller (phase_line()), throttled as
  // progress() is; `now` on the clock of the other calls.
  void progress_text(const std::string& line, double now);
  // A progress line written at once (phase_done_line()), when progress is on.
  void progress_note(const std::string& line, double now);
  // Progress lines on or off (default on; see apply_progress_options()).
  void set_progress(bool on) { progress_on_ = on; }
  bool progress_on() const { return progress_on_; }
  // Reports warnings that were not shown; call once at the end of a run.
  void finish();
  uint64_t warnings() const { return warnings_; }

 private:
  std::ostream& err_;
  int max_warnings_;
  uint64_t warnings_ = 0;
  double last_progress_ = 0;
  bool progress_on_ = true;
};

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Documents per second, never dividing by zero.
double rate(uint64_t count, double seconds);

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
