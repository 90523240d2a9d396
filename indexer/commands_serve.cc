// autocat serve: the editor's loop in a browser. An HTTP server (cpp-httplib)
// over one index and one model: search with category facets, a document and
// why it got its categories, one-click corrections written to the index and
// taught to the model, and a review queue of the least sure documents.
// The JSON API is described in docs/serve.md.
//
// Readers open the database per request (they see every committed write);
// writes are serialized by one mutex and committed, and taught to the model
// (journaled, fsynced), before the reply.
#include <httplib.h>
#include <xapian.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <queue>
#include <random>
#include <sstream>
#include <system_error>

#include "autocat/category_indexer.h"
#include "autocat/error.h"
#include "autocat/facets.h"
#include "classify/decide/categorizer.h"
#include "classify/decide/explain.h"
#include "classify/io/json_text.h"
#include "indexer/commands.h"
#include "indexer/explain_json.h"
#include "indexer/relabel.h"
#include "indexer/search_metadata.h"
#include "indexer/serve_page.h"

namespace autocat::cli {

namespace {

const char kUsage[] =
    "usage: autocat serve --db DB --model DIR [--listen HOST:PORT] [--read-only]\n"
    "                     [--token-file F]\n"
    "\n"
    "Serves the index DB (written by autocat index) and the model DIR over HTTP:\n"
    "a page at / to search with category facets, open a document, correct its\n"
    "categories and work through a review queue of the least sure documents, and\n"
    "the JSON API the page uses (docs/serve.md). A correction is written to DB\n"
    "(category terms and value slot) and taught to the model (autocat learn,\n"
    "journaled) before the reply. Writes need the token printed at start\n"
    "(\"Authorization: Bearer TOKEN\"). Prints \"listening on http://HOST:PORT\" and\n"
    "\"token: TOKEN\", then serves until killed.\n";

const char kFooter[] =
    "\n"
    "example:\n"
    "  autocat serve --db news.db --model news.model --listen 127.0.0.1:8080\n";

void define_options(OptionSet& options) {
  options.values("--db", "DB", "Xapian database written by autocat index");
  add_model_option(options, "model directory the corrections teach (written by autocat train)");
  options.value("--listen", "HOST:PORT",
                "address to serve on (default 127.0.0.1:8080; port 0 picks a free one)");
  options.flag("--read-only", "refuse corrections (403)");
  options.value("--token-file", "F",
                "the token writes need is the first line of F (default: a random one, printed)");
}

// Review scans at most this many documents (bounded work per request).
constexpr Xapian::doccount kReviewScanLimit = 200000;
// Category scores shown in a document's explanation.
constexpr size_t kExplainTop = 5;
constexpr int64_t kMaxLimit = 1000;
// Longest request body read (a correction is a short list of names).
constexpr size_t kMaxBodyBytes = 1 << 20;

struct HttpError {
  int status;
  std::string message;
};

// JSON text safe to embed anywhere: '<', '>' and '&' (which appear only
// inside strings) written as \u escapes, so no markup survives a sniffing
// or careless client.
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

std::string random_token() {
  std::random_device device;
  static const char kHex[] = "0123456789abcdef";
  std::string token;
  for (int i = 0; i < 32; ++i) token += kHex[device() % 16];
  return token;
}

std::string read_token_file(const std::string& path) {
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

// Compares in time independent of where the strings differ.
bool same_token(const std::string& given, const std::string& token) {
  unsigned char diff = given.size() == token.size() ? 0 : 1;
  for (size_t i = 0; i < given.size(); ++i) {
    diff |= static_cast<unsigned char>(given[i] ^ token[i % token.size()]);
  }
  return diff == 0;
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

// A finite number, or nullopt when the parameter is absent.
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

class Server {
 public:
  Server(std::string db_path, const std::string& model_dir, bool read_only, std::string token)
      : db_path_(std::move(db_path)),
        model_dir_(model_dir),
        read_only_(read_only),
        token_(std::move(token)) {
    const Xapian::Database db = open();
    metadata_ = read_search_metadata(db);
    text_slot_ = stored_text_slot(metadata_);
    indexer_ = std::make_unique<CategoryIndexer>(model_dir, relabel_index_options(metadata_));
    warn_model();
  }

  // What is odd about serving this index with this model, one line each.
  std::vector<std::string> startup_warnings(const std::string& model_dir) const {
    std::vector<std::string> warnings;
    SearchMetadata wanted = metadata_;
    wanted.model_dir = absolute_model_dir(model_dir);
    wanted.model_fingerprint = indexer_->model_fingerprint();
    for (const std::string& difference : search_metadata_differences(metadata_, wanted)) {
      warnings.push_back(db_path_ + ": " + difference +
                         "; corrections teach --model, the stored categories came from the other");
    }
    if (text_slot_ == Xapian::BAD_VALUENO) {
      warnings.push_back(db_path_ +
                         ": indexed without --store-text, so corrections teach the model the "
                         "document data (the title or the first 200 bytes), not the whole text; "
                         "index with --store-text to teach the whole text");
    }
    return warnings;
  }

  void routes(httplib::Server& http) {
    http.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_header("Cache-Control", "no-store");
      res.set_header("X-Content-Type-Options", "nosniff");
      res.set_header("Content-Security-Policy",
                     "default-src 'none'; script-src 'unsafe-inline'; style-src "
                     "'unsafe-inline'; connect-src 'self'");
      res.set_content(kServePage, "text/html; charset=utf-8");
    });
    http.Get("/api/search", wrap([this](const httplib::Request& req, httplib::Response& res) {
               reply_json(res, 200, search(req));
             }));
    http.Get("/api/categories", wrap([this](const httplib::Request&, httplib::Response& res) {
               internal::Json names = internal::Json::array();
               for (const std::string& name : indexer_->categories()) names.push_back(name);
               internal::Json result = internal::Json::object();
               result["categories"] = std::move(names);
               reply_json(res, 200, result);
             }));
    http.Get("/api/review", wrap([this](const httplib::Request& req, httplib::Response& res) {
               reply_json(res, 200, review(req));
             }));
    http.Put(R"(/api/documents/(.+)/categories)",
             wrap([this](const httplib::Request& req, httplib::Response& res) {
               reply_json(res, 200, correct(req, req.matches[1]));
             }));
    http.Get(R"(/api/documents/(.+))",
             wrap([this](const httplib::Request& req, httplib::Response& res) {
               const Xapian::Database db = open();
               reply_json(res, 200, document_json(find(db, req.matches[1]), true));
             }));
    // httplib answers a request no route matched (an unknown path, or a
    // known path with another method) with an empty 404 and calls this
    // handler for every reply of status 400 or more; ours already carry a
    // JSON body, which is left alone.
    http.set_error_handler(httplib::Server::HandlerWithResponse(
        [](const httplib::Request& req, httplib::Response& res) {
          if (!res.body.empty() || (req.path != "/api" && req.path.rfind("/api/", 0) != 0)) {
            return httplib::Server::HandlerResponse::Unhandled;
          }
          reply_error(
              res, res.status,
              res.status == 404
                  ? "no API route " + req.method + " " + req.path +
                        "; the routes: GET /api/search, /api/categories, /api/review, "
                        "/api/documents/ID; PUT /api/documents/ID/categories (docs/serve.md)"
                  : "the request could not be served (HTTP " + std::to_string(res.status) + ")");
          return httplib::Server::HandlerResponse::Handled;
        }));
  }

 private:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

  // Turns every failure into a JSON error reply.
  Handler wrap(Handler handler) {
    return [handler](const httplib::Request& req, httplib::Response& res) {
      try {
        // A reader that saw two commits go by retries on the new revision.
        for (int attempt = 1;; ++attempt) {
          try {
            handler(req, res);
            break;
          } catch (const Xapian::DatabaseModifiedError&) {
            if (attempt == 3) throw;
          }
        }
      } catch (const HttpError& e) {
        reply_error(res, e.status, e.message);
      } catch (const Xapian::Error& e) {
        reply_error(res, 500, e.get_description());
      } catch (const std::exception& e) {
        reply_error(res, 500, e.what());
      }
    };
  }

  Xapian::Database open() const {
    std::error_code ec;
    if (!std::filesystem::exists(db_path_, ec))
      throw NotFoundError(db_path_ + ": no such database");
    return open_database(db_path_);
  }

  void warn_model() const {
    const std::lock_guard<std::mutex> lock(warn_mutex_);
    for (const std::string& warning : indexer_->take_warnings()) {
      std::cerr << "autocat: warning: " << warning << '\n';
    }
  }

  const std::string& prefix() const { return indexer_->options().category_prefix; }
  Xapian::valueno slot() const { return indexer_->options().category_slot; }

  static std::string document_id(const Xapian::Document& doc) {
    Xapian::TermIterator it = doc.termlist_begin();
    it.skip_to(kIdPrefix);
    if (it != doc.termlist_end() && (*it).rfind(kIdPrefix, 0) == 0) {
      return (*it).substr(kIdPrefix.size());
    }
    return std::string();
  }

  static Xapian::Document find(const Xapian::Database& db, const std::string& id) {
    try {
      return find_document(db, std::string(), id);
    } catch (const NotFoundError&) {
      throw HttpError{404, "no document has the id '" + id + "'"};
    }
  }

  // The text the model learns from and explains.
  std::string text_of(const Xapian::Document& doc) const { return document_text(doc, text_slot_); }

  internal::Json document_json(const Xapian::Document& doc, bool explain) const {
    internal::Json entry = internal::Json::object();
    entry["id"] = document_id(doc);
    entry["title"] = doc.get_data();
    entry["categories"] = categories_json(decode_categories(doc.get_value(slot())));
    if (explain) {
      const std::string text = text_of(doc);
      std::vector<Category> scores = indexer_->score(text);
      if (scores.size() > kExplainTop) scores.resize(kExplainTop);
      internal::Json explanation = internal::Json::object();
      explanation["method"] = method_name(indexer_->default_method());
      explanation["text"] = text_slot_ != Xapian::BAD_VALUENO ? "stored" : "data";
      explanation["assigned"] = categories_json(indexer_->categorize(text));
      explanation["scores"] = categories_json(scores);
      add_explanation(text, entry["id"].get<std::string>(), explanation);
      entry["explanation"] = std::move(explanation);
      warn_model();
    }
    return entry;
  }

  // The model as a fresh open sees it (the journal replayed), as `autocat
  // explain` reads it: opened on the first explanation, and again after a
  // correction taught it something.
  std::shared_ptr<const internal::Categorizer> explain_model() const {
    const std::lock_guard<std::mutex> lock(explain_mutex_);
    const uint64_t corrections = corrections_.load();
    if (!explain_model_ || explain_model_corrections_ != corrections) {
      explain_model_ = std::make_shared<const internal::Categorizer>(model_dir_);
      explain_model_corrections_ = corrections;
    }
    return explain_model_;
  }

  // Adds to `explanation` what `autocat explain --json` says about `text`
  // with the model's default method. A failure (e.g. kNN's training
  // database gone) costs the explanation only: "error" says why.
  void add_explanation(const std::string& text, const std::string& id,
                       internal::Json& explanation) const {
    try {
      const std::shared_ptr<const internal::Categorizer> model = explain_model();
      internal::ExplainOptions options;
      options.classify.k = model->knn_k(options.classify);
      internal::Explainer explainer(*model);  // not thread-safe: one per request
      const ExplainedText explained = explain_text(*model, explainer, text, options);
      model->take_warnings();  // the indexer's model reports the same journal
      internal::Json explained_json =
          explanation_json(id, explained.explanation, explained.terms, options.classify.k);
      for (auto it = explained_json.begin(); it != explained_json.end(); ++it) {
        if (!explanation.contains(it.key())) explanation[it.key()] = std::move(it.value());
      }
    } catch (const Error& e) {
      explanation["error"] = std::string(e.what());
    }
  }

  internal::Json search(const httplib::Request& req) const {
    std::vector<std::string> filter;
    for (size_t i = 0; i < req.get_param_value_count("category"); ++i) {
      filter.push_back(req.get_param_value("category", i));
      if (filter.back().empty()) throw HttpError{400, "category= needs a non-empty name"};
    }
    const bool facets = flag_param(req, "facets");
    const bool exact = flag_param(req, "exact");
    const auto offset = static_cast<Xapian::doccount>(int_param(req, "offset", 0, 0, 1000000000));
    const auto limit = static_cast<Xapian::doccount>(int_param(req, "limit", 10, 0, kMaxLimit));
    const std::string raw_query = req.has_param("q") ? req.get_param_value("q") : "";
    const std::optional<double> min_score = number_param(req, "min_score");
    if (min_score && filter.empty()) {
      throw HttpError{400, "min_score= needs category=: the score of which category"};
    }
    std::string sort_category;
    if (req.has_param("sort")) {
      const std::string sort = req.get_param_value("sort");
      const std::string score = "score:";
      if (sort.rfind(score, 0) == 0 && sort.size() > score.size()) {
        sort_category = sort.substr(score.size());
      } else if (sort != "relevance") {
        throw HttpError{400, "sort=" + sort + ": give score:CATEGORY or relevance"};
      }
    }

    const Xapian::Database db = open();
    Xapian::Query query = Xapian::Query::MatchAll;
    if (raw_query.find_first_not_of(" \t\n\r\f\v") != std::string::npos) {
      Xapian::QueryParser parser;
      parser.set_database(db);
      parser.set_default_op(Xapian::Query::OP_OR);
      configure_query_parser(parser, indexer_->options().stemmer, prefix());
      try {
        query = parser.parse_query(raw_query, kQueryParserFlags);
      } catch (const Xapian::QueryParserError& e) {
        throw HttpError{400, "cannot parse the query: " + e.get_msg()};
      }
    }
    query = category_filter(query, filter, prefix());
    Xapian::Enquire enquire(db);
    enquire.set_query(query);
    // The served index is one local database, where Xapian runs a decider
    // and a key maker (it refuses them only for remote shards).
    std::optional<CategoryScoreDecider> decider;
    if (min_score) decider.emplace(filter, *min_score, slot());
    std::optional<CategoryScoreKeyMaker> key_maker;
    if (!sort_category.empty()) {
      key_maker.emplace(sort_category, slot());
      enquire.set_sort_by_key_then_relevance(&*key_maker, /*reverse=*/true);
    }
    const Xapian::MSet matches =
        enquire.get_mset(offset, limit, facets || exact ? db.get_doccount() : 0, nullptr,
                         decider ? &*decider : nullptr);

    internal::Json result = internal::Json::object();
    result["matches"] = internal::Json(matches.get_matches_estimated());
    result["exact"] = matches.get_matches_lower_bound() == matches.get_matches_upper_bound();
    internal::Json documents = internal::Json::array();
    for (Xapian::MSetIterator it = matches.begin(); it != matches.end(); ++it) {
      documents.push_back(document_json(it.get_document(), false));
    }
    result["documents"] = std::move(documents);
    internal::Json facet_list = internal::Json::array();
    if (facets) {
      // With min_score the counts cover only the documents it keeps.
      const std::vector<FacetCount> counts =
          decider ? category_counts(db, query, *decider, nullptr, slot())
                  : category_counts(db, query, nullptr, prefix());
      for (const FacetCount& count : counts) {
        internal::Json entry = internal::Json::object();
        entry["name"] = count.category;
        entry["count"] = count.count;
        facet_list.push_back(std::move(entry));
      }
    }
    result["facets"] = std::move(facet_list);
    return result;
  }

  // The documents whose two best stored scores are closest (one category:
  // its score; none: 0), least sure first; ties by docid.
  internal::Json review(const httplib::Request& req) const {
    const auto limit = static_cast<size_t>(int_param(req, "limit", 10, 1, kMaxLimit));
    const Xapian::Database db = open();
    using Entry = std::pair<double, Xapian::docid>;
    std::priority_queue<Entry> worst;  // the largest margin kept on top, to be dropped
    Xapian::doccount scanned = 0;
    for (Xapian::PostingIterator it = db.postlist_begin(""); it != db.postlist_end("");
         ++it, ++scanned) {
      if (scanned == kReviewScanLimit) break;
      const Xapian::Document doc = db.get_document(*it);
      std::vector<Category> categories = decode_categories(doc.get_value(slot()));
      std::sort(categories.begin(), categories.end(),
                [](const Category& a, const Category& b) { return a.score > b.score; });
      double margin = 0;
      if (categories.size() == 1) margin = categories[0].score;
      if (categories.size() >= 2) margin = categories[0].score - categories[1].score;
      worst.emplace(margin, *it);
      if (worst.size() > limit) worst.pop();
    }
    std::vector<Entry> chosen;
    for (; !worst.empty(); worst.pop()) chosen.push_back(worst.top());
    std::reverse(chosen.begin(), chosen.end());
    internal::Json documents = internal::Json::array();
    for (const Entry& entry : chosen) {
      const Xapian::Document doc = db.get_document(entry.second);
      internal::Json item = internal::Json::object();
      item["id"] = document_id(doc);
      item["title"] = doc.get_data();
      item["margin"] = entry.first;
      item["categories"] = categories_json(decode_categories(doc.get_value(slot())));
      documents.push_back(std::move(item));
    }
    internal::Json result = internal::Json::object();
    result["documents"] = std::move(documents);
    return result;
  }

  void check_token(const httplib::Request& req) const {
    const std::string header = req.get_header_value("Authorization");
    const std::string bearer = "Bearer ";
    if (header.rfind(bearer, 0) != 0 || !same_token(header.substr(bearer.size()), token_)) {
      throw HttpError{401, "give the token printed at start: Authorization: Bearer TOKEN"};
    }
  }

  std::vector<std::string> parse_categories(const std::string& body) const {
    internal::Json value;
    std::string error;
    if (!internal::parse_json(body, &value, &error)) {
      throw HttpError{400, "the body is not JSON: " + error};
    }
    if (!value.is_object()) throw HttpError{400, "the body must be {\"categories\": [...]}"};
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (it.key() != "categories") {
        throw HttpError{
            400, "unknown field '" + it.key() + "'; the body must be {\"categories\": [...]}"};
      }
    }
    if (!value.contains("categories") || !value["categories"].is_array()) {
      throw HttpError{400, "the body must be {\"categories\": [...]}"};
    }
    std::vector<std::string> names;
    for (const internal::Json& item : value["categories"]) {
      if (!item.is_string()) throw HttpError{400, "each category must be a string"};
      names.push_back(item.get<std::string>());
    }
    try {
      return known_categories(*indexer_, names);
    } catch (const InvalidArgumentError& e) {
      throw HttpError{400, e.what()};
    }
  }

