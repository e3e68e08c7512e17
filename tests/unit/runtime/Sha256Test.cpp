//===- Sha256Test.cpp - FIPS 180-4 test vectors for SHA-256 ---------------===//

#include "runtime/support/Sha256.h"

#include <gtest/gtest.h>

#include <string>

using namespace genesis;

namespace {

std::string hexDigest(const std::string &message) {
  return toHex(Sha256::digest(message.data(), message.size()));
}

// The examples of NIST's "Cryptographic Standards and Guidelines: SHA-256"
// (csrc.nist.gov/projects/cryptographic-standards-and-guidelines/example-values)
// and the long messages of the FIPS 180-2 appendix.
TEST(Sha256Test, FipsVectors) {
  EXPECT_EQ(hexDigest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hexDigest(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(
      hexDigest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(
      hexDigest("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256Test, OneMillionAsFedInUnevenChunks) {
  std::string chunk(997, 'a');
  Sha256 hasher;
  size_t fed = 0;
  while (fed < 1000000) {
    size_t size = std::min(chunk.size(), 1000000 - fed);
    hasher.update(chunk.data(), size);
    fed += size;
  }
  EXPECT_EQ(toHex(hasher.finish()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Every split point of messages around the 55/56/64-byte padding boundaries
// gives the one-shot digest.
TEST(Sha256Test, IncrementalEqualsOneShot) {
  for (size_t length : {0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 200}) {
    std::string message;
    for (size_t i = 0; i < length; ++i)
      message += static_cast<char>(i * 37 + 11);
    Sha256::Digest expected = Sha256::digest(message.data(), message.size());
    for (size_t split = 0; split <= length; ++split) {
      Sha256 hasher;
      hasher.update(message.data(), split);
      hasher.update(message.data() + split, length - split);
      EXPECT_EQ(hasher.finish(), expected)
          << "length " << length << " split " << split;
    }
  }
}

// Padding needs a second block from 56 bytes on; these digests come from
// coreutils' sha256sum.
TEST(Sha256Test, PaddingBoundaries) {
  EXPECT_EQ(hexDigest(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(hexDigest(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(hexDigest(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

} // namespace
