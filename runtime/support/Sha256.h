//===- Sha256.h - SHA-256 message digest ------------------------*- C++ -*-===//
//
// SHA-256 as specified in FIPS 180-4, used to detect corrupted plan files.
// Incremental: feed any number of update() calls, then finish() once.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_SHA256_H
#define GENESIS_RUNTIME_SHA256_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace genesis {

class Sha256 {
public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();

  void update(const void *data, size_t size);
  /// Pads the message and returns its digest; the object must not be used
  /// afterwards.
  Digest finish();

  static Digest digest(const void *data, size_t size);

private:
  void compressBlock(const uint8_t *block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> pending_;
  size_t pendingSize_ = 0;
  uint64_t messageBytes_ = 0;
};

/// Lowercase hexadecimal, two digits per byte.
std::string toHex(const Sha256::Digest &digest);

} // namespace genesis

#endif // GENESIS_RUNTIME_SHA256_H
