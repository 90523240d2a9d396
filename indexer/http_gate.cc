#include "indexer/http_gate.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <system_error>
#include <thread>
#include <utility>

#include "autocat/error.h"
#include "indexer/args.h"

namespace autocat::cli {

const char kContentSecurityPolicy[] =
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'";

namespace {

using Clock = std::chrono::steady_clock;

// A reply's time to be written, at most, once the handler is done.
constexpr std::chrono::seconds kWriteTimeout{30};
// After an early refusal, what of the unread request is read and dropped
// (so that closing does not reset the connection before the client reads the
// reply), at most.
constexpr std::chrono::milliseconds kDrainTime{1000};
constexpr size_t kDrainBytes = 4 << 20;
constexpr char kEditorHeader[] = "X-Autocat-Editor";

// Set on the accepting thread while it refuses a connection over the cap.
thread_local bool refusing = false;

// Each connection on a thread of its own, at most `cap` at once: a slow
// client holds only its own thread, for at most the request timeout.
class ConnectionThreads : public httplib::TaskQueue {
 public:
  explicit ConnectionThreads(size_t cap) : cap_(cap) {}

  void enqueue(std::function<void()> fn) override {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (active_ < cap_) {
        ++active_;
        lock.unlock();
        try {
          std::thread([this, fn = std::move(fn)] {
            fn();
            const std::lock_guard<std::mutex> done(mutex_);
            if (--active_ == 0) idle_.notify_all();
          }).detach();
          return;
        } catch (const std::system_error&) {
          lock.lock();
          --active_;
        }
      }
    }
    // Over the cap (or no thread to be had): answered 503 on this thread,
    // without reading.
    refusing = true;
    fn();
    refusing = false;
  }

  void shutdown() override {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [this] { return active_ == 0; });
  }

 private:
  const size_t cap_;
  size_t active_ = 0;
  std::mutex mutex_;
  std::condition_variable idle_;
};

// Rounded up, so that a wait ends at or after the deadline.
int millis_until(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left, 1 << 30));
}

// Waits for `events` on `sock` until `deadline`; false on timeout, error or hang-up
// without the event.
bool wait_for(socket_t sock, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{sock, events, 0};
    const int ready = ::poll(&p, 1, millis_until(deadline));
    if (ready > 0) return (p.revents & (events | POLLHUP | POLLERR)) != 0;
    if (ready == 0) return false;
    if (errno != EINTR) return false;
  }
}

// Writes all of `data` before `deadline`; false if the client went away or is too slow.
bool send_all(socket_t sock, const char* data, size_t size, Clock::time_point deadline) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::send(sock, data + done, size - done, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(sock, POLLOUT, deadline)) return false;
    } else {
      return false;
    }
  }
  return true;
}

// The request as httplib's process_request() reads it; its reply goes to the socket.
class BufferedRequestStream : public httplib::Stream {
 public:
  BufferedRequestStream(socket_t sock, std::string request)
      : sock_(sock), request_(std::move(request)) {}

