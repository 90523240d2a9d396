// Rocchio's, the Naive Bayes family's and the linear methods' live view of
// a model: the category sums (category_sums.h) of the training documents,
// plus the documents learned since, minus those forgotten since, and the
// models fitted from them with the same functions batch training uses.
//
// A learned document enters the sums as a training document does, so the
// fitted models equal those `train` would fit on the same documents with
// the frozen parts of the trained model: until the next refit (`autocat
// train --add`) idf, the vocabulary (terms the model does not know are not
// seen), the feature selection, NB's alpha, Rocchio's gamma, radii,
// thresholds and calibration stay as trained. A change costs only the
// update of the sums (a few microseconds: the entries of its terms and
// categories); a model is fitted again (all of it: complement NB and
// Rocchio's gamma touch every category) the first time it is asked for
// after a change, so a batch of learns costs one fit, in time and memory
// proportional to the sums' entries plus terms and categories, never
// terms x categories (the Naive Bayes weights stay sparse, NbWeightRows).
// Each kind of sum (sparse: one entry per term and category that occur
// together) is built on the first model()
// of a method that needs it, from the training collection and the changes
// so far in their order (the same arithmetic as building it at once), and
// the Naive Bayes and linear sections of the model file are decoded, and
// svm's and logreg's live state set up, only when one of their models is
// first asked for (the changes replayed onto it then): a model scored with
// kNN alone learns at the cost of kNN, whatever its categories and
// vocabulary.
// Multinomial NB fitted by EM (train --unlabelled) is not kept: it stays as
// trained.
//
// svm and logreg have no sums: a learned document gets dual variables of
// its own, fitted by warm-started coordinate descent at the next score over
// the documents changed since, and a forgotten one's share of the weights
// is taken out (live_linear.h). Frozen as above, plus C, the training
// documents' dual variables, the bias weights and Platt's sigmoids: each is
// fitted over the whole collection (the sigmoids out of fold), which a
// refit redoes.
//
// Thread safety: every method may be called from many threads at once.
// Changes and fits take a mutex; a fitted model is published with
// std::atomic_store and never modified, so a reader holding one keeps
// scoring with it while another thread changes the sums.
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "autocat/options.h"
#include "classify/corpus/category_sums.h"
#include "classify/methods/classifier.h"
#include "classify/methods/live_linear.h"
#include "classify/methods/naive_bayes.h"
#include "classify/methods/rocchio.h"
#include "classify/model/model_io.h"

namespace autocat::internal {

// A model fitted from the sums at one point: the model of its method and
// a classifier over it.
struct LiveModel {
  Method method = Method::kRocchio;
  uint64_t version = 0;         // LiveModels::version() it was fitted at
  RocchioModel rocchio;         // kRocchio
  NaiveBayesModel naive_bayes;  // the Naive Bayes methods
  std::unique_ptr<Classifier> classifier;
};

class LiveModels {
 public:
  // The sums of `corpus`, the corpus `model` was trained on; `idf` as the
  // model's classifiers use it (compute_idf of its df and selection);
  // `base_ids`: the id of each corpus document, or empty (a model fitted in
  // memory: its documents cannot be forgotten by id). `load_part(method)`
  // decodes that method's section of `model` (ModelPart) before it is first
  // read here. `model` must outlive this (the Naive Bayes settings and the
  // svm and logreg weights are read from it when first needed).
  LiveModels(const ModelState& model, const std::vector<float>& idf,
             std::shared_ptr<const TrainingCorpus> corpus, std::vector<std::string> base_ids,
             std::function<void(Method)> load_part);
  ~LiveModels();

  // True for the methods kept live: Rocchio, bnb, cnb, nb unless EM fitted
  // it, and svm and logreg if trained.
  bool keeps(Method method) const;
  // Adds a document, replacing any document with its id. Terms >= the
  // model's vocabulary are ignored. REQUIRES: categories < the model's.
  void learn(const std::string& id, const DocumentTerms& doc,
             const std::vector<uint32_t>& categories);
  // Removes the document with this id; false if there is none.
  bool forget(const std::string& id);
  // Changes so far (learn and forget calls that changed something).
  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  // The model of `method` for the current sums, fitted now if a change
  // came after the last fit. Null if !keeps(method).
  std::shared_ptr<const LiveModel> model(Method method) const;
  // Entries held by the sums built so far (CategorySums::num_entries):
  // what the live state holds per (term, category) pair.
  uint64_t sum_entries() const;
  // Fits now, each on its own thread (as many at once as there are cores),
  // the models of `methods` that a change came after: what model() would
  // do for each in turn, in the time of the slowest (combo asks for all of
  // its members on every score). Methods not kept are skipped.
  void fit(const std::vector<Method>& methods) const;

