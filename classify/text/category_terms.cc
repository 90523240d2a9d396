// Category terms: Xapian's boolean prefix convention, shared by the indexer
// that writes them, the training reader that reads them back and the search
// helpers (plugin/facets.cc).
#include "autocat/category_terms.h"

#include <string>

#include "autocat/error.h"

namespace autocat {

namespace {

bool is_capital(char c) { return c >= 'A' && c <= 'Z'; }

// Xapian's rule (queryparser.lemony, prefix_needs_colon): a ':' separates a
// prefix longer than one character from a value starting with a capital or ':'.
bool needs_colon(const std::string& prefix, const std::string& value) {
  return prefix.size() > 1 && !value.empty() && (is_capital(value[0]) || value[0] == ':');
}

}  // namespace

void check_category_prefix(const std::string& prefix) {
  bool capitals = !prefix.empty();
  for (char c : prefix) capitals = capitals && is_capital(c);
  if (!capitals || prefix == "X" || prefix[0] == 'Q' || prefix[0] == 'Z') {
    throw InvalidArgumentError(
        "category prefix '" + prefix +
        "' is not allowed: use one or more capital letters A-Z (like XC), not X alone and not "
        "starting with Q (reserved for unique ids) or Z (reserved for stemmed terms)");
  }
}

std::string category_term(const std::string& name, const std::string& prefix) {
  return needs_colon(prefix, name) ? prefix + ':' + name : prefix + name;
}

std::string category_from_term(const std::string& term, const std::string& prefix) {
  if (term.size() <= prefix.size() || term.compare(0, prefix.size(), prefix) != 0) return {};
  std::string value = term.substr(prefix.size());
  if (prefix.size() > 1 && value[0] == ':') value.erase(0, 1);
  // Only a value the colon rule reproduces is ours.
  if (value.empty() || category_term(value, prefix) != term) return {};
  return value;
}

}  // namespace autocat
