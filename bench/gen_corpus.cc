// gen_corpus: writes a synthetic labelled corpus of any size, as JSON Lines,
// for measuring how autocat scales past the real collections.
//
// Model (fitted on the "train" records of a 20 Newsgroups-like JSON Lines file):
//  - a document's labels: those of a training document drawn uniformly (so the
//    class prior and label sets are the real ones);
//  - its length in tokens: that of another training document drawn uniformly;
//  - each token: from the multinomial of one of its labels (word counts of that
//    class), plus a Zipfian tail of synthetic words "w<N>" for that class;
//  - vocabulary growth: Heaps' law V(n) = K n^beta is fitted on the real data
//    (n = tokens read so far); once the generated stream is longer than the real
//    one, a new synthetic word is introduced whenever the vocabulary seen falls
//    below K n^beta, so V keeps growing as the fit says.
// With --model dcm each document is bursty, as real text is: its words come
// from a Dirichlet compound multinomial (Madsen, Kauchak & Elkan 2005) around
// its class's distribution p_c, with the class concentration s_c fitted on the
// training documents by Minka's fixed point (mean p_c held fixed). A draw from
// the DCM is a Polya urn: the t-th token is new from p_c with probability
// s_c / (s_c + t), else a copy of one of the document's t earlier tokens, so a
// document costs O(length) however large the vocabulary. A small s_c means few
// distinct words per document, each repeated: a document's neighbours are then
// those sharing its rarer words, not a near tie of the whole class. Words of
// a single real document are not in p_c: a fresh token is instead, at the
// class's rate of such words, a new word "w<N>" of its document only.
// --model mixture adds what sets real documents of a class apart: each takes
// the class mixture of a real training document (fitted by EM over the 20
// class distributions, each document left out of its own classes' counts so
// it does not explain itself), and its fresh tokens come from that mixture of
// classes. A real mac document that reads half like pc hardware gives
// generated mac documents that do too, so classes overlap as they do in text.
// Output is streamed (memory grows with the vocabulary, not with --documents)
// and depends only on the input, --model, --concentration-scale and --seed.
// bench/validate_generator.py compares a generated corpus with 20 Newsgroups.
//
// Tokenization is deliberately simple: a word is a maximal run of ASCII letters
// and digits and non-ASCII bytes (so UTF-8 letters stay whole), ASCII lowercased.

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace {

// splitmix64 seeding + xoshiro256**: fast and identical on every platform
// (std:: distributions are not).
class Random {
 public:
  explicit Random(std::uint64_t seed) {
    for (auto& word : state_) {
      seed += 0x9e3779b97f4a7c15ULL;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      word = z ^ (z >> 31);
    }
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  std::size_t below(std::size_t n) {
    return static_cast<std::size_t>(uniform() * static_cast<double>(n));
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t state_[4];
};

// Walker's alias method: O(1) draws from a fixed discrete distribution.
class AliasTable {
 public:
  explicit AliasTable(const std::vector<double>& weights)
      : probability_(weights.size()), alias_(weights.size()) {
    const std::size_t n = weights.size();
    double total = 0;
    for (double w : weights) total += w;
    std::vector<double> scaled(n);
    std::vector<std::uint32_t> small, large;
    for (std::size_t i = 0; i < n; ++i) {
      scaled[i] = weights[i] * static_cast<double>(n) / total;
      (scaled[i] < 1.0 ? small : large).push_back(static_cast<std::uint32_t>(i));
    }
    while (!small.empty() && !large.empty()) {
      const std::uint32_t s = small.back(), l = large.back();
      small.pop_back();
      probability_[s] = scaled[s];
      alias_[s] = l;
      scaled[l] -= 1.0 - scaled[s];
      if (scaled[l] < 1.0) {
        large.pop_back();
        small.push_back(l);
      }
    }
    // What is left is (up to rounding) exactly full columns.
    for (const auto* rest : {&large, &small}) {
      for (std::uint32_t i : *rest) {
        probability_[i] = 1.0;
        alias_[i] = i;
      }
    }
  }
  std::size_t draw(Random& random) const {
    const std::size_t column = random.below(probability_.size());
    return random.uniform() < probability_[column] ? column : alias_[column];
  }

 private:
  std::vector<double> probability_;
  std::vector<std::uint32_t> alias_;
};

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "gen_corpus: %s\n", message.c_str());
  std::exit(2);
}

// ---- minimal JSON reading: one object per line, string / array-of-string values ----

void append_utf8(std::string& out, std::uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

class JsonLine {
 public:
  JsonLine(std::string_view text, const std::string& where) : text_(text), where_(where) {}

  // Calls on_field(key) for every member; the callback reads the value with
  // read_string / read_string_array / skip_value.
  template <typename OnField>
  void parse_object(OnField on_field) {
    expect('{');
    if (peek() == '}') {
      ++pos_;
      return;
    }
    while (true) {
      const std::string key = read_string();
      expect(':');
      on_field(key);
      const char c = next_non_space();
      if (c == '}') return;
      if (c != ',') error("expected ',' or '}'");
    }
  }

  std::string read_string() {
    expect('"');
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) error("unterminated string");
      const char c = text_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) error("unterminated escape");
      const char e = text_[pos_++];
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'u': {
          std::uint32_t code = read_hex4();
          if (code >= 0xD800 && code < 0xDC00 && text_.substr(pos_, 2) == "\\u") {
            pos_ += 2;
            const std::uint32_t low = read_hex4();
            code = (low >= 0xDC00 && low < 0xE000)
                       ? 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                       : 0xFFFD;
          } else if (code >= 0xD800 && code < 0xE000) {
            code = 0xFFFD;  // lone surrogate
          }
          append_utf8(out, code);
          break;
        }
        default:
          out += e;  // \" \\ \/
      }
    }
  }

  std::vector<std::string> read_string_array() {
    std::vector<std::string> out;
    expect('[');
    if (peek() == ']') {
      ++pos_;
      return out;
    }
    while (true) {
      out.push_back(read_string());
      const char c = next_non_space();
      if (c == ']') return out;
      if (c != ',') error("expected ',' or ']'");
    }
  }

  void skip_value() {
    const char c = peek();
    if (c == '"') {
      read_string();
      return;
    }
    if (c == '{' || c == '[') {
      int depth = 0;
      while (pos_ < text_.size()) {
        const char d = text_[pos_];
        if (d == '"') {
          read_string();
          continue;
        }
        ++pos_;
        if (d == '{' || d == '[') ++depth;
        if ((d == '}' || d == ']') && --depth == 0) return;
      }
      error("unterminated value");
    }
    while (pos_ < text_.size() && std::strchr(",}] \t", text_[pos_]) == nullptr)
      ++pos_;  // number, true, ...
  }

 private:
  std::uint32_t read_hex4() {
    if (pos_ + 4 > text_.size()) error("short \\u escape");
    const std::string hex(text_.substr(pos_, 4));
    pos_ += 4;
    char* end = nullptr;
    const unsigned long code = std::strtoul(hex.c_str(), &end, 16);
    if (end != hex.c_str() + 4) error("bad \\u escape");
    return static_cast<std::uint32_t>(code);
  }
  char peek() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (pos_ >= text_.size()) error("unexpected end of line");
    return text_[pos_];
  }
  char next_non_space() {
    const char c = peek();
    ++pos_;
    return c;
  }
  void expect(char c) {
    if (next_non_space() != c) error(std::string("expected '") + c + "'");
  }
  [[noreturn]] void error(const std::string& what) {
    fail(where_ + ": malformed JSON (" + what + ")");
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  const std::string& where_;
};

