// Three kernel shapes for the pipeline tests (pipelines.test).

// A multi-output fusion: exp(x * y) is a result and the operand of a row
// sum, so genesis-fuse gives one fusion with two results of two shapes.
func.func @multi_output(%x: tensor<70x45xf32> {genesis.name = "x", genesis.role = "input"}, %y: tensor<70x45xf32> {genesis.name = "y", genesis.role = "input"}) -> (tensor<70xf32> {genesis.name = "sum"}, tensor<70x45xf32> {genesis.name = "exp"}) {
  %0 = genesis.mul %x, %y : tensor<70x45xf32>
  %1 = genesis.exp %0 : tensor<70x45xf32>
  %2 = genesis.reduce_sum %1 dims [1] : tensor<70x45xf32>
  return %2, %1 : tensor<70xf32>, tensor<70x45xf32>
}

// softmax's backward as autodiff writes it: y * (g - rowsum(g * y)), two
// fusions that genesis-merge-row-fusions makes one row fusion.
func.func @softmax_backward(%y: tensor<64x128xf32> {genesis.name = "y", genesis.role = "input"}, %g: tensor<64x128xf32> {genesis.name = "g", genesis.role = "input"}) -> (tensor<64x128xf32> {genesis.name = "dx"}) {
  %0 = genesis.mul %g, %y : tensor<64x128xf32>
  %1 = genesis.reduce_sum %0 dims [1] keepdim : tensor<64x128xf32>
  %2 = genesis.broadcast_in_dim %1, [0, 1] : tensor<64x1xf32> -> tensor<64x128xf32>
  %3 = genesis.sub %g, %2 : tensor<64x128xf32>
  %4 = genesis.mul %y, %3 : tensor<64x128xf32>
  return %4 : tensor<64x128xf32>
}

// A column reduction of an elementwise producer: one reduction fusion.
func.func @column_sum(%x: tensor<256x96xf32> {genesis.name = "x", genesis.role = "input"}) -> (tensor<96xf32> {genesis.name = "colsum"}) {
  %0 = genesis.tanh %x : tensor<256x96xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<256x96xf32>
  return %1 : tensor<96xf32>
}
