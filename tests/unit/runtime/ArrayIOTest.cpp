//===- ArrayIOTest.cpp - Tests for .npy and .safetensors I/O --------------===//

#include "runtime/formats/ArrayIO.h"

#include <gtest/gtest.h>

#include "tests/unit/TestSupport.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <unistd.h>

using namespace genesis;
using namespace genesis::test;
namespace fs = std::filesystem;

namespace {

constexpr DType kNpyDTypes[] = {DType::F32, DType::F16, DType::F64,
                                DType::I1,  DType::I32, DType::I64};
std::string readBytes(const std::string &path) {
  std::ifstream stream(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(stream), {}};
}

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  stream.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(stream.good()) << path;
}

std::string littleEndian(uint64_t value, int byteCount) {
  std::string bytes;
  for (int i = 0; i < byteCount; ++i)
    bytes += static_cast<char>((value >> (8 * i)) & 0xFF);
  return bytes;
}

/// An .npy file with the given header dict (padded like numpy does).
std::string npyFile(const std::string &dict, const std::string &data,
                    int major = 1) {
  int lengthBytes = major == 1 ? 2 : 4;
  size_t prefixSize = 8 + lengthBytes;
  std::string header = dict;
  while ((prefixSize + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  return std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0' +
         littleEndian(header.size(), lengthBytes) + header + data;
}

std::string safetensorsFile(const std::string &header,
                            const std::string &data) {
  return littleEndian(header.size(), 8) + header + data;
}

/// Fills every byte pattern the dtype allows: raw random bits for numbers
/// (NaNs and infinities included), 0/1 for booleans.
HostArray randomArray(DType dtype, std::vector<int64_t> shape,
                      std::mt19937_64 &random) {
  HostArray array(dtype, std::move(shape));
  auto *bytes = static_cast<uint8_t *>(array.data());
  for (size_t i = 0; i < array.nbytes(); ++i)
    bytes[i] = static_cast<uint8_t>(dtype == DType::I1 ? random() & 1
                                                       : random() & 0xFF);
  return array;
}

::testing::AssertionResult sameArrays(const HostArray &expected,
                                      const HostArray &actual) {
  if (!expected.sameTypeAs(actual))
    return ::testing::AssertionFailure()
           << expected.typeString() << " vs " << actual.typeString();
  if (expected.nbytes() != 0 &&
      std::memcmp(expected.data(), actual.data(), expected.nbytes()) != 0)
    return ::testing::AssertionFailure()
           << "data of " << expected.typeString() << " differs";
  return ::testing::AssertionSuccess();
}

class ArrayIOTest : public ::testing::Test {
protected:
  void SetUp() override {
    const auto *test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("genesis_arrayio_" + std::to_string(getpid()) + "_" + test->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string &name) const {
    return (dir_ / name).string();
  }

  /// Names of files in the test directory other than `keep`.
  std::vector<std::string> strayFiles(const std::string &keep) const {
    std::vector<std::string> stray;
    for (const auto &entry : fs::directory_iterator(dir_))
      if (entry.path().filename() != keep)
        stray.push_back(entry.path().filename().string());
    return stray;
  }

  std::string loadNpyError(const std::string &name, const std::string &bytes) {
    writeBytes(path(name), bytes);
    return errorFrom([&] { loadNpy(path(name)); });
  }

  std::string loadSafetensorsError(const std::string &name,
                                   const std::string &bytes) {
    writeBytes(path(name), bytes);
    return errorFrom([&] { loadSafetensors(path(name)); });
  }

  fs::path dir_;
};

const std::vector<std::vector<int64_t>> kShapes = {
    {}, {0}, {7}, {3, 4}, {2, 3, 5}, {4, 0, 2}};

} // namespace

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

TEST_F(ArrayIOTest, NpyRoundTripsEveryDTypeAndShape) {
  std::mt19937_64 random(1);
  for (DType dtype : kNpyDTypes) {
    for (const auto &shape : kShapes) {
      HostArray original = randomArray(dtype, shape, random);
      saveNpy(path("a.npy"), original);
      EXPECT_TRUE(sameArrays(original, loadNpy(path("a.npy"))));
    }
  }
  EXPECT_TRUE(strayFiles("a.npy").empty());
}

TEST_F(ArrayIOTest, NpySavesExactlyWhatNumpyWrites) {
  saveNpy(path("a.npy"),
          HostArray::fromValues<int>(DType::I32, {2, 3}, {0, 1, 2, 3, 4, 5}));
  // Byte-for-byte what numpy.save(np.arange(6, dtype='<i4').reshape(2, 3))
  // produces.
  std::string expectedHeader =
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }" +
      std::string(58, ' ') + "\n";
  std::string expected =
      std::string("\x93NUMPY\x01\x00\x76\x00", 10) + expectedHeader;
  for (int i = 0; i < 6; ++i)
    expected += littleEndian(i, 4);
  EXPECT_EQ(readBytes(path("a.npy")), expected);

  saveNpy(path("b.npy"), HostArray(DType::I1, {5}));
  EXPECT_TRUE(contains(readBytes(path("b.npy")),
                       "{'descr': '|b1', 'fortran_order': False, "
                       "'shape': (5,), }"));
}

TEST_F(ArrayIOTest, NpyUsesVersion2ForHugeHeaders) {
  // 30000 dimensions of size 1 need a header longer than 64 KiB.
  std::vector<int64_t> shape(30000, 1);
  HostArray original = HostArray::fromValues<double>(DType::F64, shape, {2.5});
  saveNpy(path("a.npy"), original);
  std::string bytes = readBytes(path("a.npy"));
  ASSERT_GT(bytes.size(), 12u);
  EXPECT_EQ(bytes[6], 2);
  EXPECT_EQ(bytes.size() % 64, 8u); // 64-byte aligned data, then one f64
  EXPECT_TRUE(sameArrays(original, loadNpy(path("a.npy"))));
}

TEST_F(ArrayIOTest, NpyReadsOtherVersionsAndHeaderSpellings) {
  writeBytes(path("v3.npy"),
             npyFile("{'descr': '<f8', 'fortran_order': False, "
                     "'shape': (2,), }",
                     littleEndian(0x3FF0000000000000, 8) + littleEndian(0, 8),
                     3));
  HostArray v3 = loadNpy(path("v3.npy"));
  EXPECT_EQ(v3.typeString(), "f64[2]");
  EXPECT_EQ(v3.getDouble(0), 1.0);

  // Keys in another order, double quotes, no trailing comma, '?' for bool,
  // and Fortran order on a 1-D array (the same layout as C order).
  writeBytes(path("spelling.npy"),
             npyFile("{\"shape\":(3,),\"fortran_order\":True,\"descr\":\"?\"}",
                     std::string("\x01\x00\x01", 3), 2));
  HostArray flags = loadNpy(path("spelling.npy"));
  EXPECT_EQ(flags.typeString(), "i1[3]");
  EXPECT_EQ(flags.getInt(0), 1);
  EXPECT_EQ(flags.getInt(1), 0);

  writeBytes(path("scalar.npy"),
             npyFile("{'descr': '<i8', 'fortran_order': False, 'shape': (), }",
                     littleEndian(uint64_t(-5), 8)));
  HostArray scalar = loadNpy(path("scalar.npy"));
  EXPECT_EQ(scalar.typeString(), "i64[]");
  EXPECT_EQ(scalar.getInt(0), -5);
}

TEST_F(ArrayIOTest, NpyRejectsTruncatedAndOversizedData) {
  saveNpy(path("a.npy"), HostArray(DType::F32, {3, 4}));
  std::string valid = readBytes(path("a.npy"));

  std::string truncated =
      loadNpyError("truncated.npy", valid.substr(0, valid.size() - 4));
  EXPECT_TRUE(contains(truncated, path("truncated.npy")));
  EXPECT_TRUE(contains(truncated,
                       "f32[3, 4] needs 48 data bytes but the file has 44 "
                       "(truncated)"));

  std::string trailing = loadNpyError("trailing.npy", valid + "xyz");
  EXPECT_TRUE(contains(trailing, path("trailing.npy")));
  EXPECT_TRUE(contains(trailing, "has 51 (trailing data)"));

  std::string cutInHeader = loadNpyError("cut.npy", valid.substr(0, 40));
  EXPECT_TRUE(contains(cutInHeader, path("cut.npy")));
  EXPECT_TRUE(contains(cutInHeader, "header length 118 extends past the end "
                                    "of the file (40 bytes)"));
}

TEST_F(ArrayIOTest, NpyRejectsBadMagicAndVersions) {
  std::string notNpy = loadNpyError("bad.npy", "PK\x03\x04 this is a zip");
  EXPECT_TRUE(contains(notNpy, path("bad.npy")));
  EXPECT_TRUE(contains(notNpy, "bad magic"));
  EXPECT_TRUE(contains(loadNpyError("tiny.npy", "\x93NU"), "bad magic"));
  EXPECT_TRUE(contains(loadNpyError("empty.npy", ""), "bad magic"));

  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (), }";
  std::string version4 = npyFile(dict, "abcd");
  version4[6] = 4;
  EXPECT_TRUE(contains(loadNpyError("v4.npy", version4),
                       "unsupported format version 4.0"));
}

