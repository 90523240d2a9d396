// Options for analysis, training and categorization. Plain structs: the
// default is in the declaration, one comment per field.
//
// Thread safety: plain values.
#pragma once

#include <xapian.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "autocat/export.h"
#include "autocat/types.h"

namespace autocat {

// How text becomes terms. Saved in the model at training time, so indexing
// analyzes exactly as training did.
struct AnalyzerOptions {
  // "english" (the shipped list), "none", or the path of a file with one
  // stopword per line ('#' starts a comment).
  std::string stopwords = "english";
  // Snowball stemmer language understood by Xapian::Stem ("english",
  // "german", ...), or "none".
  std::string stemmer = "none";
  // Tokens longer than this many UTF-8 bytes (after normalization) are
  // dropped: they are mostly encoded binaries and never useful features.
  int max_term_bytes = 64;
  // 1 = single words; 2 adds word bigrams ("new york"), 3 trigrams too.
  // N-grams join consecutive words left after stopword removal.
  int ngrams = 1;
};

// Feature-selection utility measures.
enum class FeatureSelection {
  kNone,
  kMutualInformation,  // expected mutual information (IIR 13.5.1), bits
  kChiSquare,          // chi-square statistic of the term/class 2x2 table
  kDocumentFrequency,  // number of training documents containing the term
  kKlDivergence,       // KL divergence of the class term distribution
};

AUTOCAT_EXPORT std::string feature_selection_name(
    FeatureSelection selection);  // mi, chi2, df, kl, none
// The measure named `name` (as feature_selection_name() writes it), or
// nullopt for another name; throws nothing.
AUTOCAT_EXPORT std::optional<FeatureSelection> parse_feature_selection(const std::string& name);

// How categories are chosen from the scores.
enum class Decision {
  kOneOf,  // single-label: the best category (or none: see ClassifyOptions::other)
  kAnyOf,  // multi-label: every category whose score reaches its threshold
};

AUTOCAT_EXPORT std::string decision_name(Decision decision);  // one-of, any-of
// The mode named `name` ("one-of" or "any-of"), or nullopt; throws nothing.
AUTOCAT_EXPORT std::optional<Decision> parse_decision(const std::string& name);

// How kNN finds a document's neighbours. Both rank the neighbours they
// return by their exact cosine; they differ in which documents they look at.
enum class KnnSearchMode {
  kExact,    // every posting of every query term: the exact k nearest
  kTwoStep,  // candidates from each query term's highest-weight postings,
             // rescored by their exact cosine: faster on large training
             // collections, but a neighbour outside the candidates is missed
};

// The name of `mode` as the command line spells it: "exact" or "two-step".
AUTOCAT_EXPORT std::string knn_search_name(KnnSearchMode mode);
// The mode named "exact" or "two-step"; std::nullopt for any other name.
AUTOCAT_EXPORT std::optional<KnnSearchMode> parse_knn_search(const std::string& name);

// kNN's k when nothing else decides it: in the middle of the range where
// held-out accuracy is flat on the collections measured (BENCHMARKS.md).
constexpr int kDefaultKnnK = 50;

// How a model is trained.
struct TrainOptions {
  AnalyzerOptions analyzer;  // how text becomes terms, saved in the model
  // Method used by index/classify when the caller names none.
  Method default_method = Method::kKnn;
  // Instead of default_method, use the method with the best cross-validated
  // objective (accuracy for one-of models, micro-F1 for any-of); needs
  // tune_thresholds (default_method without tuning).
  bool choose_default_method = false;
  // The settings below left unset (std::nullopt) are chosen by
  // cross-validation; a value given is used as it is (and must be in range).
  //
  // Additive smoothing of the Naive Bayes family (1 = Laplace), above 0.
  // Unset = chosen per method by cross-validation from 0.00001 to 1 (1
  // without tuning).
  std::optional<double> nb_alpha;
  // Rocchio: centroid_c minus gamma times the mean of the other centroids,
  // at least 0. Unset = chosen by cross-validation from 0, 0.25, 0.5, 1,
  // 1.5, 2, 3 (0 without tuning).
  std::optional<double> rocchio_gamma;
  // kNN's k used when ClassifyOptions leave it 0, at least 1. Unset = chosen
  // by cross-validation from 10 to 300 (kDefaultKnnK without tuning).
  std::optional<int> knn_k;
  // kNN's search in cross-validation and, by default, in classification
  // (ModelState records it); two-step also writes the two-step arrays into
  // the kNN index file. Unset = exact: two-step has not yet met the recall
  // it needs to be the default (BENCHMARKS.md, "kNN in two steps").
  std::optional<KnnSearchMode> knn_search;
  // kNN: a neighbour votes with similarity^power, 1 or 2. Unset = chosen by
  // cross-validation (1 without tuning).
  std::optional<int> knn_similarity_power;
  // kNN: terms weigh idf times their class concentration to this power, 0
  // to 4 (1 minus the normalized entropy of the labels of the documents
  // holding them); 0 = idf alone. Unset = chosen by cross-validation from
  // 0, 0.5, 1 (0 without tuning).
  std::optional<double> knn_concentration;
  // svm / logreg: the regularization constant C, above 0. Unset = chosen by
  // cross-validation (see linear_c_candidates; 1 without tuning).
  std::optional<double> svm_c;
  std::optional<double> logreg_c;  // as svm_c, for logreg
  // Feature selection applied to every classifier; kNone keeps every term.
  FeatureSelection feature_selection = FeatureSelection::kNone;
  // Number of terms to keep (0 = all). Global top-N, or N per category.
  int num_features = 0;
  // Keep the top N terms of each category instead of the top N overall.
  bool features_per_category = false;
  // The model's decision mode, used when ClassifyOptions name none. Unset =
  // detected from the data: any-of if some training document has several
  // labels or none (see keep_unlabelled), else one-of.
  std::optional<Decision> decision;
  // Tune a score threshold per category and method (any-of decisions,
  // one-of's "other", Rocchio's radius) by cross-validation on the training
  // documents: threshold_folds more fits.
  bool tune_thresholds = true;
  int threshold_folds = 5;  // folds of that cross-validation (fewer than 2 count as 2)
  // Collections of more documents than this cross-validate on a stratified
  // sample of about this many (every category keeps at least 50 or all of
  // its documents); the settings chosen there are used for the model of
  // every document. 0 = always all documents. Cross-validation fits every
  // method threshold_folds times and runs kNN for every held-out document,
  // hours at a million documents.
  int tuning_sample = 20000;
  // kNN's search walks the posting lists of a document's terms through the
  // whole training collection, so its cost grows with the collection while
  // indexing a document does not. Past this many postings per token of a
  // document (estimated from the training collection's document
  // frequencies), kNN cannot keep up with indexing: it is left out of
  // combo's stack and of the default-method choice (it is still trained and
  // cross-validated for --method knn). At 1,000, kNN's search costs a sixth
  // to a quarter of what analysing and indexing the document does (measured
  // at 20,000 and 100,000 generated documents, BENCHMARKS.md). 0 = no limit.
  double knn_cost_limit = 1000;
  // A JSONL record with "labels": [] is always an example of "no category"
  // (any-of collections such as Reuters-21578). This also keeps documents
  // that give no labels at all (no "labels" key, a plain file, a file at a
  // folder tree's root) as such examples; otherwise they are skipped.
  bool keep_unlabelled = false;
  // Training documents committed to the training database per batch.
  int commit_batch = 2000;
  // Short texts (at most kShortTextMeanTokens terms per document on
  // average, kMinShortTextDocuments training documents or more; past
  // tuning_sample, compared on a uniform sample of that many):
  // cross-validation also tries the analysis with word bigrams, with
  // English stemming, with both, and without the stopword list, and keeps
  // whichever scores best (BENCHMARKS.md, "Subject lines"); longer
  // texts keep the analysis given (bigrams multiply their terms, training
  // time and model size several times for little accuracy). Only where analyzer.ngrams is 1 and
  // analyzer.stemmer "none"; `autocat train --ngrams` or `--stemmer` turns
  // it off.
  bool choose_short_text_analysis = true;
  // The methods cross-validated (their settings, thresholds and
  // calibrations) and compared for the default method; empty = every
  // method. kCombo stacks the other methods named and needs at least two of
  // them; without it no combination is fitted. The methods not named are
  // still fitted (at the settings given above, else their defaults) but
  // untuned: no thresholds, no calibration. Not kept in the model file:
  // `train --add --retune` cross-validates every method.
  std::vector<Method> methods;
  // Anytime training: return within about this many seconds from the start
  // of training (reading included), with the best selection found by then.
  // Cross-validation runs one method family at a time, each on every fold:
  // svm at C = 1 first (unless svm_c is set), then the cheapest; a family
  // whose folds (estimated, then projected from its first) would not fit
  // in the time left, with the final fit's estimate held back, is skipped
  // or stopped and left untuned. If none fits, the model is untuned and its
  // default method svm. Short texts keep the analysis given. The final fit
  // of every method is not cut short. 0 = no limit.
  double time_budget = 0;
};

// See TrainOptions::choose_short_text_analysis. Below kMinShortTextDocuments
// the analyses' cross-validated differences are noise (one document is
// 0.1 points at a thousand).
inline constexpr double kShortTextMeanTokens = 30.0;
inline constexpr uint64_t kMinShortTextDocuments = 1000;  // training documents, at least

// How a document is categorized at indexing or classification time.
struct ClassifyOptions {
  // Classifier to run; unset = the model's default method.
  std::optional<Method> method;
  // kNN: neighbours that vote; 0 = the model's k (chosen by cross-validation
  // at training time; the tuned thresholds were tuned with it).
  int k = 0;
  // kNN: walk only the postings of the `knn_max_query_terms` highest-weighted
  // query terms (0 = all: exact cosine).
  int knn_max_query_terms = 0;
  // kNN: skip query terms present in more than this share of training
  // documents (1.0 = skip none: exact cosine).
  double knn_max_df_ratio = 1.0;
  // kNN: how neighbours are found; unset = the search the model was tuned
  // with (two-step for models trained with it, exact for older ones and
  // for models whose kNN index lacks the two-step arrays).
  std::optional<KnnSearchMode> knn_search;
  // One-of or any-of; unset = the model's mode (see TrainOptions::decision).
  std::optional<Decision> decision;
  // One-of only: choose the best category among those reaching their tuned
  // thresholds (Rocchio: documents inside the category's radius), so a
  // document unlike every category gets none ("other"). Unset = on for
  // models trained with documents labelled "no category" (keep_unlabelled).
  std::optional<bool> other;
  // No category scoring below this is assigned, whatever the method or mode.
  double min_score = 0.0;
  // Any-of (and one-of with `other`): each category's threshold tuned at
  // training time applies on top of min_score (when the model has them;
  // kNN's were tuned with the model's k, so a different `k` may want
  // retraining with TrainOptions::knn_k). false: min_score alone decides.
  bool tuned_thresholds = true;
  // At most this many categories are assigned (any-of).
  int max_categories = 5;
};

// How categories are written into an application's Xapian documents.
struct IndexOptions {
  ClassifyOptions classify;  // how each document is categorized
  // Boolean term prefix of category terms.
  std::string category_prefix = kDefaultCategoryPrefix;
  // Value slot with the assigned categories and scores.
  Xapian::valueno category_slot = kDefaultCategorySlot;
  // Assign categories. false stores the text, id and data only (e.g. to
  // measure what categorizing costs, or to categorize later).
  bool categorize = true;
  // Add the text's search terms to the document the way Xapian::TermGenerator
  // does (FLAG_CJK_NGRAM, `stemmer`), so any Xapian QueryParser set up with
  // the same stemmer finds it. Set false if the application indexes the text
  // itself (categories only).
  bool index_text = true;
  // Snowball language of the search terms ("english", "german", ..., or
  // "none"): unstemmed terms with positions plus "Z"-prefixed stems, no
  // stopper (every word is indexed, so queries work with or without one).
  // Independent of the model's own analysis (AnalyzerOptions).
  std::string stemmer = "english";
  // Document data when the caller gives no title: the first this many bytes
  // of the text (cut on a character boundary).
  int snippet_bytes = 200;
  // A rules file (rule categories as Xapian queries, applied together with
  // the learned categories; see docs/rules.md). Empty: no rules.
  std::string rules_file;
};

}  // namespace autocat
