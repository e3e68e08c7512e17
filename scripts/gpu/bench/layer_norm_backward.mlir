// layer_norm's input gradient as its VJP (GenesisGradients.cpp) builds it:
// c = x - mean(x), r = rsqrt(mean(c^2) + eps), xhat = c r, h = g w,
// dx = r (h - mean(h) - xhat mean(h xhat)).
func.func @f(%x: tensor<8192x8192xf32> {genesis.name = "x", genesis.role = "input"},
             %g: tensor<8192x8192xf32> {genesis.name = "g", genesis.role = "input"},
             %w: tensor<8192xf32> {genesis.name = "w", genesis.role = "input"}) -> (tensor<8192x8192xf32> {genesis.name = "dx"}) {
  %n = genesis.constant dense<8192.0> : tensor<8192x1xf32>
  %eps = genesis.constant dense<1.0e-05> : tensor<8192x1xf32>
  %sx = genesis.reduce_sum %x dims [1] keepdim : tensor<8192x8192xf32>
  %mx = genesis.div %sx, %n : tensor<8192x1xf32>
  %mxb = genesis.broadcast_in_dim %mx, [0, 1] : tensor<8192x1xf32> -> tensor<8192x8192xf32>
  %c = genesis.sub %x, %mxb : tensor<8192x8192xf32>
  %cc = genesis.mul %c, %c : tensor<8192x8192xf32>
  %scc = genesis.reduce_sum %cc dims [1] keepdim : tensor<8192x8192xf32>
  %var = genesis.div %scc, %n : tensor<8192x1xf32>
  %v = genesis.add %var, %eps : tensor<8192x1xf32>
  %r = genesis.rsqrt %v : tensor<8192x1xf32>
  %rb = genesis.broadcast_in_dim %r, [0, 1] : tensor<8192x1xf32> -> tensor<8192x8192xf32>
  %xhat = genesis.mul %c, %rb : tensor<8192x8192xf32>
  %wb = genesis.broadcast_in_dim %w, [1] : tensor<8192xf32> -> tensor<8192x8192xf32>
  %h = genesis.mul %g, %wb : tensor<8192x8192xf32>
  %sh = genesis.reduce_sum %h dims [1] keepdim : tensor<8192x8192xf32>
  %mh = genesis.div %sh, %n : tensor<8192x1xf32>
  %mhb = genesis.broadcast_in_dim %mh, [0, 1] : tensor<8192x1xf32> -> tensor<8192x8192xf32>
  %hx = genesis.mul %h, %xhat : tensor<8192x8192xf32>
  %t = genesis.reduce_sum %hx dims [1] keepdim : tensor<8192x8192xf32>
  %m = genesis.div %t, %n : tensor<8192x1xf32>
  %mb = genesis.broadcast_in_dim %m, [0, 1] : tensor<8192x1xf32> -> tensor<8192x8192xf32>
  %h0 = genesis.sub %h, %mhb : tensor<8192x8192xf32>
  %u = genesis.mul %xhat, %mb : tensor<8192x8192xf32>
  %d = genesis.sub %h0, %u : tensor<8192x8192xf32>
  %dx = genesis.mul %rb, %d : tensor<8192x8192xf32>
  return %dx : tensor<8192x8192xf32>
}
