// Categorizer: a loaded model directory. Analyzes text with the model's own
// analyzer settings and scores every category with any method. The model
// file is read, and the training database of the same generation opened, at
// construction (see model_dir.h); kNN's in-memory postings are built from
// that open database the first time kNN is used, so a `train` into the
// directory meanwhile changes nothing for this object.
//
// Live learning: learn() and forget() change the open model's training
// documents. Each call is appended to the generation's journal (journal.h)
// before it takes effect, so a Categorizer opened later, in this process or
// another, replays it; `autocat train --add` folds the journal into the next
// generation. kNN sees a change at once (KnnLiveIndex: exact cosines
// against the trained idf, which stays as trained until the refit). Rocchio
// and the Naive Bayes family see it at their next score (LiveModels: their
// category sums are updated exactly and the model fitted again from them,
// with idf, vocabulary, feature selection, alpha and gamma as trained), and
// so do svm and logreg (live_linear.h: learned documents get dual variables
// of their own, fitted from the trained weights; C and Platt's sigmoids as
// trained). Those sums are read from the training database on the first
// learn() or forget(), or on the first Rocchio / NB / linear score when the
// journal held records at open; a model with an empty journal never reads
// it. Without the training database (a classify-only node) these methods
// keep the trained models and live_status() says so. Combo's stacking
// weights, thresholds, radii and calibration stay as trained until the
// refit; combo combines its members' live scores. A Categorizer does not
// see what other processes learn after it opened.
//
// Thread safety: every const method may be called from many threads at
// once, also while learn() and forget() run on other threads; learn() and
// forget() calls are serialized among themselves.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "autocat/options.h"
#include "autocat/types.h"
#include "classify/io/journal.h"
#include "classify/io/model_dir.h"
#include "classify/methods/classifier.h"
#include "classify/methods/knn.h"
#include "classify/model/live_models.h"
#include "classify/model/model_io.h"
#include "classify/text/analyzer.h"

namespace autocat::internal {

// Why a decision came out as it did.
struct DecisionTrace {
  Method method = Method::kKnn;
  Decision mode = Decision::kOneOf;
  bool other = false;  // one-of choosing among categories that reach their thresholds
  bool tuned = false;  // per-category tuned thresholds applied
  double min_score = 0;
  struct Candidate {
    std::string name;
    double score = 0;
    double threshold = 0;  // the score it had to reach (>= kNeverAssign: never assigned)
    bool assigned = false;
  };
  std::vector<Candidate> candidates;  // best scores first: every assigned one, at least 5
  std::vector<Category> assigned;
  std::string reason;  // one line, e.g. "other: no category reached its threshold; ..."
  // Rule categories that fired (classify/decide/rules.h), in file order.
  struct FiredRule {
    std::string source;  // "FILE:LINE"
    std::string category;
    std::string mode;  // "assign", "veto", "evidence:+0.3"
    std::string query;
  };
  std::vector<FiredRule> rules;
};

// Opens the training database at `path` of the model in `model_dir` and
// reads it whole. Throws NotFoundError if it cannot be opened and
// ModelFormatError naming `path` if Xapian finds it damaged.
Xapian::Database open_training_db(const std::string& path, const std::string& model_dir);
TrainingCorpus read_training_corpus(const Xapian::Database& db, const std::string& path,
                                    const std::string& model_dir);
TrainingCorpus read_training_corpus(const std::string& path, const std::string& model_dir);

// A training document for Categorizer::learn.
struct LearnedDocument {
  std::string id;
  std::string text;
  std::vector<std::string> labels;  // categories the model has; at least one
};

// What live learning has done on an open Categorizer.
struct LiveStatus {
  uint64_t replayed = 0;              // journal records applied when the model was opened
  uint64_t learned_now = 0;           // documents learned through this object
  uint64_t forgotten_now = 0;         // documents forgotten through this object
  uint32_t learned_present = 0;       // learned documents kNN sees now
  uint32_t forgotten_base = 0;        // training documents hidden by a forget
  std::vector<std::string> warnings;  // torn journal records ignored, records skipped
};

class Categorizer {
 public:
  // Throws NotFoundError (missing/empty directory) or ModelFormatError.
  explicit Categorizer(const std::string& model_dir);
  // A model fitted in memory (cross-validation, threshold tuning): kNN's
  // postings come from `corpus`, the corpus `model` was fitted on.
  Categorizer(ModelState model, std::shared_ptr<const TrainingCorpus> corpus);
  ~Categorizer();

