#include "classify/metrics/confusion_plot.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "autocat/error.h"
#include "classify/io/atomic_file.h"

namespace autocat::internal {
namespace {

namespace fs = std::filesystem;

// Longer names are cut on the axes (the cell tooltips keep them whole).
constexpr size_t kMaxLabelChars = 40;
// Roughly how wide a character is, as a share of the font size.
constexpr double kCharWidth = 0.6;
constexpr double kSlant = 0.7071;  // sin 45 degrees: column labels are slanted 45 degrees

std::string lower(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Length of the UTF-8 sequence starting at text[i], or 0 if it is not valid
// UTF-8 (overlong forms, surrogates and code points past U+10FFFF included).
size_t utf8_sequence_length(const std::string& text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  size_t length = 0;
  uint32_t code = 0;
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
    code = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    code = lead & 0x0f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    code = lead & 0x07;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3f);
  }
  if ((length == 3 && (code < 0x800 || (code >= 0xd800 && code <= 0xdfff))) ||
      (length == 4 && (code < 0x10000 || code > 0x10ffff))) {
    return 0;
  }
  return length;
}

size_t code_points(const std::string& text) {
  size_t count = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t length = utf8_sequence_length(text, i);
    i += length == 0 ? 1 : length;
    ++count;
  }
  return count;
}

// `text` cut to kMaxLabelChars code points, with an ellipsis if it was cut.
std::string short_label(const std::string& text) {
  size_t i = 0, count = 0;
  while (i < text.size() && count < kMaxLabelChars) {
    const size_t length = utf8_sequence_length(text, i);
    i += length == 0 ? 1 : length;
    ++count;
  }
  return i >= text.size() ? text : text.substr(0, i) + "\u2026";
}

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", value);
  return buffer;
}

std::string percent(double share) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", 100.0 * share);
  return buffer;
}

std::string fixed4(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4f", value);
  return buffer;
}

// White through mid blue to dark blue as the share goes from 0 to 1.
std::string colour(double share) {
  struct Stop {
    double at, r, g, b;
  };
  static const Stop kStops[] = {{0.0, 247, 251, 255}, {0.5, 107, 174, 214}, {1.0, 8, 48, 107}};
  share = std::clamp(share, 0.0, 1.0);
  const Stop& low = share <= 0.5 ? kStops[0] : kStops[1];
  const Stop& high = share <= 0.5 ? kStops[1] : kStops[2];
  const double t = (share - low.at) / (high.at - low.at);
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x",
                static_cast<int>(std::lround(low.r + t * (high.r - low.r))),
                static_cast<int>(std::lround(low.g + t * (high.g - low.g))),
                static_cast<int>(std::lround(low.b + t * (high.b - low.b))));
  return buffer;
}

// Sizes of the picture, from the number of categories and the label lengths.
struct Layout {
  double cell = 0, count_font = 0, label_font = 0;
  double left = 0, top = 0, width = 0, height = 0;
  double grid_width = 0, grid_height = 0;
};

constexpr double kPad = 12, kTitleFont = 16, kNoteFont = 11;

