//===- HostArray.cpp - Dense tensors in host memory -----------------------===//

#include "runtime/support/HostArray.h"

#include "runtime/support/Float16.h"

#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <unistd.h>

namespace genesis {

namespace {

template <typename T> T loadAs(const uint8_t *pointer) {
  T value;
  std::memcpy(&value, pointer, sizeof(T));
  return value;
}

template <typename T> void storeAs(uint8_t *pointer, T value) {
  std::memcpy(pointer, &value, sizeof(T));
}

std::string formatDouble(double value) {
  std::ostringstream stream;
  stream.precision(17);
  stream << value;
  return stream.str();
}

/// Converts to double rounding to odd: inexact results get their lowest
/// mantissa bit forced to 1. A later rounding to a format at least two bits
/// narrower (half, bfloat16) then gives the same result as rounding the
/// integer directly, which plain round-to-nearest here would not.
double int64ToDoubleRoundToOdd(int64_t value) {
  constexpr int kDoublePrecision = 53;
  bool negative = value < 0;
  uint64_t magnitude = negative ? uint64_t(0) - static_cast<uint64_t>(value)
                                : static_cast<uint64_t>(value);
  int shift = 0;
  while ((magnitude >> shift) >> kDoublePrecision)
    ++shift;
  uint64_t kept = magnitude >> shift;
  if (magnitude & ((uint64_t(1) << shift) - 1))
    kept |= 1;
  double result = std::ldexp(static_cast<double>(kept), shift);
  return negative ? -result : result;
}

/// Truncates toward zero, throwing where static_cast would be undefined.
template <typename IntT> IntT truncateChecked(double value, DType dtype) {
  // Both bounds are exact powers of two, so the comparisons are exact.
  constexpr double kUpperExclusive =
      -static_cast<double>(std::numeric_limits<IntT>::min());
  constexpr double kLower =
      static_cast<double>(std::numeric_limits<IntT>::min());
  double truncated = std::trunc(value);
  if (!(truncated >= kLower && truncated < kUpperExclusive))
    throw Error("cannot convert " + formatDouble(value) + " to " +
                dtypeName(dtype) + ": out of range or NaN");
  return static_cast<IntT>(truncated);
}

} // namespace

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string result = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      result += ", ";
    result += std::to_string(shape[i]);
  }
  return result + "]";
}

HostArray::HostArray() : HostArray(DType::F32, {0}) {}

HostArray::HostArray(DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)), numel_(numelOf(shape_)) {
  auto elementSize = static_cast<int64_t>(dtypeSize(dtype_));
  if (numel_ > std::numeric_limits<int64_t>::max() / elementSize)
    throw Error("array of type " + typeString() + " is too large");
  // Checked before allocating: tools built with LLVM abort on a failed
  // allocation ("LLVM ERROR: out of memory") instead of throwing.
  auto bytes = static_cast<uint64_t>(numel_ * elementSize);
  if (bytes > physicalMemoryBytes())
    throw Error("array of type " + typeString() + " needs " +
                std::to_string(bytes) + " bytes, more than this machine's " +
                std::to_string(physicalMemoryBytes()) + " bytes of memory");
  storage_.resize(static_cast<size_t>(bytes));
}

uint64_t HostArray::physicalMemoryBytes() {
  static const uint64_t bytes = [] {
    long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
    return pages > 0 && pageSize > 0
               ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize)
               : std::numeric_limits<uint64_t>::max();
  }();
  return bytes;
}

int64_t HostArray::numelOf(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      throw Error("negative dimension " + std::to_string(dim) + " in shape " +
                  shapeString(shape));
    if (__builtin_mul_overflow(count, dim, &count))
      throw Error("element count of shape " + shapeString(shape) +
                  " overflows int64");
  }
  return count;
}

void HostArray::checkElementSize(size_t size) const {
  if (size != dtypeSize(dtype_))
    throw Error("cannot view " + typeString() + " data as a " +
                std::to_string(size) + "-byte type: element size is " +
                std::to_string(dtypeSize(dtype_)) + " bytes");
}

void HostArray::checkValueCount(size_t count) const {
  if (count != static_cast<uint64_t>(numel_))
    throw Error("array of type " + typeString() + " needs " +
                std::to_string(numel_) + " values, got " +
                std::to_string(count));
}

const uint8_t *HostArray::elementPointer(int64_t flatIndex) const {
  assert(flatIndex >= 0 && flatIndex < numel_ && "flat index out of bounds");
  return storage_.data() + flatIndex * dtypeSize(dtype_);
}

uint8_t *HostArray::elementPointer(int64_t flatIndex) {
  assert(flatIndex >= 0 && flatIndex < numel_ && "flat index out of bounds");
  return storage_.data() + flatIndex * dtypeSize(dtype_);
}