  bool is_readable() const override { return read_ < request_.size(); }
  bool is_writable() const override {
    return wait_for(sock_, POLLOUT, Clock::now() + kWriteTimeout);
  }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, request_.size() - read_);
    std::memcpy(ptr, request_.data() + read_, n);
    read_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    // The reply's time counts from its first byte, however long the handler took.
    if (!write_deadline_) write_deadline_ = Clock::now() + kWriteTimeout;
    return send_all(sock_, ptr, size, *write_deadline_) ? static_cast<ssize_t>(size) : -1;
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    address(::getpeername, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    address(::getsockname, ip, port);
  }
  socket_t socket() const override { return sock_; }

 private:
  void address(int (*get)(int, sockaddr*, socklen_t*), std::string& ip, int& port) const {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    if (get(sock_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return;
    char host[NI_MAXHOST];
    char serv[NI_MAXSERV];
    if (::getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof(host), serv,
                      sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
      ip = host;
      port = std::atoi(serv);
    }
  }

  socket_t sock_;
  std::string request_;
  size_t read_ = 0;
  std::optional<Clock::time_point> write_deadline_;
};

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return std::string();
  return text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

bool is_token_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

// Compares in time independent of where the strings differ.
bool same_token(const std::string& given, const std::string& token) {
  unsigned char diff = given.size() == token.size() ? 0 : 1;
  for (size_t i = 0; i < given.size(); ++i) {
    diff |= static_cast<unsigned char>(given[i] ^ token[i % token.size()]);
  }
  return diff == 0;
}

// The editor whose token `given` is; every token compared.
const Editor* editor_of(const std::vector<Editor>& editors, const std::string& given) {
  const Editor* found = nullptr;
  for (const Editor& editor : editors) {
    if (same_token(given, editor.token)) found = &editor;
  }
  return found;
}

std::string hex(const std::string& bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> unhex(const std::string& text) {
  if (text.size() % 2 != 0) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < text.size(); i += 2) {
    const int high = hex_digit(text[i]);
    const int low = hex_digit(text[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
  }
  return out;
}

std::string percent_decode(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex_digit(text[i + 1]) >= 0 &&
        hex_digit(text[i + 2]) >= 0) {
      out += static_cast<char>(hex_digit(text[i + 1]) * 16 + hex_digit(text[i + 2]));
      i += 2;
    } else {
      out += text[i] == '+' ? ' ' : text[i];
    }
  }
  return out;
}

// Escaped for a JSON string and for HTML text alike.
std::string escape_text(const std::string& text, bool json) {
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '<') {
      out += json ? "\\u003c" : "&lt;";
    } else if (c == '>') {
      out += json ? "\\u003e" : "&gt;";
    } else if (c == '&') {
      out += json ? "\\u0026" : "&amp;";
    } else if (c == '"') {
      out += json ? "\\\"" : "&quot;";
    } else if (json && c == '\\') {
      out += "\\\\";
    } else if (u < 0x20) {
      if (json) {
        static const char kHex[] = "0123456789abcdef";
        out += "\\u00";
        out += kHex[u >> 4];
        out += kHex[u & 15];
      } else {
        out += ' ';
      }
    } else {
      out += c;
    }
  }
  return out;
}