Layout layout(const Evaluation& evaluation) {
  const size_t rows = evaluation.categories().size();
  const size_t columns = rows + 1;
  Layout l;
  // About 760 px of cells, but no cell under 14 px (the picture grows
  // instead) nor over 44 px.
  l.cell = std::clamp(std::floor(760.0 / static_cast<double>(columns)), 14.0, 44.0);
  uint64_t largest = 1;
  for (const auto& row : evaluation.confusion()) {
    for (uint64_t count : row) largest = std::max(largest, count);
  }
  const double digits = static_cast<double>(std::to_string(largest).size());
  l.count_font = std::min(l.cell * 0.42, (l.cell - 2) / (kCharWidth * digits));
  l.label_font = std::clamp(l.cell * 0.55, 7.0, 13.0);
  size_t longest = std::string("(none)").size();
  for (const std::string& name : evaluation.categories()) {
    longest = std::max(longest, code_points(short_label(name)));
  }
  const double label_width = static_cast<double>(longest) * l.label_font * kCharWidth;
  l.grid_width = l.cell * static_cast<double>(columns);
  l.grid_height = l.cell * static_cast<double>(rows);
  // Left: the axis title, then the row labels. Top: title, note, axis title,
  // then the slanted column labels.
  l.left = kPad + 2 * l.label_font + label_width + 6;
  l.top = kPad + kTitleFont + 6 + kNoteFont + 8 + l.label_font + 6 + label_width * kSlant + 6;
  constexpr double kLegendWidth = 12 + 16 + 44;  // bar, gap, "100%"
  const double right = std::max(label_width * kSlant, kLegendWidth) + kPad;
  l.width = std::ceil(l.left + l.grid_width + right);
  l.height = std::ceil(l.top + l.grid_height + kPad);
  return l;
}

