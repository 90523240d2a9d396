#include "classify/train/thresholds.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <thread>

#include "classify/corpus/category_sums.h"
#include "classify/corpus/feature_selection.h"
#include "classify/corpus/folds.h"
#include "classify/corpus/weighting.h"
#include "classify/methods/calibration.h"
#include "classify/methods/combo.h"
#include "classify/methods/knn.h"
#include "classify/methods/linear.h"
#include "classify/methods/naive_bayes.h"
#include "classify/methods/rocchio.h"

namespace autocat::internal {

double best_f1_threshold(const std::vector<double>& scores, const std::vector<uint8_t>& positive,
                         double min_f1, size_t missed_positives) {
  const size_t n = scores.size();
  const size_t positives =
      static_cast<size_t>(std::count(positive.begin(), positive.end(), 1)) + missed_positives;
  if (positives == 0) return kNeverAssign;
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  // Accept the top i documents; only cut between distinct scores, and never
  // accept a score of 0 (no evidence).
  size_t best_accepted = 0, true_positives = 0;
  double best_f1 = -1;
  for (size_t i = 1; i <= n && scores[order[i - 1]] > 0.0; ++i) {
    true_positives += positive[order[i - 1]] ? 1 : 0;
    if (i < n && scores[order[i]] == scores[order[i - 1]]) continue;
    const double f1 = 2.0 * true_positives / double(i + positives);  // 2tp / (2tp + fp + fn)
    if (f1 > best_f1) {
      best_f1 = f1;
      best_accepted = i;
    }
  }
  if (best_accepted == 0 || best_f1 < min_f1) return kNeverAssign;
  const double lowest_accepted = scores[order[best_accepted - 1]];
  if (best_accepted == n) return lowest_accepted / 2;
  return (lowest_accepted + scores[order[best_accepted]]) / 2;
}

const std::vector<int>& knn_k_candidates() {
  static const std::vector<int> candidates = {10, 20, 30, 50, 75, 100, 150, 200, 300};
  return candidates;
}

const std::vector<double>& knn_concentration_candidates() {
  static const std::vector<double> candidates = {0.0, 0.5, 1.0};
  return candidates;
}

const std::vector<double>& rocchio_gamma_candidates() {
  static const std::vector<double> candidates = {0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0};
  return candidates;
}

const std::vector<double>& nb_alpha_candidates() {
  // Steps of about 3. Bernoulli NB's optimum on 20 Newsgroups kept sitting
  // at the lower end (0.01, then 0.001, then 0.0001); at 0.00001 it still
  // does, but the test accuracy gains have shrunk to about 0.001 a decade.
  static const std::vector<double> candidates = {0.00001, 0.00003, 0.0001, 0.0003, 0.001, 0.003,
                                                 0.01,    0.03,    0.1,    0.3,    1.0};
  return candidates;
}

const std::vector<Method>& naive_bayes_methods() {
  static const std::vector<Method> methods = {Method::kNaiveBayes, Method::kBernoulliNaiveBayes,
                                              Method::kComplementNaiveBayes};
  return methods;
}

const std::vector<double>& linear_c_candidates(Method method) {
  static const std::vector<double> svm = {0.3, 1.0, 3.0};
  static const std::vector<double> logreg = {10.0, 30.0};
  return method == Method::kLogreg ? logreg : svm;
}

namespace {

// The best scores of each document: keeping a few per document (not all K)
// bounds memory by documents x kKeptScores, whatever the number of
// categories. A cut never goes below a score left out (thresholds_from), so
// leaving scores out can only make cuts stricter, never let unseen
// documents through.
constexpr size_t kKeptScores = 64;

struct ScoredCategory {
  uint32_t category;
  double score;
};
// A document's best scores, and the largest score left out: a category
// missing from `best` scored at most `dropped` there.
struct DocScores {
  std::vector<ScoredCategory> best;
  double dropped = 0.0;
};
using ScoreLists = std::vector<DocScores>;  // per training document

void keep_best(const std::vector<double>& scores, DocScores* kept_scores) {
  // Sorted in a scratch list, then copied at its exact size: the lists of
  // every setting tried for every training document are cross-validation's
  // largest memory, and a list grown by push_back holds up to twice its
  // entries.
  thread_local std::vector<ScoredCategory> scratch;
  std::vector<ScoredCategory>* out = &scratch;
  out->clear();
  for (uint32_t c = 0; c < scores.size(); ++c) {
    if (scores[c] > 0.0) out->push_back({c, scores[c]});
  }
  const size_t kept = std::min(out->size(), kKeptScores);
  std::partial_sort(out->begin(), out->begin() + static_cast<std::ptrdiff_t>(kept), out->end(),
                    [](const ScoredCategory& a, const ScoredCategory& b) {
                      return a.score > b.score || (a.score == b.score && a.category < b.category);
                    });
  kept_scores->dropped = 0.0;
  for (size_t i = kept; i < out->size(); ++i) {
    kept_scores->dropped = std::max<double>(kept_scores->dropped, (*out)[i].score);
  }
  kept_scores->best.assign(out->begin(), out->begin() + static_cast<std::ptrdiff_t>(kept));
  kept_scores->best.shrink_to_fit();
}

bool has_label(const TrainingCorpus& corpus, uint32_t doc, uint32_t category) {
  const auto& labels = corpus.doc_categories[doc];
  return std::find(labels.begin(), labels.end(), category) != labels.end();
}

// Per-category SCut thresholds from out-of-fold scores; categories with too
// few documents get the median cut of the others.
std::vector<double> thresholds_from(const TrainingCorpus& corpus, const ScoreLists& lists) {
  const uint32_t num_categories = corpus.num_categories();
  const std::vector<uint32_t> doc_counts = corpus.category_doc_counts();
  std::vector<std::vector<double>> category_scores(num_categories);
  std::vector<std::vector<uint8_t>> category_positive(num_categories);
  for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
    for (const ScoredCategory& entry : lists[d].best) {
      const uint8_t positive = has_label(corpus, d, entry.category) ? 1 : 0;
      category_scores[entry.category].push_back(entry.score);
      category_positive[entry.category].push_back(positive);
    }
  }
  std::vector<double> thresholds(num_categories, kNeverAssign);
  std::vector<double> calibrated;
  for (uint32_t c = 0; c < num_categories; ++c) {
    if (doc_counts[c] < kMinPositives) continue;
    const auto scored = static_cast<size_t>(
        std::count(category_positive[c].begin(), category_positive[c].end(), 1));
    thresholds[c] = best_f1_threshold(category_scores[c], category_positive[c], kMinUsefulF1,
                                      doc_counts[c] - scored);
    if (thresholds[c] < kNeverAssign) calibrated.push_back(thresholds[c]);
  }
  // Categories too rare to calibrate take the median cut of those that could
  // be: on Reuters-21578 this beat both never assigning them and the pooled
  // cut (which, for Naive Bayes, lets nearly every posterior through).
  double fallback = kNeverAssign;
  if (!calibrated.empty()) {
    std::nth_element(calibrated.begin(),
                     calibrated.begin() + static_cast<std::ptrdiff_t>(calibrated.size() / 2),
                     calibrated.end());
    fallback = calibrated[calibrated.size() / 2];
  }
  for (uint32_t c = 0; c < num_categories; ++c) {
    if (doc_counts[c] < kMinPositives) thresholds[c] = fallback;
  }
  // Scores left out of the lists were not seen by the cuts above: a cut at
  // or below one of them would accept documents it never counted. Raise
  // each cut above the largest score left out for its category.
  std::vector<uint32_t> by_dropped(corpus.num_docs());
  std::iota(by_dropped.begin(), by_dropped.end(), 0);
  std::sort(by_dropped.begin(), by_dropped.end(),
            [&](uint32_t a, uint32_t b) { return lists[a].dropped > lists[b].dropped; });
  for (uint32_t c = 0; c < num_categories; ++c) {
    for (uint32_t d : by_dropped) {
      if (!(lists[d].dropped > 0.0)) break;
      const auto& best = lists[d].best;
      const bool listed = std::any_of(best.begin(), best.end(),
                                      [c](const ScoredCategory& e) { return e.category == c; });
      if (listed) continue;  // its own score was seen
      if (thresholds[c] <= lists[d].dropped) {
        thresholds[c] = std::nextafter(lists[d].dropped, kNeverAssign);
      }
      break;
    }
  }
  return thresholds;
}

// How well out-of-fold decisions match the labels: micro-F1 of any-of
// decisions with `thresholds`, or the accuracy of one-of decisions.
double objective(const TrainingCorpus& corpus, const ScoreLists& lists,
                 const std::vector<double>& thresholds, Decision decision) {
  const size_t max_assigned = static_cast<size_t>(ClassifyOptions().max_categories);
  uint64_t true_positives = 0, assigned = 0, relevant = 0, correct = 0, labelled = 0;
  for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
    const auto& labels = corpus.doc_categories[d];
    if (decision == Decision::kOneOf) {
      if (labels.empty()) continue;
      ++labelled;
      const auto& best = lists[d].best;
      if (!best.empty() && has_label(corpus, d, best.front().category)) ++correct;
      continue;
    }
    relevant += labels.size();
    size_t taken = 0;
    for (const ScoredCategory& entry : lists[d].best) {
      if (taken == max_assigned) break;
      if (entry.score < thresholds[entry.category]) continue;
      ++taken;
      true_positives += has_label(corpus, d, entry.category) ? 1 : 0;
    }
    assigned += taken;
  }
  if (decision == Decision::kOneOf) return labelled ? double(correct) / double(labelled) : 0.0;
  const uint64_t denominator = assigned + relevant;
  return denominator ? 2.0 * double(true_positives) / double(denominator) : 0.0;
}

