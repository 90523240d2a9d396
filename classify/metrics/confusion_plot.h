// Pictures of an evaluation: the confusion matrix as an SVG heatmap, or a
// self-contained HTML page (no external assets, no JavaScript) with that
// heatmap and the per-category metrics. Rows are true categories, columns
// the assigned category plus "(none)"; a cell's colour is its share of the
// row, its count is written in it (empty cells are 0). Cells and fonts shrink
// with the number of categories and column labels are slanted, so 90+
// categories stay legible (the picture is vector: zoom in).
//
// Thread safety: free functions over immutable data.
#pragma once

#include <optional>
#include <string>

#include "classify/metrics/evaluation.h"

namespace autocat::internal {

enum class PlotFormat { kSvg, kHtml };

// The format a file name asks for: ".svg", or ".html" / ".htm" (any case);
// nullopt for anything else.
std::optional<PlotFormat> plot_format_for(const std::string& path);

// `title` is drawn above the matrix (e.g. the method and its accuracy).
std::string confusion_svg(const Evaluation& evaluation, const std::string& title);
std::string confusion_html(const Evaluation& evaluation, const std::string& title);

// Writes the plot in the format `path`'s name asks for. The file appears
// complete or not at all: it is written beside `path` under a temporary name
// and renamed. Throws InvalidArgumentError for a name that is neither .svg
// nor .html/.htm, IOError naming `path` if it cannot be written.
void write_confusion_plot(const std::string& path, const Evaluation& evaluation,
                          const std::string& title);

// `text` with &, <, >, " and ' escaped for XML and HTML; control characters
// and bytes that are not UTF-8 become U+FFFD (XML 1.0 does not allow them).
std::string xml_escape(const std::string& text);

}  // namespace autocat::internal
