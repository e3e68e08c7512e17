// f64 -> bf16 and f16 round once (round to odd through f32): a value just
// below a bf16 tie rounds down, -1e300 to -inf.
func.func @f(%v2: tensor<5xf64> {genesis.name = "a", genesis.role = "input"}) -> (tensor<5xbf16>, tensor<5xf16>) {
  %v3 = genesis.cast %v2 : tensor<5xf64> to tensor<5xbf16>
  %v4 = genesis.cast %v2 : tensor<5xf64> to tensor<5xf16>
  return %v3, %v4 : tensor<5xbf16>, tensor<5xf16>
}
