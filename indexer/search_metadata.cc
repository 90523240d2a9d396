#include "indexer/search_metadata.h"

#include <filesystem>
#include <system_error>
#include <vector>

#include "autocat/error.h"
#include "classify/io/model_dir.h"
#include "classify/model/model_io.h"

namespace autocat::cli {

std::string absolute_model_dir(const std::string& model_dir) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(model_dir, ec);
  return ec ? model_dir : absolute.lexically_normal().string();
}

std::string trained_model_fingerprint(const std::string& fingerprint) {
  const size_t journal = fingerprint.find(" journal:");
  return journal == std::string::npos ? fingerprint : fingerprint.substr(0, journal);
}

void write_search_metadata(Xapian::WritableDatabase& db, const SearchMetadata& metadata) {
  db.set_metadata(kModelKey, metadata.model_dir);
  db.set_metadata(kModelFingerprintKey, metadata.model_fingerprint);
  db.set_metadata(kPrefixKey, metadata.prefix);
  db.set_metadata(kSlotKey, metadata.slot);
}

SearchMetadata read_search_metadata(const Xapian::Database& db) {
  SearchMetadata metadata;
  metadata.model_dir = db.get_metadata(kModelKey);
  metadata.model_fingerprint = db.get_metadata(kModelFingerprintKey);
  metadata.prefix = db.get_metadata(kPrefixKey);
  metadata.slot = db.get_metadata(kSlotKey);
  metadata.stemmer = db.get_metadata(kStemmerKey);
  metadata.text_slot = db.get_metadata(kTextSlotKey);
  return metadata;
}

std::vector<std::string> search_metadata_differences(const SearchMetadata& recorded,
                                                     const SearchMetadata& wanted) {
  std::vector<std::string> differences;
  const bool same_path = recorded.model_dir == wanted.model_dir;
  const bool fingerprints = !recorded.model_fingerprint.empty();
  if (fingerprints ? trained_model_fingerprint(recorded.model_fingerprint) !=
                         trained_model_fingerprint(wanted.model_fingerprint)
                   : !recorded.model_dir.empty() && !same_path) {
    if (same_path) {
      differences.push_back("the model " + recorded.model_dir +
                            " changed since its documents were indexed (retrained? " +
                            recorded.model_fingerprint + " then, " + wanted.model_fingerprint +
                            " now)");
    } else {
      differences.push_back(
          "its documents were indexed with the model " + recorded.model_dir +
          (fingerprints ? " (" + recorded.model_fingerprint + ")" : std::string()) +
          ", --model is another one, " + wanted.model_dir + " (" + wanted.model_fingerprint + ")");
    }
  }
  if (!recorded.prefix.empty() && recorded.prefix != wanted.prefix) {
    differences.push_back("its categories are under the term prefix " + recorded.prefix +
                          ", --prefix is " + wanted.prefix);
  }
  if (!recorded.slot.empty() && recorded.slot != wanted.slot) {
    differences.push_back("its categories are in value slot " + recorded.slot + ", --slot is " +
                          wanted.slot);
  }
  return differences;
}

bool learned_since_recorded(const SearchMetadata& recorded, const SearchMetadata& wanted) {
  return !recorded.model_fingerprint.empty() &&
         recorded.model_fingerprint != wanted.model_fingerprint &&
         trained_model_fingerprint(recorded.model_fingerprint) ==
             trained_model_fingerprint(wanted.model_fingerprint);
}

bool too_many_open_files(const std::string& reason) {
  return reason.find("Too many open files") != std::string::npos ||
         reason.find("too many open files") != std::string::npos;
}

std::string database_lock_message(const std::string& path, const Xapian::DatabaseLockError& e) {
  // Xapian says why in the message only: "Unable to get write lock on DB:
  // already locked" when another writer holds it, else the lock file's
  // problem ("Couldn't open lockfile: Read-only file system", "too many
  // open files", ...).
  const std::string& message = e.get_msg();
  if (message.find("already locked") != std::string::npos) {
    return path + ": database is locked by another writer; wait for it to finish or close it";
  }
  const std::string lead = "Unable to get write lock on " + path + ": ";
  const std::string reason =
      message.compare(0, lead.size(), lead) == 0 ? message.substr(lead.size()) : message;
  return path + ": cannot take the database's write lock (" + reason + "); " +
         (too_many_open_files(reason) ? "raise the limit of open files (ulimit -n) and run again"
                                      : "check that the database is writable by this user (not "
                                        "on a read-only mount) and run again");
}

std::unique_ptr<internal::Analyzer> load_model_analyzer(const std::string& model_dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(model_dir, ec)) {
    throw NotFoundError(model_dir + ": no such model directory");
  }
  return std::make_unique<internal::Analyzer>(
      internal::read_analyzer_settings(internal::resolve_model_dir(model_dir).model_file));
}

Xapian::Database open_database(const std::string& path) {
  try {
    return Xapian::Database(path);
  } catch (const Xapian::DatabaseOpeningError& e) {
    throw IOError(path + ": cannot open the database: " + xapian_reason(e) +
                  "; give --db a database written by autocat index");
  }
}

Xapian::WritableDatabase open_existing_database(const std::string& path,
                                                const std::string& what_to_give) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw NotFoundError(path + ": no such database; give --db " + what_to_give);
  }
  try {
    Xapian::Database(path).close();  // not a database: no lock file left behind
    return Xapian::WritableDatabase(path, Xapian::DB_OPEN);
  } catch (const Xapian::DatabaseLockError& e) {
    throw IOError(database_lock_message(path, e));
  } catch (const Xapian::DatabaseOpeningError& e) {
    throw IOError(path + ": cannot open the database: " + xapian_reason(e) + "; give --db " +
                  what_to_give);
  }
}

}  // namespace autocat::cli
