#include "indexer/cli.h"

#include <ostream>

namespace autocat::cli {

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  (void)args;
  (void)out;
  err << "autocat: not implemented yet\n";
  return 1;
}

}  // namespace autocat::cli
