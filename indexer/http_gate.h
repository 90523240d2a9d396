// The door of `autocat serve`: every connection is read here, with limits and
// a deadline, before cpp-httplib's routes see it.
//
// cpp-httplib 0.11 reads a request in a pool of eight threads with a timeout
// per recv() only, no limit on the header block or on a chunked or
// compressed body, and reads the body before any handler runs. GatedServer
// gives each connection its own thread (at most `max_connections` at once;
// more get 503 at once), reads the request line and headers itself with
// poll() and one deadline, refuses what the limits exclude before reading
// more (431, 411, 413, 415), checks the Host header and the token before any
// body byte is read (403, 401), then reads the body (at most
// `max_body_bytes`, Content-Length only) and hands the whole request to
// httplib's process_request() through an in-memory stream whose replies go
// to the socket. One request per connection (Connection: close).
//
// Thread-safety: configure (set_gate) between binding and
// listen_after_bind(); the options are only read afterwards.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace autocat::cli {

// Someone who may sign in, and the name handlers see for them.
struct Editor {
  std::string name;   // sent to handlers as X-Autocat-Editor
  std::string token;  // what they give: ?token=, the cookie, or Bearer
};

struct GateOptions {
  // Host header values accepted, "name:port" in lower case ("127.0.0.1:8080").
  std::vector<std::string> hosts;
  // Who may sign in; every request needs one of their tokens.
  std::vector<Editor> editors;
  // GET and HEAD pass without a token (writes still need one).
  bool public_read = false;
  // Time to read one request's headers and body, from the connection's start.
  std::chrono::milliseconds request_timeout{10000};
  // The request line and headers together.
  size_t max_header_bytes = 64 << 10;
  // The body, as sent (content codings are refused, so also as decoded).
  size_t max_body_bytes = 1 << 20;
  // Connections served at once; more are answered 503 and closed.
  size_t max_connections = 256;
  // Names the session cookie (cookies do not tell ports apart).
  int port = 0;
  // The address to sign in at, as the 401 says it ("http://127.0.0.1:8080/?token=…").
  std::string sign_in_address;
};

// "Content-Security-Policy" value of every reply: the page's inline script
// and style run, nothing else loads from elsewhere, no site may frame it.
extern const char kContentSecurityPolicy[];

class GatedServer : public httplib::Server {
 public:
  GatedServer();
  // REQUIRES: called once, after binding and before listen_after_bind();
  // `options.editors` not empty.
  void set_gate(GateOptions options);

 private:
  bool process_and_close_socket(socket_t sock) override;

  GateOptions gate_;
};

// The editors of a --tokens file: lines "NAME TOKEN", '#' comments and blank
// lines ignored. Throws autocat errors naming the file and line.
std::vector<Editor> read_tokens_file(const std::string& path);
// The token of a --token-file: its first line.
std::string read_token_file(const std::string& path);
// 32 random hex digits.
std::string random_token();
// The Host header values a server listening on `host`:`port` accepts, in
// lower case, the address to print first: that address (127.0.0.1 and [::1]
// for a wildcard address), localhost, and each of `also` (NAME takes the port;
// NAME:PORT as written). Requests naming anything else (DNS rebinding) are
// refused.
std::vector<std::string> accepted_hosts(const std::string& host, int port,
                                        const std::vector<std::string>& also);
// Throws UsageError for a --allow-host value that is not a host name.
void check_host_names(const std::vector<std::string>& names);
// `text` with every byte but RFC 3986's unreserved ones %-encoded.
std::string percent_encode(const std::string& text);

}  // namespace autocat::cli
