// EM for multinomial Naive Bayes with labelled and unlabelled documents
// (Nigam et al. 2000). See em.h for the objective.
//
// Everything here works on documents (rows of term counts) rather than on
// the corpus' term-major postings: cross-validation needs the labelled
// documents of a fold, and the E-step walks one document at a time. The
// parameters are kept in double precision (the model stores floats) so the
// log-likelihood is exactly the one the M-step maximizes.
#include "classify/methods/em.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>

#include "autocat/error.h"

namespace autocat::internal {
namespace {

constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();

// A term and its (possibly length-normalized) count.
struct WeightedTerm {
  TermId term;
  double count;
};

struct LabelledDoc {
  std::vector<TermCount> terms;  // selected terms only
  std::vector<uint32_t> labels;
};

// The fixed part of a fit: vocabulary, smoothing and the unlabelled documents.
struct Problem {
  uint32_t num_terms = 0;
  uint32_t num_categories = 0;
  const std::vector<uint8_t>* selected = nullptr;  // empty = every term
  double vocabulary = 0;                           // selected terms
  double alpha = 1.0;
  std::vector<std::vector<WeightedTerm>> unlabelled;  // selected terms only; none empty

  bool is_selected(TermId t) const { return selected->empty() || (*selected)[t] != 0; }
};

struct Parameters {
  std::vector<double> log_term;   // term-major log P(t|c); 0 for unselected terms
  std::vector<double> log_prior;  // log P(c); -inf for a class with no mass
};

struct Fit {
  Parameters parameters;
  std::vector<double> log_likelihood;
  int iterations = 0;
  bool converged = false;
};

// Documents of the corpus with at least one label, as rows of selected terms.
std::vector<LabelledDoc> labelled_documents(const TrainingCorpus& corpus,
                                            const std::vector<uint8_t>& selected) {
  std::vector<LabelledDoc> docs(corpus.num_docs());
  for (TermId t = 0; t < corpus.num_terms(); ++t) {
    if (!selected.empty() && selected[t] == 0) continue;
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      docs[corpus.posting_doc[p]].terms.push_back({t, corpus.posting_wdf[p]});
    }
  }
  std::vector<LabelledDoc> labelled;
  for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
    if (corpus.doc_categories[d].empty()) continue;
    docs[d].labels = corpus.doc_categories[d];
    labelled.push_back(std::move(docs[d]));
  }
  return labelled;
}

// log P(c) + log P(d|c) for every class.
template <class Term>
void log_joint(const Problem& problem, const Parameters& parameters, const std::vector<Term>& terms,
               std::vector<double>* scores) {
  const uint32_t num_categories = problem.num_categories;
  scores->assign(parameters.log_prior.begin(), parameters.log_prior.end());
  double* out = scores->data();
  for (const Term& term : terms) {
    const double* row = &parameters.log_term[static_cast<size_t>(term.term) * num_categories];
    for (uint32_t c = 0; c < num_categories; ++c) out[c] += term.count * row[c];
  }
}

class EmFitter {
 public:
  EmFitter(const Problem& problem, const std::vector<const LabelledDoc*>& labelled)
      : problem_(problem),
        labelled_counts_(static_cast<size_t>(problem.num_terms) * problem.num_categories, 0.0),
        labelled_docs_(problem.num_categories, 0.0) {
    const uint32_t num_categories = problem.num_categories;
    for (const LabelledDoc* doc : labelled) {
      for (uint32_t c : doc->labels) {
        labelled_docs_[c] += 1;
        for (const TermCount& term : doc->terms) {
          labelled_counts_[static_cast<size_t>(term.term) * num_categories + c] += term.count;
        }
      }
    }
  }

