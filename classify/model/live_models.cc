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
                       std::vector<std::string> base_ids, std::function<void(Method)> load_part)
    : model_(model),
      load_part_(std::move(load_part)),
      selected_(model.selected),
      idf_(idf),
      rocchio_gamma_(model.rocchio_gamma),
      multinomial_from_em_(model.em.iterations > 0),
      corpus_(std::move(shared_corpus)),
      fitted_(all_methods().size()) {
  const TrainingCorpus& corpus = *corpus_;
  if (!base_ids.empty() && base_ids.size() != corpus.num_docs()) {
    throw InvalidArgumentError("live models: " + std::to_string(base_ids.size()) + " ids for " +
                               std::to_string(corpus.num_docs()) + " documents");
  }
  // Rocchio's and bnb's; NB's and cnb's once their settings are read.
  sums_kept_[amount_slot(TermAmount::kTfidf)] = true;
  sums_kept_[amount_slot(TermAmount::kPresence)] = true;
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
}

LiveModels::~LiveModels() = default;

void LiveModels::read_nb_locked() const {
  if (nb_read_) return;
  for (Method method :
       {Method::kNaiveBayes, Method::kBernoulliNaiveBayes, Method::kComplementNaiveBayes}) {
    if (load_part_) load_part_(method);
  }
  const NaiveBayesModel* models[3] = {&model_.multinomial_nb, &model_.bernoulli_nb,
                                      &model_.complement_nb};
  for (int slot = 0; slot < 3; ++slot) alpha_[slot] = models[slot]->alpha;
  tfidf_[0] = model_.multinomial_nb.tfidf();
  tfidf_[2] = model_.complement_nb.tfidf();
  nb_read_ = true;
  for (Method method : {Method::kNaiveBayes, Method::kComplementNaiveBayes}) {
    if (keeps_locked(method)) sums_kept_[amount_slot(amount_for(method))] = true;
  }
}

LiveLinear* LiveModels::linear_locked(int slot) const {
  if (!linear_read_[slot]) {
    const Method method = slot == 0 ? Method::kSvm : Method::kLogreg;
    if (load_part_) load_part_(method);
    const LinearModel& linear = method == Method::kSvm ? model_.svm : model_.logreg;
    if (linear.trained() && linear.c > 0) {  // trained
      auto live = std::make_unique<LiveLinear>(method, linear, idf_, model_.decision);
      for (const LinearChange& change : linear_changes_) apply(change, live.get());
      linear_[slot] = std::move(live);
    }
    linear_read_[slot] = true;
    if (linear_read_[0] && linear_read_[1]) std::vector<LinearChange>().swap(linear_changes_);
  }
  return linear_[slot].get();
}

void LiveModels::apply(const LinearChange& change, LiveLinear* linear) {
  switch (change.kind) {
    case LinearChange::Kind::kLearn:
      linear->learn(change.id, change.doc, change.categories);
      break;
    case LinearChange::Kind::kForgetLearned:
      linear->forget_learned(change.id);
      break;
    case LinearChange::Kind::kForgetTrained:
      linear->forget_trained(change.doc, change.categories);
      break;
  }
}

void LiveModels::linear_change_locked(LinearChange change) {
  for (int slot = 0; slot < 2; ++slot) {
    if (linear_read_[slot] && linear_[slot]) apply(change, linear_[slot].get());
  }
  if (!linear_read_[0] || !linear_read_[1]) linear_changes_.push_back(std::move(change));
}

void LiveModels::release_locked() const {
  if (!nb_read_) return;
  for (size_t s = 0; s < sums_.size(); ++s) {
    if (sums_kept_[s] && !sums_built_[s]) return;
  }
  std::vector<Change>().swap(changes_);
  corpus_.reset();
}

uint64_t LiveModels::sum_entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t total = 0;
  for (size_t slot = 0; slot < sums_.size(); ++slot) {
    if (sums_built_[slot]) total += sums_[slot].num_entries();
  }
  return total;
}

bool LiveModels::keeps(Method method) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return keeps_locked(method);
}

bool LiveModels::keeps_locked(Method method) const {
  const MethodTraits* traits = find_method_traits(method);
  if (traits == nullptr || !traits->learns_live) return false;
  if (const int slot = linear_slot(method); slot >= 0) return linear_locked(slot) != nullptr;
  // A multinomial model refitted by EM on unlabelled documents is not a sum.
  if (method == Method::kNaiveBayes) return !multinomial_from_em_;
  return true;
}

TermAmount LiveModels::amount_for(Method method) const {
  const int slot = nb_slot(method);
  // Also for Bernoulli NB, whose refit needs its trained alpha.
  if (slot >= 0) read_nb_locked();
  if (const MethodTraits* traits = find_method_traits(method);
      traits != nullptr && traits->counts_presence) {
    return TermAmount::kPresence;
  }
  if (slot >= 0 && !tfidf_[slot]) return TermAmount::kCount;
  return TermAmount::kTfidf;
}

void LiveModels::add_locked(const DocumentTerms& doc, const std::vector<uint32_t>& categories,
                            double sign) {
  for (size_t slot = 0; slot < sums_.size(); ++slot) {
    if (!sums_built_[slot]) continue;
    add_document(doc, categories, sign, selection_for(sums_[slot].amount, selected_), idf_,
                 &sums_[slot]);
  }
  // Kept while some sums may still be built (corpus_ is dropped with it).
  if (corpus_) changes_.push_back(Change{doc, categories, sign});
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
    release_locked();
  }
  return sums_[slot];
}

bool LiveModels::remove_locked(const std::string& id) {
  if (auto it = learned_.find(id); it != learned_.end()) {
    add_locked(it->second.doc, it->second.categories, -1.0);
    linear_change_locked(LinearChange{LinearChange::Kind::kForgetLearned, id, {}, {}});
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
  linear_change_locked(
      LinearChange{LinearChange::Kind::kForgetTrained, std::string(), doc, base_categories_[d]});
  base_forgotten_[d] = 1;
  return true;
}

void LiveModels::learn(const std::string& id, const DocumentTerms& doc,
                       const std::vector<uint32_t>& categories) {
  std::lock_guard<std::mutex> lock(mutex_);
  remove_locked(id);
  add_locked(doc, categories, +1.0);
  linear_change_locked(LinearChange{LinearChange::Kind::kLearn, id, doc, categories});
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
    fitted->classifier = linear_locked(linear)->fit();
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
  // Combo calls this on every score: nothing to do unless a change came.
  if (fit_version_.load(std::memory_order_acquire) == version()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t now = version();
  std::vector<Method> stale;
  for (Method method : methods) {
    // keeps_locked sets up a linear method's state: the fits below run
    // on several threads.
    if (!keeps_locked(method) || std::find(stale.begin(), stale.end(), method) != stale.end()) {
      continue;
    }
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
  fit_version_.store(now, std::memory_order_release);
}

std::shared_ptr<const LiveModel> LiveModels::model(Method method) const {
  const size_t index = static_cast<size_t>(method);
  if (index >= fitted_.size()) return nullptr;
  std::shared_ptr<const LiveModel>& slot = fitted_[index];
  std::shared_ptr<const LiveModel> current = std::atomic_load(&slot);
  if (current && current->version == version()) return current;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!keeps_locked(method)) return nullptr;
  // Another reader may have fitted it while this one waited.
  current = std::atomic_load(&slot);
  if (current && current->version == version()) return current;
  current = fit_locked(method);
  std::atomic_store(&slot, current);
  return current;
}

}  // namespace autocat::internal
