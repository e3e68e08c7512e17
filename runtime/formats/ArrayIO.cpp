//===- ArrayIO.cpp - Reading and writing .npy and .safetensors ------------===//

#include "runtime/formats/ArrayIO.h"
#include "runtime/formats/AtomicFile.h"
#include "runtime/formats/Json.h"
#include "runtime/support/Strings.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <sys/stat.h>
#include <tuple>

// Tensor bytes are copied between files and memory unchanged, and both
// formats are little-endian.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "ArrayIO assumes a little-endian host");

namespace genesis {

namespace {

//===----------------------------------------------------------------------===//
// File helpers
//===----------------------------------------------------------------------===//

struct FileCloser {
  void operator()(std::FILE *file) const { std::fclose(file); }
};

/// A regular file opened for reading, with its size known up front so that
/// every length read from the file can be checked against it.
class InputFile {
public:
  explicit InputFile(const std::string &path) : path_(path) {
    // errno is saved before building a message, which may allocate.
    file_.reset(std::fopen(path.c_str(), "rb"));
    struct stat info;
    if (!file_ || fstat(fileno(file_.get()), &info) != 0) {
      int savedErrno = errno;
      throw Error("cannot open '" + path + "': " + std::strerror(savedErrno));
    }
    if (!S_ISREG(info.st_mode))
      throw Error("cannot open '" + path + "': not a regular file");
    size_ = static_cast<uint64_t>(info.st_size);
  }

  uint64_t size() const { return size_; }

