// Elementwise chain at 2^24 elements: relu(a * b + c[j]) (reads a and b,
// writes the result: 3 x 64 MiB).
func.func @f(%a: tensor<4096x4096xf32> {genesis.name = "a", genesis.role = "input"},
             %b: tensor<4096x4096xf32> {genesis.name = "b", genesis.role = "input"},
             %c: tensor<4096xf32> {genesis.name = "c", genesis.role = "input"})
    -> (tensor<4096x4096xf32> {genesis.name = "r"}) {
  %0 = genesis.mul %a, %b : tensor<4096x4096xf32>
  %1 = genesis.broadcast_in_dim %c, [1] : tensor<4096xf32> -> tensor<4096x4096xf32>
  %2 = genesis.add %0, %1 : tensor<4096x4096xf32>
  %3 = genesis.relu %2 : tensor<4096x4096xf32>
  return %3 : tensor<4096x4096xf32>
}