// Reads a JSON Lines file, gzip-compressed or not, line by line.
class LineReader {
 public:
  explicit LineReader(const std::string& path) : path_(path), file_(gzopen(path.c_str(), "rb")) {
    if (file_ == nullptr)
      fail(path + ": cannot open (" + std::strerror(errno) + "); give --input FILE");
    gzbuffer(file_, 1 << 20);
  }
  ~LineReader() { gzclose(file_); }
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  bool next(std::string& line) {
    line.clear();
    char chunk[1 << 16];
    while (gzgets(file_, chunk, sizeof chunk) != nullptr) {
      line += chunk;
      if (!line.empty() && line.back() == '\n') return true;
    }
    int error = Z_OK;
    const char* message = gzerror(file_, &error);
    if (error != Z_OK && error != Z_STREAM_END) fail(path_ + ": read error (" + message + ")");
    return !line.empty();
  }

 private:
  std::string path_;
  gzFile file_;
};

template <typename OnWord>
void for_each_word(const std::string& text, OnWord on_word) {
  std::string word;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) != 0 && byte < 0x80) {
      word += static_cast<char>(std::tolower(byte));
    } else if (byte >= 0x80) {
      word += c;
    } else if (!word.empty()) {
      on_word(word);
      word.clear();
    }
  }
  if (!word.empty()) on_word(word);
}

