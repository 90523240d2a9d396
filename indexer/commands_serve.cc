// autocat serve: the editor's loop in a browser. An HTTP server (cpp-httplib)
// over one index and one model: search with category facets, a document and
// why it got its categories, one-click corrections written to the index and
// taught to the model, and a review queue of the least sure documents.
// The JSON API is described in docs/serve.md.
//
// Readers open the database per request (they see every committed write);
// writes are serialized by one mutex and committed, and taught to the model
// (journaled, fsynced), before the reply. Each request first follows the
// model directory (CategoryIndexer::refresh: a new generation, records
// other processes journaled) and then uses one snapshot of the model for its
// whole reply.
#include <httplib.h>
#include <xapian.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <sstream>
#include <system_error>

#include "autocat/category_indexer.h"
#include "autocat/error.h"
#include "autocat/facets.h"
#include "classify/decide/categorizer.h"
#include "classify/decide/explain.h"
#include "classify/io/json_text.h"
#include "classify/text/analyzer.h"
#include "indexer/commands.h"
#include "indexer/explain_json.h"
#include "indexer/http_gate.h"
#include "indexer/http_json.h"
#include "indexer/index_transaction.h"
#include "indexer/relabel.h"
#include "indexer/review_queue.h"
#include "indexer/search_metadata.h"
#include "indexer/serve_page.h"
#include "plugin/indexer_access.h"

namespace autocat::cli {

namespace {

const char kUsage[] =
    "usage: autocat serve --db DB --model DIR [--listen HOST:PORT] [--read-only]\n"
    "                     [--token-file F | --tokens F] [--public-read]\n"
    "                     [--allow-host NAME]... [--request-timeout S]\n"
    "\n"
    "Serves the index DB (written by autocat index) and the model DIR over HTTP:\n"
    "a page at / to search with category facets, open a document, correct its\n"
    "categories and work through a review queue of the least sure documents, and\n"
    "the JSON API the page uses (docs/serve.md). A correction is written to DB\n"
    "(category terms and value slot) and taught to the model (autocat learn,\n"
    "journaled) before the reply. Every request needs the token printed at start:\n"
    "open the address printed (http://HOST:PORT/?token=TOKEN) in a browser to sign\n"
    "in, or send \"Authorization: Bearer TOKEN\". Prints \"listening on\n"
    "http://HOST:PORT/?token=TOKEN\" and \"token: TOKEN\", then serves until killed.\n";

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
                "the token is the first line of F (default: a random one, printed)");
  options.value("--tokens", "F",
                "one token per editor: lines NAME TOKEN in F (instead of --token-file)");
  options.flag("--public-read", "let reads (GET) through without a token; writes still need one");
  options.values("--allow-host", "NAME",
                 "also accept requests for Host NAME (repeatable; default: the --listen "
                 "address and localhost)");
  options.value("--request-timeout", "S",
                "seconds a client has to send a request's headers and body (default 10)");
}

// The review queue looks at most at this many documents.
constexpr Xapian::doccount kReviewScanLimit = 200000;
// The longest stored text a document view carries.
constexpr size_t kMaxTextBytes = 100 * 1024;
// Category scores shown in a document's explanation (the page numbers them 1-9).
constexpr size_t kExplainTop = 9;
constexpr int64_t kMaxLimit = 1000;
// Longest request body read (a correction is a short list of names).
constexpr size_t kMaxBodyBytes = 1 << 20;
// Documents one POST /api/bulk may correct.
constexpr size_t kMaxBulk = 10000;

// The model a request uses: the snapshot wrap() pinned for the request on
// its thread, else (outside a request) the server's current one. Reads as a
// pointer, so every use in a reply sees one model generation.
class RequestModel {
 public:
  void reset(std::unique_ptr<CategoryIndexer> current) { current_ = std::move(current); }
  CategoryIndexer* operator->() const { return get(); }
  CategoryIndexer& operator*() const { return *get(); }
  CategoryIndexer& current() const { return *current_; }

  // Pins a snapshot of the current model for this thread until destroyed.
  class Pin {
   public:
    Pin(const RequestModel& model, std::unique_ptr<CategoryIndexer> snapshot)
        : snapshot_(std::move(snapshot)) {
      pinned_ = Pinned{&model, snapshot_.get()};
    }
    ~Pin() { pinned_ = Pinned{}; }
    Pin(const Pin&) = delete;
    Pin& operator=(const Pin&) = delete;

   private:
    std::unique_ptr<CategoryIndexer> snapshot_;
  };

