// Indexing throughput on the 20 Newsgroups test split, documents held in
// memory, each configuration written into a fresh Xapian database and
// committed once at the end:
//   (a) autocat with kNN categories (--method: another method, or
//       "default" for the model's; CategoryIndexer::prepare_documents on
//       --threads threads, one thread writing in input order, as autocat index
//       does), also on one thread;
//   (b) the same with categories off (text terms, id, data only);
//   (c) plain Xapian::TermGenerator on one thread, English stemming and none.
// Prints each configuration's median over --runs runs (docs/s).
//
// usage: index_throughput --model DIR [--data 20news-bydate.jsonl.gz]
//                         [--runs 5] [--threads N] [--documents N] [--dir TMP]
//                         [--method knn|default|M]
#include <unistd.h>
#include <xapian.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "autocat/category_indexer.h"
#include "autocat/types.h"
#include "bench/bench_util.h"
#include "classify/corpus/document_reader.h"

namespace {

using autocat::bench::Clock;
using autocat::bench::since;

// Writes `docs` as autocat index does: chunks prepared on `threads` threads
// while this thread writes the previous chunk.
void index_with_autocat(const autocat::CategoryIndexer& indexer,
                        const std::vector<autocat::DocumentToIndex>& docs, unsigned threads,
                        Xapian::WritableDatabase& db) {
  const size_t chunk_size = std::max<size_t>(64, 32 * threads);
  std::future<std::vector<autocat::PreparedDocument>> pending;
  auto write_pending = [&]() {
    if (!pending.valid()) return;
    for (autocat::PreparedDocument& doc : pending.get()) {
      db.replace_document(doc.id_term, doc.document);
    }
  };
  for (size_t start = 0; start < docs.size(); start += chunk_size) {
    std::vector<autocat::DocumentToIndex> chunk(
        docs.begin() + static_cast<std::ptrdiff_t>(start),
        docs.begin() + static_cast<std::ptrdiff_t>(std::min(docs.size(), start + chunk_size)));
    auto next = std::async(std::launch::async, [&indexer, threads, chunk = std::move(chunk)]() {
      return indexer.prepare_documents(chunk, threads);
    });
    write_pending();
    pending = std::move(next);
  }
  write_pending();
  db.commit();
}

// What an application without autocat does: one thread, TermGenerator.
void index_with_term_generator(const std::vector<autocat::DocumentToIndex>& docs,
                               const std::string& stemmer, Xapian::WritableDatabase& db) {
  Xapian::TermGenerator generator;
  generator.set_stemmer(Xapian::Stem(stemmer));
  generator.set_flags(Xapian::TermGenerator::FLAG_CJK_NGRAM);
  for (const autocat::DocumentToIndex& input : docs) {
    Xapian::Document doc;
    generator.set_document(doc);
    generator.index_text(input.text);
    const std::string id_term = "Q" + input.id;
    doc.add_boolean_term(id_term);
    doc.set_data(input.text.substr(0, 200));
    db.replace_document(id_term, doc);
  }
  db.commit();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) try {
  std::string model_dir;
  std::string data = std::string(AUTOCAT_SOURCE_DIR) + "/../shared/data/20news-bydate.jsonl.gz";
  if (const char* shared = std::getenv("AUTOCAT_SHARED_DATA_DIR")) {
    data = std::string(shared) + "/20news-bydate.jsonl.gz";
  }
  int runs = 5;
  std::string method_name = "knn";
  size_t max_documents = 0;  // 0: the whole test split
  unsigned threads = std::max(1U, std::thread::hardware_concurrency());
  std::string dir = std::filesystem::temp_directory_path().string();
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i];
    const std::string value = argv[i + 1];
    if (arg == "--model") {
      model_dir = value;
    } else if (arg == "--data") {
      data = value;
    } else if (arg == "--runs") {
      runs = std::max(1, std::atoi(value.c_str()));
    } else if (arg == "--threads") {
      threads = static_cast<unsigned>(std::max(1, std::atoi(value.c_str())));
    } else if (arg == "--documents") {
      max_documents = static_cast<size_t>(std::max(1, std::atoi(value.c_str())));
    } else if (arg == "--method") {
      method_name = value;
    } else if (arg == "--dir") {
      dir = value;
    } else {
      std::fprintf(stderr, "index_throughput: unknown option %s\n", arg.c_str());
      return 2;
    }
  }
  if (model_dir.empty()) {
    std::fprintf(stderr,
                 "usage: index_throughput --model DIR [--data 20news-bydate.jsonl.gz] "
                 "[--runs 5] [--threads N] [--documents N] [--dir TMP] [--method knn|default|M]\n"
                 "  DIR: a model trained with autocat train --split train on the same data\n");
    return 2;
  }

  std::vector<autocat::DocumentToIndex> docs;
  autocat::internal::ReadOptions read_options;
  read_options.split = "test";
  autocat::internal::read_documents(
      {data}, read_options,
      [&](autocat::internal::InputDocument&& doc) {
        if (max_documents == 0 || docs.size() < max_documents) {
          docs.push_back({doc.id, std::move(doc.text), std::move(doc.title)});
        }
      },
      nullptr);
  double megabytes = 0;
  for (const auto& doc : docs) megabytes += static_cast<double>(doc.text.size()) / 1e6;
  std::printf("%zu test documents (%.1f MB of text), %d runs, %u threads, %u cores\n", docs.size(),
              megabytes, runs, threads, std::thread::hardware_concurrency());

  autocat::IndexOptions categorizing_options;
  if (method_name != "default") {
    const std::optional<autocat::Method> method = autocat::parse_method(method_name);
    if (!method) {
      std::fprintf(stderr, "index_throughput: unknown --method %s\n", method_name.c_str());
      return 2;
    }
    categorizing_options.classify.method = *method;
  }
  const autocat::CategoryIndexer categorizing(model_dir, categorizing_options);
  categorizing.categorize(docs.front().text);  // opens the model's parts once, outside the timing
  autocat::IndexOptions plain_options;
  plain_options.categorize = false;
  const autocat::CategoryIndexer plain(model_dir, plain_options);

  struct Config {
    std::string name;
    std::function<void(Xapian::WritableDatabase&)> run;
    std::vector<double> seconds;
  };
  std::vector<Config> configs = {
      {"(a) autocat, " + method_name + " categories, " + std::to_string(threads) + " threads",
       [&](Xapian::WritableDatabase& db) { index_with_autocat(categorizing, docs, threads, db); },
       {}},
      {"(a1) autocat, " + method_name + " categories, 1 thread",
       [&](Xapian::WritableDatabase& db) { index_with_autocat(categorizing, docs, 1, db); },
       {}},
      {"(b) autocat, no categories, " + std::to_string(threads) + " threads",
       [&](Xapian::WritableDatabase& db) { index_with_autocat(plain, docs, threads, db); },
       {}},
      {"(c) TermGenerator, english stemmer, 1 thread",
       [&](Xapian::WritableDatabase& db) { index_with_term_generator(docs, "english", db); },
       {}},
      {"(c0) TermGenerator, no stemmer, 1 thread",
       [&](Xapian::WritableDatabase& db) { index_with_term_generator(docs, "none", db); },
       {}},
  };
  const std::string db_path = dir + "/index_throughput." + std::to_string(getpid()) + ".db";
  for (int run = 0; run < runs; ++run) {
    for (Config& config : configs) {  // interleaved, so load changes hit every config alike
      std::filesystem::remove_all(db_path);
      Xapian::WritableDatabase db(db_path, Xapian::DB_CREATE);
      const Clock::time_point start = Clock::now();
      config.run(db);
      config.seconds.push_back(since(start));
      db.close();
    }
  }
  std::filesystem::remove_all(db_path);

  const double a = median(configs[0].seconds);
  const double b = median(configs[2].seconds);
  const double c = median(configs[3].seconds);
  for (const Config& config : configs) {
    const double seconds = median(config.seconds);
    std::printf("%-50s median %7.3f s  %8.0f docs/s  (min %.3f, max %.3f)\n", config.name.c_str(),
                seconds, static_cast<double>(docs.size()) / seconds,
                *std::min_element(config.seconds.begin(), config.seconds.end()),
                *std::max_element(config.seconds.begin(), config.seconds.end()));
  }
  std::printf("(a)/(b) = %.2f (target <= 1.15), (a)/(c) = %.2f (target <= 1.0)\n", a / b, a / c);
  return 0;
} catch (const Xapian::Error& e) {  // e.g. --dir missing: not a std::exception
  std::fprintf(stderr, "index_throughput: %s\n", e.get_description().c_str());
  return 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "index_throughput: %s\n", e.what());
  return 1;
}