const char* reason(int status) {
  switch (status) {
    case 303:
      return "See Other";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 408:
      return "Request Timeout";
    case 411:
      return "Length Required";
    case 413:
      return "Payload Too Large";
    case 415:
      return "Unsupported Media Type";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

struct Header {
  std::string name;  // lower case
  std::string value;
  std::string line;  // as sent, without the line end
};

struct RequestHead {
  std::string method;
  std::string target;
  std::string version;
  std::vector<Header> headers;

  std::string path() const { return target.substr(0, target.find('?')); }
  std::string query() const {
    const size_t mark = target.find('?');
    return mark == std::string::npos ? std::string() : target.substr(mark + 1);
  }
  bool is_api() const {
    const std::string p = path();
    return p == "/api" || p.rfind("/api/", 0) == 0;
  }
  bool is_read() const { return method == "GET" || method == "HEAD"; }
  std::vector<const Header*> all(const std::string& name) const {
    std::vector<const Header*> found;
    for (const Header& header : headers) {
      if (header.name == name) found.push_back(&header);
    }
    return found;
  }
};

// Parses the request line and headers (`text` without the blank line);
// false if they are not HTTP/1.x.
bool parse_head(const std::string& text, RequestHead& head) {
  size_t at = 0;
  bool first = true;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    at = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (first) {
      first = false;
      const size_t a = line.find(' ');
      const size_t b = a == std::string::npos ? a : line.find(' ', a + 1);
      if (b == std::string::npos || line.find(' ', b + 1) != std::string::npos) return false;
      head.method = line.substr(0, a);
      head.target = line.substr(a + 1, b - a - 1);
      head.version = line.substr(b + 1);
      if (head.method.empty() ||
          !std::all_of(head.method.begin(), head.method.end(), is_token_char)) {
        return false;
      }
      if (head.target.empty() || head.target[0] != '/') return false;
      if (head.version != "HTTP/1.1" && head.version != "HTTP/1.0") return false;
      continue;
    }
    const size_t colon = line.find(':');
    if (colon == 0 || colon == std::string::npos) return false;
    const std::string name = line.substr(0, colon);
    if (!std::all_of(name.begin(), name.end(), is_token_char)) return false;
    for (char c : line) {
      if (c == '\0' || c == '\r') return false;
    }
    head.headers.push_back({lower(name), trim(line.substr(colon + 1)), line});
  }
  return !first;
}

// One connection's request, read and checked before httplib sees it.
class Gatekeeper {
 public:
  Gatekeeper(const GateOptions& gate, socket_t sock)
      : gate_(gate), sock_(sock), deadline_(Clock::now() + gate.request_timeout) {}

  // The request to hand to httplib, or nullopt once it was answered here.
  std::optional<std::string> read_request() {
    size_t head_end = 0;
    size_t blank = 0;
    if (!read_head(head_end, blank)) return std::nullopt;
    RequestHead head;
    if (!parse_head(buffer_.substr(0, head_end), head)) {
      refuse(400, "the request is not HTTP/1.1: give a request line and headers", false);
      return std::nullopt;
    }
    api_ = head.is_api();
    head_method_ = head.method == "HEAD";

    const std::vector<const Header*> hosts = head.all("host");
    if (hosts.size() != 1) {
      refuse(400, "give one Host header", true);
      return std::nullopt;
    }
    const std::string host = lower(hosts[0]->value);
    if (std::find(gate_.hosts.begin(), gate_.hosts.end(), host) == gate_.hosts.end()) {
      refuse(403,
             "Host '" + hosts[0]->value + "' is not this server's name (" + gate_.hosts.front() +
                 "); a page of another site cannot read it. To reach it by another name, start "
                 "autocat serve with --allow-host NAME",
             true);
      return std::nullopt;
    }

    const Editor* editor = nullptr;
    if (!authenticate(head, editor)) return std::nullopt;

    if (!head.all("transfer-encoding").empty()) {
      refuse(411,
             "send the body with Content-Length: a body in chunks (Transfer-Encoding) is not "
             "accepted",
             true);
      return std::nullopt;
    }
    for (const Header* coding : head.all("content-encoding")) {
      if (lower(coding->value) != "identity") {
        refuse(415,
               "Content-Encoding '" + coding->value +
                   "' is not accepted: send the body as it is (at most " +
                   std::to_string(gate_.max_body_bytes) + " bytes)",
               true);
        return std::nullopt;
      }
    }
    const std::vector<const Header*> lengths = head.all("content-length");
    std::optional<size_t> length;
    for (const Header* header : lengths) {
      const std::string& text = header->value;
      if (text.empty() || text.size() > 18 ||
          !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
          (length && *length != std::stoull(text))) {
        refuse(400, "Content-Length: " + text + ": give the body's length in bytes, once", true);
        return std::nullopt;
      }
      length = std::stoull(text);
    }
    if (!length && (head.method == "PUT" || head.method == "POST" || head.method == "PATCH")) {
      refuse(411, head.method + " needs Content-Length: send the body with its length in bytes",
             true);
      return std::nullopt;
    }
    if (length && *length > gate_.max_body_bytes) {
      refuse(413,
             "the body is " + std::to_string(*length) + " bytes; at most " +
                 std::to_string(gate_.max_body_bytes) + " are accepted",
             true);
      return std::nullopt;
    }

    // The body, now that the request may have one.
    const size_t body_start = head_end + blank;
    const size_t wanted = length.value_or(0);
    for (const Header* expect : head.all("expect")) {
      if (lower(expect->value) == "100-continue" && buffer_.size() - body_start < wanted) {
        static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
        if (!send_all(sock_, kContinue, sizeof(kContinue) - 1, deadline_)) return std::nullopt;
      }
    }
    if (!read_body(body_start + wanted)) return std::nullopt;

    std::string request = head.method + ' ' + head.target + ' ' + head.version + "\r\n";
    for (const Header& header : head.headers) {
      // The editor is ours to say; Expect was answered here.
      if (header.name == lower(kEditorHeader) || header.name == "expect") continue;
      request += header.line + "\r\n";
    }
    if (editor != nullptr) request += std::string(kEditorHeader) + ": " + editor->name + "\r\n";
    request += "\r\n";
    request.append(buffer_, body_start, wanted);
    return request;
  }

  // 503 without reading anything: too many connections. Runs on the
  // accepting thread, so it neither drains nor waits (a new connection's
  // send buffer takes the short reply).
  void refuse_busy() { refuse(503, "too many connections at once; try again in a moment", false); }

 private:
  // Reads up to the blank line that ends the headers.
  bool read_head(size_t& head_end, size_t& blank) {
    size_t scanned = 0;
    for (;;) {
      for (; scanned < buffer_.size(); ++scanned) {
        if (buffer_[scanned] != '\n') continue;
        if (scanned >= 1 && buffer_[scanned - 1] == '\n') {
          head_end = scanned - 1;
          blank = 2;
          return true;
        }
        if (scanned >= 3 && buffer_.compare(scanned - 3, 3, "\r\n\r") == 0) {
          head_end = scanned - 3;
          blank = 4;
          return true;
        }
      }
      if (buffer_.size() >= gate_.max_header_bytes) {
        refuse(431,
               "the request line and headers are longer than " +
                   std::to_string(gate_.max_header_bytes) + " bytes",
               true);
        return false;
      }
      const int got = receive(gate_.max_header_bytes - buffer_.size());
      if (got == 0) return false;
      if (got < 0) {
        if (!buffer_.empty()) {
          refuse(408, "the request took too long to arrive", true);
        }
        return false;
      }
    }
  }

  bool read_body(size_t total) {
    while (buffer_.size() < total) {
      const int got = receive(total - buffer_.size());
      if (got == 0) return false;
      if (got < 0) {
        refuse(408, "the request body took too long to arrive", true);
        return false;
      }
    }
    return true;
  }

  // Appends at most `most` bytes; the count, 0 at the end of input or on an
  // error, -1 when the deadline passed.
  int receive(size_t most) {
    char chunk[16384];
    for (;;) {
      if (!wait_for(sock_, POLLIN, deadline_)) return millis_until(deadline_) == 0 ? -1 : 0;
      const ssize_t n = ::recv(sock_, chunk, std::min(most, sizeof(chunk)), MSG_DONTWAIT);
      if (n > 0) {
        buffer_.append(chunk, static_cast<size_t>(n));
        return static_cast<int>(n);
      }
      if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      return 0;
    }
  }

  // Signs in (GET /?token=), or finds the editor of the request; false once
  // answered here.
  bool authenticate(const RequestHead& head, const Editor*& editor) {
    if (head.is_read() && head.path() == "/") {
      std::optional<std::string> given;
      std::string query = head.query();
      size_t at = 0;
      while (at <= query.size()) {
        size_t end = query.find('&', at);
        if (end == std::string::npos) end = query.size();
        const std::string pair = query.substr(at, end - at);
        if (pair.rfind("token=", 0) == 0) given = percent_decode(pair.substr(6));
        at = end + 1;
      }
      if (given) {
        const Editor* found = editor_of(gate_.editors, *given);
        if (found == nullptr) {
          refuse(401,
                 "This address's token is not one this server accepts. Open the address "
                 "autocat serve printed (" +
                     gate_.sign_in_address + ") to sign in.",
                 true);
          return false;
        }
        std::string reply = "HTTP/1.1 303 See Other\r\nLocation: /\r\n";
        reply += "Set-Cookie: " + cookie_name() + "=" + hex(found->token) +
                 "; HttpOnly; SameSite=Strict; Path=/\r\n";
        reply += common_headers() + "Content-Length: 0\r\n\r\n";
        send_all(sock_, reply.data(), reply.size(), deadline_);
        ::shutdown(sock_, SHUT_WR);
        return false;
      }
    }
    const std::vector<const Header*> authorization = head.all("authorization");
    if (!authorization.empty()) {
      const std::string bearer = "Bearer ";
      const std::string& value = authorization[0]->value;
      if (authorization.size() == 1 && value.rfind(bearer, 0) == 0) {
        editor = editor_of(gate_.editors, trim(value.substr(bearer.size())));
      }
      if (editor == nullptr) {
        refuse(401,
               "the token is wrong: give the token printed at start: Authorization: Bearer TOKEN",
               true);
        return false;
      }
      return true;
    }
    const std::string name = cookie_name();
    for (const Header* cookies : head.all("cookie")) {
      const std::string& text = cookies->value;
      size_t at = 0;
      while (at < text.size()) {
        size_t end = text.find(';', at);
        if (end == std::string::npos) end = text.size();
        const std::string pair = trim(text.substr(at, end - at));
        at = end + 1;
        if (pair.size() > name.size() && pair.compare(0, name.size(), name) == 0 &&
            pair[name.size()] == '=') {
          if (const std::optional<std::string> token = unhex(pair.substr(name.size() + 1))) {
            if (const Editor* found = editor_of(gate_.editors, *token)) editor = found;
          }
        }
      }
    }
    if (editor == nullptr && !(gate_.public_read && head.is_read())) {
      refuse(401,
             api_ ? "give the token printed at start: Authorization: Bearer TOKEN, or open the "
                    "address autocat serve printed (" +
                        gate_.sign_in_address + ") in the browser"
                  : "Open the address autocat serve printed (" + gate_.sign_in_address +
                        ") to sign in.",
             true);
      return false;
    }
    return true;
  }

  std::string cookie_name() const { return "autocat_token_" + std::to_string(gate_.port); }

  static std::string common_headers() {
    return std::string("Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n") +
           "Content-Security-Policy: " + kContentSecurityPolicy +
           "\r\nX-Frame-Options: DENY\r\nReferrer-Policy: no-referrer\r\nConnection: close\r\n";
  }

  // Answers `status` with `message` (JSON under /api/, else a short page),
  // then, if `drain`, reads and drops what the client still sends for a
  // moment, so that the reply is not lost to a reset.
  void refuse(int status, const std::string& message, bool drain) {
    std::string body;
    std::string type;
    if (api_) {
      body = "{\"error\": \"" + escape_text(message, true) + "\"}\n";
      type = "application/json; charset=utf-8";
    } else {
      body = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>autocat: " +
             std::to_string(status) + "</title></head>\n<body><p>" + escape_text(message, false) +
             "</p></body></html>\n";
      type = "text/html; charset=utf-8";
    }
    std::string reply = "HTTP/1.1 " + std::to_string(status) + ' ' + reason(status) + "\r\n";
    reply += common_headers() + "Content-Type: " + type +
             "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    if (!head_method_) reply += body;
    // On the accepting thread, no wait at all.
    const Clock::time_point write_deadline =
        refusing ? Clock::now() : std::max(deadline_, Clock::now() + std::chrono::seconds(2));
    if (!send_all(sock_, reply.data(), reply.size(), write_deadline)) return;
    ::shutdown(sock_, SHUT_WR);
    if (!drain) return;
    const Clock::time_point until = Clock::now() + kDrainTime;
    size_t dropped = 0;
    char chunk[16384];
    while (dropped < kDrainBytes && wait_for(sock_, POLLIN, until)) {
      const ssize_t n = ::recv(sock_, chunk, sizeof(chunk), MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) break;
      if (n > 0) dropped += static_cast<size_t>(n);
    }
  }

  const GateOptions& gate_;
  socket_t sock_;
  Clock::time_point deadline_;
  std::string buffer_;
  bool api_ = false;
  bool head_method_ = false;
};

}  // namespace

