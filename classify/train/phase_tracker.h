// Training's phases as they run: reported to a TrainProgressCallback and
// recorded in TrainReport::phases.
//
// Thread safety: a PhaseTracker is not thread-safe; tune_settings() calls
// tune_progress()'s callback from one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "classify/train/thresholds.h"
#include "classify/train/train_report.h"

namespace autocat::internal {

using TrainClock = std::chrono::steady_clock;

inline double elapsed_seconds(TrainClock::time_point start) {
  return std::chrono::duration<double>(TrainClock::now() - start).count();
}

// Reports training's phases to a TrainProgressCallback and records each in
// TrainReport::phases as it ends. One phase at a time: begin() ends the one
// before. Not thread-safe; tune_settings() calls tune_progress()'s callback
// from one thread at a time.
class PhaseTracker {
 public:
  PhaseTracker(const TrainProgressCallback& on_progress, TrainReport* report)
      : on_progress_(on_progress), report_(report) {}

  void begin(const std::string& phase, const std::string& unit = {}, uint64_t total = 0,
             const std::string& detail = {}) {
    end();
    progress_ = TrainProgress();
    progress_.phase = phase;
    progress_.unit = unit;
    progress_.total = total;
    progress_.detail = detail;
    detail_ = detail;
    start_ = TrainClock::now();
    open_ = true;
    notify();
  }
  void advance(uint64_t done) {
    progress_.done = done;
    notify();
  }
  void advance(uint64_t done, uint64_t total, const std::string& detail) {
    progress_.total = total;
    progress_.detail = detail;
    advance(done);
  }
  // Ends the phase begun last, if not ended yet.
  void end() {
    if (!open_) return;
    open_ = false;
    progress_.finished = true;
    progress_.detail = detail_;
    notify();
    report_->phases.push_back(
        {progress_.phase, detail_, progress_.unit, progress_.done, progress_.seconds});
  }
  // A line to show once during the current phase (TrainProgress::note).
  void note(const std::string& text) {
    TrainProgress line = progress_;
    line.note = text;
    line.seconds = elapsed_seconds(start_);
    if (on_progress_) on_progress_(line);
  }
  // Progress of a tune_settings() run in this phase; each step is named
  // after `prefix`, if any.
  TuneProgressCallback tune_progress(const std::string& prefix = {}) {
    return [this, prefix](uint64_t done, uint64_t total, const std::string& step) {
      advance(done, total, prefix.empty() ? step : prefix + ": " + step);
    };
  }

 private:
  void notify() {
    progress_.seconds = elapsed_seconds(start_);
    if (on_progress_) on_progress_(progress_);
  }

  const TrainProgressCallback& on_progress_;
  TrainReport* report_;
  TrainProgress progress_;
  std::string detail_;  // the phase's own, as begun
  TrainClock::time_point start_;
  bool open_ = false;
};

}  // namespace autocat::internal
