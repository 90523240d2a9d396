// Reading a model's training database (the generation's Xapian collection
// of its training documents), with errors that name it and say what to do.
//
// Thread safety: free functions; a Xapian::Database is not shared between
// threads here.
#pragma once

#include <xapian.h>

#include <string>
#include <vector>

#include "classify/corpus/training_collection.h"
#include "classify/model/model_io.h"

namespace autocat::internal {

// "train one with: autocat train --model DIR INPUT..."
std::string train_hint(const std::string& model_dir);

// Opens the training database at `path` of the model in `model_dir` and
// reads it whole. Throws NotFoundError if it cannot be opened and
// ModelFormatError naming `path` if Xapian finds it damaged.
Xapian::Database open_training_db(const std::string& path, const std::string& model_dir);
TrainingCorpus read_training_corpus(const Xapian::Database& db, const std::string& path,
                                    const std::string& model_dir);
TrainingCorpus read_training_corpus(const std::string& path, const std::string& model_dir);

// The id of each document of the training database, by dense index (as
// load_training_corpus numbers them: docid order).
std::vector<std::string> read_training_ids(const Xapian::Database& db);

// Throws ModelFormatError naming the training database at `path` if it no
// longer holds the documents, terms and categories `model` was trained on.
void check_corpus_matches(const TrainingCorpus& corpus, const ModelState& model,
                          const std::string& path);

}  // namespace autocat::internal
