// Explanations, recomputed from the model (Rocchio, Naive Bayes) or from the
// training database (kNN) with the same weights the classifiers use.
#include "classify/decide/explain.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "autocat/error.h"
#include "classify/corpus/weighting.h"
#include "classify/methods/calibration.h"
#include "classify/methods/combo.h"
#include "classify/methods/linear.h"
#include "classify/model/model_io.h"

namespace autocat::internal {

namespace {

struct TermValue {
  TermId term;
  double value;
};

// Query weight of a document term before normalization, exactly as kNN
// (with its model's tf transform) and Rocchio (sublinear tf) compute it; 0
// for a term without idf.
double query_weight(const TermCount& tc, const std::vector<float>& idf,
                    KnnTf tf = KnnTf::kSublinear) {
  if (tc.term >= idf.size() || tc.count == 0) return 0.0;
  const float term_idf = idf[tc.term];
  if (!(term_idf > 0.0f)) return 0.0;
  return knn_tf(tc.count, tf) * term_idf;
}

// 1/|q| over the document's terms with idf > 0; 0 if there is none.
double inverse_query_norm(const DocumentTerms& doc, const std::vector<float>& idf,
                          KnnTf tf = KnnTf::kSublinear) {
  double norm2 = 0.0;
  for (const TermCount& tc : doc.terms) {
    const double w = query_weight(tc, idf, tf);
    norm2 += w * w;
  }
  return norm2 > 0.0 ? 1.0 / std::sqrt(norm2) : 0.0;
}

// Fills out->terms (non-zero contributions, largest first, ties by term),
// terms_total and num_contributing_terms.
void set_terms(const std::vector<TermValue>& contributions, const std::vector<std::string>& terms,
               size_t max_terms, Explanation* out) {
  std::vector<TermValue> kept;
  out->terms_total = 0.0;
  for (const TermValue& contribution : contributions) {
    out->terms_total += contribution.value;
    if (contribution.value != 0.0) kept.push_back(contribution);
  }
  out->num_contributing_terms = kept.size();
  auto larger = [&](const TermValue& a, const TermValue& b) {
    return a.value > b.value || (a.value == b.value && terms[a.term] < terms[b.term]);
  };
  const size_t shown = std::min(max_terms, kept.size());
  std::partial_sort(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(shown), kept.end(),
                    larger);
  out->terms.clear();
  for (size_t i = 0; i < shown; ++i) {
    out->terms.push_back(TermContribution{terms[kept[i].term], kept[i].value});
  }
}

}  // namespace

Explainer::Explainer(const Categorizer& categorizer)
    : categorizer_(categorizer),
      idf_(compute_idf(categorizer.core().df, categorizer.core().num_docs,
                       categorizer.core().selected)) {}

void Explainer::open_training_database() {
  if (training_open_) return;
  // Builds kNN's index first: it checks the database against the model.
  const KnnIndex& index = categorizer_.knn_index();
  const std::string& path = categorizer_.paths().training_db;
  try {
    training_ = Xapian::Database(path);
  } catch (const Xapian::DatabaseOpeningError& e) {
    throw NotFoundError(path + ": cannot open the training database (" + e.get_msg() + ")");
  }
  std::vector<Xapian::docid> docids;
  docids.reserve(index.num_docs());
  for (auto it = training_.postlist_begin(std::string());
       it != training_.postlist_end(std::string()); ++it) {
    docids.push_back(*it);
  }
  if (docids.size() != index.num_docs()) {
    throw ModelFormatError(path +
                           ": the training database has changed since the model was trained; "
                           "run autocat train again");
  }
  docids_ = std::move(docids);
  training_open_ = true;
}

const std::vector<Xapian::docid>& Explainer::training_docids() {
  open_training_database();
  return docids_;
}

Explanation Explainer::explain(const DocumentTerms& doc, const ExplainOptions& options) {
  Explanation out;
  ClassifyOptions classify = options.classify;
  const Method method = classify.method.value_or(categorizer_.default_method());
  classify.method = method;
  out.method = method;
  out.has_known_terms = !doc.terms.empty();

  const std::vector<double> scores = categorizer_.scores(doc, classify);
  const std::vector<Category> ranking = categorizer_.ranked(scores);
  out.top.assign(ranking.begin(), ranking.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                        options.max_categories, ranking.size())));
  const DecisionTrace trace = categorizer_.explain_decision(scores, classify);
  out.assigned = trace.assigned;
  out.decision = trace.mode;
  out.other = trace.other;
  out.decision_reason = trace.reason;
  if (!out.has_known_terms) {
    out.note = "no term of this document is in the model's vocabulary";
    if (!out.assigned.empty()) out.note += "; " + trace.reason;
    return out;
  }

  if (method == Method::kKnn) {
    explain_knn(doc, options, &out);
  } else if (method == Method::kCombo) {
    explain_combo(doc, options, &out);  // the top categories, assigned or not
  } else if (!out.assigned.empty()) {
    if (method == Method::kRocchio) {
      explain_rocchio(doc, options, &out);
    } else if (method == Method::kSvm || method == Method::kLogreg) {
      explain_linear(doc, options, method, &out);
    } else {
      explain_naive_bayes(doc, options, method, ranking, &out);
    }
  }
  if (out.assigned.empty()) out.note = trace.reason;
  return out;
}