  /// Reads exactly `count` bytes at `offset`. Callers have checked that the
  /// range lies inside the file, so a short read means an I/O error or a
  /// file changed underneath us.
  void readAt(uint64_t offset, void *buffer, uint64_t count) {
    if (count == 0)
      return;
    if (fseeko(file_.get(), static_cast<off_t>(offset), SEEK_SET) != 0 ||
        std::fread(buffer, 1, count, file_.get()) != count) {
      int savedErrno = errno;
      throw Error("cannot read '" + path_ + "': " +
                  (std::ferror(file_.get()) ? std::strerror(savedErrno)
                                            : "unexpected end of file"));
    }
  }

private:
  std::string path_;
  std::unique_ptr<std::FILE, FileCloser> file_;
  uint64_t size_ = 0;
};

/// i1 data must hold only 0 and 1; any other byte would break the invariant
/// HostArray relies on, so it is rejected at load time.
void checkBooleanBytes(const HostArray &array, const std::string &where) {
  const auto *bytes = static_cast<const uint8_t *>(array.data());
  for (int64_t i = 0; i < array.numel(); ++i)
    if (bytes[i] > 1)
      throw Error(where + ": boolean element " + std::to_string(i) +
                  " has byte value " + std::to_string(bytes[i]) +
                  " (expected 0 or 1)");
}

/// Number of data bytes for `shape` of `dtype`, or an Error prefixed with
/// `where` when the shape is invalid or the byte count overflows.
uint64_t byteCountOf(DType dtype, const std::vector<int64_t> &shape,
                     const std::string &where) {
  int64_t numel;
  try {
    numel = HostArray::numelOf(shape);
  } catch (const Error &error) {
    throw Error(where + ": " + error.what());
  }
  uint64_t bytes;
  if (__builtin_mul_overflow(static_cast<uint64_t>(numel), dtypeSize(dtype),
                             &bytes))
    throw Error(where + ": byte size of " + dtypeName(dtype) +
                shapeString(shape) + " overflows");
  return bytes;
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr size_t kNpyMagicSize = 6;
constexpr size_t kNpyAlignment = 64;

std::string npyWhere(const std::string &path) {
  return "npy file '" + path + "'";
}

struct NpyHeader {
  std::string descr;
  bool fortranOrder;
  std::vector<int64_t> shape;
};

/// Strict parser for the Python dict literal of an .npy header, e.g.
/// "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }".
/// It accepts exactly the literal forms numpy writes (and minor whitespace
/// variations) and requires exactly the three standard keys.
class NpyHeaderParser {
public:
  NpyHeaderParser(std::string_view text, const std::string &path)
      : text_(text), path_(path) {}

  NpyHeader parse() {
    std::optional<std::string> descr;
    std::optional<bool> fortranOrder;
    std::optional<std::vector<int64_t>> shape;

    skipSpaces();
    expect('{');
    skipSpaces();
    while (!consume('}')) {
      std::string key = parseString();
      skipSpaces();
      expect(':');
      skipSpaces();
      if (key == "descr" && !descr)
        descr = parseString();
      else if (key == "fortran_order" && !fortranOrder)
        fortranOrder = parseBool();
      else if (key == "shape" && !shape)
        shape = parseShape();
      else if (key == "descr" || key == "fortran_order" || key == "shape")
        fail("duplicate key '" + key + "'");
      else
        fail("unexpected key '" + key + "'");
      skipSpaces();
      if (!consume(',')) {
        expect('}');
        break;
      }
      skipSpaces();
    }
    skipSpaces();
    if (pos_ != text_.size())
      fail("unexpected text after the dictionary");
    if (!descr || !fortranOrder || !shape)
      fail(std::string("missing key '") +
           (!descr          ? "descr"
            : !fortranOrder ? "fortran_order"
                            : "shape") +
           "'");
    return {*descr, *fortranOrder, *shape};
  }

private:
  [[noreturn]] void fail(const std::string &problem) const {
    throw Error(npyWhere(path_) + ": malformed header at character " +
                std::to_string(pos_) + ": " + problem);
  }

  bool atEnd() const { return pos_ >= text_.size(); }

  void skipSpaces() {
    while (!atEnd() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                        text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }

  bool consume(char expected) {
    if (atEnd() || text_[pos_] != expected)
      return false;
    ++pos_;
    return true;
  }

  void expect(char expected) {
    if (!consume(expected))
      fail(std::string("expected '") + expected + "'");
  }

  bool consumeWord(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word)
      return false;
    pos_ += word.size();
    return true;
  }

  /// A quoted string without escapes (none of the values numpy writes need
  /// them).
  std::string parseString() {
    if (atEnd() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      fail("expected a quoted string");
    char quote = text_[pos_++];
    size_t start = pos_;
    while (!atEnd() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' || text_[pos_] == '\n')
        fail("unsupported character in string");
      ++pos_;
    }
    if (atEnd())
      fail("unterminated string");
    std::string result(text_.substr(start, pos_ - start));
    ++pos_;
    return result;
  }

  bool parseBool() {
    if (consumeWord("True"))
      return true;
    if (consumeWord("False"))
      return false;
    fail("expected True or False");
  }

  /// A tuple of non-negative integers: "()", "(5,)", "(3, 4)", "(3, 4,)".
  std::vector<int64_t> parseShape() {
    std::vector<int64_t> shape;
    expect('(');
    skipSpaces();
    bool sawComma = false;
    while (!consume(')')) {
      shape.push_back(parseDimension());
      skipSpaces();
      sawComma = consume(',');
      skipSpaces();
      if (!sawComma) {
        expect(')');
        break;
      }
    }
    // In Python "(5)" is the integer 5, not a tuple.
    if (shape.size() == 1 && !sawComma)
      fail("one-element shape tuple needs a trailing comma");
    return shape;
  }

  int64_t parseDimension() {
    if (atEnd() || !std::isdigit(static_cast<unsigned char>(text_[pos_])))
      fail("expected a non-negative integer dimension");
    int64_t value = 0;
    while (!atEnd() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, text_[pos_] - '0', &value))
        fail("dimension does not fit in int64");
      ++pos_;
    }
    return value;
  }

  std::string_view text_;
  const std::string &path_;
  size_t pos_ = 0;
};

DType dtypeFromNpyDescr(const std::string &descr, const std::string &path) {
  static const std::pair<const char *, DType> kDescrs[] = {
      {"<f2", DType::F16}, {"<f4", DType::F32}, {"<f8", DType::F64},
      {"<i4", DType::I32}, {"<i8", DType::I64}, {"|b1", DType::I1},
      {"?", DType::I1}};
  for (const auto &[name, dtype] : kDescrs)
    if (descr == name)
      return dtype;
  if (descr.size() > 1 && descr[0] == '>')
    throw Error(npyWhere(path) + ": big-endian dtype '" + descr +
                "' is not supported");
  throw Error(npyWhere(path) + ": unsupported dtype '" + descr +
              "' (supported: <f2, <f4, <f8, <i4, <i8, |b1)");
}

const char *npyDescrOf(DType dtype, const std::string &path) {
  switch (dtype) {
  case DType::F16:
    return "<f2";
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  case DType::I1:
    return "|b1";
  case DType::BF16:
    break;
  }
  throw Error("cannot save bf16 array to '" + path +
              "': .npy has no bfloat16 dtype; use saveSafetensors instead");
}

std::string npyShapeTuple(const std::vector<int64_t> &shape) {
  std::string tuple = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      tuple += ", ";
    tuple += std::to_string(shape[i]);
  }
  return tuple + (shape.size() == 1 ? ",)" : ")");
}

uint32_t readLittleEndian(const uint8_t *bytes, size_t count) {
  uint32_t value = 0;
  for (size_t i = 0; i < count; ++i)
    value |= uint32_t(bytes[i]) << (8 * i);
  return value;
}

//===----------------------------------------------------------------------===//
// .safetensors
//===----------------------------------------------------------------------===//

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

constexpr uint64_t kMaxSafetensorsHeaderSize = 100'000'000;
constexpr char kMetadataKey[] = "__metadata__";

std::string safetensorsWhere(const std::string &path) {
  return "safetensors file '" + path + "'";
}

constexpr std::pair<const char *, DType> kSafetensorsDTypes[] = {
    {"F32", DType::F32}, {"F16", DType::F16}, {"BF16", DType::BF16},
    {"F64", DType::F64}, {"BOOL", DType::I1}, {"I32", DType::I32},
    {"I64", DType::I64}};

const char *safetensorsDTypeName(DType dtype) {
  for (const auto &[name, candidate] : kSafetensorsDTypes)
    if (candidate == dtype)
      return name;
  return "?";
}

struct SafetensorsEntry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin;
  uint64_t end;
};

