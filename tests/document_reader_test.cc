// Tests of read_documents(): JSON Lines (plain, gzip, stdin), folder trees,
// plain files, malformed input and the 20 Newsgroups collection.
#include "classify/document_reader.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "autocat/error.h"
#include "tests/test_util.h"

namespace autocat::internal {
namespace {

using testing_util::TempDir;
using testing_util::test_data;
using testing_util::write_file;

class DocumentReaderTest : public testing::Test {
 protected:
  // Reads `inputs`, collecting documents and warnings.
  uint64_t read(const std::vector<std::string>& inputs, const ReadOptions& options = {}) {
    docs_.clear();
    warnings_.clear();
    return read_documents(
        inputs, options, [this](InputDocument&& doc) { docs_.push_back(std::move(doc)); },
        [this](const std::string& warning) { warnings_.push_back(warning); });
  }

  std::vector<std::string> ids() const {
    std::vector<std::string> out;
    for (const InputDocument& doc : docs_) out.push_back(doc.id);
    return out;
  }

  static void write_gzip(const std::string& path, const std::string& contents) {
    gzFile file = gzopen(path.c_str(), "wb");
    ASSERT_NE(file, nullptr);
    ASSERT_EQ(gzwrite(file, contents.data(), static_cast<unsigned>(contents.size())),
              static_cast<int>(contents.size()));
    ASSERT_EQ(gzclose(file), Z_OK);
  }

  // The message of the exception of type E that `read(inputs, options)` throws.
  template <class E>
  std::string error_of(const std::vector<std::string>& inputs, const ReadOptions& options = {}) {
    try {
      read(inputs, options);
    } catch (const E& e) {
      return e.what();
    }
    ADD_FAILURE() << "no exception of the expected type";
    return std::string();
  }

  static bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
  }