  const std::string& model_dir() const { return model_dir_; }
  // The files this categorizer loaded (empty for a model fitted in memory).
  const ModelPaths& paths() const { return paths_; }
  // Where the journal ended when the model was opened (0: no journal): with
  // the model file, the identity of the model this object classifies with.
  uint64_t journal_bytes_at_open() const { return journal_bytes_at_open_; }
  const Analyzer& analyzer() const { return *analyzer_; }
  // The whole model: decodes every method's state not decoded yet (see
  // ModelFile), which at a million documents takes seconds and gigabytes;
  // classification needs core() and one method's part only.
  const ModelState& model() const;
  // The model without the per-method parts (ModelPart) not loaded yet:
  // read no member that ModelPart names through it; use rocchio(),
  // naive_bayes() and linear(), which load theirs.
  const ModelState& core() const { return model_; }
  // A method's trained state, decoded and checked on first use. Throws
  // ModelFormatError naming the model file if its section is damaged.
  const RocchioModel& rocchio() const;
  // REQUIRES: `method` is one of the Naive Bayes methods.
  const NaiveBayesModel& naive_bayes(Method method) const;
  // REQUIRES: `method` is kSvm or kLogreg.
  const LinearModel& linear(Method method) const;
  const std::vector<std::string>& categories() const { return model_.categories; }
  Method default_method() const { return model_.training.default_method; }
  const Vocabulary& vocabulary() const { return vocabulary_; }
  // Index of `name` in categories(), or -1 if the model has no such category.
  int64_t category_index(const std::string& name) const;

  DocumentTerms document_terms(const std::vector<Token>& tokens) const;
  // Scores of every category, indexed like categories(). Builds the kNN index
  // on first use (throws if the training database is missing or changed).
  std::vector<double> scores(const DocumentTerms& doc, const ClassifyOptions& options) const;
  // Every category with its score, best first (ties by name).
  std::vector<Category> ranked(const std::vector<double>& scores) const;
  // The decision mode, "other" switch and method `options` resolve to.
  Decision decision_mode(const ClassifyOptions& options) const;
  bool other_enabled(const ClassifyOptions& options) const;
  Method method(const ClassifyOptions& options) const;
  // kNN's k when options leave it 0.
  int knn_k() const { return model_.knn_k; }
  int knn_k(const ClassifyOptions& options) const { return knn_k(options.k); }
  int knn_k(int k) const { return k > 0 ? k : knn_k(); }

  // The categories assigned (see ClassifyOptions: decision, other,
  // min_score, tuned_thresholds, max_categories).
  std::vector<Category> decide(const std::vector<double>& scores,
                               const ClassifyOptions& options) const;
  // The same decision with the rule applied, the threshold each leading
  // category had to reach and a one-line reason.
  DecisionTrace explain_decision(const std::vector<double>& scores,
                                 const ClassifyOptions& options) const;
  // Analyze + score + decide.
  std::vector<Category> classify(std::string_view text, const ClassifyOptions& options) const;

  // True if scores() of `method` are probabilities: a calibrated model
  // (format version 4 with tuning), or a method whose raw scores are.
  bool gives_probabilities(Method method) const;

  // The classifier for a method (building kNN's index if needed).
  const Classifier& classifier(Method method) const;
  // Loads kNN's index now (e.g. before timing): the trained one, without
  // what was learned since (see live_index()).
  const KnnIndex& knn_index() const;
  // kNN's index with the documents learned and forgotten since training.
  const KnnLiveIndex& live_index() const;

  // Adds a training document (or replaces the one with the same id): it is
  // journaled (and fsynced) first, then kNN sees it. Throws
  // InvalidArgumentError naming the id if it is empty or too long, has no
  // labels or a category the model does not have (new categories need
  // `autocat train --add`), or has no terms after analysis; IOError if the
  // journal cannot be written (see append_journal). Nothing is learned then.
  void learn(const std::string& id, std::string_view text, const std::vector<std::string>& labels);
  // Learns several documents with one journal append; `sync` false skips
  // the fsync (a crash may then lose them). All or nothing: every document
  // is checked before any is written.
  void learn(const std::vector<LearnedDocument>& documents, bool sync = true);
  // Removes a training document (trained or learned) by id. Throws
  // NotFoundError naming the id if there is none (nothing is forgotten).
  void forget(const std::string& id);
  void forget(const std::vector<std::string>& ids, bool sync = true);
  LiveStatus live_status() const;
  // The warnings about the journal (a torn tail ignored, records skipped,
  // the journal not applied without the training database) not returned by
  // an earlier call: each is returned once, so that every reader can report
  // it. Some appear only once a method is first used (kNN's index built,
  // the live models read); call it after classifying too. Builds nothing.
  std::vector<std::string> take_warnings() const;
  // The live model of Rocchio or a Naive Bayes method, fitted for the
  // documents learned and forgotten so far; null while nothing was learned
  // or forgotten (the trained model applies) or if `method` is not kept
  // live (see LiveModels::keeps). Reads the training database if the
  // journal held records at open.
  std::shared_ptr<const LiveModel> live_model(Method method) const;

