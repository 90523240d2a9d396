// Category terms: how a category name becomes a boolean index term and back.
//
// Thread safety: these functions are thread-safe.
#pragma once

#include <string>

#include "autocat/export.h"
#include "autocat/types.h"

namespace autocat {

// Throws InvalidArgumentError unless `prefix` can be a category prefix: one
// or more capital letters A-Z, not "X" alone (the start of every
// user-defined prefix), not starting with "Q" (unique ids, "Q" + id) or "Z"
// (stemmed text terms), so category terms never collide with those.
AUTOCAT_EXPORT void check_category_prefix(const std::string& prefix);

// The boolean term of category `name`, by Xapian's convention (what
// QueryParser::add_boolean_prefix produces): prefix + ':' + name when the
// prefix is longer than one character and `name` starts with a capital A-Z
// or ':', else prefix + name. "XCsci.med", "XC:Sports", "XC:New York".
AUTOCAT_EXPORT std::string category_term(const std::string& name,
                                         const std::string& prefix = kDefaultCategoryPrefix);

// The category name of `term` if category_term() could have made it with
// `prefix`, else empty ("XCOLORred" is not a category term for "XC").
AUTOCAT_EXPORT std::string category_from_term(const std::string& term,
                                              const std::string& prefix = kDefaultCategoryPrefix);

}  // namespace autocat
