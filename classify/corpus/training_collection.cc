#include "classify/corpus/training_collection.h"

#include <algorithm>
#include <functional>

#include "autocat/error.h"
#include "autocat/types.h"
#include "classify/io/filenames.h"

namespace autocat::internal {
namespace {

// Text terms are case-folded, so they never start with an ASCII capital;
// every prefixed term (Q ids, XC labels) does.
bool is_prefixed(const std::string& term) {
  return !term.empty() && term[0] >= 'A' && term[0] <= 'Z';
}

}  // namespace

std::vector<uint32_t> TrainingCorpus::category_doc_counts() const {
  std::vector<uint32_t> counts(categories.size(), 0);
  for (const auto& labels : doc_categories) {
    for (uint32_t c : labels) ++counts[c];
  }
  return counts;
}

namespace {

// Reads documents, labels and (with_terms) the text postings; `keep`, if
// given, selects documents by their dense number (docid order).
TrainingCorpus load_corpus(const Xapian::Database& db, bool with_terms,
                           const std::vector<uint8_t>* keep) {
  TrainingCorpus corpus;
  const Xapian::docid last = db.get_lastdocid();
  // Dense numbering of documents in docid order.
  constexpr uint32_t kAbsent = UINT32_MAX;
  std::vector<uint32_t> dense(static_cast<size_t>(last) + 1, kAbsent);
  uint32_t seen = 0;
  for (auto it = db.postlist_begin(std::string()); it != db.postlist_end(std::string()); ++it) {
    const uint32_t number = seen++;
    if (keep && (number >= keep->size() || !(*keep)[number])) continue;
    dense[*it] = static_cast<uint32_t>(corpus.doc_length.size());
    corpus.doc_length.push_back(static_cast<uint32_t>(it.get_doclength()));
  }
  corpus.doc_categories.resize(corpus.doc_length.size());
  // The posting arrays are sized exactly before they are filled (a pass
  // over the term list only): growing them by doubling held up to 1.5 times
  // the collection's postings at once, the largest arrays of training.
  uint64_t num_postings = 0;
  size_t num_terms = 0;
  // A sample's counts are unknown before its postings are read (and it is
  // small): only the whole corpus is sized up front.
  const bool size_up_front = with_terms && keep == nullptr;
  for (auto term = db.allterms_begin(); size_up_front && term != db.allterms_end(); ++term) {
    if (is_prefixed(*term)) continue;
    num_postings += term.get_termfreq();
    ++num_terms;
  }
  corpus.posting_doc.reserve(num_postings);
  corpus.posting_wdf.reserve(num_postings);
  corpus.terms.reserve(num_terms);
  corpus.df.reserve(num_terms);
  corpus.postings_start.reserve(num_terms + 1);
  corpus.postings_start.push_back(0);

  for (auto term = db.allterms_begin(); term != db.allterms_end(); ++term) {
    const std::string& name = *term;
    if (is_prefixed(name)) {
      if (name.compare(0, kDefaultCategoryPrefix.size(), kDefaultCategoryPrefix) != 0) continue;
      // Every category, even one no kept document has: thresholds and
      // settings tuned on a sample are indexed like the whole collection's.
      const auto category = static_cast<uint32_t>(corpus.categories.size());
      corpus.categories.push_back(name.substr(kDefaultCategoryPrefix.size()));
      for (auto p = db.postlist_begin(name); p != db.postlist_end(name); ++p) {
        if (dense[*p] != kAbsent) corpus.doc_categories[dense[*p]].push_back(category);
      }
      continue;
    }
    if (!with_terms) continue;
    uint32_t df = 0;
    for (auto p = db.postlist_begin(name); p != db.postlist_end(name); ++p) {
      if (dense[*p] == kAbsent) continue;
      corpus.posting_doc.push_back(dense[*p]);
      corpus.posting_wdf.push_back(p.get_wdf());
      ++df;
    }
    if (df == 0) continue;
    corpus.terms.push_back(name);
    corpus.df.push_back(df);
    corpus.postings_start.push_back(corpus.posting_doc.size());
  }
  if (corpus.categories.empty()) {
    throw InvalidArgumentError("training database holds no labelled document");
  }
  return corpus;
}

}  // namespace

TrainingCorpus load_training_corpus(const Xapian::Database& db) {
  return load_corpus(db, /*with_terms=*/true, nullptr);
}

TrainingCorpus load_training_corpus(const Xapian::Database& db, const std::vector<uint8_t>& keep) {
  return load_corpus(db, /*with_terms=*/true, &keep);
}

TrainingCorpus load_training_labels(const Xapian::Database& db) {
  return load_corpus(db, /*with_terms=*/false, nullptr);
}

TermId TrainingCorpusBuilder::term_id(const std::string& term) {
  const auto [it, inserted] = term_ids_.try_emplace(term, TermId(term_names_.size()));
  if (inserted) term_names_.push_back(&it->first);  // node keys stay put
  return it->second;
}

void TrainingCorpusBuilder::add(const std::string& id, const std::vector<Token>& tokens,
                                const std::vector<std::string>& labels) {
  scratch_.clear();
  for (const Token& token : tokens) scratch_.push_back(term_id(token.term));
  add_document(id, &scratch_, labels);
}

void TrainingCorpusBuilder::add(const std::string& id, const std::vector<std::string>& terms,
                                const std::vector<std::string>& labels) {
  scratch_.clear();
  for (const std::string& term : terms) scratch_.push_back(term_id(term));
  add_document(id, &scratch_, labels);
}

void TrainingCorpusBuilder::add_document(const std::string& id, std::vector<TermId>* ids,
                                         const std::vector<std::string>& labels) {
  Document doc;
  doc.length = static_cast<uint32_t>(ids->size());
  std::sort(ids->begin(), ids->end());
  for (TermId t : *ids) {
    if (doc.terms.empty() || doc.terms.back().first != t) {
      doc.terms.emplace_back(t, 1);
    } else {
      ++doc.terms.back().second;
    }
  }
  doc.labels = labels;
  std::sort(doc.labels.begin(), doc.labels.end());
  doc.labels.erase(std::unique(doc.labels.begin(), doc.labels.end()), doc.labels.end());
  const auto [slot, inserted] = slot_of_id_.try_emplace(id, uint32_t(documents_.size()));
  if (inserted) {
    documents_.push_back(std::move(doc));
  } else {
    documents_[slot->second] = std::move(doc);
  }
}

TrainingCorpus TrainingCorpusBuilder::build() {
  TrainingCorpus corpus;
  const auto num_docs = static_cast<uint32_t>(documents_.size());
  // Terms by name, as Xapian lists them; a replaced document's terms may
  // have no posting left and are not listed.
  std::vector<uint32_t> df(term_names_.size(), 0);
  for (const Document& doc : documents_) {
    for (const auto& [t, wdf] : doc.terms) ++df[t];
  }
  std::vector<TermId> by_name;
  for (TermId t = 0; t < term_names_.size(); ++t) {
    if (df[t] > 0) by_name.push_back(t);
  }
  std::sort(by_name.begin(), by_name.end(),
            [&](TermId a, TermId b) { return *term_names_[a] < *term_names_[b]; });
  constexpr TermId kUnlisted = UINT32_MAX;
  std::vector<TermId> sorted_id(term_names_.size(), kUnlisted);
  corpus.terms.reserve(by_name.size());
  corpus.df.reserve(by_name.size());
  corpus.postings_start.assign(by_name.size() + 1, 0);
  for (TermId s = 0; s < by_name.size(); ++s) {
    sorted_id[by_name[s]] = s;
    corpus.terms.push_back(*term_names_[by_name[s]]);
    corpus.df.push_back(df[by_name[s]]);
    corpus.postings_start[s + 1] = corpus.postings_start[s] + df[by_name[s]];
  }
  corpus.posting_doc.resize(corpus.postings_start.back());
  corpus.posting_wdf.resize(corpus.postings_start.back());
  std::vector<uint64_t> next(corpus.postings_start.begin(), corpus.postings_start.end() - 1);
  std::vector<std::string> labels;
  for (uint32_t d = 0; d < num_docs; ++d) {
    for (const auto& [t, wdf] : documents_[d].terms) {
      const uint64_t at = next[sorted_id[t]]++;
      corpus.posting_doc[at] = d;
      corpus.posting_wdf.set(at, wdf);
    }
    corpus.doc_length.push_back(documents_[d].length);
    labels.insert(labels.end(), documents_[d].labels.begin(), documents_[d].labels.end());
  }
  std::sort(labels.begin(), labels.end());
  labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
  corpus.categories = labels;
  corpus.doc_categories.resize(num_docs);
  for (uint32_t d = 0; d < num_docs; ++d) {
    for (const std::string& label : documents_[d].labels) {
      corpus.doc_categories[d].push_back(static_cast<uint32_t>(
          std::lower_bound(labels.begin(), labels.end(), label) - labels.begin()));
    }
  }
  *this = TrainingCorpusBuilder();
  return corpus;
}

TrainingCorpus make_training_corpus(const std::vector<LabelledTerms>& documents) {
  TrainingCorpusBuilder builder;
  for (size_t d = 0; d < documents.size(); ++d) {
    builder.add(std::to_string(d), documents[d].terms, documents[d].labels);
  }
  return builder.build();
}

SpilledPostings::SpilledPostings(TrainingCorpus* corpus, const std::string& dir,
                                 size_t block_postings)
    : corpus_(corpus),
      file_(dir, kSpillFilePrefix, "the training postings'"),
      num_postings_(corpus->posting_doc.size()),
      block_(std::max<size_t>(block_postings, 1)) {
  // The documents, then the wdf bytes (the few large values stay).
  const std::pair<const void*, size_t> arrays[] = {
      {corpus->posting_doc.data(), corpus->posting_doc.size() * sizeof(uint32_t)},
      {corpus->posting_wdf.small_.data(), corpus->posting_wdf.small_.size()}};
  uint64_t offset = 0;
  for (const auto& [data, size] : arrays) {
    const char* bytes = static_cast<const char*>(data);
    for (size_t done = 0; done < size;) {
      const size_t chunk = std::min(size - done, block_ * sizeof(uint32_t));
      file_.write_at(offset, bytes + done, chunk);
      done += chunk;
      offset += chunk;
    }
  }
  std::vector<uint32_t>().swap(corpus->posting_doc);
  std::vector<uint8_t>().swap(corpus->posting_wdf.small_);
}

SpilledPostings::~SpilledPostings() = default;

void SpilledPostings::for_each_term_postings(const TermPostingsVisitor& visit) const {
  const uint64_t wdf_offset = num_postings_ * sizeof(uint32_t);
  std::vector<uint32_t> doc(block_), wdf(block_);
  std::vector<uint8_t> small(block_);
  const std::unordered_map<uint64_t, uint32_t>& large = corpus_->posting_wdf.large_;
  const std::vector<uint64_t>& start = corpus_->postings_start;
  TermId term = 0;
  for (uint64_t first = 0; first < num_postings_; first += block_) {
    const size_t count = static_cast<size_t>(std::min<uint64_t>(block_, num_postings_ - first));
    file_.read_at(first * sizeof(uint32_t), doc.data(), count * sizeof(uint32_t));
    file_.read_at(wdf_offset + first, small.data(), count);
    for (size_t i = 0; i < count; ++i) {
      wdf[i] = small[i] < PostingWdf::kLarge ? small[i] : large.at(first + i);
    }
    // Each term's part of [first, first + count).
    for (uint64_t p = first; p < first + count;) {
      while (start[term + 1] <= p) ++term;
      const uint64_t end = std::min<uint64_t>(start[term + 1], first + count);
      visit(term, doc.data() + (p - first), wdf.data() + (p - first), static_cast<size_t>(end - p));
      p = end;
    }
  }
}

void SpilledPostings::restore() {
  corpus_->posting_doc.resize(num_postings_);
  corpus_->posting_wdf.small_.resize(num_postings_);
  file_.read_at(0, corpus_->posting_doc.data(), num_postings_ * sizeof(uint32_t));
  file_.read_at(num_postings_ * sizeof(uint32_t), corpus_->posting_wdf.small_.data(),
                num_postings_);
}

void PostingWdf::resize(uint64_t n) {
  for (auto it = large_.begin(); it != large_.end();) {
    it = it->first >= n ? large_.erase(it) : std::next(it);
  }
  small_.resize(n, 0);
}

void PostingWdf::copy_to(uint64_t first, size_t count, uint32_t* out) const {
  for (size_t i = 0; i < count; ++i) out[i] = (*this)[first + i];
}

std::vector<uint32_t> PostingWdf::to_vector() const {
  std::vector<uint32_t> values(size());
  copy_to(0, values.size(), values.data());
  return values;
}

namespace {

// Xapian's write errors name a block, not the database ("Error writing
// block 102 (No space left on device)"): this one names it.
[[noreturn]] void training_db_write_error(const std::string& path, const Xapian::Error& e) {
  throw IOError(path + ": cannot write the training database: " + xapian_reason(e) +
                "; free space (or raise the file size limit) and run again");
}

Xapian::WritableDatabase open_training_db(const std::string& path, bool overwrite) {
  try {
    return Xapian::WritableDatabase(
        path, (overwrite ? Xapian::DB_CREATE_OR_OVERWRITE : Xapian::DB_CREATE_OR_OPEN) |
                  Xapian::DB_NO_SYNC);
  } catch (const Xapian::DatabaseLockError&) {
    throw;  // the caller says who holds it
  } catch (const Xapian::Error& e) {
    training_db_write_error(path, e);
  }
}

}  // namespace

std::string xapian_reason(const Xapian::Error& e) {
  const char* reason = e.get_error_string();
  if (reason == nullptr || *reason == '\0') return e.get_msg();
  return e.get_msg() + " (" + reason + ")";
}

TrainingCollectionWriter::TrainingCollectionWriter(const std::string& path, int commit_batch,
                                                   bool overwrite)
    : path_(path),
      db_(open_training_db(path, overwrite)),
      commit_batch_(commit_batch > 0 ? commit_batch : 2000) {}

Xapian::Document text_terms_document(const std::vector<Token>& tokens) {
  Xapian::Document doc;
  for (const Token& token : tokens) doc.add_term(token.term);
  return doc;
}

void TrainingCollectionWriter::add(const std::string& id, const std::vector<Token>& tokens,
                                   const std::vector<std::string>& labels) {
  add(id, text_terms_document(tokens), labels);
}

void TrainingCollectionWriter::add(const std::string& id, Xapian::Document terms,
                                   const std::vector<std::string>& labels) {
  add_document(id, labels, &terms);
}

void TrainingCollectionWriter::add(const std::string& id, const std::vector<std::string>& terms,
                                   const std::vector<uint32_t>& counts,
                                   const std::vector<std::string>& labels) {
  Xapian::Document doc;
  for (size_t i = 0; i < terms.size(); ++i) doc.add_term(terms[i], counts[i]);
  add_document(id, labels, &doc);
}

void TrainingCollectionWriter::add_document(const std::string& id,
                                            const std::vector<std::string>& labels,
                                            Xapian::Document* doc) {
  for (const std::string& label : labels) doc->add_boolean_term(kDefaultCategoryPrefix + label);
  const std::string id_term = kIdPrefix + id;
  doc->add_boolean_term(id_term);
  doc->set_data(id);
  try {
    db_.replace_document(id_term, *doc);
  } catch (const Xapian::Error& e) {
    training_db_write_error(path_, e);  // Xapian flushes by itself now and then
  }
  ++added_;
  if (++pending_ >= static_cast<uint64_t>(commit_batch_)) commit();
}

void TrainingCollectionWriter::remove(const std::string& id) {
  try {
    db_.delete_document(kIdPrefix + id);
  } catch (const Xapian::Error& e) {
    training_db_write_error(path_, e);
  }
  if (++pending_ >= static_cast<uint64_t>(commit_batch_)) commit();
}

void TrainingCollectionWriter::commit() {
  try {
    db_.commit();
  } catch (const Xapian::Error& e) {
    training_db_write_error(path_, e);
  }
  pending_ = 0;
}

Vocabulary::Vocabulary(const std::vector<std::string>& terms) : terms_(&terms) {
  size_t capacity = 16;
  while (capacity < 2 * terms.size()) capacity *= 2;
  slots_.assign(capacity, kFree);
  const size_t mask = capacity - 1;
  const auto increasing = [](const std::string& a, const std::string& b) { return !(a < b); };
  if (std::adjacent_find(terms.begin(), terms.end(), increasing) == terms.end()) {
    // Sorted and unique (a model's terms; a sequential check): no term can
    // be in the table already, so each goes to the first free slot of its
    // probe sequence, without comparing strings: the same table as the loop
    // below. The slots are hashed kAhead terms ahead and prefetched, as
    // they are random reads of a table larger than the caches (32 MB for
    // 2.7 M terms: this took 40% of opening a 1M-document model).
    constexpr size_t kAhead = 16;
    size_t ahead[kAhead];
    const size_t count = terms.size();
    for (size_t t = 0; t < std::min(count, kAhead); ++t) {
      ahead[t] = std::hash<std::string_view>()(terms[t]) & mask;
      __builtin_prefetch(&slots_[ahead[t]], 1);
    }
    for (size_t t = 0; t < count; ++t) {
      size_t slot = ahead[t % kAhead];
      if (t + kAhead < count) {
        const size_t next = std::hash<std::string_view>()(terms[t + kAhead]) & mask;
        ahead[t % kAhead] = next;
        __builtin_prefetch(&slots_[next], 1);
      }
      while (slots_[slot] != kFree) slot = (slot + 1) & mask;
      slots_[slot] = static_cast<TermId>(t);
    }
    size_ = count;
    return;
  }
  for (TermId t = 0; t < terms.size(); ++t) {
    size_t slot = std::hash<std::string_view>()(terms[t]) & mask;
    while (slots_[slot] != kFree && terms[slots_[slot]] != terms[t]) slot = (slot + 1) & mask;
    if (slots_[slot] == kFree) {
      slots_[slot] = t;
      ++size_;
    }
  }
}

int64_t Vocabulary::find(std::string_view term) const {
  if (slots_.empty()) return -1;
  const size_t mask = slots_.size() - 1;
  for (size_t slot = std::hash<std::string_view>()(term) & mask;; slot = (slot + 1) & mask) {
    const TermId t = slots_[slot];
    if (t == kFree) return -1;
    if ((*terms_)[t] == term) return static_cast<int64_t>(t);
  }
}

namespace {

DocumentTerms collapse(std::vector<TermId>* ids, uint32_t total_tokens) {
  DocumentTerms doc;
  doc.total_tokens = total_tokens;
  doc.known_tokens = static_cast<uint32_t>(ids->size());
  std::sort(ids->begin(), ids->end());
  for (size_t i = 0; i < ids->size();) {
    size_t j = i;
    while (j < ids->size() && (*ids)[j] == (*ids)[i]) ++j;
    doc.terms.push_back(TermCount{(*ids)[i], static_cast<uint32_t>(j - i)});
    i = j;
  }
  return doc;
}

}  // namespace

DocumentTerms make_document_terms(const Vocabulary& vocabulary, const std::vector<Token>& tokens) {
  std::vector<TermId> ids;
  ids.reserve(tokens.size());
  for (const Token& token : tokens) {
    int64_t id = vocabulary.find(token.term);
    if (id >= 0) ids.push_back(static_cast<TermId>(id));
  }
  return collapse(&ids, static_cast<uint32_t>(tokens.size()));
}

DocumentTerms make_document_terms(const Vocabulary& vocabulary,
                                  const std::vector<std::string>& terms) {
  std::vector<TermId> ids;
  ids.reserve(terms.size());
  for (const std::string& term : terms) {
    int64_t id = vocabulary.find(term);
    if (id >= 0) ids.push_back(static_cast<TermId>(id));
  }
  return collapse(&ids, static_cast<uint32_t>(terms.size()));
}

std::vector<DocumentTerms> corpus_documents(const TrainingCorpus& corpus) {
  std::vector<DocumentTerms> docs(corpus.num_docs());
  // Terms are visited in id order, so each document's list comes out sorted.
  for (TermId t = 0; t < corpus.num_terms(); ++t) {
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      DocumentTerms& doc = docs[corpus.posting_doc[p]];
      doc.terms.push_back(TermCount{t, corpus.posting_wdf[p]});
      doc.known_tokens += corpus.posting_wdf[p];
      doc.total_tokens += corpus.posting_wdf[p];
    }
  }
  return docs;
}

}  // namespace autocat::internal
