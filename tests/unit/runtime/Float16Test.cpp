//===- Float16Test.cpp - Tests for half and bfloat16 conversions ----------===//

#include "runtime/support/Float16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace genesis;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

uint64_t doubleBits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

double doubleFromBits(uint64_t bits) {
  double value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

/// Layout of a 16-bit format, for checks shared between half and bfloat16.
struct Format16 {
  const char *name;
  int mantissaBits;
  uint16_t (*fromDouble)(double);
  double (*toDouble)(uint16_t);
  uint16_t (*fromFloat)(float);
  float (*toFloat)(uint16_t);

  uint16_t exponentMask() const {
    return static_cast<uint16_t>(0x7FFF & ~((1u << mantissaBits) - 1));
  }
  uint16_t mantissaMask() const {
    return static_cast<uint16_t>((1u << mantissaBits) - 1);
  }
  uint16_t quietBit() const {
    return static_cast<uint16_t>(1u << (mantissaBits - 1));
  }
  bool isNaN(uint16_t bits) const {
    return (bits & exponentMask()) == exponentMask() &&
           (bits & mantissaMask()) != 0;
  }
};

const Format16 kHalfFormat{"half",       10,          doubleToHalf,
                           halfToDouble, floatToHalf, halfToFloat};
const Format16 kBFloat16Format{"bfloat16",       7,
                               doubleToBFloat16, bfloat16ToDouble,
                               floatToBFloat16,  bfloat16ToFloat};

void PrintTo(const Format16 &format, std::ostream *stream) {
  *stream << format.name;
}

class Float16FormatTest : public ::testing::TestWithParam<Format16> {};

} // namespace

TEST(Float16Test, HalfExactValues) {
  EXPECT_EQ(doubleToHalf(0.0), 0x0000);
  EXPECT_EQ(doubleToHalf(-0.0), 0x8000);
  EXPECT_EQ(doubleToHalf(1.0), 0x3C00);
  EXPECT_EQ(doubleToHalf(-2.0), 0xC000);
  EXPECT_EQ(doubleToHalf(0.5), 0x3800);
  EXPECT_EQ(doubleToHalf(65504.0), 0x7BFF);            // largest finite
  EXPECT_EQ(doubleToHalf(std::ldexp(1, -14)), 0x0400); // smallest normal
  EXPECT_EQ(doubleToHalf(std::ldexp(1, -24)), 0x0001); // smallest subnormal
  EXPECT_EQ(doubleToHalf(std::ldexp(1023, -24)), 0x03FF);
  EXPECT_EQ(halfToDouble(0x3555), 0x1.554p-2);
  EXPECT_EQ(halfToDouble(0x0001), std::ldexp(1, -24));
  EXPECT_EQ(halfToDouble(0x8000), 0.0);
  EXPECT_TRUE(std::signbit(halfToDouble(0x8000)));
}

TEST(Float16Test, HalfRoundsToNearestTiesToEven) {
  // Halfway between 1 and 1 + 2^-10: ties go to the even mantissa (1.0).
  EXPECT_EQ(doubleToHalf(1.0 + 0x1p-11), 0x3C00);
  // Halfway between 1 + 2^-10 and 1 + 2^-9: ties go to 1 + 2^-9.
  EXPECT_EQ(doubleToHalf(1.0 + 0x3p-11), 0x3C02);
  EXPECT_EQ(doubleToHalf(std::nextafter(1.0 + 0x1p-11, kInf)), 0x3C01);
  EXPECT_EQ(doubleToHalf(std::nextafter(1.0 + 0x3p-11, 0.0)), 0x3C01);
  EXPECT_EQ(doubleToHalf(-(1.0 + 0x3p-11)), 0xBC02);
}

