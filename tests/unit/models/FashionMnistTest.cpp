//===- FashionMnistTest.cpp - Tests for the Fashion-MNIST loader ----------===//

#include "models/common/FashionMnist.h"

#include <gtest/gtest.h>

#include "tests/unit/TestSupport.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <unistd.h>
#include <zlib.h>

using namespace genesis;
using namespace genesis::test;
using namespace genesis::data;
namespace fs = std::filesystem;

namespace {

const std::string kSystemDir = "/usr/share/datasets/fashion-mnist";

std::string bigEndian32(uint32_t value) {
  return {static_cast<char>(value >> 24), static_cast<char>(value >> 16),
          static_cast<char>(value >> 8), static_cast<char>(value)};
}

std::string imagesIdx(uint32_t count, const std::string &pixels,
                      uint32_t side = 28) {
  return bigEndian32(0x803) + bigEndian32(count) + bigEndian32(side) +
         bigEndian32(side) + pixels;
}

std::string labelsIdx(const std::string &labels, uint32_t magic = 0x801) {
  return bigEndian32(magic) +
         bigEndian32(static_cast<uint32_t>(labels.size())) + labels;
}

void writePlain(const std::string &path, const std::string &bytes) {
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  stream.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(stream.good()) << path;
}

void writeGzip(const std::string &path, const std::string &bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr) << path;
  ASSERT_EQ(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
}

std::string readFile(const std::string &path) {
  std::ifstream stream(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(stream), {}};
}

/// Three 28x28 images: all 0, all 255, all 51.
std::string threeImages() {
  return std::string(784, '\0') + std::string(784, '\xff') +
         std::string(784, '\x33');
}

class FashionMnistTest : public ::testing::Test {
protected:
  void SetUp() override {
    const auto *test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = (fs::path(::testing::TempDir()) /
            ("genesis_fmnist_" + std::to_string(getpid()) + "_" + test->name()))
               .string();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string &name) const { return dir_ + "/" + name; }

  std::string dir_;
};

void expectBalancedClasses(const Dataset &dataset, int64_t perClass) {
  std::vector<int64_t> counts(10, 0);
  const int64_t *labels = dataset.labels.dataAs<int64_t>();
  for (int64_t i = 0; i < dataset.labels.numel(); ++i) {
    ASSERT_GE(labels[i], 0);
    ASSERT_LT(labels[i], 10);
    ++counts[labels[i]];
  }
  EXPECT_EQ(counts, std::vector<int64_t>(10, perClass));
}

} // namespace

TEST(FashionMnistRealDataTest, TestSplit) {
  Dataset test = loadFashionMnist("test", kSystemDir);
  EXPECT_EQ(test.images.typeString(), "f32[10000, 784]");
  EXPECT_EQ(test.labels.typeString(), "i64[10000]");
  expectBalancedClasses(test, 1000);

  // The first labels and the raw pixel sums, as numpy computes them from the
  // same files.
  const int64_t *labels = test.labels.dataAs<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(labels, labels + 10),
            (std::vector<int64_t>{9, 2, 1, 1, 6, 1, 4, 6, 5, 7}));
  const float *pixels = test.images.dataAs<float>();
  int64_t rawSum = 0;
  int64_t firstImageRawSum = 0;
  float lowest = 1, highest = 0;
  for (int64_t i = 0; i < test.images.numel(); ++i) {
    lowest = std::min(lowest, pixels[i]);
    highest = std::max(highest, pixels[i]);
    long raw = std::lround(pixels[i] * 255.0f);
    ASSERT_EQ(pixels[i], static_cast<float>(raw) / 255.0f) << i;
    rawSum += raw;
    if (i < 784)
      firstImageRawSum += raw;
  }
  EXPECT_EQ(lowest, 0.0f);
  EXPECT_EQ(highest, 1.0f);
  EXPECT_EQ(rawSum, 573469082);
  EXPECT_EQ(firstImageRawSum, 33456);
}

