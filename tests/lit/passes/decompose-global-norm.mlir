// RUN: genesis-opt %s --genesis-decompose-global-norm | FileCheck %s

// Each input's sum of squares is a row reduction over [n / C, C] (C the
// largest divisor of n up to n / 2048, at least 32), then a sum over the
// rows; an input without such a divisor (13) is summed at once; an f32
// input of an f64 norm is cast first.
// CHECK-LABEL: func.func @norm(
// CHECK: %[[A:.+]] = genesis.reshape %arg0 : tensor<1000x777xf64> -> tensor<2072x375xf64>
// CHECK: %[[A2:.+]] = genesis.mul %[[A]], %[[A]]
// CHECK: %[[AR:.+]] = genesis.reduce_sum %[[A2]] dims [1] : tensor<2072x375xf64>
// CHECK: %[[AS:.+]] = genesis.reduce_sum %[[AR]] dims [0] : tensor<2072xf64>
// CHECK: %[[C:.+]] = genesis.cast %arg1 : tensor<13xf32> to tensor<13xf64>
// CHECK: %[[C2:.+]] = genesis.mul %[[C]], %[[C]]
// CHECK: %[[CS:.+]] = genesis.reduce_sum %[[C2]] dims [0] : tensor<13xf64>
// CHECK: %[[T:.+]] = genesis.add %[[AS]], %[[CS]]
// CHECK: %[[N:.+]] = genesis.sqrt %[[T]] : tensor<f64>
// CHECK: return %[[N]]
// CHECK-NOT: genesis.global_norm
func.func @norm(%a: tensor<1000x777xf64>, %c: tensor<13xf32>) -> tensor<f64> {
  %0 = genesis.global_norm %a, %c : tensor<1000x777xf64>, tensor<13xf32>
  return %0 : tensor<f64>
}
