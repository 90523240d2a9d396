// autocat: train categorizers and index documents with their categories.
#include <algorithm>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "indexer/cli.h"

#ifdef __GLIBC__  // defined by the C++ headers above
#include <malloc.h>
#endif

int main(int argc, char** argv) {
#ifdef __GLIBC__
  // glibc gives threads up to 8 malloc arenas per core; training's many
  // short-lived worker threads then spread their allocations over arenas
  // that each keep freed memory mapped. One arena per core holds training's
  // peak RSS on 20 Newsgroups at about 300 MB instead of 350 MB, at the
  // same speed. Set before any thread starts.
  mallopt(M_ARENA_MAX, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
#endif
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  return autocat::cli::run(args, std::cout, std::cerr);
}
