func.func @int_sum(%a: tensor<4xi32> {genesis.name = "a", genesis.role = "input"}) -> (tensor<i32> {genesis.name = "s"}) {
  %s = genesis.reduce_sum %a dims [0] : tensor<4xi32>
  return %s : tensor<i32>
}
