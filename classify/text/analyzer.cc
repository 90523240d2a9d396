// The ICU analyzer: UTF-8 -> UTF-16 (invalid bytes -> U+FFFD) ->
// NFKC_Casefold -> word BreakIterator -> UTF-8 terms -> length limit ->
// stopwords -> Snowball stem.
#include "classify/text/analyzer.h"

#include <unicode/brkiter.h>
#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/ubrk.h>
#include <unicode/unistr.h>
#include <unicode/ustring.h>
#include <unicode/utypes.h>
#include <xapian.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>

#include "autocat/error.h"

namespace autocat::internal {

namespace {

// Texts longer than this are analyzed in pieces cut at whitespace, so the
// UTF-16 copy never nears ICU's int32_t length limit.
constexpr size_t kMaxChunkBytes = size_t{64} << 20;

// Throws autocat::Error if `status` is an ICU failure.
void check_icu(UErrorCode status, const char* what) {
  if (U_FAILURE(status)) {
    throw Error(std::string("ICU error in ") + what + ": " + u_errorName(status));
  }
}

const icu::Normalizer2& nfkc_casefold() {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* normalizer = icu::Normalizer2::getNFKCCasefoldInstance(status);
  check_icu(status, "Normalizer2::getNFKCCasefoldInstance");
  return *normalizer;
}

// Appends the UTF-8 form of UTF-16 `units` to `out`; unpaired surrogates
// (which well-formed input never yields) become U+FFFD.
void append_utf16_as_utf8(const char16_t* units, int32_t length, std::string* out) {
  for (int32_t i = 0; i < length; ++i) {
    uint32_t c = units[i];
    if (c < 0x80) {
      out->push_back(static_cast<char>(c));
      continue;
    }
    if (c < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (c >> 6)));
      out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
      continue;
    }
    if (c >= 0xD800 && c <= 0xDFFF) {
      if (c <= 0xDBFF && i + 1 < length && units[i + 1] >= 0xDC00 && units[i + 1] <= 0xDFFF) {
        c = 0x10000 + ((c - 0xD800) << 10) + (units[i + 1] - 0xDC00);
        ++i;
        out->push_back(static_cast<char>(0xF0 | (c >> 18)));
        out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
        out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
        continue;
      }
      c = 0xFFFD;
    }
    out->push_back(static_cast<char>(0xE0 | (c >> 12)));
    out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

// Converts UTF-8 bytes to UTF-16 in `dest` (capacity reused), replacing
// each invalid sequence by U+FFFD. Embedded NULs are kept.
void utf8_to_unicode(std::string_view text, icu::UnicodeString* dest) {
  const auto length = static_cast<int32_t>(text.size());
  // UTF-16 never needs more code units than UTF-8 has bytes.
  char16_t* buffer = dest->getBuffer(std::max<int32_t>(length, 1));
  if (buffer == nullptr) throw Error("ICU error in UnicodeString::getBuffer: out of memory");
  int32_t written = 0;
  UErrorCode status = U_ZERO_ERROR;
  u_strFromUTF8WithSub(buffer, dest->getCapacity(), &written, text.data(), length, 0xFFFD, nullptr,
                       &status);
  dest->releaseBuffer(U_SUCCESS(status) ? written : 0);
  check_icu(status, "u_strFromUTF8WithSub");
}

// NFKC_Casefold of UTF-8 text, as UTF-8 (invalid bytes -> U+FFFD).
std::string normalize_word(const icu::Normalizer2& normalizer, std::string_view word) {
  icu::UnicodeString raw;
  utf8_to_unicode(word, &raw);
  UErrorCode status = U_ZERO_ERROR;
  icu::UnicodeString normalized = normalizer.normalize(raw, status);
  check_icu(status, "Normalizer2::normalize");
  std::string out;
  append_utf16_as_utf8(normalized.getBuffer(), normalized.length(), &out);
  return out;
}

std::string unknown_stemmer_message(const std::string& language) {
  return "unknown stemmer language '" + language + "'; choose one of: none " +
         Xapian::Stem::get_available_languages();
}

// Returns the stemmer for `language` ("none" = no stemming).
// Throws InvalidArgumentError for a language Xapian does not know.
Xapian::Stem make_stemmer(const std::string& language) {
  if (language == "none") return Xapian::Stem();
  if (language.empty()) throw InvalidArgumentError(unknown_stemmer_message(language));
  try {
    return Xapian::Stem(language);
  } catch (const Xapian::InvalidArgumentError&) {
    throw InvalidArgumentError(unknown_stemmer_message(language));
  }
}

void check_max_term_bytes(int max_term_bytes) {
  if (max_term_bytes < 1) {
    throw InvalidArgumentError("max_term_bytes must be at least 1 (got " +
                               std::to_string(max_term_bytes) + ")");
  }
}

void check_ngrams(int ngrams) {
  if (ngrams < 1 || ngrams > kMaxNgrams) {
    throw InvalidArgumentError(
        "ngrams must be 1 (words), 2 (and bigrams) or 3 (and trigrams); got " +
        std::to_string(ngrams));
  }
}

std::vector<std::string> load_stopword_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw NotFoundError(path + ": stopword file not found");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError(path + ": cannot open stopword file: " + std::strerror(errno));
  const icu::Normalizer2& normalizer = nfkc_casefold();
  std::vector<std::string> words;
  std::string line;
  while (std::getline(in, line)) {
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    const char* kSpace = " \t\r\f\v";
    size_t first = line.find_first_not_of(kSpace);
    if (first == std::string::npos) continue;
    size_t last = line.find_last_not_of(kSpace);
    std::string word =
        normalize_word(normalizer, std::string_view(line).substr(first, last - first + 1));
    if (!word.empty()) words.push_back(std::move(word));
  }
  if (in.bad()) throw IOError(path + ": error reading stopword file");
  return words;
}

std::atomic<uint64_t> next_analyzer_id{1};

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// A read-only set of short strings: open addressing over a power-of-two
// table with a cheap hash. Most words are not stopwords, and this lookup
// runs once per word, so it avoids std::unordered_set's modulo and chains.
class StringSet {
 public:
  void build(const std::vector<std::string>& words) {
    size_t size = 16;
    while (size < words.size() * 4) size *= 2;
    slots_.assign(size, std::string());
    used_.assign(size, false);
    mask_ = size - 1;
    max_length_ = 0;
    for (const std::string& word : words) {
      size_t i = fnv1a(word) & mask_;
      while (used_[i] && slots_[i] != word) i = (i + 1) & mask_;
      slots_[i] = word;
      used_[i] = true;
      max_length_ = std::max(max_length_, word.size());
    }
    empty_ = words.empty();
  }