TEST(FashionMnistRealDataTest, TrainSplit) {
  Dataset train = loadFashionMnist("train", kSystemDir);
  EXPECT_EQ(train.images.typeString(), "f32[60000, 784]");
  EXPECT_EQ(train.labels.typeString(), "i64[60000]");
  expectBalancedClasses(train, 6000);
}

TEST(FashionMnistRealDataTest, BatchOfCopiesRows) {
  Dataset test = loadFashionMnist("test", kSystemDir);
  HostArray images = batchOf(test.images, 9990, 10);
  HostArray labels = batchOf(test.labels, 9990, 10);
  EXPECT_EQ(images.typeString(), "f32[10, 784]");
  EXPECT_EQ(labels.typeString(), "i64[10]");
  for (int64_t i = 0; i < images.numel(); ++i)
    ASSERT_EQ(images.dataAs<float>()[i],
              test.images.dataAs<float>()[9990 * 784 + i]);
  for (int64_t i = 0; i < 10; ++i)
    EXPECT_EQ(labels.getInt(i), test.labels.getInt(9990 + i));

  EXPECT_EQ(batchOf(test.labels, 10000, 0).typeString(), "i64[0]");
  std::string message = errorFrom([&] { batchOf(test.images, 9995, 10); });
  EXPECT_TRUE(contains(message, "10 rows from row 9995 are out of range"));
  EXPECT_TRUE(contains(message, "f32[10000, 784]"));
  EXPECT_THROW(batchOf(test.labels, -1, 2), Error);
  EXPECT_THROW(batchOf(test.labels, 0, -1), Error);
  EXPECT_THROW(batchOf(test.labels, std::numeric_limits<int64_t>::max(), 1),
               Error);
  EXPECT_THROW(batchOf(HostArray(DType::F32, {}), 0, 1), Error);
}

TEST_F(FashionMnistTest, ReadsPlainFilesFromOverriddenDirectory) {
  writePlain(path("t10k-images-idx3-ubyte"), imagesIdx(3, threeImages()));
  writePlain(path("t10k-labels-idx1-ubyte"),
             labelsIdx(std::string("\x09\x00\x04", 3)));
  const char *previous = std::getenv("GENESIS_FASHION_MNIST_DIR");
  std::string saved = previous ? previous : "";
  ASSERT_EQ(setenv("GENESIS_FASHION_MNIST_DIR", dir_.c_str(), 1), 0);
  EXPECT_EQ(defaultFashionMnistDir(), dir_);
  Dataset dataset = loadFashionMnist("test");
  if (previous)
    setenv("GENESIS_FASHION_MNIST_DIR", saved.c_str(), 1);
  else
    unsetenv("GENESIS_FASHION_MNIST_DIR");

  EXPECT_EQ(dataset.images.typeString(), "f32[3, 784]");
  EXPECT_EQ(dataset.images.getDouble(5), 0.0);
  EXPECT_EQ(dataset.images.getDouble(784 + 5), 1.0);
  EXPECT_EQ(dataset.images.dataAs<float>()[2 * 784 + 5], 0.2f);
  EXPECT_EQ(dataset.labels.getInt(0), 9);
  EXPECT_EQ(dataset.labels.getInt(1), 0);
  EXPECT_EQ(dataset.labels.getInt(2), 4);
}

TEST_F(FashionMnistTest, TruncatedGzipNamesTheFile) {
  // A real file cut short in the middle of the compressed pixel data.
  std::string realImages = readFile(kSystemDir + "/t10k-images-idx3-ubyte.gz");
  ASSERT_GT(realImages.size(), 100000u);
  writePlain(path("t10k-images-idx3-ubyte.gz"), realImages.substr(0, 100000));
  writePlain(path("t10k-labels-idx1-ubyte.gz"),
             readFile(kSystemDir + "/t10k-labels-idx1-ubyte.gz"));
  std::string message = errorFrom([&] { loadFashionMnist("test", dir_); });
  EXPECT_TRUE(contains(message, path("t10k-images-idx3-ubyte.gz")));
  EXPECT_TRUE(contains(message, "truncated: pixel data needs 7840000 bytes"));

  // Only the gzip trailer (checksum and length) missing: all the data
  // decompresses, but the file is still incomplete.
  writeGzip(path("t10k-images-idx3-ubyte.gz"), imagesIdx(3, threeImages()));
  writeGzip(path("full-labels.gz"), labelsIdx(std::string(3, '\x01')));
  std::string labels = readFile(path("full-labels.gz"));
  writePlain(path("t10k-labels-idx1-ubyte.gz"),
             labels.substr(0, labels.size() - 8));
  message = errorFrom([&] { loadFashionMnist("test", dir_); });
  EXPECT_TRUE(contains(message, path("t10k-labels-idx1-ubyte.gz")));
  EXPECT_TRUE(contains(message, "unexpected end of file"));
}

