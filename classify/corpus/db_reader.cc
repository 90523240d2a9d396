// Labelled documents from a Xapian database: labels from prefixed terms,
// text from the data, a value slot or the terms themselves.
#include "classify/corpus/db_reader.h"

#include <xapian.h>

#include <cctype>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

#include "autocat/category_terms.h"
#include "autocat/error.h"
#include "autocat/query_parser.h"
#include "autocat/types.h"
#include "classify/io/atomic_file.h"

namespace autocat::internal {

namespace {

// What `autocat index` records; read here without depending on the CLI.
const char kIndexStemmerKey[] = "autocat:stemmer";
const char kIndexPrefixKey[] = "autocat:category_prefix";
const char kIndexTextSlotKey[] = "autocat:text_slot";
// A term repeated more often than this in the rebuilt text adds little and
// could make a huge document.
constexpr Xapian::termcount kMaxRepeats = 1000;

bool starts_with_capital(const std::string& term) {
  return !term.empty() && term[0] >= 'A' && term[0] <= 'Z';
}

Xapian::Database open_database(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw NotFoundError(path +
                        ": no such database; give --from-db the directory of a Xapian "
                        "database (such as one written by autocat index --db)");
  }
  try {
    return Xapian::Database(path);
  } catch (const Xapian::DatabaseOpeningError& e) {
    throw InvalidArgumentError(path + ": not a Xapian database (" + e.get_msg() +
                               "); give --from-db the directory of a Xapian database");
  } catch (const Xapian::Error& e) {
    throw IOError(path + ": cannot open the database: " + e.get_description());
  }
}

Xapian::Query parse_filter(const Xapian::Database& db, const DatabaseInput& database) {
  if (database.filter.empty()) return Xapian::Query::MatchAll;
  Xapian::QueryParser parser;
  std::string stemmer = db.get_metadata(kIndexStemmerKey);
  configure_query_parser(parser, stemmer.empty() ? "english" : stemmer, database.label_prefix);
  parser.add_boolean_prefix("label", database.label_prefix);
  parser.add_boolean_prefix("id", kIdPrefix);
  parser.set_database(db);
  try {
    Xapian::Query query = parser.parse_query(
        database.filter, Xapian::QueryParser::FLAG_DEFAULT | Xapian::QueryParser::FLAG_CJK_NGRAM);
    // A filter of boolean terms alone parses to a weightless query: fine.
    return query.empty() ? Xapian::Query::MatchNothing : query;
  } catch (const Xapian::QueryParserError& e) {
    throw InvalidArgumentError(database.path + ": --filter " + database.filter +
                               ": not a valid query: " + e.get_msg() +
                               " (fields: " + kFilterFields + ")");
  }
}

// The document's unprefixed terms, each repeated wdf times: a bag of words
// the analyzer can read again (word order is not kept).
std::string text_from_terms(const Xapian::Document& doc) {
  std::string text;
  for (Xapian::TermIterator it = doc.termlist_begin(); it != doc.termlist_end(); ++it) {
    const std::string term = *it;
    if (starts_with_capital(term)) continue;
    const Xapian::termcount repeats =
        std::min(std::max<Xapian::termcount>(it.get_wdf(), 1), kMaxRepeats);
    for (Xapian::termcount i = 0; i < repeats; ++i) {
      text += term;
      text += ' ';
    }
  }
  return text;
}

// The value slot `autocat index --store-text` recorded in `db`, if any.
std::optional<Xapian::valueno> stored_text_slot(const Xapian::Database& db) {
  const std::string slot_text = db.get_metadata(kIndexTextSlotKey);
  if (!slot_text.empty() && slot_text.size() < 10 &&
      slot_text.find_first_not_of("0123456789") == std::string::npos) {
    return static_cast<Xapian::valueno>(std::stoul(slot_text));
  }
  return std::nullopt;
}

}  // namespace

void read_database_ids(const std::string& path, const std::vector<std::string>& ids,
                       const std::string& label_prefix, DatabaseText text_from,
                       const DocumentCallback& on_document) {
  try {
    Xapian::Database db = open_database(path);
    std::string prefix = label_prefix;
    if (prefix.empty()) prefix = db.get_metadata(kIndexPrefixKey);
    if (prefix.empty()) prefix = kDefaultCategoryPrefix;
    try {
      check_category_prefix(prefix);
    } catch (const InvalidArgumentError& e) {
      throw InvalidArgumentError(path + ": category prefix: " + e.what());
    }
    const std::optional<Xapian::valueno> text_slot = stored_text_slot(db);
    // A learned document is kept in the model: learning a 200-byte snippet
    // in place of the text must be asked for.
    if (text_from == DatabaseText::kStored && !text_slot &&
        !db.get_metadata(kIndexPrefixKey).empty()) {
      throw InvalidArgumentError(
          path +
          ": indexed without --store-text, so its document data is only the title or the "
          "first 200 bytes of each text; learn from the original input (autocat learn --model "
          "DIR FILE), index with --store-text, or pass --text-from terms (the indexed words) or "
          "--text-from data (the snippet); nothing was learned");
    }
    // Every id is found before any document is delivered.
    std::vector<Xapian::docid> docids;
    for (const std::string& id : ids) {
      const std::string term = kIdPrefix + id;
      Xapian::PostingIterator it = db.postlist_begin(term);
      if (id.empty() || it == db.postlist_end(term)) {
        throw NotFoundError(path + ": no document with id '" + id + "' (its unique term Q" + id +
                            "); nothing was learned");
      }
      docids.push_back(*it);
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      const Xapian::Document doc = db.get_document(docids[i]);
      InputDocument input;
      input.id = ids[i];
      input.source = path + "#" + ids[i];
      Xapian::TermIterator term = doc.termlist_begin();
      term.skip_to(prefix);
      for (; term != doc.termlist_end(); ++term) {
        const std::string name = *term;
        if (name.compare(0, prefix.size(), prefix) != 0) break;
        std::string label = category_from_term(name, prefix);
        if (!label.empty()) input.labels.push_back(std::move(label));
      }
      if (input.labels.empty()) {
        throw InvalidArgumentError(path + ": document '" + ids[i] + "' has no category term (" +
                                   prefix +
                                   "...): nothing to learn from it (autocat forget removes a "
                                   "training document); nothing was learned");
      }
      input.labels_given = true;
      if (text_from == DatabaseText::kTerms) {
        input.text = text_from_terms(doc);
      } else if (text_from == DatabaseText::kStored && text_slot) {
        input.text = doc.get_value(*text_slot);
      }
      if (input.text.empty() && text_from != DatabaseText::kTerms) input.text = doc.get_data();
      if (input.text.empty()) {
        throw InvalidArgumentError(path + ": document '" + ids[i] +
                                   "' has no stored text (no --store-text slot, no data); "
                                   "nothing was learned");
      }
      if (on_document) on_document(std::move(input));
    }
  } catch (const Xapian::DatabaseModifiedError& e) {
    throw IOError(path + ": changed while being read (" + e.get_msg() + "); run learn again");
  } catch (const Xapian::NetworkError& e) {
    throw IOError(path + ": lost a remote database (" + e.get_msg() +
                  "); check that its server (xapian-tcpsrv) is running and run again");
  } catch (const Xapian::Error& e) {
    throw IOError(path + ": " + e.get_description());
  }
}

