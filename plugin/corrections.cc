// Editors' corrections: the editor-set mark, its protection on re-indexing,
// the corrections log in the index's metadata, and undo.
#include "autocat/corrections.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>
#include <utility>

#include "autocat/error.h"
#include "classify/io/json_text.h"

namespace autocat {

namespace {

using internal::Json;

// Records scanned at most for the agreement of correction_stats().
constexpr uint64_t kAgreementWindow = 100;
constexpr uint64_t kAgreementScanLimit = 10000;

std::string record_key(uint64_t seq) {
  char digits[24];
  std::snprintf(digits, sizeof digits, "%012llu", static_cast<unsigned long long>(seq));
  return kCorrectionKeyPrefix + digits;
}

uint64_t last_seq(const Xapian::Database& db) {
  const std::string text = db.get_metadata(kCorrectionLastKey);
  return text.empty() ? 0 : std::strtoull(text.c_str(), nullptr, 10);
}

// An editor's name on one line, without the tab that separates the slot's
// fields.
std::string clean_name(const std::string& name) {
  std::string out;
  for (char c : name) {
    out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out.empty() ? std::string("editor") : out;
}

bool has_term(const Xapian::Document& doc, const std::string& term) {
  Xapian::TermIterator it = doc.termlist_begin();
  it.skip_to(term);
  return it != doc.termlist_end() && *it == term;
}

void mark_editor_set(Xapian::Document& doc, const EditorMark& mark) {
  doc.add_boolean_term(kEditorSetTerm);
  doc.add_value(kDefaultEditorSlot, mark.name + '\t' + mark.at);
  doc.add_value(kDefaultRunnerUpSlot, std::string());  // no candidate left to review
}

void unmark_editor_set(Xapian::Document& doc) {
  if (has_term(doc, kEditorSetTerm)) doc.remove_term(kEditorSetTerm);
  doc.add_value(kDefaultEditorSlot, std::string());
}

std::vector<Category> with_score_one(const std::vector<std::string>& names) {
  std::vector<Category> categories;
  for (const std::string& name : names) categories.push_back(Category{name, 1.0});
  return categories;
}

std::vector<std::string> names_of(const std::vector<Category>& categories) {
  std::vector<std::string> names;
  for (const Category& category : categories) names.push_back(category.name);
  return names;
}

std::optional<Correction> read_record(const Xapian::Database& db, uint64_t seq) {
  const std::string text = db.get_metadata(record_key(seq));
  if (text.empty()) return std::nullopt;
  return parse_correction(text);
}

void write_record(Xapian::WritableDatabase& db, const Correction& correction) {
  db.set_metadata(record_key(correction.seq), correction_json(correction));
}

// The model's state for `id` as `correction` left it, undone: it learns the
// previous editor's categories again, or forgets the document. The model
// may refuse either (a text without terms, an id it never learned): then
// there is nothing to restore.
void restore_model(CategoryIndexer& indexer, const Correction& correction,
                   const std::string& text) {
  try {
    if (correction.previous_editor && !correction.previous.empty() && !text.empty()) {
      indexer.learn(correction.id, text, names_of(correction.previous));
    } else {
      indexer.forget(correction.id);
    }
  } catch (const InvalidArgumentError&) {
    try {
      indexer.forget(correction.id);
    } catch (const NotFoundError&) {
    }
  } catch (const NotFoundError&) {
  }
}

// Runs `write` in a Xapian transaction: on a throw the index is left as it
// was (the transaction cancelled) and `undo_model` restores the model.
// An in-memory database has no transactions: its changes are written and
// committed as they come.
template <typename Write, typename UndoModel>
void in_transaction(Xapian::WritableDatabase& db, Write write, UndoModel undo_model) {
  bool transaction = true;
  try {
    db.begin_transaction();
  } catch (const Xapian::UnimplementedError&) {
    transaction = false;
  }
  try {
    write();
    if (transaction) {
      db.commit_transaction();
    } else {
      db.commit();
    }
  } catch (...) {
    if (transaction) {
      try {
        db.cancel_transaction();
      } catch (const Xapian::Error&) {
        // Already ended by the failing commit.
      }
    }
    undo_model();
    throw;
  }
}

// What one correction changes, checked and ready to apply.
struct Planned {
  Xapian::Document doc;
  Correction correction;
  std::string text;
};

Planned plan_correction(const Xapian::Database& db, const CategoryIndexer& indexer,
                        const std::string& id, std::vector<std::string> names,
                        const CorrectionOptions& options) {
  Planned planned;
  planned.doc = find_document_by_id(db, id);
  planned.text = document_text(planned.doc, options.text_slot);
  Correction& correction = planned.correction;
  correction.id = id;
  correction.categories = std::move(names);
  correction.previous = decode_categories(planned.doc.get_value(indexer.options().category_slot));
  correction.previous_editor = editor_mark(planned.doc);
  correction.editor = clean_name(options.editor);
  correction.at = options.at.empty() ? utc_now() : options.at;
  correction.batch = options.batch;
  if (!planned.text.empty()) {
    const std::vector<Category> ranked = indexer.score(planned.text);
    if (!ranked.empty()) correction.model_top = ranked.front().name;
  }
  return planned;
}

void check_decision(const CategoryIndexer& indexer, const std::vector<std::string>& names,
                    const std::string& id) {
  if (indexer.decision_mode() == Decision::kOneOf && names.size() > 1) {
    throw InvalidArgumentError("document '" + id + "': the model decides one-of (one category " +
                               "per document), so give one category, not " +
                               std::to_string(names.size()));
  }
}

// Teaches the model (when asked and there is text), then writes the
// document and its record into `db` (uncommitted).
void apply_planned(Xapian::WritableDatabase& db, CategoryIndexer& indexer, Planned& planned,
                   bool learn, uint64_t seq) {
  Correction& correction = planned.correction;
  correction.seq = seq;
  if (learn && !planned.text.empty()) {
    try {
      indexer.learn(correction.id, planned.text, correction.categories);
      correction.learned = true;
    } catch (const InvalidArgumentError&) {
      // The categories were checked: the text holds no term the model
      // knows. The editor's label still goes into the index.
      correction.learned = false;
    }
  }
  indexer.set_categories(planned.doc, with_score_one(correction.categories));
  mark_editor_set(planned.doc, EditorMark{correction.editor, correction.at});
  db.replace_document(planned.doc.get_docid(), planned.doc);
  write_record(db, correction);
}

}  // namespace

bool is_editor_set(const Xapian::Document& doc) { return has_term(doc, kEditorSetTerm); }

std::optional<EditorMark> editor_mark(const Xapian::Document& doc) {
  if (!is_editor_set(doc)) return std::nullopt;
  const std::string value = doc.get_value(kDefaultEditorSlot);
  EditorMark mark;
  const size_t tab = value.find('\t');
  mark.name = value.substr(0, tab);
  if (tab != std::string::npos) mark.at = value.substr(tab + 1);
  return mark;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

Replaced replace_keeping_editor_labels(Xapian::WritableDatabase& db, const std::string& id_term,
                                       Xapian::Document& doc, const CategoryIndexer& indexer,
                                       bool overwrite_editor_set) {
  Xapian::PostingIterator it = db.postlist_begin(id_term);
  if (it == db.postlist_end(id_term)) {
    db.replace_document(id_term, doc);
    return Replaced::kAdded;
  }
  Replaced outcome = Replaced::kReplaced;
  if (!overwrite_editor_set) {
    const Xapian::Document stored = db.get_document(*it);
    if (is_editor_set(stored)) {
      const Xapian::valueno slot = indexer.options().category_slot;
      indexer.set_categories(doc, decode_categories(stored.get_value(slot)));
      doc.add_boolean_term(kEditorSetTerm);
      doc.add_value(kDefaultEditorSlot, stored.get_value(kDefaultEditorSlot));
      doc.add_value(kDefaultRunnerUpSlot, std::string());
      outcome = Replaced::kEditorSetKept;
    }
  }
  db.replace_document(id_term, doc);
  return outcome;
}

Xapian::Document find_document_by_id(const Xapian::Database& db, const std::string& id) {
  const std::string term = kIdPrefix + id;
  Xapian::PostingIterator it = db.postlist_begin(term);
  if (id.empty() || it == db.postlist_end(term)) {
    throw NotFoundError("no document has the id '" + id + "'");
  }
  return db.get_document(*it);
}

std::string document_text(const Xapian::Document& doc, Xapian::valueno text_slot) {
  if (text_slot != Xapian::BAD_VALUENO) {
    std::string text = doc.get_value(text_slot);
    if (!text.empty()) return text;
  }
  return doc.get_data();
}

std::vector<std::string> known_categories(const CategoryIndexer& indexer,
                                          const std::vector<std::string>& names) {
  std::vector<std::string> known = indexer.categories();
  std::sort(known.begin(), known.end());
  std::vector<std::string> kept;
  for (const std::string& name : names) {
    if (!std::binary_search(known.begin(), known.end(), name)) {
      // Printable: a NUL would end the message where what() is read.
      throw InvalidArgumentError("category '" + internal::printable(name) +
                                 "' is not in the model; a new category needs a refit "
                                 "(autocat train --add)");
    }
    if (std::find(kept.begin(), kept.end(), name) == kept.end()) kept.push_back(name);
  }
  if (kept.empty()) throw InvalidArgumentError("give at least one category");
  return kept;
}

Correction correct_document(Xapian::WritableDatabase& db, CategoryIndexer& indexer,
                            const std::string& id, const std::vector<std::string>& categories,
                            const CorrectionOptions& options) {
  const std::vector<std::string> names = known_categories(indexer, categories);
  check_decision(indexer, names, id);
  Planned planned = plan_correction(db, indexer, id, names, options);
  // The model learns inside the index transaction, before the commit: a
  // model that refuses the journal write leaves the index untouched, and a
  // failed commit makes the model forget again (restore_model), so model
  // and index agree either way.
  in_transaction(
      db,
      [&]() {
        const uint64_t seq = last_seq(db) + 1;
        apply_planned(db, indexer, planned, options.learn, seq);
        db.set_metadata(kCorrectionLastKey, std::to_string(seq));
      },
      [&]() {
        if (planned.correction.learned) restore_model(indexer, planned.correction, planned.text);
      });
  return planned.correction;
}

std::vector<Correction> correct_documents(Xapian::WritableDatabase& db, CategoryIndexer& indexer,
                                          const std::vector<std::string>& ids,
                                          const std::vector<std::string>& add,
                                          const std::vector<std::string>& remove,
                                          const CorrectionOptions& options) {
  const bool one_of = indexer.decision_mode() == Decision::kOneOf;
  std::vector<std::string> added;
  if (!add.empty()) added = known_categories(indexer, add);
  if (!remove.empty()) known_categories(indexer, remove);
  if (added.empty() && remove.empty()) {
    throw InvalidArgumentError("give categories to add or to remove");
  }
  if (one_of && added.size() > 1) {
    throw InvalidArgumentError("the model decides one-of (one category per document), so add " +
                               std::string("one category, not ") + std::to_string(added.size()));
  }
  std::vector<Planned> plans;
  std::set<std::string> seen;
  for (const std::string& id : ids) {
    if (!seen.insert(id).second) continue;
    const Xapian::Document doc = find_document_by_id(db, id);
    std::vector<std::string> names;
    if (!(one_of && !added.empty())) {
      for (const Category& category :
           decode_categories(doc.get_value(indexer.options().category_slot))) {
        if (std::find(remove.begin(), remove.end(), category.name) == remove.end()) {
          names.push_back(category.name);
        }
      }
    }
    for (const std::string& name : added) {
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    if (names.empty()) {
      throw InvalidArgumentError("document '" + id +
                                 "' would be left without a category; add one in its place");
    }
    names = known_categories(indexer, names);
    check_decision(indexer, names, id);
    plans.push_back(plan_correction(db, indexer, id, std::move(names), options));
  }
  in_transaction(
      db,
      [&]() {
        uint64_t seq = last_seq(db);
        const uint64_t batch = options.batch != 0 ? options.batch : seq + 1;
        for (Planned& planned : plans) {
          planned.correction.batch = batch;
          apply_planned(db, indexer, planned, options.learn, ++seq);
        }
        db.set_metadata(kCorrectionLastKey, std::to_string(seq));
      },
      [&]() {
        for (const Planned& planned : plans) {
          if (planned.correction.learned) {
            restore_model(indexer, planned.correction, planned.text);
          }
        }
      });
  std::vector<Correction> result;
  for (Planned& planned : plans) result.push_back(std::move(planned.correction));
  return result;
}

CorrectionPage list_corrections(const Xapian::Database& db, uint64_t offset, uint64_t limit) {
  CorrectionPage page;
  const uint64_t last = last_seq(db);
  page.total = last;
  for (uint64_t seq = last > offset ? last - offset : 0;
       seq >= 1 && page.corrections.size() < limit; --seq) {
    if (std::optional<Correction> record = read_record(db, seq)) {
      page.corrections.push_back(std::move(*record));
    }
  }
  return page;
}

std::optional<Correction> find_correction(const Xapian::Database& db, uint64_t seq) {
  if (seq == 0) return std::nullopt;
  return read_record(db, seq);
}

std::vector<Correction> undo_correction(Xapian::WritableDatabase& db, CategoryIndexer& indexer,
                                        uint64_t seq, const std::string& editor,
                                        Xapian::valueno text_slot) {
  const std::optional<Correction> first = find_correction(db, seq);
  if (!first) throw NotFoundError("no correction has the number " + std::to_string(seq));
  if (first->undone) {
    throw ConflictError("correction " + std::to_string(seq) + " was undone already (" +
                        first->undone_at + ")");
  }
  // A bulk correction's records are consecutive (written in one commit).
  std::vector<Correction> records{*first};
  const uint64_t last = last_seq(db);
  if (first->batch != 0) {
    for (uint64_t s = seq - 1; s >= 1; --s) {
      std::optional<Correction> record = read_record(db, s);
      if (!record || record->batch != first->batch) break;
      records.insert(records.begin(), std::move(*record));
    }
    for (uint64_t s = seq + 1; s <= last; ++s) {
      std::optional<Correction> record = read_record(db, s);
      if (!record || record->batch != first->batch) break;
      records.push_back(std::move(*record));
    }
  }
  std::set<std::string> ids;
  for (const Correction& record : records) ids.insert(record.id);
  for (uint64_t s = records.back().seq + 1; s <= last; ++s) {
    const std::optional<Correction> later = read_record(db, s);
    if (later && !later->undone && ids.count(later->id) != 0) {
      throw ConflictError("document '" + later->id + "' was corrected again later (correction " +
                          std::to_string(later->seq) + "); undo that one first");
    }
  }
  std::vector<Xapian::Document> docs;
  std::vector<std::string> texts;
  for (const Correction& record : records) {
    if (record.undone) continue;
    docs.push_back(find_document_by_id(db, record.id));
    texts.push_back(document_text(docs.back(), text_slot));
  }
  const std::string at = utc_now();
  std::vector<Correction> undone;
  in_transaction(
      db,
      [&]() {
        size_t i = 0;
        for (const Correction& record : records) {
          if (record.undone) continue;
          Xapian::Document& doc = docs[i];
          if (record.learned) restore_model(indexer, record, texts[i]);
          indexer.set_categories(doc, record.previous);
          if (record.previous_editor) {
            mark_editor_set(doc, *record.previous_editor);
          } else {
            unmark_editor_set(doc);
          }
          db.replace_document(doc.get_docid(), doc);
          Correction marked = record;
          marked.undone = true;
          marked.undone_at = at;
          marked.undone_by = clean_name(editor);
          write_record(db, marked);
          undone.push_back(std::move(marked));
          ++i;
        }
      },
      [&]() {
        // The model forgot what the index still holds: teach it again.
        for (size_t i = 0; i < undone.size(); ++i) {
          try {
            if (undone[i].learned) indexer.learn(undone[i].id, texts[i], undone[i].categories);
          } catch (const Error&) {
          }
        }
      });
  return undone;
}

std::vector<Correction> corrections_in_force(const Xapian::Database& db) {
  std::map<std::string, Correction> latest;
  const uint64_t last = last_seq(db);
  for (uint64_t seq = 1; seq <= last; ++seq) {
    std::optional<Correction> record = read_record(db, seq);
    if (record && !record->undone) latest[record->id] = std::move(*record);
  }
  std::vector<Correction> result;
  for (auto& [id, record] : latest) {
    const std::string term = kIdPrefix + id;
    Xapian::PostingIterator it = db.postlist_begin(term);
    if (it == db.postlist_end(term) || !is_editor_set(db.get_document(*it))) continue;
    result.push_back(std::move(record));
  }
  std::sort(result.begin(), result.end(),
            [](const Correction& a, const Correction& b) { return a.seq < b.seq; });
  return result;
}

CorrectionStats correction_stats(const Xapian::Database& db) {
  CorrectionStats stats;
  stats.documents = db.get_doccount();
  stats.editor_set = db.get_termfreq(kEditorSetTerm);
  stats.queue = stats.documents - std::min(stats.documents, stats.editor_set);
  uint64_t agreed = 0;
  const uint64_t last = last_seq(db);
  for (uint64_t seq = last, scanned = 0;
       seq >= 1 && stats.agreement_window < kAgreementWindow && scanned < kAgreementScanLimit;
       --seq, ++scanned) {
    const std::optional<Correction> record = read_record(db, seq);
    if (!record || record->undone) continue;
    ++stats.agreement_window;
    const std::vector<std::string>& names = record->categories;
    if (std::find(names.begin(), names.end(), record->model_top) != names.end()) ++agreed;
  }
  if (stats.agreement_window != 0) {
    stats.agreement = static_cast<double>(agreed) / static_cast<double>(stats.agreement_window);
  }
  return stats;
}

std::string correction_json(const Correction& correction) {
  Json json = Json::object();
  json["seq"] = correction.seq;
  json["id"] = correction.id;
  json["categories"] = correction.categories;
  Json previous = Json::array();
  for (const Category& category : correction.previous) {
    Json entry = Json::object();
    entry["name"] = category.name;
    entry["score"] = category.score;
    previous.push_back(std::move(entry));
  }
  json["previous"] = std::move(previous);
  if (correction.previous_editor) {
    Json mark = Json::object();
    mark["name"] = correction.previous_editor->name;
    mark["at"] = correction.previous_editor->at;
    json["previous_editor"] = std::move(mark);
  } else {
    json["previous_editor"] = nullptr;
  }
  json["editor"] = correction.editor;
  json["at"] = correction.at;
  json["model_top"] = correction.model_top;
  json["learned"] = correction.learned;
  if (correction.batch != 0) json["batch"] = correction.batch;
  json["undone"] = correction.undone;
  if (correction.undone) {
    json["undone_at"] = correction.undone_at;
    json["undone_by"] = correction.undone_by;
  }
  return internal::dump_json(json);
}

Correction parse_correction(const std::string& text) {
  Json json;
  std::string error;
  if (!internal::parse_json(text, &json, &error) || !json.is_object()) {
    throw InvalidArgumentError("corrections log: a record is not a JSON object: " + error);
  }
  Correction correction;
  try {
    correction.seq = json.value("seq", uint64_t{0});
    correction.id = json.value("id", std::string());
    if (json.contains("categories")) {
      correction.categories = json["categories"].get<std::vector<std::string>>();
    }
    if (json.contains("previous")) {
      for (const Json& entry : json["previous"]) {
        correction.previous.push_back(
            Category{entry.value("name", std::string()), entry.value("score", 0.0)});
      }
    }
    if (json.contains("previous_editor") && json["previous_editor"].is_object()) {
      const Json& mark = json["previous_editor"];
      correction.previous_editor =
          EditorMark{mark.value("name", std::string()), mark.value("at", std::string())};
    }
    correction.editor = json.value("editor", std::string());
    correction.at = json.value("at", std::string());
    correction.model_top = json.value("model_top", std::string());
    correction.learned = json.value("learned", false);
    correction.batch = json.value("batch", uint64_t{0});
    correction.undone = json.value("undone", false);
    correction.undone_at = json.value("undone_at", std::string());
    correction.undone_by = json.value("undone_by", std::string());
  } catch (const Json::exception& e) {
    throw InvalidArgumentError(std::string("corrections log: a record is malformed: ") + e.what());
  }
  return correction;
}

}  // namespace autocat
