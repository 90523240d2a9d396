// The gate of `autocat serve` (indexer/http_gate.h) around a bare route on
// 127.0.0.1: the signed-in editor's name reaches the handler and a client's
// own X-Autocat-Editor never does; connections over the cap get 503 at once;
// --tokens files are read with errors naming the file and line.
// (tests/serve_security_test.py attacks the whole server.)
#include "indexer/http_gate.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "autocat/error.h"
#include "indexer/args.h"
#include "tests/test_util.h"

namespace autocat::cli {
namespace {

using autocat::testing_util::TempDir;
using autocat::testing_util::write_file;

class HttpGateTest : public testing::Test {
 protected:
  void start(bool public_read, size_t max_connections = 256) {
    http_.Get("/who", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content("[" + req.get_header_value("X-Autocat-Editor") + "]", "text/plain");
    });
    port_ = http_.bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    GateOptions gate;
    gate.hosts = {"127.0.0.1:" + std::to_string(port_)};
    gate.editors = {{"alice", "alice-token"}, {"bob", "bob-token"}};
    gate.public_read = public_read;
    gate.request_timeout = std::chrono::seconds(5);
    gate.max_connections = max_connections;
    gate.port = port_;
    gate.sign_in_address = "http://127.0.0.1:" + std::to_string(port_) + "/?token=YOUR-TOKEN";
    http_.set_gate(std::move(gate));
    listener_ = std::thread([this] { http_.listen_after_bind(); });
    while (!http_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

  void TearDown() override {
    if (listener_.joinable()) {
      http_.stop();
      listener_.join();
    }
  }

  int connect_to() const {
    const int sock = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(sock, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    timeval timeout{5, 0};
    ::setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    return sock;
  }

  static std::string read_all(int sock) {
    std::string reply;
    char buffer[4096];
    for (ssize_t n; (n = ::recv(sock, buffer, sizeof(buffer), 0)) > 0;) reply.append(buffer, n);
    return reply;
  }

  // The whole reply to `headers` (after the Host line) on GET /who.
  std::string who(const std::string& headers) const {
    const int sock = connect_to();
    const std::string request =
        "GET /who HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port_) + "\r\n" + headers + "\r\n";
    EXPECT_EQ(::send(sock, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
    std::string reply = read_all(sock);
    ::close(sock);
    return reply;
  }

  GatedServer http_;
  int port_ = 0;
  std::thread listener_;
};

TEST_F(HttpGateTest, TheHandlerSeesTheSignedInEditorNotTheClientsClaim) {
  start(/*public_read=*/false);
  std::string reply = who("Authorization: Bearer bob-token\r\nX-Autocat-Editor: alice\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 200", 0), 0u) << reply;
  EXPECT_NE(reply.find("\r\n\r\n[bob]"), std::string::npos) << reply;
  reply = who("Cookie: other=1; autocat_token_" + std::to_string(port_) + "=" +
              "616c6963652d746f6b656e\r\n");  // "alice-token" in hex
  EXPECT_NE(reply.find("\r\n\r\n[alice]"), std::string::npos) << reply;
  reply = who("X-Autocat-Editor: alice\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 401", 0), 0u) << reply;
}

TEST_F(HttpGateTest, PublicReadsDropTheClientsEditorHeader) {
  start(/*public_read=*/true);
  const std::string reply = who("x-autocat-editor: alice\r\n");
  EXPECT_EQ(reply.rfind("HTTP/1.1 200", 0), 0u) << reply;
  EXPECT_NE(reply.find("\r\n\r\n[]"), std::string::npos) << reply;
}

TEST_F(HttpGateTest, ConnectionsOverTheCapGet503AtOnce) {
  start(/*public_read=*/true, /*max_connections=*/2);
  std::vector<int> held;
  for (int i = 0; i < 2; ++i) {
    held.push_back(connect_to());
    ASSERT_EQ(::send(held.back(), "GET /who HTTP/1.1\r\n", 19, MSG_NOSIGNAL), 19);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto began = std::chrono::steady_clock::now();
  const int third = connect_to();
  const std::string reply = read_all(third);
  ::close(third);
  EXPECT_EQ(reply.rfind("HTTP/1.1 503", 0), 0u) << reply;
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(2));
  for (int sock : held) ::close(sock);
  // A place is free again once a held connection ends.
  std::string again;
  for (int attempt = 0; attempt < 50; ++attempt) {
    again = who("");
    if (again.rfind("HTTP/1.1 200", 0) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(again.rfind("HTTP/1.1 200", 0), 0u) << again;
}

TEST(TokensFileTest, ReadsNamesAndTokensSkippingCommentsAndBlankLines) {
  TempDir dir;
  write_file(dir.file("tokens"), "# editors\n\nalice  a-token\r\n  # away\nbob\tb-token \n");
  const std::vector<Editor> editors = read_tokens_file(dir.file("tokens"));
  ASSERT_EQ(editors.size(), 2u);
  EXPECT_EQ(editors[0].name, "alice");
  EXPECT_EQ(editors[0].token, "a-token");
  EXPECT_EQ(editors[1].name, "bob");
  EXPECT_EQ(editors[1].token, "b-token");
}

TEST(TokensFileTest, ErrorsNameTheFileAndLine) {
  TempDir dir;
  const auto error_of = [&](const std::string& contents) {
    write_file(dir.file("tokens"), contents);
    try {
      read_tokens_file(dir.file("tokens"));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string file = dir.file("tokens");
  EXPECT_EQ(error_of("alice a\nbob\n").rfind(file + ":2: give NAME TOKEN", 0), 0u);
  EXPECT_EQ(error_of("alice a b\n").rfind(file + ":1: give NAME TOKEN", 0), 0u);
  EXPECT_EQ(error_of("alice a\nalice b\n").rfind(file + ":2: 'alice' is named again", 0), 0u);
  EXPECT_EQ(error_of("alice a\nbob a\n").rfind(file + ":2: 'bob' has the token of 'alice'", 0), 0u);
  EXPECT_EQ(error_of("# nobody\n").rfind(file + ": no editor", 0), 0u);
  EXPECT_THROW(read_tokens_file(dir.path()), InvalidArgumentError);
  EXPECT_THROW(read_tokens_file(dir.file("none")), NotFoundError);
}

TEST(AcceptedHostsTest, TheListenAddressLocalhostAndTheNamesAllowed) {
  EXPECT_EQ(accepted_hosts("127.0.0.1", 8080, {"Search.Example", "alias:9000"}),
            (std::vector<std::string>{"127.0.0.1:8080", "localhost:8080", "search.example:8080",
                                      "alias:9000"}));
  EXPECT_EQ(accepted_hosts("::1", 8080, {}),
            (std::vector<std::string>{"[::1]:8080", "localhost:8080"}));
  EXPECT_EQ(accepted_hosts("0.0.0.0", 80, {}),
            (std::vector<std::string>{"127.0.0.1:80", "127.0.0.1", "localhost:80", "localhost",
                                      "[::1]:80", "[::1]"}));
  EXPECT_THROW(check_host_names({"a b"}), UsageError);
  EXPECT_THROW(check_host_names({""}), UsageError);
  EXPECT_NO_THROW(check_host_names({"search.example", "alias:9000"}));
}

}  // namespace
}  // namespace autocat::cli
