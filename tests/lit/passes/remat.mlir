// RUN: genesis-opt %s --split-input-file --verify-diagnostics --genesis-remat="budget=78000 alignment=64" | FileCheck %s
// RUN: genesis-opt %s --split-input-file --genesis-remat="budget=0" | FileCheck %s --check-prefix=NONE

// A GELU's output and its input, both read again after the peak (the 64 KiB
// %big): arguments 8 KiB + arena 76 KiB exceed 78000 bytes. The input is
// recomputed from the arguments before the late use, then the output from
// the recomputed input, which is live there; the late fusion reads both
// recomputations. 16 KiB fewer live across the peak.
// CHECK-LABEL: func.func @gelu_saved
// CHECK: %[[H:.+]] = genesis.fusion %arg0, %arg1 :
// CHECK: %[[G:.+]] = genesis.fusion %[[H]] :
// CHECK: %[[BIG:.+]] = genesis.fusion %[[G]] :
// CHECK: %[[S:.+]] = genesis.fusion %[[BIG]] :
// CHECK: %[[H2:.+]] = genesis.fusion %arg0, %arg1 {genesis.remat}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: genesis.mul
// CHECK: %[[G2:.+]] = genesis.fusion %[[H2]] {genesis.remat}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: genesis.gelu
// CHECK: genesis.fusion %[[S]], %[[G2]], %[[H2]] :
// NONE-LABEL: func.func @gelu_saved
// NONE-NOT: genesis.remat
// expected-remark @below {{genesis-remat: @gelu_saved recomputes 2 values; arguments 8192 B + arena 69632 B fit the budget of 78000 B}}
func.func @gelu_saved(%x: tensor<1024xf32>, %w: tensor<1024xf32>) -> tensor<1024xf32> {
  %h = genesis.fusion %x, %w : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32> {
  ^bb0(%a: tensor<1024xf32>, %b: tensor<1024xf32>):
    %0 = genesis.mul %a, %b : tensor<1024xf32>
    genesis.yield %0 : tensor<1024xf32>
  }
  %g = genesis.fusion %h : (tensor<1024xf32>) -> tensor<1024xf32> {
  ^bb0(%a: tensor<1024xf32>):
    %0 = genesis.gelu %a approximate = tanh : tensor<1024xf32>
    genesis.yield %0 : tensor<1024xf32>
  }
  %big = genesis.fusion %g : (tensor<1024xf32>) -> tensor<16x1024xf32> {
  ^bb0(%a: tensor<1024xf32>):
    %0 = genesis.broadcast_in_dim %a, [1] : tensor<1024xf32> -> tensor<16x1024xf32>
    %1 = genesis.exp %0 : tensor<16x1024xf32>
    genesis.yield %1 : tensor<16x1024xf32>
  }
  %s = genesis.fusion %big : (tensor<16x1024xf32>) -> tensor<1024xf32> {
  ^bb0(%a: tensor<16x1024xf32>):
    %0 = genesis.reduce_sum %a dims [0] : tensor<16x1024xf32>
    genesis.yield %0 : tensor<1024xf32>
  }
  %late = genesis.fusion %s, %g, %h : (tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32> {
  ^bb0(%a: tensor<1024xf32>, %b: tensor<1024xf32>, %c: tensor<1024xf32>):
    %0 = genesis.add %a, %b : tensor<1024xf32>
    %1 = genesis.mul %0, %c : tensor<1024xf32>
    genesis.yield %1 : tensor<1024xf32>
  }
  return %late : tensor<1024xf32>
}

// -----

// A normalised output stored beside its row statistic (a layer norm's
// shape): recomputed from the input and the stored statistic, which the
// late fusion reads anyway, without the reduction.
// CHECK-LABEL: func.func @norm_output
// CHECK: %[[N:.+]]:2 = genesis.fusion %arg0, %arg1 :
// CHECK: %[[Y:.+]] = genesis.fusion %arg0, %[[N]]#0, %arg1 {genesis.remat}
// CHECK-NOT: reduce_sum
// CHECK: genesis.sub
// CHECK: genesis.mul
// CHECK: genesis.yield
// CHECK: genesis.fusion %{{.+}}, %[[Y]], %[[N]]#0 :
// expected-remark @below {{genesis-remat: @norm_output recomputes 1 values}}
func.func @norm_output(%x: tensor<16x64xf32>, %g: tensor<64xf32>) -> tensor<16x64xf32> {
  %n:2 = genesis.fusion %x, %g : (tensor<16x64xf32>, tensor<64xf32>) -> (tensor<16x1xf32>, tensor<16x64xf32>) {
  ^bb0(%a: tensor<16x64xf32>, %b: tensor<64xf32>):
    %0 = genesis.reduce_sum %a dims [1] keepdim : tensor<16x64xf32>
    %1 = genesis.broadcast_in_dim %0, [0, 1] : tensor<16x1xf32> -> tensor<16x64xf32>
    %2 = genesis.sub %a, %1 : tensor<16x64xf32>
    %3 = genesis.broadcast_in_dim %b, [1] : tensor<64xf32> -> tensor<16x64xf32>
    %4 = genesis.mul %2, %3 : tensor<16x64xf32>
    genesis.yield %0, %4 : tensor<16x1xf32>, tensor<16x64xf32>
  }
  %big = genesis.fusion %n#1 : (tensor<16x64xf32>) -> tensor<16x16x64xf32> {
  ^bb0(%a: tensor<16x64xf32>):
    %0 = genesis.broadcast_in_dim %a, [1, 2] : tensor<16x64xf32> -> tensor<16x16x64xf32>
    %1 = genesis.exp %0 : tensor<16x16x64xf32>
    genesis.yield %1 : tensor<16x16x64xf32>
  }
  %r = genesis.fusion %big : (tensor<16x16x64xf32>) -> tensor<16x64xf32> {
  ^bb0(%a: tensor<16x16x64xf32>):
    %0 = genesis.reduce_sum %a dims [0] : tensor<16x16x64xf32>
    genesis.yield %0 : tensor<16x64xf32>
  }
  %late = genesis.fusion %r, %n#1, %n#0 : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x1xf32>) -> tensor<16x64xf32> {
  ^bb0(%a: tensor<16x64xf32>, %b: tensor<16x64xf32>, %c: tensor<16x1xf32>):
    %0 = genesis.mul %a, %b : tensor<16x64xf32>
    %1 = genesis.broadcast_in_dim %c, [0, 1] : tensor<16x1xf32> -> tensor<16x64xf32>
    %2 = genesis.add %0, %1 : tensor<16x64xf32>
    genesis.yield %2 : tensor<16x64xf32>
  }
  return %late : tensor<16x64xf32>
}