 private:
  struct Learned {
    DocumentTerms doc;
    std::vector<uint32_t> categories;
  };
  // Adds (sign +1) or subtracts (-1) a document to every sum built, and
  // logs it for those not built yet. REQUIRES: mutex_ held.
  void add_locked(const DocumentTerms& doc, const std::vector<uint32_t>& categories, double sign);
  // The sums `amount` adds up, built now if they were not.
  // REQUIRES: mutex_ held; a kept method needs them.
  const CategorySums& sums_locked(TermAmount amount) const;
  bool remove_locked(const std::string& id);
  std::shared_ptr<const LiveModel> fit_locked(Method method) const;
  // What `method`'s sums add up: presence, counts or tf-idf components.
  // REQUIRES: mutex_ held (reads the Naive Bayes settings if needed).
  TermAmount amount_for(Method method) const;
  bool keeps_locked(Method method) const;
  // Reads the Naive Bayes models' alpha and weighting, once.
  void read_nb_locked() const;
  // The live state of svm (slot 0) or logreg (1), set up on first use with
  // the changes so far; null if that method is not trained.
  LiveLinear* linear_locked(int slot) const;
  // A change to the linear methods' state, applied or kept for replay.
  struct LinearChange {
    enum class Kind { kLearn, kForgetLearned, kForgetTrained } kind;
    std::string id;
    DocumentTerms doc;
    std::vector<uint32_t> categories;
  };
  void linear_change_locked(LinearChange change);
  static void apply(const LinearChange& change, LiveLinear* linear);
  // Drops the change log and the corpus once nothing needs them.
  void release_locked() const;

  // Frozen parts of the trained model.
  const ModelState& model_;
  std::function<void(Method)> load_part_;
  std::vector<uint8_t> selected_;
  std::vector<float> idf_;
  double rocchio_gamma_ = 0;
  bool multinomial_from_em_ = false;

  mutable std::mutex mutex_;  // guards what follows, and fits
  mutable bool nb_read_ = false;
  mutable double alpha_[3] = {1, 1, 1};  // nb, bnb, cnb
  mutable bool tfidf_[3] = {false, false, false};
  // By linear_slot(): svm, logreg; null if not trained (or not set up yet:
  // linear_read_).
  mutable std::unique_ptr<LiveLinear> linear_[2];
  mutable bool linear_read_[2] = {false, false};
  // The linear changes since the training, while one of them is not set up.
  mutable std::vector<LinearChange> linear_changes_;
  // The training collection, to build the sums from when first needed
  // (dropped once every kept sum is built).
  mutable std::shared_ptr<const TrainingCorpus> corpus_;
  // By TermAmount: kCount, kPresence, kTfidf (empty until built).
  mutable std::array<CategorySums, 3> sums_;
  // A kept method needs them (counts: known once nb_read_).
  mutable std::array<bool, 3> sums_kept_ = {false, false, false};
  mutable std::array<bool, 3> sums_built_ = {false, false, false};
  // The changes since the training, in order, while some kept sums are not
  // built (replayed onto them when they are).
  struct Change {
    DocumentTerms doc;
    std::vector<uint32_t> categories;
    double sign;
  };
  mutable std::vector<Change> changes_;
  // The training documents doc-major: document d's terms are
  // base_terms_[base_start_[d] .. base_start_[d + 1]).
  std::vector<uint64_t> base_start_;
  std::vector<TermCount> base_terms_;
  std::vector<std::vector<uint32_t>> base_categories_;
  std::vector<uint8_t> base_forgotten_;
  std::unordered_map<std::string, uint32_t> base_ids_;
  std::unordered_map<std::string, Learned> learned_;
  std::atomic<uint64_t> version_{0};
  // The version fit() last fitted its methods at (~0: never).
  mutable std::atomic<uint64_t> fit_version_{~uint64_t{0}};
  // By Method; read with std::atomic_load, replaced with std::atomic_store.
  mutable std::vector<std::shared_ptr<const LiveModel>> fitted_;
};

}  // namespace autocat::internal