  Fit fit(double lambda, int max_iterations, double tolerance) {
    Fit fit;
    fit.parameters = maximize(lambda, /*responsibilities=*/nullptr);
    if (lambda <= 0 || problem_.unlabelled.empty()) {
      fit.log_likelihood.push_back(objective(fit.parameters, 0.0, 0.0));
      return fit;
    }
    double unlabelled_likelihood = expect(fit.parameters, &responsibilities_);
    fit.log_likelihood.push_back(objective(fit.parameters, lambda, unlabelled_likelihood));
    for (int iteration = 1; iteration <= max_iterations; ++iteration) {
      fit.parameters = maximize(lambda, &responsibilities_);
      unlabelled_likelihood = expect(fit.parameters, &responsibilities_);
      const double previous = fit.log_likelihood.back();
      fit.log_likelihood.push_back(objective(fit.parameters, lambda, unlabelled_likelihood));
      fit.iterations = iteration;
      if (std::fabs(fit.log_likelihood.back() - previous) < tolerance * std::fabs(previous)) {
        fit.converged = true;
        break;
      }
    }
    return fit;
  }

 private:
  // M-step: the MAP estimate from the labelled counts plus lambda times the
  // unlabelled counts split by `responsibilities` (none: labelled only).
  Parameters maximize(double lambda, const std::vector<double>* responsibilities) const {
    const uint32_t num_categories = problem_.num_categories;
    std::vector<double> counts = labelled_counts_;
    std::vector<double> docs = labelled_docs_;
    if (responsibilities != nullptr) {
      for (size_t u = 0; u < problem_.unlabelled.size(); ++u) {
        const double* share = &(*responsibilities)[u * num_categories];
        for (uint32_t c = 0; c < num_categories; ++c) docs[c] += lambda * share[c];
        for (const WeightedTerm& term : problem_.unlabelled[u]) {
          double* row = &counts[static_cast<size_t>(term.term) * num_categories];
          const double amount = lambda * term.count;
          for (uint32_t c = 0; c < num_categories; ++c) row[c] += amount * share[c];
        }
      }
    }
    std::vector<double> totals(num_categories, 0.0);
    for (size_t i = 0; i < counts.size(); ++i) totals[i % num_categories] += counts[i];

    Parameters parameters;
    const double all_docs = std::accumulate(docs.begin(), docs.end(), 0.0);
    parameters.log_prior.assign(num_categories, kNegativeInfinity);
    for (uint32_t c = 0; c < num_categories; ++c) {
      if (docs[c] > 0) parameters.log_prior[c] = std::log(docs[c] / all_docs);
    }
    parameters.log_term.assign(counts.size(), 0.0);
    std::vector<double> log_denominator(num_categories);
    for (uint32_t c = 0; c < num_categories; ++c) {
      log_denominator[c] = std::log(totals[c] + problem_.alpha * problem_.vocabulary);
    }
    for (TermId t = 0; t < problem_.num_terms; ++t) {
      if (!problem_.is_selected(t)) continue;
      const size_t row = static_cast<size_t>(t) * num_categories;
      for (uint32_t c = 0; c < num_categories; ++c) {
        parameters.log_term[row + c] =
            std::log(counts[row + c] + problem_.alpha) - log_denominator[c];
      }
    }
    return parameters;
  }

  // E-step: P(c|d) of every unlabelled document; returns
  // sum_d log sum_c P(c) P(d|c).
  double expect(const Parameters& parameters, std::vector<double>* responsibilities) const {
    const uint32_t num_categories = problem_.num_categories;
    responsibilities->resize(problem_.unlabelled.size() * num_categories);
    std::vector<double> scores;
    double total = 0;
    for (size_t u = 0; u < problem_.unlabelled.size(); ++u) {
      log_joint(problem_, parameters, problem_.unlabelled[u], &scores);
      const double max_score = *std::max_element(scores.begin(), scores.end());
      double sum = 0;
      for (double& s : scores) {
        s = std::exp(s - max_score);
        sum += s;
      }
      double* share = &(*responsibilities)[u * num_categories];
      for (uint32_t c = 0; c < num_categories; ++c) share[c] = scores[c] / sum;
      total += max_score + std::log(sum);
    }
    return total;
  }

  double objective(const Parameters& parameters, double lambda,
                   double unlabelled_likelihood) const {
    const uint32_t num_categories = problem_.num_categories;
    double value = 0;
    for (uint32_t c = 0; c < num_categories; ++c) {
      if (labelled_docs_[c] > 0) value += labelled_docs_[c] * parameters.log_prior[c];
    }
    for (TermId t = 0; t < problem_.num_terms; ++t) {
      if (!problem_.is_selected(t)) continue;
      const size_t row = static_cast<size_t>(t) * num_categories;
      for (uint32_t c = 0; c < num_categories; ++c) {
        value += (problem_.alpha + labelled_counts_[row + c]) * parameters.log_term[row + c];
      }
    }
    if (lambda > 0) value += lambda * unlabelled_likelihood;
    return value;
  }

