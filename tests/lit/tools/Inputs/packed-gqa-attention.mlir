// One projection packing 4 query heads, 2 key heads and 2 value heads of 32
// for each of 64 tokens (a fused QKV of grouped-query attention), attention
// and its gradient through an output projection (y = o wo, g the cotangent
// of y); the gradients concatenated back into the projection's layout, as
// autodiff writes the gradient of the three slices.
func.func @f(%x: tensor<128x128xf32> {genesis.name = "x", genesis.role = "input"}, %w: tensor<128x256xf32> {genesis.name = "w", genesis.role = "input"}, %wo: tensor<128x128xf32> {genesis.name = "wo", genesis.role = "input"}, %gy: tensor<128x128xf32> {genesis.name = "g", genesis.role = "input"}) -> (tensor<128x128xf32> {genesis.name = "y"}, tensor<2x64x256xf32> {genesis.name = "dqkv"}) {
  %p2 = genesis.matmul %x, %w : tensor<128x128xf32>, tensor<128x256xf32>
  %p = genesis.reshape %p2 : tensor<128x256xf32> -> tensor<2x64x256xf32>
  %qs = genesis.slice %p start [0, 0, 0] limit [2, 64, 128] stride [1, 1, 1] : tensor<2x64x256xf32>
  %ks = genesis.slice %p start [0, 0, 128] limit [2, 64, 192] stride [1, 1, 1] : tensor<2x64x256xf32>
  %vs = genesis.slice %p start [0, 0, 192] limit [2, 64, 256] stride [1, 1, 1] : tensor<2x64x256xf32>
  %q4 = genesis.reshape %qs : tensor<2x64x128xf32> -> tensor<2x64x4x32xf32>
  %k4 = genesis.reshape %ks : tensor<2x64x64xf32> -> tensor<2x64x2x32xf32>
  %v4 = genesis.reshape %vs : tensor<2x64x64xf32> -> tensor<2x64x2x32xf32>
  %q = genesis.transpose %q4, [0, 2, 1, 3] : tensor<2x64x4x32xf32>
  %k = genesis.transpose %k4, [0, 2, 1, 3] : tensor<2x64x2x32xf32>
  %v = genesis.transpose %v4, [0, 2, 1, 3] : tensor<2x64x2x32xf32>
  %o = genesis.attention %q, %k, %v causal scale 0.25 : (tensor<2x4x64x32xf32>, tensor<2x2x64x32xf32>, tensor<2x2x64x32xf32>) -> tensor<2x4x64x32xf32>
  %ot = genesis.transpose %o, [0, 2, 1, 3] : tensor<2x4x64x32xf32>
  %m = genesis.reshape %ot : tensor<2x64x4x32xf32> -> tensor<128x128xf32>
  %y = genesis.matmul %m, %wo : tensor<128x128xf32>, tensor<128x128xf32>
  %g = genesis.matmul %gy, %wo transpose_rhs : tensor<128x128xf32>, tensor<128x128xf32>
  %g4 = genesis.reshape %g : tensor<128x128xf32> -> tensor<2x64x4x32xf32>
  %gt = genesis.transpose %g4, [0, 2, 1, 3] : tensor<2x64x4x32xf32>
  %d:3 = genesis.attention_grad %q, %k, %v, %o, %gt causal scale 0.25 : (tensor<2x4x64x32xf32>, tensor<2x2x64x32xf32>, tensor<2x2x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x32xf32>) -> (tensor<2x4x64x32xf32>, tensor<2x2x64x32xf32>, tensor<2x2x64x32xf32>)
  %dqt = genesis.transpose %d#0, [0, 2, 1, 3] : tensor<2x4x64x32xf32>
  %dkt = genesis.transpose %d#1, [0, 2, 1, 3] : tensor<2x2x64x32xf32>
  %dvt = genesis.transpose %d#2, [0, 2, 1, 3] : tensor<2x2x64x32xf32>
  %dq = genesis.reshape %dqt : tensor<2x64x4x32xf32> -> tensor<2x64x128xf32>
  %dk = genesis.reshape %dkt : tensor<2x64x2x32xf32> -> tensor<2x64x64xf32>
  %dv = genesis.reshape %dvt : tensor<2x64x2x32xf32> -> tensor<2x64x64xf32>
  %dqkv = genesis.concat %dq, %dk, %dv dim 2 : tensor<2x64x128xf32>, tensor<2x64x64xf32>, tensor<2x64x64xf32>
  return %y, %dqkv : tensor<128x128xf32>, tensor<2x64x256xf32>
}