  bool contains(std::string_view word) const {
    if (empty_ || word.size() > max_length_) return false;
    for (size_t i = fnv1a(word) & mask_; used_[i]; i = (i + 1) & mask_) {
      if (slots_[i] == word) return true;
    }
    return false;
  }

 private:
  std::vector<std::string> slots_;
  std::vector<bool> used_;
  size_t mask_ = 0;
  size_t max_length_ = 0;
  bool empty_ = true;
};

}  // namespace

AnalyzerSettings resolve_analyzer_options(const AnalyzerOptions& options) {
  AnalyzerSettings settings;
  if (options.stopwords == "english") {
    settings.stopwords = english_stopwords();
  } else if (options.stopwords != "none" && !options.stopwords.empty()) {
    settings.stopwords = load_stopword_file(options.stopwords);
  }
  std::sort(settings.stopwords.begin(), settings.stopwords.end());
  settings.stopwords.erase(std::unique(settings.stopwords.begin(), settings.stopwords.end()),
                           settings.stopwords.end());
  make_stemmer(options.stemmer);  // validates the language
  settings.stemmer = options.stemmer;
  check_max_term_bytes(options.max_term_bytes);
  settings.max_term_bytes = options.max_term_bytes;
  check_ngrams(options.ngrams);
  settings.ngrams = options.ngrams;
  return settings;
}