 private:
  void build_classifiers();
  // Decodes the part of the model file that holds `method`'s state, once;
  // nothing for kNN, combo and a model fitted in memory.
  void load_part(Method method) const;
  // The decision; with `explain`, also the candidates and the reason.
  DecisionTrace decide_with(const std::vector<double>& scores, const ClassifyOptions& options,
                            bool explain) const;
  // The category with the most training documents (one-of's choice
  // without evidence).
  uint32_t most_frequent_category() const;
  // Applies a journal record to the live index; false if it was skipped.
  bool apply_record(const JournalRecord& record, KnnLiveIndex* live) const;
  // A learned record's terms and categories; false (with a warning if
  // `warn`) if a label is not a category of the model.
  bool record_document(const JournalRecord& record, bool warn, DocumentTerms* doc,
                       std::vector<uint32_t>* categories) const;
  // Reads the category sums and replays the journal, once. With
  // `for_learning`, a training database that cannot be read throws;
  // otherwise it leaves Rocchio and NB as trained, with a warning.
  void ensure_live_models(bool for_learning) const;
  // The id of each training document, by dense index, from the training
  // database: `db` if given (open already), else opened for this. Throws
  // NotFoundError or ModelFormatError naming it.
  std::vector<std::string> training_ids(const Xapian::Database* db = nullptr) const;
  // Throws InvalidArgumentError if the model directory's installed model
  // is no longer the one this object opened (nothing for a model fitted in
  // memory).
  void require_installed() const;
  // Appends to the journal (no-op for a model fitted in memory).
  void journal(const std::vector<JournalRecord>& records, bool sync);

  std::string model_dir_;  // empty for a model fitted in memory
  ModelPaths paths_;
  // Opened at construction when it can be (the error waits for kNN's first
  // use); closed once kNN's index is built. Touched only inside knn_once_.
  mutable Xapian::Database training_db_;
  mutable bool training_db_open_ = false;
  // The core, read at construction; each per-method part is filled in by
  // file_->load() on its first use (once: ModelFile).
  mutable ModelState model_;
  std::unique_ptr<const ModelFile> file_;         // null for a model fitted in memory
  std::shared_ptr<const TrainingCorpus> corpus_;  // in-memory models only
  std::unique_ptr<Analyzer> analyzer_;
  Vocabulary vocabulary_;
  std::vector<float> idf_;
  std::vector<std::unique_ptr<Classifier>> classifiers_;  // by Method; kNN built lazily
  mutable std::once_flag knn_once_;
  mutable std::shared_ptr<const KnnIndex> knn_index_;
  mutable std::shared_ptr<KnnLiveIndex> live_index_;
  mutable std::unique_ptr<Classifier> knn_classifier_;
  // The journal as read at construction, applied when kNN's index is built
  // and when the live models are (each drops its pointer then).
  mutable std::shared_ptr<const std::vector<JournalRecord>> knn_replay_;
  mutable std::shared_ptr<const std::vector<JournalRecord>> live_replay_;
  bool journal_at_open_ = false;  // the journal held records at open
  mutable std::once_flag live_models_once_;
  // Set once (std::atomic_store) by ensure_live_models; null until then or
  // if the training database could not be read (live_models_error_).
  mutable std::shared_ptr<LiveModels> live_models_;
  mutable std::atomic<bool> live_models_active_{false};  // live_models_ is set
  mutable std::string live_models_error_;                // guarded by learn_mutex_
  // Serializes learn() and forget(); guards what follows.
  mutable std::mutex learn_mutex_;
  uint64_t journal_end_ = 0;  // where this object last saw the journal end
  uint64_t journal_bytes_at_open_ = 0;
  mutable LiveStatus status_;  // its warnings guarded by warnings_mutex_
  // Adds a warning to status_ (any thread; taken under learn_mutex_ or not).
  void add_warning(std::string warning) const;
  mutable std::mutex warnings_mutex_;
  mutable size_t warnings_taken_ = 0;  // status_.warnings returned by take_warnings
};

}  // namespace autocat::internal
