// RUN: not genesis-opt %s --genesis-lower-cuda 2>&1 | FileCheck %s

// Kernels index with 32 bits: a tensor of 2^31 elements is refused, naming
// the op and the type.
// CHECK: lower-cuda-invalid.mlir:[[@LINE+2]]:{{[0-9]+}}: error: genesis-lower-cuda: tensor 'tensor<65536x32768xf32>' has 2^31 or more elements; GPU kernels index with 32 bits
func.func @f(%a: tensor<65536x32768xf32>, %b: tensor<65536x32768xf32>) -> tensor<65536x32768xf32> {
  %r = genesis.fusion %a, %b : (tensor<65536x32768xf32>, tensor<65536x32768xf32>) -> tensor<65536x32768xf32> {
  ^bb0(%x: tensor<65536x32768xf32>, %y: tensor<65536x32768xf32>):
    %0 = genesis.add %x, %y : tensor<65536x32768xf32>
    genesis.yield %0 : tensor<65536x32768xf32>
  }
  return %r : tensor<65536x32768xf32>
}
