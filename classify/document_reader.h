// Reading documents: JSON Lines (.jsonl, .jsonl.gz), a folder tree whose
// subfolder names are labels, or plain text files.
//
// Thread safety: free functions with no shared state.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace autocat::internal {

struct InputDocument {
  std::string id;                   // JSONL `id`; for files, the path relative to the input root
  std::string title;                // JSONL `title`, may be empty
  std::string text;                 // raw bytes as read (UTF-8 expected, not checked here)
  std::vector<std::string> labels;  // JSONL `labels`, or the folder name(s)
  std::string split;                // JSONL `split`, may be empty
  std::string source;               // "file.jsonl:12" or the file path, for messages
};

struct ReadOptions {
  // Keep only JSONL records whose `split` equals this (empty = keep all).
  std::string split;
  // On a malformed JSONL line: skip it (and report it through on_warning) or
  // throw InvalidArgumentError naming the file and line.
  bool skip_malformed = false;
  // Folder trees: use the subfolder path below the root as the label.
  bool labels_from_folders = true;
};

// Called once per document, in input order.
using DocumentCallback = std::function<void(InputDocument&&)>;
// Called with a one-line warning (a skipped line, an empty or binary file).
using WarningCallback = std::function<void(const std::string&)>;

// Reads every input: "-" is standard input (JSON Lines, or one plain-text
// document "stdin" when its first non-blank byte is not '{'); a path ending in
// .jsonl or .jsonl.gz is JSON Lines; a directory is a folder tree; any other
// file is one plain-text document. Folder trees are walked in sorted order;
// hidden files are skipped; files that are empty or look binary (NUL bytes)
// are skipped with a warning.
// Throws NotFoundError (missing input), IOError (unreadable, bad gzip) or
// InvalidArgumentError (malformed line when !skip_malformed).
// Returns the number of documents delivered.
uint64_t read_documents(const std::vector<std::string>& inputs, const ReadOptions& options,
                        const DocumentCallback& on_document, const WarningCallback& on_warning);

}  // namespace autocat::internal