// ---- the fitted model ----

struct ClassModel {
  std::vector<std::uint32_t> words;      // base vocabulary ids seen in this class
  std::vector<double> counts;            // their counts
  double base_total = 0;                 // sum of counts
  double top_count = 0;                  // count of the most frequent word: Zipf's f(1)
  std::vector<std::uint64_t> synthetic;  // synthetic word numbers given to this class, in order
  std::unique_ptr<AliasTable> sampler;
  double concentration = 0;  // --model dcm: the fitted DCM concentration s_c
  double novel_rate = 0;     // --model dcm: share of tokens that are a document's own words

  // The synthetic word introduced k-th in this class (k from 1) has Zipf rank
  // words.size() + k and weight top_count / rank, so the tail continues the
  // class's own frequency curve. Its total weight, by the integral of 1/r:
  double synthetic_weight() const {
    const double first = static_cast<double>(words.size()) + 0.5;
    return top_count * std::log((first + static_cast<double>(synthetic.size())) / first);
  }
  std::uint64_t draw_synthetic(double u) const {  // u in [0, synthetic_weight())
    const double first = static_cast<double>(words.size()) + 0.5;
    const double offset = first * std::exp(u / top_count) - first;
    const auto index = static_cast<std::size_t>(std::max(0.0, offset));
    return synthetic[std::min(index, synthetic.size() - 1)];
  }
};

struct Fit {
  std::vector<std::string> vocabulary;  // base word id -> word
  std::vector<std::string> class_names;
  std::vector<std::vector<std::uint32_t>> label_sets;  // per training document
  std::vector<std::uint32_t> lengths;                  // tokens per training document
  std::vector<ClassModel> classes;
  std::uint64_t tokens = 0;
  std::size_t unlabelled = 0;  // records of the split without labels: not used, but reported
  double heaps_k = 0, heaps_beta = 0;
  // --model mixture: per training document, the cumulative weights of its
  // class mixture (one per class, the last 1).
  std::vector<std::vector<float>> mixtures;
};

// One training document's word counts, for fitting the DCM concentrations.
struct DocumentCounts {
  std::vector<std::uint32_t> label_ids;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> words;  // (base word id, count)
  std::uint32_t length = 0;
};

double digamma(double x) {
  double result = 0;
  for (; x < 6; x += 1) result -= 1 / x;
  const double f = 1 / (x * x);
  return result + std::log(x) - 0.5 / x -
         f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))));
}

// psi(x + n) - psi(x): exact as a sum for the small counts most words have.
double digamma_step(double x, std::uint32_t n) {
  if (n > 16) return digamma(x + n) - digamma(x);
  double sum = 0;
  for (std::uint32_t i = 0; i < n; ++i) sum += 1 / (x + i);
  return sum;
}

// Minka (2000), "Estimating a Dirichlet distribution", fixed point for the
// precision s of a Polya distribution with known mean m:
//   s <- s * sum_d sum_w m_w (psi(n_dw + s m_w) - psi(s m_w))
//          / sum_d (psi(n_d + s) - psi(s)).
// Words a document lacks add zero to the numerator, so a step costs one pass
// over the documents' nonzero counts.
void fit_concentrations(Fit& fit, const std::vector<DocumentCounts>& documents) {
  for (std::size_t c = 0; c < fit.classes.size(); ++c) {
    ClassModel& model = fit.classes[c];
    std::unordered_map<std::uint32_t, double> mean;
    for (std::size_t i = 0; i < model.words.size(); ++i)
      mean[model.words[i]] = model.counts[i] / model.base_total;
    std::vector<const DocumentCounts*> members;
    for (const auto& document : documents) {
      if (document.length > 1 && std::find(document.label_ids.begin(), document.label_ids.end(),
                                           c) != document.label_ids.end())
        members.push_back(&document);
    }
    double s = 100;
    if (members.empty()) {
      model.concentration = s;
      continue;
    }
    for (int iteration = 0; iteration < 500; ++iteration) {
      double numerator = 0, denominator = 0;
      for (const DocumentCounts* document : members) {
        for (const auto& [word, count] : document->words) {
          const double m = mean[word];
          numerator += m * digamma_step(s * m, count);
        }
        denominator += digamma_step(s, document->length);
      }
      const double next = s * numerator / denominator;
      const bool converged = std::fabs(next - s) < 1e-6 * s;
      s = next;
      if (converged || !(s > 1e-3 && s < 1e9)) break;
    }
    model.concentration = std::min(std::max(s, 1e-3), 1e9);
  }
}

