// Reshapes of function inputs: one keeps the last dimension (read in place
// by the GEMM), one changes it (copied: the GEMM's columns come from its
// operand tensor's last dimension), one feeds a rank-0 result.
func.func @f(%x: tensor<4x2x8xf32> {genesis.name = "x", genesis.role = "input"},
             %w: tensor<16x3xf32> {genesis.name = "w", genesis.role = "input"},
             %y: tensor<2x4x8xf32> {genesis.name = "y", genesis.role = "input"},
             %v: tensor<8x5xf32> {genesis.name = "v", genesis.role = "input"},
             %s: tensor<1x1xf32> {genesis.name = "s", genesis.role = "input"})
    -> (tensor<4x3xf32> {genesis.name = "a"}, tensor<8x5xf32> {genesis.name = "b"}, tensor<f32> {genesis.name = "c"}) {
  %rx = genesis.reshape %x : tensor<4x2x8xf32> -> tensor<4x16xf32>
  %0 = genesis.matmul %rx, %w : tensor<4x16xf32>, tensor<16x3xf32>
  %ry = genesis.reshape %y : tensor<2x4x8xf32> -> tensor<8x8xf32>
  %1 = genesis.matmul %ry, %v : tensor<8x8xf32>, tensor<8x5xf32>
  %rs = genesis.reshape %s : tensor<1x1xf32> -> tensor<f32>
  %c = genesis.constant dense<2.0> : tensor<f32>
  %2 = genesis.mul %rs, %c : tensor<f32>
  return %0, %1, %2 : tensor<4x3xf32>, tensor<8x5xf32>, tensor<f32>
}