// kNN's vote shares from the k nearest of a neighbour list (nearest first).
void knn_vote(const TrainingCorpus& corpus, const std::vector<KnnIndex::Neighbour>& neighbours,
              size_t k, int power, std::vector<double>* scores) {
  std::fill(scores->begin(), scores->end(), 0.0);
  double total = 0.0;
  for (size_t i = 0; i < std::min(k, neighbours.size()); ++i) {
    const double w = knn_vote_weight(neighbours[i].similarity, power);
    total += w;
    for (uint32_t c : corpus.doc_categories[neighbours[i].doc]) {
      (*scores)[c] += w;
    }
  }
  if (!(total > 0.0)) return;
  for (double& score : *scores) score = std::min(1.0, score / total);
}

}  // namespace

TunedSettings tune_settings(const TrainingCorpus& corpus, const TrainOptions& options,
                            Decision decision, const TuneProgressCallback& on_progress) {
  TunedSettings tuned;
  tuned.knn_k = options.knn_k > 0 ? options.knn_k : kDefaultKnnK;
  tuned.knn_similarity_power = options.knn_similarity_power > 0 ? options.knn_similarity_power : 1;
  tuned.knn_concentration = std::max(options.knn_concentration, 0.0);
  tuned.rocchio_gamma = std::max(options.rocchio_gamma, 0.0);
  tuned.svm_c = options.svm_c > 0 ? options.svm_c : 1.0;
  tuned.logreg_c = options.logreg_c > 0 ? options.logreg_c : 1.0;
  const std::vector<Method>& nb_methods = naive_bayes_methods();
  tuned.nb_alpha.assign(nb_methods.size(), options.nb_alpha > 0 ? options.nb_alpha : 1.0);
  tuned.nb_alpha_objective.resize(nb_methods.size());
  tuned.nb_tfidf.assign(nb_methods.size(), false);  // counts unless cross-validation prefers tf-idf
  // -1 = no objective (not tuned); combo's is cross-fitted (fit_calibrations).
  tuned.method_objective.assign(all_methods().size(), -1.0);
  const auto num_folds = static_cast<uint32_t>(std::max(options.threshold_folds, 2));
  if (!options.tune_thresholds || corpus.num_docs() < 2 * num_folds) return tuned;

  const std::vector<int> k_candidates =
      options.knn_k > 0 ? std::vector<int>{options.knn_k} : knn_k_candidates();
  const std::vector<double> gamma_candidates = options.rocchio_gamma >= 0
                                                   ? std::vector<double>{options.rocchio_gamma}
                                                   : rocchio_gamma_candidates();
  const std::vector<double> alpha_candidates =
      options.nb_alpha > 0 ? std::vector<double>{options.nb_alpha} : nb_alpha_candidates();
  const size_t num_alphas = alpha_candidates.size();
  const std::vector<double> concentration_candidates =
      options.knn_concentration >= 0 ? std::vector<double>{options.knn_concentration}
                                     : knn_concentration_candidates();
  const int max_k = *std::max_element(k_candidates.begin(), k_candidates.end());
  const uint32_t num_categories = corpus.num_categories();
  const std::vector<uint32_t> fold = round_robin_folds(corpus.num_docs(), num_folds);
  const std::vector<DocumentTerms> docs = corpus_documents(corpus);
  tuned.copied_documents = count_copies(copy_groups(corpus));

  // Out-of-fold results of every training document: kNN's neighbours (as
  // documents of the full corpus), per concentration candidate, and the
  // best scores of the other methods.
  std::vector<std::vector<std::vector<KnnIndex::Neighbour>>> neighbours_by_concentration(
      concentration_candidates.size(),
      std::vector<std::vector<KnnIndex::Neighbour>>(corpus.num_docs()));
  // One-of decisions compare candidates by their top category alone
  // (objective()): Rocchio's and Naive Bayes' candidates then keep only that
  // per document, and the winners' full lists are made in a second pass
  // over the folds (refit_winners), instead of holding every candidate's
  // lists at once (most of cross-validation's memory). Any-of objectives
  // need each candidate's thresholds, hence its full lists.
  const bool compact = decision == Decision::kOneOf;
  constexpr uint32_t kNoCategory = std::numeric_limits<uint32_t>::max();
  std::vector<ScoreLists> rocchio(gamma_candidates.size(),
                                  ScoreLists(compact ? 0 : corpus.num_docs()));
  std::vector<std::vector<uint32_t>> rocchio_top(
      compact ? gamma_candidates.size() : 0, std::vector<uint32_t>(corpus.num_docs(), kNoCategory));
  // Naive Bayes: [method * num_alphas + alpha candidate].
  // [(method * 2 + features) * num_alphas + alpha candidate], features 0 =
  // term counts, 1 = tf-idf vectors (multinomial and complement only).
  const auto nb_slot = [&](size_t m, size_t features, size_t a) {
    return (m * 2 + features) * num_alphas + a;
  };
  const auto nb_feature_candidates = [&](size_t m) -> size_t {
    return nb_methods[m] == Method::kBernoulliNaiveBayes ? 1 : 2;
  };
  std::vector<ScoreLists> nb(nb_methods.size() * 2 * num_alphas);
  std::vector<std::vector<uint32_t>> nb_top(compact ? nb.size() : 0);
  for (size_t m = 0; m < nb_methods.size(); ++m) {
    for (size_t w = 0; w < nb_feature_candidates(m); ++w) {
      for (size_t a = 0; a < num_alphas; ++a) {
        if (compact) {
          nb_top[nb_slot(m, w, a)].assign(corpus.num_docs(), kNoCategory);
        } else {
          nb[nb_slot(m, w, a)].resize(corpus.num_docs());
        }
      }
    }
  }
  // svm, logreg: out-of-fold decision values, [C candidate][doc * categories + c].
  const std::vector<Method> linear_methods = {Method::kSvm, Method::kLogreg};
  std::vector<std::vector<double>> c_candidates;
  for (Method method : linear_methods) {
    const double fixed = method == Method::kSvm ? options.svm_c : options.logreg_c;
    c_candidates.push_back(fixed > 0 ? std::vector<double>{fixed} : linear_c_candidates(method));
  }
  std::vector<std::vector<std::vector<float>>> linear_values(linear_methods.size());
  for (size_t m = 0; m < linear_methods.size(); ++m) {
    linear_values[m].assign(c_candidates[m].size(),
                            std::vector<float>(size_t(corpus.num_docs()) * num_categories, 0.0f));
  }
  std::vector<uint8_t> scored(corpus.num_docs(), 0);  // held out with a term its fold knows

  // Progress: each fold's five kinds of fit (rocchio, knn, svm, logreg,
  // naive bayes), then the calibrations.
  constexpr uint64_t kStepsPerFold = 5;
  const uint64_t total_steps = uint64_t{num_folds} * (kStepsPerFold + (compact ? 1 : 0)) + 1;
  uint64_t steps_done = 0;
  std::mutex progress_mutex;
  const auto step_done = [&](const std::string& step) {
    if (!on_progress) return;
    const std::lock_guard<std::mutex> lock(progress_mutex);
    on_progress(++steps_done, total_steps, step);
  };
  TrainOptions fold_options = options;
  fold_options.tune_thresholds = false;
  fold_options.rocchio_gamma = 0.0;
  fold_options.nb_alpha = 1.0;  // Naive Bayes is fitted per alpha below
  ClassifyOptions classify;
  std::vector<double> scores(num_categories);
  // Folds are independent and write disjoint documents' entries: run them
  // on every core (training is otherwise single-threaded).
  // A fold's training documents and what its fits share.
  struct Fold {
    FoldCorpus training;
    std::vector<uint32_t> original;  // fold-corpus document -> corpus document
    std::vector<uint8_t> selected;
    std::vector<float> idf;
    std::vector<std::pair<uint32_t, DocumentTerms>> held_out;  // in the fold's term ids
    // Terms some held-out document has: the only Naive Bayes weights looked
    // up (a weight costs a logarithm per category).
    std::vector<uint8_t> wanted;
  };
  const auto prepare_fold = [&](uint32_t f) {
    Fold prepared;
    std::vector<uint8_t> keep(corpus.num_docs());
    for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
      keep[d] = fold[d] != f;
      if (keep[d]) prepared.original.push_back(d);
    }
    // The fold's own vocabulary, as `autocat train` on these documents would
    // read it (Naive Bayes smoothing depends on the vocabulary size).
    prepared.training = fold_corpus(corpus, keep);
    const TrainingCorpus& fitted_on = prepared.training.corpus;
    // What fit_model() would select; the fold's models are fitted below,
    // one setting at a time.
    prepared.selected = selected_features(fitted_on, fold_options);
    prepared.idf = compute_idf(fitted_on.df, fitted_on.num_docs(), prepared.selected);
    prepared.wanted.assign(fitted_on.num_terms(), 0);
    for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
      if (keep[d] || docs[d].terms.empty()) continue;
      DocumentTerms doc = fold_document(docs[d], prepared.training.fold_term);
      if (doc.terms.empty()) continue;  // no term the fold knows: no evidence
      for (const TermCount& term : doc.terms) prepared.wanted[term.term] = 1;
      prepared.held_out.emplace_back(d, std::move(doc));
    }
    return prepared;
  };
  // A held-out document's scores: in one-of's compact mode (first pass) only
  // its top category, as keep_best() would list it first.
  const auto keep_scores = [&](const std::vector<double>& fold_scores, bool top_only, uint32_t* top,
                               DocScores* lists) {
    if (!top_only) {
      keep_best(fold_scores, lists);
      return;
    }
    *top = kNoCategory;
    double top_score = 0.0;
    for (uint32_t c = 0; c < fold_scores.size(); ++c) {
      if (fold_scores[c] > top_score) {
        top_score = fold_scores[c];
        *top = c;
      }
    }
  };
  // Naive Bayes on a fold: the fold's category sums are made once per kind
  // of feature (counts, tf-idf, presence) and every alpha wanted is fitted
  // from them, exactly as train_*_nb would fit it; one sums array and one
  // model live at a time (each is terms x categories). `run(slot)` says
  // whether a candidate is fitted; `top_only` as keep_scores().
  const auto fit_naive_bayes = [&](const Fold& prepared, const std::function<bool(size_t)>& run,
                                   bool top_only) {
    const TrainingCorpus& fitted_on = prepared.training.corpus;
    std::vector<double> fold_scores(num_categories);
    const std::vector<float> no_idf;
    for (size_t w = 0; w < 3; ++w) {
      const bool presence = w == 2;
      bool needed = false;
      for (size_t m = 0; m < nb_methods.size(); ++m) {
        if ((nb_methods[m] == Method::kBernoulliNaiveBayes) != presence) continue;
        for (size_t a = 0; a < num_alphas; ++a)
          needed = needed || run(nb_slot(m, presence ? 0 : w, a));
      }
      if (!needed) continue;
      const TermAmount amount =
          presence ? TermAmount::kPresence : (w == 1 ? TermAmount::kTfidf : TermAmount::kCount);
      const std::vector<float>& features_idf = w == 1 ? prepared.idf : no_idf;
      const CategorySums sums = sum_categories(fitted_on, amount, prepared.selected, features_idf);
      for (size_t m = 0; m < nb_methods.size(); ++m) {
        const bool bernoulli = nb_methods[m] == Method::kBernoulliNaiveBayes;
        if (bernoulli != presence) continue;
        for (size_t a = 0; a < num_alphas; ++a) {
          const size_t slot = nb_slot(m, presence ? 0 : w, a);
          if (!run(slot)) continue;
          const double alpha = alpha_candidates[a];
          const std::vector<uint8_t>& wanted = prepared.wanted;
          const std::vector<uint8_t>& selected = prepared.selected;
          const NaiveBayesModel nb_model =
              bernoulli ? bernoulli_nb_from_sums(sums, selected, alpha, wanted)
              : nb_methods[m] == Method::kNaiveBayes
                  ? multinomial_nb_from_sums(sums, selected, alpha, features_idf, wanted)
                  : complement_nb_from_sums(sums, selected, alpha, features_idf, wanted);
          const NaiveBayesClassifier nb_classifier(nb_model);
          for (const auto& [d, doc] : prepared.held_out) {
            nb_classifier.score(doc, classify, &fold_scores);
            keep_scores(fold_scores, top_only, top_only ? &nb_top[slot][d] : nullptr,
                        top_only ? nullptr : &nb[slot][d]);
          }
        }
      }
    }
  };
  // Threads of on_every_fold() left without a fold: the last folds' linear
  // fits use them (each category is solved alike on any thread).
  std::atomic<unsigned> idle_workers{0};
  auto run_fold = [&](uint32_t f) {
    const std::string of_fold =
        ", fold " + std::to_string(f + 1) + " of " + std::to_string(num_folds);
    std::vector<double> fold_scores(num_categories);
    const Fold prepared = prepare_fold(f);
    const TrainingCorpus& fitted_on = prepared.training.corpus;
    const std::vector<uint32_t>& original = prepared.original;
    const std::vector<float>& idf = prepared.idf;
    const auto& held_out = prepared.held_out;
    for (size_t g = 0; g < gamma_candidates.size(); ++g) {
      const RocchioModel centroids = train_rocchio(fitted_on, idf, gamma_candidates[g]);
      const RocchioClassifier rocchio_classifier(centroids, idf);
      for (const auto& [d, doc] : held_out) {
        rocchio_classifier.score(doc, classify, &fold_scores);
        keep_scores(fold_scores, compact, compact ? &rocchio_top[g][d] : nullptr,
                    compact ? nullptr : &rocchio[g][d]);
      }
    }
    for (const auto& entry : held_out) scored[entry.first] = 1;
    step_done("rocchio" + of_fold);
    // kNN: one index per term weighting, built and searched in turn.
    for (size_t b = 0; b < concentration_candidates.size(); ++b) {
      const KnnIndex knn(fitted_on, knn_term_weights(fitted_on, idf, concentration_candidates[b]));
      for (const auto& [d, doc] : held_out) {
        std::vector<KnnIndex::Neighbour>& found = neighbours_by_concentration[b][d];
        found = knn.neighbours(doc, max_k);
        for (KnnIndex::Neighbour& neighbour : found) neighbour.doc = original[neighbour.doc];
      }
    }
    step_done("knn" + of_fold);
    // The linear methods: each C's model scores the held-out documents as
    // soon as it is fitted and is dropped (each is terms x categories).
    {
      const LinearProblem problem = make_linear_problem(fitted_on, idf);
      const LinearLoss losses[] = {LinearLoss::kSquaredHinge, LinearLoss::kLogistic};
      for (size_t m = 0; m < linear_methods.size(); ++m) {
        for_each_linear_path_model(
            problem, fitted_on, losses[m], c_candidates[m], 1 + idle_workers.load(),
            [&](size_t k, LinearModel&& linear) {
              for (const auto& [d, doc] : held_out) {
                linear_decision_values(linear, idf, doc, &fold_scores);
                std::copy(fold_scores.begin(), fold_scores.end(),
                          linear_values[m][k].begin() + ptrdiff_t(d) * num_categories);
              }
            });
        step_done(method_name(linear_methods[m]) + of_fold);
      }
    }
    fit_naive_bayes(
        prepared, [](size_t) { return true; }, compact);
    step_done("naive bayes" + of_fold);
  };
  const auto on_every_fold = [&](const std::function<void(uint32_t)>& run) {
    std::atomic<uint32_t> next_fold{0};
    idle_workers = 0;
    std::exception_ptr failure;
    std::mutex failure_mutex;
    auto worker = [&] {
      for (uint32_t f; (f = next_fold++) < num_folds;) {
        try {
          run(f);
        } catch (...) {
          const std::lock_guard<std::mutex> lock(failure_mutex);
          if (!failure) failure = std::current_exception();
        }
      }
      ++idle_workers;
    };
    const unsigned threads = std::max(1u, std::min(std::thread::hardware_concurrency(), num_folds));
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (std::thread& thread : pool) thread.join();
    if (failure) std::rethrow_exception(failure);
  };
  on_every_fold(run_fold);
  // The accuracy of one-of decisions from each document's top category, as
  // objective() counts it.
  const auto top_accuracy = [&](const std::vector<uint32_t>& top) {
    uint64_t correct = 0, labelled = 0;
    for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
      if (corpus.doc_categories[d].empty()) continue;
      ++labelled;
      if (top[d] != kNoCategory && has_label(corpus, d, top[d])) ++correct;
    }
    return labelled ? double(correct) / double(labelled) : 0.0;
  };

  tuned.thresholds.resize(all_methods().size());
  // kNN: every candidate (k, vote power) from the same neighbour lists;
  // ties keep the earlier (smaller, faster) candidate.
  double best = -1.0;
  ScoreLists lists(corpus.num_docs());
  const std::vector<int> power_candidates = options.knn_similarity_power > 0
                                                ? std::vector<int>{options.knn_similarity_power}
                                                : std::vector<int>{1, 2};
  size_t best_concentration = 0;
  auto try_knn = [&](size_t b, int k, int power) {
    const auto& neighbours = neighbours_by_concentration[b];
    for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
      if (neighbours[d].empty()) {
        lists[d] = DocScores();
        continue;
      }
      knn_vote(corpus, neighbours[d], static_cast<size_t>(k), power, &scores);
      keep_best(scores, &lists[d]);
    }
    std::vector<double> thresholds = thresholds_from(corpus, lists);
    const double value = objective(corpus, lists, thresholds, decision);
    tuned.knn_objective.push_back({k, power, value, concentration_candidates[b]});
    if (value > best) {
      best = value;
      best_concentration = b;
      tuned.knn_k = k;
      tuned.knn_similarity_power = power;
      tuned.knn_concentration = concentration_candidates[b];
      tuned.thresholds[static_cast<size_t>(Method::kKnn)] = std::move(thresholds);
    }
  };
  for (size_t b = 0; b < concentration_candidates.size(); ++b) {
    for (int power : power_candidates) {
      for (int k : k_candidates) try_knn(b, k, power);
    }
  }
  // An optimum at the grid's low edge may lie below it: halve k while it
  // does (the neighbour lists already hold those). Extending the high edge
  // would need longer lists from every fold; it is reported instead.
  int edge = *std::min_element(k_candidates.begin(), k_candidates.end());
  while (options.knn_k <= 0 && tuned.knn_k == edge && edge > 1) {
    edge /= 2;
    try_knn(best_concentration, edge, tuned.knn_similarity_power);
  }
  // The chosen weighting's lists feed combo; the others are dropped.
  std::vector<std::vector<KnnIndex::Neighbour>> neighbours =
      std::move(neighbours_by_concentration[best_concentration]);
  neighbours_by_concentration.clear();
  neighbours_by_concentration.shrink_to_fit();
  const double best_knn = best;
  best = -1.0;
  size_t best_gamma = 0;
  for (size_t g = 0; g < gamma_candidates.size(); ++g) {
    std::vector<double> thresholds;
    if (!compact) thresholds = thresholds_from(corpus, rocchio[g]);
    const double value = compact ? top_accuracy(rocchio_top[g])
                                 : objective(corpus, rocchio[g], thresholds, decision);
    tuned.rocchio_gamma_objective.emplace_back(gamma_candidates[g], value);
    if (value > best) {
      best = value;
      best_gamma = g;
      tuned.rocchio_gamma = gamma_candidates[g];
      tuned.thresholds[static_cast<size_t>(Method::kRocchio)] = std::move(thresholds);
    }
  }
  tuned.method_objective[static_cast<size_t>(Method::kKnn)] = best_knn;
  tuned.method_objective[static_cast<size_t>(Method::kRocchio)] = best;
  // Naive Bayes: features and alpha per method; ties keep term counts and
  // the smaller alpha. nb_alpha_objective reports the alphas of the
  // features chosen.
  std::vector<size_t> best_nb(nb_methods.size(), 0);  // slot in `nb`
  for (size_t m = 0; m < nb_methods.size(); ++m) {
    best = -1.0;
    std::vector<std::vector<std::pair<double, double>>> objectives(nb_feature_candidates(m));
    for (size_t w = 0; w < nb_feature_candidates(m); ++w) {
      for (size_t a = 0; a < num_alphas; ++a) {
        const size_t slot = nb_slot(m, w, a);
        std::vector<double> thresholds;
        if (!compact) thresholds = thresholds_from(corpus, nb[slot]);
        const double value = compact ? top_accuracy(nb_top[slot])
                                     : objective(corpus, nb[slot], thresholds, decision);
        objectives[w].emplace_back(alpha_candidates[a], value);
        if (value > best) {
          best = value;
          best_nb[m] = nb_slot(m, w, a);
          tuned.nb_alpha[m] = alpha_candidates[a];
          tuned.nb_tfidf[m] = w == 1;
          tuned.thresholds[static_cast<size_t>(nb_methods[m])] = std::move(thresholds);
        }
      }
    }
    tuned.nb_alpha_objective[m] = std::move(objectives[tuned.nb_tfidf[m] ? 1 : 0]);
    tuned.method_objective[static_cast<size_t>(nb_methods[m])] = best;
  }
  if (compact) {
    // The winners' full lists, fitted again on every fold exactly as in
    // the first pass, and their thresholds from them.
    rocchio_top.clear();
    nb_top.clear();
    rocchio[best_gamma].resize(corpus.num_docs());
    for (size_t slot : best_nb) nb[slot].resize(corpus.num_docs());
    on_every_fold([&](uint32_t f) {
      const Fold prepared = prepare_fold(f);
      std::vector<double> fold_scores(num_categories);
      const RocchioModel centroids =
          train_rocchio(prepared.training.corpus, prepared.idf, gamma_candidates[best_gamma]);
      const RocchioClassifier rocchio_classifier(centroids, prepared.idf);
      for (const auto& [d, doc] : prepared.held_out) {
        rocchio_classifier.score(doc, classify, &fold_scores);
        keep_best(fold_scores, &rocchio[best_gamma][d]);
      }
      fit_naive_bayes(
          prepared,
          [&](size_t slot) {
            return std::find(best_nb.begin(), best_nb.end(), slot) != best_nb.end();
          },
          false);
      step_done("rocchio and naive bayes winners, fold " + std::to_string(f + 1) + " of " +
                std::to_string(num_folds));
    });
    tuned.thresholds[static_cast<size_t>(Method::kRocchio)] =
        thresholds_from(corpus, rocchio[best_gamma]);
    for (size_t m = 0; m < nb_methods.size(); ++m) {
      tuned.thresholds[static_cast<size_t>(nb_methods[m])] =
          thresholds_from(corpus, nb[best_nb[m]]);
    }
  }
  // svm and logreg: per C, out-of-fold probabilities as the classifier
  // would give them (svm through a Platt sigmoid fitted on these decision
  // values), then thresholds and the objective as for the other methods.
  // The out-of-fold probabilities at the C chosen, per linear method.
  std::vector<std::vector<float>> linear_chosen(linear_methods.size());
  for (size_t m = 0; m < linear_methods.size(); ++m) {
    const bool platt = linear_methods[m] == Method::kSvm;
    best = -1.0;
    for (size_t k = 0; k < c_candidates[m].size(); ++k) {
      const std::vector<float>& values = linear_values[m][k];
      LinearModel calibration;  // only the sigmoids
      calibration.slope.assign(num_categories, 1.0f);
      calibration.intercept.assign(num_categories, 0.0f);
      if (platt) {
        std::vector<double> f;
        std::vector<uint8_t> positive;
        for (uint32_t c = 0; c < num_categories; ++c) {
          f.clear();
          positive.clear();
          for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
            if (!scored[d]) continue;
            f.push_back(values[size_t(d) * num_categories + c]);
            positive.push_back(has_label(corpus, d, c) ? 1 : 0);
          }
          const Sigmoid sigmoid = fit_platt(f, positive);
          calibration.slope[c] = static_cast<float>(sigmoid.slope);
          calibration.intercept[c] = static_cast<float>(sigmoid.intercept);
        }
      }
      ScoreLists linear_lists(corpus.num_docs());
      std::vector<float> probabilities(values.size(), 0.0f);
      for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
        if (!scored[d]) continue;
        scores.assign(values.begin() + ptrdiff_t(d) * num_categories,
                      values.begin() + ptrdiff_t(d + 1) * num_categories);
        linear_probabilities(calibration, decision, &scores);
        keep_best(scores, &linear_lists[d]);
        std::copy(scores.begin(), scores.end(),
                  probabilities.begin() + ptrdiff_t(d) * num_categories);
      }
      std::vector<double> thresholds = thresholds_from(corpus, linear_lists);
      const double value = objective(corpus, linear_lists, thresholds, decision);
      const double c_value = c_candidates[m][k];
      (platt ? tuned.svm_c_objective : tuned.logreg_c_objective).emplace_back(c_value, value);
      if (value > best) {
        best = value;
        (platt ? tuned.svm_c : tuned.logreg_c) = c_value;
        tuned.thresholds[static_cast<size_t>(linear_methods[m])] = std::move(thresholds);
        linear_chosen[m] = std::move(probabilities);
        if (platt) {
          tuned.svm_slope = calibration.slope;
          tuned.svm_intercept = calibration.intercept;
        }
      }
    }
    tuned.method_objective[static_cast<size_t>(linear_methods[m])] = best;
  }
  // Every member's out-of-fold scores at the settings chosen, as its
  // classifier gives them, documents x categories (a category left out of
  // a kept list scored little: 0).
  const size_t cells = size_t(corpus.num_docs()) * num_categories;
  std::vector<std::vector<float>> member_scores(combo_members().size());
  const auto from_lists = [&](const ScoreLists& score_lists) {
    std::vector<float> matrix(cells, 0.0f);
    for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
      for (const ScoredCategory& entry : score_lists[d].best) {
        matrix[size_t(d) * num_categories + entry.category] = static_cast<float>(entry.score);
      }
    }
    return matrix;
  };
  for (size_t m = 0; m < combo_members().size(); ++m) {
    switch (combo_members()[m]) {
      case Method::kKnn: {
        std::vector<float> matrix(cells, 0.0f);
        for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
          if (neighbours[d].empty()) continue;
          knn_vote(corpus, neighbours[d], static_cast<size_t>(tuned.knn_k),
                   tuned.knn_similarity_power, &scores);
          std::copy(scores.begin(), scores.end(), matrix.begin() + ptrdiff_t(d) * num_categories);
        }
        member_scores[m] = std::move(matrix);
        break;
      }
      case Method::kRocchio:
        member_scores[m] = from_lists(rocchio[best_gamma]);
        break;
      case Method::kNaiveBayes:
        member_scores[m] = from_lists(nb[best_nb[0]]);
        break;
      case Method::kBernoulliNaiveBayes:
        member_scores[m] = from_lists(nb[best_nb[1]]);
        break;
      case Method::kComplementNaiveBayes:
        member_scores[m] = from_lists(nb[best_nb[2]]);
        break;
      case Method::kSvm:
        member_scores[m] = std::move(linear_chosen[0]);
        break;
      case Method::kLogreg:
        member_scores[m] = std::move(linear_chosen[1]);
        break;
      case Method::kCombo:
        break;
    }
  }
  fit_calibrations(corpus, scored, decision, member_scores, &tuned);
  step_done("calibrations");
  return tuned;
}