GatedServer::GatedServer() {
  new_task_queue = [this] { return new ConnectionThreads(gate_.max_connections); };
}

void GatedServer::set_gate(GateOptions options) {
  gate_ = std::move(options);
  // httplib listens with a backlog of 5: a burst of connections (64 slow
  // clients opening at once) would drop the next one's SYN for a second.
  // listen() again on the bound socket raises it.
  if (svr_sock_ != INVALID_SOCKET) ::listen(svr_sock_, SOMAXCONN);
  // Every reply of httplib's (the page, the API, its 404s) carries these;
  // the gate's own replies write them too.
  set_default_headers({{"Content-Security-Policy", kContentSecurityPolicy},
                       {"X-Frame-Options", "DENY"},
                       {"Referrer-Policy", "no-referrer"}});
}

bool GatedServer::process_and_close_socket(socket_t sock) {
  Gatekeeper gatekeeper(gate_, sock);
  if (refusing) {
    gatekeeper.refuse_busy();
  } else if (std::optional<std::string> request = gatekeeper.read_request()) {
    BufferedRequestStream stream(sock, std::move(*request));
    bool closed = false;
    process_request(stream, /*close_connection=*/true, closed, nullptr);
    ::shutdown(sock, SHUT_WR);
  }
  ::close(sock);
  return true;
}