// EM for each document's weights over the class distributions (its words'
// class memberships), with the document's own counts taken out of its
// classes (leave one out). Classes are smoothed by 0.01 per vocabulary word.
void fit_mixtures(Fit& fit, const std::vector<DocumentCounts>& documents) {
  const std::size_t classes = fit.classes.size(), words = fit.vocabulary.size();
  constexpr double kSmoothing = 0.01;
  std::vector<float> counts(words * classes, 0.0f);
  std::vector<double> totals(classes, 0.0);
  for (std::size_t c = 0; c < classes; ++c) {
    const ClassModel& model = fit.classes[c];
    for (std::size_t i = 0; i < model.words.size(); ++i)
      counts[model.words[i] * classes + c] = static_cast<float>(model.counts[i]);
    totals[c] = model.base_total;
  }
  std::vector<double> weights(classes), next(classes), responsibility(classes);
  fit.mixtures.clear();
  for (const DocumentCounts& document : documents) {
    const double share = 1.0 / static_cast<double>(document.label_ids.size());
    auto probability = [&](std::uint32_t word, std::uint32_t count, std::size_t c) {
      double n = counts[word * classes + c], total = totals[c];
      if (std::find(document.label_ids.begin(), document.label_ids.end(), c) !=
          document.label_ids.end()) {
        n = std::max(0.0, n - share * count);
        total -= share * document.length;
      }
      return (n + kSmoothing) / (total + kSmoothing * static_cast<double>(words));
    };
    // Start from the labels, as the class a writer chose.
    std::fill(weights.begin(), weights.end(), 0.2 / static_cast<double>(classes));
    for (std::uint32_t c : document.label_ids)
      weights[c] += 0.8 / static_cast<double>(document.label_ids.size());
    std::vector<double> table(document.words.size() * classes);
    for (std::size_t i = 0; i < document.words.size(); ++i)
      for (std::size_t c = 0; c < classes; ++c)
        table[i * classes + c] = probability(document.words[i].first, document.words[i].second, c);
    for (int iteration = 0; iteration < 50 && document.length > 0; ++iteration) {
      std::fill(next.begin(), next.end(), 0.0);
      for (std::size_t i = 0; i < document.words.size(); ++i) {
        double sum = 0;
        for (std::size_t c = 0; c < classes; ++c)
          sum += responsibility[c] = weights[c] * table[i * classes + c];
        for (std::size_t c = 0; c < classes; ++c)
          next[c] += document.words[i].second * responsibility[c] / sum;
      }
      double change = 0;
      for (std::size_t c = 0; c < classes; ++c) {
        next[c] /= document.length;
        change = std::max(change, std::fabs(next[c] - weights[c]));
      }
      weights.swap(next);
      if (change < 1e-4) break;
    }
    std::vector<float> cumulative(classes);
    double sum = 0;
    for (std::size_t c = 0; c < classes; ++c) cumulative[c] = static_cast<float>(sum += weights[c]);
    for (float& value : cumulative) value = static_cast<float>(value / sum);
    cumulative.back() = 1.0f;
    fit.mixtures.push_back(std::move(cumulative));
  }
}

