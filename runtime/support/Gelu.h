//===- Gelu.h - The tanh GELU and its derivative ----------------*- C++ -*-===//
//
// The tanh approximation of GELU (cuBLASLt's GELU epilogues, PyTorch's
// approximate="tanh") in f64, shared by the evaluator, the CPU runtime's
// GEMM epilogues and the compiler, which recognises the derivative.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_SUPPORT_GELU_H
#define GENESIS_RUNTIME_SUPPORT_GELU_H

#include <cmath>

namespace genesis {

/// sqrt(2 / pi) and the cubic coefficient of the tanh approximation.
inline constexpr double kGeluTanhScale = 0.79788456080286535588;
inline constexpr double kGeluTanhCubic = 0.044715;

/// x/2 (1 + tanh(c (x + k x^3))).
inline double geluTanh(double x) {
  return 0.5 * x *
         (1.0 + std::tanh(kGeluTanhScale * (x + kGeluTanhCubic * x * x * x)));
}

/// d/dx of geluTanh: (1 + t)/2 + x/2 (1 - t^2) c (1 + 3k x^2), with
/// t = tanh(c (x + k x^3)).
inline double geluTanhDerivative(double x) {
  double t = std::tanh(kGeluTanhScale * (x + kGeluTanhCubic * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * kGeluTanhScale *
                               (1.0 + 3.0 * kGeluTanhCubic * x * x);
}

} // namespace genesis

#endif // GENESIS_RUNTIME_SUPPORT_GELU_H
