//===- HostArray.h - Dense tensors in host memory ---------------*- C++ -*-===//
//
// HostArray is a contiguous, row-major tensor in host memory: the currency of
// the runtime for weights, inputs and results. It owns its bytes (64-byte
// aligned so vectorised kernels can use aligned loads) and is freely copyable.
//
// Element access through getDouble/setDouble/getInt/setInt works for every
// dtype; stores are correctly rounded for float dtypes and truncate toward
// zero for integer dtypes (i1 stores v != 0). A value that an integer dtype
// cannot represent (NaN, out of range) throws genesis::Error rather than
// invoking undefined behaviour.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_HOSTARRAY_H
#define GENESIS_RUNTIME_HOSTARRAY_H

#include "runtime/support/DType.h"
#include "runtime/support/Error.h"

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

namespace genesis {

namespace detail {
/// Allocator handing out 64-byte aligned blocks, zero-initialised by vector.
template <typename T> struct AlignedAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{64};

  AlignedAllocator() = default;
  template <typename U> AlignedAllocator(const AlignedAllocator<U> &) {}

  T *allocate(size_t count) {
    return static_cast<T *>(::operator new(count * sizeof(T), kAlignment));
  }
  void deallocate(T *pointer, size_t) {
    ::operator delete(pointer, kAlignment);
  }

  template <typename U> bool operator==(const AlignedAllocator<U> &) const {
    return true;
  }
  template <typename U> bool operator!=(const AlignedAllocator<U> &) const {
    return false;
  }
};
} // namespace detail

class HostArray {
public:
  /// An empty f32 array of shape {0}.
  HostArray();
  /// A zero-filled array; throws on negative dimensions or a byte size that
  /// overflows.
  HostArray(DType dtype, std::vector<int64_t> shape);

  /// Builds an array from values given in row-major order: integral values
  /// are stored with setInt semantics, floating-point ones with setDouble.
  template <typename T>
  static HostArray fromValues(DType dtype, std::vector<int64_t> shape,
                              const std::vector<T> &values) {
    static_assert(std::is_arithmetic_v<T>, "values must be numbers");
    HostArray array(dtype, std::move(shape));
    array.checkValueCount(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      auto index = static_cast<int64_t>(i);
      if constexpr (std::is_integral_v<T>)
        array.setInt(index, static_cast<int64_t>(values[i]));
      else
        array.setDouble(index, static_cast<double>(values[i]));
    }
    return array;
  }

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return storage_.size(); }
  void *data() { return storage_.data(); }
  const void *data() const { return storage_.data(); }

  /// Typed view of the data; throws if T's size does not match the dtype's
  /// element size (e.g. dataAs<float>() on an f64 array).
  template <typename T> T *dataAs() {
    checkElementSize(sizeof(T));
    return reinterpret_cast<T *>(storage_.data());
  }
  template <typename T> const T *dataAs() const {
    checkElementSize(sizeof(T));
    return reinterpret_cast<const T *>(storage_.data());
  }

  double getDouble(int64_t flatIndex) const;
  void setDouble(int64_t flatIndex, double value);
  int64_t getInt(int64_t flatIndex) const;
  void setInt(int64_t flatIndex, int64_t value);

  /// The floating-point array converted to the floating-point `dtype`,
  /// each element rounded once to nearest, ties to even (a copy when the
  /// dtype is the same); throws for a non-float source or target.
  HostArray toFloatType(DType dtype) const;

  /// Element `flatIndex` for people: integers exactly, floats with 6
  /// significant digits.
  std::string elementString(int64_t flatIndex) const;

  /// E.g. "f32[64, 784]"; a scalar is "f32[]".
  std::string typeString() const;
  /// True when dtype and shape are equal.
  bool sameTypeAs(const HostArray &other) const;

  /// Product of the dimensions (1 for rank 0); throws on a negative dimension
  /// or overflow.
  static int64_t numelOf(const std::vector<int64_t> &shape);
  /// The machine's physical memory: no array may be larger.
  static uint64_t physicalMemoryBytes();

private:
  void checkElementSize(size_t size) const;
  void checkValueCount(size_t count) const;
  const uint8_t *elementPointer(int64_t flatIndex) const;
  uint8_t *elementPointer(int64_t flatIndex);

  DType dtype_;
  std::vector<int64_t> shape_;
  int64_t numel_;
  std::vector<uint8_t, detail::AlignedAllocator<uint8_t>> storage_;
};

/// "[2, 3]"; "[]" for a scalar.
std::string shapeString(const std::vector<int64_t> &shape);

} // namespace genesis

#endif // GENESIS_RUNTIME_HOSTARRAY_H
