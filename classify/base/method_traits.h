// What each classifier method is, in one table: its name, the model file
// section holding its trained state, its family and the properties the
// trainer, categorizer, evaluation and CLI ask of it. Code that needs a
// property of a method looks it up here rather than switching on Method or
// computing with the enum's values.
//
// Thread safety: the table is immutable; safe from any thread.
#pragma once

#include <cstdint>
#include <vector>

#include "autocat/types.h"

namespace autocat::internal {

// Methods sharing a model type and trainer.
enum class MethodFamily { kKnn, kRocchio, kNaiveBayes, kLinear, kCombo };

struct MethodTraits {
  Method method;
  // Short name on the command line and in JSON (method_name()).
  const char* name;
  MethodFamily family;
  // Index of the model file section holding the method's trained state
  // (ModelPart in classify/model/model_state.h; section kind = part + 1), or
  // kNoModelPart when the state is in the core (kNN's training database
  // index, combo's stacked weights). Written in model files: never renumber.
  int32_t model_part;
  // Index among the methods of its family, in the order of the per-family
  // arrays (Naive Bayes: alpha and tf-idf arrays, TunedSettings::nb_alpha;
  // linear: svm 0, logreg 1); -1 for the families of one method.
  int32_t family_slot;
  // Scores are posterior probabilities summing to 1 over the categories, so
  // log-loss is defined; kNN's votes and Rocchio's cosines are not.
  bool gives_probabilities;
  // Learns documents added after training (`autocat learn`) from category
  // sums or an online fit; kNN learns through its index, combo not at all.
  bool learns_live;
  // A member of the stacked combo model (combo_members()).
  bool combo_member;
  // Terms count as present or absent, not by their frequency (Bernoulli NB).
  bool counts_presence;
  // A cut placed among the cross-validation folds' scores holds for the
  // model fitted on every document: kNN's votes, Rocchio's cosines and the
  // linear margins keep their scale as the training set grows, where Naive
  // Bayes posteriors grow more extreme with it (and combo stacks them). A
  // category too rare for its own F1-tuned cut may then get a proportional
  // cut of its own held-out scores (thresholds_from).
  bool held_out_cuts_transfer;
};

inline constexpr int32_t kNoModelPart = -1;

// Every method's traits, in the order of the enum (all_methods()).
const std::vector<MethodTraits>& method_table();
// The traits of `method`, or null for a value outside the enum (e.g. read
// from a damaged file).
const MethodTraits* find_method_traits(Method method);
// The traits of `method`; throws InvalidArgumentError for a value outside the
// enum.
const MethodTraits& method_traits(Method method);
// The methods of `family`, in the order of their family_slot.
std::vector<Method> methods_of(MethodFamily family);

}  // namespace autocat::internal
