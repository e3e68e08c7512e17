// RUN: genesis-opt %s --split-input-file --genesis-train-step | FileCheck %s --check-prefix=SGD
// RUN: genesis-opt %s --split-input-file --genesis-train-step="momentum=0.9 nesterov=true weight-decay=0.01 no-decay=b" | FileCheck %s --check-prefix=MOMENTUM
// RUN: genesis-opt %s --split-input-file --genesis-train-step="optimizer=adamw weight-decay=0.1 clip-grad-value=0.5 clip-grad-norm=1.0" | FileCheck %s --check-prefix=ADAMW
// RUN: genesis-opt %s --split-input-file --genesis-train-step="optimizer=adam accumulation=2" | FileCheck %s --check-prefix=ACCUM
// RUN: genesis-opt %s --split-input-file --genesis-train-step="optimizer=adamw loss-scale=dynamic growth-interval=3" | FileCheck %s --check-prefix=SCALE
// RUN: not genesis-opt %s --split-input-file --genesis-train-step="loss-scale=static" 2>&1 | FileCheck %s --check-prefix=BADSCALE

// Dynamic loss scaling: @loss_scaled multiplies the loss by the scale, so
// the backward is seeded with it; the scale (0 in the state means 65536),
// the tracker and the skipped steps are optimizer state; the gradients are
// unscaled, a non-finite global norm keeps every parameter and state, and
// Adam's step leaves out the skipped steps.
// SCALE-LABEL: func.func @loss_scaled(
// SCALE-SAME: %[[S:[a-z0-9]+]]: tensor<f32> {genesis.name = "amp.loss_scale", genesis.role = "input"}
// SCALE: %[[L:.+]] = genesis.mul %{{.+}}, %[[S]] : tensor<f32>
// SCALE: return %[[L]]
// SCALE-LABEL: func.func @train_step(
// SCALE-SAME: {genesis.name = "amp.loss_scale", genesis.role = "optimizer_state"}
// SCALE-SAME: {genesis.name = "amp.growth_tracker", genesis.role = "optimizer_state"}
// SCALE-SAME: {genesis.name = "amp.skipped_steps", genesis.role = "optimizer_state"}
// SCALE: %[[UNSET:.+]] = genesis.compare eq, %arg6, %{{.+}} : tensor<f32>
// SCALE: %[[INIT:.+]] = genesis.constant dense<6.553600e+04> : tensor<f32>
// SCALE: %[[SCALE:.+]] = genesis.select %[[UNSET]], %[[INIT]], %arg6
// SCALE: %[[NORM:.+]] = genesis.global_norm
// SCALE: %[[NN:.+]] = genesis.sub %[[NORM]], %[[NORM]]
// SCALE: %[[FINITE:.+]] = genesis.compare eq, %[[NN]]
// SCALE: %[[SKIPPED:.+]] = genesis.cast %arg8 : tensor<f32> to tensor<i64>
// SCALE: %[[STEP:.+]] = genesis.sub %arg12, %[[SKIPPED]] : tensor<i64>
// SCALE: genesis.adamw_update {{.+}}, %[[STEP]] :
// SCALE: %[[KEEP:.+]] = genesis.broadcast_in_dim %[[FINITE]], [] : tensor<i1> -> tensor<3x2xi1>
// SCALE: genesis.select %[[KEEP]], %new_param, %arg0
// SCALE: genesis.constant dense<3.000000e+00>
// SCALE: genesis.constant dense<5.000000e-01>
// BADSCALE: error: genesis-train-step: unknown loss-scale 'static' (expected none or dynamic)

// A linear model y = x w + b with a mean-squared loss.
func.func @loss(%w: tensor<3x2xf32> {genesis.name = "w", genesis.role = "parameter"},
                %b: tensor<2xf32> {genesis.name = "b", genesis.role = "parameter"},
                %x: tensor<4x3xf32> {genesis.name = "x", genesis.role = "input"},
                %t: tensor<4x2xf32> {genesis.name = "t", genesis.role = "input"}) -> tensor<f32> {
  %0 = genesis.matmul %x, %w : tensor<4x3xf32>, tensor<3x2xf32>
  %1 = genesis.broadcast_in_dim %b, [1] : tensor<2xf32> -> tensor<4x2xf32>
  %2 = genesis.add %0, %1 : tensor<4x2xf32>
  %3 = genesis.sub %2, %t : tensor<4x2xf32>
  %4 = genesis.mul %3, %3 : tensor<4x2xf32>
  %5 = genesis.reduce_sum %4 dims [0, 1] : tensor<4x2xf32>
  return %5 : tensor<f32>
}