// -----

// What is read across the peak comes from a reduction that only the
// recomputation would repeat: nothing cheap is left, an error names the
// bytes still needed.
// expected-error @below {{genesis-remat: @reduced_only needs 86144 bytes (arguments 4096 + arena 82048) after recomputing 0 values, more than the memory budget of 78000 bytes, and nothing cheap to recompute is left across its peak}}
func.func @reduced_only(%x: tensor<16x64xf32>) -> tensor<16x1xf32> {
  %s = genesis.fusion %x : (tensor<16x64xf32>) -> tensor<16x1xf32> {
  ^bb0(%a: tensor<16x64xf32>):
    %0 = genesis.reduce_sum %a dims [1] keepdim : tensor<16x64xf32>
    genesis.yield %0 : tensor<16x1xf32>
  }
  %big = genesis.fusion %x : (tensor<16x64xf32>) -> tensor<20x16x64xf32> {
  ^bb0(%a: tensor<16x64xf32>):
    %0 = genesis.broadcast_in_dim %a, [1, 2] : tensor<16x64xf32> -> tensor<20x16x64xf32>
    %1 = genesis.exp %0 : tensor<20x16x64xf32>
    genesis.yield %1 : tensor<20x16x64xf32>
  }
  %r = genesis.fusion %big, %s : (tensor<20x16x64xf32>, tensor<16x1xf32>) -> tensor<16x1xf32> {
  ^bb0(%a: tensor<20x16x64xf32>, %b: tensor<16x1xf32>):
    %0 = genesis.reduce_sum %a dims [0, 2] : tensor<20x16x64xf32>
    %1 = genesis.reshape %0 : tensor<16xf32> -> tensor<16x1xf32>
    %2 = genesis.add %1, %b : tensor<16x1xf32>
    genesis.yield %2 : tensor<16x1xf32>
  }
  return %r : tensor<16x1xf32>
}
