//===- KernelTestSupport.h - Shared pieces of the kernel tests --*- C++ -*-===//
//
// Random inputs and IR builders shared by the CPU and CUDA kernel tests and
// the attention decomposition test.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_TESTS_UNIT_PASSES_KERNELTESTSUPPORT_H
#define GENESIS_TESTS_UNIT_PASSES_KERNELTESTSUPPORT_H

#include "dialect/Utils/DTypes.h"
#include "runtime/support/HostArray.h"
#include "runtime/support/Random.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace genesis::test {

/// Fresh random values for `type`: floats in (-2, 2) away from 0, i1
/// half true, integers in [-100, 100).
inline HostArray randomFor(mlir::Type type, uint64_t seed) {
  auto tensor = mlir::cast<mlir::RankedTensorType>(type);
  HostArray array(dtypeOf(tensor.getElementType()),
                  {tensor.getShape().begin(), tensor.getShape().end()});
  Generator generator(seed);
  for (int64_t i = 0; i < array.numel(); ++i) {
    double u = generator.uniform();
    if (isFloatDType(array.dtype()))
      array.setDouble(i, 4 * u - 2 + (u < 0.5 ? -0.01 : 0.01));
    else if (array.dtype() == DType::I1)
      array.setInt(i, u < 0.5);
    else
      array.setInt(i, static_cast<int64_t>(std::floor(200 * u)) - 100);
  }
  return array;
}

inline HostArray scalarOf(DType dtype, double value) {
  HostArray array(dtype, {});
  array.setDouble(0, value);
  return array;
}

/// Indices in [0, bound) for gathers and scatters.
inline HostArray indexArray(DType dtype, std::vector<int64_t> shape,
                            int64_t bound, uint64_t seed) {
  HostArray array(dtype, shape);
  Generator generator(seed);
  for (int64_t i = 0; i < array.numel(); ++i)
    array.setInt(
        i, std::min<int64_t>(
               bound - 1, static_cast<int64_t>(generator.uniform() * bound)));
  return array;
}

/// attention and attention_grad of [B, Hq, S, D] queries against
/// [B, Hkv, T, D] keys and [B, Hkv, T, Dv] values.
inline std::string attentionFunction(const std::string &t, int64_t b,
                                     int64_t hq, int64_t hkv, int64_t s,
                                     int64_t tk, int64_t d, int64_t dv,
                                     bool mask, bool causal) {
  auto ty = [&](int64_t h, int64_t rows, int64_t cols) {
    return "tensor<" + std::to_string(b) + "x" + std::to_string(h) + "x" +
           std::to_string(rows) + "x" + std::to_string(cols) + "x" + t + ">";
  };
  std::string q = ty(hq, s, d), k = ty(hkv, tk, d), v = ty(hkv, tk, dv),
              o = ty(hq, s, dv), m = ty(hq, s, tk);
  std::string attrs = std::string(causal ? " causal" : "") + " scale 0.35";
  std::string maskArg = mask ? ", %m: " + m : "";
  std::string maskUse = mask ? " mask %m" : "";
  std::string maskType = mask ? ", " + m : "";
  return "func.func @f(%q: " + q + ", %k: " + k + ", %v: " + v + maskArg +
         ", %o: " + o + ", %g: " + o + ") -> (" + o + ", " + q + ", " + k +
         ", " + v + ") {\n" + "  %0 = genesis.attention %q, %k, %v" + maskUse +
         attrs + " : (" + q + ", " + k + ", " + v + maskType + ") -> " + o +
         "\n" + "  %1:3 = genesis.attention_grad %q, %k, %v" + maskUse +
         ", %o, %g" + attrs + " : (" + q + ", " + k + ", " + v + maskType +
         ", " + o + ", " + o + ") -> (" + q + ", " + k + ", " + v + ")\n" +
         "  return %0, %1#0, %1#1, %1#2 : " + o + ", " + q + ", " + k + ", " +
         v + "\n}";
}

} // namespace genesis::test

#endif // GENESIS_TESTS_UNIT_PASSES_KERNELTESTSUPPORT_H
