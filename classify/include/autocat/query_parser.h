// Setting up a Xapian::QueryParser for text CategoryIndexer indexed.
//
// Thread safety: these functions are thread-safe; a QueryParser is not.
#pragma once

#include <xapian.h>

#include <string>
#include <vector>

#include "autocat/export.h"
#include "autocat/types.h"

namespace autocat {

// Adds the boolean prefix `category:` (mapped to `prefix`) to a QueryParser:
// plain add_boolean_prefix(), so `category:Sports` and
// `category:"New York"` give the terms category_term() writes.
AUTOCAT_EXPORT void add_category_prefix(Xapian::QueryParser& parser,
                                        const std::string& prefix = kDefaultCategoryPrefix);

// Flags for QueryParser::parse_query on text indexed by CategoryIndexer:
// Xapian's defaults plus CJK n-grams (as the text was indexed).
constexpr unsigned kQueryParserFlags =
    Xapian::QueryParser::FLAG_DEFAULT | Xapian::QueryParser::FLAG_CJK_NGRAM;

// The stopword list configure_query_parser() gives the parser, for
// bindings that set up a QueryParser of their own (Python).
AUTOCAT_EXPORT const std::vector<std::string>& query_stopwords();

// Sets up `parser` the way CategoryIndexer indexed the text with stemmer
// `stemmer` ("english", ..., or "none"): that stemmer with STEM_SOME (stemmed
// words match the "Z" terms), autocat's English stopword list (stopwords are
// dropped from queries outside phrases, as Omega does) and the `category:`
// prefix. Parse with kQueryParserFlags. A stock QueryParser set up the same
// way (C++, Python, Omega) finds the same documents.
// Throws InvalidArgumentError for an unknown stemmer.
AUTOCAT_EXPORT void configure_query_parser(Xapian::QueryParser& parser, const std::string& stemmer,
                                           const std::string& prefix = kDefaultCategoryPrefix);

}  // namespace autocat
