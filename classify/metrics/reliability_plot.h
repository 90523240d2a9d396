// A reliability diagram as an SVG picture of the top label (each
// document's best score: is that category right?): for each probability
// bin, a bar at the share observed, drawn against the diagonal a calibrated
// method follows, with its document count written under it; the top
// label's curve (share observed against mean prediction per bin) and that
// of every (document, category) pair pooled over it, and a legend under
// the plot.
//
// Thread safety: free functions over immutable data.
#pragma once

#include <string>

#include "classify/metrics/evaluation.h"

namespace autocat::internal {

std::string reliability_svg(const CalibrationReport& calibration, const std::string& title);

// The file `eval --plot FILE` draws the reliability diagram in: FILE's name
// with its extension replaced by "-reliability.svg".
std::string reliability_plot_path(const std::string& plot_path);

// Writes the picture atomically; throws IOError naming `path`.
void write_reliability_plot(const std::string& path, const CalibrationReport& calibration,
                            const std::string& title);

}  // namespace autocat::internal
