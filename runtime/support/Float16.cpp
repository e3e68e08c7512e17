//===- Float16.cpp - IEEE half and bfloat16 conversions -------------------===//
//
// Both 16-bit formats are handled by one routine parameterised by the width
// of the exponent and mantissa fields: half is 1/5/10, bfloat16 is 1/8/7.
//
//===----------------------------------------------------------------------===//

#include "runtime/support/Float16.h"

#include <cmath>
#include <cstring>

namespace genesis {

namespace {

struct NarrowFormat {
  int exponentBits;
  int mantissaBits;

  int bias() const { return (1 << (exponentBits - 1)) - 1; }
  uint32_t exponentAllOnes() const { return (1u << exponentBits) - 1; }
  uint32_t infinityBits() const { return exponentAllOnes() << mantissaBits; }
  uint32_t signBit() const { return 1u << (exponentBits + mantissaBits); }
};

constexpr NarrowFormat kHalf{5, 10};
constexpr NarrowFormat kBFloat16{8, 7};

constexpr int kDoubleMantissaBits = 52;
constexpr int kDoubleBias = 1023;
constexpr uint64_t kDoubleFractionMask = (uint64_t(1) << 52) - 1;

uint16_t roundDoubleToNarrow(double value, NarrowFormat format) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  uint32_t sign = (bits >> 63) ? format.signBit() : 0;
  int biasedExponent = static_cast<int>((bits >> kDoubleMantissaBits) & 0x7FF);
  uint64_t fraction = bits & kDoubleFractionMask;
  int fractionDrop = kDoubleMantissaBits - format.mantissaBits;

  if (biasedExponent == 0x7FF) {
    if (fraction == 0)
      return static_cast<uint16_t>(sign | format.infinityBits());
    // Setting the quiet bit keeps a NaN whose payload lives only in the
    // dropped low bits from turning into infinity.
    uint32_t quietBit = 1u << (format.mantissaBits - 1);
    return static_cast<uint16_t>(
        sign | format.infinityBits() | quietBit |
        static_cast<uint32_t>(fraction >> fractionDrop));
  }
  // Zero, or a double subnormal (< 2^-1022): far below half of the smallest
  // narrow subnormal, so it rounds to zero.
  if (biasedExponent == 0)
    return static_cast<uint16_t>(sign);

  int exponent = biasedExponent - kDoubleBias;
  uint64_t significand = (uint64_t(1) << kDoubleMantissaBits) | fraction;
  int minNormalExponent = 1 - format.bias();
  bool subnormal = exponent < minNormalExponent;
  int shift = fractionDrop + (subnormal ? minNormalExponent - exponent : 0);
  // The significand is below 2^53, so past this shift it is below half of the
  // smallest subnormal and rounds to zero.
  if (shift > kDoubleMantissaBits + 1)
    return static_cast<uint16_t>(sign);

  uint64_t rounded = significand >> shift;
  uint64_t remainder = significand & ((uint64_t(1) << shift) - 1);
  uint64_t halfway = uint64_t(1) << (shift - 1);
  if (remainder > halfway || (remainder == halfway && (rounded & 1)))
    ++rounded;

  // A subnormal's encoding is its significand; if rounding carried into the
  // implicit-bit position it has become the smallest normal, which is exactly
  // the next encoding. For normals the implicit bit in `rounded` adds the one
  // subtracted from the exponent field, and a rounding carry bumps the
  // exponent, possibly up to the infinity encoding.
  uint64_t magnitude = subnormal ? rounded
                                 : (uint64_t(exponent + format.bias() - 1)
                                    << format.mantissaBits) +
                                       rounded;
  if (magnitude >= format.infinityBits())
    return static_cast<uint16_t>(sign | format.infinityBits());
  return static_cast<uint16_t>(sign | magnitude);
}

double narrowToDouble(uint16_t bits, NarrowFormat format) {
  bool negative = bits & format.signBit();
  uint32_t exponentField =
      (bits >> format.mantissaBits) & format.exponentAllOnes();
  uint32_t mantissa = bits & ((1u << format.mantissaBits) - 1);

  if (exponentField == format.exponentAllOnes()) {
    int fractionShift = kDoubleMantissaBits - format.mantissaBits;
    uint64_t doubleBits = (uint64_t(negative) << 63) |
                          (uint64_t(0x7FF) << kDoubleMantissaBits) |
                          (uint64_t(mantissa) << fractionShift);
    // Signalling NaNs come back quiet, as hardware conversions do.
    if (mantissa != 0)
      doubleBits |= uint64_t(1) << (kDoubleMantissaBits - 1);
    double result;
    std::memcpy(&result, &doubleBits, sizeof(result));
    return result;
  }

  double magnitude =
      exponentField == 0
          ? std::ldexp(mantissa, 1 - format.bias() - format.mantissaBits)
          : std::ldexp(mantissa | (1u << format.mantissaBits),
                       static_cast<int>(exponentField) - format.bias() -
                           format.mantissaBits);
  return negative ? -magnitude : magnitude;
}

} // namespace

uint16_t doubleToHalf(double value) {
  return roundDoubleToNarrow(value, kHalf);
}

double halfToDouble(uint16_t bits) { return narrowToDouble(bits, kHalf); }

uint16_t doubleToBFloat16(double value) {
  return roundDoubleToNarrow(value, kBFloat16);
}

double bfloat16ToDouble(uint16_t bits) {
  return narrowToDouble(bits, kBFloat16);
}

// float -> double is exact, so rounding the double rounds the float directly.
uint16_t floatToHalf(float value) { return doubleToHalf(value); }

// Every half and bfloat16 value (NaN payloads included) fits in a float.
float halfToFloat(uint16_t bits) {
  return static_cast<float>(halfToDouble(bits));
}

// bfloat16 is the top half of a float: rounding to nearest even adds
// 0x7FFF plus the kept half's lowest bit (a carry into the exponent rounds
// up to the next binade or infinity, as the general routine does). NaNs
// come back quiet, their payload's top bits kept.
uint16_t floatToBFloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

float bfloat16ToFloat(uint16_t bits) {
  uint32_t wide = uint32_t(bits) << 16;
  if ((wide & 0x7FFFFFFFu) > 0x7F800000u)
    wide |= 0x00400000u; // signalling NaNs come back quiet
  float value;
  std::memcpy(&value, &wide, sizeof(value));
  return value;
}

} // namespace genesis