  std::vector<InputDocument> docs_;
  std::vector<std::string> warnings_;
};

TEST_F(DocumentReaderTest, ReadsJsonLines) {
  const std::string path = test_data("reader_sample.jsonl");
  EXPECT_EQ(read({path}), 4u);
  EXPECT_TRUE(warnings_.empty());
  ASSERT_EQ(docs_.size(), 4u);

  EXPECT_EQ(docs_[0].id, "doc-1");
  EXPECT_EQ(docs_[0].title, "Premi\xC3\xA8re");
  EXPECT_EQ(docs_[0].text, "Caf\xC3\xA9 au lait \xE2\x80\x94 na\xC3\xAFve");
  EXPECT_EQ(docs_[0].labels, std::vector<std::string>({"food", "fr"}));
  EXPECT_EQ(docs_[0].split, "train");
  EXPECT_EQ(docs_[0].source, path + ":1");

  EXPECT_EQ(docs_[1].id, "17");  // a numeric id becomes a string
  EXPECT_TRUE(docs_[1].labels.empty());
  EXPECT_EQ(docs_[1].source, path + ":3");  // line 2 is blank

  EXPECT_EQ(docs_[2].id, "reader_sample.jsonl:4");  // no id: file and line
  EXPECT_EQ(docs_[2].text, "no id, no split");      // CRLF line end
  EXPECT_TRUE(docs_[2].split.empty());

  // Last line without a newline; \u escapes decoded.
  EXPECT_EQ(docs_[3].id, "doc-5");
  EXPECT_EQ(docs_[3].text,
            "\xE5\x8C\x97\xE4\xBA\xAC\xE5\xA4\xA7\xE5\xAD\xA6 and emoji \xF0\x9F\x98\x80");
}

TEST_F(DocumentReaderTest, FiltersBySplit) {
  ReadOptions options;
  options.split = "train";
  EXPECT_EQ(read({test_data("reader_sample.jsonl")}, options), 2u);
  EXPECT_EQ(ids(), std::vector<std::string>({"doc-1", "doc-5"}));
  options.split = "test";
  read({test_data("reader_sample.jsonl")}, options);
  EXPECT_EQ(ids(), std::vector<std::string>({"17"}));
  options.split = "validation";
  EXPECT_EQ(read({test_data("reader_sample.jsonl")}, options), 0u);
}

TEST_F(DocumentReaderTest, ReadsGzipAndMatchesPlain) {
  TempDir dir;
  const std::string plain = testing_util::read_file(test_data("reader_sample.jsonl"));
  const std::string gz = dir.file("sample.jsonl.gz");
  write_gzip(gz, plain);
  read({gz});
  ASSERT_EQ(docs_.size(), 4u);
  EXPECT_EQ(docs_[0].source, gz + ":1");
  EXPECT_EQ(docs_[2].id, "sample.jsonl.gz:4");
  std::vector<InputDocument> from_gzip = std::move(docs_);
  read({test_data("reader_sample.jsonl")});
  ASSERT_EQ(docs_.size(), from_gzip.size());
  for (size_t i = 0; i < docs_.size(); ++i) {
    EXPECT_EQ(docs_[i].text, from_gzip[i].text);
    EXPECT_EQ(docs_[i].labels, from_gzip[i].labels);
  }
}

TEST_F(DocumentReaderTest, CorruptGzipThrowsIOError) {
  TempDir dir;
  std::string lines;
  for (int i = 0; i < 2000; ++i) {
    lines += "{\"id\": \"d" + std::to_string(i) + "\", \"text\": \"line number " +
             std::to_string(i * 7919) + "\"}\n";
  }
  const std::string good = dir.file("good.jsonl.gz");
  write_gzip(good, lines);
  EXPECT_EQ(read({good}), 2000u);
  const std::string compressed = testing_util::read_file(good);

  const std::string truncated = dir.file("truncated.jsonl.gz");
  write_file(truncated, compressed.substr(0, compressed.size() / 2));
  std::string message = error_of<IOError>({truncated});
  EXPECT_TRUE(contains(message, truncated)) << message;
  EXPECT_TRUE(contains(message, "truncated")) << message;

  const std::string corrupt = dir.file("corrupt.jsonl.gz");
  std::string damaged = compressed;
  for (size_t i = 20; i < 60; ++i) damaged[i] = static_cast<char>(damaged[i] ^ 0x5A);
  write_file(corrupt, damaged);
  message = error_of<IOError>({corrupt});
  EXPECT_TRUE(contains(message, corrupt)) << message;

  const std::string not_gzip = dir.file("plain.jsonl.gz");
  write_file(not_gzip, lines);
  message = error_of<IOError>({not_gzip});
  EXPECT_TRUE(contains(message, not_gzip + ": not a gzip file")) << message;
}

TEST_F(DocumentReaderTest, MalformedLineStopsWithFileAndLine) {
  const std::string path = test_data("reader_malformed.jsonl");
  std::string message = error_of<InvalidArgumentError>({path});
  EXPECT_TRUE(contains(message, path + ":2: invalid JSON")) << message;
  EXPECT_TRUE(contains(message, "--skip-malformed")) << message;
  ASSERT_EQ(docs_.size(), 1u);  // the line before was delivered
}

TEST_F(DocumentReaderTest, MalformedLinesSkippedWithWarnings) {
  const std::string path = test_data("reader_malformed.jsonl");
  ReadOptions options;
  options.skip_malformed = true;
  EXPECT_EQ(read({path}, options), 2u);
  EXPECT_EQ(ids(), std::vector<std::string>({"ok-1", "ok-2"}));
  ASSERT_EQ(warnings_.size(), 6u);
  EXPECT_TRUE(contains(warnings_[0], path + ":2: skipped: invalid JSON")) << warnings_[0];
  EXPECT_EQ(warnings_[1], path + ":3: skipped: not a JSON object");
  EXPECT_EQ(warnings_[2], path + ":4: skipped: missing \"text\"");
  EXPECT_EQ(warnings_[3], path + ":5: skipped: \"text\" is not a string");
  EXPECT_EQ(warnings_[4], path + ":6: skipped: \"labels\" is not an array of strings");
  EXPECT_EQ(warnings_[5], path + ":7: skipped: \"labels\" is not an array of strings");
}

TEST_F(DocumentReaderTest, ReadsFolderTreeWithLabels) {
  const std::string root = test_data("reader_tree");
  EXPECT_EQ(read({root}), 4u);
  EXPECT_TRUE(warnings_.empty());
  // Sorted, hidden files and folders skipped, ids relative to the root.
  EXPECT_EQ(ids(), std::vector<std::string>(
                       {"comp/graphics/img", "readme.txt", "sci.med/10", "sci.med/2"}));
  EXPECT_EQ(docs_[0].labels, std::vector<std::string>({"comp/graphics"}));
  EXPECT_TRUE(docs_[1].labels.empty());
  EXPECT_EQ(docs_[2].labels, std::vector<std::string>({"sci.med"}));
  EXPECT_EQ(docs_[3].text, "Doctors and medicine.\n");
  EXPECT_EQ(docs_[3].source, (std::filesystem::path(root) / "sci.med" / "2").string());
  // A trailing slash changes nothing.
  read({root + "/"});
  EXPECT_EQ(docs_[3].id, "sci.med/2");

  ReadOptions options;
  options.labels_from_folders = false;
  read({root}, options);
  for (const InputDocument& doc : docs_) EXPECT_TRUE(doc.labels.empty()) << doc.id;
}

TEST_F(DocumentReaderTest, SkipsEmptyAndBinaryFiles) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("cat"));
  write_file(dir.file("cat/empty"), "");
  write_file(dir.file("cat/binary"), std::string("GIF89a\0\0\x01", 9));
  write_file(dir.file("cat/text"), "plain text");
  EXPECT_EQ(read({dir.path()}), 1u);
  EXPECT_EQ(ids(), std::vector<std::string>({"cat/text"}));
  EXPECT_EQ(warnings_, std::vector<std::string>({dir.file("cat/binary") + ": skipped: binary file",
                                                 dir.file("cat/empty") + ": skipped: empty file"}));
  // The same checks for a file named directly.
  EXPECT_EQ(read({dir.file("cat/empty")}), 0u);
  EXPECT_EQ(warnings_, std::vector<std::string>({dir.file("cat/empty") + ": skipped: empty file"}));
  // A NUL byte after the first 8 KB does not make a file binary.
  write_file(dir.file("late_nul.txt"), std::string(9000, 'a') + std::string(1, '\0'));
  EXPECT_EQ(read({dir.file("late_nul.txt")}), 1u);
}