namespace {

constexpr size_t kStemCacheSlots = size_t{1} << 15;  // a power of two
// Text buffers larger than this (in UTF-16 units) are freed after a call
// rather than kept for the next one.
constexpr int32_t kMaxKeptBufferUnits = int32_t{1} << 20;

// Per-thread scratch state: a BreakIterator clone, a stemmer and buffers
// reused from call to call. ICU BreakIterator and Xapian::Stem are not
// thread-safe, so every thread owns its copies.
struct Workspace {
  uint64_t owner = 0;  // Analyzer::Rep::id these objects were made for
  std::unique_ptr<icu::BreakIterator> breaker;
  Xapian::Stem stemmer;
  icu::UnicodeString raw;
  icu::UnicodeString normalized;
  const icu::UnicodeString no_text;  // what the iterator points at between calls
  std::string word;
  // Stems of recent words, direct-mapped by hash: Snowball costs far more
  // than this lookup and word frequencies are Zipfian.
  struct CachedStem {
    std::string word;
    std::string stem;
  };
  std::vector<CachedStem> stems;

  void reset() {
    owner = 0;
    breaker.reset();
    stemmer = Xapian::Stem();
    stems.clear();
  }

  const std::string& stem(const std::string& word) {
    if (stems.empty()) stems.resize(kStemCacheSlots);
    CachedStem& slot = stems[fnv1a(word) & (kStemCacheSlots - 1)];
    if (slot.word != word || slot.stem.empty()) {
      slot.word = word;
      slot.stem = stemmer(word);
      if (slot.stem.empty()) slot.stem = word;
    }
    return slot.stem;
  }
};

// A few slots, so that a thread alternating between two analyzers (say, a
// training and an indexing one) does not rebuild its workspace every call.
constexpr size_t kWorkspaceSlots = 4;

struct WorkspaceCache {
  std::array<Workspace, kWorkspaceSlots> slots;
  size_t next_victim = 0;
};

}  // namespace

// Immutable state shared by all threads, plus the prototypes each thread
// copies into its own Workspace.
struct Analyzer::Rep {
  const uint64_t id = next_analyzer_id.fetch_add(1);
  const icu::Normalizer2* normalizer = nullptr;  // ICU singleton, thread-safe
  std::unique_ptr<icu::BreakIterator> breaker;   // prototype, only cloned
  bool stem = false;
  StringSet stopwords;
  size_t max_term_bytes = 64;
  std::string stemmer_language;
  int ngrams = 1;

  // This thread's workspace for this analyzer.
  Workspace& workspace() const;

  // Analyzes one piece of text (at most kMaxChunkBytes), continuing the
  // word position count in `*position`. Drops stopwords unless
  // `keep_stopwords`; counts the dropped ones in `*stopwords_dropped`.
  void analyze_chunk(Workspace& ws, std::string_view text, bool keep_stopwords, uint32_t* position,
                     size_t* stopwords_dropped, std::vector<Token>* tokens) const;
  // Analyzes the whole text into words (no n-grams).
  void analyze_words(Workspace& ws, std::string_view text, bool keep_stopwords,
                     size_t* stopwords_dropped, std::vector<Token>* tokens) const;
};

Analyzer::Analyzer(const AnalyzerSettings& settings) : settings_(settings), rep_(new Rep) {
  check_max_term_bytes(settings_.max_term_bytes);
  check_ngrams(settings_.ngrams);
  make_stemmer(settings_.stemmer);  // validates settings read from a model file
  rep_->ngrams = settings_.ngrams;
  rep_->stem = settings_.stemmer != "none";
  rep_->stemmer_language = settings_.stemmer;
  rep_->max_term_bytes = static_cast<size_t>(settings_.max_term_bytes);
  rep_->normalizer = &nfkc_casefold();
  UErrorCode status = U_ZERO_ERROR;
  rep_->breaker.reset(icu::BreakIterator::createWordInstance(icu::Locale::getRoot(), status));
  check_icu(status, "BreakIterator::createWordInstance");
  if (!rep_->breaker) throw Error("ICU error in BreakIterator::createWordInstance: no iterator");
  std::vector<std::string> stopwords = settings_.stopwords;
  for (const std::string& word : settings_.stopwords) {
    // NFKC keeps U+2019 (right single quotation mark) apart from the ASCII
    // apostrophe; "don’t" is as much a stopword as "don't".
    if (word.find('\'') == std::string::npos) continue;
    std::string curly;
    for (char c : word) {
      if (c == '\'') {
        curly += "\xE2\x80\x99";
      } else {
        curly.push_back(c);
      }
    }
    stopwords.push_back(std::move(curly));
  }
  rep_->stopwords.build(stopwords);
}

