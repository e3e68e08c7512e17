// Integer sums wrap; max and min of i64 over rows, and a sum over a
// 0-sized dimension (0).
func.func @int_reduce(%a: tensor<4x16xi64> {genesis.name = "a", genesis.role = "input"}, %e: tensor<3x0xi32> {genesis.name = "e", genesis.role = "input"}) -> (tensor<4xi64> {genesis.name = "s"}, tensor<16xi64> {genesis.name = "mx"}, tensor<4xi64> {genesis.name = "mn"}, tensor<3xi32> {genesis.name = "z"}) {
  %s = genesis.reduce_sum %a dims [1] : tensor<4x16xi64>
  %mx = genesis.reduce_max %a dims [0] : tensor<4x16xi64>
  %mn = genesis.reduce_min %a dims [1] : tensor<4x16xi64>
  %z = genesis.reduce_sum %e dims [1] : tensor<3x0xi32>
  return %s, %mx, %mn, %z : tensor<4xi64>, tensor<16xi64>, tensor<4xi64>, tensor<3xi32>
}
