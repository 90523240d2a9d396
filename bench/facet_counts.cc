// Time per query of exact category facet counts over one Xapian::Database
// made of the databases (folders or stub files, local or remote) named on the
// command line: autocat::category_counts (one filtered count per category,
// works on stock xapian-tcpsrv) and, where every shard is local,
// CategoryFacetSpy (one pass, needs registering on a remote server).
//
// usage: facet_counts [--spy] [--repeat N] DB... -- QUERY...
#include <xapian.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "autocat/facets.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) try {
  bool spy = false;
  int repeat = 20;
  std::vector<std::string> dbs;
  std::vector<std::string> queries;
  bool in_queries = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (in_queries) {
      queries.push_back(arg);
    } else if (arg == "--") {
      in_queries = true;
    } else if (arg == "--spy") {
      spy = true;
    } else if (arg == "--repeat" && i + 1 < argc) {
      repeat = std::atoi(argv[++i]);
    } else {
      dbs.push_back(arg);
    }
  }
  if (dbs.empty() || queries.empty() || repeat < 1) {
    std::cerr << "usage: facet_counts [--spy] [--repeat N] DB... -- QUERY...\n";
    return 2;
  }
  Xapian::Database db;
  for (const std::string& path : dbs) db.add_database(Xapian::Database(path));
  Xapian::QueryParser parser;
  parser.set_database(db);
  autocat::configure_query_parser(parser, "english");
  double filtered_total = 0;
  double spy_total = 0;
  for (const std::string& text : queries) {
    const Xapian::Query query = parser.parse_query(text, autocat::kQueryParserFlags);
    Xapian::doccount matching = 0;
    size_t categories = 0;
    auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < repeat; ++r)
      categories = autocat::category_counts(db, query, &matching).size();
    const double filtered = seconds_since(start) / repeat;
    filtered_total += filtered;
    std::cout << "query \"" << text << "\": " << matching << " matches, " << categories
              << " categories; filtered counts " << filtered * 1e3 << " ms";
    if (spy) {
      start = std::chrono::steady_clock::now();
      for (int r = 0; r < repeat; ++r) {
        Xapian::Enquire enquire(db);
        enquire.set_query(query);
        autocat::CategoryFacetSpy facet_spy;
        enquire.add_matchspy(&facet_spy);
        enquire.get_mset(0, 10, db.get_doccount());
      }
      const double one_pass = seconds_since(start) / repeat;
      spy_total += one_pass;
      std::cout << "; CategoryFacetSpy " << one_pass * 1e3 << " ms";
    }
    std::cout << '\n';
  }
  std::cout << "mean per query: filtered counts " << filtered_total / queries.size() * 1e3 << " ms";
  if (spy) std::cout << ", CategoryFacetSpy " << spy_total / queries.size() * 1e3 << " ms";
  std::cout << '\n';
  return 0;
} catch (const Xapian::Error& e) {
  std::cerr << e.get_description() << '\n';
  return 1;
} catch (const std::exception& e) {
  std::cerr << e.what() << '\n';
  return 1;
}
