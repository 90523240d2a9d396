// Live Rocchio and Naive Bayes: category sums updated per document, models
// fitted from them lazily and published copy-on-write.
#include "classify/model/live_models.h"

#include <algorithm>
#include <exception>
#include <thread>
#include <utility>

#include "autocat/error.h"
#include "classify/base/method_traits.h"

namespace autocat::internal {
namespace {

// The method's family_slot if it is of `family`, else -1.
int slot_in(MethodFamily family, Method method) {
  const MethodTraits* traits = find_method_traits(method);
  return traits != nullptr && traits->family == family ? traits->family_slot : -1;
}

// Index into the alpha / tf-idf arrays of a Naive Bayes method.
int nb_slot(Method method) { return slot_in(MethodFamily::kNaiveBayes, method); }

// Index into LiveModels::linear_, or -1.
int linear_slot(Method method) { return slot_in(MethodFamily::kLinear, method); }

size_t amount_slot(TermAmount amount) { return static_cast<size_t>(amount); }

// The feature selection a sum applies: tf-idf sums (Rocchio's, shared with
// NB on tf-idf) skip only terms with idf 0, which the selection has zeroed
// already.
const std::vector<uint8_t>& selection_for(TermAmount amount, const std::vector<uint8_t>& selected) {
  static const std::vector<uint8_t> every_term;
  return amount == TermAmount::kTfidf ? every_term : selected;
}

}  // namespace

LiveModels::LiveModels(const ModelState& model, const std::vector<float>& idf,
                       std::shared_ptr<const TrainingCorpus> shared_corpus,
                       std::vector<std::string> base_ids)
    : selected_(model.selected),
      idf_(idf),
      rocchio_gamma_(model.rocchio_gamma),
      alpha_{model.multinomial_nb.alpha, model.bernoulli_nb.alpha, model.complement_nb.alpha},
      tfidf_{model.multinomial_nb.tfidf(), false, model.complement_nb.tfidf()},
      multinomial_from_em_(model.em.iterations > 0),
      corpus_(std::move(shared_corpus)),
      fitted_(all_methods().size()) {
  const TrainingCorpus& corpus = *corpus_;
  if (!base_ids.empty() && base_ids.size() != corpus.num_docs()) {
    throw InvalidArgumentError("live models: " + std::to_string(base_ids.size()) + " ids for " +
                               std::to_string(corpus.num_docs()) + " documents");
  }
  for (Method method : all_methods()) {
    if (!keeps(method) || linear_slot(method) >= 0) continue;
    // One kTfidf sum serves Rocchio and NB on tf-idf.
    sums_kept_[amount_slot(amount_for(method))] = true;
  }
  // Doc-major copy of the postings, to subtract a forgotten training document.
  const uint32_t num_docs = corpus.num_docs();
  base_start_.assign(size_t(num_docs) + 1, 0);
  for (uint32_t doc : corpus.posting_doc) ++base_start_[doc + 1];
  for (uint32_t d = 0; d < num_docs; ++d) base_start_[d + 1] += base_start_[d];
  base_terms_.resize(corpus.posting_doc.size());
  std::vector<uint64_t> next(base_start_.begin(), base_start_.end() - 1);
  for (TermId t = 0; t < corpus.num_terms(); ++t) {
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      base_terms_[next[corpus.posting_doc[p]]++] = TermCount{t, corpus.posting_wdf[p]};
    }
  }
  base_categories_ = corpus.doc_categories;
  base_forgotten_.assign(num_docs, 0);
  base_ids_.reserve(base_ids.size());
  for (uint32_t d = 0; d < base_ids.size(); ++d) base_ids_.emplace(std::move(base_ids[d]), d);
  for (Method method : {Method::kSvm, Method::kLogreg}) {
    const LinearModel& linear = method == Method::kSvm ? model.svm : model.logreg;
    if (linear.term_start.empty() || !(linear.c > 0)) continue;  // not trained
    linear_[linear_slot(method)] =
        std::make_unique<LiveLinear>(method, linear, idf_, model.decision);
  }
}

LiveModels::~LiveModels() = default;

bool LiveModels::keeps(Method method) const {
  const MethodTraits* traits = find_method_traits(method);
  if (traits == nullptr || !traits->learns_live) return false;
  if (const int slot = linear_slot(method); slot >= 0) return linear_[slot] != nullptr;
  // A multinomial model refitted by EM on unlabelled documents is not a sum.
  if (method == Method::kNaiveBayes) return !multinomial_from_em_;
  return true;
}

TermAmount LiveModels::amount_for(Method method) const {
  const int slot = nb_slot(method);
  if (const MethodTraits* traits = find_method_traits(method);
      traits != nullptr && traits->counts_presence) {
    return TermAmount::kPresence;
  }
  if (slot >= 0 && !tfidf_[slot]) return TermAmount::kCount;
  return TermAmount::kTfidf;
}

void LiveModels::add_locked(const DocumentTerms& doc, const std::vector<uint32_t>& categories,
                            double sign) {
  bool logged = false;
  for (size_t slot = 0; slot < sums_.size(); ++slot) {
    if (!sums_kept_[slot]) continue;
    if (!sums_built_[slot]) {
      if (!logged) changes_.push_back(Change{doc, categories, sign});
      logged = true;
      continue;
    }
    add_document(doc, categories, sign, selection_for(sums_[slot].amount, selected_), idf_,
                 &sums_[slot]);
  }
}

