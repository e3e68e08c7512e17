// f32 -> bf16 -> f32: the result carries the bf16 bits exactly.
func.func @f(%a: tensor<4096xf32> {genesis.name = "a", genesis.role = "input"}) -> (tensor<4096xf32> {genesis.name = "r"}) {
  %b = genesis.cast %a : tensor<4096xf32> to tensor<4096xbf16>
  %r = genesis.cast %b : tensor<4096xbf16> to tensor<4096xf32>
  return %r : tensor<4096xf32>
}