TEST_F(ArrayIOTest, NpyRejectsUnsupportedDTypesAndLayouts) {
  auto withDict = [](const std::string &descr, const std::string &fortran,
                     const std::string &shape) {
    return "{'descr': '" + descr + "', 'fortran_order': " + fortran +
           ", 'shape': " + shape + ", }";
  };
  std::string unsigned16 =
      loadNpyError("u2.npy", npyFile(withDict("<u2", "False", "(2,)"), "abcd"));
  EXPECT_TRUE(contains(unsigned16, path("u2.npy")));
  EXPECT_TRUE(contains(unsigned16, "unsupported dtype '<u2'"));

  std::string bigEndian =
      loadNpyError("be.npy", npyFile(withDict(">f4", "False", "(1,)"), "abcd"));
  EXPECT_TRUE(contains(bigEndian, path("be.npy")));
  EXPECT_TRUE(contains(bigEndian, "big-endian dtype '>f4'"));

  std::string fortran =
      loadNpyError("fortran.npy", npyFile(withDict("<f4", "True", "(2, 2)"),
                                          std::string(16, '\0')));
  EXPECT_TRUE(contains(fortran, path("fortran.npy")));
  EXPECT_TRUE(contains(fortran, "Fortran-order"));

  std::string badBool =
      loadNpyError("bool.npy", npyFile(withDict("|b1", "False", "(3,)"),
                                       std::string("\x01\x02\x00", 3)));
  EXPECT_TRUE(contains(badBool, path("bool.npy")));
  EXPECT_TRUE(contains(badBool, "boolean element 1 has byte value 2"));

  std::string overflow = loadNpyError(
      "overflow.npy",
      npyFile(withDict("<f4", "False", "(4294967296, 4294967296)"), ""));
  EXPECT_TRUE(contains(overflow, path("overflow.npy")));
  EXPECT_TRUE(contains(overflow, "overflows"));

  // A shape whose element count fits in int64 but whose byte count does not.
  EXPECT_TRUE(contains(
      loadNpyError(
          "bytes.npy",
          npyFile(withDict("<f8", "False", "(4611686018427387904,)"), "")),
      "overflows"));
}

