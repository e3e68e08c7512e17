func.func @table(%a: tensor<4xf32> {genesis.name = "a", genesis.role = "input"}) -> (tensor<4xf32> {genesis.name = "k"}) {
  %c = genesis.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %k = genesis.add %a, %c : tensor<4xf32>
  return %k : tensor<4xf32>
}
