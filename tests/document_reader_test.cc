// Tests of read_documents(): JSON Lines (plain, gzip, stdin), folder trees,
// plain files, malformed input and the 20 Newsgroups collection.
#include "classify/corpus/document_reader.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/resource.h>
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

  EXPECT_EQ(docs_[2].id, path + ":4");          // no id: the input as given and the line
  EXPECT_EQ(docs_[2].text, "no id, no split");  // CRLF line end
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
  EXPECT_EQ(docs_[2].id, gz + ":4");
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
  // Sorted, hidden files and folders skipped, ids the paths below the root
  // as given.
  EXPECT_EQ(ids(), std::vector<std::string>({root + "/comp/graphics/img", root + "/readme.txt",
                                             root + "/sci.med/10", root + "/sci.med/2"}));
  EXPECT_EQ(docs_[0].labels, std::vector<std::string>({"comp/graphics"}));
  EXPECT_TRUE(docs_[1].labels.empty());
  EXPECT_EQ(docs_[2].labels, std::vector<std::string>({"sci.med"}));
  EXPECT_EQ(docs_[3].text, "Doctors and medicine.\n");
  EXPECT_EQ(docs_[3].source, (std::filesystem::path(root) / "sci.med" / "2").string());
  // A trailing slash changes nothing.
  read({root + "/"});
  EXPECT_EQ(docs_[3].id, root + "/sci.med/2");

  ReadOptions options;
  options.labels_from_folders = false;
  read({root}, options);
  for (const InputDocument& doc : docs_) EXPECT_TRUE(doc.labels.empty()) << doc.id;
}

TEST_F(DocumentReaderTest, LabelsGivenTellsNoneFromNoLabels) {
  // "labels": [] states "none of these categories"; no key states nothing.
  read({test_data("reader_sample.jsonl")});
  ASSERT_EQ(docs_.size(), 4u);
  EXPECT_TRUE(docs_[0].labels_given);
  EXPECT_TRUE(docs_[1].labels_given);  // "labels": []
  EXPECT_FALSE(docs_[2].labels_given);
  TempDir dir;
  write_file(dir.file("null.jsonl"), "{\"text\": \"x\", \"labels\": null}\n");
  read({dir.file("null.jsonl")});
  ASSERT_EQ(docs_.size(), 1u);
  EXPECT_FALSE(docs_[0].labels_given);  // null is no key
  // Folder trees: a file in a subfolder has its label, one at the root none.
  read({test_data("reader_tree")});
  ASSERT_EQ(docs_.size(), 4u);
  EXPECT_TRUE(docs_[0].labels_given);
  EXPECT_FALSE(docs_[1].labels_given);  // readme.txt at the root
  EXPECT_TRUE(docs_[2].labels_given);
  ReadOptions options;
  options.labels_from_folders = false;
  read({test_data("reader_tree")}, options);
  for (const InputDocument& doc : docs_) EXPECT_FALSE(doc.labels_given) << doc.id;
}

TEST_F(DocumentReaderTest, FieldsWithBoostsMakeTheText) {
  TempDir dir;
  const std::string path = dir.file("fields.jsonl");
  write_file(path,
             "{\"title\": \"Comet\", \"body\": \"seen at night\", \"text\": \"ignored\"}\n"
             "{\"body\": \"no title here\"}\n"
             "{\"title\": null}\n"
             "{\"title\": 7, \"body\": \"x\"}\n");
  ReadOptions options;
  options.fields = {{"title", 2}, {"body", 1}};
  options.skip_malformed = true;
  read({path}, options);
  ASSERT_EQ(docs_.size(), 3u);
  EXPECT_EQ(docs_[0].text, "Comet\n\nComet\n\nseen at night");
  EXPECT_EQ(docs_[1].text, "no title here");  // a missing field adds nothing
  EXPECT_EQ(docs_[2].text, "");
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_EQ(warnings_[0], path + ":4: skipped: \"title\" (a --field) is not a string");
  options.skip_malformed = false;
  EXPECT_EQ(error_of<InvalidArgumentError>({path}, options),
            path + ":4: \"title\" (a --field) is not a string (use --skip-malformed to skip it)");
  // Without fields, "text" is required as before.
  EXPECT_NE(error_of<InvalidArgumentError>({path}).find(path + ":2: missing \"text\""),
            std::string::npos);
}