TEST_F(ArrayIOTest, NpyRejectsMalformedHeaders) {
  struct Case {
    const char *dict;
    const char *problem;
  };
  const Case cases[] = {
      {"{'descr': '<f4', 'fortran_order': False, }", "missing key 'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}",
       "unexpected key 'x'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
       "'shape': (1,)}",
       "duplicate key 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1)}",
       "trailing comma"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
       "non-negative integer"},
      {"{'descr': '<f4', 'fortran_order': false, 'shape': (1,)}",
       "expected True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} extra",
       "unexpected text"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}",
       "expected '}'"},
      {"{'descr': '<f4', 'fortran_order': False, "
       "'shape': (99999999999999999999,)}",
       "does not fit in int64"},
      {"['descr', '<f4']", "expected '{'"},
  };
  for (const Case &testCase : cases) {
    std::string message =
        loadNpyError("header.npy", npyFile(testCase.dict, "abcd"));
    EXPECT_TRUE(contains(message, path("header.npy"))) << testCase.dict;
    EXPECT_TRUE(contains(message, "malformed header")) << testCase.dict;
    EXPECT_TRUE(contains(message, testCase.problem)) << testCase.dict;
  }
}

TEST_F(ArrayIOTest, NpyReportsMissingFilesAndDirectories) {
  std::string missing = path("missing.npy");
  EXPECT_EQ(errorFrom([&] { loadNpy(missing); }),
            "cannot open '" + missing + "': No such file or directory");
  EXPECT_EQ(errorFrom([&] { loadNpy(dir_.string()); }),
            "cannot open '" + dir_.string() + "': not a regular file");
}