void Explainer::explain_knn(const DocumentTerms& doc, const ExplainOptions& options,
                            Explanation* out) {
  open_training_database();
  const KnnIndex& index = categorizer_.knn_index();
  const ClassifyOptions& classify = options.classify;
  const std::vector<KnnIndex::Neighbour> neighbours =
      index.neighbours(doc, categorizer_.knn_k(classify), classify.knn_max_query_terms,
                       classify.knn_max_df_ratio, knn_kernel(categorizer_.knn_search(classify)));
  const std::vector<std::string>& categories = categorizer_.categories();

  for (size_t i = 0; i < neighbours.size() && i < options.max_neighbours; ++i) {
    ExplainedNeighbour explained;
    explained.doc = neighbours[i].doc;
    explained.docid = docids_[neighbours[i].doc];
    explained.id = training_.get_document(explained.docid).get_data();
    explained.similarity = neighbours[i].similarity;
    for (uint32_t c : index.doc_categories(neighbours[i].doc)) {
      if (c < categories.size()) explained.labels.push_back(categories[c]);
    }
    out->neighbours.push_back(std::move(explained));
  }
  if (out->assigned.empty()) return;

  // The nearest neighbour that voted for the assigned category.
  out->category = out->assigned.front().name;
  const uint32_t best = static_cast<uint32_t>(categorizer_.category_index(out->category));
  const KnnIndex::Neighbour* nearest = nullptr;
  for (const KnnIndex::Neighbour& neighbour : neighbours) {
    const KnnIndex::CategoryRange labels = index.doc_categories(neighbour.doc);
    if (std::find(labels.begin(), labels.end(), best) != labels.end()) {
      nearest = &neighbour;
      break;
    }
  }
  if (nearest == nullptr) return;
  const Xapian::docid docid = docids_[nearest->doc];
  const Xapian::Document training_doc = training_.get_document(docid);
  out->neighbour = training_doc.get_data();

  // Its weights w(t,d)/|d| over its text terms, as KnnIndex stores them
  // (kNN's term weights: idf, or idf and class concentration).
  const std::vector<float>& knn_weight = index.idf();
  const Vocabulary& vocabulary = categorizer_.vocabulary();
  std::vector<TermValue> weights;
  double norm2 = 0.0;
  for (auto it = training_doc.termlist_begin(); it != training_doc.termlist_end(); ++it) {
    const int64_t id = vocabulary.find(*it);  // prefixed terms are not in the vocabulary
    if (id < 0) continue;
    const auto term = static_cast<TermId>(id);
    const Xapian::termcount wdf = it.get_wdf();
    if (wdf == 0 || term >= knn_weight.size() || !(knn_weight[term] > 0.0f)) continue;
    const double w = knn_tf(wdf, index.tf()) * knn_weight[term];
    norm2 += w * w;
    weights.push_back(TermValue{term, w});
  }
  if (!(norm2 > 0.0)) return;
  const double inverse_doc_norm = 1.0 / std::sqrt(norm2);
  std::sort(weights.begin(), weights.end(),
            [](const TermValue& a, const TermValue& b) { return a.term < b.term; });

  // Merge with the query's terms (both sorted by id).
  const double inverse_norm = inverse_query_norm(doc, knn_weight, index.tf());
  std::vector<TermValue> contributions;
  auto w = weights.begin();
  for (const TermCount& tc : doc.terms) {
    while (w != weights.end() && w->term < tc.term) ++w;
    if (w == weights.end()) break;
    if (w->term != tc.term) continue;
    contributions.push_back(TermValue{tc.term, query_weight(tc, knn_weight, index.tf()) *
                                                   inverse_norm * w->value * inverse_doc_norm});
  }
  set_terms(contributions, categorizer_.core().terms, options.max_terms, out);
}

