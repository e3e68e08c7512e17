// Softmax's backward given its output y and the upstream gradient g, as the
// VJP of genesis.softmax builds it: dx = y * (g - rowsum(g * y)).
func.func @f(%y: tensor<8192x8192xf32> {genesis.name = "y", genesis.role = "input"},
             %g: tensor<8192x8192xf32> {genesis.name = "g", genesis.role = "input"}) -> (tensor<8192x8192xf32> {genesis.name = "dx"}) {
  %0 = genesis.mul %g, %y : tensor<8192x8192xf32>
  %1 = genesis.reduce_sum %0 dims [1] keepdim : tensor<8192x8192xf32>
  %2 = genesis.broadcast_in_dim %1, [0, 1] : tensor<8192x1xf32> -> tensor<8192x8192xf32>
  %3 = genesis.sub %g, %2 : tensor<8192x8192xf32>
  %4 = genesis.mul %y, %3 : tensor<8192x8192xf32>
  return %4 : tensor<8192x8192xf32>
}
