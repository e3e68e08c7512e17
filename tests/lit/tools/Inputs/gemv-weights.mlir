// A decode step's product: one row against a weight the function never
// updates (genesis-compile-cuda.test).
func.func @f(%x: tensor<1x896xbf16> {genesis.name = "x", genesis.role = "input"}, %w: tensor<999x896xbf16> {genesis.name = "w", genesis.role = "parameter"}) -> (tensor<1x999xbf16> {genesis.name = "y"}) {
  %0 = genesis.library_call none %x, %w transpose_rhs : (tensor<1x896xbf16>, tensor<999x896xbf16>) -> tensor<1x999xbf16>
  return %0 : tensor<1x999xbf16>
}