void Explainer::explain_combo(const DocumentTerms& doc, const ExplainOptions& options,
                              Explanation* out) const {
  const ComboModel& combo = categorizer_.core().combo;
  const std::vector<Calibration>& calibration = categorizer_.core().calibration;
  // As ComboClassifier::score: the members' raw scores, then (with stacking
  // weights) their calibrated log-odds.
  static const std::vector<int32_t> fallback = {static_cast<int32_t>(Method::kKnn),
                                                static_cast<int32_t>(Method::kRocchio),
                                                static_cast<int32_t>(Method::kNaiveBayes)};
  const std::vector<int32_t>& members = combo.empty() ? fallback : combo.members;
  ClassifyOptions member_options = options.classify;
  std::vector<std::vector<double>> raw(members.size());
  for (size_t m = 0; m < members.size(); ++m) {
    member_options.method = static_cast<Method>(members[m]);
    raw[m].resize(categorizer_.categories().size());
    categorizer_.classifier(*member_options.method).score(doc, member_options, &raw[m]);
  }
  const auto parts_of = [&](const std::string& name) {
    const auto c = static_cast<uint32_t>(categorizer_.category_index(name));
    ComboCategoryParts parts;
    parts.category = name;
    parts.base = combo.empty() ? 0.0 : combo.weights[c * combo.stride() + members.size()];
    for (size_t m = 0; m < members.size(); ++m) {
      ComboMemberPart part;
      part.method = static_cast<Method>(members[m]);
      part.score = raw[m][c];
      if (combo.empty()) {
        part.probability = part.score;
        part.weight = 1.0 / double(members.size());
        part.contribution = part.score * part.weight;
      } else {
        const auto slot = static_cast<size_t>(part.method);
        part.logit = slot < calibration.size() && !calibration[slot].empty()
                         ? calibrated_logit(calibration[slot], c, part.score)
                         : clamped_logit(part.score);
        part.probability = sigmoid(part.logit);
        part.weight = combo.weights[c * combo.stride() + m];
        part.contribution = part.logit * part.weight;
      }
      parts.sum += part.contribution;
      parts.members.push_back(part);
    }
    parts.stacked_probability = combo.empty() ? parts.sum : sigmoid(parts.base + parts.sum);
    return parts;
  };
  out->stacked = !combo.empty();
  for (const Category& category : out->top) out->combo_top.push_back(parts_of(category.name));
  if (out->assigned.empty()) return;
  ComboCategoryParts best = parts_of(out->assigned.front().name);
  out->category = best.category;
  out->members = std::move(best.members);
  out->base = best.base;
  out->terms_total = best.sum;
  out->stacked_probability = best.stacked_probability;
}