  internal::Json correct(const httplib::Request& req, const std::string& id) {
    check_token(req);
    if (read_only_) throw HttpError{403, "this server is read-only (--read-only)"};
    const std::vector<std::string> names = parse_categories(req.body);

    const std::lock_guard<std::mutex> lock(write_mutex_);
    Xapian::WritableDatabase db = open_writable();
    Xapian::Document doc;
    // Counted however it ends, once the model may have learned: explanations
    // then reopen the model.
    struct Counted {
      std::atomic<uint64_t>& count;
      ~Counted() { ++count; }
    } counted{corrections_};
    try {
      // Looks the id up before anything is taught.
      doc = relabel_document(db, db_path_, *indexer_, id, names, /*learn=*/true, text_slot_);
    } catch (const NotFoundError&) {
      throw HttpError{404, "no document has the id '" + id + "'"};
    } catch (const InvalidArgumentError& e) {
      throw HttpError{400, e.what()};
    }
    warn_model();
    const Xapian::docid docid = doc.get_docid();
    db.close();
    const Xapian::Database reader = open();
    return document_json(reader.get_document(docid), false);
  }

  Xapian::WritableDatabase open_writable() const {
    try {
      return Xapian::WritableDatabase(db_path_, Xapian::DB_OPEN);
    } catch (const Xapian::DatabaseLockError& e) {
      throw HttpError{503, database_lock_message(db_path_, e)};
    }
  }