// The <svg> element; `standalone` adds the XML declaration.
std::string svg(const Evaluation& evaluation, const std::string& title, bool standalone) {
  const std::vector<std::string>& names = evaluation.categories();
  const auto& confusion = evaluation.confusion();
  const size_t rows = names.size();
  Layout l = layout(evaluation);
  const std::string note =
      "rows: true category; columns: assigned category; colour: share of the row; "
      "empty cells: 0";
  const double text_width =
      std::max(static_cast<double>(code_points(title)) * kTitleFont * kCharWidth,
               static_cast<double>(note.size()) * kNoteFont * kCharWidth);
  l.width = std::max(l.width, std::ceil(2 * kPad + text_width));

  std::string out;
  out.reserve(4096 + rows * rows * 32);
  if (standalone) out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + number(l.width) + "\" height=\"" +
         number(l.height) + "\" viewBox=\"0 0 " + number(l.width) + " " + number(l.height) +
         "\" font-family=\"sans-serif\">\n";
  out += "<title>" + xml_escape(title) + "</title>\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  double y = kPad + kTitleFont;
  out += "<text x=\"" + number(kPad) + "\" y=\"" + number(y) + "\" font-size=\"" +
         number(kTitleFont) + "\" font-weight=\"bold\">" + xml_escape(title) + "</text>\n";
  y += 6 + kNoteFont;
  out += "<text x=\"" + number(kPad) + "\" y=\"" + number(y) + "\" font-size=\"" +
         number(kNoteFont) + "\" fill=\"#555555\">" + xml_escape(note) + "</text>\n";
  y += 8 + l.label_font;
  out += "<text x=\"" + number(l.left + l.grid_width / 2) + "\" y=\"" + number(y) +
         "\" font-size=\"" + number(l.label_font) +
         "\" font-style=\"italic\" text-anchor=\"middle\">assigned category</text>\n";
  const double axis_x = kPad + l.label_font;
  const double axis_y = l.top + l.grid_height / 2;
  out += "<text x=\"" + number(axis_x) + "\" y=\"" + number(axis_y) + "\" font-size=\"" +
         number(l.label_font) +
         "\" font-style=\"italic\" text-anchor=\"middle\" transform=\"rotate(-90 " +
         number(axis_x) + " " + number(axis_y) + ")\">true category</text>\n";

  // Column labels, slanted up to the right from the top of their column.
  out += "<g font-size=\"" + number(l.label_font) + "\">\n";
  for (size_t c = 0; c <= rows; ++c) {
    const double x = l.left + l.cell * (static_cast<double>(c) + 0.5);
    const double label_y = l.top - 5;
    const std::string name = c < rows ? names[c] : "(none)";
    out += "<text x=\"" + number(x) + "\" y=\"" + number(label_y) + "\" transform=\"rotate(-45 " +
           number(x) + " " + number(label_y) + ")\"" +
           (c < rows ? std::string() : std::string(" font-style=\"italic\"")) + ">" +
           xml_escape(short_label(name)) + "</text>\n";
  }
  // Row labels, right-aligned against the grid.
  for (size_t r = 0; r < rows; ++r) {
    const double label_y = l.top + l.cell * (static_cast<double>(r) + 0.5);
    out += "<text x=\"" + number(l.left - 6) + "\" y=\"" + number(label_y) +
           "\" dy=\"0.35em\" text-anchor=\"end\">" + xml_escape(short_label(names[r])) +
           "</text>\n";
  }
  out += "</g>\n";

  // Cells: only those with documents (the rest stay white).
  out += "<g font-size=\"" + number(l.count_font) + "\" text-anchor=\"middle\">\n";
  for (size_t r = 0; r < rows; ++r) {
    uint64_t row_total = 0;
    for (uint64_t count : confusion[r]) row_total += count;
    for (size_t c = 0; c <= rows; ++c) {
      const uint64_t count = confusion[r][c];
      if (count == 0) continue;
      const double share = static_cast<double>(count) / static_cast<double>(row_total);
      const double x = l.left + l.cell * static_cast<double>(c);
      const double cell_y = l.top + l.cell * static_cast<double>(r);
      const std::string assigned = c < rows ? names[c] : "(none)";
      out += "<rect x=\"" + number(x) + "\" y=\"" + number(cell_y) + "\" width=\"" +
             number(l.cell) + "\" height=\"" + number(l.cell) + "\" fill=\"" + colour(share) +
             "\"><title>" + xml_escape(names[r]) + " \u2192 " + xml_escape(assigned) + ": " +
             std::to_string(count) + " (" + percent(share) + " of the row)</title></rect>\n";
      out += "<text x=\"" + number(x + l.cell / 2) + "\" y=\"" + number(cell_y + l.cell / 2) +
             "\" dy=\"0.35em\" fill=\"" + (share > 0.5 ? "#ffffff" : "#000000") + "\">" +
             std::to_string(count) + "</text>\n";
    }
  }
  out += "</g>\n";

  // Grid lines, the diagonal outlined, the "(none)" column set apart.
  std::string grid;
  for (size_t r = 0; r <= rows; ++r) {
    grid += "M" + number(l.left) + " " + number(l.top + l.cell * static_cast<double>(r)) + "h" +
            number(l.grid_width);
  }
  for (size_t c = 0; c <= rows + 1; ++c) {
    grid += "M" + number(l.left + l.cell * static_cast<double>(c)) + " " + number(l.top) + "v" +
            number(l.grid_height);
  }
  out += "<path d=\"" + grid + "\" fill=\"none\" stroke=\"#d0d0d0\" stroke-width=\"0.5\"/>\n";
  std::string diagonal;
  for (size_t r = 0; r < rows; ++r) {
    diagonal += "M" + number(l.left + l.cell * static_cast<double>(r)) + " " +
                number(l.top + l.cell * static_cast<double>(r)) + "h" + number(l.cell) + "v" +
                number(l.cell) + "h-" + number(l.cell) + "z";
  }
  if (!diagonal.empty()) {
    out += "<path d=\"" + diagonal + "\" fill=\"none\" stroke=\"#333333\" stroke-width=\"1\"/>\n";
  }
  const double none_x = l.left + l.cell * static_cast<double>(rows);
  out += "<path d=\"M" + number(none_x) + " " + number(l.top) + "v" + number(l.grid_height) +
         "\" stroke=\"#333333\" stroke-width=\"1.5\"/>\n";

  // Legend: the colour scale of row shares.
  const double legend_x = l.left + l.grid_width + 16;
  const double legend_height = std::min(std::max(l.grid_height, 60.0), 200.0);
  out += "<defs><linearGradient id=\"share\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
  for (double at : {0.0, 0.5, 1.0}) {
    out += "<stop offset=\"" + number(at * 100) + "%\" stop-color=\"" + colour(at) + "\"/>";
  }
  out += "</linearGradient></defs>\n";
  out += "<rect x=\"" + number(legend_x) + "\" y=\"" + number(l.top) + "\" width=\"12\" height=\"" +
         number(legend_height) +
         "\" fill=\"url(#share)\" stroke=\"#999999\" stroke-width=\"0.5\"/>\n";
  out += "<g font-size=\"10\">";
  out += "<text x=\"" + number(legend_x + 16) + "\" y=\"" + number(l.top + 8) + "\">100%</text>";
  out += "<text x=\"" + number(legend_x + 16) + "\" y=\"" + number(l.top + legend_height) +
         "\">0%</text>";
  out += "</g>\n";
  out += "</svg>\n";
  return out;
}

}  // namespace

