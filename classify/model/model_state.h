// The trained model in memory (ModelState), and how Boost.Serialization
// writes it and the option structs it holds: each class's version lists
// what it added, and files of older versions still load.
//
// Thread safety: ModelState is data.
#pragma once

#include <boost/serialization/utility.hpp>
#include <boost/serialization/version.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "autocat/options.h"
#include "classify/corpus/weighting.h"
#include "classify/methods/calibration.h"
#include "classify/methods/combo.h"
#include "classify/methods/em.h"
#include "classify/methods/linear.h"
#include "classify/methods/naive_bayes.h"
#include "classify/methods/rocchio.h"
#include "classify/text/analyzer.h"

// Non-intrusive serialization of the public option structs, which stay free
// of Boost.
namespace boost::serialization {

template <class Archive>
void serialize(Archive& ar, autocat::AnalyzerOptions& options, const unsigned int version) {
  ar& options.stopwords& options.stemmer& options.max_term_bytes;
  if (version >= 1) ar& options.ngrams;
}

// A setting chosen by cross-validation when unset. TrainOptions version 6
// writes it as a flag and the value; older versions wrote the value alone,
// with `cross_validated(value)` true for "choose by cross-validation" (0 or
// negative), which loads unset.
template <class Archive, class T, class CrossValidated>
void serialize_setting(Archive& ar, std::optional<T>& setting, const unsigned int version,
                       CrossValidated cross_validated) {
  if (version >= 6) {
    bool given = setting.has_value();
    T value = setting.value_or(T{});
    ar& given& value;
    if (Archive::is_loading::value) setting = given ? std::optional<T>(value) : std::nullopt;
    return;
  }
  T value = T{};
  ar& value;
  if (Archive::is_loading::value) {
    setting = cross_validated(value) ? std::nullopt : std::optional<T>(value);
  }
}

template <class Archive>
void serialize(Archive& ar, autocat::TrainOptions& options, const unsigned int version) {
  const auto not_positive = [](auto value) { return !(value > 0); };
  const auto negative = [](double value) { return value < 0; };
  ar& options.analyzer& options.default_method;
  serialize_setting(ar, options.nb_alpha, version, not_positive);
  serialize_setting(ar, options.rocchio_gamma, version, negative);
  ar& options.feature_selection& options.num_features& options.features_per_category& options
      .tune_thresholds& options.keep_unlabelled& options.commit_batch;
  if (version >= 1) {
    int decision = options.decision ? static_cast<int>(*options.decision) : -1;  // -1 = detect
    ar& decision& options.threshold_folds;
    serialize_setting(ar, options.knn_k, version, not_positive);
    serialize_setting(ar, options.knn_similarity_power, version, not_positive);
    if (Archive::is_loading::value) {
      options.decision =
          decision < 0 ? std::nullopt
                       : std::optional<autocat::Decision>(static_cast<autocat::Decision>(decision));
    }
  }
  if (version >= 2) {
    serialize_setting(ar, options.svm_c, version, not_positive);
    serialize_setting(ar, options.logreg_c, version, not_positive);
  }
  if (version >= 3) ar& options.choose_default_method;
  if (version >= 4) ar& options.tuning_sample;
  if (version >= 5) {
    serialize_setting(ar, options.knn_concentration, version, negative);
  } else if (Archive::is_loading::value) {
    options.knn_concentration = 0.0;  // kNN weighed terms by idf alone
  }
  if (version >= 7) {
    ar& options.knn_cost_limit;
  } else if (Archive::is_loading::value) {
    options.knn_cost_limit = 0;  // kNN was always stacked
  }
}

}  // namespace boost::serialization

// Version 1 (2026-11): TrainOptions::decision and threshold_folds;
// ModelState::decision. Version 0 files still load (one-of, no "other").
// Version 2 (2026-11): svm_c, logreg_c.
// Version 3 (2026-11): choose_default_method; nb_alpha 0 = cross-validated.
// Version 4 (2026-11): tuning_sample (older files: the default).
// Version 5: knn_concentration (older files: 0, idf alone, as they were
// trained; `train --add` keeps that).
// Version 6: nb_alpha, rocchio_gamma, knn_k, knn_similarity_power, svm_c,
// logreg_c and knn_concentration are std::optional, written as a flag and a
// value (serialize_setting); older files' 0 or negative ("cross-validate")
// load as unset.
// Version 7: knn_cost_limit (older files: 0, no limit, as they were
// trained; `train --add` keeps that).
BOOST_CLASS_VERSION(autocat::TrainOptions, 7)
// Version 1 (2026-11): ngrams. Older files load with single words only.
BOOST_CLASS_VERSION(autocat::AnalyzerOptions, 1)
BOOST_CLASS_VERSION(autocat::internal::AnalyzerSettings, 1)

