// Reading labelled documents from a Xapian database, so an application
// whose editors tagged documents in its own index can train from it
// (`autocat train --from-db DB --label-prefix P`).
//
// Thread safety: free functions with no shared state.
#pragma once

#include "classify/corpus/input_document.h"

namespace autocat::internal {

// The QueryParser field names --filter knows: "category:" and "label:" are
// boolean filters on the label prefix, "id:" on the unique-id prefix Q.
// Free text is parsed as `autocat search` does (English stems, STEM_SOME).
inline constexpr const char* kFilterFields = "category:, label:, id:";

// Delivers every document of `database.path` that matches `database.filter`
// (all of them without a filter), in docid order:
//   labels  its terms with database.label_prefix (by category_from_term, so
//           XC:Sports is "Sports"); none is an example of "no category" only
//           with --keep-unlabelled, as any document without labels;
//   text    the document data, a value slot, or its unprefixed terms, each
//           repeated wdf times (a bag of words; Z stems and every other
//           term starting with a capital are skipped);
//   id      the unique term's value (Q prefix) if any, else the docid;
//   source  "PATH#docid", for messages.
// labels_given is set for documents with labels. Throws NotFoundError (no
// database at the path), InvalidArgumentError (not a Xapian database, a bad
// prefix or filter, no document with a label term) or IOError, each naming
// the database and what to do.
void read_database(const DatabaseInput& database, const DocumentCallback& on_document,
                   const WarningCallback& on_warning);

// Delivers the documents of the application index at `path` whose unique
// id (Q term) is in `ids`, in the order of `ids` (`autocat learn --from-db`:
// an editor's corrections fed back):
//   labels  the category terms: prefix `label_prefix`, or if it is empty the
//           one `autocat index` recorded in the database, else XC;
//   text    as `text_from` says: kStored, the full text `autocat index
//           --store-text` kept in its value slot, else the document data;
//           kData the document data; kTerms the indexed words (kValue is
//           not offered: reads as kData);
//   source  "PATH#ID".
// Throws NotFoundError naming the database (none there) or the id (no
// document has it), InvalidArgumentError naming the id if the document has
// no category term or no text, and naming the database if it is kStored on a
// database autocat index wrote without --store-text (its data is only the
// title or a 200-byte snippet, not the document), IOError otherwise. Nothing
// is delivered unless every id is found: the check comes first.
void read_database_ids(const std::string& path, const std::vector<std::string>& ids,
                       const std::string& label_prefix, DatabaseText text_from,
                       const DocumentCallback& on_document);

}  // namespace autocat::internal
