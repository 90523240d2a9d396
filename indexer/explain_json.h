// The explanation of one document as `autocat explain --json` prints it:
// what `autocat explain` and the document view of `autocat serve` share, so
// both say the same thing about the same text (docs/json.md).
//
// Thread safety: explain_text() uses `explainer`, which is not thread-safe
// (one per thread); the categorizer may be shared. explanation_json() only
// reads its arguments.
#pragma once

#include <string>

#include "classify/decide/categorizer.h"
#include "classify/decide/explain.h"
#include "classify/io/json_text.h"

namespace autocat::cli {

// A document's terms and their explanation.
struct ExplainedText {
  internal::DocumentTerms terms;
  internal::Explanation explanation;
};

// Explains `text` as `autocat explain` does (a blank text gets the note
// "empty text"). `explainer` must explain `categorizer`.
ExplainedText explain_text(const internal::Categorizer& categorizer, internal::Explainer& explainer,
                           const std::string& text, const internal::ExplainOptions& options);

// The object of `autocat explain --json` for document `id`, without
// "schema_version" and "rules"; `k` is kNN's k (shown for kNN only).
internal::Json explanation_json(const std::string& id, const internal::Explanation& e,
                                const internal::DocumentTerms& terms, int k);

}  // namespace autocat::cli
