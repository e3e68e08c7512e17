//===- FashionMnist.h - Fashion-MNIST dataset loader ------------*- C++ -*-===//
//
// Reads the Fashion-MNIST IDX files (gzip-compressed or plain) into host
// arrays ready for training: images as f32 [N, 784] scaled to [0, 1] and
// labels as i64 [N]. Every header field and length is validated; errors are
// genesis::Error naming the offending file.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_MODELS_COMMON_FASHIONMNIST_H
#define GENESIS_MODELS_COMMON_FASHIONMNIST_H

#include "runtime/support/HostArray.h"

#include <string>

namespace genesis::data {

struct Dataset {
  HostArray images; ///< f32 [N, 784], pixel values scaled to [0, 1].
  HostArray labels; ///< i64 [N], class indices in 0..9.
};

/// $GENESIS_FASHION_MNIST_DIR if set and non-empty, otherwise
/// /usr/share/datasets/fashion-mnist.
std::string defaultFashionMnistDir();

/// Loads split "train" (60000 examples) or "test" (10000) from `dir`, which
/// holds train-images-idx3-ubyte.gz and friends. A file without the .gz
/// suffix is read when the compressed one does not exist.
Dataset loadFashionMnist(const std::string &split,
                         const std::string &dir = defaultFashionMnistDir());

/// Copies rows [start, start + count) along the first dimension of `array`
/// (any dtype, rank >= 1) into a new array.
HostArray batchOf(const HostArray &array, int64_t start, int64_t count);

} // namespace genesis::data

#endif // GENESIS_MODELS_COMMON_FASHIONMNIST_H