TEST_F(ArrayIOTest, NpyRefusesBFloat16) {
  std::string message = errorFrom(
      [&] { saveNpy(path("bf16.npy"), HostArray(DType::BF16, {2})); });
  EXPECT_TRUE(contains(message, path("bf16.npy")));
  EXPECT_TRUE(contains(message, "saveSafetensors"));
  EXPECT_FALSE(fs::exists(path("bf16.npy")));
  EXPECT_TRUE(strayFiles("").empty());
}

//===----------------------------------------------------------------------===//
// .safetensors
//===----------------------------------------------------------------------===//

TEST_F(ArrayIOTest, SafetensorsRoundTripsWithMetadata) {
  std::mt19937_64 random(2);
  NamedArrays arrays;
  // Names deliberately out of alphabetical order: loading must return the
  // file's data order, which is the saving order.
  const char *names[] = {"zeta", "alpha", "mid.weight", "b", "x", "c", "a"};
  for (size_t i = 0; i < std::size(kAllDTypes); ++i)
    arrays.emplace_back(names[i], randomArray(kAllDTypes[i], {3, 5}, random));
  arrays.emplace_back("scalar", randomArray(DType::F32, {}, random));
  arrays.emplace_back("empty", HostArray(DType::BF16, {0, 4}));
  arrays.emplace_back("last", randomArray(DType::I1, {9}, random));
  std::map<std::string, std::string> metadata = {{"format", "pt"},
                                                 {"note", "héllo \"x\""}};

  saveSafetensors(path("m.safetensors"), arrays, metadata);
  std::map<std::string, std::string> loadedMetadata;
  NamedArrays loaded = loadSafetensors(path("m.safetensors"), &loadedMetadata);
  ASSERT_EQ(loaded.size(), arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    EXPECT_EQ(loaded[i].first, arrays[i].first);
    EXPECT_TRUE(sameArrays(arrays[i].second, loaded[i].second))
        << arrays[i].first;
  }
  EXPECT_EQ(loadedMetadata, metadata);
  EXPECT_EQ(loadSafetensorsMetadata(path("m.safetensors")), metadata);
  EXPECT_TRUE(strayFiles("m.safetensors").empty());
}

TEST_F(ArrayIOTest, SafetensorsFileLayout) {
  NamedArrays arrays;
  arrays.emplace_back("w",
                      HostArray::fromValues<float>(DType::F32, {3}, {1, 2, 3}));
  arrays.emplace_back("b", HostArray::fromValues<int>(DType::I64, {1}, {7}));
  saveSafetensors(path("a.safetensors"), arrays);
  std::string bytes = readBytes(path("a.safetensors"));
  ASSERT_GE(bytes.size(), 8u);
  uint64_t headerSize = 0;
  for (int i = 0; i < 8; ++i)
    headerSize |= uint64_t(uint8_t(bytes[i])) << (8 * i);
  EXPECT_EQ(headerSize % 8, 0u);
  ASSERT_EQ(bytes.size(), 8 + headerSize + 12 + 8);
  std::string header = bytes.substr(8, headerSize);
  EXPECT_EQ(header.find("__metadata__"), std::string::npos);
  EXPECT_TRUE(contains(
      header, R"("w":{"dtype":"F32","shape":[3],"data_offsets":[0,12]})"));
  EXPECT_TRUE(contains(
      header, R"("b":{"dtype":"I64","shape":[1],"data_offsets":[12,20]})"));
  EXPECT_EQ(bytes.substr(8 + headerSize, 4), littleEndian(0x3F800000, 4));

  std::map<std::string, std::string> metadata = {{"stale", "value"}};
  loadSafetensors(path("a.safetensors"), &metadata);
  EXPECT_TRUE(metadata.empty());
}

TEST_F(ArrayIOTest, SafetensorsRejectsBadSizes) {
  std::string tooShort = loadSafetensorsError("short.st", "abc");
  EXPECT_TRUE(contains(tooShort, path("short.st")));
  EXPECT_TRUE(contains(tooShort, "too short"));

  std::string pastEnd =
      loadSafetensorsError("past.st", littleEndian(1000, 8) + "{\"a\": 1}");
  EXPECT_TRUE(contains(pastEnd, path("past.st")));
  EXPECT_TRUE(contains(pastEnd, "header size 1000 extends past the end of "
                                "the file (16 bytes)"));

  std::string huge =
      loadSafetensorsError("huge.st", littleEndian(200'000'000, 8) + "{}");
  EXPECT_TRUE(contains(huge, path("huge.st")));
  EXPECT_TRUE(contains(huge, "exceeds the limit"));

  NamedArrays arrays;
  arrays.emplace_back("first", HostArray(DType::F32, {2}));
  arrays.emplace_back("second", HostArray(DType::F64, {4}));
  saveSafetensors(path("valid.st"), arrays);
  std::string valid = readBytes(path("valid.st"));
  std::string truncated =
      loadSafetensorsError("truncated.st", valid.substr(0, valid.size() - 5));
  EXPECT_TRUE(contains(truncated, path("truncated.st")));
  EXPECT_TRUE(contains(truncated, "tensor 'second'"));
  EXPECT_TRUE(contains(truncated, "data_offsets [8, 40] lie outside the data "
                                  "section of 35 bytes"));
}

