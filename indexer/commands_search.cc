// autocat search: query a database written by `autocat index`, filter by
// category, count category facets over the matches.
#include <xapian.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <system_error>

#include "autocat/category_indexer.h"
#include "autocat/error.h"
#include "autocat/facets.h"
#include "classify/io/atomic_file.h"
#include "classify/io/json_text.h"
#include "classify/text/analyzer.h"
#include "indexer/commands.h"
#include "indexer/search_metadata.h"

namespace autocat::cli {

namespace {

const char kUsage[] =
    "usage: autocat search --db DB [--db DB]... [OPTIONS] [QUERY...]\n"
    "\n"
    "Searches the database DB written by autocat index. The QUERY words are joined\n"
    "and parsed by Xapian's QueryParser as any Xapian application would (OR by\n"
    "default; AND, NOT, \"phrases\", CJK text and category:NAME or\n"
    "category:\"Two Words\" work), with the stemmer DB was indexed with and English\n"
    "stopwords. With no QUERY every document matches.\n";

const char kFooter[] =
    "\n"
    "Use -- before query words that start with '-'.\n"
    "\n"
    "example:\n"
    "  autocat search --db news.db --category sports --facets world cup\n"
    "  autocat search --db news.db --category sports --min-score 0.8 --sort-by-score sports\n";

void define_options(OptionSet& options) {
  options.values("--db", "DB",
                 "Xapian database to search; repeat to search several shards as one (a stub "
                 "file may list local and remote databases, e.g. \"remote 127.0.0.1:8000\" for a "
                 "xapian-tcpsrv)");
  options.values("--category", "C", "only documents in category C (repeat for any of several)");
  options.value("--min-score", "S",
                "only documents whose stored score for a --category is at least S (local "
                "databases only)");
  options.value("--sort-by-score", "C",
                "order the results by their stored score for category C, highest first, ties "
                "by relevance (local databases only)");
  options.flag("--facets",
               "count the categories of all matching documents (exact, also over remote shards)");
  options.value("--facets-top", "N", "show only the N categories with the most matches");
  options.flag("--exact",
               "count the matches exactly instead of estimating (as --facets does): slower on "
               "large databases");
  options.value("--limit", "N", "show at most N results (default 10)");
  options.value("--offset", "N", "skip the first N results (default 0)");
  options.value("--stemmer", "LANG", "stemmer for the query (default: as indexed, else english)");
  options.value("--prefix", "XC", "term prefix of categories (default: as indexed, else XC)");
  options.value("--slot", "N", "value slot of categories (default: as indexed, else 200)");
  options.flag("--json",
               "one JSON object: {\"query\", \"matches_estimated\", \"matches_exact\",\n"
               "\"min_score\", \"sort_by_score\", \"results\": [{\"rank\", \"id\", \"weight\",\n"
               "\"categories\", \"data\"}],\n"
               "\"facets\": [{\"category\", \"count\"}]}");
}

// Longest data shown in human-readable results.
constexpr size_t kSnippetBytes = 100;

// Opens `path` (a database folder or a stub file listing local and remote
// databases, read by Xapian itself).
Xapian::Database open_database(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw NotFoundError(path + ": no such database");
  try {
    return Xapian::Database(path);
  } catch (const Xapian::DatabaseError& e) {
    throw IOError(path + ": cannot open the database: " + e.get_msg());
  } catch (const Xapian::NetworkError& e) {
    throw IOError(path + ": cannot reach a remote database: " + e.get_msg());
  }
}

// The unique id of a document: its "Q" term without the prefix.
std::string document_id(const Xapian::Document& doc) {
  Xapian::TermIterator it = doc.termlist_begin();
  it.skip_to(kIdPrefix);
  if (it != doc.termlist_end() && (*it).rfind(kIdPrefix, 0) == 0) {
    return (*it).substr(kIdPrefix.size());
  }
  return std::string();
}

int run_search(const ParsedArgs& args, std::ostream& out, Messages& messages) {
  const std::vector<std::string> db_paths = args.values("db");
  if (db_paths.empty()) throw UsageError("--db is required");
  const std::vector<std::string> filter = args.values("category");
  for (const std::string& category : filter) {
    if (category.empty()) throw UsageError("--category needs a non-empty name");
  }
  const auto limit = static_cast<Xapian::doccount>(args.integer("limit", 10, 0, 1000000));
  const auto offset = static_cast<Xapian::doccount>(args.integer("offset", 0, 0, 1000000000));
  if (args.has("prefix")) check_prefix(args.value("prefix"));
  const bool facets = args.has("facets");
  const bool exact = args.has("exact");
  const bool json = args.has("json");
  const auto facets_top = static_cast<size_t>(args.integer("facets-top", 0, 1, 1000000000));
  if (args.has("facets-top") && !facets) throw UsageError("--facets-top N goes with --facets");
  std::optional<double> min_score;
  if (args.has("min-score")) {
    if (filter.empty()) {
      throw UsageError(
          "--min-score S needs --category C: the score of which category (give --category "
          "for each category the score may come from)");
    }
    min_score = args.number("min-score", 0, std::numeric_limits<double>::lowest(),
                            std::numeric_limits<double>::max());
  }
  const std::string sort_category = args.value("sort-by-score");
  if (args.has("sort-by-score") && sort_category.empty()) {
    throw UsageError("--sort-by-score needs a non-empty category name");
  }

  // Shards combine into one Database; metadata comes from the first.
  Xapian::Database db;
  for (const std::string& path : db_paths) db.add_database(open_database(path));
  internal::crash_point("search-opened");  // a remote may go away now
  const SearchMetadata metadata = read_search_metadata(db);
  const std::string prefix =
      args.value("prefix", metadata.prefix.empty() ? kDefaultCategoryPrefix : metadata.prefix);
  Xapian::valueno slot = kDefaultCategorySlot;
  if (args.has("slot")) {
    slot = static_cast<Xapian::valueno>(args.integer("slot", 0, 0, Xapian::BAD_VALUENO - 1));
  } else {
    Xapian::valueno recorded = 0;
    const char* end = metadata.slot.data() + metadata.slot.size();
    auto [ptr, ec] = std::from_chars(metadata.slot.data(), end, recorded);
    if (!metadata.slot.empty() && ec == std::errc() && ptr == end) slot = recorded;
  }

  if (!filter.empty() || !sort_category.empty()) {
    std::vector<std::string> known;
    for (const FacetCount& count : collection_category_counts(db, prefix)) {
      known.push_back(count.category);
    }
    std::vector<std::string> named = filter;
    if (!sort_category.empty()) named.push_back(sort_category);
    for (const std::string& category : named) {
      if (std::find(known.begin(), known.end(), category) == known.end()) {
        messages.warning("no document has category '" + category +
                         "'; known: " + (known.empty() ? std::string("(none)") : join(known)));
      }
    }
  }

  const std::string raw_query = join(args.positional(), " ");
  Xapian::Query query = Xapian::Query::MatchAll;
  if (raw_query.find_first_not_of(" \t\n\r\f\v") != std::string::npos) {
    Xapian::QueryParser parser;
    parser.set_database(db);
    parser.set_default_op(Xapian::Query::OP_OR);
    const std::string stemmer =
        args.value("stemmer", metadata.stemmer.empty() ? std::string("english") : metadata.stemmer);
    try {
      configure_query_parser(parser, stemmer, prefix);
    } catch (const InvalidArgumentError& e) {
      throw UsageError(std::string("--stemmer: ") + e.what());
    }
    try {
      query = parser.parse_query(raw_query, kQueryParserFlags);
    } catch (const Xapian::QueryParserError& e) {
      throw UsageError("cannot parse the query: " + e.get_msg());
    }
  }
  query = category_filter(query, filter, prefix);

  Xapian::Enquire enquire(db);
  enquire.set_query(query);
  std::unique_ptr<CategoryScoreDecider> decider;
  if (min_score) decider = std::make_unique<CategoryScoreDecider>(filter, *min_score, slot);
  std::unique_ptr<CategoryScoreKeyMaker> key_maker;
  if (!sort_category.empty()) {
    key_maker = std::make_unique<CategoryScoreKeyMaker>(sort_category, slot);
    enquire.set_sort_by_key_then_relevance(key_maker.get(), /*reverse=*/true);
  }
  Xapian::MSet matches;
  Xapian::doccount facet_documents = 0;
  std::vector<FacetCount> facet_counts;
  try {
    // With facets every match is counted anyway: make the estimate exact too.
    matches = enquire.get_mset(offset, limit, facets || exact ? db.get_doccount() : 0, nullptr,
                               decider.get());
    // Counted from the category terms with filtered queries rather than a
    // MatchSpy, so remote shards on a stock xapian-tcpsrv work too; with
    // --min-score (local only anyway) by a spy behind the same decider, so
    // the counts cover exactly the documents kept.
    if (facets && decider) {
      facet_counts = category_counts(db, query, *decider, &facet_documents, slot);
    } else if (facets) {
      facet_counts = category_counts(db, query, &facet_documents, prefix);
    }
  } catch (const Xapian::UnimplementedError&) {
    // Xapian runs a MatchDecider or KeyMaker only in this process: a stock
    // xapian-tcpsrv cannot, and Xapian refuses rather than ignore it.
    if (!decider && !key_maker) throw;
    const std::string options = decider && key_maker ? "--min-score and --sort-by-score work"
                                : decider            ? "--min-score works"
                                                     : "--sort-by-score works";
    throw UsageError(options + " on local databases only, and " + join(db_paths, ", ") +
                     " includes a remote one; search the shards' databases directly, or leave "
                     "it out");
  }
  // Xapian's bounds meet when it counted every match.
  const bool counted = matches.get_matches_lower_bound() == matches.get_matches_upper_bound();
  const size_t facet_categories = facet_counts.size();
  if (facets_top != 0 && facet_counts.size() > facets_top) facet_counts.resize(facets_top);

  if (json) {
    internal::Json result = internal::Json::object();
    result["query"] = raw_query;
    result["parsed_query"] = internal::Json(query.get_description());
    internal::Json filter_json = internal::Json::array();
    for (const std::string& category : filter) {
      filter_json.push_back(internal::Json(category));
    }
    result["filter"] = std::move(filter_json);
    result["min_score"] = min_score ? internal::Json(*min_score) : internal::Json();
    result["sort_by_score"] =
        sort_category.empty() ? internal::Json() : internal::Json(sort_category);
    result["matches_estimated"] = internal::Json(matches.get_matches_estimated());
    result["matches_exact"] = counted;
    internal::Json results = internal::Json::array();
    for (Xapian::MSetIterator it = matches.begin(); it != matches.end(); ++it) {
      const Xapian::Document doc = it.get_document();
      internal::Json entry = internal::Json::object();
      entry["rank"] = internal::Json(it.get_rank() + 1);
      entry["id"] = document_id(doc);
      entry["weight"] = internal::Json(it.get_weight());
      entry["categories"] = categories_json(decode_categories(doc.get_value(slot)));
      entry["data"] = internal::Json(doc.get_data());
      results.push_back(std::move(entry));
    }
    result["results"] = std::move(results);
    if (facets) {
      internal::Json facet_list = internal::Json::array();
      for (const FacetCount& count : facet_counts) {
        internal::Json entry = internal::Json::object();
        entry["category"] = count.category;
        entry["count"] = count.count;
        facet_list.push_back(std::move(entry));
      }
      result["facets"] = std::move(facet_list);
      result["facet_documents"] = facet_documents;
      result["facet_categories"] = facet_categories;
    }
    out << json_output(result) << '\n';
    return 0;
  }

  const Xapian::doccount estimated = matches.get_matches_estimated();
  out << (counted ? "" : "about ") << estimated << (estimated == 1 ? " match" : " matches");
  if (!raw_query.empty()) out << " for \"" << one_line(raw_query) << '"';
  if (!filter.empty()) out << " in " << one_line(join(filter, " or "));
  if (min_score) out << " scoring at least " << format_number(*min_score);
  if (!sort_category.empty()) out << ", by score for " << one_line(sort_category);
  out << '\n';
  for (Xapian::MSetIterator it = matches.begin(); it != matches.end(); ++it) {
    const Xapian::Document doc = it.get_document();
    std::vector<std::string> names;
    for (const Category& category : decode_categories(doc.get_value(slot))) {
      names.push_back(one_line(category.name) + " " + format_fixed(category.score, 3));
    }
    out << (it.get_rank() + 1) << ". " << one_line(document_id(doc)) << "  ["
        << (names.empty() ? std::string("no category") : join(names)) << "]  weight "
        << format_fixed(it.get_weight(), 3) << '\n';
    const std::string data = one_line(doc.get_data());
    if (!data.empty()) {
      out << "   " << internal::utf8_prefix(data, kSnippetBytes)
          << (data.size() > kSnippetBytes ? "..." : "") << '\n';
    }
  }
  if (facets) {
    out << "categories of the " << facet_documents
        << (facet_documents == 1 ? " matching document" : " matching documents");
    if (facet_counts.size() < facet_categories) {
      out << " (the top " << facet_counts.size() << " of " << facet_categories << ")";
    }
    out << ":\n";
    std::vector<std::vector<std::string>> rows;
    for (const FacetCount& count : facet_counts) {
      rows.push_back({"  " + count.category, std::to_string(count.count)});
    }
    if (rows.empty()) rows.push_back({"  (none)", "0"});
    print_table(out, rows, {1});
  }
  return 0;
}

// run_search(), with Xapian's errors after the databases opened (a remote
// shard that went away mid-query: "Connection closed unexpectedly") naming
// the databases searched.
int run_search_naming_databases(const ParsedArgs& args, std::ostream& out, Messages& messages) {
  try {
    return run_search(args, out, messages);
  } catch (const Xapian::NetworkError& e) {
    throw IOError(join(args.values("db"), ", ") + ": lost a remote database while searching (" +
                  e.get_msg() +
                  "); check that its server (xapian-tcpsrv) is running and search "
                  "again");
  } catch (const Xapian::Error& e) {
    throw IOError(join(args.values("db"), ", ") + ": " + e.get_description());
  }
}

}  // namespace

Command search_command() {
  return {"search", "search a database, filter by category, count category facets",
          kUsage,   define_options,
          kFooter,  run_search_naming_databases};
}

}  // namespace autocat::cli