TEST_F(DocumentReaderTest, ReadsPlainFilesInInputOrder) {
  TempDir dir;
  write_file(dir.file("b.txt"), "second");
  write_file(dir.file("a.txt"), "first");
  EXPECT_EQ(read({dir.file("b.txt"), test_data("reader_sample.jsonl"), dir.file("a.txt")}), 6u);
  ASSERT_EQ(docs_.size(), 6u);
  EXPECT_EQ(docs_[0].id, dir.file("b.txt"));  // the path as given
  EXPECT_EQ(docs_[0].text, "second");
  EXPECT_TRUE(docs_[0].labels.empty());
  EXPECT_EQ(docs_[1].id, "doc-1");
  EXPECT_EQ(docs_[5].id, dir.file("a.txt"));
}

TEST_F(DocumentReaderTest, MissingPathThrowsNotFound) {
  const std::string missing = test_data("reader_no_such_file.jsonl");
  EXPECT_EQ(error_of<NotFoundError>({missing}), missing + ": no such file or directory");
  EXPECT_EQ(error_of<NotFoundError>({test_data("reader_no_such_dir")}),
            test_data("reader_no_such_dir") + ": no such file or directory");
}

// Root reads files whatever their mode, so as root the read runs with the
// effective user "nobody" (seteuid), and root is restored right after.
TEST_F(DocumentReaderTest, UnreadableFileThrowsIOError) {
  TempDir dir;
  write_file(dir.file("secret.txt"), "text");
  ASSERT_EQ(chmod(dir.file("secret.txt").c_str(), 0), 0);
  const bool root = geteuid() == 0;
  if (root) {
    const passwd* nobody = getpwnam("nobody");
    ASSERT_NE(nobody, nullptr) << "no user \"nobody\" to drop root privileges to";
    ASSERT_EQ(seteuid(nobody->pw_uid), 0) << std::strerror(errno);
  }
  const std::string message = error_of<IOError>({dir.file("secret.txt")});
  if (root) {
    ASSERT_EQ(seteuid(0), 0) << std::strerror(errno);
  }
  EXPECT_TRUE(contains(message, dir.file("secret.txt"))) << message;
}

TEST_F(DocumentReaderTest, HandlesVeryLongLines) {
  TempDir dir;
  std::string big(3 << 20, 'w');  // longer than one read chunk
  for (size_t i = 0; i < big.size(); i += 7) big[i] = ' ';
  const std::string path = dir.file("long.jsonl");
  write_file(path,
             "{\"text\": \"short\"}\n{\"text\": \"" + big + "\"}\n{\"text\": \"" + big + "x\"}");
  EXPECT_EQ(read({path}), 3u);
  ASSERT_EQ(docs_.size(), 3u);
  EXPECT_EQ(docs_[1].text, big);
  EXPECT_EQ(docs_[2].text, big + "x");
  EXPECT_EQ(docs_[2].source, path + ":3");
}

TEST_F(DocumentReaderTest, ReadsStandardInput) {
  TempDir dir;
  const std::string gz = dir.file("stdin.jsonl.gz");
  write_gzip(gz, testing_util::read_file(test_data("reader_sample.jsonl")));
  for (const std::string& file : {test_data("reader_sample.jsonl"), gz}) {
    int fd = open(file.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    int saved = dup(STDIN_FILENO);
    ASSERT_GE(saved, 0);
    ASSERT_EQ(dup2(fd, STDIN_FILENO), STDIN_FILENO);
    close(fd);
    uint64_t count = read({"-"});
    dup2(saved, STDIN_FILENO);
    close(saved);
    EXPECT_EQ(count, 4u) << file;
    ASSERT_EQ(docs_.size(), 4u);
    EXPECT_EQ(docs_[2].id, "stdin:4");
    EXPECT_EQ(docs_[0].source, "<stdin>:1");
  }
}

TEST_F(DocumentReaderTest, Reads20NewsgroupsTrainSplit) {
  const std::string path = testing_util::shared_data("20news-bydate.jsonl.gz");
  AUTOCAT_SKIP_WITHOUT_DATA(path, "20 Newsgroups data");
  ReadOptions options;
  options.split = "train";
  size_t bytes = 0;
  size_t labelled = 0;
  const auto start = std::chrono::steady_clock::now();
  uint64_t count = read_documents(
      {path}, options,
      [&](InputDocument&& doc) {
        bytes += doc.text.size();
        if (doc.labels.size() == 1) ++labelled;
      },
      [](const std::string& warning) { ADD_FAILURE() << warning; });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(count, 11314u);
  EXPECT_EQ(labelled, 11314u);
  EXPECT_GT(bytes, 20u << 20);
  RecordProperty("read_seconds", std::to_string(seconds));
}

}  // namespace
}  // namespace autocat::internal