struct SafetensorsHeader {
  /// Sorted by data offset.
  std::vector<SafetensorsEntry> entries;
  std::map<std::string, std::string> metadata;
  uint64_t dataStart;
};

std::optional<uint64_t> jsonAsUnsigned(const Json &value) {
  if (value.is_number_unsigned())
    return value.get<uint64_t>();
  return std::nullopt;
}

/// Parses the JSON header, rejecting duplicate keys at any depth (nlohmann
/// would otherwise silently keep only one of them).
Json parseHeaderJson(const std::string &text, const std::string &where) {
  std::vector<std::set<std::string>> openObjects;
  auto rejectDuplicateKeys = [&](int depth, Json::parse_event_t event,
                                 Json &parsed) {
    if (event == Json::parse_event_t::object_start) {
      openObjects.emplace_back();
    } else if (event == Json::parse_event_t::object_end) {
      openObjects.pop_back();
    } else if (event == Json::parse_event_t::key) {
      const auto &key = parsed.get_ref<const std::string &>();
      if (!openObjects.back().insert(key).second)
        throw Error(
            where +
            (depth == 1 ? ": duplicate tensor name '" : ": duplicate key '") +
            key + "' in header");
    }
    return true;
  };
  return parseJson(text, where + ": header", rejectDuplicateKeys);
}

