// kNN through compact in-memory posting lists.
//
// Each posting holds w(t,d)/|d|, so the similarity of a query q to a
// training document d is the sum over the query's terms of q_t times the
// posting weight: one multiply-add per posting into a dense float
// accumulator indexed by document. Per-thread scratch memory (the
// accumulator, the query, the top-k heap) is reused across calls, so a call
// allocates only its result.
#include "classify/methods/knn.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <utility>

#include "autocat/error.h"
#include "classify/corpus/weighting.h"
#include "classify/io/atomic_file.h"
#include "classify/io/filenames.h"

namespace autocat::internal {

namespace {

using Neighbour = KnnIndex::Neighbour;

struct QueryTerm {
  TermId term;
  double weight;  // (1 + ln count) * idf, then divided by the query norm
  double bound;   // float(weight) * the term's largest posting weight
};

// A document that may still enter the top k, with its partial similarity.
struct Candidate {
  uint32_t doc;
  float similarity;
};

// Reused by every call on one thread. Invariant between calls: every entry
// of `accumulator` is zero.
struct Scratch {
  std::vector<QueryTerm> query;
  std::vector<float> accumulator;
  std::vector<uint32_t> touched;  // documents met by a short walk
  std::vector<Neighbour> heap;
  std::vector<double> remaining_bound;
  std::vector<uint64_t> remaining_postings;
  std::vector<Candidate> candidates;
  std::vector<float> selection;
  std::vector<const float*> columns;  // per query term: its dense column, or null
};

Scratch& thread_scratch() {
  thread_local Scratch scratch;
  return scratch;
}

// Ranking order of neighbours: higher similarity first, then lower doc.
inline bool better(const Neighbour& a, const Neighbour& b) {
  return a.similarity > b.similarity || (a.similarity == b.similarity && a.doc < b.doc);
}

// The best `keep` neighbours offered so far, in a heap whose front is the
// worst one kept. Most candidates fall below it and are rejected by the
// first comparison.
class TopK {
 public:
  // Reuses `heap` (cleared) as storage.
  TopK(std::vector<Neighbour>* heap, size_t keep) : heap_(*heap), keep_(keep) {
    heap_.clear();
    heap_.reserve(keep);
  }

  void offer(uint32_t doc, float similarity) {
    if (!(similarity > 0.0f) || similarity < floor_) return;
    const Neighbour candidate{doc, similarity};
    // A functor, not a function pointer: the comparisons inline, which
    // matters at large k where many candidates enter the heap.
    const auto order = [](const Neighbour& a, const Neighbour& b) { return better(a, b); };
    if (heap_.size() < keep_) {
      heap_.push_back(candidate);
      std::push_heap(heap_.begin(), heap_.end(), order);
    } else if (better(candidate, heap_.front())) {
      replace_worst(candidate);
    } else {
      return;
    }
    if (heap_.size() == keep_) floor_ = heap_.front().similarity;
  }

  // The kept neighbours, most similar first.
  std::vector<Neighbour> sorted() {
    std::sort(heap_.begin(), heap_.end(),
              [](const Neighbour& a, const Neighbour& b) { return better(a, b); });
    return std::vector<Neighbour>(heap_.begin(), heap_.end());
  }

 private:
  // Puts `candidate` in place of the worst kept neighbour (the front) and
  // restores the heap with one sift-down (pop_heap + push_heap take two).
  void replace_worst(const Neighbour& candidate) {
    const size_t size = heap_.size();
    size_t hole = 0;
    for (;;) {
      const size_t left = 2 * hole + 1;
      if (left >= size) break;
      // The worse child moves up: the front stays the worst kept.
      size_t child = left;
      if (left + 1 < size && better(heap_[left], heap_[left + 1])) child = left + 1;
      if (!better(candidate, heap_[child])) break;
      heap_[hole] = heap_[child];
      hole = child;
    }
    heap_[hole] = candidate;
  }

  std::vector<Neighbour>& heap_;
  const size_t keep_;
  float floor_ = 0.0f;  // similarity of the worst kept neighbour once full
};

}  // namespace

namespace {

// 1 / L2 norm of every document's tf-idf vector over the terms with
// idf > 0 (0 for a document without such a term); `*postings` counts the
// postings that enter the norms.
std::vector<double> inverse_document_norms(const TrainingCorpus& corpus,
                                           const std::vector<float>& idf, uint64_t* postings) {
  std::vector<double> norm2(corpus.num_docs(), 0.0);
  *postings = 0;
  for (TermId t = 0; t < corpus.num_terms(); ++t) {
    if (!(idf[t] > 0.0f)) continue;
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      const uint32_t wdf = corpus.posting_wdf[p];
      if (wdf == 0) continue;
      const double w = sublinear_tf(wdf) * idf[t];
      norm2[corpus.posting_doc[p]] += w * w;
      ++*postings;
    }
  }
  for (double& value : norm2) value = value > 0.0 ? 1.0 / std::sqrt(value) : 0.0;
  return norm2;
}

// kNN's weight of posting p (of term t, wdf > 0): its tf-idf component in
// the document's L2-normalized vector.
float posting_weight(const TrainingCorpus& corpus, const std::vector<float>& idf,
                     const std::vector<double>& inverse_norm, TermId t, uint64_t p) {
  return static_cast<float>(sublinear_tf(corpus.posting_wdf[p]) * idf[t] *
                            inverse_norm[corpus.posting_doc[p]]);
}

}  // namespace

KnnIndex::KnnIndex(const TrainingCorpus& corpus, const std::vector<float>& idf)
    : num_docs_(corpus.num_docs()),
      num_categories_(corpus.num_categories()),
      idf_(idf),
      df_(corpus.df) {
  const uint32_t num_terms = corpus.num_terms();
  if (idf.size() != num_terms) {
    throw InvalidArgumentError("kNN index: " + std::to_string(idf.size()) + " idf values for " +
                               std::to_string(num_terms) + " terms");
  }
  owned_doc_category_start_.reserve(size_t(num_docs_) + 1);
  owned_doc_category_start_.push_back(0);
  for (uint32_t d = 0; d < num_docs_; ++d) {
    if (d < corpus.doc_categories.size()) {
      const auto& labels = corpus.doc_categories[d];
      owned_doc_category_.insert(owned_doc_category_.end(), labels.begin(), labels.end());
    }
    owned_doc_category_start_.push_back(static_cast<uint32_t>(owned_doc_category_.size()));
  }

  uint64_t kept = 0;
  const std::vector<double> inverse_norm = inverse_document_norms(corpus, idf_, &kept);

  // Every posting with a positive weight belongs to a document of positive
  // norm, so `kept` postings remain.
  owned_postings_start_.assign(size_t(num_terms) + 1, 0);
  owned_posting_doc_.reserve(kept);
  owned_posting_weight_.reserve(kept);
  max_weight_.assign(num_terms, 0.0f);
  for (TermId t = 0; t < num_terms; ++t) {
    owned_postings_start_[t] = owned_posting_doc_.size();
    if (!(idf_[t] > 0.0f)) continue;
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      const uint32_t wdf = corpus.posting_wdf[p];
      if (wdf == 0) continue;
      const uint32_t doc = corpus.posting_doc[p];
      if (owned_posting_doc_.size() > owned_postings_start_[t] &&
          owned_posting_doc_.back() >= doc) {
        postings_sorted_ = false;
      }
      const float weight = posting_weight(corpus, idf_, inverse_norm, t, p);
      owned_posting_doc_.push_back(doc);
      owned_posting_weight_.push_back(weight);
      max_weight_[t] = std::max(max_weight_[t], weight);
    }
  }
  owned_postings_start_[num_terms] = owned_posting_doc_.size();
  use_owned_arrays();
  choose_dense_terms();
}