// Over half of a real vocabulary are words of one document only (names,
// addresses, numbers, typos). Drawn from the class distribution they would
// spread over several documents; so the dcm models take them out of the class
// distributions and instead give each class a rate of new words (their share
// of its tokens): a fresh token is then, at that rate, a word no other
// document has (which the urn may repeat within its document).
void split_novel_words(Fit& fit, const std::vector<DocumentCounts>& documents) {
  std::vector<std::uint32_t> df(fit.vocabulary.size(), 0);
  for (const DocumentCounts& document : documents)
    for (const auto& word : document.words) ++df[word.first];
  for (ClassModel& model : fit.classes) {
    std::vector<std::uint32_t> words;
    std::vector<double> counts;
    double novel = 0, kept = 0;
    for (std::size_t i = 0; i < model.words.size(); ++i) {
      if (df[model.words[i]] == 1) {
        novel += model.counts[i];
        continue;
      }
      words.push_back(model.words[i]);
      counts.push_back(model.counts[i]);
      kept += model.counts[i];
    }
    if (words.empty()) continue;  // a tiny fixture: keep the class as it is
    model.novel_rate = novel / model.base_total;
    model.words = std::move(words);
    model.counts = std::move(counts);
    model.base_total = kept;
    model.sampler = std::make_unique<AliasTable>(model.counts);
  }
}

Fit fit_corpus(const std::string& path, const std::string& split, bool dcm, bool mixture) {
  Fit fit;
  std::vector<DocumentCounts> documents;  // --model dcm only
  std::unordered_map<std::string, std::uint32_t> word_ids, class_ids;
  std::vector<std::unordered_map<std::uint32_t, double>> class_counts;
  // Heaps' law sample points (log n, log V), taken at geometrically spaced n.
  std::vector<std::pair<double, double>> heaps_points;
  double next_point = 10;

  LineReader reader(path);
  std::string line;
  std::size_t line_number = 0;
  while (reader.next(line)) {
    ++line_number;
    if (line.find_first_not_of(" \t\r\n") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(line_number);
    std::string text, record_split;
    std::vector<std::string> labels;
    bool has_labels = false;
    JsonLine json(line, where);
    json.parse_object([&](const std::string& key) {
      if (key == "text") {
        text = json.read_string();
      } else if (key == "split") {
        record_split = json.read_string();
      } else if (key == "labels") {
        labels = json.read_string_array();
        has_labels = true;
      } else {
        json.skip_value();
      }
    });
    if (!split.empty() && record_split != split) continue;
    if (!has_labels || labels.empty()) {  // nothing to condition on
      ++fit.unlabelled;
      continue;
    }

    std::vector<std::uint32_t> label_ids;
    for (const auto& label : labels) {
      auto [it, added] =
          class_ids.emplace(label, static_cast<std::uint32_t>(fit.class_names.size()));
      if (added) {
        fit.class_names.push_back(label);
        class_counts.emplace_back();
      }
      if (std::find(label_ids.begin(), label_ids.end(), it->second) == label_ids.end())
        label_ids.push_back(it->second);
    }
    std::uint32_t length = 0;
    std::unordered_map<std::uint32_t, std::uint32_t> document_counts;
    for_each_word(text, [&](const std::string& word) {
      auto [it, added] = word_ids.emplace(word, static_cast<std::uint32_t>(fit.vocabulary.size()));
      if (added) fit.vocabulary.push_back(word);
      if (dcm) ++document_counts[it->second];
      // A multi-label document's words count for each of its labels.
      for (std::uint32_t label : label_ids)
        class_counts[label][it->second] += 1.0 / label_ids.size();
      ++length;
      ++fit.tokens;
      if (static_cast<double>(fit.tokens) >= next_point) {
        heaps_points.emplace_back(std::log(static_cast<double>(fit.tokens)),
                                  std::log(static_cast<double>(fit.vocabulary.size())));
        next_point *= 1.05;
      }
    });
    if (dcm) {
      DocumentCounts counts;
      counts.label_ids = label_ids;
      counts.words.assign(document_counts.begin(), document_counts.end());
      std::sort(counts.words.begin(), counts.words.end());  // sums independent of hashing
      counts.length = length;
      documents.push_back(std::move(counts));
    }
    fit.label_sets.push_back(std::move(label_ids));
    fit.lengths.push_back(length);
  }
  if (fit.label_sets.empty())
    fail(path + ": no labelled record" +
         (split.empty() ? "" : " with \"split\": \"" + split + "\"") +
         "; give a JSON Lines file with \"text\" and \"labels\" (and --split \"\" to use every "
         "record)");
  // The first thousand tokens are not yet in Heaps' regime (nearly every word
  // is new); leave them out unless the corpus is tiny (a test fixture).
  constexpr double kHeapsFirstTokens = 1000;
  const auto past_start =
      std::find_if(heaps_points.begin(), heaps_points.end(),
                   [&](const auto& point) { return point.first >= std::log(kHeapsFirstTokens); });
  if (heaps_points.end() - past_start >= 10) heaps_points.erase(heaps_points.begin(), past_start);
  if (heaps_points.size() < 2)
    fail(path + ": too few tokens (" + std::to_string(fit.tokens) + ") to fit Heaps' law");

  // Least squares of log V = log K + beta log n.
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [x, y] : heaps_points) {
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double m = static_cast<double>(heaps_points.size());
  fit.heaps_beta = (m * sxy - sx * sy) / (m * sxx - sx * sx);
  fit.heaps_k = std::exp((sy - fit.heaps_beta * sx) / m);

  fit.classes.resize(fit.class_names.size());
  for (std::size_t c = 0; c < fit.classes.size(); ++c) {
    // Sorted by word id so the tables (and the output) do not depend on hashing.
    std::vector<std::pair<std::uint32_t, double>> sorted(class_counts[c].begin(),
                                                         class_counts[c].end());
    std::sort(sorted.begin(), sorted.end());
    ClassModel& model = fit.classes[c];
    for (const auto& [word, count] : sorted) {
      model.words.push_back(word);
      model.counts.push_back(count);
      model.base_total += count;
      model.top_count = std::max(model.top_count, count);
    }
    model.sampler = std::make_unique<AliasTable>(model.counts);
  }
  if (dcm) fit_concentrations(fit, documents);
  if (mixture) fit_mixtures(fit, documents);
  if (dcm) split_novel_words(fit, documents);
  return fit;
}

// ---- generation ----

struct Options {
  std::string input;
  std::string output = "-";
  std::string fit_split = "train";
  std::uint64_t documents = 0;
  std::uint64_t seed = 1;
  double test_fraction = 0;
  std::string id_prefix = "gen/";
  bool dcm = false;                // --model dcm or mixture: bursty documents (Polya urn)
  bool mixture = false;            // --model mixture: each document a mixture of classes
  double concentration_scale = 1;  // --model dcm: multiplies every fitted s_c
  // While the vocabulary is behind Heaps' curve, at most one new word every
  // this many tokens, so catching up (right after the real corpus's size) is
  // spread over many documents instead of filling a few.
  std::uint64_t catch_up_gap = 10;
  bool quiet = false;
};

void append_json_string(std::string& out, const std::string& value) {
  out += '"';
  for (char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", byte);
      out += escape;
    } else {
      out += c;
    }
  }
  out += '"';
}