 private:
  struct Pinned {
    const RequestModel* owner = nullptr;
    CategoryIndexer* model = nullptr;
  };
  CategoryIndexer* get() const { return pinned_.owner == this ? pinned_.model : current_.get(); }
  static thread_local Pinned pinned_;
  std::unique_ptr<CategoryIndexer> current_;
};

thread_local RequestModel::Pinned RequestModel::pinned_;

class Server {
 public:
  Server(std::string db_path, const std::string& model_dir, bool read_only)
      : db_path_(std::move(db_path)), model_dir_(model_dir), read_only_(read_only) {
    const Xapian::Database db = open();
    metadata_ = read_search_metadata(db);
    text_slot_ = stored_text_slot(metadata_);
    indexer_.reset(std::make_unique<CategoryIndexer>(model_dir, relabel_index_options(metadata_)));
    ReviewQueueOptions queue_options;
    queue_options.category_slot = slot();
    queue_options.text_slot = text_slot_;
    queue_options.scan_limit = kReviewScanLimit;
    queue_ = std::make_unique<ReviewQueue>(
        db_path_, queue_options,
        // On the queue's thread: the server's current model, which corrections teach.
        [this](const std::string& text) { return indexer_->score(text); });
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
    // Signing in (/?token=) and the Content-Security-Policy are the gate's
    // (http_gate.h).
    http.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_header("Cache-Control", "no-store");
      res.set_header("X-Content-Type-Options", "nosniff");
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
    http.Get("/api/info", wrap([this](const httplib::Request&, httplib::Response& res) {
               reply_json(res, 200, info());
             }));
    http.Get("/api/review", wrap([this](const httplib::Request& req, httplib::Response& res) {
               reply_json(res, 200, review(req));
             }));
    http.Put(R"(/api/documents/(.+)/categories)",
             wrap([this](const httplib::Request& req, httplib::Response& res) {
               reply_json(res, 200, correct(req, req.matches[1]));
             }));
    http.Get("/api/corrections", wrap([this](const httplib::Request& req, httplib::Response& res) {
               reply_json(res, 200, corrections(req));
             }));
    http.Delete(R"(/api/corrections/([^/]+))",
                wrap([this](const httplib::Request& req, httplib::Response& res) {
                  reply_json(res, 200, undo(req, req.matches[1]));
                }));
    http.Post("/api/bulk", wrap([this](const httplib::Request& req, httplib::Response& res) {
                reply_json(res, 200, bulk(req));
              }));
    http.Get("/api/stats", wrap([this](const httplib::Request&, httplib::Response& res) {
               reply_json(res, 200, stats());
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
                        "; the routes: GET /api/search, /api/categories, /api/info, /api/review, "
                        "/api/documents/ID, /api/corrections, /api/stats; PUT "
                        "/api/documents/ID/categories; POST /api/bulk; DELETE "
                        "/api/corrections/SEQ (docs/serve.md)"
                  : "the request could not be served (HTTP " + std::to_string(res.status) + ")");
          return httplib::Server::HandlerResponse::Handled;
        }));
  }

 private:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

  // Turns every failure into a JSON error reply.
  Handler wrap(Handler handler) {
    return [this, handler](const httplib::Request& req, httplib::Response& res) {
      const RequestModel::Pin model = pin_model();
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

  // Follows the model directory (a new generation, others' journal
  // records), then pins the model for this request. A directory that cannot
  // be followed now (being replaced, a damaged journal) is reported, once
  // per message, and the model held so far keeps serving.
  RequestModel::Pin pin_model() const {
    try {
      if (indexer_.current().refresh()) warn_model();
    } catch (const Error& e) {
      const std::lock_guard<std::mutex> lock(warn_mutex_);
      if (e.what() != last_refresh_error_) {
        last_refresh_error_ = e.what();
        std::cerr << "autocat: warning: " << e.what() << " (serving the model opened before)\n";
      }
    }
    return RequestModel::Pin(indexer_, indexer_.current().snapshot());
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
      return find_document(db, std::string(), stored_id(db, id));
    } catch (const NotFoundError&) {
      throw HttpError{404, "no document has the id '" + id + "'"};
    }
  }

  // An id as replies show it: JSON holds only UTF-8, so each byte of a
  // stored id that is not UTF-8 shows as U+FFFD.
  static std::string shown_id(const std::string& stored) {
    std::string quoted;
    internal::append_json_string(stored, &quoted);
    internal::Json shown;
    std::string error;
    internal::parse_json(quoted, &shown, &error);
    return shown.is_string() ? shown.get<std::string>() : stored;
  }

  // The id a document is stored under, for `id` as replies show it, so that
  // a document whose id is not UTF-8 can be opened and corrected by the id
  // it is listed with. `id` itself when a document has it or none shows as
  // it; two stored ids shown alike are a 409.
  static std::string stored_id(const Xapian::Database& db, const std::string& id) {
    static const std::string kReplacement = "\xEF\xBF\xBD";  // U+FFFD
    if (id.find(kReplacement) == std::string::npos || db.term_exists(kIdPrefix + id)) return id;
    std::string found;
    for (Xapian::TermIterator it = db.allterms_begin(kIdPrefix); it != db.allterms_end(kIdPrefix);
         ++it) {
      const std::string candidate = (*it).substr(kIdPrefix.size());
      if (internal::is_valid_utf8(candidate) || shown_id(candidate) != id) continue;
      if (!found.empty()) {
        throw HttpError{409, "two documents' ids show as '" + id +
                                 "' (they are not UTF-8): correct them with autocat relabel"};
      }
      found = candidate;
    }
    return found.empty() ? id : found;
  }

  // The text the model learns from and explains.
  std::string text_of(const Xapian::Document& doc) const { return document_text(doc, text_slot_); }

  internal::Json document_json(const Xapian::Document& doc, bool explain) const {
    internal::Json entry = internal::Json::object();
    entry["id"] = document_id(doc);
    entry["title"] = doc.get_data();
    entry["categories"] = categories_json(decode_categories(doc.get_value(slot())));
    const std::optional<EditorMark> mark = editor_mark(doc);
    entry["editor_set"] = mark.has_value();
    if (mark) {
      internal::Json editor = internal::Json::object();
      editor["name"] = mark->name;
      editor["at"] = mark->at;
      entry["editor"] = std::move(editor);
    } else {
      entry["editor"] = nullptr;
    }
    if (explain) {
      const std::string text = text_of(doc);
      if (text_slot_ != Xapian::BAD_VALUENO) {
        entry["text"] = internal::utf8_prefix(text, kMaxTextBytes);
        entry["text_truncated"] = text.size() > kMaxTextBytes;
      }
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

  // The model that scored the request's document, with what it learned
  // (corrections included) as a fresh open would replay it.
  std::shared_ptr<const internal::Categorizer> explain_model() const {
    return internal::IndexerAccess::categorizer(*indexer_);
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
      internal::Json explained_json =
          explanation_json(id, explained.explanation, explained.terms, options.classify.k);
      for (auto it = explained_json.begin(); it != explained_json.end(); ++it) {
        if (!explanation.contains(it.key())) explanation[it.key()] = std::move(it.value());
      }
    } catch (const Error& e) {
      explanation["error"] = std::string(e.what());
    }
  }

  // The query of a search (q= parsed as `autocat search` does; blank:
  // every document) filtered to the categories `filter`.
  Xapian::Query parse_search(const Xapian::Database& db, const std::string& raw_query,
                             const std::vector<std::string>& filter) const {
    return category_filter(parse_query(db, raw_query), filter, prefix());
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
    const Xapian::Query query = parse_search(db, raw_query, filter);
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

  // `raw` parsed as autocat search parses a query; blank: every document.
  Xapian::Query parse_query(const Xapian::Database& db, const std::string& raw) const {
    if (raw.find_first_not_of(" \t\n\r\f\v") == std::string::npos) {
      return Xapian::Query::MatchAll;
    }
    Xapian::QueryParser parser;
    parser.set_database(db);
    parser.set_default_op(Xapian::Query::OP_OR);
    configure_query_parser(parser, indexer_->options().stemmer, prefix());
    try {
      return parser.parse_query(raw, kQueryParserFlags);
    } catch (const Xapian::QueryParserError& e) {
      throw HttpError{400, "cannot parse the query: " + e.get_msg()};
    }
  }

  // What the page needs to know about this server and its model.
  internal::Json info() const {
    const std::shared_ptr<const internal::Categorizer> model = explain_model();
    const ClassifyOptions options;
    internal::Json result = internal::Json::object();
    result["read_only"] = read_only_;
    result["decision"] = decision_name(model->decision_mode(options));
    result["other"] = model->other_enabled(options);
    result["method"] = method_name(indexer_->default_method());
    result["text_stored"] = text_slot_ != Xapian::BAD_VALUENO;
    return result;
  }

  // The review queue (indexer/review_queue.h), filtered and paged.
  internal::Json review(const httplib::Request& req) const {
    check_params(req, "/api/review", {"limit", "offset", "category", "q"});
    const auto limit = static_cast<size_t>(int_param(req, "limit", 10, 1, kMaxLimit));
    const auto offset = static_cast<size_t>(int_param(req, "offset", 0, 0, 1000000000));
    ReviewFilter filter;
    for (size_t i = 0; i < req.get_param_value_count("category"); ++i) {
      filter.categories.push_back(req.get_param_value("category", i));
      if (filter.categories.back().empty()) throw HttpError{400, "category= needs a name"};
    }
    const Xapian::Database db = open();
    if (req.has_param("q")) {
      const Xapian::Query query = parse_query(db, req.get_param_value("q"));
      if (query.get_type() != Xapian::Query::LEAF_MATCH_ALL) {
        Xapian::Enquire enquire(db);
        enquire.set_query(query);
        enquire.set_weighting_scheme(Xapian::BoolWeight());
        const Xapian::MSet matches = enquire.get_mset(0, db.get_doccount());
        filter.matching.emplace();
        for (Xapian::MSetIterator it = matches.begin(); it != matches.end(); ++it) {
          filter.matching->insert(*it);
        }
      }
    }
    const ReviewPage page = queue_->page(db, filter, offset, limit);
    internal::Json documents = internal::Json::array();
    for (const ReviewItem& entry : page.items) {
      const Xapian::Document doc = db.get_document(entry.docid);
      internal::Json item = internal::Json::object();
      item["id"] = document_id(doc);
      item["title"] = doc.get_data();
      item["margin"] = entry.margin;
      item["candidates"] = categories_json(entry.candidates);
      item["rescored"] = entry.rescored;
      item["categories"] = categories_json(decode_categories(doc.get_value(slot())));
      documents.push_back(std::move(item));
    }
    const RerankStats stats = queue_->rerank_stats();
    internal::Json rerank = internal::Json::object();
    rerank["runs"] = stats.runs;
    rerank["last_ms"] = stats.last_ms;
    rerank["max_ms"] = stats.max_ms;
    rerank["last_search_ms"] = stats.last_search_ms;
    rerank["last_model_ms"] = stats.last_model_ms;
    rerank["last_rescored"] = stats.last_rescored;
    rerank["last_similar"] = stats.last_similar;
    rerank["last_reordered"] = stats.last_reordered;
    internal::Json result = internal::Json::object();
    result["total"] = page.total;
    result["offset"] = offset;
    result["documents"] = std::move(documents);
    result["rerank"] = std::move(rerank);
    return result;
  }

  // The gate checked the token and names the editor; with --public-read a
  // read may come without one.
  static void check_token(const httplib::Request& req) {
    if (req.get_header_value("X-Autocat-Editor").empty()) {
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
    check_write(req);
    const std::vector<std::string> names = parse_categories(req.body);

    const std::lock_guard<std::mutex> lock(write_mutex_);
    Xapian::WritableDatabase db = open_writable();
    const Xapian::rev before = db.get_revision();
    Correction correction;
    try {
      const CommitRoom room(db_path_, uint64_t{1} << 12);  // a full disk: an error, no abort
      correction =
          correct_document(db, *indexer_, stored_id(db, id), names, correction_options(req));
    } catch (const NotFoundError&) {
      throw HttpError{404, "no document has the id '" + id + "'"};
    } catch (const InvalidArgumentError& e) {
      throw HttpError{400, e.what()};
    }
    warn_model();
    db.close();
    const Xapian::Database reader = open();
    const Xapian::Document doc = find(reader, id);
    queue_->written(reader, before, {doc.get_docid()});
    internal::Json result = document_json(doc, false);
    result["correction"] = correction_to_json(correction);
    return result;
  }

  // Who corrects: the X-Autocat-Editor header (set by the token check), else
  // "editor".
  CorrectionOptions correction_options(const httplib::Request& req) const {
    CorrectionOptions options;
    options.editor = editor_of(req);
    options.text_slot = text_slot_;
    return options;
  }

  static std::string editor_of(const httplib::Request& req) {
    const std::string editor = req.get_header_value("X-Autocat-Editor");
    return editor.empty() ? std::string("editor") : editor;
  }

  static internal::Json correction_to_json(const Correction& correction) {
    internal::Json json;
    std::string error;
    internal::parse_json(correction_json(correction), &json, &error);
    return json;
  }

  // The writes' common gate: the token, then --read-only.
  void check_write(const httplib::Request& req) const {
    check_token(req);
    if (read_only_) throw HttpError{403, "this server is read-only (--read-only)"};
  }

  internal::Json corrections(const httplib::Request& req) const {
    const auto limit = static_cast<uint64_t>(int_param(req, "limit", 50, 0, kMaxLimit));
    const auto offset = static_cast<uint64_t>(int_param(req, "offset", 0, 0, 1000000000));
    const CorrectionPage page = list_corrections(open(), offset, limit);
    internal::Json list = internal::Json::array();
    for (const Correction& correction : page.corrections) {
      list.push_back(correction_to_json(correction));
    }
    internal::Json result = internal::Json::object();
    result["total"] = page.total;
    result["corrections"] = std::move(list);
    return result;
  }

  internal::Json undo(const httplib::Request& req, const std::string& seq_text) {
    check_write(req);
    uint64_t seq = 0;
    const char* end = seq_text.data() + seq_text.size();
    const auto [ptr, ec] = std::from_chars(seq_text.data(), end, seq);
    if (ec != std::errc() || ptr != end || seq == 0) {
      throw HttpError{400, "/api/corrections/" + seq_text +
                               ": give the number (seq) of a correction, from GET "
                               "/api/corrections"};
    }
    const std::lock_guard<std::mutex> lock(write_mutex_);
    Xapian::WritableDatabase db = open_writable();
    const Xapian::rev before = db.get_revision();
    std::vector<Correction> undone;
    try {
      undone = undo_correction(db, *indexer_, seq, editor_of(req), text_slot_);
    } catch (const NotFoundError& e) {
      throw HttpError{404, e.what()};
    } catch (const ConflictError& e) {
      throw HttpError{409, e.what()};
    }
    warn_model();
    db.close();
    const Xapian::Database reader = open();
    internal::Json records = internal::Json::array();
    internal::Json documents = internal::Json::array();
    std::vector<Xapian::docid> written;
    for (const Correction& correction : undone) {
      records.push_back(correction_to_json(correction));
      const Xapian::Document doc = find(reader, correction.id);
      written.push_back(doc.get_docid());
      documents.push_back(document_json(doc, false));
    }
    queue_->written(reader, before, written);
    internal::Json result = internal::Json::object();
    result["undone"] = std::move(records);
    result["documents"] = std::move(documents);
    return result;
  }

  // The names of the string array `field` of `body` (absent: none).
  static std::vector<std::string> string_list(const internal::Json& body,
                                              const std::string& field) {
    std::vector<std::string> names;
    if (!body.contains(field)) return names;
    if (!body[field].is_array()) throw HttpError{400, "\"" + field + "\" must be a list of names"};
    for (const internal::Json& item : body[field]) {
      if (!item.is_string())
        throw HttpError{400, "each name in \"" + field + "\" must be a string"};
      names.push_back(item.get<std::string>());
    }
    return names;
  }

  // Labels every document a search matches, as one undoable batch, if the
  // caller knows how many that is.
  internal::Json bulk(const httplib::Request& req) {
    check_write(req);
    const std::string usage =
        "the body must be {\"q\": QUERY, \"category\": [...], \"add\": [...], \"remove\": "
        "[...], \"expect\": N}";
    internal::Json body;
    std::string error;
    if (!internal::parse_json(req.body, &body, &error)) {
      throw HttpError{400, "the body is not JSON: " + error};
    }
    if (!body.is_object()) throw HttpError{400, usage};
    for (auto it = body.begin(); it != body.end(); ++it) {
      if (it.key() != "q" && it.key() != "category" && it.key() != "add" && it.key() != "remove" &&
          it.key() != "expect") {
        throw HttpError{400, "unknown field '" + it.key() + "'; " + usage};
      }
    }
    if (body.contains("q") && !body["q"].is_string()) throw HttpError{400, usage};
    if (!body.contains("expect") || !body["expect"].is_number_unsigned()) {
      throw HttpError{400,
                      "\"expect\" must be the number of documents the search matches "
                      "(GET /api/search?exact=1 gives it); " +
                          usage};
    }
    const std::string raw_query = body.value("q", std::string());
    const std::vector<std::string> filter = string_list(body, "category");
    const std::vector<std::string> add = string_list(body, "add");
    const std::vector<std::string> remove = string_list(body, "remove");
    const auto expect = body["expect"].get<uint64_t>();

    const std::lock_guard<std::mutex> lock(write_mutex_);
    Xapian::WritableDatabase db = open_writable();
    const Xapian::rev before = db.get_revision();
    Xapian::Enquire enquire(db);
    enquire.set_query(parse_search(db, raw_query, filter));
    const Xapian::MSet matches = enquire.get_mset(0, db.get_doccount());
    if (matches.size() != expect) {
      throw HttpError{409, "the search matches " + std::to_string(matches.size()) +
                               " documents, not " + std::to_string(expect) +
                               " (\"expect\"); nothing was changed"};
    }
    if (matches.size() > kMaxBulk) {
      throw HttpError{400, "the search matches " + std::to_string(matches.size()) +
                               " documents; a bulk correction takes at most " +
                               std::to_string(kMaxBulk) + ": narrow the search"};
    }
    std::vector<std::string> ids;
    std::vector<Xapian::docid> docids;
    for (Xapian::MSetIterator it = matches.begin(); it != matches.end(); ++it) {
      ids.push_back(document_id(it.get_document()));
      docids.push_back(*it);
    }
    std::vector<Correction> made;
    try {
      const CommitRoom room(db_path_, 4096 * (ids.size() + 1));  // a full disk: no abort
      made = correct_documents(db, *indexer_, ids, add, remove, correction_options(req));
    } catch (const NotFoundError& e) {
      throw HttpError{404, e.what()};
    } catch (const InvalidArgumentError& e) {
      throw HttpError{400, e.what()};
    }
    warn_model();
    db.close();
    queue_->written(open(), before, docids);
    internal::Json records = internal::Json::array();
    for (const Correction& correction : made) records.push_back(correction_to_json(correction));
    internal::Json result = internal::Json::object();
    result["batch"] = made.empty() ? 0 : made.front().batch;
    result["corrected"] = made.size();
    result["corrections"] = std::move(records);
    return result;
  }

  internal::Json stats() const {
    const CorrectionStats stats = correction_stats(open());
    internal::Json result = internal::Json::object();
    result["documents"] = stats.documents;
    result["editor_set"] = stats.editor_set;
    result["queue"] = stats.queue;
    result["agreement"] = stats.agreement ? internal::Json(*stats.agreement) : internal::Json();
    result["agreement_window"] = stats.agreement_window;
    return result;
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
  SearchMetadata metadata_;
  Xapian::valueno text_slot_ = Xapian::BAD_VALUENO;
  RequestModel indexer_;
  std::unique_ptr<ReviewQueue> queue_;
  std::mutex write_mutex_;
  mutable std::mutex warn_mutex_;
  mutable std::string last_refresh_error_;  // guarded by warn_mutex_
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
  GateOptions gate;
  gate.public_read = args.has("public-read");
  gate.request_timeout =
      std::chrono::milliseconds(1000 * args.integer("request-timeout", 10, 1, 3600));
  gate.max_body_bytes = kMaxBodyBytes;
  if (args.has("tokens") && args.has("token-file")) {
    throw UsageError("give --tokens (one token per editor) or --token-file, not both");
  }
  if (args.has("tokens")) {
    gate.editors = read_tokens_file(args.value("tokens"));
  } else {
    gate.editors.push_back({"editor", args.has("token-file")
                                          ? read_token_file(args.value("token-file"))
                                          : random_token()});
  }

  const std::vector<std::string> allowed_hosts = args.values("allow-host");
  check_host_names(allowed_hosts);

  Server server(dbs[0], model_dir, read_only);
  for (const std::string& warning : server.startup_warnings(model_dir)) messages.warning(warning);
  GatedServer http;
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
    messages.warning("serving on " + host +
                     ", not only this machine: requests and tokens cross the network "
                     "unencrypted" +
                     (gate.public_read ? "; anyone who can reach it can read the index" : ""));
  }
  gate.hosts = accepted_hosts(host, port, allowed_hosts);
  gate.port = port;
  const std::string address = "http://" + gate.hosts.front();
  gate.sign_in_address =
      address + "/?token=" + (gate.editors.size() == 1 ? "\u2026" : "YOUR-TOKEN");
  const size_t editors = gate.editors.size();
  const std::string token = gate.editors.front().token;
  http.set_gate(std::move(gate));
  if (args.has("tokens")) {
    out << "listening on " << address << "/\n"
        << "editors: " << editors << " (--tokens " << args.value("tokens") << "); each signs in at "
        << address << "/?token=THEIR-TOKEN\n";
  } else {
    out << "listening on " << address << "/?token=" << percent_encode(token) << '\n'
        << "token: " << token << '\n';
  }
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
