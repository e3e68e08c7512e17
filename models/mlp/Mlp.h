//===- Mlp.h - The Fashion-MNIST multilayer perceptron ----------*- C++ -*-===//

#ifndef GENESIS_MODELS_MLP_MLP_H
#define GENESIS_MODELS_MLP_MLP_H

#include "frontend/nn/Layers.h"

namespace genesis::models {

/// 784 -> hidden... -> 10 with ReLUs between, as torch.nn.Sequential(Linear,
/// ReLU, ..., Linear): parameter names "0.weight", "0.bias", "2.weight", ...
inline std::shared_ptr<nn::Sequential>
makeMlp(const std::vector<int64_t> &hidden,
        Generator &generator = default_generator()) {
  auto mlp = std::make_shared<nn::Sequential>(
      std::initializer_list<std::shared_ptr<nn::Module>>{});
  int64_t width = 784;
  for (int64_t next : hidden) {
    mlp->push_back(std::make_shared<nn::Linear>(width, next, true, generator));
    mlp->push_back(std::make_shared<nn::ReLU>());
    width = next;
  }
  mlp->push_back(std::make_shared<nn::Linear>(width, 10, true, generator));
  return mlp;
}

/// The one-hidden-layer MLP 784 -> hidden -> 10.
inline std::shared_ptr<nn::Sequential>
makeMlp(int64_t hidden = 256, Generator &generator = default_generator()) {
  return makeMlp(std::vector<int64_t>{hidden}, generator);
}

} // namespace genesis::models

#endif // GENESIS_MODELS_MLP_MLP_H
