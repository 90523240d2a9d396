// Vocabulary types shared by every autocat module: categories with scores,
// classifier methods, and the term prefixes and value slot autocat writes.
//
// Thread safety: plain values; safe to share once constructed.
#pragma once

#include <xapian.h>

#include <optional>
#include <string>
#include <vector>

#include "autocat/export.h"

namespace autocat {

// Boolean term prefix of category terms, joined to the name by Xapian's
// convention (category_term() in facets.h): "XCsci.med", "XC:Sports".
// "X" starts a multi-capital user-defined prefix; "Q" (ids) and "Z" (stems)
// are reserved.
inline const std::string kDefaultCategoryPrefix = "XC";
// Unique-id term prefix (Xapian's "Q" convention): "Q" + document id.
inline const std::string kIdPrefix = "Q";
// QueryParser field name for category filters: `category:sci.med`.
inline const std::string kCategoryField = "category";
// Value slot holding the assigned categories and their scores. Chosen far
// from the low slot numbers applications usually use; configurable.
constexpr Xapian::valueno kDefaultCategorySlot = 200;
// Boolean term of every document whose categories an editor set (a
// correction: autocat::correct_document() in corrections.h). Re-indexing
// and recategorizing keep such a document's categories; stock Xapian
// filters on it with Xapian::Query(kEditorSetTerm).
inline const std::string kEditorSetTerm = "XAUTOCATEDITED";
// Value slot of an editor-set document: "EDITOR<TAB>TIME" of its last
// correction (TIME in ISO 8601 UTC, 2026-12-05T23:01:02Z).
constexpr Xapian::valueno kDefaultEditorSlot = 202;
// Value slot of the best-scoring category a document was not given,
// "NAME<TAB>SCORE" (the category slot's format): with the categories
// stored, the two best candidates and their margin. Empty when every
// category was assigned. A value, not a term, so facets stay exact.
constexpr Xapian::valueno kDefaultRunnerUpSlot = 203;

// One category with its score. Scores are in [0, 1], higher is better; what
// they mean depends on the method (see Method).
struct Category {
  std::string name;    // the category name, UTF-8
  double score = 0.0;  // in [0, 1], higher is better
};

// The classifier that assigns categories.
enum class Method {
  kKnn,                   // k nearest neighbours through posting lists; score = vote share.
  kRocchio,               // nearest centroid; score = cosine to the centroid.
  kNaiveBayes,            // multinomial Naive Bayes; score = posterior probability.
  kBernoulliNaiveBayes,   // Bernoulli Naive Bayes; score = posterior probability.
  kComplementNaiveBayes,  // complement Naive Bayes (Rennie et al. 2003).
  kSvm,                   // linear SVM, one-vs-rest; score = Platt-calibrated probability.
  kLogreg,                // logistic regression, one-vs-rest; score = its probability.
  kCombo,                 // stacked logistic model over the other methods' calibrated scores
                          // (classify/methods/combo.h).
};

// Every method, in the order of the enum.
AUTOCAT_EXPORT const std::vector<Method>& all_methods();
// Short name used on the command line and in JSON: knn, rocchio, nb, bnb, cnb,
// svm, logreg, combo.
AUTOCAT_EXPORT std::string method_name(Method method);
// Parses a short name; returns nullopt for an unknown name.
AUTOCAT_EXPORT std::optional<Method> parse_method(const std::string& name);

}  // namespace autocat
