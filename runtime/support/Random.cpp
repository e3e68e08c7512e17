//===- Random.cpp - Seeded host random numbers ----------------------------===//

#include "runtime/support/Random.h"
#include "runtime/support/Philox.h"

#include <cmath>
#include <string>

namespace genesis {

double Generator::uniform() {
  std::array<uint32_t, 4> words = philox4x32(state_.seed, state_.offset++);
  uint64_t bits = (static_cast<uint64_t>(words[0]) << 21) ^ (words[1] >> 11);
  return static_cast<double>(bits & ((1ull << 53) - 1)) * 0x1.0p-53;
}

double Generator::normal() {
  // 1 - u lies in (0, 1], so the logarithm is finite.
  double radius = std::sqrt(-2.0 * std::log(1.0 - uniform()));
  return radius * std::cos(2.0 * M_PI * uniform());
}

int64_t Generator::randint(int64_t low, int64_t high) {
  if (high <= low)
    throw Error("randint: empty range [" + std::to_string(low) + ", " +
                std::to_string(high) + ")");
  auto span = static_cast<double>(high - low);
  auto value = low + static_cast<int64_t>(std::floor(uniform() * span));
  return value < high ? value : high - 1;
}

void Generator::fill_uniform(HostArray &array, double low, double high) {
  for (int64_t i = 0; i < array.numel(); ++i)
    array.setDouble(i, low + (high - low) * uniform());
}

void Generator::fill_normal(HostArray &array, double mean, double std) {
  for (int64_t i = 0; i < array.numel(); ++i)
    array.setDouble(i, mean + std * normal());
}

Generator &default_generator() {
  static Generator generator;
  return generator;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

} // namespace genesis
