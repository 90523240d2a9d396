// What the JSON API of `autocat serve` needs around cpp-httplib: an error
// that becomes a reply, replies that no browser reads as markup, and the
// checked reading of query parameters.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "classify/io/json_text.h"

namespace autocat::cli {

// Thrown by a route: answered as {"error": message} with `status`.
struct HttpError {
  int status;
  std::string message;
};

// JSON text safe to embed anywhere: '<', '>' and '&' (which appear only
// inside strings) written as \u escapes, so no markup survives a sniffing
// or careless client.
std::string safe_json(const internal::Json& value);

// Replies `body` (safe_json) with `status`, never cached or sniffed.
void reply_json(httplib::Response& res, int status, const internal::Json& body);
// Replies {"error": message} with `status`.
void reply_error(httplib::Response& res, int status, const std::string& message);

// The whole number parameter `name` from `min` to `max`, `fallback` when
// absent. Throws HttpError 400 naming the parameter otherwise.
int64_t int_param(const httplib::Request& req, const std::string& name, int64_t fallback,
                  int64_t min, int64_t max);
// A finite number, or nullopt when the parameter is absent; else 400.
std::optional<double> number_param(const httplib::Request& req, const std::string& name);
// 1/true or 0/false/empty; absent: false; else 400.
bool flag_param(const httplib::Request& req, const std::string& name);
// Refuses (400) a parameter `allowed` does not name: a misspelt filter
// would otherwise be ignored in silence.
void check_params(const httplib::Request& req, const std::string& route,
                  const std::vector<std::string>& allowed);

}  // namespace autocat::cli
