// A collective has no CPU lowering (a single rank would be the identity, but
// a plan must not silently drop communication).
func.func @f(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "input"}) -> (tensor<4xf32> {genesis.name = "y"}) {
  %0 = genesis.all_reduce sum, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