TEST_F(FashionMnistTest, CorruptedGzipNamesTheFile) {
  writeGzip(path("t10k-images-idx3-ubyte.gz"), imagesIdx(3, threeImages()));
  writeGzip(path("t10k-labels-idx1-ubyte.gz"),
            labelsIdx(std::string(3, '\x01')));
  std::string labels = readFile(path("t10k-labels-idx1-ubyte.gz"));
  labels[labels.size() - 6] ^= 0x55; // inside the CRC-32 of the trailer
  writePlain(path("t10k-labels-idx1-ubyte.gz"), labels);
  std::string message = errorFrom([&] { loadFashionMnist("test", dir_); });
  EXPECT_TRUE(contains(message, path("t10k-labels-idx1-ubyte.gz")));
  EXPECT_TRUE(contains(message, "incorrect data check"));
}

TEST_F(FashionMnistTest, RejectsInconsistentFiles) {
  std::string images = path("t10k-images-idx3-ubyte.gz");
  std::string labels = path("t10k-labels-idx1-ubyte.gz");
  auto loadError = [&] {
    return errorFrom([&] { loadFashionMnist("test", dir_); });
  };

  writeGzip(images, imagesIdx(3, threeImages()));
  writeGzip(labels, labelsIdx(std::string(3, '\x01'), 0x803));
  std::string message = loadError();
  EXPECT_TRUE(contains(message, labels));
  EXPECT_TRUE(
      contains(message, "bad magic number 0x00000803 (expected 0x00000801)"));

  writeGzip(labels, labelsIdx(std::string(2, '\x01')));
  message = loadError();
  EXPECT_TRUE(contains(message, images));
  EXPECT_TRUE(contains(message, labels));
  EXPECT_TRUE(contains(message, "3 images but 2 labels"));

  writeGzip(labels, labelsIdx(std::string("\x01\x0a\x02", 3)));
  message = loadError();
  EXPECT_TRUE(contains(message, labels));
  EXPECT_TRUE(contains(message, "label 1 is 10, expected 0..9"));

  writeGzip(labels, labelsIdx(std::string(3, '\x01')) + "extra");
  message = loadError();
  EXPECT_TRUE(contains(message, labels));
  EXPECT_TRUE(contains(message, "unexpected data after"));

  writeGzip(images, imagesIdx(3, std::string(3 * 16 * 16, '\0'), 16));
  message = loadError();
  EXPECT_TRUE(contains(message, images));
  EXPECT_TRUE(contains(message, "images are 16x16, expected 28x28"));

  writeGzip(images, bigEndian32(0x803) + bigEndian32(3));
  message = loadError();
  EXPECT_TRUE(contains(message, images));
  EXPECT_TRUE(contains(message, "truncated: row count needs 4 bytes"));
}

TEST_F(FashionMnistTest, MissingFilesAndUnknownSplits) {
  std::string missing = path("t10k-images-idx3-ubyte.gz");
  EXPECT_EQ(errorFrom([&] { loadFashionMnist("test", dir_); }),
            "cannot open '" + missing + "': No such file or directory");
  EXPECT_TRUE(contains(errorFrom([&] { loadFashionMnist("validation"); }),
                       "unknown Fashion-MNIST split 'validation'"));
}
