// A 4096^3 GEMM in bf16 with f32 accumulation.
func.func @f(%a: tensor<4096x4096xbf16> {genesis.name = "a", genesis.role = "input"}, %b: tensor<4096x4096xbf16> {genesis.name = "b", genesis.role = "input"}) -> (tensor<4096x4096xbf16> {genesis.name = "c"}) {
  %0 = genesis.matmul %a, %b : tensor<4096x4096xbf16>, tensor<4096x4096xbf16>
  return %0 : tensor<4096x4096xbf16>
}