void Explainer::explain_rocchio(const DocumentTerms& doc, const ExplainOptions& options,
                                Explanation* out) const {
  // The live centroids once something was learned: the ones that scored.
  const std::shared_ptr<const LiveModel> live = categorizer_.live_model(Method::kRocchio);
  const RocchioModel& model = live ? live->rocchio : categorizer_.rocchio();
  out->category = out->assigned.front().name;
  const uint32_t best = static_cast<uint32_t>(categorizer_.category_index(out->category));
  const double inverse_norm = inverse_query_norm(doc, idf_);
  const size_t vocabulary = model.term_start.empty() ? 0 : model.term_start.size() - 1;
  std::vector<TermValue> contributions;
  for (const TermCount& tc : doc.terms) {
    if (tc.term >= vocabulary) continue;
    const double q = query_weight(tc, idf_) * inverse_norm;
    if (q == 0.0) continue;
    for (uint64_t e = model.term_start[tc.term]; e < model.term_start[tc.term + 1]; ++e) {
      if (model.entry_category[e] == best) {
        contributions.push_back(TermValue{tc.term, q * model.entry_weight[e]});
        break;
      }
    }
  }
  set_terms(contributions, categorizer_.core().terms, options.max_terms, out);
}

void Explainer::explain_linear(const DocumentTerms& doc, const ExplainOptions& options,
                               Method method, Explanation* out) const {
  const LinearModel& model = categorizer_.linear(method);
  out->category = out->assigned.front().name;
  const uint32_t best = static_cast<uint32_t>(categorizer_.category_index(out->category));
  out->base = model.bias[best];
  const double inverse_norm = inverse_query_norm(doc, idf_);
  const size_t vocabulary = model.num_terms();
  std::vector<TermValue> contributions;
  for (const TermCount& tc : doc.terms) {
    if (tc.term >= vocabulary) continue;
    const double x = query_weight(tc, idf_) * inverse_norm;
    if (x == 0.0) continue;
    model.for_each_weight(tc.term, [&](uint32_t category, float weight) {
      if (category == best) contributions.push_back(TermValue{tc.term, x * weight});
    });
  }
  set_terms(contributions, categorizer_.core().terms, options.max_terms, out);
}

void Explainer::explain_naive_bayes(const DocumentTerms& doc, const ExplainOptions& options,
                                    Method method, const std::vector<Category>& ranking,
                                    Explanation* out) const {
  const std::shared_ptr<const LiveModel> live = categorizer_.live_model(method);
  const NaiveBayesModel& model = live ? live->naive_bayes : categorizer_.naive_bayes(method);
  const uint32_t num_categories = model.num_categories;
  if (num_categories == 0) return;
  const size_t num_terms = model.num_terms();
  const std::vector<std::string>& categories = categorizer_.categories();
  out->category = out->assigned.front().name;
  const uint32_t best = static_cast<uint32_t>(categorizer_.category_index(out->category));
  // The runner-up: the second of the full ranking.
  bool has_second = false;
  uint32_t second = 0;
  for (const Category& category : ranking) {
    if (category.name == out->category) continue;
    second = static_cast<uint32_t>(categorizer_.category_index(category.name));
    has_second = true;
    break;
  }
  if (has_second) out->versus = categories[second];

  const auto constant = [&](uint32_t c) { return model.log_prior[c] + model.class_constant[c]; };
  out->base = has_second ? constant(best) - constant(second) : constant(best);
  const double inverse_norm = nb_inverse_norm(model, doc);
  std::vector<TermValue> contributions;
  std::vector<float> scratch;
  for (const TermCount& tc : doc.terms) {
    if (tc.term >= num_terms) continue;
    const float* weight = model.row(tc.term, &scratch);
    const double count = nb_feature_value(model, tc, inverse_norm);
    const double gap =
        has_second ? double(weight[best]) - double(weight[second]) : double(weight[best]);
    contributions.push_back(TermValue{tc.term, count * gap});
  }
  set_terms(contributions, categorizer_.core().terms, options.max_terms, out);
}

}  // namespace autocat::internal