namespace {

// The kNN index file: a fixed header, then the arrays as they lie in memory
// (native byte order, which the header records), each starting at a
// multiple of 8 bytes.
constexpr char kKnnIndexMagic[8] = {'A', 'C', 'K', 'N', 'N', 'I', 'X', '\0'};
constexpr uint32_t kKnnIndexVersion = 1;
constexpr uint32_t kByteOrderMark = 0x01020304;

struct KnnFileHeader {
  char magic[8];
  uint32_t version;
  uint32_t byte_order;
  uint32_t num_docs;
  uint32_t num_categories;
  uint32_t num_terms;
  uint32_t postings_sorted;
  uint64_t num_postings;
  uint64_t num_doc_categories;
  uint32_t header_crc;  // CRC-32 of the bytes before it
  uint32_t reserved;
};
static_assert(sizeof(KnnFileHeader) == 56, "the file layout depends on it");

uint64_t padded(uint64_t bytes) { return (bytes + 7) & ~uint64_t{7}; }

uint32_t header_crc(const KnnFileHeader& header) {
  return static_cast<uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(&header), offsetof(KnnFileHeader, header_crc)));
}

// Where each array starts in the file, from the header's counts.
struct KnnFileLayout {
  uint64_t idf, df, max_weight, postings_start, posting_doc, posting_weight, doc_category_start,
      doc_category, end;

  explicit KnnFileLayout(const KnnFileHeader& h) {
    const uint64_t terms = h.num_terms;
    idf = sizeof(KnnFileHeader);
    df = idf + padded(terms * sizeof(float));
    max_weight = df + padded(terms * sizeof(uint32_t));
    postings_start = max_weight + padded(terms * sizeof(float));
    posting_doc = postings_start + (terms + 1) * sizeof(uint64_t);
    posting_weight = posting_doc + padded(h.num_postings * sizeof(uint32_t));
    doc_category_start = posting_weight + padded(h.num_postings * sizeof(float));
    doc_category = doc_category_start + padded((uint64_t{h.num_docs} + 1) * sizeof(uint32_t));
    end = doc_category + padded(h.num_doc_categories * sizeof(uint32_t));
  }
};

template <class T>
std::string_view bytes_of(const T* data, uint64_t count) {
  return {reinterpret_cast<const char*>(data), size_t(count * sizeof(T))};
}

[[noreturn]] void refuse_index_file(const std::string& path, const std::string& what) {
  throw ModelFormatError(path + ": " + what +
                         "; delete it (autocat then rebuilds the kNN index from the training "
                         "collection at every load) or run autocat train again");
}

}  // namespace

// The index file's bytes: mapped (shared with other processes, paged in as
// searches touch them), or read into private memory (AUTOCAT_KNN_INDEX=read).
// A mapping keeps the file open so that searches can check, with one
// fstat, that nobody truncated or rewrote it in place: pages past a
// truncated end raise SIGBUS when touched, which no caller can catch.
struct KnnIndex::Mapping {
  void* address = MAP_FAILED;
  size_t length = 0;
  int fd = -1;                       // mapped only
  struct timespec modified {};       // the file's mtime when opened
  std::unique_ptr<uint64_t[]> copy;  // read into memory: the bytes, 8-aligned
  ~Mapping() {
    if (address != MAP_FAILED && copy == nullptr) munmap(address, length);
    if (fd >= 0) ::close(fd);
  }
  const char* at(uint64_t offset) const { return static_cast<const char*>(address) + offset; }
};

namespace {

// AUTOCAT_KNN_INDEX: "map" (the default) or "read".
bool read_index_into_memory() {
  const char* setting = std::getenv("AUTOCAT_KNN_INDEX");
  if (setting == nullptr || *setting == '\0' || std::strcmp(setting, "map") == 0) return false;
  if (std::strcmp(setting, "read") == 0) return true;
  throw InvalidArgumentError(std::string("AUTOCAT_KNN_INDEX=") + setting +
                             ": expected map (share the kNN index file's pages) or read (copy "
                             "it into private memory)");
}

}  // namespace

KnnIndex::~KnnIndex() = default;

void KnnIndex::write(const std::string& path) const {
  KnnFileHeader header{};
  std::memcpy(header.magic, kKnnIndexMagic, sizeof header.magic);
  header.version = kKnnIndexVersion;
  header.byte_order = kByteOrderMark;
  header.num_docs = num_docs_;
  header.num_categories = num_categories_;
  header.num_terms = static_cast<uint32_t>(idf_.size());
  header.postings_sorted = postings_sorted_ ? 1 : 0;
  header.num_postings = num_postings_;
  header.num_doc_categories = num_doc_categories_;
  header.header_crc = header_crc(header);
  const uint64_t terms = idf_.size();
  static const char kZeros[8] = {};
  std::vector<std::string_view> pieces;
  const auto add = [&](std::string_view array) {
    pieces.push_back(array);
    if (array.size() % 8 != 0) pieces.push_back(std::string_view(kZeros, 8 - array.size() % 8));
  };
  add(bytes_of(&header, 1));
  add(bytes_of(idf_.data(), terms));
  add(bytes_of(df_.data(), terms));
  add(bytes_of(max_weight_.data(), terms));
  add(bytes_of(postings_start_, terms + 1));
  add(bytes_of(posting_doc_, num_postings_));
  add(bytes_of(posting_weight_, num_postings_));
  add(bytes_of(doc_category_start_, uint64_t{num_docs_} + 1));
  add(bytes_of(doc_category_, num_doc_categories_));
  write_file_atomically(path, pieces, "kNN index");
}

