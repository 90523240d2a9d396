#include "classify/train/ingest.h"

#include <future>
#include <utility>

#include "autocat/error.h"
#include "classify/io/json_text.h"

namespace autocat::internal {
namespace {

// Labels become Xapian terms and lines of the category value slot: they must
// be non-empty, free of control characters, UTF-8 (as every output and the
// Python module read them) and short enough for a term.
void check_label(const std::string& label, const std::string& source) {
  if (label.empty()) throw InvalidArgumentError(source + ": empty label");
  if (label.size() > 200) {
    throw InvalidArgumentError(source + ": label longer than 200 bytes: " + label.substr(0, 40) +
                               "...");
  }
  for (unsigned char ch : label) {
    if (ch < 0x20 || ch == 0x7f) {
      throw InvalidArgumentError(source + ": label contains a control character");
    }
  }
  if (!is_valid_utf8(label)) {
    throw InvalidArgumentError(source + ": label \"" + printable(label) + "\" is not valid UTF-8");
  }
}

// Documents read and checked, waiting to be analyzed, then their terms.
struct TrainingChunk {
  std::vector<InputDocument> documents;
  // Per document, filled by analyze_chunk: its tokens' count and their
  // terms as the collection's document will hold them (built here, off the
  // thread that writes the collection).
  std::vector<size_t> num_tokens;
  std::vector<Xapian::Document> terms;
  // The texts are kept for HeldDocuments; otherwise dropped once analyzed,
  // so a chunk in flight holds only its terms.
  bool keep_texts = false;
};

void analyze_chunk(const Analyzer& analyzer, TrainingChunk* chunk) {
  chunk->num_tokens.resize(chunk->documents.size());
  chunk->terms.resize(chunk->documents.size());
  std::vector<Token> tokens;
  for (size_t i = 0; i < chunk->documents.size(); ++i) {
    tokens.clear();
    analyzer.analyze(chunk->documents[i].text, &tokens);
    chunk->num_tokens[i] = tokens.size();
    chunk->terms[i] = text_terms_document(tokens);
    if (!chunk->keep_texts) std::string().swap(chunk->documents[i].text);
  }
}

// Documents per chunk: large enough that handing a chunk between threads
// costs nothing, small enough that the two chunks in flight stay small.
constexpr size_t kTrainingChunkDocuments = 256;

// Documents given in order are analyzed on a second thread, a chunk at a
// time, and written to the collection in the same order; with `report`,
// counted there (with `kept`, also in it). With `held` holding, they are
// held back instead, texts and all, until they stop looking like short
// texts, when the held ones are written and the rest follow.
class CollectionFeed {
 public:
  CollectionFeed(const Analyzer& analyzer, TrainingCollectionWriter* writer, TrainReport* report,
                 const WarningCallback& on_warning, KeptTexts* kept, HeldDocuments* held)
      : analyzer_(analyzer),
        writer_(writer),
        report_(report),
        on_warning_(on_warning),
        kept_(kept),
        held_(held) {}

  void add(InputDocument&& doc) {
    chunk_.documents.push_back(std::move(doc));
    if (chunk_.documents.size() >= kTrainingChunkDocuments) submit_chunk();
  }

  // Writes what is still in flight; returns the labelled documents.
  uint64_t finish() {
    submit_chunk();
    write_pending();
    return labelled_;
  }

 private:
  bool holding() const { return held_ != nullptr && held_->holding; }

  void submit_chunk() {
    if (chunk_.documents.empty()) return;
    chunk_.keep_texts = holding();
    auto next = std::async(std::launch::async, [this, taken = std::move(chunk_)]() mutable {
      analyze_chunk(analyzer_, &taken);
      return std::move(taken);
    });
    chunk_ = TrainingChunk();
    write_pending();
    pending_ = std::move(next);
  }

