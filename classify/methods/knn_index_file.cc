// Writing, mapping and checking the kNN index file (format in
// knn_index_file.h).
#include "classify/methods/knn_index_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "autocat/error.h"
#include "classify/io/atomic_file.h"
#include "classify/io/filenames.h"
#include "classify/methods/knn_index.h"

namespace autocat::internal {

namespace {

uint32_t header_crc(const KnnFileHeader& header) {
  return static_cast<uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(&header), offsetof(KnnFileHeader, header_crc)));
}

KnnTwoStepHeader two_step_header(uint32_t prune_length, uint64_t num_pruned) {
  KnnTwoStepHeader section{};
  std::memcpy(section.magic, kKnnTwoStepMagic, sizeof section.magic);
  section.prune_length = prune_length;
  section.num_pruned = num_pruned;
  section.header_crc = static_cast<uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(&section), offsetof(KnnTwoStepHeader, header_crc)));
  return section;
}

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

namespace {

// Pages of a mapped index file past a truncated end raise SIGBUS when a
// search touches them. A handler, installed with the first mapping, puts a
// page of zeros in place of such a page of a registered mapping and marks
// the mapping damaged; the search reads zeros (document and category 0,
// weight 0: in range, as the offset arrays are private copies) and its
// result is then refused with an error naming the file. Faults outside
// every mapping go to the handler installed before (or the default action).
struct GuardedRange {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<bool> faulted{false};
};
constexpr int kGuardedRanges = 256;
GuardedRange g_guarded[kGuardedRanges];
struct sigaction g_previous_sigbus;
uintptr_t g_page_size = 4096;

void on_sigbus(int signal, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<uintptr_t>(info->si_addr);
  for (GuardedRange& range : g_guarded) {
    const uintptr_t begin = range.begin.load(std::memory_order_acquire);
    if (begin == 0 || address < begin || address >= range.end.load(std::memory_order_acquire)) {
      continue;
    }
    void* page = reinterpret_cast<void*>(address & ~(g_page_size - 1));
    if (mmap(page, g_page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
        MAP_FAILED) {
      range.faulted.store(true, std::memory_order_release);
      return;
    }
  }
  if ((g_previous_sigbus.sa_flags & SA_SIGINFO) != 0 && g_previous_sigbus.sa_sigaction != nullptr) {
    g_previous_sigbus.sa_sigaction(signal, info, context);
  } else if (g_previous_sigbus.sa_handler != SIG_DFL && g_previous_sigbus.sa_handler != SIG_IGN) {
    g_previous_sigbus.sa_handler(signal);
  } else {
    // The default action, when the fault repeats on return.
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    sigaction(SIGBUS, &default_action, nullptr);
  }
}

// Registers [address, address + length) with the SIGBUS handler; the slot,
// or -1 if every slot is taken (the mapping is then unguarded).
int guard_mapping(const void* address, size_t length) {
  static std::once_flag installed;
  std::call_once(installed, [] {
    g_page_size = uintptr_t(sysconf(_SC_PAGESIZE));
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, &g_previous_sigbus);
  });
  static std::mutex mutex;
  const std::lock_guard<std::mutex> lock(mutex);
  for (int slot = 0; slot < kGuardedRanges; ++slot) {
    if (g_guarded[slot].begin.load() != 0) continue;
    const auto begin = reinterpret_cast<uintptr_t>(address);
    g_guarded[slot].faulted.store(false);
    g_guarded[slot].end.store(begin + ((length + g_page_size - 1) & ~(g_page_size - 1)));
    g_guarded[slot].begin.store(begin, std::memory_order_release);
    return slot;
  }
  return -1;
}

}  // namespace

// The index file's bytes: mapped (shared with other processes, paged in as
// searches touch them), or read into private memory (AUTOCAT_KNN_INDEX=read).
// A mapping keeps the file open so that searches can check, with one
// fstat, that nobody truncated or rewrote it in place, and is guarded
// against SIGBUS (above) for a truncation racing a search.
struct KnnIndex::Mapping {
  void* address = MAP_FAILED;
  size_t length = 0;
  int fd = -1;                       // mapped only
  int guard = -1;                    // the mapping's slot in g_guarded, or -1
  struct timespec modified {};       // the file's mtime when opened
  std::unique_ptr<uint64_t[]> copy;  // read into memory: the bytes, 8-aligned
  ~Mapping() {
    if (guard >= 0) g_guarded[guard].begin.store(0, std::memory_order_release);
    if (address != MAP_FAILED && copy == nullptr) munmap(address, length);
    if (fd >= 0) ::close(fd);
  }
  const char* at(uint64_t offset) const { return static_cast<const char*>(address) + offset; }
  bool faulted() const {
    return guard >= 0 && g_guarded[guard].faulted.load(std::memory_order_acquire);
  }
};

