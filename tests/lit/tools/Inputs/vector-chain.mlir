// An elementwise chain of two same-shaped inputs and a broadcast row.
func.func @f(%a: tensor<256x512xf32> {genesis.name = "a", genesis.role = "input"},
             %b: tensor<256x512xf32> {genesis.name = "b", genesis.role = "input"},
             %c: tensor<512xf32> {genesis.name = "c", genesis.role = "input"})
    -> (tensor<256x512xf32> {genesis.name = "r"}) {
  %0 = genesis.mul %a, %b : tensor<256x512xf32>
  %1 = genesis.broadcast_in_dim %c, [1] : tensor<512xf32> -> tensor<256x512xf32>
  %2 = genesis.add %0, %1 : tensor<256x512xf32>
  %3 = genesis.relu %2 : tensor<256x512xf32>
  return %3 : tensor<256x512xf32>
}
