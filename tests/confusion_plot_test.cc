#include "classify/metrics/confusion_plot.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "autocat/error.h"
#include "classify/metrics/reliability_plot.h"
#include "tests/test_util.h"
#include "tests/xml_check.h"

namespace autocat::internal {
namespace {

using testing_util::count_of;
using testing_util::well_formed_xml;

// The one-of example of evaluation_test.cc: rows a (2 1 0 | 0), b (0 2 1 | 0),
// c (0 0 1 | 1).
Evaluation small_evaluation() {
  Evaluation evaluation({"a", "b", "c"});
  evaluation.add({0}, {0});
  evaluation.add({0}, {0});
  evaluation.add({0}, {1});
  evaluation.add({1}, {1});
  evaluation.add({1}, {2});
  evaluation.add({2}, {2});
  evaluation.add({2}, {});
  evaluation.add({1}, {1});
  return evaluation;
}

std::string svg_part(const std::string& html) {
  const size_t start = html.find("<svg");
  const size_t end = html.find("</svg>");
  if (start == std::string::npos || end == std::string::npos) return std::string();
  return html.substr(start, end + 6 - start);
}

TEST(XmlEscapeTest, EscapesMarkupAndKeepsUtf8) {
  EXPECT_EQ(xml_escape("R&D <b> \"q\" 'a'"), "R&amp;D &lt;b&gt; &quot;q&quot; &#39;a&#39;");
  EXPECT_EQ(xml_escape("日本語 café"), "日本語 café");
  // A control character and a stray continuation byte are not XML.
  EXPECT_EQ(xml_escape(std::string("a\x01") + "b\x80"), "a\uFFFDb\uFFFD");
  // Overlong "/" (C0 AF) and a truncated 3-byte sequence.
  EXPECT_EQ(xml_escape("\xC0\xAF"), "\uFFFD\uFFFD");
  EXPECT_EQ(xml_escape("\xE6\x97"), "\uFFFD\uFFFD");
}

TEST(PlotFormatTest, FromTheFileName) {
  EXPECT_EQ(plot_format_for("out/plot.svg"), PlotFormat::kSvg);
  EXPECT_EQ(plot_format_for("PLOT.SVG"), PlotFormat::kSvg);
  EXPECT_EQ(plot_format_for("report.html"), PlotFormat::kHtml);
  EXPECT_EQ(plot_format_for("report.Htm"), PlotFormat::kHtml);
  EXPECT_EQ(plot_format_for("plot.png"), std::nullopt);
  EXPECT_EQ(plot_format_for("svg"), std::nullopt);
  EXPECT_EQ(plot_format_for(".svg"), std::nullopt);
  EXPECT_EQ(plot_format_for("plot.svg/inside"), std::nullopt);
}

TEST(ConfusionSvgTest, CellsCarryCountsAndRowShares) {
  const std::string svg = confusion_svg(small_evaluation(), "Confusion matrix: nb");
  std::string error;
  ASSERT_TRUE(well_formed_xml(svg, &error)) << error << "\n" << svg;
  EXPECT_EQ(svg.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg ", 0), 0u);
  EXPECT_NE(svg.find(">Confusion matrix: nb</text>"), std::string::npos);
  // One rect with a tooltip per non-empty cell: 6 of the 12.
  EXPECT_EQ(count_of(svg, "</title></rect>"), 6u);
  EXPECT_NE(svg.find("<title>a \u2192 a: 2 (66.7% of the row)</title>"), std::string::npos);
  EXPECT_NE(svg.find("<title>a \u2192 b: 1 (33.3% of the row)</title>"), std::string::npos);
  EXPECT_NE(svg.find("<title>b \u2192 b: 2 (66.7% of the row)</title>"), std::string::npos);
  EXPECT_NE(svg.find("<title>c \u2192 (none): 1 (50.0% of the row)</title>"), std::string::npos);
  EXPECT_EQ(svg.find("a \u2192 c:"), std::string::npos);  // empty cells are not drawn
  // Share 2/3, a third of the way from mid blue (107,174,214) to dark blue
  // (8,48,107): (74,132,178); written in white on the dark cell.
  const size_t cell = svg.find("fill=\"#4a84b2\"><title>a \u2192 a: 2");
  ASSERT_NE(cell, std::string::npos) << svg;
  EXPECT_NE(svg.find("fill=\"#ffffff\">2</text>", cell), std::string::npos);
  // Share 1/3: between white (247,251,255) and mid blue, black text.
  EXPECT_NE(svg.find("fill=\"#9ac8e4\"><title>a \u2192 b: 1"), std::string::npos);
  // Every category on both axes, plus the "(none)" column.
  for (const char* label : {">a</text>", ">b</text>", ">c</text>", ">(none)</text>"}) {
    EXPECT_GE(count_of(svg, label), 1u) << label;
  }
  EXPECT_EQ(count_of(svg, "rotate(-45 "), 4u);  // the column labels
}

TEST(ConfusionSvgTest, EscapesCategoryNames) {
  Evaluation evaluation({"R&D", "<b>", "say \"hi\"", "日本"});
  evaluation.add({0}, {1});
  evaluation.add({2}, {3});
  evaluation.add({3}, {3});
  const std::string svg = confusion_svg(evaluation, "names & <tags>");
  std::string error;
  ASSERT_TRUE(well_formed_xml(svg, &error)) << error;
  EXPECT_NE(svg.find(">R&amp;D</text>"), std::string::npos);
  EXPECT_NE(svg.find(">&lt;b&gt;</text>"), std::string::npos);
  EXPECT_NE(svg.find(">say &quot;hi&quot;</text>"), std::string::npos);
  EXPECT_NE(svg.find(">日本</text>"), std::string::npos);
  EXPECT_NE(svg.find("<title>R&amp;D \u2192 &lt;b&gt;: 1 (100.0% of the row)</title>"),
            std::string::npos);
  EXPECT_NE(svg.find(">names &amp; &lt;tags&gt;</text>"), std::string::npos);
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
}

// 95 categories: cells stop shrinking at 14 px and the picture grows; every
// name is still on both axes; long names are cut on the axes only.
TEST(ConfusionSvgTest, ManyCategoriesStayLegible) {
  std::vector<std::string> names;
  for (int c = 0; c < 95; ++c) names.push_back("category.number." + std::to_string(c));
  names[7] = std::string(60, 'x');
  Evaluation evaluation(names);
  for (uint32_t c = 0; c < 95; ++c) {
    for (int i = 0; i < 120; ++i) evaluation.add({c}, {i < 100 ? c : (c + 1) % 95});
  }
  const std::string svg = confusion_svg(evaluation, "95 categories");
  std::string error;
  ASSERT_TRUE(well_formed_xml(svg, &error)) << error;
  EXPECT_EQ(count_of(svg, "width=\"14.0\" height=\"14.0\""), 2u * 95);
  for (int c = 0; c < 95; ++c) {
    if (c == 7) continue;
    EXPECT_EQ(count_of(svg, ">" + names[c] + "</text>"), 2u) << names[c];
  }
  EXPECT_EQ(count_of(svg, ">" + std::string(40, 'x') + "\u2026</text>"), 2u);
  // Counts are written at 0.42 of the 14 px cell (three digits at 0.6 em fit).
  EXPECT_NE(svg.find("font-size=\"5.9\" text-anchor=\"middle\""), std::string::npos);
  EXPECT_NE(svg.find(">100</text>"), std::string::npos);
}

TEST(ConfusionHtmlTest, SelfContainedPage) {
  const std::string html = confusion_html(small_evaluation(), "knn <test>");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n", 0), 0u);
  EXPECT_NE(html.find("<title>knn &lt;test&gt;</title>"), std::string::npos);
  EXPECT_NE(html.find("<meta charset=\"utf-8\">"), std::string::npos);
  for (const char* external : {"<script", "src=", "href=", "<link", "url(http", "@import"}) {
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  }
  std::string error;
  EXPECT_TRUE(well_formed_xml(svg_part(html), &error)) << error;
  EXPECT_EQ(html.find("<?xml"), std::string::npos);
  // Per-category table: a header and one row per category, with support.
  EXPECT_EQ(count_of(html, "<tr>"), 4u);
  EXPECT_NE(html.find("<tr><td>c</td><td>0.5000</td><td>0.5000</td><td>0.5000</td><td>2</td>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("8 documents; accuracy 0.6250"), std::string::npos);
  EXPECT_EQ(html.substr(html.size() - 8), "</html>\n");
}

// Every text of the reliability diagram, its axis caption too, lies inside
// the canvas: its baseline above the bottom edge and its estimated extent
// (0.6 em a character) between the side edges.
TEST(ReliabilitySvgTest, EveryTextInsideTheCanvas) {
  CalibrationReport calibration(3);
  calibration.add({0.9, 0.05, 0.05}, {0});
  calibration.add({0.2, 0.7, 0.1}, {1});
  calibration.add({0.3, 0.3, 0.4}, {0});
  const std::string svg = reliability_svg(calibration, "a title");
  std::string xml_error;
  EXPECT_TRUE(well_formed_xml(svg, &xml_error)) << xml_error;
  std::smatch size;
  ASSERT_TRUE(std::regex_search(svg, size, std::regex("width=\"([0-9.]+)\" height=\"([0-9.]+)\"")));
  const double width = std::stod(size[1]), height = std::stod(size[2]);
  EXPECT_NE(svg.find("viewBox=\"0 0 "), std::string::npos);
  const std::regex text_re(
      "<text x=\"([0-9.-]+)\" y=\"([0-9.-]+)\" font-size=\"([0-9.]+)\"( "
      "text-anchor=\"(middle|end)\")?[^>]*>([^<]*)</text>");
  int texts = 0;
  bool caption = false;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text_re);
       it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    ++texts;
    const double x = std::stod(m[1]), y = std::stod(m[2]), font = std::stod(m[3]);
    const std::string anchor = m[5], text = m[6];
    if (text.rfind("top-label probability", 0) == 0) caption = true;
    const double extent = 0.6 * font * static_cast<double>(text.size());
    const double left = anchor == "middle" ? x - extent / 2 : anchor == "end" ? x - extent : x;
    EXPECT_LE(y + 0.25 * font, height) << text;  // descenders too
    EXPECT_GE(y - font, 0.0) << text;
    EXPECT_GE(left, 0.0) << text;
    EXPECT_LE(left + extent, width) << text;
  }
  EXPECT_GT(texts, 10);
  EXPECT_TRUE(caption) << svg;
}

// The top label's curve beside the pooled pairs' one, each through its
// bins' (mean prediction, share observed), and a legend naming both.
TEST(ReliabilitySvgTest, TopLabelAndPooledCurvesWithALegend) {
  CalibrationReport calibration(2);
  calibration.add({0.65, 0.35}, {0});
  calibration.add({0.75, 0.25}, {1});
  const std::string svg = reliability_svg(calibration, "t");
  std::string xml_error;
  EXPECT_TRUE(well_formed_xml(svg, &xml_error)) << xml_error;
  EXPECT_EQ(count_of(svg, "<polyline"), 2u) << svg;
  // Top label: 0.6-0.7 right (x 60 + 0.65 x 400, y 50 + (1 - 1) x 400),
  // 0.7-0.8 wrong (y 50 + 400).
  EXPECT_NE(svg.find("<polyline points=\"320.00,50.00 360.00,450.00\" fill=\"none\" "
                     "stroke=\"navy\""),
            std::string::npos)
      << svg;
  // Pooled: 0.2-0.3 0.25 observed, 0.3-0.4 0.35 not, 0.6-0.7 right, 0.7-0.8 not.
  EXPECT_NE(svg.find("<polyline points=\"160.00,50.00 200.00,450.00 320.00,50.00 360.00,450.00\" "
                     "fill=\"none\" stroke=\"darkorange\""),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find(">top label: share right against mean prediction</text>"), std::string::npos);
  EXPECT_NE(svg.find(">every (document, category) pair pooled: the same</text>"),
            std::string::npos);
  EXPECT_NE(svg.find(">calibrated: observed = predicted</text>"), std::string::npos);
}

TEST(WriteConfusionPlotTest, WritesTheFormatTheNameAsksFor) {
  testing_util::TempDir dir;
  const Evaluation evaluation = small_evaluation();
  write_confusion_plot(dir.file("m.svg"), evaluation, "t");
  write_confusion_plot(dir.file("m.HTML"), evaluation, "t");
  EXPECT_EQ(testing_util::read_file(dir.file("m.svg")), confusion_svg(evaluation, "t"));
  EXPECT_EQ(testing_util::read_file(dir.file("m.HTML")), confusion_html(evaluation, "t"));
  // Nothing else is left in the directory (no temporary files).
  size_t entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    (void)entry;
    ++entries;
  }
  EXPECT_EQ(entries, 2u);
}

TEST(WriteConfusionPlotTest, ErrorsNameTheFile) {
  testing_util::TempDir dir;
  const Evaluation evaluation = small_evaluation();
  const std::string missing = dir.file("no-such-dir/m.svg");
  try {
    write_confusion_plot(missing, evaluation, "t");
    FAIL() << "no error";
  } catch (const IOError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(missing + ": cannot write the plot: ", 0), 0u)
        << e.what();
  }
  // A directory in the way: the rename fails, and no temporary file stays.
  const std::string in_the_way = dir.file("taken.svg");
  std::filesystem::create_directory(in_the_way);
  EXPECT_THROW(write_confusion_plot(in_the_way, evaluation, "t"), IOError);
  size_t entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    (void)entry;
    ++entries;
  }
  EXPECT_EQ(entries, 1u);
  EXPECT_THROW(write_confusion_plot(dir.file("m.png"), evaluation, "t"), InvalidArgumentError);
}

}  // namespace
}  // namespace autocat::internal