std::vector<float> knn_term_weights(const TrainingCorpus& corpus, const std::vector<float>& idf,
                                    double concentration) {
  if (idf.size() != corpus.num_terms()) {
    throw InvalidArgumentError("kNN term weights: idf has " + std::to_string(idf.size()) +
                               " entries for " + std::to_string(corpus.num_terms()) + " terms");
  }
  if (!(concentration > 0.0)) return idf;
  // Classes: the categories, and "no label" if some document has none.
  const uint32_t none = corpus.num_categories();
  std::vector<double> prior(size_t(none) + 1, 0.0);
  for (const auto& labels : corpus.doc_categories) {
    if (labels.empty()) prior[none] += 1.0;
    for (uint32_t c : labels) prior[c] += 1.0;
  }
  double total = 0.0;
  size_t classes = 0;
  for (double count : prior) {
    total += count;
    classes += count > 0.0;
  }
  if (classes < 2 || !(total > 0.0)) return idf;
  for (double& p : prior) p /= total;
  const double max_entropy = std::log(double(classes));
  constexpr double kPseudoDocuments = 1.0;
  std::vector<float> weights(idf.size(), 0.0f);
  std::vector<double> counts(prior.size());
  for (TermId t = 0; t < corpus.num_terms(); ++t) {
    if (!(idf[t] > 0.0f)) continue;
    std::fill(counts.begin(), counts.end(), 0.0);
    double n = 0.0;
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      const auto& labels = corpus.doc_categories[corpus.posting_doc[p]];
      if (labels.empty()) counts[none] += 1.0, n += 1.0;
      for (uint32_t c : labels) counts[c] += 1.0, n += 1.0;
    }
    double entropy = 0.0;
    for (size_t c = 0; c < counts.size(); ++c) {
      const double q = (counts[c] + kPseudoDocuments * prior[c]) / (n + kPseudoDocuments);
      if (q > 0.0) entropy -= q * std::log(q);
    }
    const double share = std::clamp(1.0 - entropy / max_entropy, 0.0, 1.0);
    weights[t] = static_cast<float>(idf[t] * std::pow(share, concentration));
  }
  return weights;
}

void write_knn_index(const TrainingCorpus& corpus, const std::vector<float>& idf,
                     const std::string& path) {
  const uint32_t num_terms = corpus.num_terms();
  const uint32_t num_docs = corpus.num_docs();
  if (idf.size() != num_terms) {
    throw InvalidArgumentError("kNN index: " + std::to_string(idf.size()) + " idf values for " +
                               std::to_string(num_terms) + " terms");
  }
  // The same norms and weights as the KnnIndex constructor, so that the
  // bytes are the same.
  uint64_t positive = 0;
  const std::vector<double> inverse_norm = inverse_document_norms(corpus, idf, &positive);
  auto weight_of = [&](TermId t, uint64_t p) {
    return posting_weight(corpus, idf, inverse_norm, t, p);
  };
  std::vector<uint64_t> postings_start(size_t(num_terms) + 1, 0);
  std::vector<float> max_weight(num_terms, 0.0f);
  uint64_t kept = 0;
  bool sorted = true;
  for (TermId t = 0; t < num_terms; ++t) {
    postings_start[t] = kept;
    if (!(idf[t] > 0.0f)) continue;
    uint64_t last = 0;
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      if (corpus.posting_wdf[p] == 0) continue;
      const uint32_t doc = corpus.posting_doc[p];
      if (kept > postings_start[t] && last >= doc) sorted = false;
      last = doc;
      max_weight[t] = std::max(max_weight[t], weight_of(t, p));
      ++kept;
    }
  }
  postings_start[num_terms] = kept;
  uint64_t num_doc_categories = 0;
  for (uint32_t d = 0; d < num_docs && d < corpus.doc_categories.size(); ++d) {
    num_doc_categories += corpus.doc_categories[d].size();
  }

  KnnFileHeader header{};
  std::memcpy(header.magic, kKnnIndexMagic, sizeof header.magic);
  header.version = kKnnIndexVersion;
  header.byte_order = kByteOrderMark;
  header.num_docs = num_docs;
  header.num_categories = corpus.num_categories();
  header.num_terms = num_terms;
  header.postings_sorted = sorted ? 1 : 0;
  header.num_postings = kept;
  header.num_doc_categories = num_doc_categories;
  header.header_crc = header_crc(header);

  write_file_atomically(
      path,
      [&](AtomicFileSink& sink) {
        static const char kZeros[8] = {};
        const auto pad = [&] {
          if (sink.size() % 8 != 0) sink.append(std::string_view(kZeros, 8 - sink.size() % 8));
        };
        const auto add = [&](std::string_view array) {
          sink.append(array);
          pad();
        };
        // Streamed arrays go out through a buffer of about a megabyte.
        std::vector<char> buffer;
        buffer.reserve(1 << 20);
        const auto put = [&](const void* value, size_t bytes) {
          if (buffer.size() + bytes > buffer.capacity()) {
            sink.append(std::string_view(buffer.data(), buffer.size()));
            buffer.clear();
          }
          buffer.insert(buffer.end(), static_cast<const char*>(value),
                        static_cast<const char*>(value) + bytes);
        };
        const auto end_array = [&] {
          sink.append(std::string_view(buffer.data(), buffer.size()));
          buffer.clear();
          pad();
        };
        add(bytes_of(&header, 1));
        add(bytes_of(idf.data(), num_terms));
        add(bytes_of(corpus.df.data(), num_terms));
        add(bytes_of(max_weight.data(), num_terms));
        add(bytes_of(postings_start.data(), uint64_t{num_terms} + 1));
        for (int array = 0; array < 2; ++array) {  // documents, then weights
          for (TermId t = 0; t < num_terms; ++t) {
            if (!(idf[t] > 0.0f)) continue;
            for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
              if (corpus.posting_wdf[p] == 0) continue;
              if (array == 0) {
                put(&corpus.posting_doc[p], sizeof(uint32_t));
              } else {
                const float weight = weight_of(t, p);
                put(&weight, sizeof weight);
              }
            }
          }
          end_array();
        }
        uint32_t start = 0;
        put(&start, sizeof start);
        for (uint32_t d = 0; d < num_docs; ++d) {
          if (d < corpus.doc_categories.size()) {
            start += static_cast<uint32_t>(corpus.doc_categories[d].size());
          }
          put(&start, sizeof start);
        }
        end_array();
        for (uint32_t d = 0; d < num_docs && d < corpus.doc_categories.size(); ++d) {
          for (uint32_t c : corpus.doc_categories[d]) put(&c, sizeof c);
        }
        end_array();
      },
      "kNN index");
}