SafetensorsEntry parseTensorEntry(const std::string &name, const Json &info,
                                  uint64_t dataSize, const std::string &where) {
  std::string tensorWhere = where + ": tensor '" + name + "'";
  if (!info.is_object())
    throw Error(tensorWhere + ": entry is not a JSON object");
  for (const auto &[key, value] : info.items())
    if (key != "dtype" && key != "shape" && key != "data_offsets")
      throw Error(tensorWhere + ": unexpected key '" + key + "'");

  auto dtypeIt = info.find("dtype");
  if (dtypeIt == info.end() || !dtypeIt->is_string())
    throw Error(tensorWhere + ": missing or non-string 'dtype'");
  const auto &dtypeText = dtypeIt->get_ref<const std::string &>();
  std::optional<DType> dtype;
  for (const auto &[candidateName, candidate] : kSafetensorsDTypes)
    if (dtypeText == candidateName)
      dtype = candidate;
  if (!dtype)
    throw Error(tensorWhere + ": unsupported dtype '" + dtypeText +
                "' (supported: F32, F16, BF16, F64, BOOL, I32, I64)");

  auto shapeIt = info.find("shape");
  if (shapeIt == info.end() || !shapeIt->is_array())
    throw Error(tensorWhere + ": missing or non-array 'shape'");
  std::vector<int64_t> shape;
  for (const Json &dim : *shapeIt) {
    std::optional<uint64_t> value = jsonAsUnsigned(dim);
    if (!value || *value > uint64_t(INT64_MAX))
      throw Error(tensorWhere + ": shape " + shapeIt->dump() +
                  " is not a list of non-negative integers");
    shape.push_back(static_cast<int64_t>(*value));
  }

  auto offsetsIt = info.find("data_offsets");
  std::optional<uint64_t> begin, end;
  if (offsetsIt != info.end() && offsetsIt->is_array() &&
      offsetsIt->size() == 2) {
    begin = jsonAsUnsigned((*offsetsIt)[0]);
    end = jsonAsUnsigned((*offsetsIt)[1]);
  }
  if (!begin || !end)
    throw Error(tensorWhere +
                ": 'data_offsets' must be two non-negative integers");
  if (*begin > *end || *end > dataSize)
    throw Error(tensorWhere + ": data_offsets [" + std::to_string(*begin) +
                ", " + std::to_string(*end) +
                "] lie outside the data section of " +
                std::to_string(dataSize) + " bytes");
  uint64_t expectedBytes = byteCountOf(*dtype, shape, tensorWhere);
  if (*end - *begin != expectedBytes)
    throw Error(tensorWhere + ": data_offsets span " +
                std::to_string(*end - *begin) + " bytes but " + dtypeText +
                shapeString(shape) + " needs " + std::to_string(expectedBytes) +
                " bytes");
  return {name, *dtype, std::move(shape), *begin, *end};
}

std::map<std::string, std::string> parseMetadata(const Json &value,
                                                 const std::string &where) {
  if (!value.is_object())
    throw Error(where + ": '__metadata__' is not a JSON object");
  std::map<std::string, std::string> metadata;
  for (const auto &[key, entry] : value.items()) {
    if (!entry.is_string())
      throw Error(where + ": metadata value for '" + key + "' is not a string");
    metadata[key] = entry.get<std::string>();
  }
  return metadata;
}

SafetensorsHeader readSafetensorsHeader(InputFile &file,
                                        const std::string &path) {
  std::string where = safetensorsWhere(path);
  if (file.size() < 8)
    throw Error(where + ": file is " + std::to_string(file.size()) +
                " bytes, too short for the 8-byte header size");
  uint8_t sizeBytes[8];
  file.readAt(0, sizeBytes, 8);
  uint64_t headerSize = 0;
  for (int i = 0; i < 8; ++i)
    headerSize |= uint64_t(sizeBytes[i]) << (8 * i);
  if (headerSize > kMaxSafetensorsHeaderSize)
    throw Error(where + ": header size " + std::to_string(headerSize) +
                " exceeds the limit of " +
                std::to_string(kMaxSafetensorsHeaderSize) + " bytes");
  if (headerSize > file.size() - 8)
    throw Error(where + ": header size " + std::to_string(headerSize) +
                " extends past the end of the file (" +
                std::to_string(file.size()) + " bytes)");

  std::string text(headerSize, '\0');
  file.readAt(8, text.data(), headerSize);
  Json header = parseHeaderJson(text, where);
  if (!header.is_object())
    throw Error(where + ": header is not a JSON object");

  SafetensorsHeader result;
  result.dataStart = 8 + headerSize;
  uint64_t dataSize = file.size() - result.dataStart;
  for (const auto &[name, info] : header.items()) {
    if (name == kMetadataKey)
      result.metadata = parseMetadata(info, where);
    else
      result.entries.push_back(parseTensorEntry(name, info, dataSize, where));
  }

  // Like the reference implementation, require the tensors to tile the data
  // section exactly: no overlaps, no holes, no trailing bytes.
  std::sort(result.entries.begin(), result.entries.end(),
            [](const SafetensorsEntry &a, const SafetensorsEntry &b) {
              return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
            });
  uint64_t covered = 0;
  const SafetensorsEntry *previous = nullptr;
  for (const SafetensorsEntry &entry : result.entries) {
    if (entry.begin < covered)
      throw Error(where + ": tensor '" + entry.name + "' data [" +
                  std::to_string(entry.begin) + ", " +
                  std::to_string(entry.end) + ") overlaps tensor '" +
                  previous->name + "' data [" +
                  std::to_string(previous->begin) + ", " +
                  std::to_string(previous->end) + ")");
    if (entry.begin > covered)
      throw Error(where + ": data bytes [" + std::to_string(covered) + ", " +
                  std::to_string(entry.begin) + ") before tensor '" +
                  entry.name + "' belong to no tensor");
    covered = entry.end;
    previous = &entry;
  }
  if (covered != dataSize)
    throw Error(where + ": data section is " + std::to_string(dataSize) +
                " bytes but the tensors cover only " + std::to_string(covered));
  return result;
}

} // namespace

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

