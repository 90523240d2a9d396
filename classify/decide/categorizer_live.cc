// Live learning: learn() and forget() through the journal, kNN's live index
// and the live models of the other methods, and what they report.

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <map>

#include "autocat/error.h"
#include "classify/corpus/input_document.h"
#include "classify/decide/categorizer.h"

namespace autocat::internal {

bool Categorizer::record_document(const JournalRecord& record, bool warn, DocumentTerms* doc,
                                  std::vector<uint32_t>* categories) const {
  for (const std::string& label : record.labels) {
    const int64_t c = category_index(label);
    if (c < 0) {
      if (warn) {
        add_warning(paths_.journal + ": skipped document " + record.id + ": category " + label +
                    " is not in the model");
      }
      return false;
    }
    categories->push_back(static_cast<uint32_t>(c));
  }
  for (const JournalTerm& term : record.terms) {
    const int64_t id = vocabulary_.find(term.term);
    doc->total_tokens += term.count;
    if (id < 0 || term.count == 0) continue;
    doc->known_tokens += term.count;
    doc->terms.push_back({static_cast<TermId>(id), term.count});
  }
  std::sort(doc->terms.begin(), doc->terms.end(),
            [](const TermCount& a, const TermCount& b) { return a.term < b.term; });
  return true;
}

bool Categorizer::apply_record(const JournalRecord& record, KnnLiveIndex* live) const {
  if (record.kind == JournalRecord::Kind::kForget) return live->forget(record.id);
  DocumentTerms doc;
  std::vector<uint32_t> categories;
  if (!record_document(record, /*warn=*/true, &doc, &categories)) return false;
  live->learn(record.id, doc, categories);
  return true;
}

void Categorizer::ensure_live_models(bool for_learning) const {
  // LiveModels decodes the Naive Bayes and linear sections (load_part) when
  // one of their models is first asked for: a damaged section throws
  // ModelFormatError then.
  const auto load = [this](Method method) { load_part(method); };
  // kNN's replay warns about skipped records already.
  const auto apply = [this](LiveModels& live, const JournalRecord& record) {
    if (record.kind == JournalRecord::Kind::kForget) {
      live.forget(record.id);
      return;
    }
    DocumentTerms doc;
    std::vector<uint32_t> categories;
    if (record_document(record, /*warn=*/false, &doc, &categories)) {
      live.learn(record.id, doc, categories);
    }
  };
  std::call_once(live_.once, [this, &load, &apply] {
    std::shared_ptr<LiveModels> live;
    std::string error;
    try {
      if (corpus_) {
        live =
            std::make_shared<LiveModels>(model_, idf_, corpus_, std::vector<std::string>(), load);
      } else {
        const std::string& path = paths_.training_db;
        const Xapian::Database db = open_training_db(path, model_dir_);
        auto corpus =
            std::make_shared<const TrainingCorpus>(read_training_corpus(db, path, model_dir_));
        check_corpus_matches(*corpus, model_, path);
        live =
            std::make_shared<LiveModels>(model_, idf_, std::move(corpus), training_ids(&db), load);
      }
      if (live_.replay) {
        for (const JournalRecord& record : *live_.replay) apply(*live, record);
      }
    } catch (const Error& e) {
      error = e.what();
      live.reset();
    }
    live_.replay.reset();
    std::lock_guard<std::mutex> lock(learn_mutex_);
    // Records caught up while the sums were read follow the open's.
    if (live) {
      for (const JournalRecord& record : live_appended_) apply(*live, record);
    }
    live_appended_.clear();
    live_ready_ = true;
    std::atomic_store(&live_.models, live);
    live_.active.store(live != nullptr, std::memory_order_release);
    if (!error.empty()) {
      live_.error = error;
      if (journal_at_open_ || appended_since_open_.load()) {
        add_warning(error +
                    "; Rocchio, Naive Bayes, svm and logreg classify with the models as trained, "
                    "without the "
                    "journal's documents, until the refit (autocat train --add --model " +
                    model_dir_ + ")");
      }
    }
  });
  if (for_learning && !live_.active.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(learn_mutex_);
    throw NotFoundError(live_.error +
                        " (learning needs the training database: nothing was learned or "
                        "forgotten)");
  }
}

std::shared_ptr<const LiveModel> Categorizer::live_model(Method method) const {
  if (journal_at_open_ || appended_since_open_.load(std::memory_order_acquire)) {
    ensure_live_models(/*for_learning=*/false);
  } else if (!live_.active.load(std::memory_order_acquire)) {
    return nullptr;  // nothing learned: the trained model, at no cost
  }
  const std::shared_ptr<LiveModels> live = std::atomic_load(&live_.models);
  return live ? live->model(method) : nullptr;
}

void Categorizer::fit_live_members() const {
  if (!journal_at_open_ && !appended_since_open_.load(std::memory_order_acquire) &&
      !live_.active.load(std::memory_order_acquire)) {
    return;  // nothing learned: the trained models
  }
  if (journal_at_open_ || appended_since_open_.load(std::memory_order_acquire)) {
    ensure_live_models(/*for_learning=*/false);
  }
  const std::shared_ptr<LiveModels> live = std::atomic_load(&live_.models);
  if (!live) return;
  std::vector<Method> members;
  for (int32_t member : model_.combo.members) members.push_back(static_cast<Method>(member));
  live->fit(members);
}

void Categorizer::require_installed() const {
  // Two trains later the generation's training database is gone, and
  // reading it would fail with advice to train a model that exists.
  if (!model_dir_.empty() && resolve_model_dir(model_dir_).model_file != paths_.model_file) {
    throw InvalidArgumentError(model_dir_ + ": " + kTrainedAgainSinceOpened);
  }
}

void Categorizer::journal(const std::vector<JournalRecord>& records, bool sync) {
  if (model_dir_.empty() || records.empty()) return;
  const JournalContents result =
      append_journal(model_dir_, paths_.model_file, paths_.journal, records, sync, &journal_end_);
  journal_seen_.store(journal_end_);
  // Appended by others after this object's last catch-up: they come before
  // these records in the journal, so they take effect before them here too.
  apply_appended_locked(result.records);
  if (!result.torn.empty()) add_warning(result.torn + " (cut off)");
}

void Categorizer::apply_appended_locked(const std::vector<JournalRecord>& records) {
  if (records.empty()) return;
  appended_since_open_.store(true, std::memory_order_release);
  for (const JournalRecord& record : records) {
    if (!knn_ready_) {
      knn_appended_.push_back(record);
    } else if (knn_.live) {
      apply_record(record, knn_.live.get());
    }
    if (!live_ready_) {
      live_appended_.push_back(record);
    } else if (live_.models) {
      if (record.kind == JournalRecord::Kind::kForget) {
        live_.models->forget(record.id);
        continue;
      }
      DocumentTerms doc;
      std::vector<uint32_t> categories;
      if (record_document(record, /*warn=*/false, &doc, &categories)) {
        live_.models->learn(record.id, doc, categories);
      }
    }
  }
}

uint64_t Categorizer::catch_up() {
  if (model_dir_.empty()) return 0;
  struct stat status {};
  if (::stat(paths_.journal.c_str(), &status) != 0) {
    if (errno == ENOENT && journal_seen_.load() == 0) return 0;
  } else if (uint64_t(status.st_size) == journal_seen_.load()) {
    return 0;
  }
  std::lock_guard<std::mutex> lock(learn_mutex_);
  return catch_up_locked();
}

uint64_t Categorizer::catch_up_locked() {
  if (model_dir_.empty()) return 0;
  const JournalContents more = read_journal(paths_.journal, journal_end_);
  if (more.version == 0 && journal_end_ == 0) return 0;  // no journal yet
  journal_end_ = more.valid_bytes;
  journal_seen_.store(more.file_bytes);
  apply_appended_locked(more.records);
  return more.records.size();
}

void Categorizer::learn(const std::string& id, std::string_view text,
                        const std::vector<std::string>& labels) {
  learn({LearnedDocument{id, std::string(text), labels}});
}

void Categorizer::learn(const std::vector<LearnedDocument>& documents, bool sync) {
  const std::string where = model_dir_.empty() ? std::string("model") : model_dir_;
  std::vector<JournalRecord> records;
  records.reserve(documents.size());
  std::vector<Token> tokens;
  for (const LearnedDocument& document : documents) {
    const std::string name = where + ": document '" + document.id + "'";
    if (document.id.empty()) throw InvalidArgumentError(where + ": a document to learn has no id");
    if (document.id.size() > kMaxIdBytes) {
      throw InvalidArgumentError(name.substr(0, 200) + "...: id longer than " +
                                 std::to_string(kMaxIdBytes) + " bytes");
    }
    if (document.labels.empty()) {
      throw InvalidArgumentError(name + ": no labels; learn needs at least one category");
    }
    JournalRecord record;
    record.id = document.id;
    for (const std::string& label : document.labels) {
      if (category_index(label) < 0) {
        throw InvalidArgumentError(
            name + ": category '" + label +
            "' is not in the model; a new category needs a refit: autocat train --add --model " +
            where + " INPUT... (nothing was learned)");
      }
      if (std::find(record.labels.begin(), record.labels.end(), label) == record.labels.end()) {
        record.labels.push_back(label);
      }
    }
    tokens.clear();
    analyzer_->analyze(document.text, &tokens);
    if (tokens.empty()) {
      throw InvalidArgumentError(name + ": no terms after analysis (nothing was learned)");
    }
    std::map<std::string, uint32_t> counts;
    for (const Token& token : tokens) ++counts[token.term];
    record.terms.reserve(counts.size());
    for (auto& [term, count] : counts) record.terms.push_back({term, count});
    records.push_back(std::move(record));
  }
  require_installed();
  knn_index();
  ensure_live_models(/*for_learning=*/true);
  std::lock_guard<std::mutex> lock(learn_mutex_);
  catch_up_locked();
  journal(records, sync);
  for (const JournalRecord& record : records) {
    apply_record(record, knn_.live.get());
    DocumentTerms doc;
    std::vector<uint32_t> categories;
    if (record_document(record, /*warn=*/false, &doc, &categories)) {
      live_.models->learn(record.id, doc, categories);
    }
  }
  status_.learned_now += records.size();
}

void Categorizer::forget(const std::string& id) { forget(std::vector<std::string>{id}); }

void Categorizer::forget(const std::vector<std::string>& ids, bool sync) {
  const std::string where = model_dir_.empty() ? std::string("model") : model_dir_;
  require_installed();
  knn_index();
  ensure_live_models(/*for_learning=*/true);
  std::lock_guard<std::mutex> lock(learn_mutex_);
  catch_up_locked();  // another process may have learned the id
  std::vector<JournalRecord> records;
  for (const std::string& id : ids) {
    if (!knn_.live->contains(id)) {
      throw NotFoundError(where + ": no training document with id '" + id +
                          "' (nothing was forgotten)");
    }
    const bool repeated = std::any_of(records.begin(), records.end(),
                                      [&](const JournalRecord& r) { return r.id == id; });
    if (repeated) continue;
    JournalRecord record;
    record.kind = JournalRecord::Kind::kForget;
    record.id = id;
    records.push_back(std::move(record));
  }
  journal(records, sync);
  for (const JournalRecord& record : records) {
    knn_.live->forget(record.id);
    live_.models->forget(record.id);
  }
  status_.forgotten_now += records.size();
}

void Categorizer::add_warning(std::string warning) const {
  std::lock_guard<std::mutex> lock(warnings_mutex_);
  status_.warnings.push_back(std::move(warning));
}

std::vector<std::string> Categorizer::take_warnings() const {
  std::lock_guard<std::mutex> lock(warnings_mutex_);
  std::vector<std::string> fresh(status_.warnings.begin() + static_cast<ptrdiff_t>(warnings_taken_),
                                 status_.warnings.end());
  warnings_taken_ = status_.warnings.size();
  return fresh;
}

LiveStatus Categorizer::live_status() const {
  knn_index();
  std::lock_guard<std::mutex> lock(learn_mutex_);
  LiveStatus status;
  {
    std::lock_guard<std::mutex> warnings_lock(warnings_mutex_);
    status = status_;
  }
  status.learned_present = knn_.live->learned_docs();
  status.forgotten_base = knn_.live->forgotten_docs();
  return status;
}

}  // namespace autocat::internal
