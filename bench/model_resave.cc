// Rewrites a model directory's model file in another format version without
// training again: reads SRC's model.autocat (any version this autocat reads)
// and writes it into DST's current generation, whose knn.index and
// training/ stay as they are (the knn.index binds to the model's idf, which
// is unchanged). DST is a copy of SRC made first (cp -r SRC DST); SRC is
// never written. To time model opening at scale in each layout.
//
// usage: model_resave SRC DST [--format N]   (N: 2, the default, or 1)
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>

#include "bench/bench_util.h"
#include "classify/io/model_dir.h"
#include "classify/model/model_io.h"

using autocat::bench::Clock;
using autocat::bench::since;

int main(int argc, char** argv) {
  if (argc != 3 && !(argc == 5 && std::string(argv[3]) == "--format")) {
    std::fprintf(stderr, "usage: model_resave SRC DST [--format 1|2]\n");
    return 2;
  }
  const uint32_t format = argc == 5 ? static_cast<uint32_t>(std::strtoul(argv[4], nullptr, 10)) : 2;
  try {
    namespace ai = autocat::internal;
    const std::string from = ai::resolve_model_dir(argv[1]).model_file;
    const std::string to = ai::resolve_model_dir(argv[2]).model_file;
    std::error_code ec;
    if (std::filesystem::equivalent(from, to, ec)) {
      std::fprintf(stderr, "model_resave: %s and %s are the same file; copy SRC first\n",
                   from.c_str(), to.c_str());
      return 2;
    }
    const auto start = Clock::now();
    const ai::ModelState model = ai::read_model_file(from);
    const double read_seconds = since(start);
    const auto write_start = Clock::now();
    ai::write_model_file(to, model, format);
    std::printf("read %s: %.2f s; wrote %s (format %u, %ju bytes): %.2f s\n", from.c_str(),
                read_seconds, to.c_str(), format,
                static_cast<uintmax_t>(std::filesystem::file_size(to)), since(write_start));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "model_resave: %s\n", e.what());
    return 1;
  }
  return 0;
}
