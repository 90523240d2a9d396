// autocat index: documents -> a search database, each document with its
// text terms, its categories (terms and value slot) and its id term.
#include <xapian.h>

#include <algorithm>
#include <map>
#include <memory>
#include <ostream>

#include "autocat/category_indexer.h"
#include "autocat/error.h"
#include "classify/analyzer.h"
#include "classify/json.h"
#include "indexer/commands.h"
#include "indexer/search_metadata.h"

namespace autocat::cli {

namespace {

const char kUsage[] =
    "usage: autocat index --model DIR --db DB [OPTIONS] INPUT...\n"
    "\n"
    "Categorizes each document of INPUT with the model DIR and adds it to the Xapian\n"
    "database DB (created if missing): its text terms with positions, one boolean\n"
    "term per category (prefix XC) and a value slot with the categories and scores.\n"
    "A document whose id is already in DB is replaced. Documents with empty text are\n"
    "indexed without categories.\n"
    "\n"
    "options:\n"
    "  --model DIR          model directory written by autocat train\n"
    "  --db DB              Xapian database to create or update\n"
    "  --method M           knn, rocchio, nb, bnb, cnb, svm, logreg (default: the\n"
    "                       model's)\n"
    "  --k N                kNN: neighbours that vote (default: the model's, chosen when\n"
    "                       training)\n";

const char kUsageTail[] =
    "  --no-categories      index the text only (to measure the cost of categorizing)\n"
    "  --batch N            commit every N documents (default 1000)\n"
    "  --split NAME         use only JSON Lines records whose \"split\" is NAME\n"
    "  --skip-malformed     skip malformed JSON lines with a warning instead of failing\n"
    "  --prefix XC          term prefix of categories (default XC)\n"
    "  --slot N             value slot of categories and scores (default 200)\n"
    "  --json               print the summary as one JSON object\n"
    "  -h, --help           show this help\n"
    "\n"
    "example:\n"
    "  autocat index --model news.model --db news.db incoming/\n";

const std::vector<OptionSpec>& command_options() {
  static const std::vector<OptionSpec> specs = with_options(
      {
          {"model", true},
          {"db", true},
          {"method", true},
          {"k", true},
          {"no-categories", false},
          {"batch", true},
          {"split", true},
          {"skip-malformed", false},
          {"prefix", true},
          {"slot", true},
          {"json", false},
      },
      decision_option_specs());
  return specs;
}

// Xapian's glass backend refuses terms longer than this many bytes.
constexpr size_t kMaxTermBytes = 245;

Xapian::WritableDatabase open_writable(const std::string& path) {
  try {
    return Xapian::WritableDatabase(path, Xapian::DB_CREATE_OR_OPEN);
  } catch (const Xapian::DatabaseLockError&) {
    throw IOError(path +
                  ": database is locked by another writer; wait for it to finish or close it");
  } catch (const Xapian::DatabaseError& e) {
    throw IOError(path + ": cannot open or create the database: " + e.get_msg());
  }
}

struct IndexCounts {
  uint64_t documents = 0;
  uint64_t uncategorized = 0;
  uint64_t empty_text = 0;
  std::map<std::string, uint64_t> categories;
};

std::vector<std::pair<std::string, uint64_t>> sorted_counts(
    const std::map<std::string, uint64_t>& counts) {
  std::vector<std::pair<std::string, uint64_t>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return sorted;
}

int run_index(const std::vector<std::string>& words, std::ostream& out, Messages& messages) {
  const ParsedArgs args = parse_args(words, command_options());
  const std::string model_dir = args.required("model");
  const std::string db_path = args.required("db");
  require_inputs(args);
  IndexOptions options;
  options.classify = classify_options(args);
  options.category_prefix = args.value("prefix", kDefaultCategoryPrefix);
  check_prefix(options.category_prefix);
  options.category_slot = static_cast<Xapian::valueno>(
      args.integer("slot", kDefaultCategorySlot, 0, Xapian::BAD_VALUENO - 1));
  const int64_t batch = args.integer("batch", 1000, 1, 100000000);
  const bool no_categories = args.has("no-categories");
  // Every option that shapes categorization is meaningless without it.
  std::vector<OptionSpec> categorizing = {{"method", true}, {"k", true}};
  categorizing = with_options(categorizing, decision_option_specs());
  for (const OptionSpec& option : categorizing) {
    if (no_categories && args.has(option.name)) {
      throw UsageError("--no-categories cannot be combined with --" + option.name);
    }
  }

  // Open the model before the database, so a bad model leaves no empty
  // database behind.
  options.categorize = !no_categories;
  const CategoryIndexer indexer(model_dir, options);
  const std::string method =
      no_categories ? "none"
                    : method_name(options.classify.method.value_or(indexer.default_method()));

  Xapian::WritableDatabase db = open_writable(db_path);
  write_search_metadata(db, model_dir, options.category_prefix, options.category_slot);

  IndexCounts counts;
  const Stopwatch clock;
  auto on_document = [&](internal::InputDocument&& doc) {
    const std::string id = doc.id.empty() ? doc.source : doc.id;
    if (id.empty() || kIdPrefix.size() + id.size() > kMaxTermBytes) {
      throw InvalidArgumentError(doc.source + ": document id must be 1 to " +
                                 std::to_string(kMaxTermBytes - kIdPrefix.size()) + " bytes long");
    }
    const bool empty = is_blank(doc.text);
    if (empty) {
      ++counts.empty_text;
      messages.warning(doc.source + ": empty text; indexed without categories");
    }
    const std::vector<Category> assigned = indexer.index_document(db, id, doc.text, doc.title);
    if (!no_categories && assigned.empty()) ++counts.uncategorized;
    for (const Category& category : assigned) ++counts.categories[category.name];
    ++counts.documents;
    if (counts.documents % static_cast<uint64_t>(batch) == 0) db.commit();
    messages.progress("indexed", counts.documents, clock.seconds());
  };
  internal::read_documents(args.positional(), read_options(args), on_document, warn_to(messages));
  db.commit();
  const double seconds = clock.seconds();
  const Xapian::doccount db_documents = db.get_doccount();

  if (args.has("json")) {
    internal::JsonValue json = internal::JsonValue::object();
    json.set("db", internal::JsonValue::string(db_path));
    json.set("method", internal::JsonValue::string(method));
    json.set("documents", internal::JsonValue::number(static_cast<double>(counts.documents)));
    json.set("seconds", internal::JsonValue::number(seconds));
    json.set("docs_per_second", internal::JsonValue::number(rate(counts.documents, seconds)));
    internal::JsonValue categories = internal::JsonValue::array();
    for (const auto& [name, count] : sorted_counts(counts.categories)) {
      internal::JsonValue entry = internal::JsonValue::object();
      entry.set("category", internal::JsonValue::string(name));
      entry.set("count", internal::JsonValue::number(static_cast<double>(count)));
      categories.push_back(std::move(entry));
    }
    json.set("categories", std::move(categories));
    json.set("uncategorized",
             internal::JsonValue::number(static_cast<double>(counts.uncategorized)));
    json.set("empty_text", internal::JsonValue::number(static_cast<double>(counts.empty_text)));
    json.set("db_documents", internal::JsonValue::number(db_documents));
    out << json.dump() << '\n';
    return 0;
  }

  out << "indexed " << counts.documents << " documents into " << db_path << " ("
      << format_fixed(rate(counts.documents, seconds), 0) << " docs/s)"
      << (no_categories ? " without categories" : "") << '\n';
  std::vector<std::vector<std::string>> rows;
  for (const auto& [name, count] : sorted_counts(counts.categories)) {
    rows.push_back({"  " + name, std::to_string(count)});
  }
  if (!no_categories && counts.uncategorized != 0) {
    rows.push_back({"  (no category)", std::to_string(counts.uncategorized)});
  }
  print_table(out, rows, {1});
  if (counts.empty_text != 0) {
    out << counts.empty_text << " documents had empty text\n";
  }
  out << db_path << " now holds " << db_documents << " documents\n";
  return 0;
}

}  // namespace

Command index_command() {
  return {"index", "categorize documents and add them to a Xapian database",
          std::string(kUsage) + kDecisionHelp + kUsageTail, run_index};
}

}  // namespace autocat::cli