std::shared_ptr<const KnnIndex> KnnIndex::open(const std::string& path,
                                               const std::vector<float>& idf, uint32_t num_docs,
                                               uint32_t num_categories) {
  const bool read_into_memory = read_index_into_memory();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return nullptr;
    throw IOError(path + ": cannot open the kNN index: " + std::strerror(errno));
  }
  auto mapping = std::make_unique<Mapping>();
  mapping->fd = fd;  // closed with the mapping
  struct stat status {};
  const bool stat_ok = fstat(fd, &status) == 0;
  if (!stat_ok || !S_ISREG(status.st_mode)) refuse_index_file(path, "not a regular file");
  mapping->modified = status.st_mtim;
  if (status.st_size > 0 && read_into_memory) {
    const auto size = uint64_t(status.st_size);
    mapping->copy.reset(new uint64_t[(size + 7) / 8]);
    char* out = reinterpret_cast<char*>(mapping->copy.get());
    uint64_t done = 0;
    while (done < size) {
      const ssize_t got = ::pread(fd, out + done, size - done, off_t(done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) throw IOError(path + ": cannot read the kNN index: " + std::strerror(errno));
      if (got == 0) break;  // shrank meanwhile: the length check below refuses it
      done += uint64_t(got);
    }
    mapping->address = out;
    mapping->length = size_t(done);
    ::close(fd);
    mapping->fd = -1;
  } else if (status.st_size > 0) {
    mapping->length = size_t(status.st_size);
    mapping->address = mmap(nullptr, mapping->length, PROT_READ, MAP_SHARED, fd, 0);
    if (mapping->address == MAP_FAILED) {
      throw IOError(path + ": cannot map the kNN index: " + std::strerror(errno));
    }
  }
  if (mapping->length < sizeof(KnnFileHeader) ||
      std::memcmp(mapping->at(0), kKnnIndexMagic, sizeof kKnnIndexMagic) != 0) {
    refuse_index_file(path, "not an autocat kNN index (wrong magic bytes or too short)");
  }
  KnnFileHeader header;
  std::memcpy(&header, mapping->at(0), sizeof header);
  if (header.header_crc != header_crc(header)) {
    refuse_index_file(path, "kNN index header is corrupted (checksum mismatch)");
  }
  if (header.version != kKnnIndexVersion) {
    refuse_index_file(path, "kNN index format version " + std::to_string(header.version) +
                                " (this autocat reads version " + std::to_string(kKnnIndexVersion) +
                                ")");
  }
  if (header.byte_order != kByteOrderMark) {
    refuse_index_file(path, "kNN index written on a machine of another byte order");
  }
  if (header.num_terms != idf.size() || header.num_docs != num_docs ||
      header.num_categories != num_categories) {
    refuse_index_file(path, "kNN index belongs to another model (" +
                                std::to_string(header.num_docs) + " documents, " +
                                std::to_string(header.num_terms) + " terms)");
  }
  const KnnFileLayout layout(header);
  if (layout.end != mapping->length) {
    refuse_index_file(path, "kNN index is truncated or has trailing bytes (" +
                                std::to_string(mapping->length) + " bytes, expected " +
                                std::to_string(layout.end) + ")");
  }
  const uint64_t terms = header.num_terms;
  std::shared_ptr<KnnIndex> index(new KnnIndex());
  index->num_docs_ = header.num_docs;
  index->num_categories_ = header.num_categories;
  index->num_postings_ = header.num_postings;
  index->num_doc_categories_ = header.num_doc_categories;
  index->postings_sorted_ = header.postings_sorted == 1;
  // The per-term arrays are small and copied; the file's idf must be the
  // model's, bit for bit.
  const auto copy = [&](auto* out, uint64_t offset) {
    using T = typename std::remove_reference_t<decltype(*out)>::value_type;
    out->resize(terms);
    std::memcpy(out->data(), mapping->at(offset), terms * sizeof(T));
  };
  copy(&index->idf_, layout.idf);
  copy(&index->df_, layout.df);
  copy(&index->max_weight_, layout.max_weight);
  if (std::memcmp(index->idf_.data(), idf.data(), terms * sizeof(float)) != 0) {
    refuse_index_file(path, "kNN index was written for other idf values (another model)");
  }
  index->postings_start_ = reinterpret_cast<const uint64_t*>(mapping->at(layout.postings_start));
  index->posting_doc_ = reinterpret_cast<const uint32_t*>(mapping->at(layout.posting_doc));
  index->posting_weight_ = reinterpret_cast<const float*>(mapping->at(layout.posting_weight));
  index->doc_category_start_ =
      reinterpret_cast<const uint32_t*>(mapping->at(layout.doc_category_start));
  index->doc_category_ = reinterpret_cast<const uint32_t*>(mapping->at(layout.doc_category));
  // Offsets are checked now (one pass over per-term and per-document
  // arrays); document numbers inside the postings, term by term as
  // searches reach them (verify_term), so opening reads little.
  const uint64_t* start = index->postings_start_;
  bool offsets_ok = start[0] == 0 && start[terms] == header.num_postings;
  for (uint64_t t = 0; offsets_ok && t < terms; ++t) offsets_ok = start[t] <= start[t + 1];
  const uint32_t* category_start = index->doc_category_start_;
  offsets_ok = offsets_ok && category_start[0] == 0 &&
               category_start[header.num_docs] == header.num_doc_categories;
  for (uint64_t d = 0; offsets_ok && d < header.num_docs; ++d) {
    offsets_ok = category_start[d] <= category_start[d + 1];
  }
  if (!offsets_ok) refuse_index_file(path, "kNN index is damaged (offsets out of order)");
  const uint32_t* categories = index->doc_category_;
  if (std::any_of(categories, categories + header.num_doc_categories,
                  [&](uint32_t c) { return c >= header.num_categories; })) {
    refuse_index_file(path, "kNN index is damaged (a category number out of range)");
  }
  index->term_verified_.reset(new std::atomic<bool>[terms]);
  for (uint64_t t = 0; t < terms; ++t) index->term_verified_[t].store(false);
  index->mapping_ = std::move(mapping);
  index->path_ = path;
  index->choose_dense_terms();
  return index;
}

bool KnnIndex::mapped() const { return mapping_ != nullptr && mapping_->copy == nullptr; }

KnnIndex::TermPostings KnnIndex::postings(uint32_t t) const {
  if (term_verified_ != nullptr) verify_term(t);
  const uint64_t first = postings_start_[t];
  return {posting_doc_ + first, posting_weight_ + first, size_t(postings_start_[t + 1] - first)};
}

void KnnIndex::check_file_unchanged() const {
  if (mapping_ == nullptr || mapping_->fd < 0) return;
  struct stat status {};
  if (fstat(mapping_->fd, &status) != 0) return;  // cannot tell: carry on
  if (uint64_t(status.st_size) == mapping_->length &&
      status.st_mtim.tv_sec == mapping_->modified.tv_sec &&
      status.st_mtim.tv_nsec == mapping_->modified.tv_nsec) {
    return;
  }
  throw ModelFormatError(path_ + ": " + kKnnIndexFileName + " changed under a running process (" +
                         std::to_string(status.st_size) + " bytes now, " +
                         std::to_string(mapping_->length) +
                         " when opened, or rewritten in place): install generations by rename, "
                         "never by copying over the files; reopen the model (or set "
                         "AUTOCAT_KNN_INDEX=read to copy the index into memory)");
}

void KnnIndex::verify_term(uint32_t t) const {
  if (term_verified_[t].load(std::memory_order_acquire)) return;
  const uint32_t* doc = posting_doc_ + postings_start_[t];
  const uint32_t* end = posting_doc_ + postings_start_[t + 1];
  // Racing threads may check the same term twice: harmless.
  if (std::any_of(doc, end, [&](uint32_t d) { return d >= num_docs_; })) {
    refuse_index_file(path_, "kNN index is damaged (a document number out of range)");
  }
  term_verified_[t].store(true, std::memory_order_release);
}

