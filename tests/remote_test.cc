// Search, category filters and exact multi-valued facet counts over a
// Xapian::Database made of two local shards and two remote shards served by
// real, stock xapian-tcpsrv processes on 127.0.0.1, checked against brute
// force over the shards read directly; and the same through `autocat search`
// with several --db and a stub file.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xapian.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "autocat/category_indexer.h"
#include "autocat/facets.h"
#include "classify/train/trainer.h"
#include "tests/cli_test_util.h"
#include "tests/test_util.h"

namespace autocat {
namespace {

const char kTcpServer[] = AUTOCAT_XAPIAN_TCPSRV;
constexpr int kShards = 4;  // 0, 1 local; 2, 3 remote

const char* const kTexts[] = {
    "The football team scored a late goal to win the league match.",
    "She trained every morning to run faster in the race.",
    "The referee showed a red card and the team played with ten men.",
    "The researchers used a microscope to observe bacteria in the experiment.",
    "A new study measured the energy of particles in the detector.",
    "Scientists tested the theory with data from the telescope.",
    "Fry the garlic in olive oil and add the tomato sauce to the pasta.",
    "The cake needs butter, sugar, eggs and flour before baking.",
    "Season the soup with salt and pepper and serve it with bread.",
    "The team chef cooked pasta with tomato sauce for the players after the match.",
    "A lab experiment measured how heat changes the taste of bread and butter.",
    "Zzyzx qwerty.",
};

// A port nothing listens on now (the kernel's choice for port 0).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t size = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

// One stock xapian-tcpsrv serving `db` read-only on 127.0.0.1; killed when
// destroyed.
class TcpServer {
 public:
  explicit TcpServer(const std::string& db) {
    for (int attempt = 0; attempt < 5 && pid_ <= 0; ++attempt) start(db);
  }
  ~TcpServer() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
      // A connection handler forked as the SIGTERM arrived can inherit it
      // blocked and outlive the server, holding ctest's output pipe open
      // (the suite then waits forever): nothing of its group may remain.
      ::kill(-pid_, SIGKILL);
    }
  }
  TcpServer(const TcpServer&) = delete;
  TcpServer& operator=(const TcpServer&) = delete;
  int port() const { return pid_ > 0 ? port_ : -1; }

 private:
  void start(const std::string& db) {
    port_ = free_port();
    if (port_ <= 0) return;
    const std::string port = std::to_string(port_);
    const pid_t pid = ::fork();
    if (pid == 0) {
      // Its own process group: on SIGTERM xapian-tcpsrv kills its whole group.
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // and it dies with the test, however that ends
      ::execl(kTcpServer, kTcpServer, "--interface", "127.0.0.1", "--port", port.c_str(), "--quiet",
              db.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    if (pid < 0) return;
    // Wait until it answers (or gives up: the port was taken meanwhile).
    for (int i = 0; i < 100; ++i) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) return;
      try {
        Xapian::Remote::open("127.0.0.1", static_cast<unsigned>(port_), 1000).get_doccount();
        pid_ = pid;
        return;
      } catch (const Xapian::NetworkError&) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
    ::kill(pid, SIGTERM);
    ::waitpid(pid, nullptr, 0);
  }

  pid_t pid_ = -1;
  int port_ = -1;
};

class RemoteTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    temp_dir_ = new testing_util::TempDir();
    const std::string model_dir = temp_dir_->file("model");
    internal::ReadOptions read_options;
    read_options.split = "train";
    TrainOptions train_options;
    train_options.knn_k = 50;
    train_options.knn_similarity_power = 1;
    internal::train_model({testing_util::test_data("fixture_train.jsonl")}, model_dir,
                          train_options, read_options, [](const std::string&) {});
    IndexOptions options;  // any-of with a low floor: several documents get two categories
    options.classify.decision = Decision::kAnyOf;
    options.classify.min_score = 0.25;
    options.classify.tuned_thresholds = false;
    CategoryIndexer indexer(model_dir, options);
    std::vector<Xapian::WritableDatabase> shards;
    for (int i = 0; i < kShards; ++i) {
      shards.emplace_back(shard_path(i), Xapian::DB_CREATE);
    }
    // Each document goes to the shard its id hashes to, so replacing by id
    // stays within one shard. Three rounds give every shard documents.
    for (int round = 0; round < 3; ++round) {
      for (size_t i = 0; i < std::size(kTexts); ++i) {
        const std::string id = "doc-" + std::to_string(round) + "-" + std::to_string(i);
        const size_t shard = std::hash<std::string>()(id) % kShards;
        indexer.index_document(shards[shard], id, kTexts[i], id);
      }
    }
    for (Xapian::WritableDatabase& shard : shards) {
      shard.set_metadata("autocat:stemmer", "english");
      shard.commit();
    }
  }

  static void TearDownTestSuite() { delete temp_dir_; }

  static std::string shard_path(int i) { return temp_dir_->file("shard" + std::to_string(i)); }

  // Brute force: every document of every shard read directly, its categories
  // from the value slot, counted when `query` matches it in its shard.
  static std::map<std::string, Xapian::doccount> brute_force(const Xapian::Query& query,
                                                             Xapian::doccount* matching) {
    std::map<std::string, Xapian::doccount> counts;
    *matching = 0;
    for (int i = 0; i < kShards; ++i) {
      Xapian::Database shard(shard_path(i));
      Xapian::Enquire enquire(shard);
      enquire.set_query(query);
      const Xapian::MSet all = enquire.get_mset(0, shard.get_doccount());
      for (auto it = all.begin(); it != all.end(); ++it) {
        ++*matching;
        for (const Category& c : decode_categories(it.get_document().get_value(200))) {
          ++counts[c.name];
        }
      }
    }
    return counts;
  }

  static testing_util::TempDir* temp_dir_;
};