const CategorySums& LiveModels::sums_locked(TermAmount amount) const {
  const size_t slot = amount_slot(amount);
  if (!sums_built_[slot]) {
    // The training collection's sums, then every change in its order: the
    // same additions, in the same order, as sums kept from the start.
    const std::vector<uint8_t>& selected = selection_for(amount, selected_);
    sums_[slot] = sum_categories(*corpus_, amount, selected, idf_);
    for (const Change& change : changes_) {
      add_document(change.doc, change.categories, change.sign, selected, idf_, &sums_[slot]);
    }
    sums_built_[slot] = true;
    bool all_built = true;
    for (size_t s = 0; s < sums_.size(); ++s) all_built &= !sums_kept_[s] || sums_built_[s];
    if (all_built) {
      std::vector<Change>().swap(changes_);
      corpus_.reset();
    }
  }
  return sums_[slot];
}

bool LiveModels::remove_locked(const std::string& id) {
  if (auto it = learned_.find(id); it != learned_.end()) {
    add_locked(it->second.doc, it->second.categories, -1.0);
    for (const auto& linear : linear_) {
      if (linear) linear->forget_learned(id);
    }
    learned_.erase(it);
    return true;
  }
  const auto it = base_ids_.find(id);
  if (it == base_ids_.end() || base_forgotten_[it->second]) return false;
  const uint32_t d = it->second;
  DocumentTerms doc;
  doc.terms.assign(base_terms_.begin() + static_cast<std::ptrdiff_t>(base_start_[d]),
                   base_terms_.begin() + static_cast<std::ptrdiff_t>(base_start_[d + 1]));
  add_locked(doc, base_categories_[d], -1.0);
  for (const auto& linear : linear_) {
    if (linear) linear->forget_trained(doc, base_categories_[d]);
  }
  base_forgotten_[d] = 1;
  return true;
}

void LiveModels::learn(const std::string& id, const DocumentTerms& doc,
                       const std::vector<uint32_t>& categories) {
  std::lock_guard<std::mutex> lock(mutex_);
  remove_locked(id);
  add_locked(doc, categories, +1.0);
  for (const auto& linear : linear_) {
    if (linear) linear->learn(id, doc, categories);
  }
  learned_[id] = Learned{doc, categories};
  version_.fetch_add(1, std::memory_order_release);
}

bool LiveModels::forget(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!remove_locked(id)) return false;
  version_.fetch_add(1, std::memory_order_release);
  return true;
}

std::shared_ptr<const LiveModel> LiveModels::fit_locked(Method method) const {
  auto fitted = std::make_shared<LiveModel>();
  fitted->method = method;
  fitted->version = version_.load(std::memory_order_acquire);
  if (const int linear = linear_slot(method); linear >= 0) {
    fitted->classifier = linear_[linear]->fit();
    return fitted;
  }
  const CategorySums& sums = sums_locked(amount_for(method));
  const int slot = nb_slot(method);
  const std::vector<float> no_idf;
  switch (method) {
    case Method::kRocchio:
      fitted->rocchio = rocchio_from_sums(sums, rocchio_gamma_);
      fitted->classifier = std::make_unique<RocchioClassifier>(fitted->rocchio, idf_);
      return fitted;
    case Method::kNaiveBayes:
      fitted->naive_bayes =
          multinomial_nb_from_sums(sums, selected_, alpha_[slot], tfidf_[slot] ? idf_ : no_idf);
      break;
    case Method::kBernoulliNaiveBayes:
      fitted->naive_bayes = bernoulli_nb_from_sums(sums, selected_, alpha_[slot]);
      break;
    case Method::kComplementNaiveBayes:
      fitted->naive_bayes =
          complement_nb_from_sums(sums, selected_, alpha_[slot], tfidf_[slot] ? idf_ : no_idf);
      break;
    default:
      return nullptr;
  }
  fitted->classifier = std::make_unique<NaiveBayesClassifier>(fitted->naive_bayes);
  return fitted;
}

void LiveModels::fit(const std::vector<Method>& methods) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t now = version();
  std::vector<Method> stale;
  for (Method method : methods) {
    if (!keeps(method) || std::find(stale.begin(), stale.end(), method) != stale.end()) continue;
    const std::shared_ptr<const LiveModel> current =
        std::atomic_load(&fitted_[static_cast<size_t>(method)]);
    if (current && current->version == now) continue;
    // Built here, by one thread: the fits below only read the sums.
    if (linear_slot(method) < 0) sums_locked(amount_for(method));
    stale.push_back(method);
  }
  std::vector<std::shared_ptr<const LiveModel>> fitted(stale.size());
  std::vector<std::exception_ptr> errors(stale.size());
  std::atomic<size_t> next{0};
  // Each fit reads the sums and writes only its own result (a linear
  // method its own LiveLinear).
  const auto work = [&] {
    for (size_t i = next++; i < stale.size(); i = next++) {
      try {
        fitted[i] = fit_locked(stale[i]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const size_t threads =
      std::min<size_t>(stale.size(), std::max(1U, std::thread::hardware_concurrency()));
  std::vector<std::thread> others;
  for (size_t t = 1; t < threads; ++t) others.emplace_back(work);
  work();
  for (std::thread& other : others) other.join();
  for (size_t i = 0; i < stale.size(); ++i) {
    if (errors[i]) std::rethrow_exception(errors[i]);
    std::atomic_store(&fitted_[static_cast<size_t>(stale[i])], fitted[i]);
  }
}

std::shared_ptr<const LiveModel> LiveModels::model(Method method) const {
  if (!keeps(method)) return nullptr;
  std::shared_ptr<const LiveModel>& slot = fitted_[static_cast<size_t>(method)];
  std::shared_ptr<const LiveModel> current = std::atomic_load(&slot);
  if (current && current->version == version()) return current;
  std::lock_guard<std::mutex> lock(mutex_);
  // Another reader may have fitted it while this one waited.
  current = std::atomic_load(&slot);
  if (current && current->version == version()) return current;
  current = fit_locked(method);
  std::atomic_store(&slot, current);
  return current;
}

}  // namespace autocat::internal
