// Ops on tensors with a zero dimension (valid in PyTorch and MLIR): results
// with no elements need no kernel; a GEMM with an empty inner dimension is
// zeros.
func.func @f(%a: tensor<3x0xf32> {genesis.name = "a", genesis.role = "input"},
             %b: tensor<0x4xf32> {genesis.name = "b", genesis.role = "input"})
    -> (tensor<3x0xf32> {genesis.name = "e"}, tensor<4x0xf32> {genesis.name = "t"},
        tensor<3x4xf32> {genesis.name = "m"}) {
  %0 = genesis.exp %a : tensor<3x0xf32>
  %1 = genesis.add %0, %a : tensor<3x0xf32>
  %2 = genesis.transpose %b, [1, 0] : tensor<0x4xf32>
  %4 = genesis.matmul %a, %b : tensor<3x0xf32>, tensor<0x4xf32>
  return %1, %2, %4 : tensor<3x0xf32>, tensor<4x0xf32>, tensor<3x4xf32>
}
