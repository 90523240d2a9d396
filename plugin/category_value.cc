// The category value slot: "name<TAB>score" entries joined by newlines.
// Category names never hold control characters (training refuses them), so
// the encoding needs no escaping and stays readable in xapian-delve.
#include <cstdio>
#include <cstdlib>

#include "autocat/category_indexer.h"

namespace autocat {

std::string encode_categories(const std::vector<Category>& categories) {
  std::string value;
  char score[32];
  for (const Category& category : categories) {
    if (!value.empty()) value += '\n';
    std::snprintf(score, sizeof score, "%.6g", category.score);
    value += category.name;
    value += '\t';
    value += score;
  }
  return value;
}

std::vector<Category> decode_categories(const std::string& value) {
  std::vector<Category> categories;
  size_t start = 0;
  while (start < value.size()) {
    size_t end = value.find('\n', start);
    if (end == std::string::npos) end = value.size();
    size_t tab = value.find('\t', start);
    Category category;
    if (tab == std::string::npos || tab > end) {
      category.name = value.substr(start, end - start);
    } else {
      category.name = value.substr(start, tab - start);
      category.score = std::strtod(value.substr(tab + 1, end - tab - 1).c_str(), nullptr);
    }
    if (!category.name.empty()) categories.push_back(std::move(category));
    start = end + 1;
  }
  return categories;
}

}  // namespace autocat