std::vector<Editor> read_tokens_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InvalidArgumentError(path +
                               ": is a directory, not a tokens file (--tokens): give a file of "
                               "lines NAME TOKEN");
  }
  std::ifstream in(path);
  if (!in) {
    if (!std::filesystem::exists(path, ec)) {
      throw NotFoundError(path + ": no such tokens file (--tokens)");
    }
    throw IOError(path + ": cannot read the tokens file (--tokens): " + std::strerror(errno));
  }
  std::vector<Editor> editors;
  std::vector<size_t> lines;
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string text = trim(line);
    if (text.empty() || text[0] == '#') continue;
    for (char c : text) {
      if (static_cast<unsigned char>(c) < 0x20 && c != '\t') {
        throw InvalidArgumentError(where + "a control character; write NAME TOKEN");
      }
    }
    std::vector<std::string> words;
    size_t at = 0;
    while (at < text.size()) {
      const size_t start = text.find_first_not_of(" \t", at);
      if (start == std::string::npos) break;
      const size_t end = std::min(text.find_first_of(" \t", start), text.size());
      words.push_back(text.substr(start, end - start));
      at = end;
    }
    if (words.size() != 2) {
      throw InvalidArgumentError(where + "give NAME TOKEN (two words), e.g. alice 3f6c0a...; " +
                                 "found " + std::to_string(words.size()));
    }
    for (size_t i = 0; i < editors.size(); ++i) {
      if (editors[i].name == words[0]) {
        throw InvalidArgumentError(where + "'" + words[0] + "' is named again (first on line " +
                                   std::to_string(lines[i]) + "); one line per editor");
      }
      if (editors[i].token == words[1]) {
        throw InvalidArgumentError(where + "'" + words[0] + "' has the token of '" +
                                   editors[i].name + "' (line " + std::to_string(lines[i]) +
                                   "); give each editor their own");
      }
    }
    editors.push_back({words[0], words[1]});
    lines.push_back(number);
  }
  if (in.bad()) {
    throw IOError(path + ": cannot read the tokens file (--tokens): " + std::strerror(errno));
  }
  if (editors.empty()) {
    throw InvalidArgumentError(path + ": no editor in the tokens file (--tokens); write lines " +
                               "NAME TOKEN");
  }
  return editors;
}

