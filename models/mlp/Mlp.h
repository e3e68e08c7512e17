//===- Mlp.h - The Fashion-MNIST multilayer perceptron ----------*- C++ -*-===//

#ifndef GENESIS_MODELS_MLP_MLP_H
#define GENESIS_MODELS_MLP_MLP_H

#include "frontend/nn/Layers.h"

namespace genesis::models {

/// 784 -> hidden -> 10 with ReLU, as torch.nn.Sequential(Linear, ReLU,
/// Linear): parameter names "0.weight", "0.bias", "2.weight", "2.bias".
inline std::shared_ptr<nn::Sequential>
makeMlp(int64_t hidden = 256, Generator &generator = default_generator()) {
  return std::make_shared<nn::Sequential>(std::initializer_list<
                                          std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(784, hidden, true, generator),
      std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(hidden, 10, true, generator)});
}

} // namespace genesis::models

#endif // GENESIS_MODELS_MLP_MLP_H
