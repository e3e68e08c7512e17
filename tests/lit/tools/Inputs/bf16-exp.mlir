// bf16 arithmetic on the CPU: genesis-widen-16bit computes it in f32.
func.func @f(%x: tensor<4xbf16> {genesis.name = "x", genesis.role = "input"}) -> (tensor<4xbf16> {genesis.name = "y"}) {
  %0 = genesis.exp %x : tensor<4xbf16>
  return %0 : tensor<4xbf16>
}