Analyzer::~Analyzer() = default;

Workspace& Analyzer::Rep::workspace() const {
  thread_local WorkspaceCache cache;
  for (Workspace& slot : cache.slots) {
    if (slot.owner == id) return slot;
  }
  Workspace& slot = cache.slots[cache.next_victim];
  cache.next_victim = (cache.next_victim + 1) % kWorkspaceSlots;
  slot.reset();
  slot.breaker.reset(breaker->clone());
  if (!slot.breaker) throw Error("ICU error in BreakIterator::clone: out of memory");
  slot.stemmer = make_stemmer(stemmer_language);
  slot.owner = id;
  return slot;
}

void Analyzer::Rep::analyze_chunk(Workspace& ws, std::string_view text, bool keep_stopwords,
                                  uint32_t* position, size_t* stopwords_dropped,
                                  std::vector<Token>* tokens) const {
  utf8_to_unicode(text, &ws.raw);
  UErrorCode status = U_ZERO_ERROR;
  normalizer->normalize(ws.raw, ws.normalized, status);
  check_icu(status, "Normalizer2::normalize");

  icu::BreakIterator& breaker = *ws.breaker;
  breaker.setText(ws.normalized);
  const char16_t* units = ws.normalized.getBuffer();
  std::string& word = ws.word;
  int32_t start = breaker.first();
  for (int32_t end = breaker.next(); end != icu::BreakIterator::DONE;
       start = end, end = breaker.next()) {
    if (breaker.getRuleStatus() < UBRK_WORD_NUMBER) continue;  // spaces, punctuation
    ++*position;
    word.clear();
    append_utf16_as_utf8(units + start, end - start, &word);
    if (word.empty() || word.size() > max_term_bytes) continue;
    if (!keep_stopwords && stopwords.contains(word)) {
      ++*stopwords_dropped;
      continue;
    }
    Token token;
    token.position = *position;
    if (stem) {
      token.term = ws.stem(word);
    } else {
      token.term = word;
    }
    // Casefolding leaves no ASCII capital; make sure no stemmer brings one
    // back, since a leading capital would read as a Xapian term prefix.
    char& first = token.term[0];
    if (first >= 'A' && first <= 'Z') first = static_cast<char>(first - 'A' + 'a');
    tokens->push_back(std::move(token));
  }
  // Drop the iterator's alias of the buffer that the next call rewrites.
  breaker.setText(ws.no_text);
}

namespace {

// Where to end a chunk of `text` of at most `limit` bytes: after the last
// ASCII whitespace byte if there is one, else on a character boundary.
size_t chunk_end(std::string_view text, size_t limit) {
  if (text.size() <= limit) return text.size();
  for (size_t i = limit; i > limit / 2; --i) {
    char c = text[i - 1];
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') return i;
  }
  size_t end = utf8_prefix(text.substr(0, limit + 1), limit).size();
  return end == 0 ? limit : end;
}

}  // namespace

void Analyzer::Rep::analyze_words(Workspace& ws, std::string_view text, bool keep_stopwords,
                                  size_t* stopwords_dropped, std::vector<Token>* tokens) const {
  uint32_t position = 0;
  while (!text.empty()) {
    size_t end = chunk_end(text, kMaxChunkBytes);
    analyze_chunk(ws, text.substr(0, end), keep_stopwords, &position, stopwords_dropped, tokens);
    text.remove_prefix(end);
  }
}

