#include "classify/decide/training_db.h"

#include <algorithm>

#include "autocat/error.h"
#include "classify/io/filenames.h"

namespace autocat::internal {

std::string train_hint(const std::string& model_dir) {
  return "train one with: autocat train --model " + model_dir + " INPUT...";
}

// Throws ModelFormatError naming the training database at `path` if it no
// longer holds the documents, terms and categories `model` was trained on.
void check_corpus_matches(const TrainingCorpus& corpus, const ModelState& model,
                          const std::string& path) {
  if (corpus.num_docs() != model.num_docs || corpus.posting_doc.size() != model.num_postings ||
      corpus.terms != model.terms || corpus.categories != model.categories) {
    throw ModelFormatError(path +
                           ": the training database has changed since the model was "
                           "trained; run autocat train again");
  }
}

// The id of each document of the training database, by dense index (as
// load_training_corpus numbers them: docid order).
std::vector<std::string> read_training_ids(const Xapian::Database& db) {
  std::vector<Xapian::docid> docids;
  docids.reserve(db.get_doccount());
  for (auto it = db.postlist_begin(std::string()); it != db.postlist_end(std::string()); ++it) {
    docids.push_back(*it);
  }
  std::vector<std::string> ids(docids.size());
  for (auto term = db.allterms_begin(kIdPrefix); term != db.allterms_end(kIdPrefix); ++term) {
    const std::string name = *term;
    for (auto p = db.postlist_begin(name); p != db.postlist_end(name); ++p) {
      const auto it = std::lower_bound(docids.begin(), docids.end(), *p);
      if (it != docids.end() && *it == *p) ids[size_t(it - docids.begin())] = name.substr(1);
    }
  }
  return ids;
}

Xapian::Database open_training_db(const std::string& path, const std::string& model_dir) {
  try {
    return Xapian::Database(path);
  } catch (const Xapian::DatabaseOpeningError& e) {
    throw NotFoundError(path + ": cannot open the training database (" + e.get_msg() + "); " +
                        train_hint(model_dir));
  } catch (const Xapian::Error& e) {
    throw ModelFormatError(path + ": the training database is damaged (" + e.get_description() +
                           "); retrain with: autocat train --model " + model_dir + " INPUT...");
  }
}

TrainingCorpus read_training_corpus(const Xapian::Database& db, const std::string& path,
                                    const std::string& model_dir) {
  try {
    return load_training_corpus(db);
  } catch (const Xapian::Error& e) {
    // Xapian names neither the database nor the way out ("EOF reading block 2").
    throw ModelFormatError(path + ": the training database is damaged (" + e.get_description() +
                           "); retrain with: autocat train --model " + model_dir + " INPUT...");
  }
}

TrainingCorpus read_training_corpus(const std::string& path, const std::string& model_dir) {
  return read_training_corpus(open_training_db(path, model_dir), path, model_dir);
}

}  // namespace autocat::internal
