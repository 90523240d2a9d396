// autocat split: cut an ordered stream of pages back into documents.
#include <ostream>

#include "autocat/error.h"
#include "classify/decide/categorizer.h"
#include "classify/decide/page_split.h"
#include "classify/io/json_text.h"
#include "indexer/commands.h"

namespace autocat::cli {

namespace {

const char kUsage[] =
    "usage: autocat split --model DIR --role-model DIR [OPTIONS] PAGES...\n"
    "\n"
    "Reads an ordered stream of pages (JSON Lines, one page a record, in stream\n"
    "order) and cuts it into documents: the model DIR gives each page a probability\n"
    "per document type, the role model one per page role (its categories must be\n"
    "first, middle, last and single: train it on pages labelled with their role),\n"
    "and dynamic programming finds the segmentation with the highest total\n"
    "log-probability (each document one type; its first page \"first\", its last\n"
    "\"last\", the others \"middle\"; a one-page document \"single\").\n"
    "Prints one line per document: FIRST_ID..LAST_ID<TAB>TYPE<TAB>PAGES, or with\n"
    "--json one object per document that autocat index reads:\n"
    "  autocat split --model t --role-model r --json pages.jsonl | \\\n"
    "      autocat index --model t --db DB -\n";

void define_options(OptionSet& options) {
  add_model_option(options, "model of the document types");
  options.value("--role-model", "DIR", "model of the page roles (first, middle, last, single)");
  add_method_option(options, "(default: the model's)", "method of the type model: ");
  options.value("--max-pages", "N", "longest document considered, in pages (default 64)");
  options.flag("--json",
               "{\"id\" (first page's), \"type\", \"pages\": [ids],\n"
               " \"log_score\", \"text\" (the pages' texts joined by newlines)}");
  add_reader_options(options, ReaderOptionSet{/*duplicate_ids=*/false, /*fields=*/false});
}

int run_split(const ParsedArgs& args, std::ostream& out, Messages& messages) {
  const internal::Categorizer types(args.required("model"));
  const internal::Categorizer roles(args.required("role-model"));
  report_model_warnings(types, messages);
  report_model_warnings(roles, messages);
  require_inputs(args, "PAGES");
  internal::SplitOptions split;
  split.max_pages = static_cast<size_t>(args.integer("max-pages", 64, 1, 100000));
  ClassifyOptions type_options;
  type_options.method = args.method();

  const internal::PageScorer scorer(types, roles, type_options);

  std::vector<internal::InputDocument> pages;
  std::vector<internal::PageScores> scores;
  internal::ReadOptions read = read_options(args);
  auto on_page = [&](internal::InputDocument&& page) {
    scores.push_back(scorer.score(page.text));
    pages.push_back(std::move(page));
  };
  internal::read_documents(args.positional(), read, on_page, warn_to(messages));
  report_model_warnings(types, messages);
  report_model_warnings(roles, messages);

  for (const internal::PageSegment& segment : internal::best_segmentation(scores, split)) {
    const std::string& type = types.categories()[segment.type];
    const std::string& first = pages[segment.begin].id;
    const std::string& last = pages[segment.end - 1].id;
    if (args.has("json")) {
      internal::Json line = internal::Json::object();
      line["id"] = first;
      line["type"] = type;
      internal::Json ids = internal::Json::array();
      std::string text;
      for (size_t p = segment.begin; p < segment.end; ++p) {
        ids.push_back(internal::Json(pages[p].id));
        text += (p == segment.begin ? "" : "\n") + pages[p].text;
      }
      line["pages"] = std::move(ids);
      line["log_score"] = segment.log_score;
      line["text"] = text;
      out << json_output(line) << '\n';
    } else {
      out << one_line(first) << ".." << one_line(last) << '\t' << one_line(type) << '\t'
          << (segment.end - segment.begin) << '\n';
    }
  }
  return 0;
}

}  // namespace

Command split_command() {
  return {"split", "cut an ordered stream of pages back into documents",
          kUsage,  define_options,
          "",      run_split};
}

}  // namespace autocat::cli