// Plain stochastic gradient descent has no optimizer state and one
// sgd_update per parameter.
// SGD-LABEL: func.func @loss_grad
// SGD-LABEL: func.func @train_step(
// SGD-SAME: %[[W:[a-z0-9]+]]: tensor<3x2xf32> {genesis.name = "w", genesis.role = "parameter"}
// SGD-SAME: %[[B:[a-z0-9]+]]: tensor<2xf32> {genesis.name = "b", genesis.role = "parameter"}
// SGD-SAME: tensor<4x3xf32> {genesis.name = "x", genesis.role = "input"}
// SGD-SAME: %[[LR:[a-z0-9]+]]: tensor<f32> {genesis.name = "lr", genesis.role = "lr"}
// SGD-SAME: tensor<i64> {genesis.name = "step", genesis.role = "step"}
// SGD-SAME: -> (tensor<f32> {genesis.name = "loss"}, tensor<3x2xf32> {genesis.name = "w"}, tensor<2xf32> {genesis.name = "b"})
// SGD: %[[NW:[a-z_0-9]+]] = genesis.sgd_update %[[W]], %{{.+}}, %[[LR]] :
// SGD: %[[NB:[a-z_0-9]+]] = genesis.sgd_update %[[B]], %{{.+}}, %[[LR]] :
// SGD: return %{{.+}}, %[[NW]], %[[NB]]

// Momentum with a second parameter group: b has no weight decay.
// MOMENTUM-LABEL: func.func @train_step(
// MOMENTUM-SAME: {genesis.name = "w.momentum_buffer", genesis.role = "optimizer_state"}
// MOMENTUM-SAME: {genesis.name = "b.momentum_buffer", genesis.role = "optimizer_state"}
// MOMENTUM: genesis.sgd_momentum_update {{.*}} {momentum = 9.000000e-01 : f64, nesterov, weight_decay = 1.000000e-02 : f64}
// MOMENTUM: genesis.sgd_momentum_update {{.*}} {momentum = 9.000000e-01 : f64, nesterov}

// Decoupled weight decay with value clipping, then norm clipping.
// ADAMW-LABEL: func.func @train_step(
// ADAMW-SAME: "w.exp_avg"
// ADAMW-SAME: "b.exp_avg"
// ADAMW-SAME: "w.exp_avg_sq"
// ADAMW: genesis.max
// ADAMW: genesis.min
// ADAMW: %[[NORM:[0-9]+]] = genesis.global_norm %{{.+}}, %{{.+}} : tensor<3x2xf32>, tensor<2xf32>
// ADAMW: genesis.add %[[NORM]]
// ADAMW: genesis.adamw_update {{.*}}weight_decay = 1.000000e-01
// ADAMW: genesis.adamw_update
// ADAMW: return {{.*}} : tensor<f32>, tensor<3x2xf32>, tensor<2xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<3x2xf32>, tensor<2xf32>

// Two micro-batches: inputs get a leading dimension 2, the body is cloned
// per slice and the results are averaged.
// ACCUM-LABEL: func.func @train_step(
// ACCUM-SAME: tensor<2x4x3xf32> {genesis.name = "x", genesis.role = "input"}
// ACCUM-SAME: tensor<2x4x2xf32> {genesis.name = "t", genesis.role = "input"}
// ACCUM: genesis.slice %{{.+}} start [0, 0, 0] limit [1, 4, 3]
// ACCUM: genesis.slice %{{.+}} start [1, 0, 0] limit [2, 4, 3]
// ACCUM: genesis.constant dense<5.000000e-01> : tensor<f32>
// ACCUM: genesis.adam_update
// ACCUM: genesis.adam_update
