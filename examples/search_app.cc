// A search app using the autocat hook: index texts (each gets category terms
// and a category value), search the largest category, count match categories.
#include <xapian.h>

#include <iostream>
#include <string>

#include "autocat/autocat.h"

using namespace std;

static const char* const kTexts[][2] = {
    {"comet", "The new telescope photographed a comet passing close to Jupiter."},
    {"derby", "The striker scored twice in the derby and the fans sang until the whistle."},
    {"injury", "The team doctor checked the goalkeeper's knee after the match."},
    {"risotto", "Stir the risotto slowly and add warm stock a ladle at a time."},
};

int main(int argc, char** argv) try {
  if (argc < 3 || argc > 4 || argv[1][0] == '-') {
    cout << "Usage: " << argv[0]
         << " MODEL_DIR DB_DIR [QUERY]\n"
            "Index example texts with the model, then search the largest category.\n";
    return argc == 2 && string(argv[1]) == "--help" ? 0 : 1;
  }
  autocat::IndexOptions options;
  // Any-of: every category over its threshold tuned at training, and >= 0.3.
  options.classify.decision = autocat::Decision::kAnyOf;
  options.classify.min_score = 0.3;
  autocat::CategoryIndexer indexer(argv[1], options);
  Xapian::WritableDatabase db(argv[2], Xapian::DB_CREATE_OR_OPEN);
  for (const auto& [id, text] : kTexts) indexer.index_document(db, id, text);
  db.commit();  // explicitly: the destructor swallows errors
  vector<autocat::FacetCount> sizes = autocat::collection_category_counts(db);
  if (sizes.empty()) throw runtime_error("no document was categorized");
  Xapian::QueryParser parser;              // QUERY may use category:NAME
  indexer.configure_query_parser(parser);  // the stemmer the text was indexed with
  Xapian::Query query = parser.parse_query(argc == 4 ? argv[3] : "", autocat::kQueryParserFlags);
  Xapian::Enquire enquire(db);  // no QUERY: every document of the category
  enquire.set_query(autocat::category_filter(query, {sizes[0].category}));
  autocat::CategoryFacetSpy spy;
  enquire.add_matchspy(&spy);
  Xapian::MSet matches = enquire.get_mset(0, 10, db.get_doccount());
  cout << "In category " << sizes[0].category << ": " << matches.size() << " results\n";
  for (auto it = matches.begin(); it != matches.end(); ++it) {
    cout << it.get_rank() + 1 << ": " << it.get_document().get_data() << '\n';
  }
  cout << "Categories of the " << spy.documents_seen() << " matches:\n";
  for (const autocat::FacetCount& facet : spy.counts()) {
    cout << "  " << facet.category << " " << facet.count << '\n';
  }
  return 0;
} catch (const Xapian::Error& e) {
  cerr << e.get_description() << '\n';
  return 1;
} catch (const exception& e) {
  cerr << e.what() << '\n';
  return 1;
}