TEST_F(DocumentReaderTest, SkipsEmptyAndBinaryFiles) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("cat"));
  write_file(dir.file("cat/empty"), "");
  write_file(dir.file("cat/binary"), std::string("GIF89a\0\0\x01", 9));
  write_file(dir.file("cat/text"), "plain text");
  EXPECT_EQ(read({dir.path()}), 1u);
  EXPECT_EQ(ids(), std::vector<std::string>({dir.file("cat/text")}));
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

TEST_F(DocumentReaderTest, GeneratedIdsAreUniqueAcrossInputs) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("A/inbox"));
  std::filesystem::create_directories(dir.file("B/inbox"));
  const std::string record = "{\"text\": \"t\", \"labels\": [\"x\"]}\n";
  write_file(dir.file("A/train.jsonl"), record + record);
  write_file(dir.file("B/train.jsonl"), record + record);
  write_file(dir.file("A/inbox/a.txt"), "first");
  write_file(dir.file("B/inbox/a.txt"), "second");
  // Two files of one basename, and two trees holding the same relative path.
  EXPECT_EQ(read({dir.file("A/train.jsonl"), dir.file("B/train.jsonl")}), 4u);
  EXPECT_EQ(ids(), std::vector<std::string>(
                       {dir.file("A/train.jsonl") + ":1", dir.file("A/train.jsonl") + ":2",
                        dir.file("B/train.jsonl") + ":1", dir.file("B/train.jsonl") + ":2"}));
  ReadOptions options;
  options.labels_from_folders = true;
  EXPECT_EQ(read({dir.file("A/inbox"), dir.file("B/inbox")}, options), 2u);
  EXPECT_EQ(ids(), std::vector<std::string>(
                       {dir.file("A/inbox") + "/a.txt", dir.file("B/inbox") + "/a.txt"}));
  // The input path is normalized: "./" and "x/.." do not make new ids.
  read({dir.path() + "/./B/../A/train.jsonl"});
  EXPECT_EQ(docs_[0].id, dir.file("A/train.jsonl") + ":1");
  EXPECT_EQ(docs_[0].source, dir.path() + "/./B/../A/train.jsonl:1");  // messages: as given
  read({dir.file("A/inbox") + "//"});
  EXPECT_EQ(docs_[0].id, dir.file("A/inbox") + "/a.txt");
}

TEST_F(DocumentReaderTest, RepeatedIdIsAnErrorNamingBothPlaces) {
  TempDir dir;
  const std::string first = dir.file("first.jsonl");
  const std::string second = dir.file("second.jsonl");
  write_file(first, "{\"id\": \"x\", \"text\": \"one\"}\n");
  write_file(second, "{\"id\": \"y\", \"text\": \"two\"}\n{\"id\": \"x\", \"text\": \"three\"}\n");
  std::string message = error_of<InvalidArgumentError>({first, second});
  EXPECT_EQ(message, second + ":2: duplicate id \"x\" (first at " + first +
                         ":1); give every document its own \"id\", or pass "
                         "--allow-duplicate-ids to let the later one replace the earlier");
  // Within one file, a generated id against an explicit one, the same input twice.
  write_file(first, "{\"id\": \"7\", \"text\": \"a\"}\n{\"id\": 7, \"text\": \"b\"}\n");
  EXPECT_TRUE(contains(error_of<InvalidArgumentError>({first}), first + ":2: duplicate id \"7\""));
  write_file(second, "{\"text\": \"a\"}\n{\"id\": \"" + second + ":1\", \"text\": \"b\"}\n");
  EXPECT_TRUE(contains(error_of<InvalidArgumentError>({second}), "(first at " + second + ":1)"));
  write_file(dir.file("note.txt"), "text");
  message = error_of<InvalidArgumentError>({dir.file("note.txt"), dir.file("note.txt")});
  EXPECT_TRUE(contains(message, "(first at " + dir.file("note.txt") + ")")) << message;
}

TEST_F(DocumentReaderTest, AllowDuplicateIdsWarnsAndDeliversBoth) {
  TempDir dir;
  const std::string first = dir.file("first.jsonl");
  const std::string second = dir.file("second.jsonl");
  write_file(first, "{\"id\": \"x\", \"text\": \"one\"}\n");
  write_file(second, "{\"id\": \"x\", \"text\": \"two\"}\n");
  ReadOptions options;
  options.allow_duplicate_ids = true;
  EXPECT_EQ(read({first, second}, options), 2u);
  ASSERT_EQ(docs_.size(), 2u);
  EXPECT_EQ(docs_[1].text, "two");  // the later one, for the caller to store over the first
  EXPECT_EQ(warnings_, std::vector<std::string>({second + ":1: duplicate id \"x\" (first at " +
                                                 first + ":1); allowed by --allow-duplicate-ids"}));
}