TEST_F(ArrayIOTest, SafetensorsRejectsBadHeaders) {
  struct Case {
    const char *header;
    size_t dataBytes;
    std::vector<const char *> parts;
  };
  const Case cases[] = {
      {R"({"w": {"dtype": "F32", )", 0, {"not valid JSON"}},
      {R"([1, 2])", 0, {"header is not a JSON object"}},
      {R"({"w": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]}})",
       2,
       {"tensor 'w'", "unsupported dtype 'U8'"}},
      {R"({"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 12]}})",
       12,
       {"tensor 'w'", "span 12 bytes but F32[2, 2] needs 16 bytes"}},
      {R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
       4,
       {"tensor 'w'", "lie outside the data section of 4 bytes"}},
      {R"({"a": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]},
           "b": {"dtype": "F64", "shape": [1], "data_offsets": [4, 12]}})",
       12,
       {"tensor 'b' data [4, 12) overlaps tensor 'a' data [0, 8)"}},
      {R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
           "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]}})",
       12,
       {"data bytes [4, 8) before tensor 'b' belong to no tensor"}},
      {R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})",
       8,
       {"data section is 8 bytes but the tensors cover only 4"}},
      {R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
           "w": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
       8,
       {"duplicate tensor name 'w'"}},
      {R"({"w": {"dtype": "F32", "dtype": "F32", "shape": [1],
                 "data_offsets": [0, 4]}})",
       4,
       {"duplicate key 'dtype'"}},
      {R"({"w": {"dtype": "F32", "shape": [1]}})",
       4,
       {"tensor 'w'", "'data_offsets' must be two non-negative integers"}},
      {R"({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})",
       4,
       {"tensor 'w'", "not a list of non-negative integers"}},
      {R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4],
                 "extra": 1}})",
       4,
       {"tensor 'w'", "unexpected key 'extra'"}},
      {R"({"__metadata__": {"epoch": 3}})",
       0,
       {"metadata value for 'epoch' is not a string"}},
      {R"({"w": {"dtype": "BOOL", "shape": [2], "data_offsets": [0, 2]}})",
       0,
       {"tensor 'w'", "lie outside"}},
  };
  for (const Case &testCase : cases) {
    std::string message = loadSafetensorsError(
        "bad.st",
        safetensorsFile(testCase.header, std::string(testCase.dataBytes, 0)));
    EXPECT_TRUE(contains(message, path("bad.st"))) << testCase.header;
    for (const char *part : testCase.parts)
      EXPECT_TRUE(contains(message, part)) << testCase.header;
  }

  std::string badBool = loadSafetensorsError(
      "bool.st",
      safetensorsFile(
          R"({"flags": {"dtype": "BOOL", "shape": [2], "data_offsets": [0, 2]}})",
          std::string("\x00\x03", 2)));
  EXPECT_TRUE(contains(badBool, "tensor 'flags'"));
  EXPECT_TRUE(contains(badBool, "boolean element 1 has byte value 3"));

  // Metadata-only loading validates the header just the same.
  writeBytes(path("meta.st"),
             safetensorsFile(R"({"w": {"dtype": "I8", "shape": [],
                                       "data_offsets": [0, 1]}})",
                             "x"));
  EXPECT_TRUE(
      contains(errorFrom([&] { loadSafetensorsMetadata(path("meta.st")); }),
               "unsupported dtype 'I8'"));
}

TEST_F(ArrayIOTest, SafetensorsMissingFile) {
  std::string missing = path("nope.safetensors");
  EXPECT_EQ(errorFrom([&] { loadSafetensors(missing); }),
            "cannot open '" + missing + "': No such file or directory");
  EXPECT_EQ(errorFrom([&] { loadSafetensorsMetadata(missing); }),
            "cannot open '" + missing + "': No such file or directory");
}

