//===- NonFinite.cpp - Finding NaNs and infinities in tensors -------------===//

#include "runtime/support/NonFinite.h"

#include "runtime/support/Error.h"
#include "runtime/support/HostArray.h"

#include <cmath>
#include <cstring>

namespace genesis {

const char *numericsCheckName(NumericsCheck check) {
  switch (check) {
  case NumericsCheck::Off:
    return "off";
  case NumericsCheck::NaN:
    return "nan";
  case NumericsCheck::NonFinite:
    return "nonfinite";
  }
  return "?";
}

NumericsCheck parseNumericsCheck(const std::string &text,
                                 const std::string &where) {
  for (NumericsCheck check :
       {NumericsCheck::Off, NumericsCheck::NaN, NumericsCheck::NonFinite})
    if (text == numericsCheckName(check))
      return check;
  throw Error(where + ": '" + text +
              "' is not a numerics check (off, nan or nonfinite)");
}

NumericsCheck numericsCheckFlag(const std::string &value,
                                const std::string &flag) {
  return value.empty() ? NumericsCheck::NonFinite
                       : parseNumericsCheck(value, flag);
}

std::optional<NonFiniteBits> nonFiniteBits(DType dtype, NumericsCheck check) {
  if (check == NumericsCheck::Off)
    return std::nullopt;
  NonFiniteBits bits;
  switch (dtype) {
  case DType::F16:
    bits = {0x7fff, 0x7c00};
    break;
  case DType::BF16:
    bits = {0x7fff, 0x7f80};
    break;
  case DType::F32:
    bits = {0x7fffffffULL, 0x7f800000ULL};
    break;
  case DType::F64:
    bits = {0x7fffffffffffffffULL, 0x7ff0000000000000ULL};
    break;
  default:
    return std::nullopt;
  }
  if (check == NumericsCheck::NaN)
    ++bits.limit; // infinity itself passes
  return bits;
}

namespace {

template <typename Word>
std::optional<uint64_t> firstAtLeast(const void *data, uint64_t count,
                                     NonFiniteBits bits) {
  const auto *bytes = static_cast<const unsigned char *>(data);
  for (uint64_t i = 0; i < count; ++i) {
    Word word;
    std::memcpy(&word, bytes + i * sizeof(Word), sizeof(Word));
    if ((word & bits.magnitudeMask) >= bits.limit)
      return i;
  }
  return std::nullopt;
}

} // namespace

std::optional<uint64_t> firstNonFinite(const void *data, uint64_t count,
                                       DType dtype, NumericsCheck check) {
  std::optional<NonFiniteBits> bits = nonFiniteBits(dtype, check);
  if (!bits || count == 0)
    return std::nullopt;
  switch (dtypeSize(dtype)) {
  case 2:
    return firstAtLeast<uint16_t>(data, count, *bits);
  case 4:
    return firstAtLeast<uint32_t>(data, count, *bits);
  default:
    return firstAtLeast<uint64_t>(data, count, *bits);
  }
}

std::string nonFiniteName(double value) {
  return std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
}

std::string elementPosition(const std::vector<int64_t> &shape,
                            uint64_t element) {
  std::vector<int64_t> at(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    auto extent = static_cast<uint64_t>(shape[d]);
    at[d] = static_cast<int64_t>(extent ? element % extent : 0);
    element = extent ? element / extent : 0;
  }
  return shapeString(at);
}

} // namespace genesis
