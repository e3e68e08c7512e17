//===- FashionMnist.cpp - Fashion-MNIST dataset loader --------------------===//
//
// IDX layout: a big-endian u32 magic (0x00000803 for rank-3 u8 images,
// 0x00000801 for rank-1 u8 labels), one big-endian u32 per dimension, then
// the u8 data. zlib's gz* functions read gzip files and, transparently,
// uncompressed ones.
//
//===----------------------------------------------------------------------===//

#include "models/common/FashionMnist.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sys/stat.h>
#include <vector>
#include <zlib.h>

namespace genesis::data {

namespace {

constexpr uint32_t kImagesMagic = 0x00000803;
constexpr uint32_t kLabelsMagic = 0x00000801;
constexpr uint32_t kImageSide = 28;
constexpr int64_t kPixelsPerImage = kImageSide * kImageSide;
constexpr int kNumClasses = 10;

struct GzCloser {
  void operator()(gzFile_s *file) const { gzclose(file); }
};

/// Sequential reader of one IDX file that turns every short read, zlib error
/// or unexpected byte into an Error naming the file.
class IdxReader {
public:
  explicit IdxReader(const std::string &path) : path_(path) {
    errno = 0;
    file_.reset(gzopen(path.c_str(), "rb"));
    if (!file_) {
      // errno is saved before building a message, which may allocate.
      int savedErrno = errno;
      throw Error("cannot open '" + path + "': " +
                  (savedErrno ? std::strerror(savedErrno) : "gzopen failed"));
    }
  }

  const std::string &path() const { return path_; }

  uint32_t readBigEndian32(const char *what) {
    uint8_t bytes[4];
    readExactly(bytes, sizeof(bytes), what);
    return uint32_t(bytes[0]) << 24 | uint32_t(bytes[1]) << 16 |
           uint32_t(bytes[2]) << 8 | uint32_t(bytes[3]);
  }

  void expectMagic(uint32_t expected) {
    uint32_t magic = readBigEndian32("magic number");
    if (magic != expected)
      fail("bad magic number 0x" + hex(magic) + " (expected 0x" +
           hex(expected) + ")");
  }

  /// Reads `count` bytes in bounded chunks, so that a corrupt header
  /// claiming a huge count fails on the short data instead of first
  /// allocating memory for it.
  std::vector<uint8_t> readBytes(uint64_t count, const char *what) {
    constexpr uint64_t kChunk = 1 << 20;
    std::vector<uint8_t> bytes;
    while (bytes.size() < count) {
      size_t done = bytes.size();
      size_t chunk = static_cast<size_t>(std::min(count - done, kChunk));
      bytes.resize(done + chunk);
      readExactly(bytes.data() + done, chunk, what, done, count);
    }
    return bytes;
  }

  /// Requires a clean end of file. Reading up to it makes zlib verify the
  /// gzip trailer's checksum and length, and a missing trailer shows up as
  /// an error state (Z_BUF_ERROR) on an otherwise empty read.
  void expectEnd() {
    uint8_t extra;
    int got = gzread(file_.get(), &extra, 1);
    if (got > 0)
      fail("unexpected data after the expected contents");
    if (got < 0 || errorCode() != Z_OK)
      fail(zlibError());
  }

private:
  std::string where() const { return "IDX file '" + path_ + "'"; }

  [[noreturn]] void fail(const std::string &problem) const {
    throw Error(where() + ": " + problem);
  }

  static std::string hex(uint32_t value) {
    char text[9];
    std::snprintf(text, sizeof(text), "%08x", value);
    return text;
  }

  int errorCode() {
    int code = Z_OK;
    gzerror(file_.get(), &code);
    return code;
  }

  /// Callers call this before building anything else of their message, so
  /// that errno is still the one from the failed read.
  std::string zlibError() {
    int code = Z_OK;
    const char *message = gzerror(file_.get(), &code);
    if (code == Z_ERRNO)
      return std::strerror(errno);
    return message && *message ? message : "read error";
  }