  const Problem& problem_;
  std::vector<double> labelled_counts_;  // term-major T_ct of the labelled documents
  std::vector<double> labelled_docs_;    // labelled documents per class
  std::vector<double> responsibilities_;
};

Problem make_problem(const TrainingCorpus& corpus, const std::vector<DocumentTerms>& unlabelled,
                     const std::vector<uint8_t>& selected, double alpha, double normalized_length) {
  if (!(alpha > 0.0) || !std::isfinite(alpha)) {
    throw InvalidArgumentError("EM: the smoothing alpha must be a positive number");
  }
  if (corpus.num_categories() == 0) throw InvalidArgumentError("EM: the corpus has no category");
  if (!selected.empty() && selected.size() != corpus.num_terms()) {
    throw InvalidArgumentError("EM: the feature selection does not match the vocabulary");
  }
  Problem problem;
  problem.num_terms = corpus.num_terms();
  problem.num_categories = corpus.num_categories();
  problem.selected = &selected;
  problem.alpha = alpha;
  problem.vocabulary = selected.empty()
                           ? corpus.num_terms()
                           : static_cast<double>(std::count(selected.begin(), selected.end(), 1));
  if (normalized_length < 0) {
    // The mean length of the labelled documents.
    double tokens = 0, docs = 0;
    for (uint32_t d = 0; d < corpus.num_docs(); ++d) {
      if (corpus.doc_categories[d].empty()) continue;
      tokens += corpus.doc_length[d];
      docs += 1;
    }
    normalized_length = docs > 0 ? tokens / docs : 0;
  }
  for (const DocumentTerms& doc : unlabelled) {
    std::vector<WeightedTerm> terms;
    double length = 0;
    for (const TermCount& term : doc.terms) {
      if (term.term < problem.num_terms && problem.is_selected(term.term)) {
        terms.push_back({term.term, static_cast<double>(term.count)});
        length += term.count;
      }
    }
    // A document without a known term carries no evidence about any class.
    if (terms.empty()) continue;
    if (normalized_length > 0) {
      for (WeightedTerm& term : terms) term.count *= normalized_length / length;
    }
    problem.unlabelled.push_back(std::move(terms));
  }
  return problem;
}

NaiveBayesModel to_model(const Problem& problem, const Parameters& parameters) {
  NaiveBayesModel model;
  model.variant = static_cast<int>(Method::kNaiveBayes);
  model.alpha = problem.alpha;
  model.num_categories = problem.num_categories;
  model.log_prior = parameters.log_prior;
  model.class_constant.assign(problem.num_categories, 0.0);
  model.term_weight.assign(parameters.log_term.begin(), parameters.log_term.end());
  return model;
}

void check_options(const EmOptions& options) {
  if (options.max_iterations < 0 || !(options.tolerance >= 0)) {
    throw InvalidArgumentError("EM: max_iterations and tolerance must not be negative");
  }
  if (options.lambda <= 0 && options.lambda_grid.empty()) {
    throw InvalidArgumentError("EM: no lambda to try");
  }
  for (double lambda : options.lambda_grid) {
    if (!(lambda >= 0) || !std::isfinite(lambda)) {
      throw InvalidArgumentError("EM: every lambda must be a number >= 0");
    }
  }
}

// Deterministic on every platform (std::shuffle is not).
std::vector<uint32_t> shuffled(uint32_t count, uint64_t seed) {
  std::vector<uint32_t> order(count);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 random(seed);
  for (uint32_t i = count; i > 1; --i) {
    std::swap(order[i - 1], order[random() % i]);
  }
  return order;
}

