// Reading documents: JSON Lines (.jsonl, .jsonl.gz), a folder tree whose
// subfolder names are labels, or plain text files.
//
// Thread safety: free functions with no shared state.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "classify/corpus/input_document.h"

namespace autocat::internal {

// Reads every input: "-" is standard input (JSON Lines, or one plain-text
// document "stdin" when its first non-blank byte is not '{'); a path ending in
// .jsonl or .jsonl.gz is JSON Lines; a directory is a folder tree; any other
// file is one plain-text document. Folder trees are walked in sorted order;
// hidden files are skipped; files that are empty or look binary (NUL bytes)
// are skipped with a warning.
//
// Ids: a JSONL record's "id" (a string, or a number kept exactly as written).
// Without one, a document is named after the input as given (lexically
// normalized: "./a.jsonl" is "a.jsonl"), so ids are unique across inputs:
// "FILE:LINE" for a JSONL record, "stdin:LINE" (or "stdin" for plain text)
// on standard input, "ROOT/REL/PATH" for a file of a folder tree and the path
// itself for a plain file. Ids longer than kMaxIdBytes are malformed. A
// warning names a document whose id is not valid UTF-8; a label that is not
// is malformed (it would be a category name outputs cannot decode).
// Throws NotFoundError (missing input), IOError (unreadable, bad gzip) or
// InvalidArgumentError (a malformed line or document when !skip_malformed, a
// repeated id when !allow_duplicate_ids).
// Databases of ReadOptions::databases are read after the inputs (see
// read_database); their ids take part in the duplicate check.
// Returns the number of documents delivered.
uint64_t read_documents(const std::vector<std::string>& inputs, const ReadOptions& options,
                        const DocumentCallback& on_document, const WarningCallback& on_warning);

}  // namespace autocat::internal
