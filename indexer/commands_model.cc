// autocat model slim: the files a categorizing node needs, without the
// training collection.
#include <filesystem>
#include <ostream>
#include <system_error>

#include "autocat/error.h"
#include "classify/io/journal.h"
#include "classify/io/model_dir.h"
#include "indexer/commands.h"

namespace autocat::cli {

namespace {

namespace fs = std::filesystem;

const char kUsage[] =
    "usage: autocat model slim --model DIR --out OUT [--json]\n"
    "\n"
    "Writes into the model directory OUT the files a categorizing node needs of\n"
    "the model installed in DIR: the model file, kNN's index file and the journal\n"
    "(documents learned and forgotten since training), without the training\n"
    "collection (a Xapian database, a third of 20 Newsgroups' model, nearly half\n"
    "of a model of three million documents). OUT classifies, indexes and\n"
    "recategorizes exactly as DIR does, with every method; what needs the\n"
    "training collection (learn, forget, train --add) is refused there with a\n"
    "message naming it. OUT is replaced in one atomic step, as train does; a\n"
    "non-empty OUT that is not a model directory is refused.\n";

const char kFooter[] =
    "\n"
    "example:\n"
    "  autocat model slim --model news.model --out /srv/news.model\n";

void define_options(OptionSet& options) {
  add_model_option(options, "model directory to copy from (left as it is)");
  options.value("--out", "OUT", "model directory to write the slim copy into");
  options.flag("--json", "{\"model\", \"out\", \"files\": [names], \"bytes\", \"left_out_bytes\"}");
}

// Bytes of a file, or of every file under a directory (0 if missing).
uint64_t bytes_of(const fs::path& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return fs::file_size(path, ec);
  uint64_t total = 0;
  for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  }
  return total;
}

int run_model(const ParsedArgs& args, std::ostream& out, Messages& messages) {
  if (args.positional().size() != 1 || args.positional()[0] != "slim") {
    throw UsageError("give the action: autocat model slim --model DIR --out OUT");
  }
  const std::string model_dir = args.required("model");
  const std::string out_dir = args.required("out");
  std::error_code ec;
  if (fs::exists(out_dir, ec) && fs::equivalent(model_dir, out_dir, ec)) {
    throw UsageError("--out " + out_dir + " is the model directory itself; give another one");
  }
  if (!fs::is_directory(model_dir, ec)) {
    throw NotFoundError(model_dir + ": no such model directory");
  }
  // No learn, forget or train changes DIR while its files are copied.
  const internal::ModelDirLock lock(model_dir, internal::kJournalLockTimeoutMs);
  const internal::ModelPaths from = internal::resolve_model_dir(model_dir);
  if (!fs::is_regular_file(from.model_file, ec)) {
    throw NotFoundError(internal::missing_model_reason(model_dir));
  }
  if (!fs::is_regular_file(from.knn_index, ec)) {
    throw InvalidArgumentError(
        model_dir +
        ": the model has no kNN index file (it was trained before autocat wrote one), so "
        "kNN would need the training collection; refit it with autocat train --add --model " +
        model_dir + " and slim it then");
  }
  internal::ModelDirWriter writer(out_dir, warn_to(messages));
  const internal::ModelPaths& to = writer.next();
  internal::Json files = internal::Json::array();
  uint64_t bytes = 0;
  const auto copy = [&](const std::string& source, const std::string& target) {
    fs::copy_file(source, target, fs::copy_options::overwrite_existing, ec);
    if (ec) throw IOError(target + ": cannot copy " + source + " there: " + ec.message());
    files.push_back(internal::Json(fs::path(target).filename().string()));
    bytes += bytes_of(target);
  };
  copy(from.model_file, to.model_file);
  copy(from.knn_index, to.knn_index);
  if (fs::is_regular_file(from.journal, ec) && bytes_of(from.journal) > 0) {
    copy(from.journal, to.journal);
  }
  writer.install();
  const uint64_t left_out = bytes_of(from.training_db);
  if (args.has("json")) {
    internal::Json json = internal::Json::object();
    json["model"] = model_dir;
    json["out"] = out_dir;
    json["files"] = std::move(files);
    json["bytes"] = bytes;
    json["left_out_bytes"] = left_out;
    out << json_output(json) << '\n';
    return 0;
  }
  out << "wrote slim model " << one_line(out_dir) << ": " << bytes << " bytes in " << files.size()
      << " files; the training collection (" << left_out << " bytes) left out\n";
  return 0;
}

}  // namespace

Command model_command() {
  return {"model", "write a slim copy of a model for categorizing nodes",
          kUsage,  define_options,
          kFooter, run_model};
}

}  // namespace autocat::cli