namespace autocat::internal {

// The threshold of a category never assigned: the data cannot calibrate it
// (train/thresholds.h). Scores are at most 1.
inline constexpr double kNeverAssign = 2.0;

// One kNN setting tried by cross-validation and its objective.
struct KnnCandidate {
  int k = 0;
  int similarity_power = 1;
  double objective = 0;
  double concentration = 0;      // version 1: knn_term_weights' exponent
  KnnTf tf = KnnTf::kSublinear;  // version 2: the tf transform

  template <class Archive>
  void serialize(Archive& ar, const unsigned int version) {
    ar& k& similarity_power& objective;
    if (version >= 1) ar& concentration;
    if (version >= 2) ar& tf;
  }
};

struct ModelState {
  AnalyzerSettings analyzer;  // what training.analyzer resolved to
  TrainOptions training;      // as the model was trained; `train --add` reuses them

  std::vector<std::string> categories;  // sorted
  std::vector<uint32_t> category_doc_counts;
  uint32_t num_docs = 0;
  uint64_t num_postings = 0;       // to check the training database is unchanged
  std::vector<std::string> terms;  // vocabulary, sorted
  std::vector<uint32_t> df;
  std::vector<uint8_t> selected;  // per term; empty = every term
  std::string icu_version;        // segmentation may differ across ICU versions

  // The decision mode the model was trained for (TrainOptions::decision,
  // resolved from the data when unset).
  Decision decision = Decision::kOneOf;
  // True if training kept documents labelled "no category".
  bool has_unlabelled = false;
  // kNN's k and Rocchio's gamma in force (chosen by cross-validation unless
  // the training options set them).
  int knn_k = kDefaultKnnK;
  int knn_similarity_power = 1;  // a neighbour votes with similarity^power
  // Version 6: the exponent of the terms' class concentration in kNN's
  // weights (knn_term_weights) and those weights, one per term; empty when
  // it is 0 (older files): kNN then weighs terms by idf.
  double knn_concentration = 0.0;
  std::vector<float> knn_term_weight;
  // What knn_concentration raises: version 7 files (relevance frequency,
  // knn_term_weights()); older ones raised the terms' class concentration,
  // 1 - normalized entropy, which refits cannot recompute.
  bool knn_relevance_frequency = true;
  // Version 8: kNN's tf transform, training documents and queries alike
  // (older files: sublinear, as they were trained).
  KnnTf knn_tf = KnnTf::kSublinear;
  // Version 9: the search cross-validation ran kNN with, and classification
  // uses unless ClassifyOptions::knn_search says otherwise (older files:
  // exact, as they were tuned).
  KnnSearchMode knn_search = KnnSearchMode::kExact;
  // kNN's term weights given the model's `idf`: knn_term_weight, or idf.
  const std::vector<float>& knn_weights(const std::vector<float>& idf) const {
    return knn_term_weight.empty() ? idf : knn_term_weight;
  }
  double rocchio_gamma = 0.0;
  // The cross-validated objective of every candidate tried.
  std::vector<KnnCandidate> knn_objective;
  std::vector<std::pair<double, double>> rocchio_gamma_objective;

  // Thresholds tuned by cross-validation on the training documents:
  // thresholds[method][category]; empty if not tuned. A category's
  // threshold is the score it must reach to be assigned (any-of, and
  // one-of with "other"); for Rocchio it is the cosine radius of the
  // centroid. kNeverAssign marks a category the data cannot calibrate.
  std::vector<std::vector<double>> thresholds;

  RocchioModel rocchio;
  NaiveBayesModel multinomial_nb;
  NaiveBayesModel bernoulli_nb;
  NaiveBayesModel complement_nb;
  // Linear models (version 2); empty in older files, which then cannot
  // classify with svm or logreg until trained again.
  LinearModel svm;
  LinearModel logreg;
  // The cross-validated objective of every C tried, per linear method.
  std::vector<std::pair<double, double>> svm_c_objective;
  std::vector<std::pair<double, double>> logreg_c_objective;

  // Version 4: Naive Bayes' alpha candidates and their cross-validated
  // objectives, [nb, bnb, cnb][candidate] = (alpha, objective); the best
  // objective of each method (indexed by Method; -1 = not tuned), from
  // which choose_default_method picked. Empty in older files.
  std::vector<std::vector<std::pair<double, double>>> nb_alpha_objective;
  std::vector<double> method_objective;

  // Semi-supervised EM (train --unlabelled) behind multinomial_nb: lambda,
  // M-steps (0 = not used), unlabelled documents, objective per iteration.
  EmReport em;

  // Version 5: each method's probability calibration, by method (empty: raw
  // scores), and combo's stacked model (empty: combo averages members).
  std::vector<Calibration> calibration;
  ComboModel combo;

