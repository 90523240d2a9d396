// A document as the readers deliver it, and the options they take: what the
// file readers (document_reader.h) and the database reader (db_reader.h)
// share.
//
// Thread safety: plain data.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "autocat/types.h"

namespace autocat::internal {

// The longest document id: the unique term "Q" + id must fit Xapian's
// 245-byte term limit.
inline const size_t kMaxIdBytes = 245 - kIdPrefix.size();
// Default of ReadOptions::max_document_bytes: 64 MiB.
constexpr uint64_t kDefaultMaxDocumentBytes = uint64_t{64} << 20;

struct InputDocument {
  std::string id;                   // JSONL `id` (numbers as written), else generated (see below)
  std::string title;                // JSONL `title`, may be empty
  std::string text;                 // raw bytes as read (UTF-8 expected, not checked here)
  std::vector<std::string> labels;  // JSONL `labels`, or the folder name(s)
  // The input states the labels, even as none: a JSONL record with a
  // "labels" key ([] = an example of "none of these categories"), a file in
  // a category subfolder, a database document that passed --filter. False
  // for a record without the key, a plain file, a file at a tree's root.
  bool labels_given = false;
  std::string split;   // JSONL `split`, may be empty
  std::string source;  // "file.jsonl:12" or the file path, for messages
};

// One JSONL field that makes up the text, repeated `boost` times (so its
// words weigh `boost` times as much in every classifier).
struct TextField {
  std::string name;
  int boost = 1;
};

// Where the text of a database document comes from (DatabaseInput::text_from).
// kStored: the value slot `autocat index --store-text` recorded in the
// database's metadata, else the document data.
enum class DatabaseText { kData, kValue, kTerms, kStored };

// A Xapian database whose documents are read as labelled documents
// (db_reader.h: read_database).
struct DatabaseInput {
  std::string path;
  // Labels: the documents' terms with this prefix (Xapian's `P:Value`
  // convention for values starting with a capital, as category_from_term).
  std::string label_prefix;
  // A QueryParser query restricting the documents (empty = all of them).
  std::string filter;
  DatabaseText text_from = DatabaseText::kData;
  unsigned value_slot = 0;  // for DatabaseText::kValue
  // False: the documents are read as unlabelled (train --unlabelled-db):
  // label_prefix is not used and no document needs a label.
  bool labelled = true;
};

struct ReadOptions {
  // Keep only JSONL records whose `split` equals this (empty = keep all).
  std::string split;
  // On a malformed JSONL line: skip it (and report it through on_warning) or
  // throw InvalidArgumentError naming the file and line.
  bool skip_malformed = false;
  // Folder trees: use the subfolder path below the root as the label.
  bool labels_from_folders = true;
  // An id delivered twice in one read_documents() call: false throws
  // InvalidArgumentError naming both places; true delivers both with a
  // warning naming both (where ids are stored, the later one replaces).
  // Either way every id of the call is remembered: about 100 bytes each.
  bool allow_duplicate_ids = false;
  // The longest JSONL line, plain-text file or standard input accepted, so
  // memory stays bounded (under about twice this much). A longer one is
  // malformed: an error naming file and line, or skipped with
  // skip_malformed.
  uint64_t max_document_bytes = kDefaultMaxDocumentBytes;
  // JSONL: the text is these fields in this order, each repeated its boost
  // times, joined by blank lines; a missing or null field adds nothing, a
  // non-string one is malformed. Empty = the "text" field, required.
  std::vector<TextField> fields;
  // Also read these databases, after the inputs (db_reader.h).
  std::vector<DatabaseInput> databases;
};

// Called once per document, in input order.
using DocumentCallback = std::function<void(InputDocument&&)>;
// Called with a one-line warning (a skipped line, an empty or binary file).
using WarningCallback = std::function<void(const std::string&)>;

}  // namespace autocat::internal