void KnnIndex::use_owned_arrays() {
  num_postings_ = owned_posting_doc_.size();
  num_doc_categories_ = owned_doc_category_.size();
  postings_start_ = owned_postings_start_.data();
  posting_doc_ = owned_posting_doc_.data();
  posting_weight_ = owned_posting_weight_.data();
  doc_category_start_ = owned_doc_category_start_.data();
  doc_category_ = owned_doc_category_.data();
}

void KnnIndex::choose_dense_terms() {
  // A dense column costs 4 bytes per document, a posting 8. Lists covering
  // at least a quarter of the documents are added faster as columns (on 20
  // Newsgroups they hold over half of a query's postings); the columns
  // together may take at most a quarter of the postings' bytes, longest
  // lists first.
  const uint64_t min_length = std::max<uint64_t>(num_docs_ / 4, 1);
  const uint64_t column_bytes = uint64_t(num_docs_) * sizeof(float);
  const uint64_t budget = num_postings_ * (sizeof(uint32_t) + sizeof(float)) / 4;
  std::vector<std::pair<uint64_t, uint32_t>> long_lists;  // (length, term)
  for (uint32_t t = 0; t < idf_.size(); ++t) {
    const uint64_t length = postings_start_[t + 1] - postings_start_[t];
    if (length >= min_length) long_lists.emplace_back(length, t);
  }
  std::sort(long_lists.begin(), long_lists.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  const size_t count =
      column_bytes == 0 ? 0 : std::min<size_t>(long_lists.size(), budget / column_bytes);
  dense_slot_.clear();
  for (size_t i = 0; i < count; ++i) dense_slot_.emplace(long_lists[i].second, uint32_t(i));
  min_dense_postings_ = count == 0 ? UINT64_MAX : long_lists[count - 1].first;
  dense_once_.reset(new std::once_flag[count]);
  dense_columns_.reset(new std::unique_ptr<float[]>[count]);
}

const float* KnnIndex::dense_column(uint32_t t) const {
  const uint64_t begin = postings_start_[t];
  const uint64_t length = postings_start_[t + 1] - begin;
  if (length < min_dense_postings_) return nullptr;
  const auto found = dense_slot_.find(t);
  if (found == dense_slot_.end()) return nullptr;
  const uint32_t slot = found->second;
  std::call_once(dense_once_[slot], [&] {
    std::unique_ptr<float[]> column(new float[num_docs_]());
    for (uint64_t p = begin; p < begin + length; ++p) {
      column[posting_doc_[p]] = posting_weight_[p];
    }
    dense_columns_[slot] = std::move(column);
    dense_bytes_ += uint64_t(num_docs_) * sizeof(float);
  });
  return dense_columns_[slot].get();
}

size_t KnnIndex::memory_bytes() const {
  return owned_posting_doc_.capacity() * sizeof(uint32_t) +
         owned_posting_weight_.capacity() * sizeof(float) +
         owned_postings_start_.capacity() * sizeof(uint64_t) + idf_.capacity() * sizeof(float) +
         df_.capacity() * sizeof(uint32_t) +
         owned_doc_category_start_.capacity() * sizeof(uint32_t) +
         owned_doc_category_.capacity() * sizeof(uint32_t) +
         max_weight_.capacity() * sizeof(float) + dense_bytes_.load();
}

namespace {

// Where the postings of a KnnIndex are, for the search functions below.
struct PostingsView {
  const uint64_t* start;
  const uint32_t* doc;
  const float* weight;
  uint32_t num_docs;
};

// acc[doc[i]] += q * weight[i] for every posting, unrolled: four
// independent updates per step.
inline void accumulate(float* acc, const uint32_t* doc, const float* weight, size_t n, float q) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float w0 = q * weight[i], w1 = q * weight[i + 1], w2 = q * weight[i + 2],
                w3 = q * weight[i + 3];
    acc[doc[i]] += w0;
    acc[doc[i + 1]] += w1;
    acc[doc[i + 2]] += w2;
    acc[doc[i + 3]] += w3;
  }
  for (; i < n; ++i) acc[doc[i]] += q * weight[i];
}

// acc[d] += q * column[d] for every document. A term in a large share of
// the documents is cheaper as a dense column (vector multiply-adds, no
// scattered writes) than as postings. Documents without the term hold 0 in
// the column and add exactly zero, and each addition is the same float
// operation as in accumulate(), so similarities stay bit-identical.
inline void accumulate_dense(float* acc, const float* column, size_t n, float q) {
  size_t i = 0;
#if defined(__SSE2__)
  const __m128 qv = _mm_set1_ps(q);
  for (; i + 8 <= n; i += 8) {
    const __m128 a0 = _mm_add_ps(_mm_loadu_ps(acc + i), _mm_mul_ps(qv, _mm_loadu_ps(column + i)));
    const __m128 a1 =
        _mm_add_ps(_mm_loadu_ps(acc + i + 4), _mm_mul_ps(qv, _mm_loadu_ps(column + i + 4)));
    _mm_storeu_ps(acc + i, a0);
    _mm_storeu_ps(acc + i + 4, a1);
  }
#endif
  for (; i < n; ++i) acc[i] += q * column[i];
}

// The `keep` best documents of a dense accumulator (similarity > 0; ties by
// lower doc), most similar first; zeroes the accumulator. Rather than
// offering every document to a heap (at large k, thousands of heap
// insertions per query), a threshold is guessed from every 8th document,
// all documents at or above it are collected in one branch-free pass, and
// the best `keep` of those are selected. If fewer than `keep` reach the
// guess, every document above zero is collected instead, so the result is
// exactly the heap's.
constexpr uint32_t kSelectionStride = 8;

// Allocates what select_top_k needs, before the accumulator is written:
// nothing may throw while it holds non-zero entries.
void reserve_selection(uint32_t num_docs, Scratch& scratch) {
  scratch.selection.reserve(num_docs / kSelectionStride + 1);
  scratch.heap.reserve(size_t(num_docs) + 1);
}

// REQUIRES: reserve_selection(num_docs, scratch) before acc was written.
std::vector<Neighbour> select_top_k(float* acc, uint32_t num_docs, size_t keep, Scratch& scratch) {
  constexpr uint32_t kStride = kSelectionStride;
  std::vector<float>& sample = scratch.selection;
  sample.clear();
  for (uint32_t d = 0; d < num_docs; d += kStride) {
    if (acc[d] > 0.0f) sample.push_back(acc[d]);
  }
  // About keep / kStride sampled documents lie at or above the k-th
  // similarity; asking for half as many again leaves a margin.
  const size_t rank = keep / kStride + keep / (2 * kStride) + 8;
  float threshold = std::numeric_limits<float>::denorm_min();
  if (rank <= sample.size()) {
    std::nth_element(sample.begin(), sample.begin() + std::ptrdiff_t(rank - 1), sample.end(),
                     std::greater<float>());
    threshold = std::max(threshold, sample[rank - 1]);
  }
  std::vector<Neighbour>& collected = scratch.heap;
  collected.resize(size_t(num_docs) + 1);  // within the reserved capacity
  const auto collect = [&](float at_least) {
    Neighbour* const out = collected.data();
    size_t n = 0;
    for (uint32_t d = 0; d < num_docs; ++d) {
      out[n] = {d, acc[d]};
      n += acc[d] >= at_least;
    }
    return n;
  };
  size_t num_collected = collect(threshold);
  if (num_collected < keep && threshold > std::numeric_limits<float>::denorm_min()) {
    num_collected = collect(std::numeric_limits<float>::denorm_min());
  }
  std::fill(acc, acc + num_docs, 0.0f);
  const auto first = collected.begin();
  const auto last = first + std::ptrdiff_t(num_collected);
  const auto order = [](const Neighbour& a, const Neighbour& b) { return better(a, b); };
  const auto cut = num_collected > keep ? first + std::ptrdiff_t(keep) : last;
  if (cut != last) std::nth_element(first, cut, last, order);
  std::sort(first, cut, order);
  return std::vector<Neighbour>(first, cut);
}