void KnnIndex::MappingDeleter::operator()(Mapping* mapping) const { delete mapping; }

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

void KnnIndex::write(const std::string& path) const {
  KnnFileHeader header{};
  std::memcpy(header.magic, kKnnIndexMagic, sizeof header.magic);
  header.version = has_two_step() ? kKnnIndexVersion : kKnnIndexVersionWithoutTwoStep;
  header.byte_order = kKnnIndexByteOrderMark;
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
  KnnTwoStepHeader section{};
  if (has_two_step()) {
    section = two_step_header(prune_length_, num_pruned_);
    add(bytes_of(&section, 1));
    add(bytes_of(forward_start_, uint64_t{num_docs_} + 1));
    add(bytes_of(forward_, num_postings_));
    add(bytes_of(pruned_start_, terms + 1));
    add(bytes_of(pruned_, num_pruned_));
  }
  write_file_atomically(path, pieces, "kNN index");
}

namespace {

// The two-step section of write_knn_index: the forward index written in
// slices of documents (each slice gathered from every term's postings in
// that document range, so at most kSlice entries are held at once), then
// the pruned lists term by term. `postings_start`: the kept postings'
// offsets per term; `sorted`: every list ascends by document.
template <class WeightOf>
void write_two_step_section(const TrainingCorpus& corpus, const std::vector<float>& idf,
                            const std::vector<uint64_t>& postings_start, bool sorted,
                            const WeightOf& weight_of, uint32_t prune_length,
                            AtomicFileSink& sink) {
  static const char kZeros[8] = {};
  const auto add = [&](std::string_view array) {
    sink.append(array);
    if (sink.size() % 8 != 0) sink.append(std::string_view(kZeros, 8 - sink.size() % 8));
  };
  const uint32_t num_terms = corpus.num_terms_with_postings();
  const uint32_t num_docs = corpus.num_docs();
  const auto kept = [&](uint64_t p) { return corpus.posting_wdf[p] != 0; };
  std::vector<uint64_t> forward_start(size_t(num_docs) + 1, 0);
  for (TermId t = 0; t < num_terms; ++t) {
    if (!(idf[t] > 0.0f)) continue;
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      if (kept(p)) ++forward_start[size_t(corpus.posting_doc[p]) + 1];
    }
  }
  for (uint32_t d = 0; d < num_docs; ++d) forward_start[d + 1] += forward_start[d];
  uint64_t num_pruned = 0;
  for (TermId t = 0; t < num_terms; ++t) {
    if (postings_start[t + 1] - postings_start[t] > prune_length) num_pruned += prune_length;
  }
  const KnnTwoStepHeader section = two_step_header(prune_length, num_pruned);
  add(bytes_of(&section, 1));
  add(bytes_of(forward_start.data(), uint64_t{num_docs} + 1));

  constexpr uint64_t kSlice = uint64_t{1} << 24;  // entries (128 MB)
  std::vector<KnnForwardEntry> slice;
  std::vector<uint64_t> next;
  for (uint32_t first = 0; first < num_docs;) {
    uint32_t last = first + 1;  // at least one document per slice
    while (last < num_docs && forward_start[last + 1] - forward_start[first] <= kSlice) ++last;
    const uint64_t base = forward_start[first];
    slice.assign(forward_start[last] - base, KnnForwardEntry{0, 0.0f});
    next.assign(forward_start.begin() + first, forward_start.begin() + last);
    for (TermId t = 0; t < num_terms; ++t) {
      if (!(idf[t] > 0.0f)) continue;
      const uint64_t begin = corpus.postings_start[t], end = corpus.postings_start[t + 1];
      const uint32_t* docs = corpus.posting_doc.data();
      // Ascending lists are searched for the slice's documents; others
      // are scanned whole.
      uint64_t p =
          sorted ? uint64_t(std::lower_bound(docs + begin, docs + end, first) - docs) : begin;
      for (; p < end; ++p) {
        const uint32_t d = docs[p];
        if (d < first || d >= last) {
          if (sorted) break;
          continue;
        }
        if (!kept(p)) continue;
        slice[next[d - first]++ - base] = {t, weight_of(t, p)};
      }
    }
    sink.append(bytes_of(slice.data(), slice.size()));
    first = last;
  }

