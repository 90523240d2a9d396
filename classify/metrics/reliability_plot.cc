#include "classify/metrics/reliability_plot.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <utility>
#include <vector>

#include "classify/io/atomic_file.h"
#include "classify/metrics/confusion_plot.h"

namespace autocat::internal {
namespace {

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  return buffer;
}

}  // namespace

std::string reliability_svg(const CalibrationReport& calibration, const std::string& title) {
  const Reliability& reliability = calibration.top_label();
  const Reliability& pooled = calibration.pooled();
  // The legend under the plot: a swatch, then what it marks.
  enum class Swatch { kBar, kTopCurve, kPooledCurve, kDiagonal };
  const std::vector<std::pair<Swatch, std::string>> legend = {
      {Swatch::kBar, "top label: share right per bin (numbers under: documents)"},
      {Swatch::kTopCurve, "top label: share right against mean prediction"},
      {Swatch::kPooledCurve, "every (document, category) pair pooled: the same"},
      {Swatch::kDiagonal, "calibrated: observed = predicted"}};
  constexpr double kLeft = 60, kTop = 50, kSize = 400, kLegendLine = 16, kSwatch = 18;
  const double legend_top = kTop + kSize + 62;
  const double bottom = 62 + kLegendLine * static_cast<double>(legend.size()) + 8;
  const std::string summary = "top label: expected calibration error " +
                              number(reliability.expected_calibration_error() * 100) + "% over " +
                              std::to_string(reliability.pairs()) + " documents; all " +
                              std::to_string(pooled.pairs()) + " pairs " +
                              number(pooled.expected_calibration_error() * 100) + "%";
  // The canvas is wide enough for the left-aligned title, summary and legend
  // too (about 0.6 em a character), so no viewer cuts them off.
  const auto text_width = [](const std::string& text, double font_size) {
    return 0.6 * font_size * static_cast<double>(text.size());
  };
  double width = std::max({kLeft + kSize + 30, kLeft + text_width(title, 14) + 20,
                           kLeft + text_width(summary, 11) + 20});
  for (const auto& entry : legend) {
    width = std::max(width, kLeft + kSwatch + 6 + text_width(entry.second, 11) + 20);
  }
  const double height = kTop + kSize + bottom;
  const auto x_of = [&](double p) { return kLeft + p * kSize; };
  const auto y_of = [&](double p) { return kTop + (1.0 - p) * kSize; };
  // A curve through each non-empty bin's (mean prediction, share observed).
  const auto curve = [&](const Reliability& r, const char* colour, const char* what) {
    std::string points, markers;
    for (const Reliability::Bin& bin : r.bins()) {
      if (bin.pairs == 0) continue;
      const std::string x = number(x_of(bin.mean_predicted)), y = number(y_of(bin.observed));
      points += x + "," + y + " ";
      markers += "<circle cx=\"" + x + "\" cy=\"" + y + "\" r=\"2.5\" fill=\"" + colour +
                 "\"><title>" + what + ": predicted " + number(bin.mean_predicted) + ", observed " +
                 number(bin.observed) + "</title></circle>\n";
    }
    if (points.empty()) return std::string();
    points.pop_back();
    return "<polyline points=\"" + points + "\" fill=\"none\" stroke=\"" + colour +
           "\" stroke-width=\"1.5\"><title>" + what +
           ": observed against mean prediction</title></polyline>\n" + markers;
  };
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + number(width) +
                    "\" height=\"" + number(height) + "\" viewBox=\"0 0 " + number(width) + " " +
                    number(height) + "\" font-family=\"sans-serif\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += "<text x=\"" + number(kLeft) + "\" y=\"24\" font-size=\"14\">" + xml_escape(title) +
         "</text>\n";
  svg += "<text x=\"" + number(kLeft) + "\" y=\"40\" font-size=\"11\">" + summary + "</text>\n";
  svg += "<rect x=\"" + number(kLeft) + "\" y=\"" + number(kTop) + "\" width=\"" + number(kSize) +
         "\" height=\"" + number(kSize) + "\" fill=\"none\" stroke=\"black\"/>\n";
  svg += "<line x1=\"" + number(x_of(0)) + "\" y1=\"" + number(y_of(0)) + "\" x2=\"" +
         number(x_of(1)) + "\" y2=\"" + number(y_of(1)) +
         "\" stroke=\"gray\" stroke-dasharray=\"4 4\"/>\n";
  for (int tick = 0; tick <= 10; tick += 2) {
    const double p = tick / 10.0;
    svg += "<text x=\"" + number(x_of(p)) + "\" y=\"" + number(kTop + kSize + 14) +
           "\" font-size=\"10\" text-anchor=\"middle\">" + number(p) + "</text>\n";
    svg += "<text x=\"" + number(kLeft - 6) + "\" y=\"" + number(y_of(p) + 4) +
           "\" font-size=\"10\" text-anchor=\"end\">" + number(p) + "</text>\n";
  }
  for (const Reliability::Bin& bin : reliability.bins()) {
    if (bin.pairs == 0) continue;
    const double x = x_of(bin.lower) + 2, w = (bin.upper - bin.lower) * kSize - 4;
    svg += "<rect x=\"" + number(x) + "\" y=\"" + number(y_of(bin.observed)) + "\" width=\"" +
           number(w) + "\" height=\"" + number(y_of(0) - y_of(bin.observed)) +
           "\" fill=\"steelblue\" fill-opacity=\"0.45\"><title>predicted " +
           number(bin.mean_predicted) + ", observed " + number(bin.observed) + ", " +
           std::to_string(bin.pairs) + " documents</title></rect>\n";
    svg += "<text x=\"" + number(x + w / 2) + "\" y=\"" + number(kTop + kSize + 28) +
           "\" font-size=\"8\" text-anchor=\"middle\">" + std::to_string(bin.pairs) + "</text>\n";
  }
  svg += curve(pooled, "darkorange", "all pairs");
  svg += curve(reliability, "navy", "top label");
  svg += "<text x=\"" + number(kLeft + kSize / 2) + "\" y=\"" + number(kTop + kSize + 46) +
         "\" font-size=\"12\" text-anchor=\"middle\">top-label probability</text>\n";
  for (size_t i = 0; i < legend.size(); ++i) {
    const double y = legend_top + kLegendLine * static_cast<double>(i);
    const double x = kLeft, mid = y - 4;
    switch (legend[i].first) {
      case Swatch::kBar:
        svg += "<rect x=\"" + number(x) + "\" y=\"" + number(y - 9) + "\" width=\"" +
               number(kSwatch) + "\" height=\"10\" fill=\"steelblue\" fill-opacity=\"0.45\"/>\n";
        break;
      case Swatch::kTopCurve:
      case Swatch::kPooledCurve: {
        const char* colour = legend[i].first == Swatch::kTopCurve ? "navy" : "darkorange";
        svg += "<line x1=\"" + number(x) + "\" y1=\"" + number(mid) + "\" x2=\"" +
               number(x + kSwatch) + "\" y2=\"" + number(mid) + "\" stroke=\"" + colour +
               "\" stroke-width=\"1.5\"/>\n";
        svg += "<circle cx=\"" + number(x + kSwatch / 2) + "\" cy=\"" + number(mid) +
               "\" r=\"2.5\" fill=\"" + colour + "\"/>\n";
        break;
      }
      case Swatch::kDiagonal:
        svg += "<line x1=\"" + number(x) + "\" y1=\"" + number(mid) + "\" x2=\"" +
               number(x + kSwatch) + "\" y2=\"" + number(mid) +
               "\" stroke=\"gray\" stroke-dasharray=\"4 4\"/>\n";
        break;
    }
    svg += "<text x=\"" + number(x + kSwatch + 6) + "\" y=\"" + number(y) + "\" font-size=\"11\">" +
           legend[i].second + "</text>\n";
  }
  svg += "</svg>\n";
  return svg;
}

std::string reliability_plot_path(const std::string& plot_path) {
  std::filesystem::path path(plot_path);
  path.replace_extension();
  return path.string() + "-reliability.svg";
}

void write_reliability_plot(const std::string& path, const CalibrationReport& calibration,
                            const std::string& title) {
  write_file_atomically(path, {reliability_svg(calibration, title)}, "the reliability plot");
}

}  // namespace autocat::internal
