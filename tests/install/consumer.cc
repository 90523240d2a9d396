// An application built out of tree against an installed autocat: opens a
// model, categorizes a text, indexes it into a Xapian database and checks
// that a category filter finds it. Exit 0 and "ok" on success.
#include <autocat/autocat.h>
#include <autocat/version.h>
#include <xapian.h>

#include <iostream>
#include <string>

int main(int argc, char** argv) try {
  if (argc != 3) {
    std::cerr << "usage: consumer MODEL_DIR DB_DIR\n";
    return 2;
  }
  const autocat::CategoryIndexer indexer(argv[1]);
  const std::string text = "The telescope photographed a comet passing close to Jupiter.";
  const std::vector<autocat::Category> categories = indexer.categorize(text);
  if (categories.empty()) {
    std::cerr << "consumer: no category for the text\n";
    return 1;
  }
  Xapian::WritableDatabase db(argv[2], Xapian::DB_CREATE_OR_OVERWRITE);
  indexer.index_document(db, "comet", text);
  db.commit();
  Xapian::Enquire enquire(db);
  enquire.set_query(autocat::category_filter(Xapian::Query::MatchAll, {categories[0].name}));
  const Xapian::MSet matches = enquire.get_mset(0, 10);
  if (matches.size() != 1) {
    std::cerr << "consumer: category filter " << categories[0].name << " found " << matches.size()
              << " documents, expected 1\n";
    return 1;
  }
  std::cout << "ok: autocat " << AUTOCAT_VERSION_STRING << ", " << categories[0].name << '\n';
  return 0;
} catch (const std::exception& e) {
  std::cerr << "consumer: " << e.what() << '\n';
  return 1;
} catch (const Xapian::Error& e) {
  std::cerr << "consumer: " << e.get_description() << '\n';
  return 1;
}