TEST_F(DocumentReaderTest, NumericIdsKeepTheirDigits) {
  TempDir dir;
  const std::string path = dir.file("big.jsonl");
  // Both are 9007199254740992.0 as doubles.
  write_file(path,
             "{\"id\": 9007199254740993, \"text\": \"a\"}\n"
             "{\"id\": 9007199254740992, \"text\": \"b\"}\n{\"id\": 1.50, \"text\": \"c\"}\n");
  EXPECT_EQ(read({path}), 3u);
  EXPECT_EQ(ids(), std::vector<std::string>({"9007199254740993", "9007199254740992", "1.50"}));
  // Whatever form the number takes, beyond 64 bits too.
  write_file(path,
             "{\"id\": 1e3, \"text\": \"a\"}\n{\"id\": -0, \"text\": \"b\"}\n"
             "{\"id\": 12345678901234567890, \"text\": \"c\"}\n"
             "{\"text\": \"d\", \"id\": 123456789012345678901234}\n"
             "{\"id\": -9223372036854775809, \"text\": \"e\"}\n{\"id\":0,\"text\":\"f\"}\n");
  EXPECT_EQ(read({path}), 6u);
  EXPECT_EQ(ids(),
            std::vector<std::string>({"1e3", "-0", "12345678901234567890",
                                      "123456789012345678901234", "-9223372036854775809", "0"}));
  // A leading zero is not JSON: the line is named with what is wrong.
  write_file(path, "{\"id\": 1, \"text\": \"a\"}\n{\"id\": 00123, \"text\": \"b\"}\n");
  const std::string message = error_of<InvalidArgumentError>({path});
  EXPECT_TRUE(contains(message, path + ":2: invalid JSON: invalid number (leading zero) at byte 7"))
      << message;
}

TEST_F(DocumentReaderTest, IdsLongerThanXapianAllowsAreMalformed) {
  TempDir dir;
  const std::string path = dir.file("ids.jsonl");
  write_file(path, "{\"id\": \"" + std::string(kMaxIdBytes, 'a') + "\", \"text\": \"fits\"}\n" +
                       "{\"id\": \"" + std::string(kMaxIdBytes + 1, 'b') +
                       "\", \"text\": \"too long\"}\n");
  EXPECT_EQ(kMaxIdBytes, 244u);
  const std::string message = error_of<InvalidArgumentError>({path});
  EXPECT_TRUE(contains(message, path + ":2: id is 245 bytes long, over the 244-byte limit"))
      << message;
  ReadOptions options;
  options.skip_malformed = true;
  EXPECT_EQ(read({path}, options), 1u);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_TRUE(contains(warnings_[0], path + ":2: skipped: id is 245 bytes")) << warnings_[0];
}

TEST_F(DocumentReaderTest, WarnsAboutInvalidUtf8IdsAndRefusesSuchLabels) {
  TempDir dir;
  const std::string path = dir.file("bytes.jsonl");
  write_file(path,
             "{\"id\": \"ok\", \"text\": \"t\", \"labels\": [\"caf\xC3\xA9\"]}\n"
             "{\"id\": \"bad\xFF\", \"text\": \"t\"}\n"
             "{\"id\": \"ok2\", \"text\": \"t\", \"labels\": [\"good\", \"caf\xE9\"]}\n");
  // A label is a category name: it must decode everywhere, so it is refused,
  // naming the line and showing the bad byte.
  EXPECT_EQ(error_of<InvalidArgumentError>({path}),
            path +
                ":3: label \"caf\\xe9\" is not valid UTF-8; category names must be UTF-8 "
                "(convert the input, e.g. with iconv) (use --skip-malformed to skip it)");
  warnings_.clear();
  ReadOptions options;
  options.skip_malformed = true;
  EXPECT_EQ(read({path}, options), 2u);
  EXPECT_EQ(warnings_,
            std::vector<std::string>(
                {path + ":2: id is not valid UTF-8; JSON output shows U+FFFD in place of the "
                        "invalid bytes",
                 path + ":3: skipped: label \"caf\\xe9\" is not valid UTF-8; category names "
                        "must be UTF-8 (convert the input, e.g. with iconv)"}));
  EXPECT_EQ(docs_[1].id, "bad\xFF");  // the id itself is kept, byte for byte
}