HostArray loadNpy(const std::string &path) {
  InputFile file(path);
  std::string where = npyWhere(path);

  uint8_t prefix[12];
  constexpr size_t kVersionedPrefix = kNpyMagicSize + 2;
  if (file.size() < kVersionedPrefix)
    throw Error(where + ": bad magic: file is only " +
                std::to_string(file.size()) + " bytes");
  file.readAt(0, prefix, kVersionedPrefix);
  if (std::memcmp(prefix, kNpyMagic, kNpyMagicSize) != 0)
    throw Error(where + ": bad magic: not an .npy file");
  uint8_t major = prefix[kNpyMagicSize];
  uint8_t minor = prefix[kNpyMagicSize + 1];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    throw Error(where + ": unsupported format version " +
                std::to_string(major) + "." + std::to_string(minor));

  // Version 1.0 stores a 2-byte header length, later versions 4 bytes.
  size_t lengthBytes = major == 1 ? 2 : 4;
  size_t prefixSize = kVersionedPrefix + lengthBytes;
  if (file.size() < prefixSize)
    throw Error(where + ": file is " + std::to_string(file.size()) +
                " bytes, too short for the header length field");
  file.readAt(kVersionedPrefix, prefix + kVersionedPrefix, lengthBytes);
  uint64_t headerLength =
      readLittleEndian(prefix + kVersionedPrefix, lengthBytes);
  if (headerLength > file.size() - prefixSize)
    throw Error(where + ": header length " + std::to_string(headerLength) +
                " extends past the end of the file (" +
                std::to_string(file.size()) + " bytes)");

  std::string headerText(headerLength, '\0');
  file.readAt(prefixSize, headerText.data(), headerLength);
  NpyHeader header = NpyHeaderParser(headerText, path).parse();
  DType dtype = dtypeFromNpyDescr(header.descr, path);
  // Fortran order with rank <= 1 is the same layout as C order.
  if (header.fortranOrder && header.shape.size() > 1)
    throw Error(where + ": Fortran-order arrays are not supported");

  uint64_t dataStart = prefixSize + headerLength;
  uint64_t actualBytes = file.size() - dataStart;
  uint64_t expectedBytes = byteCountOf(dtype, header.shape, where);
  if (actualBytes != expectedBytes)
    throw Error(
        where + ": " + dtypeName(dtype) + shapeString(header.shape) +
        " needs " + std::to_string(expectedBytes) +
        " data bytes but the file has " + std::to_string(actualBytes) +
        (actualBytes < expectedBytes ? " (truncated)" : " (trailing data)"));

  HostArray array(dtype, header.shape);
  file.readAt(dataStart, array.data(), array.nbytes());
  if (dtype == DType::I1)
    checkBooleanBytes(array, where);
  return array;
}

void saveNpy(const std::string &path, const HostArray &array) {
  std::string dict =
      std::string("{'descr': '") + npyDescrOf(array.dtype(), path) +
      "', 'fortran_order': False, 'shape': " + npyShapeTuple(array.shape()) +
      ", }";

  // The header is space-padded and newline-terminated so that the data
  // starts at a multiple of 64 bytes, as numpy itself writes it.
  auto paddedHeaderLength = [&](size_t prefixSize) {
    size_t unpadded = prefixSize + dict.size() + 1;
    size_t total =
        (unpadded + kNpyAlignment - 1) / kNpyAlignment * kNpyAlignment;
    return total - prefixSize;
  };
  uint8_t major = 1;
  size_t headerLength = paddedHeaderLength(kNpyMagicSize + 2 + 2);
  if (headerLength > UINT16_MAX) {
    major = 2;
    headerLength = paddedHeaderLength(kNpyMagicSize + 2 + 4);
  }
  std::string header = dict;
  header.append(headerLength - dict.size() - 1, ' ');
  header += '\n';

  std::string prefix(kNpyMagic, kNpyMagicSize);
  prefix += static_cast<char>(major);
  prefix += '\0';
  size_t lengthBytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < lengthBytes; ++i)
    prefix += static_cast<char>((headerLength >> (8 * i)) & 0xFF);

  AtomicFileWriter writer(path);
  writer.write(prefix.data(), prefix.size());
  writer.write(header.data(), header.size());
  writer.write(array.data(), array.nbytes());
  writer.commit();
}

