// autocat journal salvage: keep the intact records of a damaged journal.
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <iterator>
#include <ostream>

#include "autocat/error.h"
#include "classify/io/atomic_file.h"
#include "classify/io/journal.h"
#include "classify/io/model_dir.h"
#include "indexer/commands.h"

namespace autocat::cli {

namespace {

const char kUsage[] =
    "usage: autocat journal salvage --model DIR [--json]\n"
    "\n"
    "Salvages the journal of the model installed in DIR (what learn, forget,\n"
    "relabel --learn and serve taught it since it was trained) when it is\n"
    "damaged: every whole batch of records before and after the damage is kept,\n"
    "in order, the journal is replaced by them in one step, the damaged file is\n"
    "kept beside it as journal.damaged-TIME, and the byte ranges left out are\n"
    "reported. A journal without damage is left as it is.\n";

const char kFooter[] =
    "\n"
    "example:\n"
    "  autocat journal salvage --model news.model\n";

void define_options(OptionSet& options) {
  add_model_option(options);
  options.flag("--json",
               "{\"journal\", \"damaged\" (bool), \"records\" (kept), \"kept_aside\" (path),\n"
               " \"lost\": [{\"begin\", \"end\"}] (byte offsets, end excluded)}");
}

std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError(path + ": cannot read the journal");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

int run_journal(const ParsedArgs& args, std::ostream& out, Messages&) {
  if (args.positional().size() != 1 || args.positional()[0] != "salvage") {
    throw UsageError("give the action: autocat journal salvage --model DIR");
  }
  const std::string model_dir = args.required("model");
  // No append or train can run meanwhile.
  const internal::ModelDirLock lock(model_dir, internal::kJournalLockTimeoutMs);
  const internal::ModelPaths paths = internal::resolve_model_dir(model_dir);
  // Refuses what is no regular file, and reads a missing one as empty.
  const internal::JournalContents contents = [&] {
    try {
      return internal::read_journal(paths.journal);
    } catch (const ModelFormatError&) {
      return internal::JournalContents{};
    }
  }();
  internal::Json json = internal::Json::object();
  json["journal"] = paths.journal;
  bool damaged = false;
  try {
    internal::read_journal(paths.journal);
  } catch (const ModelFormatError&) {
    damaged = true;
  }
  json["damaged"] = damaged;
  if (!damaged) {
    json["records"] = contents.records.size();
    if (args.has("json")) {
      out << json_output(json) << '\n';
    } else {
      out << one_line(paths.journal) << ": no damage (" << contents.records.size()
          << " records); nothing to salvage\n";
    }
    return 0;
  }
  const std::string bytes = read_whole(paths.journal);
  const internal::JournalSalvage salvage = internal::salvage_journal(bytes);
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%S", std::gmtime(&now));
  const std::string aside = paths.journal + ".damaged-" + stamp;
  if (::link(paths.journal.c_str(), aside.c_str()) != 0) {
    internal::write_file_atomically(aside, {bytes}, "the damaged journal's copy");
  }
  internal::write_file_atomically(paths.journal, {salvage.bytes}, "the salvaged journal");

  json["records"] = salvage.records;
  json["kept_aside"] = aside;
  internal::Json lost = internal::Json::array();
  std::string ranges;
  for (const internal::JournalSalvage::Range& range : salvage.lost) {
    internal::Json entry = internal::Json::object();
    entry["begin"] = range.begin;
    entry["end"] = range.end;
    lost.push_back(entry);
    ranges += (ranges.empty() ? "" : ", ") + std::to_string(range.begin) + "-" +
              std::to_string(range.end) + " (" + std::to_string(range.end - range.begin) +
              " bytes)";
  }
  json["lost"] = lost;
  if (args.has("json")) {
    out << json_output(json) << '\n';
    return 0;
  }
  out << one_line(paths.journal) << ": kept " << salvage.records << " records; lost bytes "
      << ranges << "; the damaged file is kept as " << one_line(aside) << '\n';
  return 0;
}

}  // namespace

Command journal_command() {
  return {"journal",  "salvage a model's damaged journal", kUsage, define_options, kFooter,
          run_journal};
}

}  // namespace autocat::cli
