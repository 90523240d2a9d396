// kNN's live overlay: the learned documents' own postings, searched beside
// the base index; forgotten base documents filtered from its neighbours.
#include "classify/methods/knn_live.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "autocat/error.h"
#include "classify/corpus/weighting.h"
#include "classify/methods/knn_search.h"
#include "classify/methods/knn_vote.h"

namespace autocat::internal {

namespace {

using Neighbour = KnnIndex::Neighbour;

// Per-thread scratch of the learned documents' search.
struct LiveScratch {
  std::vector<float> accumulator;  // by slot; all zero between calls
  std::vector<uint32_t> touched;
  std::vector<Neighbour> heap;
};

LiveScratch& live_scratch() {
  thread_local LiveScratch scratch;
  return scratch;
}

}  // namespace

KnnLiveIndex::KnnLiveIndex(std::shared_ptr<const KnnIndex> base, std::vector<std::string> base_ids)
    : base_(std::move(base)) {
  if (!base_) throw InvalidArgumentError("kNN live index: no base index");
  set_base_ids(std::move(base_ids));
  std::call_once(base_ids_once_, [] {});
}

KnnLiveIndex::KnnLiveIndex(std::shared_ptr<const KnnIndex> base, BaseIdLoader load_base_ids)
    : base_(std::move(base)), load_base_ids_(std::move(load_base_ids)) {
  if (!base_) throw InvalidArgumentError("kNN live index: no base index");
}

void KnnLiveIndex::set_base_ids(std::vector<std::string> base_ids) const {
  if (!base_ids.empty() && base_ids.size() != base_->num_docs()) {
    throw InvalidArgumentError("kNN live index: " + std::to_string(base_ids.size()) + " ids for " +
                               std::to_string(base_->num_docs()) + " documents");
  }
  base_ids_.reserve(base_ids.size());
  for (uint32_t d = 0; d < base_ids.size(); ++d) base_ids_.emplace(std::move(base_ids[d]), d);
}

void KnnLiveIndex::ensure_base_ids() const {
  std::call_once(base_ids_once_, [this] {
    if (load_base_ids_) set_base_ids(load_base_ids_());
    load_base_ids_ = nullptr;
  });
}

bool KnnLiveIndex::remove_locked(const std::string& id) {
  if (auto it = learned_ids_.find(id); it != learned_ids_.end()) {
    Learned& learned = learned_[it->second];
    learned.present = false;
    learned.categories.clear();
    learned.categories.shrink_to_fit();
    --num_learned_present_;
    learned_ids_.erase(it);
    return true;
  }
  if (auto it = base_ids_.find(id); it != base_ids_.end()) {
    if (base_forgotten_.empty()) base_forgotten_.assign(base_->num_docs(), 0);
    if (base_forgotten_[it->second]) return false;
    base_forgotten_[it->second] = 1;
    ++num_base_forgotten_;
    return true;
  }
  return false;
}

void KnnLiveIndex::learn(const std::string& id, const DocumentTerms& doc,
                         const std::vector<uint32_t>& categories) {
  const std::vector<float>& idf = base_->idf();
  // Weighted and normalized before the lock is taken.
  std::vector<Posting> weights;
  std::vector<TermId> terms;
  double norm2 = 0.0;
  for (const TermCount& tc : doc.terms) {
    if (tc.term >= idf.size() || tc.count == 0 || !(idf[tc.term] > 0.0f)) continue;
    const double w = knn_tf(tc.count, base_->tf()) * idf[tc.term];
    norm2 += w * w;
    terms.push_back(tc.term);
    weights.push_back({0, static_cast<float>(w)});
  }
  const double inverse_norm = norm2 > 0.0 ? 1.0 / std::sqrt(norm2) : 0.0;

  ensure_base_ids();
  std::unique_lock<std::shared_mutex> lock(mutex_);
  remove_locked(id);
  const auto slot = static_cast<uint32_t>(learned_.size());
  learned_.push_back({categories, true});
  ++num_learned_present_;
  learned_ids_[id] = slot;
  if (!terms.empty() && postings_.empty()) postings_.resize(idf.size());
  for (size_t i = 0; i < terms.size(); ++i) {
    const double w = double(weights[i].weight) * inverse_norm;
    postings_[terms[i]].push_back({slot, static_cast<float>(w)});
  }
}

bool KnnLiveIndex::forget(const std::string& id) {
  ensure_base_ids();
  std::unique_lock<std::shared_mutex> lock(mutex_);
  return remove_locked(id);
}

bool KnnLiveIndex::contains(const std::string& id) const {
  ensure_base_ids();
  std::shared_lock<std::shared_mutex> lock(mutex_);
  if (learned_ids_.count(id) != 0) return true;
  const auto it = base_ids_.find(id);
  return it != base_ids_.end() && (base_forgotten_.empty() || !base_forgotten_[it->second]);
}

uint32_t KnnLiveIndex::learned_docs() const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  return num_learned_present_;
}