NamedArrays loadSafetensors(const std::string &path,
                            std::map<std::string, std::string> *metadata) {
  InputFile file(path);
  SafetensorsHeader header = readSafetensorsHeader(file, path);
  NamedArrays arrays;
  arrays.reserve(header.entries.size());
  for (SafetensorsEntry &entry : header.entries) {
    HostArray array(entry.dtype, std::move(entry.shape));
    file.readAt(header.dataStart + entry.begin, array.data(), array.nbytes());
    if (entry.dtype == DType::I1)
      checkBooleanBytes(array, safetensorsWhere(path) + ": tensor '" +
                                   entry.name + "'");
    arrays.emplace_back(std::move(entry.name), std::move(array));
  }
  if (metadata)
    *metadata = std::move(header.metadata);
  return arrays;
}

std::map<std::string, std::string>
loadSafetensorsMetadata(const std::string &path) {
  InputFile file(path);
  return readSafetensorsHeader(file, path).metadata;
}

void saveSafetensors(const std::string &path, const NamedArrays &arrays,
                     const std::map<std::string, std::string> &metadata) {
  // The metadata goes first, like the reference writer does.
  OrderedJson header = OrderedJson::object();
  if (!metadata.empty())
    header[kMetadataKey] = metadata;
  uint64_t offset = 0;
  for (const auto &[name, array] : arrays) {
    if (name == kMetadataKey)
      throw Error("cannot save '" + path + "': '" + name +
                  "' is reserved and cannot name a tensor");
    if (header.contains(name))
      throw Error("cannot save '" + path + "': duplicate tensor name '" + name +
                  "'");
    header[name] = {{"dtype", safetensorsDTypeName(array.dtype())},
                    {"shape", array.shape()},
                    {"data_offsets", {offset, offset + array.nbytes()}}};
    offset += array.nbytes();
  }

  // Padding to a multiple of 8 keeps the data section 8-byte aligned.
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  uint8_t sizeBytes[8];
  for (int i = 0; i < 8; ++i)
    sizeBytes[i] = static_cast<uint8_t>((uint64_t(text.size()) >> (8 * i)));

  AtomicFileWriter writer(path);
  writer.write(sizeBytes, sizeof(sizeBytes));
  writer.write(text.data(), text.size());
  for (const auto &named : arrays)
    writer.write(named.second.data(), named.second.nbytes());
  writer.commit();
}

//===----------------------------------------------------------------------===//
// Result files
//===----------------------------------------------------------------------===//

void checkResultFiles(const std::vector<std::string> &files, size_t count,
                      const std::string &owner) {
  size_t npyFiles = 0;
  std::set<std::string> seen;
  for (const std::string &file : files) {
    if (!seen.insert(file).second)
      throw Error("'" + file + "' is given twice as a result file");
    std::error_code error;
    if (std::filesystem::is_directory(file, error))
      throw Error("cannot write '" + file + "': it is a directory");
    std::filesystem::path parent = std::filesystem::path(file).parent_path();
    if (!parent.empty() && !std::filesystem::is_directory(parent, error))
      throw Error("cannot write '" + file + "': no directory '" +
                  parent.string() + "'");
    if (endsWith(file, ".npy")) {
      if (++npyFiles > count)
        throw Error("'" + file + "': " + owner + " has only " +
                    std::to_string(count) +
                    (count == 1 ? " result" : " results"));
    } else if (!endsWith(file, ".safetensors")) {
      throw Error("'" + file + "': expected a .npy or .safetensors file");
    }
  }
}

void writeResultFiles(const std::vector<std::string> &files,
                      const NamedArrays &results, const std::string &owner) {
  checkResultFiles(files, results.size(), owner);
  size_t next = 0;
  for (const std::string &file : files) {
    if (endsWith(file, ".safetensors"))
      saveSafetensors(file, results);
    else
      saveNpy(file, results[next++].second);
  }
}

} // namespace genesis