void generate(Fit& fit, const Options& options) {
  std::FILE* out = options.output == "-" ? stdout : std::fopen(options.output.c_str(), "wb");
  if (out == nullptr) fail(options.output + ": cannot write (" + std::strerror(errno) + ")");
  static char buffer[1 << 20];
  std::setvbuf(out, buffer, _IOFBF, sizeof buffer);

  Random random(options.seed);
  std::vector<bool> base_seen(fit.vocabulary.size(), false);
  std::uint64_t vocabulary_seen = 0, tokens = 0, synthetic_words = 0, since_new_word = 0;
  std::string line, synthetic_name;
  // --model dcm: the document's tokens so far, as (offset in line << 32 | size).
  std::vector<std::size_t> drawn;
  const auto remember = [&](std::size_t start) {
    if (options.dcm) drawn.push_back(start << 32 | (line.size() - start));
  };
  for (std::uint64_t d = 0; d < options.documents; ++d) {
    const std::size_t source = random.below(fit.label_sets.size());
    const auto& labels = fit.label_sets[source];
    const std::uint32_t length =
        std::max<std::uint32_t>(1, fit.lengths[random.below(fit.lengths.size())]);
    const bool test = options.test_fraction > 0 && random.uniform() < options.test_fraction;

    line.clear();
    line += "{\"id\": ";
    append_json_string(line, options.id_prefix + std::to_string(d));
    line += ", \"split\": \"";
    line += test ? "test" : "train";
    line += "\", \"labels\": [";
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) line += ", ";
      append_json_string(line, fit.class_names[labels[i]]);
    }
    line += "], \"text\": \"";
    drawn.clear();
    for (std::uint32_t t = 0; t < length; ++t) {
      ClassModel* model =
          &fit.classes[labels.size() == 1 ? labels[0] : labels[random.below(labels.size())]];
      if (t > 0) line += ' ';
      ++tokens;
      ++since_new_word;
      // Polya urn: copy one of the t earlier tokens with probability t / (s + t).
      if (options.dcm && t > 0 &&
          random.uniform() * (model->concentration * options.concentration_scale + t) >=
              model->concentration * options.concentration_scale) {
        const std::size_t earlier = drawn[random.below(drawn.size())];
        const std::size_t from = earlier >> 32, size = earlier & 0xffffffffu;
        line.reserve(line.size() + size);  // so appending from itself never reallocates
        line.append(line, from, size);
        drawn.push_back((line.size() - size) << 32 | size);
        continue;
      }
      if (options.mixture) {
        const auto& cumulative = fit.mixtures[source];
        const auto u = static_cast<float>(random.uniform());
        const auto c = std::upper_bound(cumulative.begin(), cumulative.end(), u);
        model = &fit.classes[std::min<std::size_t>(c - cumulative.begin(), cumulative.size() - 1)];
      }
      const std::size_t start = line.size();
      const bool beyond_real = tokens > fit.tokens;
      if (beyond_real && since_new_word >= options.catch_up_gap &&
          static_cast<double>(vocabulary_seen) <
              fit.heaps_k * std::pow(static_cast<double>(tokens), fit.heaps_beta)) {
        model->synthetic.push_back(++synthetic_words);
        ++vocabulary_seen;
        since_new_word = 0;
        line += 'w';
        line += std::to_string(synthetic_words);
        remember(start);
        continue;
      }
      if (model->novel_rate > 0 && random.uniform() < model->novel_rate) {
        ++vocabulary_seen;
        line += 'w';
        line += std::to_string(++synthetic_words);
        remember(start);
        continue;
      }
      const double synthetic_weight = model->synthetic.empty() ? 0.0 : model->synthetic_weight();
      const double u = random.uniform() * (model->base_total + synthetic_weight);
      if (u >= model->base_total) {
        line += 'w';
        line += std::to_string(model->draw_synthetic(u - model->base_total));
        remember(start);
        continue;
      }
      const std::uint32_t word = model->words[model->sampler->draw(random)];
      if (!base_seen[word]) {
        base_seen[word] = true;
        ++vocabulary_seen;
      }
      line += fit.vocabulary[word];  // only letters, digits and UTF-8: nothing to escape
      remember(start);
    }
    line += "\"}\n";
    if (std::fwrite(line.data(), 1, line.size(), out) != line.size())
      fail(options.output + ": write failed (" + std::strerror(errno) + ")");
  }
  if (std::fflush(out) != 0 || (out != stdout && std::fclose(out) != 0))
    fail(options.output + ": write failed (" + std::strerror(errno) + ")");
  if (!options.quiet) {
    std::fprintf(
        stderr,
        "gen_corpus: wrote %llu documents, %llu tokens (mean length %.1f), vocabulary %llu "
        "(%llu synthetic); Heaps' prediction K n^beta = %.0f\n",
        static_cast<unsigned long long>(options.documents), static_cast<unsigned long long>(tokens),
        options.documents ? static_cast<double>(tokens) / static_cast<double>(options.documents)
                          : 0.0,
        static_cast<unsigned long long>(vocabulary_seen),
        static_cast<unsigned long long>(synthetic_words),
        fit.heaps_k * std::pow(static_cast<double>(tokens), fit.heaps_beta));
  }
}