void read_database(const DatabaseInput& database, const DocumentCallback& on_document,
                   const WarningCallback& on_warning) {
  if (database.labelled) {
    try {
      check_category_prefix(database.label_prefix);
    } catch (const InvalidArgumentError& e) {
      throw InvalidArgumentError(database.path + ": --label-prefix: " + e.what());
    }
  }
  try {
    Xapian::Database db = open_database(database.path);
    crash_point("from-db-opened");  // a remote may go away now
    const std::optional<Xapian::valueno> stored_slot = stored_text_slot(db);
    if (database.labelled &&
        db.allterms_begin(database.label_prefix) == db.allterms_end(database.label_prefix)) {
      throw InvalidArgumentError(database.path + ": no document has a term with prefix " +
                                 database.label_prefix +
                                 "; check --label-prefix (autocat index writes XC)");
    }
    // autocat index stores only the title or a 200-byte snippet as data.
    const bool data_only = database.text_from == DatabaseText::kData ||
                           (database.text_from == DatabaseText::kStored && !stored_slot);
    if (data_only && !db.get_metadata(kIndexPrefixKey).empty() && on_warning) {
      on_warning(database.path +
                 ": written by autocat index, whose document data is only the title or the "
                 "first 200 bytes; --text-from terms reads the whole indexed text");
    }
    Xapian::Enquire enquire(db);
    enquire.set_query(parse_filter(db, database));
    enquire.set_weighting_scheme(Xapian::BoolWeight());
    enquire.set_docid_order(Xapian::Enquire::ASCENDING);
    const Xapian::MSet matches = enquire.get_mset(0, db.get_doccount(), db.get_doccount());
    uint64_t labelled = 0;
    for (Xapian::MSetIterator it = matches.begin(); it != matches.end(); ++it) {
      const Xapian::Document doc = it.get_document();
      InputDocument input;
      input.source = database.path + "#" + std::to_string(*it);
      Xapian::TermIterator term = doc.termlist_begin();
      term.skip_to(database.label_prefix);
      for (; database.labelled && term != doc.termlist_end(); ++term) {
        const std::string name = *term;
        if (name.compare(0, database.label_prefix.size(), database.label_prefix) != 0) break;
        std::string label = category_from_term(name, database.label_prefix);
        if (!label.empty()) input.labels.push_back(std::move(label));
      }
      input.labels_given = !input.labels.empty();
      labelled += input.labels_given ? 1 : 0;
      term = doc.termlist_begin();
      term.skip_to(kIdPrefix);
      if (term != doc.termlist_end() && (*term).compare(0, kIdPrefix.size(), kIdPrefix) == 0) {
        input.id = (*term).substr(kIdPrefix.size());
      } else {
        input.id = std::to_string(*it);
      }
      switch (database.text_from) {
        case DatabaseText::kData:
          input.text = doc.get_data();
          break;
        case DatabaseText::kValue:
          input.text = doc.get_value(database.value_slot);
          break;
        case DatabaseText::kTerms:
          input.text = text_from_terms(doc);
          break;
        case DatabaseText::kStored:
          input.text = stored_slot ? doc.get_value(*stored_slot) : doc.get_data();
          break;
      }
      if (on_document) on_document(std::move(input));
    }
    if (database.labelled && labelled == 0) {
      throw InvalidArgumentError(database.path + ": no document" +
                                 (database.filter.empty() ? "" : " matching --filter") +
                                 " has a label term with prefix " + database.label_prefix +
                                 "; check --label-prefix and --filter");
    }
  } catch (const Xapian::DatabaseModifiedError& e) {
    throw IOError(database.path + ": changed while being read (" + e.get_msg() +
                  "); run train again, or from a copy of the database");
  } catch (const Xapian::NetworkError& e) {
    throw IOError(database.path + ": lost a remote database (" + e.get_msg() +
                  "); check that its server (xapian-tcpsrv) is running and run again");
  } catch (const Xapian::Error& e) {
    throw IOError(database.path + ": " + e.get_description());
  }
}

}  // namespace autocat::internal