  std::string db_path_;
  std::string model_dir_;
  bool read_only_;
  std::string token_;
  SearchMetadata metadata_;
  Xapian::valueno text_slot_ = Xapian::BAD_VALUENO;
  std::unique_ptr<CategoryIndexer> indexer_;
  std::mutex write_mutex_;
  mutable std::mutex warn_mutex_;
  // Corrections taught so far, and the model explanations read (see explain_model()).
  std::atomic<uint64_t> corrections_{0};
  mutable std::mutex explain_mutex_;
  mutable std::shared_ptr<const internal::Categorizer> explain_model_;
  mutable uint64_t explain_model_corrections_ = 0;
};

int run_serve(const ParsedArgs& args, std::ostream& out, Messages& messages) {
  const std::vector<std::string> dbs = args.values("db");
  if (dbs.size() != 1) throw UsageError("give --db DB once: the index to serve");
  const std::string model_dir = args.required("model");
  const std::string listen = args.value("listen", "127.0.0.1:8080");
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    throw UsageError("--listen " + listen + ": give HOST:PORT, e.g. 127.0.0.1:8080");
  }
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  const std::string port_text = listen.substr(colon + 1);
  int port = -1;
  try {
    size_t used = 0;
    port = std::stoi(port_text, &used);
    if (used != port_text.size()) port = -1;
  } catch (const std::exception&) {
    port = -1;
  }
  if (port < 0 || port > 65535) {
    throw UsageError("--listen " + listen + ": the port must be a number from 0 to 65535");
  }
  const bool read_only = args.has("read-only");
  const std::string token =
      args.has("token-file") ? read_token_file(args.value("token-file")) : random_token();