constexpr const char* kUsage =
    "usage: gen_corpus --documents N [--input FILE] [--output FILE] [--seed S]\n"
    "                  [--test-fraction F] [--fit-split NAME] [--id-prefix P] [--quiet]\n"
    "                  [--model multinomial|dcm|mixture] [--concentration-scale X]\n"
    "\n"
    "Writes N synthetic labelled documents as JSON Lines (id, split, labels, text),\n"
    "sampled from class-conditional word distributions fitted on the records of FILE\n"
    "(JSON Lines, gzip or plain; default ../shared/data/20news-bydate.jsonl.gz) whose\n"
    "\"split\" is NAME (default train; \"\" for all), with the real document lengths\n"
    "and a vocabulary that keeps growing by the Heaps' law fitted on FILE.\n"
    "The same FILE and --seed give the same bytes. Output: FILE or - (stdout, default).\n"
    "--test-fraction F marks each document \"test\" with probability F (default 0).\n"
    "--model multinomial (default): every token drawn independently from its class.\n"
    "--model dcm: bursty documents, a Dirichlet compound multinomial per class whose\n"
    "concentration is fitted on FILE (Minka's fixed point); --concentration-scale X\n"
    "multiplies the fitted concentrations (default 1; larger is less bursty).\n"
    "--model mixture: dcm, each document's fresh words from the class mixture EM\n"
    "finds in a real training document (classes overlap as in real text).\n"
    "The fit (K, beta, tokens, classes) and the generated totals go to stderr.\n";

