// Each error of genesis-train-step is one diagnostic naming the problem.
// RUN: not genesis-opt %s --split-input-file --genesis-train-step="optimizer=lion" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not genesis-opt %s --split-input-file --genesis-train-step 2>&1 | FileCheck %s --check-prefix=NOPARAM
// RUN: not genesis-opt %s --split-input-file --genesis-train-step="function=nope" 2>&1 | FileCheck %s --check-prefix=NOFUNC
// RUN: not genesis-opt %s --split-input-file --genesis-train-step="loss-scale=dynamic" 2>&1 | FileCheck %s --check-prefix=HALF
// RUN: not genesis-opt %s --split-input-file --genesis-train-step="loss-scale=dynamic init-scale=0" 2>&1 | FileCheck %s --check-prefix=SCALE
// RUN: not genesis-opt %s --split-input-file --genesis-train-step="optimizer=adam" 2>&1 | FileCheck %s --check-prefix=CLASH
// Hyperparameters are checked before any op is built (no verifier error
// followed by an abort, no NaN or negative value accepted silently).
// RUN: not genesis-opt %s --split-input-file --genesis-train-step="optimizer=adamw beta1=1" 2>&1 | FileCheck %s --check-prefix=BETA1
// RUN: not genesis-opt %s --split-input-file --genesis-train-step="optimizer=adam beta2=1.0" 2>&1 | FileCheck %s --check-prefix=BETA2
// RUN: not genesis-opt %s --split-input-file --genesis-train-step="momentum=-1" 2>&1 | FileCheck %s --check-prefix=MOMENTUM
// RUN: not genesis-opt %s --split-input-file --genesis-train-step="momentum=0.9 nesterov=true dampening=0.1" 2>&1 | FileCheck %s --check-prefix=NESTEROV
// RUN: not genesis-opt %s --split-input-file --genesis-train-step="weight-decay=nan" 2>&1 | FileCheck %s --check-prefix=DECAY
// RUN: not genesis-opt %s --split-input-file --genesis-train-step="clip-grad-norm=-1" 2>&1 | FileCheck %s --check-prefix=CLIP
// RUN: not genesis-opt %s --split-input-file --genesis-train-step="accumulation=2000000" 2>&1 | FileCheck %s --check-prefix=ACCUM
// BETA1: error: genesis-train-step: beta1 must be in [0, 1), got 1
// BETA1-NOT: Failed to infer
// BETA2: error: genesis-train-step: beta2 must be in [0, 1), got 1
// MOMENTUM: error: genesis-train-step: momentum must be finite and >= 0, got -1
// NESTEROV: error: genesis-train-step: nesterov needs momentum > 0 and dampening 0, got momentum 9.000000e-01 and dampening 1.000000e-01
// DECAY: error: genesis-train-step: weight-decay must be finite and >= 0, got nan
// CLIP: error: genesis-train-step: clip-grad-norm must be finite and >= 0 (0: no clipping), got -1
// ACCUM: error: genesis-train-step: accumulation must be in [1, 65536], got 2000000

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