void Analyzer::analyze(std::string_view text, std::vector<Token>* tokens) const {
  Workspace& ws = rep_->workspace();
  const size_t first_word = tokens->size();
  size_t stopwords_dropped = 0;
  rep_->analyze_words(ws, text, /*keep_stopwords=*/false, &stopwords_dropped, tokens);
  if (tokens->size() == first_word && stopwords_dropped > 0) {
    // Only stopwords ("how are you?"): they are all the text says, and a
    // text without terms could get no category at all.
    rep_->analyze_words(ws, text, /*keep_stopwords=*/true, &stopwords_dropped, tokens);
  }
  if (ws.raw.getCapacity() > kMaxKeptBufferUnits) icu::UnicodeString().swap(ws.raw);
  if (ws.normalized.getCapacity() > kMaxKeptBufferUnits) {
    icu::UnicodeString().swap(ws.normalized);
  }
  const size_t end_of_words = tokens->size();
  for (int n = 2; n <= rep_->ngrams; ++n) {
    for (size_t start = first_word; start + n <= end_of_words; ++start) {
      Token ngram;
      ngram.position = (*tokens)[start].position;
      ngram.term = (*tokens)[start].term;
      for (size_t i = start + 1; i < start + n; ++i) {
        ngram.term.push_back(kNgramSeparator);
        ngram.term += (*tokens)[i].term;
      }
      tokens->push_back(std::move(ngram));
    }
  }
}

std::vector<Token> Analyzer::analyze(std::string_view text) const {
  std::vector<Token> tokens;
  analyze(text, &tokens);
  return tokens;
}

std::string Analyzer::normalize_query_text(std::string_view text) const {
  std::vector<Token> tokens;
  size_t stopwords_dropped = 0;
  rep_->analyze_words(rep_->workspace(), text, /*keep_stopwords=*/false, &stopwords_dropped,
                      &tokens);
  std::string out;
  for (const Token& token : tokens) {
    if (!out.empty()) out.push_back(' ');
    out += token.term;
  }
  return out;
}

namespace {

// Length of the valid UTF-8 sequence at the start of `s` (1-4), or 0 if it
// is invalid; `*bad_length` is then the length of its maximal subpart (the
// bytes one U+FFFD replaces, as ICU and the WHATWG decoder do).
size_t valid_sequence_length(std::string_view s, size_t* bad_length) {
  const auto b0 = static_cast<unsigned char>(s[0]);
  if (b0 < 0x80) return 1;
  size_t length;
  unsigned char low = 0x80, high = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    if (b0 == 0xE0) low = 0xA0;   // overlong
    if (b0 == 0xED) high = 0x9F;  // surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    if (b0 == 0xF0) low = 0x90;   // overlong
    if (b0 == 0xF4) high = 0x8F;  // above U+10FFFF
  } else {
    *bad_length = 1;  // continuation byte, C0/C1 (overlong), F5..FF
    return 0;
  }
  for (size_t i = 1; i < length; ++i) {
    if (i >= s.size()) {
      *bad_length = i;  // truncated
      return 0;
    }
    const auto b = static_cast<unsigned char>(s[i]);
    const unsigned char lo = i == 1 ? low : 0x80;
    const unsigned char hi = i == 1 ? high : 0xBF;
    if (b < lo || b > hi) {
      *bad_length = i;
      return 0;
    }
  }
  return length;
}

}  // namespace

std::string sanitize_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t run_start = 0;
  size_t i = 0;
  while (i < text.size()) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t bad_length = 0;
    size_t length = valid_sequence_length(text.substr(i), &bad_length);
    if (length != 0) {
      i += length;
      continue;
    }
    out.append(text.data() + run_start, i - run_start);
    out.append("\xEF\xBF\xBD");
    i += bad_length;
    run_start = i;
  }
  out.append(text.data() + run_start, text.size() - run_start);
  return out;
}

std::string utf8_prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  // Find the start of the sequence that byte `max_bytes` belongs to; cut
  // before it if that sequence would run past the limit.
  size_t cut = max_bytes;
  for (size_t back = 0; back < 4 && back <= max_bytes; ++back) {
    const size_t start = max_bytes - back;
    const auto b = static_cast<unsigned char>(text[start]);
    if ((b & 0xC0) == 0x80) continue;  // continuation byte: look further back
    size_t bad_length = 0;
    size_t length = valid_sequence_length(text.substr(start), &bad_length);
    if (length != 0 && start + length > max_bytes) cut = start;
    break;
  }
  return std::string(text.substr(0, cut));
}

}  // namespace autocat::internal