double HostArray::getDouble(int64_t flatIndex) const {
  const uint8_t *pointer = elementPointer(flatIndex);
  switch (dtype_) {
  case DType::F32:
    return loadAs<float>(pointer);
  case DType::F16:
    return halfToDouble(loadAs<uint16_t>(pointer));
  case DType::BF16:
    return bfloat16ToDouble(loadAs<uint16_t>(pointer));
  case DType::F64:
    return loadAs<double>(pointer);
  case DType::I1:
    return *pointer;
  case DType::I32:
    return loadAs<int32_t>(pointer);
  case DType::I64:
    return static_cast<double>(loadAs<int64_t>(pointer));
  }
  assert(false && "unknown DType");
  return 0;
}

void HostArray::setDouble(int64_t flatIndex, double value) {
  uint8_t *pointer = elementPointer(flatIndex);
  switch (dtype_) {
  case DType::F32:
    return storeAs(pointer, doubleToFloat(value));
  case DType::F16:
    return storeAs(pointer, doubleToHalf(value));
  case DType::BF16:
    return storeAs(pointer, doubleToBFloat16(value));
  case DType::F64:
    return storeAs(pointer, value);
  case DType::I1:
    *pointer = value != 0;
    return;
  case DType::I32:
    return storeAs(pointer, truncateChecked<int32_t>(value, dtype_));
  case DType::I64:
    return storeAs(pointer, truncateChecked<int64_t>(value, dtype_));
  }
  assert(false && "unknown DType");
}

HostArray HostArray::toFloatType(DType dtype) const {
  if (!isFloatDType(dtype_) || !isFloatDType(dtype))
    throw Error(std::string("cannot convert ") + typeString() + " to " +
                dtypeName(dtype) + ": both types must be floating-point");
  if (dtype == dtype_)
    return *this;
  HostArray converted(dtype, shape_);
  // The conversions of checkpoints (f32 to and from 16 bits) run typed
  // loops: a 0.5B-parameter model converts in a second, not in tens.
  auto convert = [&](auto from, auto to, auto function) {
    using From = decltype(from);
    using To = decltype(to);
    const From *source = dataAs<From>();
    To *target = converted.dataAs<To>();
    for (int64_t i = 0; i < numel_; ++i)
      target[i] = function(source[i]);
  };
  if (dtype_ == DType::F32 && dtype == DType::BF16)
    convert(float(), uint16_t(), floatToBFloat16);
  else if (dtype_ == DType::F32 && dtype == DType::F16)
    convert(float(), uint16_t(), floatToHalf);
  else if (dtype_ == DType::BF16 && dtype == DType::F32)
    convert(uint16_t(), float(), bfloat16ToFloat);
  else if (dtype_ == DType::F16 && dtype == DType::F32)
    convert(uint16_t(), float(), halfToFloat);
  else // Every float type widens to f64 exactly: one rounding per element.
    for (int64_t i = 0; i < numel_; ++i)
      converted.setDouble(i, getDouble(i));
  return converted;
}

int64_t HostArray::getInt(int64_t flatIndex) const {
  const uint8_t *pointer = elementPointer(flatIndex);
  switch (dtype_) {
  case DType::I1:
    return *pointer;
  case DType::I32:
    return loadAs<int32_t>(pointer);
  case DType::I64:
    return loadAs<int64_t>(pointer);
  case DType::F32:
  case DType::F16:
  case DType::BF16:
  case DType::F64:
    return truncateChecked<int64_t>(getDouble(flatIndex), DType::I64);
  }
  assert(false && "unknown DType");
  return 0;
}

void HostArray::setInt(int64_t flatIndex, int64_t value) {
  uint8_t *pointer = elementPointer(flatIndex);
  switch (dtype_) {
  case DType::F32:
    return storeAs(pointer, static_cast<float>(value));
  case DType::F16:
    return storeAs(pointer, doubleToHalf(int64ToDoubleRoundToOdd(value)));
  case DType::BF16:
    return storeAs(pointer, doubleToBFloat16(int64ToDoubleRoundToOdd(value)));
  case DType::F64:
    return storeAs(pointer, static_cast<double>(value));
  case DType::I1:
    *pointer = value != 0;
    return;
  case DType::I32:
    if (value < std::numeric_limits<int32_t>::min() ||
        value > std::numeric_limits<int32_t>::max())
      throw Error("cannot convert " + std::to_string(value) +
                  " to i32: out of range");
    return storeAs(pointer, static_cast<int32_t>(value));
  case DType::I64:
    return storeAs(pointer, value);
  }
  assert(false && "unknown DType");
}

std::string HostArray::elementString(int64_t flatIndex) const {
  if (!isFloatDType(dtype_))
    return std::to_string(getInt(flatIndex));
  std::ostringstream text;
  text << getDouble(flatIndex);
  return text.str();
}

std::string HostArray::typeString() const {
  return dtypeName(dtype_) + shapeString(shape_);
}

bool HostArray::sameTypeAs(const HostArray &other) const {
  return dtype_ == other.dtype_ && shape_ == other.shape_;
}

} // namespace genesis
