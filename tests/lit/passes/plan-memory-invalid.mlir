// RUN: genesis-opt %s --split-input-file --verify-diagnostics --genesis-plan-memory
// RUN: not genesis-opt %s --split-input-file --genesis-plan-memory="alignment=48" 2>&1 | FileCheck %s --check-prefix=ALIGN

// ALIGN: error: genesis-plan-memory: alignment 48 is not a power of two

// expected-error @below {{genesis-plan-memory: @blocks must have a body of one block}}
func.func @blocks(%x: tensor<4xf32>) -> tensor<4xf32> {
  cf.br ^bb1
^bb1:
  return %x : tensor<4xf32>
}

// -----

func.func @index(%x: tensor<2xf32>) -> tensor<2xindex> {
  // expected-error @below {{genesis-plan-memory: cannot plan a result of type 'tensor<2xindex>' (only static shapes of integers and floats)}}
  %0 = arith.constant dense<[1, 2]> : tensor<2xindex>
  return %0 : tensor<2xindex>
}
