// Setting up a stock Xapian::QueryParser the way CategoryIndexer indexed
// the text: what `autocat search`, --from-db filters and applications share.
#include "autocat/query_parser.h"

#include <string>
#include <vector>

#include "autocat/category_terms.h"
#include "autocat/error.h"
#include "classify/text/analyzer.h"

namespace autocat {

// Several `category:` filters in one query string are combined with OP_OR
// (any of them), like category_filter().
void add_category_prefix(Xapian::QueryParser& parser, const std::string& prefix) {
  check_category_prefix(prefix);
  parser.add_boolean_prefix(kCategoryField, prefix);
}

const std::vector<std::string>& query_stopwords() { return internal::english_stopwords(); }

void configure_query_parser(Xapian::QueryParser& parser, const std::string& stemmer,
                            const std::string& prefix) {
  try {
    parser.set_stemmer(Xapian::Stem(stemmer));
  } catch (const Xapian::InvalidArgumentError&) {
    throw InvalidArgumentError("unknown stemmer '" + stemmer +
                               "'; use a language Xapian::Stem knows (english, german, ...) "
                               "or none");
  }
  parser.set_stemming_strategy(Xapian::QueryParser::STEM_SOME);
  const std::vector<std::string>& stopwords = query_stopwords();
  parser.set_stopper((new Xapian::SimpleStopper(stopwords.begin(), stopwords.end()))->release());
  add_category_prefix(parser, prefix);
}

}  // namespace autocat
