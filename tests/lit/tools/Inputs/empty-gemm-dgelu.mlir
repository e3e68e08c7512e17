// A dgelu GEMM (written by hand) with an empty inner dimension: not
// supported, a clear error.
func.func @f(%a: tensor<3x0xf32> {genesis.name = "a", genesis.role = "input"}, %b: tensor<0x8xf32> {genesis.name = "b", genesis.role = "input"}, %x: tensor<3x8xf32> {genesis.name = "x", genesis.role = "input"}) -> (tensor<3x8xf32> {genesis.name = "y"}) {
  %0 = genesis.library_call dgelu %a, %b aux %x : (tensor<3x0xf32>, tensor<0x8xf32>, tensor<3x8xf32>) -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}