TEST_F(DocumentReaderTest, RefusesLinesLongerThanTheLimit) {
  TempDir dir;
  const std::string path = dir.file("long.jsonl");
  const std::string long_text(5000, 'w');
  write_file(path, "{\"id\": \"a\", \"text\": \"short\"}\n{\"id\": \"b\", \"text\": \"" +
                       long_text + "\"}\n{\"id\": \"c\", \"text\": \"after\"}\n");
  ReadOptions options;
  options.max_document_bytes = 1000;
  const std::string message = error_of<InvalidArgumentError>({path}, options);
  EXPECT_EQ(message, path +
                         ":2: line is longer than 1000 bytes; the limit is 1000 bytes; raise it "
                         "with --max-document-bytes or split the document (use "
                         "--skip-malformed to skip it)");
  options.skip_malformed = true;
  EXPECT_EQ(read({path}, options), 2u);
  EXPECT_EQ(ids(), std::vector<std::string>({"a", "c"}));
  EXPECT_EQ(docs_[1].source, path + ":3");
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_TRUE(contains(warnings_[0], path + ":2: skipped: line is longer")) << warnings_[0];
  // A line spanning several read chunks is dropped as it streams by.
  write_file(path, "{\"text\": \"" + std::string(3 << 20, 'x') +
                       "\"}\n{\"id\": \"d\", \"text\": \"" + long_text + "\"}");
  options.max_document_bytes = (1 << 20) + 17;
  EXPECT_EQ(read({path}, options), 1u);
  EXPECT_EQ(ids(), std::vector<std::string>({"d"}));
  EXPECT_EQ(docs_[0].source, path + ":2");
  // The limit is the line's length, so a line of exactly the limit is read.
  options.max_document_bytes = 10 + long_text.size() + 2;  // {"text": "…"}
  write_file(path, "{\"text\": \"" + long_text + "\"}");
  options.skip_malformed = false;
  EXPECT_EQ(read({path}, options), 1u);
  options.max_document_bytes -= 1;
  EXPECT_TRUE(contains(error_of<InvalidArgumentError>({path}, options), path + ":1: line is"));
}

TEST_F(DocumentReaderTest, HugeCompressedLineKeepsMemoryBounded) {
  TempDir dir;
  const std::string path = dir.file("bomb.jsonl.gz");
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  gzputs(file, "{\"text\": \"");
  const std::string chunk(1 << 20, 'a');
  for (int i = 0; i < 256; ++i) gzwrite(file, chunk.data(), static_cast<unsigned>(chunk.size()));
  gzputs(file, "\"}\n");
  ASSERT_EQ(gzclose(file), Z_OK);
  ReadOptions options;
  options.max_document_bytes = 4 << 20;
  struct rusage before {};
  getrusage(RUSAGE_SELF, &before);
  const std::string message = error_of<InvalidArgumentError>({path}, options);
  struct rusage after {};
  getrusage(RUSAGE_SELF, &after);
  EXPECT_TRUE(contains(message, path + ":1: line is longer than 4194304 bytes")) << message;
  // The 256 MiB line is refused after reading a few MiB of it (ru_maxrss: KiB).
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 64 * 1024);
}

TEST_F(DocumentReaderTest, RefusesFilesLongerThanTheLimit) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("tree/cat"));
  write_file(dir.file("tree/cat/big.txt"), std::string(2000, 'b'));
  write_file(dir.file("tree/cat/small.txt"), "small");
  ReadOptions options;
  options.max_document_bytes = 1000;
  std::string message = error_of<InvalidArgumentError>({dir.file("tree")}, options);
  EXPECT_TRUE(contains(message, dir.file("tree/cat/big.txt") +
                                    ": file is larger than 1000 bytes; the limit is 1000 bytes"))
      << message;
  // A device has no size: reading stops once past the limit.
  message = error_of<InvalidArgumentError>({"/dev/zero"}, options);
  EXPECT_TRUE(contains(message, "/dev/zero: file is larger than 1000 bytes")) << message;
  options.skip_malformed = true;
  EXPECT_EQ(read({dir.file("tree")}, options), 1u);
  EXPECT_EQ(ids(), std::vector<std::string>({dir.file("tree/cat/small.txt")}));
  ASSERT_EQ(warnings_.size(), 1u);
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