  void write_pending() {
    if (!pending_.valid()) return;
    TrainingChunk analyzed = pending_.get();
    for (size_t i = 0; i < analyzed.documents.size(); ++i) {
      InputDocument& doc = analyzed.documents[i];
      const size_t tokens = analyzed.num_tokens[i];
      if (tokens == 0) {
        if (report_) ++report_->skipped_empty;
        if (on_warning_) on_warning_(doc.source + ": skipped: no terms after analysis");
      } else {
        if (kept_) {
          ++kept_->written;
          kept_->tokens += tokens;
        }
        if (report_) ++report_->added;
        if (!doc.labels.empty()) ++labelled_;
      }
      if (holding() && analyzed.keep_texts) {
        // Held with or without terms: another analysis may find some.
        held_->tokens += tokens;
        held_->bytes += doc.text.size();
        held_->documents.push_back(std::move(doc));
      } else if (tokens > 0) {
        writer_->add(doc.id, std::move(analyzed.terms[i]), doc.labels);
      }
    }
    if (holding() && !held_->short_so_far()) write_held(held_, analyzer_, writer_);
  }

  const Analyzer& analyzer_;
  TrainingCollectionWriter* writer_;
  TrainReport* report_;
  const WarningCallback& on_warning_;
  KeptTexts* kept_;
  HeldDocuments* held_;
  TrainingChunk chunk_;
  std::future<TrainingChunk> pending_;
  uint64_t labelled_ = 0;
};

}  // namespace

void KeptTexts::keep(const InputDocument& doc) {
  if (!complete && !sampled) return;  // given up
  const auto size_of = [](const Text& text) {
    size_t size = text.id.size() + text.text.size();
    for (const std::string& label : text.labels) size += label.size();
    return size;
  };
  ++offered;
  if (texts.size() < max_documents) {
    texts.push_back({doc.id, doc.labels, doc.text});
    bytes += size_of(texts.back());
  } else {
    // Vitter's algorithm R: the n-th document replaces a random one with
    // probability max_documents / n (most are not copied at all).
    complete = false;
    sampled = true;
    const uint64_t slot = sampler() % offered;  // the same on every library
    if (slot >= max_documents) return;
    bytes -= size_of(texts[slot]);
    texts[slot] = {doc.id, doc.labels, doc.text};
    bytes += size_of(texts[slot]);
  }
  if (bytes > kMaxKeptTextBytes) {
    complete = false;
    sampled = false;
    std::vector<Text>().swap(texts);
  }
}

bool HeldDocuments::short_so_far() const {
  if (bytes > kMaxKeptTextBytes) return false;
  return documents.size() < kMinShortTextDocuments ||
         double(tokens) <= kShortTextMeanTokens * double(documents.size());
}

void write_held(HeldDocuments* held, const Analyzer& analyzer, TrainingCollectionWriter* writer,
                TrainReport* report, const WarningCallback& on_warning) {
  std::vector<InputDocument> documents;
  documents.swap(held->documents);
  held->holding = false;
  held->tokens = held->bytes = 0;
  CollectionFeed feed(analyzer, writer, report, on_warning, nullptr, nullptr);
  for (InputDocument& doc : documents) feed.add(std::move(doc));
  feed.finish();
}

uint64_t add_documents(const std::vector<std::string>& inputs, const ReadOptions& read_options,
                       const Analyzer& analyzer, bool keep_unlabelled,
                       TrainingCollectionWriter* writer, TrainReport* report,
                       const WarningCallback& on_warning, PhaseTracker* phases, KeptTexts* kept,
                       HeldDocuments* held) {
  uint64_t read = 0;
  CollectionFeed feed(analyzer, writer, report, on_warning, kept, held);
  read_documents(
      inputs, read_options,
      [&](InputDocument&& doc) {
        phases->advance(++read);
        // "labels": [] says "none of these categories"; no labels at all
        // says nothing, unless keep_unlabelled reads it the same way.
        if (doc.labels.empty() && !doc.labels_given && !keep_unlabelled) {
          ++report->skipped_unlabelled;
          return;
        }
        for (const std::string& label : doc.labels) check_label(label, doc.source);
        if (kept) kept->keep(doc);
        feed.add(std::move(doc));
      },
      on_warning);
  const uint64_t labelled = feed.finish();
  writer->commit();
  return labelled;
}

}  // namespace autocat::internal
