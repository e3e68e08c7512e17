// Each error of genesis-train-step is one diagnostic naming the problem.
// RUN: not genesis-opt %s --split-input-file --genesis-train-step="optimizer=lion" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not genesis-opt %s --split-input-file --genesis-train-step 2>&1 | FileCheck %s --check-prefix=NOPARAM
// RUN: not genesis-opt %s --split-input-file --genesis-train-step="function=nope" 2>&1 | FileCheck %s --check-prefix=NOFUNC
// RUN: not genesis-opt %s --split-input-file --genesis-train-step="loss-scale=dynamic" 2>&1 | FileCheck %s --check-prefix=HALF
// RUN: not genesis-opt %s --split-input-file --genesis-train-step="loss-scale=dynamic init-scale=0" 2>&1 | FileCheck %s --check-prefix=SCALE
// RUN: not genesis-opt %s --split-input-file --genesis-train-step="optimizer=adam" 2>&1 | FileCheck %s --check-prefix=CLASH

// SCALE: error: genesis-train-step: loss scaling needs init-scale > 0 and growth-interval >= 1

// BAD: error: genesis-train-step: unknown optimizer 'lion' (expected sgd, adam or adamw)
// NOFUNC: error: genesis-train-step: no function @nope
func.func @loss(%w: tensor<2xf32> {genesis.name = "w", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.reduce_sum %w dims [0] : tensor<2xf32>
  return %0 : tensor<f32>
}

// -----

// NOPARAM: error: genesis-train-step: @loss has no argument with genesis.role = "parameter"
func.func @loss(%x: tensor<2xf32> {genesis.name = "x", genesis.role = "input"}) -> tensor<f32> {
  %0 = genesis.reduce_sum %x dims [0] : tensor<2xf32>
  return %0 : tensor<f32>
}

// -----

// Loss scaling keeps 16-bit parameters out: the scale, 2^16, is not an f16.
// HALF: error: genesis-train-step: loss scaling needs an f32 or f64 loss and parameters (master weights), got 'tensor<f16>'
func.func @loss(%w: tensor<2xf16> {genesis.name = "w", genesis.role = "parameter"}) -> tensor<f16> {
  %0 = genesis.reduce_sum %w dims [0] : tensor<2xf16>
  return %0 : tensor<f16>
}

// -----

// A loss argument named like one the train step adds (here the learning
// rate) would be bound to the same plan tensor: refused.
// CLASH: error: genesis-train-step: @loss has an argument named 'lr', a name the train step gives one of its own arguments (lr, step, <parameter>.<optimizer state>, amp.*); rename it
// CLASH: error: genesis-train-step: @loss has an argument named 'w.exp_avg'
func.func @loss(%w: tensor<2xf32> {genesis.name = "w", genesis.role = "parameter"}, %lr: tensor<f32> {genesis.name = "lr", genesis.role = "input"}) -> tensor<f32> {
  %0 = genesis.reduce_sum %w dims [0] : tensor<2xf32>
  %1 = genesis.mul %0, %lr : tensor<f32>
  return %1 : tensor<f32>
}

// -----

func.func @loss(%w: tensor<2xf32> {genesis.name = "w", genesis.role = "parameter"}, %m: tensor<2xf32> {genesis.name = "w.exp_avg", genesis.role = "input"}) -> tensor<f32> {
  %0 = genesis.mul %w, %m : tensor<2xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<2xf32>
  return %1 : tensor<f32>
}