std::uint64_t parse_count(const std::string& flag, const std::string& value) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno != 0 || value[0] == '-')
    fail(flag + " needs a non-negative integer, got '" + value + "'");
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  options.input = std::string(AUTOCAT_SOURCE_DIR) + "/../shared/data/20news-bydate.jsonl.gz";
  if (const char* data = std::getenv("AUTOCAT_SHARED_DATA_DIR"))
    options.input = std::string(data) + "/20news-bydate.jsonl.gz";
  bool have_documents = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (flag == "--quiet") {
      options.quiet = true;
      continue;
    }
    if (i + 1 >= argc) fail(flag + ": missing value (or unknown option)\n" + kUsage);
    const std::string value = argv[++i];
    if (flag == "--documents") {
      options.documents = parse_count(flag, value);
      have_documents = true;
    } else if (flag == "--input") {
      options.input = value;
    } else if (flag == "--output") {
      options.output = value;
    } else if (flag == "--seed") {
      options.seed = parse_count(flag, value);
    } else if (flag == "--fit-split") {
      options.fit_split = value;
    } else if (flag == "--id-prefix") {
      options.id_prefix = value;
    } else if (flag == "--model") {
      if (value != "multinomial" && value != "dcm" && value != "mixture")
        fail("--model needs multinomial, dcm or mixture, got '" + value + "'");
      options.dcm = value != "multinomial";
      options.mixture = value == "mixture";
    } else if (flag == "--concentration-scale") {
      char* end = nullptr;
      options.concentration_scale = std::strtod(value.c_str(), &end);
      if (*end != '\0' || !(options.concentration_scale > 0 && options.concentration_scale < 1e9))
        fail("--concentration-scale needs a positive number, got '" + value + "'");
    } else if (flag == "--test-fraction") {
      char* end = nullptr;
      options.test_fraction = std::strtod(value.c_str(), &end);
      if (*end != '\0' || !(options.test_fraction >= 0 && options.test_fraction <= 1))
        fail("--test-fraction needs a number from 0 to 1, got '" + value + "'");
    } else {
      fail("unknown option " + flag + "\n" + kUsage);
    }
  }
  if (!have_documents) fail(std::string("--documents N is required\n") + kUsage);

  Fit fit = fit_corpus(options.input, options.fit_split, options.dcm, options.mixture);
  if (!options.quiet) {
    std::fprintf(stderr,
                 "gen_corpus: fitted on %zu documents of %s (%zu without labels left out): %zu "
                 "classes, %llu tokens (mean length %.1f), "
                 "vocabulary %zu; Heaps' law V = %.3f n^%.4f (predicts %.0f)\n",
                 fit.label_sets.size(), options.input.c_str(), fit.unlabelled,
                 fit.class_names.size(), static_cast<unsigned long long>(fit.tokens),
                 static_cast<double>(fit.tokens) / static_cast<double>(fit.label_sets.size()),
                 fit.vocabulary.size(), fit.heaps_k, fit.heaps_beta,
                 fit.heaps_k * std::pow(static_cast<double>(fit.tokens), fit.heaps_beta));
    if (options.dcm) {
      std::fprintf(stderr,
                   "gen_corpus: DCM concentration per class (x %g):", options.concentration_scale);
      for (std::size_t c = 0; c < fit.classes.size(); ++c)
        std::fprintf(stderr, " %s %.1f", fit.class_names[c].c_str(), fit.classes[c].concentration);
      std::fputc('\n', stderr);
    }
  }
  generate(fit, options);
  return 0;
}
