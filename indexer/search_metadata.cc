#include "indexer/search_metadata.h"

#include <filesystem>
#include <system_error>

#include "autocat/error.h"
#include "classify/model_io.h"

namespace autocat::cli {

void write_search_metadata(Xapian::WritableDatabase& db, const std::string& model_dir,
                           const std::string& prefix, Xapian::valueno slot) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(model_dir, ec);
  db.set_metadata(kModelKey, ec ? model_dir : absolute.lexically_normal().string());
  db.set_metadata(kPrefixKey, prefix);
  db.set_metadata(kSlotKey, std::to_string(slot));
}

SearchMetadata read_search_metadata(const Xapian::Database& db) {
  SearchMetadata metadata;
  metadata.model_dir = db.get_metadata(kModelKey);
  metadata.prefix = db.get_metadata(kPrefixKey);
  metadata.slot = db.get_metadata(kSlotKey);
  metadata.stemmer = db.get_metadata(kStemmerKey);
  return metadata;
}

std::unique_ptr<internal::Analyzer> load_model_analyzer(const std::string& model_dir) {
  const std::filesystem::path file = std::filesystem::path(model_dir) / internal::kModelFileName;
  std::error_code ec;
  if (!std::filesystem::is_directory(model_dir, ec)) {
    throw NotFoundError(model_dir + ": no such model directory");
  }
  return std::make_unique<internal::Analyzer>(internal::read_analyzer_settings(file.string()));
}

}  // namespace autocat::cli
