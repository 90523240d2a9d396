// autocat: train categorizers and index documents with their categories.
#include <iostream>
#include <string>
#include <vector>

#include "indexer/cli.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  return autocat::cli::run(args, std::cout, std::cerr);
}