// Share of `held_out` whose best class under `parameters` is one of its labels.
uint32_t count_correct(const Problem& problem, const Parameters& parameters,
                       const std::vector<const LabelledDoc*>& held_out) {
  uint32_t correct = 0;
  std::vector<double> scores;
  for (const LabelledDoc* doc : held_out) {
    log_joint(problem, parameters, doc->terms, &scores);
    const auto best =
        static_cast<uint32_t>(std::max_element(scores.begin(), scores.end()) - scores.begin());
    if (std::find(doc->labels.begin(), doc->labels.end(), best) != doc->labels.end()) ++correct;
  }
  return correct;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

EmResult run_naive_bayes_em(const TrainingCorpus& corpus,
                            const std::vector<DocumentTerms>& unlabelled,
                            const std::vector<uint8_t>& selected, double alpha, double lambda,
                            int max_iterations, double tolerance, double normalized_length) {
  const auto start = std::chrono::steady_clock::now();
  if (!(lambda >= 0) || !std::isfinite(lambda)) {
    throw InvalidArgumentError("EM: lambda must be a number >= 0");
  }
  const Problem problem = make_problem(corpus, unlabelled, selected, alpha, normalized_length);
  const std::vector<LabelledDoc> labelled = labelled_documents(corpus, selected);
  std::vector<const LabelledDoc*> all;
  for (const LabelledDoc& doc : labelled) all.push_back(&doc);
  EmFitter fitter(problem, all);
  Fit fit = fitter.fit(lambda, max_iterations, tolerance);

  EmResult result;
  result.model = to_model(problem, fit.parameters);
  result.report.lambda = fit.iterations > 0 ? lambda : 0.0;
  result.report.iterations = fit.iterations;
  result.report.converged = fit.converged;
  result.report.log_likelihood = std::move(fit.log_likelihood);
  result.report.unlabelled_docs = problem.unlabelled.size();
  result.report.seconds = seconds_since(start);
  return result;
}

EmResult train_multinomial_nb_em(const TrainingCorpus& corpus,
                                 const std::vector<DocumentTerms>& unlabelled,
                                 const std::vector<uint8_t>& selected, double alpha,
                                 const EmOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  check_options(options);
  double lambda = options.lambda;
  std::vector<std::pair<double, double>> lambda_accuracy;
  if (lambda <= 0) {
    const Problem problem =
        make_problem(corpus, unlabelled, selected, alpha, options.normalized_length);
    const std::vector<LabelledDoc> labelled = labelled_documents(corpus, selected);
    const auto num_labelled = static_cast<uint32_t>(labelled.size());
    const uint32_t folds = std::min<uint32_t>(std::max(options.folds, 2), num_labelled);
    // Too few labelled documents to hold any out: Nigam's basic EM (lambda 1).
    lambda = options.lambda_grid.back();
    if (folds >= 2) {
      const std::vector<uint32_t> order = shuffled(num_labelled, options.seed);
      std::vector<uint32_t> correct(options.lambda_grid.size(), 0);
      for (uint32_t fold = 0; fold < folds; ++fold) {
        std::vector<const LabelledDoc*> train, held_out;
        for (uint32_t i = 0; i < num_labelled; ++i) {
          (i % folds == fold ? held_out : train).push_back(&labelled[order[i]]);
        }
        EmFitter fitter(problem, train);
        for (size_t g = 0; g < options.lambda_grid.size(); ++g) {
          const Fit fit =
              fitter.fit(options.lambda_grid[g], options.max_iterations, options.tolerance);
          correct[g] += count_correct(problem, fit.parameters, held_out);
        }
      }
      size_t best = 0;
      for (size_t g = 0; g < options.lambda_grid.size(); ++g) {
        lambda_accuracy.emplace_back(options.lambda_grid[g],
                                     static_cast<double>(correct[g]) / num_labelled);
        if (correct[g] > correct[best]) best = g;  // ties keep the smaller weight
      }
      lambda = options.lambda_grid[best];
    }
  }
  EmResult result =
      run_naive_bayes_em(corpus, unlabelled, selected, alpha, lambda, options.max_iterations,
                         options.tolerance, options.normalized_length);
  result.report.lambda_accuracy = std::move(lambda_accuracy);
  result.report.seconds = seconds_since(start);
  return result;
}

}  // namespace autocat::internal