  // Documents cross-validation ran on (see TrainOptions::tuning_sample),
  // for the training report; not saved.
  uint64_t tuned_on_documents = 0;
  uint32_t tuned_copied_documents = 0;   // TunedSettings::copied_documents
  uint32_t tuned_pruned_candidates = 0;  // TunedSettings::pruned_candidates
  std::vector<double> rare_cut_ratio;    // TunedSettings::rare_cut_ratio
  std::vector<int> rare_cut_variant;     // TunedSettings::rare_cut_variant
  double knn_postings_per_token = 0;     // TunedSettings::knn_postings_per_token
  bool knn_keeps_up = true;              // TunedSettings::knn_keeps_up

  template <class Archive>
  void serialize(Archive& ar, const unsigned int version) {
    serialize_with(ar, version, rocchio, multinomial_nb, bernoulli_nb, complement_nb, svm, logreg);
  }

  // Every field, with the per-method models (ModelPart) taken from the
  // arguments: serialize() passes the members; the core section of a
  // version 2 file passes empty models in their place (model_io.cc).
  template <class Archive>
  void serialize_with(Archive& ar, const unsigned int version, RocchioModel& rocchio,
                      NaiveBayesModel& multinomial_nb, NaiveBayesModel& bernoulli_nb,
                      NaiveBayesModel& complement_nb, LinearModel& svm, LinearModel& logreg) {
    ar& analyzer& training;
    ar& categories& category_doc_counts& num_docs& num_postings& terms& df& selected& icu_version;
    ar& thresholds& rocchio& multinomial_nb& bernoulli_nb& complement_nb;
    if (version >= 1) {
      ar& decision& has_unlabelled& knn_k& knn_similarity_power& rocchio_gamma& knn_objective&
          rocchio_gamma_objective;
    } else {
      // Unset: the file held a negative gamma, which the model check refuses.
      rocchio_gamma = training.rocchio_gamma.value_or(-1.0);
    }
    if (version >= 2) {
      ar& svm& logreg& svm_c_objective& logreg_c_objective;
    } else if (Archive::is_loading::value && !thresholds.empty()) {
      thresholds.resize(all_methods().size());  // methods added since: untuned
    }
    if (version >= 3) {
      ar& em.lambda& em.iterations& em.converged& em.unlabelled_docs& em.log_likelihood& em
          .lambda_accuracy;
    }
    if (version >= 4) ar& nb_alpha_objective& method_objective;
    if (version >= 5) {
      ar& calibration& combo;
    } else if (Archive::is_loading::value && !thresholds.empty()) {
      thresholds.resize(all_methods().size());  // combo: untuned
    }
    if (version >= 6) ar& knn_concentration& knn_term_weight;
    if (version >= 7) {
      ar& knn_relevance_frequency;
    } else if (Archive::is_loading::value) {
      knn_relevance_frequency = false;
    }
    if (version >= 8) {
      ar& knn_tf;
    } else if (Archive::is_loading::value) {
      knn_tf = KnnTf::kSublinear;
    }
    if (version >= 9) {
      ar& knn_search;
    } else if (Archive::is_loading::value) {
      knn_search = KnnSearchMode::kExact;
    }
  }
};

}  // namespace autocat::internal

// Version 2 (2026-11): svm and logreg weights and their C objectives.
// Version 3: ModelState::em. Older files load with EM not used.
// Version 4: nb_alpha_objective, method_objective (and AnalyzerSettings
// version 1: ngrams).
// Version 5: calibration and combo. Older files load with raw scores and
// combo averaging its members.
// Version 6: knn_concentration and knn_term_weight (KnnCandidate version 1:
// concentration). Older files load with kNN weighing terms by idf.
// Version 7: knn_relevance_frequency. Older files' kNN weights are kept for
// classification; train --add cross-validates their settings again.
// Version 8: knn_tf (KnnCandidate version 2: tf). Older files load with
// sublinear tf, which their weights and index files were made with.
// Version 9: knn_search. Older files load with the exact search they were
// tuned with.
BOOST_CLASS_VERSION(autocat::internal::ModelState, 9)
BOOST_CLASS_VERSION(autocat::internal::KnnCandidate, 2)

namespace autocat::internal {

// The per-method models of ModelState, each a section of its own in a
// version 2 model file, decoded and checked on first use. The values are
// the file's section numbering (kind = 1 + part): never renumber. Which
// method owns which part is MethodTraits::model_part
// (classify/base/method_traits.h), not the enum's order.
enum class ModelPart : uint32_t {
  kRocchio,
  kMultinomialNb,
  kBernoulliNb,
  kComplementNb,
  kSvm,
  kLogreg,
};
inline constexpr size_t kNumModelParts = 6;
// The part holding `method`'s trained state; false for kNN and combo (their
// state is in the core).
bool model_part_of(Method method, ModelPart* part);
// "rocchio", "nb", ...: as the method's name.
std::string model_part_name(ModelPart part);

}  // namespace autocat::internal