// Walks every posting of every query term: the reference search.
std::vector<Neighbour> exhaustive_top_k(const PostingsView& postings,
                                        const std::vector<QueryTerm>& terms,
                                        uint64_t total_postings, size_t keep, Scratch& scratch,
                                        KnnSearchStats* stats) {
  if (stats != nullptr) {
    stats->terms_walked = uint32_t(terms.size());
    stats->postings_walked = total_postings;
  }
  const uint32_t num_docs = postings.num_docs;
  // Short postings walks record the documents they touch; long ones (the
  // usual case) are cheaper to follow with one scan over all documents.
  const bool track = total_postings < num_docs / 2;
  if (track && scratch.touched.size() < total_postings) scratch.touched.resize(total_postings);
  if (track) {
    scratch.heap.reserve(keep);
  } else {
    reserve_selection(num_docs, scratch);
  }

  float* const acc = scratch.accumulator.data();
  uint32_t* const touched = scratch.touched.data();
  size_t num_touched = 0;
  for (size_t t = 0; t < terms.size(); ++t) {
    const QueryTerm& term = terms[t];
    const uint64_t begin = postings.start[term.term];
    const uint64_t end = postings.start[term.term + 1];
    const uint32_t* const doc = postings.doc + begin;
    const float* const weight = postings.weight + begin;
    const size_t n = size_t(end - begin);
    const float q = static_cast<float>(term.weight);
    if (track) {
      for (size_t i = 0; i < n; ++i) {
        const uint32_t d = doc[i];
        touched[num_touched] = d;
        num_touched += acc[d] == 0.0f;
        acc[d] += q * weight[i];
      }
    } else if (scratch.columns[t] != nullptr) {
      accumulate_dense(acc, scratch.columns[t], num_docs, q);
    } else {
      accumulate(acc, doc, weight, n, q);
    }
  }

  // Select the top k and restore the all-zero accumulator. A document
  // recorded twice (only if an addition left it at zero) is read as zero
  // the second time and skipped.
  if (track) {
    TopK top(&scratch.heap, keep);
    for (size_t i = 0; i < num_touched; ++i) {
      const uint32_t d = touched[i];
      top.offer(d, acc[d]);
      acc[d] = 0.0f;
    }
    return top.sorted();
  }
  return select_top_k(acc, num_docs, keep, scratch);
}

// The `k`-th largest of `values` (1 <= k <= values.size()); reorders them.
float kth_largest(std::vector<float>& values, size_t k) {
  std::nth_element(values.begin(), values.begin() + std::ptrdiff_t(k - 1), values.end(),
                   std::greater<float>());
  return values[k - 1];
}

// The first position in doc[from, end) holding a document >= target
// (`end` if none), found in doubling steps from `from`: candidates are few
// and far apart in a long list.
size_t gallop(const uint32_t* doc, size_t from, size_t end, uint32_t target) {
  size_t low = from, high = from, step = 1;
  while (high < end && doc[high] < target) {
    low = high + 1;
    high += step;
    step *= 2;
  }
  return size_t(std::lower_bound(doc + low, doc + std::min(high, end), target) - doc);
}