  std::vector<uint64_t> pruned_start(size_t(num_terms) + 1, 0);
  for (TermId t = 0; t < num_terms; ++t) {
    const uint64_t n = postings_start[t + 1] - postings_start[t];
    pruned_start[t + 1] = pruned_start[t] + (n > prune_length ? prune_length : 0);
  }
  add(bytes_of(pruned_start.data(), uint64_t{num_terms} + 1));
  std::vector<uint32_t> docs;
  std::vector<float> weights;
  for (TermId t = 0; t < num_terms; ++t) {
    if (postings_start[t + 1] - postings_start[t] <= prune_length) continue;
    docs.clear();
    weights.clear();
    for (uint64_t p = corpus.postings_start[t]; p < corpus.postings_start[t + 1]; ++p) {
      if (!kept(p)) continue;
      docs.push_back(corpus.posting_doc[p]);
      weights.push_back(weight_of(t, p));
    }
    const std::vector<KnnPrunedEntry> list =
        knn_pruned_list(docs.data(), weights.data(), docs.size(), prune_length);
    sink.append(bytes_of(list.data(), list.size()));
  }
}

}  // namespace

void write_knn_index(const TrainingCorpus& corpus, const std::vector<float>& idf, KnnTf tf,
                     const std::string& path, uint32_t prune_length) {
  const uint32_t num_terms = corpus.num_terms_with_postings();
  const uint32_t num_docs = corpus.num_docs();
  if (idf.size() != num_terms) {
    throw InvalidArgumentError("kNN index: " + std::to_string(idf.size()) + " idf values for " +
                               std::to_string(num_terms) + " terms");
  }
  // The same norms and weights as the KnnIndex constructor, so that the
  // bytes are the same.
  uint64_t positive = 0;
  const std::vector<double> inverse_norm = knn_inverse_document_norms(corpus, idf, tf, &positive);
  auto weight_of = [&](TermId t, uint64_t p) {
    return knn_posting_weight(corpus, idf, tf, inverse_norm, t, p);
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
  header.version = prune_length > 0 ? kKnnIndexVersion : kKnnIndexVersionWithoutTwoStep;
  header.byte_order = kKnnIndexByteOrderMark;
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
        if (prune_length > 0) {
          write_two_step_section(corpus, idf, postings_start, sorted, weight_of, prune_length,
                                 sink);
        }
      },
      "kNN index");
}

