// A small XML well-formedness check for the tests of generated SVG: every
// tag closed in order, attribute values quoted, no bare '<' or '&' in text
// or attributes, only the predefined and numeric entities.
#pragma once

#include <cctype>
#include <string>
#include <vector>

namespace autocat::testing_util {

// Checks an entity reference at text[i] == '&'; returns its length or 0.
inline size_t xml_entity_length(const std::string& text, size_t i) {
  const size_t end = text.find(';', i);
  if (end == std::string::npos || end - i > 10) return 0;
  const std::string name = text.substr(i + 1, end - i - 1);
  if (name == "amp" || name == "lt" || name == "gt" || name == "quot" || name == "apos") {
    return end - i + 1;
  }
  if (name.size() >= 2 && name[0] == '#') {
    for (size_t k = 1; k < name.size(); ++k) {
      if (!std::isdigit(static_cast<unsigned char>(name[k]))) return 0;
    }
    return end - i + 1;
  }
  return 0;
}

// True if `text` (one XML element, optionally after an XML declaration) is
// well-formed; otherwise false with the reason and byte offset in `error`.
inline bool well_formed_xml(const std::string& text, std::string* error) {
  auto fail = [&](const std::string& why, size_t at) {
    *error = why + " at byte " + std::to_string(at);
    return false;
  };
  size_t i = 0;
  if (text.rfind("<?xml", 0) == 0) {
    i = text.find("?>");
    if (i == std::string::npos) return fail("unterminated declaration", 0);
    i += 2;
  }
  std::vector<std::string> open;
  bool seen_root = false;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '&') {
      const size_t length = xml_entity_length(text, i);
      if (length == 0) return fail("bad entity", i);
      i += length;
      continue;
    }
    if (c == '>') return fail("bare '>'", i);
    if (c != '<') {
      if (open.empty() && !std::isspace(static_cast<unsigned char>(c))) {
        return fail("text outside the root element", i);
      }
      ++i;
      continue;
    }
    const bool closing = i + 1 < text.size() && text[i + 1] == '/';
    size_t k = i + (closing ? 2 : 1);
    const size_t name_start = k;
    while (k < text.size() && (std::isalnum(static_cast<unsigned char>(text[k])) ||
                               text[k] == '-' || text[k] == ':' || text[k] == '_')) {
      ++k;
    }
    const std::string name = text.substr(name_start, k - name_start);
    if (name.empty()) return fail("tag without a name", i);
    if (closing) {
      if (k >= text.size() || text[k] != '>') return fail("bad closing tag", i);
      if (open.empty() || open.back() != name) return fail("mismatched </" + name + ">", i);
      open.pop_back();
      i = k + 1;
      continue;
    }
    if (open.empty() && seen_root) return fail("second root element", i);
    seen_root = true;
    // Attributes: name="value" pairs, then > or />.
    for (;;) {
      while (k < text.size() && std::isspace(static_cast<unsigned char>(text[k]))) ++k;
      if (k >= text.size()) return fail("unterminated tag", i);
      if (text[k] == '>') {
        open.push_back(name);
        i = k + 1;
        break;
      }
      if (text.compare(k, 2, "/>") == 0) {
        i = k + 2;
        break;
      }
      const size_t attribute_start = k;
      while (k < text.size() && text[k] != '=' &&
             !std::isspace(static_cast<unsigned char>(text[k])))
        ++k;
      if (k == attribute_start || k + 1 >= text.size() || text[k] != '=' ||
          (text[k + 1] != '"' && text[k + 1] != '\''))
        return fail("attribute without a quoted value", attribute_start);
      const char quote = text[k + 1];
      const size_t value_end = text.find(quote, k + 2);
      if (value_end == std::string::npos) return fail("unterminated attribute", k);
      for (size_t v = k + 2; v < value_end; ++v) {
        if (text[v] == '<') return fail("'<' in an attribute", v);
        if (text[v] == '&' && xml_entity_length(text, v) == 0) return fail("bad entity", v);
      }
      k = value_end + 1;
    }
  }
  if (!open.empty()) return fail("<" + open.back() + "> not closed", text.size());
  if (!seen_root) return fail("no element", 0);
  return true;
}

// How many times `needle` occurs in `text`.
inline size_t count_of(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

}  // namespace autocat::testing_util