// Max-score search (Turtle & Flood 1995), term at a time. Terms come in
// decreasing order of their upper bound (query weight times the largest
// posting weight). Once the bounds of the terms not yet walked add up to
// less than the k-th best partial similarity, no document they alone
// contain can enter the top k: their long lists (common terms, low bounds)
// are only looked up for the documents already accumulated that can still
// reach it.
//
// Each document's similarity is added up in the same order as in
// exhaustive_top_k, so it is the same float. Partial sums of non-negative
// terms never decrease, so the k-th best partial sum is a lower bound of the
// k-th similarity; upper bounds are widened by the float rounding a sum of
// the terms can add, so pruning never drops a document that could tie.
std::vector<Neighbour> max_score_top_k(const PostingsView& postings,
                                       const std::vector<QueryTerm>& terms, size_t keep,
                                       Scratch& scratch, KnnSearchStats* stats) {
  const uint32_t num_docs = postings.num_docs;
  const size_t num_terms = terms.size();
  // remaining[i]: the sum of the bounds of terms i, i + 1, ...
  std::vector<double>& remaining = scratch.remaining_bound;
  remaining.assign(num_terms + 1, 0.0);
  for (size_t i = num_terms; i-- > 0;) remaining[i] = remaining[i + 1] + terms[i].bound;
  // Each float product and each addition rounds by at most 2^-24 relative;
  // twice that per term is a safe margin.
  const double slack = 1.0 + double(num_terms + 2) * std::ldexp(1.0, -23);
  // The least float above every similarity the terms from i on can add up
  // to for a document none of the earlier terms contain.
  const auto new_document_limit = [&](size_t i) {
    const float limit = static_cast<float>(remaining[i] * slack);
    return double(limit) >= remaining[i] * slack
               ? limit
               : std::nextafter(limit, std::numeric_limits<float>::infinity());
  };

  // A float at or below every partial similarity s with (s + rest) * slack
  // >= threshold, and above zero: the documents at or above it may still
  // reach the threshold.
  const auto candidate_cutoff = [&](float threshold, double rest) {
    const double exact = double(threshold) / slack - rest;
    float cutoff = static_cast<float>(exact);
    if (double(cutoff) > exact) cutoff = std::nextafter(cutoff, 0.0f);
    return std::max(cutoff, std::numeric_limits<float>::denorm_min());
  };

  // Everything is allocated before the accumulator is written, so that
  // nothing can throw while it holds non-zero entries.
  std::vector<float>& selection = scratch.selection;
  std::vector<Candidate>& candidates = scratch.candidates;
  selection.reserve(size_t(num_docs) + 1);
  candidates.reserve(num_docs);
  reserve_selection(num_docs, scratch);

  // remaining_postings[i]: the postings of terms i, i + 1, ...
  std::vector<uint64_t>& remaining_postings = scratch.remaining_postings;
  remaining_postings.assign(num_terms + 1, 0);
  for (size_t i = num_terms; i-- > 0;) {
    remaining_postings[i] = remaining_postings[i + 1] + postings.start[terms[i].term + 1] -
                            postings.start[terms[i].term];
  }

  float* const acc = scratch.accumulator.data();
  // The k-th best partial similarity once known: a lower bound of the k-th
  // similarity.
  float threshold = 0.0f;
  double bound_at_last_check = std::numeric_limits<double>::infinity();
  // Each check costs passes over the accumulator.
  constexpr int kMaxChecks = 3;
  int num_checks = 0;
  size_t first_skipped = num_terms;
  for (size_t i = 0; i < num_terms; ++i) {
    const QueryTerm& term = terms[i];
    const uint64_t begin = postings.start[term.term];
    const size_t n = size_t(postings.start[term.term + 1] - begin);
    // Before a long list: are there k documents that no document first met
    // from here on can beat, and do the candidates' look-ups (about
    // kLookupCost postings each) cost less than the postings left? A check
    // costs passes over the accumulator: at most kMaxChecks, and again only
    // once the bounds have dropped by a fifth.
    constexpr uint64_t kLookupCost = 16;
    if (i > 0 && n * 16 >= num_docs && remaining[i] < 0.8 * bound_at_last_check &&
        num_checks < kMaxChecks && remaining_postings[i] >= kLookupCost * keep * (num_terms - i)) {
      const float limit = new_document_limit(i);
      uint32_t above = 0;
      for (uint32_t d = 0; d < num_docs; ++d) above += acc[d] > limit;
      if (above >= keep) {
        ++num_checks;
        bound_at_last_check = remaining[i];
        // Branch-free selection writes one slot past the last one kept.
        selection.resize(size_t(above) + 1);
        float* const selected = selection.data();
        uint32_t num_selected = 0;
        for (uint32_t d = 0; d < num_docs; ++d) {
          selected[num_selected] = acc[d];
          num_selected += acc[d] > limit;
        }
        selection.resize(above);
        threshold = kth_largest(selection, keep);
        const float cutoff = candidate_cutoff(threshold, remaining[i]);
        uint32_t num_candidates = 0;
        for (uint32_t d = 0; d < num_docs; ++d) num_candidates += acc[d] >= cutoff;
        if (kLookupCost * num_candidates * (num_terms - i) < remaining_postings[i]) {
          first_skipped = i;
          break;
        }
      }
    }
    if (stats != nullptr) {
      ++stats->terms_walked;
      stats->postings_walked += n;
    }
    if (scratch.columns[i] != nullptr) {
      accumulate_dense(acc, scratch.columns[i], num_docs, static_cast<float>(term.weight));
    } else {
      accumulate(acc, postings.doc + begin, postings.weight + begin, n,
                 static_cast<float>(term.weight));
    }
  }

  if (first_skipped == num_terms) return select_top_k(acc, num_docs, keep, scratch);

  // The documents that the terms left can still lift to the threshold, in
  // document order.
  candidates.clear();
  const float cutoff = candidate_cutoff(threshold, remaining[first_skipped]);
  for (uint32_t d = 0; d < num_docs; ++d) {
    if (acc[d] >= cutoff) candidates.push_back({d, acc[d]});
  }
  std::fill(acc, acc + num_docs, 0.0f);
  if (stats != nullptr) stats->candidates = uint32_t(candidates.size());

  for (size_t i = first_skipped; i < num_terms; ++i) {
    const QueryTerm& term = terms[i];
    const uint64_t begin = postings.start[term.term];
    const size_t n = size_t(postings.start[term.term + 1] - begin);
    const uint32_t* const doc = postings.doc + begin;
    const float* const weight = postings.weight + begin;
    const float q = static_cast<float>(term.weight);
    const size_t num_candidates = candidates.size();
    if (const float* column = scratch.columns[i]) {
      // Documents without the term add exactly zero.
      for (Candidate& candidate : candidates) candidate.similarity += q * column[candidate.doc];
    } else if (n < num_candidates) {
      // A short list: find each of its documents among the candidates.
      size_t position = 0;
      for (size_t j = 0; j < n && position < num_candidates; ++j) {
        size_t low = position, high = position, step = 1;
        while (high < num_candidates && candidates[high].doc < doc[j]) {
          low = high + 1;
          high += step;
          step *= 2;
        }
        position = size_t(
            std::lower_bound(candidates.begin() + std::ptrdiff_t(low),
                             candidates.begin() + std::ptrdiff_t(std::min(high, num_candidates)),
                             doc[j], [](const Candidate& c, uint32_t d) { return c.doc < d; }) -
            candidates.begin());
        if (position < num_candidates && candidates[position].doc == doc[j]) {
          candidates[position].similarity += q * weight[j];
        }
      }
      continue;
    } else {
      size_t position = 0;
      const bool sparse = num_candidates * 8 < n;
      for (Candidate& candidate : candidates) {
        if (sparse) {
          position = gallop(doc, position, n, candidate.doc);
        } else {
          while (position < n && doc[position] < candidate.doc) ++position;
        }
        if (position == n) break;
        if (doc[position] == candidate.doc) candidate.similarity += q * weight[position];
      }
    }
    // Drop the candidates that the terms left can no longer lift to the
    // (raised) threshold (after long lists only: it costs a pass).
    if (candidates.size() > keep && i + 1 < num_terms) {
      selection.resize(candidates.size());
      for (size_t j = 0; j < candidates.size(); ++j) selection[j] = candidates[j].similarity;
      threshold = std::max(threshold, kth_largest(selection, keep));
      const double rest = remaining[i + 1];
      candidates.erase(std::remove_if(candidates.begin(), candidates.end(),
                                      [&](const Candidate& c) {
                                        return (double(c.similarity) + rest) * slack < threshold;
                                      }),
                       candidates.end());
    }
  }
  TopK top(&scratch.heap, keep);
  for (const Candidate& candidate : candidates) top.offer(candidate.doc, candidate.similarity);
  return top.sorted();
}

}  // namespace