std::shared_ptr<const KnnIndex> KnnIndex::open(const std::string& path,
                                               const std::vector<float>& idf, uint32_t num_docs,
                                               uint32_t num_categories, KnnTf tf) {
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
    mapping->guard = guard_mapping(mapping->address, mapping->length);
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
  if (header.version != kKnnIndexVersion && header.version != kKnnIndexVersionWithoutTwoStep) {
    refuse_index_file(path, "kNN index format version " + std::to_string(header.version) +
                                " (this autocat reads version " + std::to_string(kKnnIndexVersion) +
                                ")");
  }
  if (header.byte_order != kKnnIndexByteOrderMark) {
    refuse_index_file(path, "kNN index written on a machine of another byte order");
  }
  if (header.num_terms != idf.size() || header.num_docs != num_docs ||
      header.num_categories != num_categories) {
    refuse_index_file(path, "kNN index belongs to another model (" +
                                std::to_string(header.num_docs) + " documents, " +
                                std::to_string(header.num_terms) + " terms)");
  }
  const KnnFileLayout layout(header);
  uint64_t end = layout.end;
  KnnTwoStepHeader section{};
  const bool two_step = header.version == kKnnIndexVersion;
  if (two_step) {
    if (mapping->length < layout.end + sizeof section) {
      refuse_index_file(path, "kNN index is truncated (its two-step section is missing)");
    }
    std::memcpy(&section, mapping->at(layout.end), sizeof section);
    if (std::memcmp(section.magic, kKnnTwoStepMagic, sizeof section.magic) != 0 ||
        section.header_crc !=
            two_step_header(section.prune_length, section.num_pruned).header_crc ||
        section.prune_length == 0) {
      refuse_index_file(path, "kNN index's two-step section is corrupted");
    }
    end = KnnTwoStepLayout(layout.end, header, section).end;
  }
  if (end != mapping->length) {
    refuse_index_file(path, "kNN index is truncated or has trailing bytes (" +
                                std::to_string(mapping->length) + " bytes, expected " +
                                std::to_string(end) + ")");
  }
  const uint64_t terms = header.num_terms;
  std::shared_ptr<KnnIndex> index(new KnnIndex());
  index->tf_ = tf;
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
  // The offsets are private copies (8 bytes a term, 4 a document): a page
  // of zeros in place of a truncated one must not make a range run
  // backwards or past the postings.
  index->owned_postings_start_.resize(terms + 1);
  std::memcpy(index->owned_postings_start_.data(), mapping->at(layout.postings_start),
              (terms + 1) * sizeof(uint64_t));
  index->owned_doc_category_start_.resize(uint64_t{header.num_docs} + 1);
  std::memcpy(index->owned_doc_category_start_.data(), mapping->at(layout.doc_category_start),
              (uint64_t{header.num_docs} + 1) * sizeof(uint32_t));
  index->postings_start_ = index->owned_postings_start_.data();
  index->posting_doc_ = reinterpret_cast<const uint32_t*>(mapping->at(layout.posting_doc));
  index->posting_weight_ = reinterpret_cast<const float*>(mapping->at(layout.posting_weight));
  index->doc_category_start_ = index->owned_doc_category_start_.data();
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
  if (two_step) {
    // Offsets again as private copies, checked now; the entries' document
    // and term numbers are checked as searches read them.
    const KnnTwoStepLayout two(layout.end, header, section);
    index->owned_forward_start_.resize(uint64_t{header.num_docs} + 1);
    std::memcpy(index->owned_forward_start_.data(), mapping->at(two.forward_start),
                (uint64_t{header.num_docs} + 1) * sizeof(uint64_t));
    index->owned_pruned_start_.resize(terms + 1);
    std::memcpy(index->owned_pruned_start_.data(), mapping->at(two.pruned_start),
                (terms + 1) * sizeof(uint64_t));
    const std::vector<uint64_t>& forward = index->owned_forward_start_;
    const std::vector<uint64_t>& pruned = index->owned_pruned_start_;
    bool ok = forward[0] == 0 && forward[header.num_docs] == header.num_postings &&
              pruned[0] == 0 && pruned[terms] == section.num_pruned;
    for (uint64_t d = 0; ok && d < header.num_docs; ++d) ok = forward[d] <= forward[d + 1];
    for (uint64_t t = 0; ok && t < terms; ++t) ok = pruned[t] <= pruned[t + 1];
    if (!ok) refuse_index_file(path, "kNN index's two-step section is damaged (offsets)");
    index->prune_length_ = section.prune_length;
    index->num_pruned_ = section.num_pruned;
    index->forward_start_ = forward.data();
    index->pruned_start_ = pruned.data();
    index->forward_ = reinterpret_cast<const KnnForwardEntry*>(mapping->at(two.forward));
    index->pruned_ = reinterpret_cast<const KnnPrunedEntry*>(mapping->at(two.pruned));
  }
  index->term_verified_.reset(new std::atomic<bool>[terms]);
  for (uint64_t t = 0; t < terms; ++t) index->term_verified_[t].store(false);
  index->mapping_.reset(mapping.release());
  index->path_ = path;
  index->choose_dense_terms();
  return index;
}

bool KnnIndex::mapped() const { return mapping_ != nullptr && mapping_->copy == nullptr; }

void KnnIndex::check_file_unchanged() const {
  if (mapping_ == nullptr || mapping_->fd < 0) return;
  struct stat status {};
  if (fstat(mapping_->fd, &status) != 0 && !mapping_->faulted()) return;  // cannot tell
  if (!mapping_->faulted() && uint64_t(status.st_size) == mapping_->length &&
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

void KnnIndex::refuse_damaged() const {
  refuse_index_file(path_.empty() ? std::string(kKnnIndexFileName) : path_,
                    "kNN index is damaged (a document or term number out of range in its "
                    "two-step section)");
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

}  // namespace autocat::internal