TEST(Float16Test, HalfSubnormalsAndUnderflow) {
  // Half of the smallest subnormal is a tie with zero, which is even.
  EXPECT_EQ(doubleToHalf(std::ldexp(1, -25)), 0x0000);
  EXPECT_EQ(doubleToHalf(-std::ldexp(1, -25)), 0x8000);
  EXPECT_EQ(doubleToHalf(std::nextafter(std::ldexp(1, -25), 1.0)), 0x0001);
  // 1.5 ulps: tie between 1 and 2 ulps goes to 2.
  EXPECT_EQ(doubleToHalf(std::ldexp(3, -25)), 0x0002);
  // Just below the smallest normal rounds up into it.
  EXPECT_EQ(doubleToHalf(std::ldexp(1, -14) - std::ldexp(1, -25)), 0x0400);
  EXPECT_EQ(doubleToHalf(1e-300), 0x0000);
  EXPECT_EQ(doubleToHalf(std::numeric_limits<double>::denorm_min()), 0x0000);
  EXPECT_EQ(doubleToHalf(-std::numeric_limits<double>::denorm_min()), 0x8000);
}

TEST(Float16Test, HalfOverflowAndInfinity) {
  // 65520 is halfway between 65504 and 65536 (which would be the next
  // value); the tie goes to the even side, which is infinity.
  EXPECT_EQ(doubleToHalf(65520.0), 0x7C00);
  EXPECT_EQ(doubleToHalf(std::nextafter(65520.0, 0.0)), 0x7BFF);
  EXPECT_EQ(doubleToHalf(-65520.0), 0xFC00);
  EXPECT_EQ(doubleToHalf(1e300), 0x7C00);
  EXPECT_EQ(doubleToHalf(kInf), 0x7C00);
  EXPECT_EQ(doubleToHalf(-kInf), 0xFC00);
  EXPECT_EQ(halfToDouble(0x7C00), kInf);
  EXPECT_EQ(halfToDouble(0xFC00), -kInf);
}