std::vector<KnnIndex::Neighbour> KnnIndex::neighbours(const DocumentTerms& query, int k,
                                                      int max_query_terms, double max_df_ratio,
                                                      KnnSearch search,
                                                      KnnSearchStats* stats) const {
  if (stats != nullptr) *stats = KnnSearchStats();
  if (k <= 0 || num_docs_ == 0) return {};
  check_file_unchanged();
  Scratch& scratch = thread_scratch();

  // Query weights, normalized over every known term with idf > 0 (also in
  // approximate mode, so that similarities stay comparable cosines).
  std::vector<QueryTerm>& terms = scratch.query;
  terms.clear();
  double norm2 = 0.0;
  for (const TermCount& tc : query.terms) {
    if (tc.term >= idf_.size() || tc.count == 0) continue;
    const float idf = idf_[tc.term];
    if (!(idf > 0.0f)) continue;
    const double w = (tc.count == 1 ? 1.0 : sublinear_tf(tc.count)) * idf;
    norm2 += w * w;
    terms.push_back({tc.term, w, 0.0});
  }
  if (terms.empty()) return {};
  const double inverse_norm = 1.0 / std::sqrt(norm2);
  for (QueryTerm& term : terms) term.weight *= inverse_norm;

  // Approximate mode: drop very common terms first, then keep the heaviest.
  if (max_df_ratio < 1.0) {
    const double max_df = max_df_ratio * num_docs_;
    terms.erase(std::remove_if(terms.begin(), terms.end(),
                               [&](const QueryTerm& term) { return df_[term.term] > max_df; }),
                terms.end());
  }
  if (max_query_terms > 0 && terms.size() > size_t(max_query_terms)) {
    auto heavier = [](const QueryTerm& a, const QueryTerm& b) {
      return a.weight > b.weight || (a.weight == b.weight && a.term < b.term);
    };
    std::nth_element(terms.begin(), terms.begin() + max_query_terms, terms.end(), heavier);
    terms.resize(size_t(max_query_terms));
  }

  // One accumulation order for both searches: decreasing upper bound, then
  // term id. (The bound is exact in double: a product of two floats.)
  uint64_t total_postings = 0;
  for (QueryTerm& term : terms) {
    if (term_verified_ != nullptr) verify_term(term.term);
    term.bound = double(static_cast<float>(term.weight)) * double(max_weight_[term.term]);
    total_postings += postings_start_[term.term + 1] - postings_start_[term.term];
  }
  if (total_postings == 0) return {};
  if (stats != nullptr) stats->query_terms = uint32_t(terms.size());
  std::sort(terms.begin(), terms.end(), [](const QueryTerm& a, const QueryTerm& b) {
    return a.bound > b.bound || (a.bound == b.bound && a.term < b.term);
  });

  // Allocate the accumulator before touching it, so that nothing can throw
  // while it holds non-zero entries (the searches allocate before writing).
  if (scratch.accumulator.size() < num_docs_) scratch.accumulator.resize(num_docs_, 0.0f);
  const size_t keep = std::min<size_t>(size_t(k), num_docs_);
  const PostingsView postings{postings_start_, posting_doc_, posting_weight_, num_docs_};
  // Walks shorter than half the corpus are cheap either way, and the
  // max-score search works on a dense accumulator.
  std::vector<const float*>& columns = scratch.columns;
  columns.assign(terms.size(), nullptr);
  if (search != KnnSearch::kPostingWalk && total_postings >= num_docs_ / 2) {
    for (size_t i = 0; i < terms.size(); ++i) columns[i] = dense_column(terms[i].term);
    if (stats != nullptr) {
      stats->dense_terms =
          uint32_t(terms.size() - std::count(columns.begin(), columns.end(), nullptr));
    }
  }
  if (search == KnnSearch::kMaxScore && postings_sorted_ && total_postings >= num_docs_ / 2) {
    return max_score_top_k(postings, terms, keep, scratch, stats);
  }
  return exhaustive_top_k(postings, terms, total_postings, keep, scratch, stats);
}

namespace {

// Each neighbour votes for its categories; scores are the votes' shares.
template <typename CategoriesOf>
void vote(const std::vector<Neighbour>& neighbours, int similarity_power, uint32_t num_categories,
          const CategoriesOf& categories_of, std::vector<double>* scores) {
  scores->assign(num_categories, 0.0);
  double total = 0.0;
  for (const Neighbour& neighbour : neighbours) {
    const double vote = knn_vote_weight(neighbour.similarity, similarity_power);
    total += vote;
    for (uint32_t category : categories_of(neighbour.doc)) {
      if (category < num_categories) (*scores)[category] += vote;
    }
  }
  if (!(total > 0.0)) return;
  for (double& score : *scores) score = std::min(1.0, score / total);
}

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
    const double w = sublinear_tf(tc.count) * idf[tc.term];
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
                                                int max_query_terms, double max_df_ratio) const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  return neighbours_locked(query, k, max_query_terms, max_df_ratio);
}

std::vector<Neighbour> KnnLiveIndex::neighbours_locked(const DocumentTerms& query, int k,
                                                       int max_query_terms,
                                                       double max_df_ratio) const {
  if (k <= 0) return {};
  const uint32_t num_base = base_->num_docs();
  // The base, asked for enough neighbours to make up for its tombstones.
  const int base_k = int(std::min<uint64_t>(uint64_t(k) + num_base_forgotten_, num_base));
  const std::vector<Neighbour> from_base =
      base_->neighbours(query, base_k, max_query_terms, max_df_ratio);
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
    const double w = (tc.count == 1 ? 1.0 : sublinear_tf(tc.count)) * idf[tc.term];
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
    const auto q = static_cast<float>((tc.count == 1 ? 1.0 : sublinear_tf(tc.count)) *
                                      idf[tc.term] * inverse_norm);
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
                         int similarity_power, std::vector<double>* scores) const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  const std::vector<Neighbour> neighbours =
      neighbours_locked(doc, k, options.knn_max_query_terms, options.knn_max_df_ratio);
  const uint32_t num_base = base_->num_docs();
  vote(
      neighbours, similarity_power, base_->num_categories(),
      [&](uint32_t d) {
        if (d < num_base) return base_->doc_categories(d);
        const std::vector<uint32_t>& labels = learned_[d - num_base].categories;
        return KnnIndex::CategoryRange{labels.data(), labels.data() + labels.size()};
      },
      scores);
}

namespace {

// Throws unless a kNN classifier can be built with an index (`has_index`)
// and this similarity power.
void check_knn_classifier(bool has_index, int similarity_power) {
  if (!has_index) throw InvalidArgumentError("kNN classifier: no index");
  if (similarity_power != 1 && similarity_power != 2) {
    throw InvalidArgumentError("kNN classifier: similarity power must be 1 or 2");
  }
}

}  // namespace

KnnClassifier::KnnClassifier(std::shared_ptr<const KnnIndex> index, int similarity_power,
                             int default_k)
    : index_(std::move(index)), similarity_power_(similarity_power), default_k_(default_k) {
  check_knn_classifier(index_ != nullptr, similarity_power_);
}

KnnClassifier::KnnClassifier(std::shared_ptr<const KnnLiveIndex> live, int similarity_power,
                             int default_k)
    : live_(std::move(live)), similarity_power_(similarity_power), default_k_(default_k) {
  check_knn_classifier(live_ != nullptr, similarity_power_);
}

void KnnClassifier::score(const DocumentTerms& doc, const ClassifyOptions& options,
                          std::vector<double>* scores) const {
  const int k = options.k > 0 ? options.k : default_k_;
  if (live_) {
    live_->score(doc, k, options, similarity_power_, scores);
    return;
  }
  const std::vector<KnnIndex::Neighbour> neighbours =
      index_->neighbours(doc, k, options.knn_max_query_terms, options.knn_max_df_ratio);
  vote(
      neighbours, similarity_power_, index_->num_categories(),
      [&](uint32_t d) { return index_->doc_categories(d); }, scores);
}

}  // namespace autocat::internal
