// Attention forward and backward alone, GPT-2 124M's shape (B16 H12 T1024
// D64, causal): scripts/gpu/attention_bench.py times the plan that
// genesis-compile --target=cuda --precision=bf16 makes of it (cuDNN's fused
// attention) against torch's scaled_dot_product_attention.
func.func @attention(%q: tensor<16x12x1024x64xf32> {genesis.name = "q", genesis.role = "input"}, %k: tensor<16x12x1024x64xf32> {genesis.name = "k", genesis.role = "input"}, %v: tensor<16x12x1024x64xf32> {genesis.name = "v", genesis.role = "input"}, %g: tensor<16x12x1024x64xf32> {genesis.name = "g", genesis.role = "input"}) -> (tensor<16x12x1024x64xf32> {genesis.name = "o"}, tensor<16x12x1024x64xf32> {genesis.name = "dq"}, tensor<16x12x1024x64xf32> {genesis.name = "dk"}, tensor<16x12x1024x64xf32> {genesis.name = "dv"}) {
  %o = genesis.attention %q, %k, %v causal scale 0.125 : (tensor<16x12x1024x64xf32>, tensor<16x12x1024x64xf32>, tensor<16x12x1024x64xf32>) -> tensor<16x12x1024x64xf32>
  %d:3 = genesis.attention_grad %q, %k, %v, %o, %g causal scale 0.125 : (tensor<16x12x1024x64xf32>, tensor<16x12x1024x64xf32>, tensor<16x12x1024x64xf32>, tensor<16x12x1024x64xf32>, tensor<16x12x1024x64xf32>) -> (tensor<16x12x1024x64xf32>, tensor<16x12x1024x64xf32>, tensor<16x12x1024x64xf32>)
  return %o, %d#0, %d#1, %d#2 : tensor<16x12x1024x64xf32>, tensor<16x12x1024x64xf32>, tensor<16x12x1024x64xf32>, tensor<16x12x1024x64xf32>
}
