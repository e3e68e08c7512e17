// A 4096^3 GEMM (f32 inputs; exact f32, or TF32 with --allow-tf32).
func.func @f(%a: tensor<4096x4096xf32> {genesis.name = "a", genesis.role = "input"}, %b: tensor<4096x4096xf32> {genesis.name = "b", genesis.role = "input"}) -> (tensor<4096x4096xf32> {genesis.name = "c"}) {
  %0 = genesis.matmul %a, %b : tensor<4096x4096xf32>, tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}