void fit_calibrations(const TrainingCorpus& corpus, const std::vector<uint8_t>& scored,
                      Decision decision, const std::vector<std::vector<float>>& member_scores,
                      TunedSettings* tuned) {
  const uint32_t num_categories = corpus.num_categories();
  const size_t cells = size_t(corpus.num_docs()) * num_categories;
  std::vector<uint8_t> positive(cells, 0);
  for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
    for (uint32_t c : corpus.doc_categories[d]) positive[size_t(d) * num_categories + c] = 1;
  }
  tuned->calibration.assign(all_methods().size(), Calibration());
  tuned->thresholds.resize(all_methods().size());
  std::vector<std::vector<float>> logits(combo_members().size(), std::vector<float>(cells, 0.0f));
  std::vector<double> scores(num_categories);
  ScoreLists lists(corpus.num_docs());
  for (size_t m = 0; m < combo_members().size(); ++m) {
    const auto slot = static_cast<size_t>(combo_members()[m]);
    const std::vector<float>& raw = member_scores[m];
    Calibration& calibration = tuned->calibration[slot];
    calibration = fit_calibration(raw, scored, positive, num_categories);
    // Thresholds on the calibrated scores, as scores() will report them.
    for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
      lists[d] = DocScores();
      if (!scored[d]) continue;
      const auto row = raw.begin() + ptrdiff_t(d) * num_categories;
      scores.assign(row, row + num_categories);
      for (uint32_t c = 0; c < num_categories; ++c) {
        logits[m][size_t(d) * num_categories + c] =
            static_cast<float>(calibrated_logit(calibration, c, scores[c]));
      }
      apply_calibration(calibration, decision, &scores);
      keep_best(scores, &lists[d]);
    }
    if (decision == Decision::kAnyOf) {
      // Any-of: each category's sigmoid is increasing, so mapping its cut
      // through it decides exactly as the raw cut did. Re-tuning on the
      // calibrated scores instead cost Reuters' macro-F1 (kNN 0.51 -> 0.49,
      // Rocchio 0.57 -> 0.49): rare categories take the median cut of the
      // others, which transfers across categories as a raw score but not
      // as a probability.
      // Where the clamp of extreme scores (bnb's posteriors of 1e-300)
      // merges scores on both sides of the cut, the mapped cut decides
      // otherwise on the clamped out-of-fold documents: that category's
      // cut is tuned on the calibrated scores instead (Reuters bnb micro-F1
      // 0.31 -> 0.71).
      std::vector<double> retuned;
      for (uint32_t c = 0; c < num_categories; ++c) {
        double& cut = tuned->thresholds[slot][c];
        if (cut >= kNeverAssign) continue;
        const double mapped = sigmoid(calibrated_logit(calibration, c, cut));
        bool same_decisions = true;
        for (uint32_t d = 0; d < corpus.num_docs() && same_decisions; ++d) {
          if (!scored[d]) continue;
          const size_t cell = size_t(d) * num_categories + c;
          const double raw_score = raw[cell];
          if (std::fabs(clamped_logit(raw_score)) < kMaxLogit) continue;  // not merged
          const bool raw_assigns = raw_score > 0.0 && raw_score >= cut;
          const double calibrated = sigmoid(logits[m][cell]);
          same_decisions = raw_assigns == (calibrated > 0.0 && calibrated >= mapped);
        }
        if (same_decisions) {
          cut = mapped;
        } else {
          if (retuned.empty()) retuned = thresholds_from(corpus, lists);
          cut = retuned[c];
        }
      }
    } else {
      // One-of: the shared sigmoid and the division by the sum are not a
      // per-category map; tune on the calibrated scores.
      tuned->thresholds[slot] = thresholds_from(corpus, lists);
    }
  }
  tuned->combo = fit_combo(combo_members(), logits, scored, positive, num_categories);
  // combo's thresholds on its own out-of-fold scores (fitted on these same
  // documents: a few weights per category, so little optimism).
  std::vector<std::vector<double>> document_logits(combo_members().size(),
                                                   std::vector<double>(num_categories));
  // Document d's combo scores under `combo` into lists[d].
  const auto score_combo = [&](const ComboModel& combo, uint32_t d) {
    lists[d] = DocScores();
    if (!scored[d]) return;
    for (size_t m = 0; m < combo_members().size(); ++m) {
      for (uint32_t c = 0; c < num_categories; ++c) {
        document_logits[m][c] = logits[m][size_t(d) * num_categories + c];
      }
    }
    combo_probabilities(combo, decision, document_logits, &scores);
    keep_best(scores, &lists[d]);
  };
  for (uint32_t d = 0; d < corpus.num_docs(); ++d) score_combo(tuned->combo, d);
  tuned->thresholds[static_cast<size_t>(Method::kCombo)] = thresholds_from(corpus, lists);

  // combo's objective, to compete for the default method: the stacked model
  // is fitted on the very scores the objective reads, so it is judged
  // cross-fitted instead: fitted on all folds but one, scored on that one.
  tuned->method_objective.resize(all_methods().size(), -1.0);
  const std::vector<uint32_t> fold = round_robin_folds(corpus.num_docs(), kComboObjectiveFolds);
  std::vector<uint8_t> fit_on(scored.size());
  for (uint32_t held_out = 0; held_out < kComboObjectiveFolds; ++held_out) {
    for (uint32_t d = 0; d < corpus.num_docs(); ++d) fit_on[d] = scored[d] && fold[d] != held_out;
    const ComboModel fold_combo =
        fit_combo(combo_members(), logits, fit_on, positive, num_categories);
    for (uint32_t d = held_out; d < corpus.num_docs(); d += kComboObjectiveFolds) {
      score_combo(fold_combo, d);
    }
  }
  tuned->method_objective[static_cast<size_t>(Method::kCombo)] =
      objective(corpus, lists, thresholds_from(corpus, lists), decision);
}

}  // namespace autocat::internal
