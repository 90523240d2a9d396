#include "indexer/output.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "classify/io/json_text.h"

namespace autocat::cli {

namespace {

// Progress lines are written at most this often.
constexpr double kProgressIntervalSeconds = 2.0;

// Display width of a UTF-8 string: one column per code point (good enough
// for category names and terms in Latin scripts).
size_t display_width(const std::string& text) {
  size_t width = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) ++width;
  }
  return width;
}

}  // namespace

std::string format_fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string format_number(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

std::string one_line(const std::string& text) {
  std::string line = text;
  std::replace_if(
      line.begin(), line.end(), [](char c) { return c == '\n' || c == '\r' || c == '\t'; }, ' ');
  return internal::printable(line);
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string joined;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i != 0) joined += separator;
    joined += items[i];
  }
  return joined;
}

void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& raw_rows,
                 const std::vector<size_t>& right_aligned) {
  std::vector<std::vector<std::string>> rows = raw_rows;
  for (auto& row : rows) {
    for (std::string& cell : row) cell = one_line(cell);
  }
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], display_width(row[c]));
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const bool right =
          std::find(right_aligned.begin(), right_aligned.end(), c) != right_aligned.end();
      const std::string padding(widths[c] - display_width(row[c]), ' ');
      if (c != 0) line += "  ";
      if (right) {
        line += padding + row[c];
      } else {
        line += row[c];
        if (c + 1 != row.size()) line += padding;
      }
    }
    out << line << '\n';
  }
}

Messages::Messages(std::ostream& err, int max_warnings) : err_(err), max_warnings_(max_warnings) {}

void Messages::warning(const std::string& text) {
  ++warnings_;
  if (warnings_ <= static_cast<uint64_t>(max_warnings_)) {
    err_ << "autocat: warning: " << one_line(text) << '\n' << std::flush;
  }
}

void Messages::progress(const std::string& verb, uint64_t done, double elapsed_seconds,
                        uint64_t total) {
  if (!progress_on_ || elapsed_seconds - last_progress_ < kProgressIntervalSeconds) return;
  last_progress_ = elapsed_seconds;
  err_ << progress_line(verb, done, total, elapsed_seconds) << '\n' << std::flush;
}

void Messages::progress_done(const std::string& verb, uint64_t done, double elapsed_seconds) {
  if (progress_on_) err_ << progress_line(verb, done, 0, elapsed_seconds) << '\n' << std::flush;
}

void Messages::progress_text(const std::string& line, double now) {
  if (!progress_on_ || now - last_progress_ < kProgressIntervalSeconds) return;
  last_progress_ = now;
  err_ << line << '\n' << std::flush;
}

void Messages::progress_note(const std::string& line, double now) {
  if (!progress_on_) return;
  last_progress_ = now;
  err_ << line << '\n' << std::flush;
}

void Messages::finish() {
  if (warnings_ > static_cast<uint64_t>(max_warnings_)) {
    err_ << "autocat: warning: " << (warnings_ - static_cast<uint64_t>(max_warnings_))
         << " more warnings not shown\n";
  }
}

double rate(uint64_t count, double seconds) {
  return static_cast<double>(count) / std::max(seconds, 1e-9);
}

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