  /// `offset` and `total` place this read inside a larger one, for the
  /// message when the file is truncated.
  void readExactly(uint8_t *buffer, size_t count, const char *what,
                   uint64_t offset = 0, uint64_t total = 0) {
    size_t done = 0;
    while (done < count) {
      int got = gzread(file_.get(), buffer + done,
                       static_cast<unsigned>(count - done));
      if (got < 0)
        fail(zlibError() + " while reading " + what);
      if (got == 0) {
        std::string detail =
            errorCode() != Z_OK ? " (" + zlibError() + ")" : "";
        fail(std::string("truncated: ") + what + " needs " +
             std::to_string(total ? total : count) + " bytes but only " +
             std::to_string(offset + done) + " could be read" + detail);
      }
      done += static_cast<size_t>(got);
    }
  }

  std::string path_;
  std::unique_ptr<gzFile_s, GzCloser> file_;
};

/// `<dir>/<name>.gz`, or the uncompressed `<dir>/<name>` when only that
/// exists.
std::string idxPath(const std::string &dir, const std::string &name) {
  std::string base =
      dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
  struct stat info;
  std::string compressed = base + ".gz";
  if (stat(compressed.c_str(), &info) != 0 && stat(base.c_str(), &info) == 0)
    return base;
  return compressed;
}

} // namespace

std::string defaultFashionMnistDir() {
  const char *overridden = std::getenv("GENESIS_FASHION_MNIST_DIR");
  if (overridden && *overridden)
    return overridden;
  return "/usr/share/datasets/fashion-mnist";
}

Dataset loadFashionMnist(const std::string &split, const std::string &dir) {
  if (split != "train" && split != "test")
    throw Error("unknown Fashion-MNIST split '" + split +
                "' (expected 'train' or 'test')");
  std::string prefix = split == "train" ? "train" : "t10k";

  IdxReader images(idxPath(dir, prefix + "-images-idx3-ubyte"));
  images.expectMagic(kImagesMagic);
  uint32_t imageCount = images.readBigEndian32("image count");
  uint32_t rows = images.readBigEndian32("row count");
  uint32_t columns = images.readBigEndian32("column count");
  if (rows != kImageSide || columns != kImageSide)
    throw Error("IDX file '" + images.path() + "': images are " +
                std::to_string(rows) + "x" + std::to_string(columns) +
                ", expected 28x28");

  IdxReader labels(idxPath(dir, prefix + "-labels-idx1-ubyte"));
  labels.expectMagic(kLabelsMagic);
  uint32_t labelCount = labels.readBigEndian32("label count");
  if (labelCount != imageCount)
    throw Error("IDX files '" + images.path() + "' and '" + labels.path() +
                "' disagree: " + std::to_string(imageCount) + " images but " +
                std::to_string(labelCount) + " labels");

  std::vector<uint8_t> pixels =
      images.readBytes(uint64_t(imageCount) * kPixelsPerImage, "pixel data");
  images.expectEnd();
  std::vector<uint8_t> labelBytes = labels.readBytes(labelCount, "labels");
  labels.expectEnd();

  Dataset dataset{HostArray(DType::F32, {imageCount, kPixelsPerImage}),
                  HostArray(DType::I64, {labelCount})};
  float *imageData = dataset.images.dataAs<float>();
  for (size_t i = 0; i < pixels.size(); ++i)
    imageData[i] = static_cast<float>(pixels[i]) / 255.0f;
  int64_t *labelData = dataset.labels.dataAs<int64_t>();
  for (size_t i = 0; i < labelBytes.size(); ++i) {
    if (labelBytes[i] >= kNumClasses)
      throw Error("IDX file '" + labels.path() + "': label " +
                  std::to_string(i) + " is " + std::to_string(labelBytes[i]) +
                  ", expected 0..9");
    labelData[i] = labelBytes[i];
  }
  return dataset;
}

HostArray batchOf(const HostArray &array, int64_t start, int64_t count) {
  if (array.rank() == 0)
    throw Error("batchOf: cannot take rows of scalar " + array.typeString());
  int64_t available = array.shape()[0];
  if (start < 0 || count < 0 || start > available || count > available - start)
    throw Error("batchOf: " + std::to_string(count) + " rows from row " +
                std::to_string(start) + " are out of range for " +
                array.typeString());
  std::vector<int64_t> shape = array.shape();
  shape[0] = count;
  HostArray batch(array.dtype(), std::move(shape));
  if (batch.nbytes() != 0) {
    size_t rowBytes = batch.nbytes() / static_cast<size_t>(count);
    std::memcpy(batch.data(),
                static_cast<const uint8_t *>(array.data()) + start * rowBytes,
                batch.nbytes());
  }
  return batch;
}

} // namespace genesis::data
