#include "indexer/http_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <exception>
#include <system_error>

namespace autocat::cli {

std::string safe_json(const internal::Json& value) {
  const std::string text = internal::dump_json(value);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else {
      out += c;
    }
  }
  return out;
}

void reply_json(httplib::Response& res, int status, const internal::Json& body) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_content(safe_json(body) + "\n", "application/json; charset=utf-8");
}

void reply_error(httplib::Response& res, int status, const std::string& message) {
  internal::Json body = internal::Json::object();
  body["error"] = message;
  reply_json(res, status, body);
}

int64_t int_param(const httplib::Request& req, const std::string& name, int64_t fallback,
                  int64_t min, int64_t max) {
  if (!req.has_param(name.c_str())) return fallback;
  const std::string text = req.get_param_value(name.c_str());
  int64_t value = 0;
  size_t used = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || value < min || value > max) {
    throw HttpError{400, name + "=" + text + ": give a whole number from " + std::to_string(min) +
                             " to " + std::to_string(max)};
  }
  return value;
}

std::optional<double> number_param(const httplib::Request& req, const std::string& name) {
  if (!req.has_param(name.c_str())) return std::nullopt;
  const std::string text = req.get_param_value(name.c_str());
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) {
    throw HttpError{400, name + "=" + text + ": give a number, e.g. 0.5"};
  }
  return value;
}

bool flag_param(const httplib::Request& req, const std::string& name) {
  if (!req.has_param(name.c_str())) return false;
  const std::string text = req.get_param_value(name.c_str());
  if (text == "1" || text == "true") return true;
  if (text == "0" || text == "false" || text.empty()) return false;
  throw HttpError{400, name + "=" + text + ": give 1 or 0"};
}

void check_params(const httplib::Request& req, const std::string& route,
                  const std::vector<std::string>& allowed) {
  for (const auto& [name, value] : req.params) {
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string names;
      for (const std::string& a : allowed) names += (names.empty() ? "" : ", ") + a;
      throw HttpError{400, route + ": unknown parameter '" + name + "'; it takes " + names};
    }
  }
}

}  // namespace autocat::cli