TEST_F(ArrayIOTest, SafetensorsSaveRejectsBadNames) {
  NamedArrays duplicate;
  duplicate.emplace_back("w", HostArray(DType::F32, {1}));
  duplicate.emplace_back("w", HostArray(DType::F32, {1}));
  EXPECT_TRUE(
      contains(errorFrom([&] { saveSafetensors(path("a.st"), duplicate); }),
               "duplicate tensor name 'w'"));

  NamedArrays reserved;
  reserved.emplace_back("__metadata__", HostArray(DType::F32, {1}));
  EXPECT_TRUE(
      contains(errorFrom([&] { saveSafetensors(path("a.st"), reserved); }),
               "'__metadata__' is reserved"));
  EXPECT_TRUE(strayFiles("").empty());
}

//===----------------------------------------------------------------------===//
// Atomic saving
//===----------------------------------------------------------------------===//

TEST_F(ArrayIOTest, SaveReplacesExistingFile) {
  saveNpy(path("a.npy"), HostArray(DType::F32, {100}));
  HostArray replacement = HostArray::fromValues<int>(DType::I32, {2}, {4, 5});
  saveNpy(path("a.npy"), replacement);
  EXPECT_TRUE(sameArrays(replacement, loadNpy(path("a.npy"))));
  EXPECT_TRUE(strayFiles("a.npy").empty());
}

TEST_F(ArrayIOTest, FailedSaveLeavesExistingFileUntouched) {
  HostArray original = HostArray::fromValues<float>(DType::F32, {2}, {1, 2});
  NamedArrays originalNamed;
  originalNamed.emplace_back("w", original);
  saveNpy(path("a.npy"), original);
  saveSafetensors(path("a.safetensors"), originalNamed);
  std::string npyBefore = readBytes(path("a.npy"));
  std::string safetensorsBefore = readBytes(path("a.safetensors"));

  // A directory where the temporary file has to go makes creating it fail.
  std::string pid = std::to_string(getpid());
  fs::create_directory(path("a.npy.tmp." + pid));
  fs::create_directory(path("a.safetensors.tmp." + pid));
  HostArray replacement(DType::F64, {50});
  NamedArrays replacementNamed;
  replacementNamed.emplace_back("v", replacement);

  std::string npyError =
      errorFrom([&] { saveNpy(path("a.npy"), replacement); });
  EXPECT_TRUE(contains(npyError, "cannot write '" + path("a.npy") + "'"));
  std::string safetensorsError = errorFrom(
      [&] { saveSafetensors(path("a.safetensors"), replacementNamed); });
  EXPECT_TRUE(contains(safetensorsError,
                       "cannot write '" + path("a.safetensors") + "'"));
  EXPECT_EQ(readBytes(path("a.npy")), npyBefore);
  EXPECT_EQ(readBytes(path("a.safetensors")), safetensorsBefore);

  // A save that fails validation does not touch the file either.
  EXPECT_THROW(saveNpy(path("a.npy"), HostArray(DType::BF16, {3})), Error);
  EXPECT_EQ(readBytes(path("a.npy")), npyBefore);
}

TEST_F(ArrayIOTest, SaveOverDirectoryIsRefusedAndLeavesNothing) {
  // A directory is never a file's target: refused before a temporary file
  // is made, and the directory keeps its contents.
  fs::create_directories(path("target/child"));
  std::string message =
      errorFrom([&] { saveNpy(path("target"), HostArray(DType::F32, {4})); });
  EXPECT_TRUE(contains(message, "cannot write '" + path("target") + "'"));
  EXPECT_TRUE(contains(message, "it is a directory"));
  EXPECT_TRUE(strayFiles("target").empty());
  EXPECT_TRUE(fs::is_directory(path("target/child")));
}

TEST_F(ArrayIOTest, SaveIntoMissingDirectoryFails) {
  std::string target = path("no/such/dir/a.npy");
  std::string message =
      errorFrom([&] { saveNpy(target, HostArray(DType::F32, {1})); });
  EXPECT_TRUE(contains(message, "cannot write '" + target + "'"));
  EXPECT_TRUE(contains(message, "No such file or directory"));
  EXPECT_TRUE(contains(errorFrom([&] { saveSafetensors(target, {}); }),
                       "No such file or directory"));
}