std::string read_token_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InvalidArgumentError(path +
                               ": is a directory, not a token file (--token-file): give a file "
                               "whose first line is the token");
  }
  std::ifstream in(path);
  if (!in) throw NotFoundError(path + ": cannot read the token file (--token-file)");
  std::string token;
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ' || token.back() == '\t'))
    token.pop_back();
  if (token.empty() || token.find_first_of(" \t") != std::string::npos) {
    throw InvalidArgumentError(path +
                               ": the first line must be the token (no spaces); write one and "
                               "start again");
  }
  return token;
}

std::string random_token() {
  std::random_device device;
  static const char kHex[] = "0123456789abcdef";
  std::string token;
  for (int i = 0; i < 32; ++i) token += kHex[device() % 16];
  return token;
}

std::vector<std::string> accepted_hosts(const std::string& host, int port,
                                        const std::vector<std::string>& also) {
  const bool any_address = host.empty() || host == "0.0.0.0" || host == "::";
  const std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  std::vector<std::string> names = {any_address ? "127.0.0.1" : shown, "localhost"};
  if (any_address) names.push_back("[::1]");
  names.insert(names.end(), also.begin(), also.end());
  std::vector<std::string> hosts;
  for (const std::string& name : names) {
    const std::string lowered = lower(name);
    const bool has_port = lowered.find(':') != std::string::npos && lowered.back() != ']';
    hosts.push_back(has_port ? lowered : lowered + ":" + std::to_string(port));
    // Browsers leave the default port out.
    if (port == 80 && !has_port) hosts.push_back(lowered);
  }
  return hosts;
}

void check_host_names(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (name.empty() || name.find_first_of(" \t/?#@") != std::string::npos) {
      throw UsageError("--allow-host " + name + ": give a host name, e.g. search.example.org");
    }
  }
}

std::string percent_encode(const std::string& text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace autocat::cli