TEST(Float16Test, BFloat16KnownValues) {
  EXPECT_EQ(doubleToBFloat16(1.0), 0x3F80);
  EXPECT_EQ(doubleToBFloat16(-0.0), 0x8000);
  EXPECT_EQ(doubleToBFloat16(1.0 + 0x1p-8), 0x3F80); // tie to even
  EXPECT_EQ(doubleToBFloat16(1.0 + 0x3p-8), 0x3F82); // tie to even
  EXPECT_EQ(doubleToBFloat16(std::ldexp(1, -133)), 0x0001);
  EXPECT_EQ(doubleToBFloat16(std::ldexp(1, -134)), 0x0000);
  EXPECT_EQ(doubleToBFloat16(std::ldexp(3, -134)), 0x0002);
  // The largest finite bfloat16 is 0x7F7F; FLT_MAX is past the halfway
  // point to 2^128, so it overflows.
  EXPECT_EQ(bfloat16ToDouble(0x7F7F), std::ldexp(255, 120));
  EXPECT_EQ(doubleToBFloat16(std::ldexp(255, 120)), 0x7F7F);
  EXPECT_EQ(doubleToBFloat16(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(doubleToBFloat16(std::ldexp(511, 119)), 0x7F80);
  EXPECT_EQ(doubleToBFloat16(std::nextafter(std::ldexp(511, 119), 0.0)),
            0x7F7F);
  EXPECT_EQ(doubleToBFloat16(-kInf), 0xFF80);
  EXPECT_EQ(bfloat16ToFloat(0x4049), 3.140625f);
}

TEST(Float16Test, DirectRoundingDiffersFromRoundingViaFloat) {
  // Just above a bfloat16 tie, but so little that float rounds it onto the
  // tie; rounding that float then picks the even neighbour (downwards).
  double aboveBFloat16Tie = 1.0 + 0x1p-8 + 0x1p-30;
  EXPECT_EQ(doubleToBFloat16(aboveBFloat16Tie), 0x3F81);
  EXPECT_EQ(floatToBFloat16(doubleToFloat(aboveBFloat16Tie)), 0x3F80);
  double belowBFloat16Tie = 1.0 + 0x3p-8 - 0x1p-30;
  EXPECT_EQ(doubleToBFloat16(belowBFloat16Tie), 0x3F81);
  EXPECT_EQ(floatToBFloat16(doubleToFloat(belowBFloat16Tie)), 0x3F82);

  double aboveHalfTie = 1.0 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(doubleToHalf(aboveHalfTie), 0x3C01);
  EXPECT_EQ(floatToHalf(doubleToFloat(aboveHalfTie)), 0x3C00);
  // Same in the subnormal range.
  double aboveSubnormalTie = std::ldexp(1, -25) * (1.0 + 0x1p-40);
  EXPECT_EQ(doubleToHalf(aboveSubnormalTie), 0x0001);
  EXPECT_EQ(floatToHalf(doubleToFloat(aboveSubnormalTie)), 0x0000);
}

TEST_P(Float16FormatTest, NaNStaysQuietNaN) {
  const Format16 &format = GetParam();
  double quietNaN = std::numeric_limits<double>::quiet_NaN();
  uint16_t bits = format.fromDouble(quietNaN);
  EXPECT_TRUE(format.isNaN(bits));
  EXPECT_TRUE(bits & format.quietBit());
  EXPECT_FALSE(bits & 0x8000);
  EXPECT_TRUE(format.fromDouble(-quietNaN) & 0x8000);

  // A NaN whose payload lies entirely in bits the narrow format drops must
  // not turn into infinity.
  double lowPayloadNaN = doubleFromBits(0x7FF0000000000001ull);
  ASSERT_TRUE(std::isnan(lowPayloadNaN));
  uint16_t lowPayloadBits = format.fromDouble(lowPayloadNaN);
  EXPECT_TRUE(format.isNaN(lowPayloadBits));
  EXPECT_TRUE(lowPayloadBits & format.quietBit());
  EXPECT_TRUE(format.isNaN(format.fromFloat(std::nanf(""))));

  // Widening a signalling NaN gives a quiet NaN with the payload kept.
  uint16_t signallingNaN = static_cast<uint16_t>(format.exponentMask() | 1);
  double widened = format.toDouble(signallingNaN);
  ASSERT_TRUE(std::isnan(widened));
  EXPECT_TRUE(doubleBits(widened) & (uint64_t(1) << 51));
  EXPECT_EQ(doubleBits(widened) & 0xFFFFFFFFFFFFFull,
            (uint64_t(1) << 51) | (uint64_t(1) << (52 - format.mantissaBits)));
  EXPECT_TRUE(std::isnan(format.toFloat(signallingNaN)));
}

// Every bit pattern widens exactly and narrows back to itself (NaNs come back
// as NaNs, quieted, with sign and payload kept).
TEST_P(Float16FormatTest, ExhaustiveRoundTrip) {
  const Format16 &format = GetParam();
  for (uint32_t pattern = 0; pattern <= 0xFFFF; ++pattern) {
    auto bits = static_cast<uint16_t>(pattern);
    double viaDouble = format.toDouble(bits);
    float viaFloat = format.toFloat(bits);
    if (format.isNaN(bits)) {
      uint16_t quieted = bits | format.quietBit();
      ASSERT_EQ(format.fromDouble(viaDouble), quieted) << pattern;
      ASSERT_EQ(format.fromFloat(viaFloat), quieted) << pattern;
      continue;
    }
    ASSERT_EQ(static_cast<double>(viaFloat), viaDouble) << pattern;
    ASSERT_EQ(format.fromDouble(viaDouble), bits) << pattern;
    ASSERT_EQ(format.fromFloat(viaFloat), bits) << pattern;
  }
}

// For every pair of adjacent finite values, the midpoint rounds to the one
// with an even mantissa and anything strictly inside goes to the nearer one.
// (Rounding past the largest finite value is covered by the overflow tests.)
TEST_P(Float16FormatTest, ExhaustiveMidpointsRoundCorrectly) {
  const Format16 &format = GetParam();
  for (uint16_t low = 0; low + 1 < format.exponentMask(); ++low) {
    auto high = static_cast<uint16_t>(low + 1);
    for (uint16_t sign : {uint16_t(0), uint16_t(0x8000)}) {
      double lowValue = format.toDouble(low | sign);
      double highValue = format.toDouble(high | sign);
      double midpoint = (lowValue + highValue) / 2; // exact in double
      uint16_t even = (low & 1) ? high : low;
      ASSERT_EQ(format.fromDouble(midpoint), even | sign) << low;
      ASSERT_EQ(format.fromDouble(std::nextafter(midpoint, lowValue)),
                low | sign)
          << low;
      ASSERT_EQ(format.fromDouble(std::nextafter(midpoint, highValue)),
                high | sign)
          << low;
    }
  }
}

TEST_P(Float16FormatTest, FloatAndDoubleVersionsAgree) {
  const Format16 &format = GetParam();
  std::mt19937_64 random(42);
  for (int i = 0; i < 200000; ++i) {
    uint32_t floatBits = static_cast<uint32_t>(random());
    float value;
    std::memcpy(&value, &floatBits, sizeof(value));
    ASSERT_EQ(format.fromFloat(value), format.fromDouble(value)) << floatBits;
  }
}

// floatToBFloat16 rounds by bits; the double route is the oracle for every
// upper half with the lower halves that decide the rounding (zero, the
// smallest, just below, at and just above the tie, the largest): ties to
// even, carries into the exponent and to infinity, subnormals, NaNs.
TEST(Float16Test, FloatToBFloat16MatchesTheDoubleRouteAtEveryRoundingCase) {
  for (uint32_t high = 0; high <= 0xFFFF; ++high)
    for (uint32_t low :
         {0x0000u, 0x0001u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu}) {
      uint32_t bits = (high << 16) | low;
      float value;
      std::memcpy(&value, &bits, sizeof(value));
      ASSERT_EQ(floatToBFloat16(value), doubleToBFloat16(value)) << bits;
    }
}

// bfloat16ToFloat widens by bits; the double route is the oracle, bit for
// bit (NaNs quiet), over every encoding.
TEST(Float16Test, BFloat16ToFloatMatchesTheDoubleRouteExhaustively) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    float direct = bfloat16ToFloat(static_cast<uint16_t>(bits));
    float viaDouble =
        static_cast<float>(bfloat16ToDouble(static_cast<uint16_t>(bits)));
    uint32_t a, b;
    std::memcpy(&a, &direct, sizeof(a));
    std::memcpy(&b, &viaDouble, sizeof(b));
    ASSERT_EQ(a, b) << bits;
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, Float16FormatTest,
                         ::testing::Values(kHalfFormat, kBFloat16Format),
                         [](const auto &info) {
                           return std::string(info.param.name);
                         });

#ifdef __FLT16_MAX__
// The compiler's _Float16 conversion (software, correctly rounded) is an
// independent oracle for doubleToHalf over random doubles of all magnitudes.
TEST(Float16Test, HalfMatchesCompilerFloat16) {
  std::mt19937_64 random(7);
  std::uniform_int_distribution<int> exponent(-30, 20);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  for (int i = 0; i < 500000; ++i) {
    double value = std::ldexp(mantissa(random), exponent(random));
    if (random() & 1)
      value = -value;
    auto reference = static_cast<_Float16>(value);
    uint16_t referenceBits;
    std::memcpy(&referenceBits, &reference, sizeof(referenceBits));
    ASSERT_EQ(doubleToHalf(value), referenceBits) << value;
    ASSERT_EQ(halfToDouble(referenceBits), static_cast<double>(reference));
  }
}
#endif