uint32_t KnnLiveIndex::forgotten_docs() const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  return num_base_forgotten_;
}

std::vector<Neighbour> KnnLiveIndex::neighbours(const DocumentTerms& query, int k,
                                                int max_query_terms, double max_df_ratio,
                                                KnnSearch search) const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  return neighbours_locked(query, k, max_query_terms, max_df_ratio, search);
}

std::vector<Neighbour> KnnLiveIndex::neighbours_locked(const DocumentTerms& query, int k,
                                                       int max_query_terms, double max_df_ratio,
                                                       KnnSearch search) const {
  if (k <= 0) return {};
  const uint32_t num_base = base_->num_docs();
  // The base, asked for enough neighbours to make up for its tombstones.
  const int base_k = int(std::min<uint64_t>(uint64_t(k) + num_base_forgotten_, num_base));
  const std::vector<Neighbour> from_base =
      base_->neighbours(query, base_k, max_query_terms, max_df_ratio, search);
  LiveScratch& scratch = live_scratch();
  TopK top(&scratch.heap, size_t(k));
  for (const Neighbour& n : from_base) {
    if (num_base_forgotten_ == 0 || base_forgotten_[n.doc] == 0) top.offer(n.doc, n.similarity);
  }
  if (num_learned_present_ == 0 || postings_.empty()) return top.sorted();

  // The query weighted as KnnIndex::neighbours weights it.
  const std::vector<float>& idf = base_->idf();
  double norm2 = 0.0;
  for (const TermCount& tc : query.terms) {
    if (tc.term >= idf.size() || tc.count == 0 || !(idf[tc.term] > 0.0f)) continue;
    const double w = knn_tf(tc.count, base_->tf()) * idf[tc.term];
    norm2 += w * w;
  }
  if (!(norm2 > 0.0)) return top.sorted();
  const double inverse_norm = 1.0 / std::sqrt(norm2);
  if (scratch.accumulator.size() < learned_.size()) {
    scratch.accumulator.resize(learned_.size(), 0.0f);
  }
  scratch.touched.clear();
  float* const acc = scratch.accumulator.data();
  // As in the base: short walks record the slots they touch, long ones are
  // followed by one scan over every slot.
  uint64_t total_postings = 0;
  for (const TermCount& tc : query.terms) {
    if (tc.term < postings_.size()) total_postings += postings_[tc.term].size();
  }
  const bool track = total_postings < learned_.size() / 2;
  for (const TermCount& tc : query.terms) {
    if (tc.term >= idf.size() || tc.count == 0 || !(idf[tc.term] > 0.0f)) continue;
    const std::vector<Posting>& list = postings_[tc.term];
    if (list.empty()) continue;
    const auto q = static_cast<float>(knn_tf(tc.count, base_->tf()) * idf[tc.term] * inverse_norm);
    if (track) {
      for (const Posting& posting : list) {
        if (acc[posting.slot] == 0.0f) scratch.touched.push_back(posting.slot);
        acc[posting.slot] += q * posting.weight;
      }
    } else {
      for (const Posting& posting : list) acc[posting.slot] += q * posting.weight;
    }
  }
  if (track) {
    // A slot recorded twice (only if an addition left it at zero) reads as
    // zero the second time and is skipped.
    for (uint32_t slot : scratch.touched) {
      const float similarity = acc[slot];
      acc[slot] = 0.0f;
      if (learned_[slot].present) top.offer(num_base + slot, similarity);
    }
  } else {
    const auto num_slots = static_cast<uint32_t>(learned_.size());
    for (uint32_t slot = 0; slot < num_slots; ++slot) {
      if (acc[slot] > 0.0f && learned_[slot].present) top.offer(num_base + slot, acc[slot]);
      acc[slot] = 0.0f;
    }
  }
  return top.sorted();
}

void KnnLiveIndex::score(const DocumentTerms& doc, int k, const ClassifyOptions& options,
                         int similarity_power, std::vector<double>* scores,
                         KnnSearch search) const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  const std::vector<Neighbour> neighbours =
      neighbours_locked(doc, k, options.knn_max_query_terms, options.knn_max_df_ratio, search);
  const uint32_t num_base = base_->num_docs();
  knn_vote(
      neighbours, similarity_power, base_->num_categories(),
      [&](uint32_t d) {
        if (d < num_base) return base_->doc_categories(d);
        const std::vector<uint32_t>& labels = learned_[d - num_base].categories;
        return KnnIndex::CategoryRange{labels.data(), labels.data() + labels.size()};
      },
      scores);
}

}  // namespace autocat::internal
