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
// refit; combo combines its members' live scores. What other Categorizers
// (in this process or another) append to the journal after this one opened
// is applied by catch_up(), and by learn() and forget() before their own
// records, so every open model applies the journal in its order.
//
// Opening and the lazily built parts are in categorizer_load.cc, live
// learning in categorizer_live.cc, the decision in decision.h, the
// training database's reading in training_db.h.
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
#include "classify/decide/decision.h"
#include "classify/decide/training_db.h"
#include "classify/io/journal.h"
#include "classify/io/model_dir.h"
#include "classify/methods/classifier.h"
#include "classify/methods/knn.h"
#include "classify/model/live_models.h"
#include "classify/model/model_io.h"
#include "classify/text/analyzer.h"

namespace autocat::internal {

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
  // The kNN search `options` ask for: theirs, or the model's.
  KnnSearchMode knn_search(const ClassifyOptions& options) const {
    return options.knn_search.value_or(model_.knn_search);
  }

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
  // Applies the records other Categorizers appended to the journal since
  // this one last read or wrote it, in journal order, as a fresh open would
  // replay them; returns how many. Costs a stat() when nothing was appended.
  // A torn tail (an append under way elsewhere) waits for the next call.
  // Throws ModelFormatError naming the journal if the new part is damaged or
  // the journal was cut, IOError if it cannot be read; nothing is applied
  // then. Thread-safe like learn().
  uint64_t catch_up();
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
  // Fits combo's members' live models that a change came after, at once
  // (LiveModels::fit); nothing while nothing was learned or forgotten.
  void fit_live_members() const;
  // Decodes the part of the model file that holds `method`'s state, once;
  // nothing for kNN, combo and a model fitted in memory.
  void load_part(Method method) const;
  // The decision (decision.h) of `options` resolved on this model.
  DecisionTrace decide_with(const std::vector<double>& scores, const ClassifyOptions& options,
                            bool explain) const;
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
  // kNN's index built in memory from `corpus`, with the two-step arrays if
  // the model was tuned with the two-step search.
  std::shared_ptr<const KnnIndex> build_knn_index(const TrainingCorpus& corpus) const;
  // Throws InvalidArgumentError if the model directory's installed model
  // is no longer the one this object opened (nothing for a model fitted in
  // memory).
  void require_installed() const;
  // Appends to the journal (no-op for a model fitted in memory), after
  // applying what others appended since journal_end_. REQUIRES:
  // learn_mutex_ held; kNN's index and the live models built.
  void journal(const std::vector<JournalRecord>& records, bool sync);
  // catch_up() with learn_mutex_ held.
  uint64_t catch_up_locked();
  // Applies records others appended: to kNN's index and the live models if
  // built, else kept for them to apply when they are. REQUIRES: learn_mutex_ held.
  void apply_appended_locked(const std::vector<JournalRecord>& records);

  std::string model_dir_;  // empty for a model fitted in memory
  ModelPaths paths_;
  // The core, read at construction; each per-method part is filled in by
  // file_->load() on its first use (once: ModelFile).
  mutable ModelState model_;
  // Combo's members' sections, decoded side by side on its first use.
  mutable std::once_flag combo_parts_loaded_;
  void load_combo_parts() const;
  std::unique_ptr<const ModelFile> file_;         // null for a model fitted in memory
  std::shared_ptr<const TrainingCorpus> corpus_;  // in-memory models only
  std::unique_ptr<Analyzer> analyzer_;
  Vocabulary vocabulary_;
  std::vector<float> idf_;
  std::vector<std::unique_ptr<Classifier>> classifiers_;  // by Method; kNN built lazily
  bool journal_at_open_ = false;                          // the journal held records at open

  // kNN, built on first use (knn_index()); every member but `once` is
  // touched only inside it until it has run.
  struct LazyKnn {
    std::once_flag once;
    // Opened at construction when it can be (the error waits for kNN's
    // first use); closed once kNN's index is built.
    Xapian::Database training_db;
    bool training_db_open = false;
    std::shared_ptr<const KnnIndex> index;
    std::shared_ptr<KnnLiveIndex> live;  // `index` with what was learned and forgotten
    std::unique_ptr<Classifier> classifier;
    // The journal as read at construction, applied when the index is
    // built (dropped then).
    std::shared_ptr<const std::vector<JournalRecord>> replay;
  };
  mutable LazyKnn knn_;

  // Rocchio's, Naive Bayes' and the linear methods' live models, read from
  // the training database on first need (ensure_live_models()).
  struct LazyLiveModels {
    std::once_flag once;
    // The journal as read at construction, applied when the live models
    // are built (dropped then).
    std::shared_ptr<const std::vector<JournalRecord>> replay;
    // Set once (std::atomic_store) by ensure_live_models; null until then or
    // if the training database could not be read (`error`).
    std::shared_ptr<LiveModels> models;
    std::atomic<bool> active{false};  // `models` is set
    std::string error;                // guarded by learn_mutex_
  };
  mutable LazyLiveModels live_;
  // Serializes learn() and forget(); guards what follows.
  mutable std::mutex learn_mutex_;
  uint64_t journal_end_ = 0;  // where this object last saw the journal end
  uint64_t journal_bytes_at_open_ = 0;
  // Records others appended after the open, waiting for kNN's index or the
  // live models to be built (knn_ready_, live_ready_: built, records go
  // straight to them).
  mutable std::vector<JournalRecord> knn_appended_;
  mutable std::vector<JournalRecord> live_appended_;
  mutable bool knn_ready_ = false;
  mutable bool live_ready_ = false;
  // The journal's size when this object last read or wrote it (catch_up's
  // stat compares against it), and whether records came after the open.
  std::atomic<uint64_t> journal_seen_{0};
  std::atomic<bool> appended_since_open_{false};
  mutable LiveStatus status_;  // its warnings guarded by warnings_mutex_
  // Adds a warning to status_ (any thread; taken under learn_mutex_ or not).
  void add_warning(std::string warning) const;
  mutable std::mutex warnings_mutex_;
  mutable size_t warnings_taken_ = 0;  // status_.warnings returned by take_warnings
};

}  // namespace autocat::internal
