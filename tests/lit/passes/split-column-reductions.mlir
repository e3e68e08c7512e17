// RUN: genesis-opt %s --split-input-file --genesis-split-column-reductions | FileCheck %s

// A LayerNorm-backward-like fusion: a side result and the column sum over
// [16, 1024] rows of 768 columns (24 tiles of 32). The fusion keeps
// dimension 0 (16 partials) and yields its side result unchanged; a new
// fusion sums the partials.
// CHECK-LABEL: func.func @layer_norm_weight_gradient(
// CHECK: %[[P:.+]]:2 = genesis.fusion %arg0, %arg1 : (tensor<16x1024x768xf32>, tensor<16x1024x768xf32>) -> (tensor<16x1024x768xf32>, tensor<16x768xf32>) {
// CHECK: genesis.reduce_sum %{{.+}} dims [1] : tensor<16x1024x768xf32>
// CHECK: %[[T:.+]] = genesis.fusion %[[P]]#1 : (tensor<16x768xf32>) -> tensor<768xf32> {
// CHECK: genesis.reduce_sum %{{.+}} dims [0] : tensor<16x768xf32>
// CHECK: return %[[P]]#0, %[[T]]
func.func @layer_norm_weight_gradient(%x: tensor<16x1024x768xf32>, %g: tensor<16x1024x768xf32>) -> (tensor<16x1024x768xf32>, tensor<768xf32>) {
  %0:2 = genesis.fusion %x, %g : (tensor<16x1024x768xf32>, tensor<16x1024x768xf32>) -> (tensor<16x1024x768xf32>, tensor<768xf32>) {
  ^bb0(%a: tensor<16x1024x768xf32>, %b: tensor<16x1024x768xf32>):
    %1 = genesis.mul %a, %b : tensor<16x1024x768xf32>
    %2 = genesis.reduce_sum %1 dims [0, 1] : tensor<16x1024x768xf32>
    genesis.yield %1, %2 : tensor<16x1024x768xf32>, tensor<768xf32>
  }
  return %0#0, %0#1 : tensor<16x1024x768xf32>, tensor<768xf32>
}

// -----

// keepdim and a maximum: the partials keep the reduced dimensions as 1.
// CHECK-LABEL: func.func @keepdim_maximum(
// CHECK: genesis.fusion %arg0 : (tensor<4x257x3x50xf32>) -> tensor<4x1x1x50xf32>
// CHECK: genesis.reduce_max %{{.+}} dims [1, 2] keepdim : tensor<4x257x3x50xf32>
// CHECK: genesis.fusion %{{.+}} : (tensor<4x1x1x50xf32>) -> tensor<1x1x1x50xf32>
// CHECK: genesis.reduce_max %{{.+}} dims [0] keepdim : tensor<4x1x1x50xf32>
func.func @keepdim_maximum(%x: tensor<4x257x3x50xf32>) -> tensor<1x1x1x50xf32> {
  %0 = genesis.fusion %x : (tensor<4x257x3x50xf32>) -> tensor<1x1x1x50xf32> {
  ^bb0(%a: tensor<4x257x3x50xf32>):
    %1 = genesis.reduce_max %a dims [0, 1, 2] keepdim : tensor<4x257x3x50xf32>
    genesis.yield %1 : tensor<1x1x1x50xf32>
  }
  return %0 : tensor<1x1x1x50xf32>
}

// -----

// Left alone: one leading reduced dimension (no partials without a
// reshape), fewer than 256 rows per partial, enough column tiles already,
// a bf16 operand, a row reduction.
// CHECK-LABEL: func.func @left_alone(
// CHECK-COUNT-5: genesis.fusion
// CHECK-NOT: genesis.fusion
func.func @left_alone(%a: tensor<16384x768xf32>, %b: tensor<64x128x768xf32>, %c: tensor<16x1024x32768xf32>, %d: tensor<16x1024x768xbf16>) -> (tensor<768xf32>, tensor<768xf32>, tensor<32768xf32>, tensor<768xbf16>, tensor<16x1024xf32>) {
  %0 = genesis.fusion %a : (tensor<16384x768xf32>) -> tensor<768xf32> {
  ^bb0(%x: tensor<16384x768xf32>):
    %1 = genesis.reduce_sum %x dims [0] : tensor<16384x768xf32>
    genesis.yield %1 : tensor<768xf32>
  }
  %1 = genesis.fusion %b : (tensor<64x128x768xf32>) -> tensor<768xf32> {
  ^bb0(%x: tensor<64x128x768xf32>):
    %2 = genesis.reduce_sum %x dims [0, 1] : tensor<64x128x768xf32>
    genesis.yield %2 : tensor<768xf32>
  }
  %2 = genesis.fusion %c : (tensor<16x1024x32768xf32>) -> tensor<32768xf32> {
  ^bb0(%x: tensor<16x1024x32768xf32>):
    %3 = genesis.reduce_sum %x dims [0, 1] : tensor<16x1024x32768xf32>
    genesis.yield %3 : tensor<32768xf32>
  }
  %3 = genesis.fusion %d : (tensor<16x1024x768xbf16>) -> tensor<768xbf16> {
  ^bb0(%x: tensor<16x1024x768xbf16>):
    %4 = genesis.reduce_sum %x dims [0, 1] : tensor<16x1024x768xbf16>
    genesis.yield %4 : tensor<768xbf16>
  }
  %4 = genesis.fusion %c : (tensor<16x1024x32768xf32>) -> tensor<16x1024xf32> {
  ^bb0(%x: tensor<16x1024x32768xf32>):
    %5 = genesis.reduce_sum %x dims [2] : tensor<16x1024x32768xf32>
    genesis.yield %5 : tensor<16x1024xf32>
  }
  return %0, %1, %2, %3, %4 : tensor<768xf32>, tensor<768xf32>, tensor<32768xf32>, tensor<768xbf16>, tensor<16x1024xf32>
}
