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
    // The text is not needed any more; drop it so a chunk in flight holds
    // only its terms.
    std::string().swap(chunk->documents[i].text);
  }
}

// Documents per chunk: large enough that handing a chunk between threads
// costs nothing, small enough that the two chunks in flight stay small.
constexpr size_t kTrainingChunkDocuments = 256;

}  // namespace

// Short texts take little memory: 64 MB is a million tweets.
constexpr size_t kMaxKeptTextBytes = size_t{64} << 20;

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

uint64_t add_documents(const std::vector<std::string>& inputs, const ReadOptions& read_options,
                       const Analyzer& analyzer, bool keep_unlabelled,
                       TrainingCollectionWriter* writer, TrainReport* report,
                       const WarningCallback& on_warning, PhaseTracker* phases, KeptTexts* kept) {
  uint64_t labelled = 0;
  uint64_t read = 0;
  TrainingChunk chunk;
  std::future<TrainingChunk> pending;
  auto write_pending = [&]() {
    if (!pending.valid()) return;
    TrainingChunk analyzed = pending.get();
    for (size_t i = 0; i < analyzed.documents.size(); ++i) {
      const InputDocument& doc = analyzed.documents[i];
      if (analyzed.num_tokens[i] == 0) {
        ++report->skipped_empty;
        if (on_warning) on_warning(doc.source + ": skipped: no terms after analysis");
        continue;
      }
      writer->add(doc.id, std::move(analyzed.terms[i]), doc.labels);
      if (kept) {
        ++kept->written;
        kept->tokens += analyzed.num_tokens[i];
      }
      ++report->added;
      if (!doc.labels.empty()) ++labelled;
    }
  };
  auto submit_chunk = [&]() {
    if (chunk.documents.empty()) return;
    auto next = std::async(std::launch::async, [&analyzer, taken = std::move(chunk)]() mutable {
      analyze_chunk(analyzer, &taken);
      return std::move(taken);
    });
    chunk = TrainingChunk();
    write_pending();
    pending = std::move(next);
  };
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
        chunk.documents.push_back(std::move(doc));
        if (chunk.documents.size() >= kTrainingChunkDocuments) submit_chunk();
      },
      on_warning);
  submit_chunk();
  write_pending();
  writer->commit();
  return labelled;
}

}  // namespace autocat::internal