testing_util::TempDir* RemoteTest::temp_dir_ = nullptr;

std::map<std::string, Xapian::doccount> as_map(const std::vector<FacetCount>& counts) {
  std::map<std::string, Xapian::doccount> out;
  for (const FacetCount& count : counts) out[count.category] = count.count;
  return out;
}

TEST_F(RemoteTest, FacetCountsOverLocalAndRemoteShardsEqualBruteForce) {
  ASSERT_EQ(::access(kTcpServer, X_OK), 0)
      << kTcpServer << " is missing: install xapian-tools (scripts/install-deps.sh)";
  TcpServer server2(shard_path(2));
  TcpServer server3(shard_path(3));
  ASSERT_GT(server2.port(), 0) << "could not start " << kTcpServer;
  ASSERT_GT(server3.port(), 0) << "could not start " << kTcpServer;

  Xapian::Database db(shard_path(0));
  db.add_database(Xapian::Database(shard_path(1)));
  db.add_database(Xapian::Remote::open("127.0.0.1", static_cast<unsigned>(server2.port())));
  db.add_database(Xapian::Remote::open("127.0.0.1", static_cast<unsigned>(server3.port())));
  ASSERT_EQ(db.get_doccount(), 3 * std::size(kTexts));

  // The MatchSpy route fails on a stock server: nothing is registered there.
  {
    Xapian::Enquire enquire(db);
    enquire.set_query(Xapian::Query("team"));
    CategoryFacetSpy spy;
    enquire.add_matchspy(&spy);
    EXPECT_THROW(enquire.get_mset(0, 10), Xapian::Error);
  }

  Xapian::QueryParser parser;
  parser.set_database(db);
  configure_query_parser(parser, "english");
  for (const std::string text : {"", "team", "the", "pasta OR experiment", "category:food",
                                 "butter category:science", "\"tomato sauce\"", "nosuchword"}) {
    const Xapian::Query query = text.empty() ? Xapian::Query(Xapian::Query::MatchAll)
                                             : parser.parse_query(text, kQueryParserFlags);
    Xapian::doccount expected_matching = 0;
    const auto expected = brute_force(query, &expected_matching);
    Xapian::doccount matching = 0;
    EXPECT_EQ(as_map(category_counts(db, query, &matching)), expected) << text;
    EXPECT_EQ(matching, expected_matching) << text;
  }
  // Collection-wide counts and filtered search across the four shards.
  Xapian::doccount all = 0;
  EXPECT_EQ(as_map(collection_category_counts(db)), brute_force(Xapian::Query::MatchAll, &all));
  Xapian::Enquire enquire(db);
  enquire.set_query(category_filter(Xapian::Query("team"), {"sports"}));
  Xapian::doccount sports_team = 0;
  brute_force(category_filter(Xapian::Query("team"), {"sports"}), &sports_team);
  EXPECT_EQ(enquire.get_mset(0, 100).size(), sports_team);
  EXPECT_GT(sports_team, 0u);

  // The CLI: two local --db plus a stub file naming both remote servers.
  const std::string stub = temp_dir_->file("remote.stub");
  std::ofstream(stub) << "remote 127.0.0.1:" << server2.port()
                      << "\nremote 127.0.0.1:" << server3.port() << "\n";
  const testing_util::CliResult result =
      testing_util::run_autocat({"search", "--db", shard_path(0), "--db", shard_path(1), "--db",
                                 stub, "--facets", "--json", "--limit", "100", "team"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const internal::Json json = testing_util::json(result.out);
  std::map<std::string, Xapian::doccount> cli_counts;
  for (const internal::Json& entry : json.at("facets")) {
    cli_counts[entry.at("category").get<std::string>()] =
        static_cast<Xapian::doccount>(entry.at("count").get<double>());
  }
  Xapian::doccount team = 0;
  EXPECT_EQ(cli_counts, brute_force(Xapian::Query("team"), &team));
  EXPECT_EQ(json.at("results").size(), team);
  EXPECT_EQ(json.at("facet_documents").get<double>(), team);

  // Filtering or sorting by a category's score needs Xapian to run autocat's
  // code on every shard, which a stock server cannot: Xapian refuses, and
  // the CLI says so in one line rather than answer for part of the index.
  EXPECT_THROW(category_counts(db, Xapian::Query("team"), CategoryScoreDecider({"sports"}, 0.5)),
               Xapian::UnimplementedError);
  for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{
           {"--category", "sports", "--min-score", "0.5"},
           {"--sort-by-score", "sports"},
           {"--category", "sports", "--min-score", "0.5", "--facets", "--sort-by-score", "food"}}) {
    std::vector<std::string> args = {"search", "--db", shard_path(0), "--db", stub};
    args.insert(args.end(), extra.begin(), extra.end());
    const testing_util::CliResult refused = testing_util::run_autocat(args);
    EXPECT_EQ(refused.exit_code, 2) << extra[0];
    EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
    EXPECT_NE(refused.err.find(" on local databases only"), std::string::npos) << refused.err;
    // The line names the options that cannot go there.
    const std::string named = extra.back() == "food"     ? "--min-score and --sort-by-score work"
                              : extra[0] == "--category" ? "--min-score works"
                                                         : "--sort-by-score works";
    EXPECT_NE(refused.err.find(named), std::string::npos) << refused.err;
    EXPECT_EQ(refused.out, "");
  }
}

}  // namespace
}  // namespace autocat
