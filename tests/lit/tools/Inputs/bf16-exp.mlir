// Every op has a CPU lowering, but a fusion kernel does not compute in bf16.
func.func @f(%x: tensor<4xbf16> {genesis.name = "x", genesis.role = "input"}) -> (tensor<4xbf16> {genesis.name = "y"}) {
  %0 = genesis.exp %x : tensor<4xbf16>
  return %0 : tensor<4xbf16>
}