std::optional<PlotFormat> plot_format_for(const std::string& path) {
  const std::string name = lower(fs::path(path).filename().string());
  if (ends_with(name, ".svg") && name.size() > 4) return PlotFormat::kSvg;
  if ((ends_with(name, ".html") && name.size() > 5) || (ends_with(name, ".htm") && name.size() > 4))
    return PlotFormat::kHtml;
  return std::nullopt;
}

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      out += "\uFFFD";
      ++i;
      continue;
    }
    if (length > 1) {
      out.append(text, i, length);
      i += length;
      continue;
    }
    const char c = text[i++];
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if ((static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') ||
            c == 0x7f) {
          out += "\uFFFD";
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string confusion_svg(const Evaluation& evaluation, const std::string& title) {
  return svg(evaluation, title, /*standalone=*/true);
}

std::string confusion_html(const Evaluation& evaluation, const std::string& title) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
      xml_escape(title) +
      "</title>\n<style>\n"
      "body { font-family: sans-serif; margin: 1.5em; color: #222222; }\n"
      ".plot { overflow: auto; }\n"
      "table { border-collapse: collapse; }\n"
      "th, td { padding: 2px 10px; text-align: right; border-bottom: 1px solid #e0e0e0; }\n"
      "th:first-child, td:first-child { text-align: left; }\n"
      "</style>\n</head>\n<body>\n<h1>" +
      xml_escape(title) + "</h1>\n";
  out += "<p>" + std::to_string(evaluation.documents()) + " documents; accuracy " +
         fixed4(evaluation.accuracy()) + ", micro-F1 " + fixed4(evaluation.micro_f1()) +
         ", macro-F1 " + fixed4(evaluation.macro_f1()) + ".</p>\n";
  out += "<div class=\"plot\">\n" + svg(evaluation, title, /*standalone=*/false) + "</div>\n";
  out +=
      "<h2>Per category</h2>\n<table>\n<tr><th>category</th><th>precision</th><th>recall</th>"
      "<th>F1</th><th>support</th><th>TP</th><th>FP</th><th>FN</th></tr>\n";
  for (const CategoryMetrics& m : evaluation.per_category()) {
    out += "<tr><td>" + xml_escape(m.name) + "</td><td>" + fixed4(m.precision) + "</td><td>" +
           fixed4(m.recall) + "</td><td>" + fixed4(m.f1) + "</td><td>" + std::to_string(m.support) +
           "</td><td>" + std::to_string(m.true_positives) + "</td><td>" +
           std::to_string(m.false_positives) + "</td><td>" + std::to_string(m.false_negatives) +
           "</td></tr>\n";
  }
  out += "</table>\n</body>\n</html>\n";
  return out;
}

void write_confusion_plot(const std::string& path, const Evaluation& evaluation,
                          const std::string& title) {
  const std::optional<PlotFormat> format = plot_format_for(path);
  if (!format) {
    throw InvalidArgumentError(path + ": a plot file name must end in .svg, .html or .htm");
  }
  const std::string contents = *format == PlotFormat::kSvg ? confusion_svg(evaluation, title)
                                                           : confusion_html(evaluation, title);
  write_file_atomically(path, {contents}, "the plot");
}

}  // namespace autocat::internal
