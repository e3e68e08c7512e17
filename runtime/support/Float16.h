//===- Float16.h - IEEE half and bfloat16 conversions -----------*- C++ -*-===//
//
// Software conversions between the 16-bit float formats (IEEE binary16 "half"
// and bfloat16) and float/double. Narrowing rounds to nearest, ties to even,
// produces subnormals where needed, overflows to infinity, and keeps NaNs NaN
// (always quiet, with the sign and the top payload bits preserved). Widening
// is exact.
//
// The double versions round directly from the double: going through float
// first would round twice and misround values just beside a halfway point.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_FLOAT16_H
#define GENESIS_RUNTIME_FLOAT16_H

#include <cstdint>

namespace genesis {

uint16_t doubleToHalf(double value);
double halfToDouble(uint16_t bits);
uint16_t doubleToBFloat16(double value);
double bfloat16ToDouble(uint16_t bits);

uint16_t floatToHalf(float value);
float halfToFloat(uint16_t bits);
uint16_t floatToBFloat16(float value);
float bfloat16ToFloat(uint16_t bits);

/// The hardware double-to-float conversion is already correctly rounded.
inline float doubleToFloat(double value) { return static_cast<float>(value); }

} // namespace genesis

#endif // GENESIS_RUNTIME_FLOAT16_H
