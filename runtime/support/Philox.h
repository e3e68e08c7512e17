//===- Philox.h - Counter-based random numbers ------------------*- C++ -*-===//
//
// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11). Counter-based: the n-th number of a stream is a pure function of
// (key, n), so every backend and the reference evaluator draw the same
// dropout mask without sharing state, and disjoint counter ranges never
// overlap.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_PHILOX_H
#define GENESIS_RUNTIME_PHILOX_H

#include <array>
#include <cstdint>

namespace genesis {

/// The four 32-bit words of Philox-4x32-10 for a 64-bit key and a 64-bit
/// counter (the upper two counter words are zero).
inline std::array<uint32_t, 4> philox4x32(uint64_t key, uint64_t counter) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  uint32_t k0 = static_cast<uint32_t>(key),
           k1 = static_cast<uint32_t>(key >> 32);
  std::array<uint32_t, 4> c = {static_cast<uint32_t>(counter),
                               static_cast<uint32_t>(counter >> 32), 0u, 0u};
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(kMul0) * c[0];
    uint64_t p1 = static_cast<uint64_t>(kMul1) * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1,
         static_cast<uint32_t>(p0)};
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return c;
}

/// A uniform number in [0, 1) with 24 random bits: exactly representable in
/// f32, so every backend compares the same value against the probability.
inline double philoxUniform(uint64_t key, uint64_t counter) {
  return static_cast<double>(philox4x32(key, counter)[0] >> 8) * 0x1.0p-24;
}

} // namespace genesis

#endif // GENESIS_RUNTIME_PHILOX_H