  Server server(dbs[0], model_dir, read_only, token);
  for (const std::string& warning : server.startup_warnings(model_dir)) messages.warning(warning);
  httplib::Server http;
  http.set_payload_max_length(kMaxBodyBytes);
  server.routes(http);
  if (port == 0) {
    port = http.bind_to_any_port(host.c_str());
    if (port < 0) throw IOError("--listen " + listen + ": cannot listen there");
  } else if (!http.bind_to_port(host.c_str(), port)) {
    throw IOError("--listen " + listen +
                  ": cannot listen there (the port is taken, or the address is not this "
                  "machine's)");
  }
  if (host != "127.0.0.1" && host != "localhost" && host != "::1") {
    messages.warning("serving on " + host + ", not only this machine: anyone who can reach it " +
                     "can read the index" + (read_only ? "" : " (writes need the token)"));
  }
  out << "listening on http://" << (host.find(':') != std::string::npos ? "[" + host + "]" : host)
      << ':' << port << '\n'
      << "token: " << token << '\n';
  out.flush();
  if (!http.listen_after_bind()) throw IOError("--listen " + listen + ": the server stopped");
  return 0;
}

}  // namespace

Command serve_command() {
  return {"serve", "a page and JSON API: search, facets, corrections, a review queue",
          kUsage,  define_options,
          kFooter, run_serve};
}

}  // namespace autocat::cli
