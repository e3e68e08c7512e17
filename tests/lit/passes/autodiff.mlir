// RUN: genesis-opt %s --split-input-file --genesis-autodiff | FileCheck %s

// Each case reduces to a scalar with genesis.reduce_sum; the seed gradient is
// a constant 1 broadcast back to the operand's shape.

// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"})
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[ONE:.+]] = genesis.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[R:.+]] = genesis.reshape %[[ONE]] : tensor<f32> -> tensor<1xf32>
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim %[[R]], [0] : tensor<1xf32> -> tensor<4xf32>
// CHECK: %[[DX:.+]] = genesis.neg %[[G]] : tensor<4xf32>
// CHECK: return %[[L]], %[[DX]] : tensor<f32>, tensor<4xf32>
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.neg %x : tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// d/dx exp(x) = g * exp(x), reusing the forward exp.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"})
// CHECK: %[[E:.+]] = genesis.exp %[[X]] : tensor<4xf32>
// CHECK: %[[L:.+]] = genesis.reduce_sum %[[E]]
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[DX:.+]] = genesis.mul %[[G]], %[[E]] : tensor<4xf32>
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.exp %x : tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// d/dx log(x) = g / x.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"})
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[DX:.+]] = genesis.div %[[G]], %[[X]] : tensor<4xf32>
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.log %x : tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// d/dx tanh(x) = g * (1 - tanh(x)^2).
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"})
// CHECK: %[[T:.+]] = genesis.tanh %[[X]] : tensor<4xf32>
// CHECK: %[[L:.+]] = genesis.reduce_sum %[[T]]
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[T2:.+]] = genesis.mul %[[T]], %[[T]] : tensor<4xf32>
// CHECK: %[[ONE:.+]] = genesis.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK: %[[D:.+]] = genesis.sub %[[ONE]], %[[T2]] : tensor<4xf32>
// CHECK: %[[DX:.+]] = genesis.mul %[[G]], %[[D]] : tensor<4xf32>
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.tanh %x : tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// d/dx relu(x) = x > 0 ? g : 0.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"})
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[Z:.+]] = genesis.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[M:.+]] = genesis.compare gt, %[[X]], %[[Z]] : tensor<4xf32>
// CHECK: %[[Z2:.+]] = genesis.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[DX:.+]] = genesis.select %[[M]], %[[G]], %[[Z2]] : tensor<4xi1>, tensor<4xf32>
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.relu %x : tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// gelu_tanh(x) = 0.5 x (1 + t), t = tanh(c (x + 0.044715 x^3)), c = sqrt(2/pi):
// d/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 0.134145 x^2).
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"})
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[ONE:.+]] = genesis.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK: %[[X2:.+]] = genesis.mul %[[X]], %[[X]]
// CHECK: %[[X3:.+]] = genesis.mul %[[X2]], %[[X]]
// CHECK: %[[A:.+]] = genesis.constant dense<4.471500e-02>
// CHECK: %[[AX3:.+]] = genesis.mul %[[X3]], %[[A]]
// CHECK: %[[IN:.+]] = genesis.add %[[X]], %[[AX3]]
// CHECK: %[[C:.+]] = genesis.constant dense<0.797884583>
// CHECK: %[[U:.+]] = genesis.mul %[[IN]], %[[C]]
// CHECK: %[[T:.+]] = genesis.tanh %[[U]]
// CHECK: %[[B:.+]] = genesis.constant dense<1.341450e-01>
// CHECK: %[[BX2:.+]] = genesis.mul %[[X2]], %[[B]]
// CHECK: %[[DU0:.+]] = genesis.add %[[ONE]], %[[BX2]]
// CHECK: %[[C2:.+]] = genesis.constant dense<0.797884583>
// CHECK: %[[DU:.+]] = genesis.mul %[[DU0]], %[[C2]]
// CHECK: %[[T2:.+]] = genesis.mul %[[T]], %[[T]]
// CHECK: %[[S:.+]] = genesis.sub %[[ONE]], %[[T2]]
// CHECK: %[[SDU:.+]] = genesis.mul %[[S]], %[[DU]]
// CHECK: %[[H:.+]] = genesis.constant dense<5.000000e-01>
// CHECK: %[[HX:.+]] = genesis.mul %[[X]], %[[H]]
// CHECK: %[[P2:.+]] = genesis.mul %[[HX]], %[[SDU]]
// CHECK: %[[OPT:.+]] = genesis.add %[[ONE]], %[[T]]
// CHECK: %[[H2:.+]] = genesis.constant dense<5.000000e-01>
// CHECK: %[[P1:.+]] = genesis.mul %[[OPT]], %[[H2]]
// CHECK: %[[D:.+]] = genesis.add %[[P1]], %[[P2]]
// CHECK: %[[DX:.+]] = genesis.mul %[[G]], %[[D]]
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.gelu %x approximate = tanh : tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// add passes the gradient through; the input y gets none.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}, %{{.+}}: tensor<4xf32> {genesis.name = "y", genesis.role = "input"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"})
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK-NEXT: return %[[L]], %[[G]] : tensor<f32>, tensor<4xf32>
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}, %y: tensor<4xf32> {genesis.name = "y", genesis.role = "input"}) -> tensor<f32> {
  %0 = genesis.add %x, %y : tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// d/dx (x * y) = g * y.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}, %[[Y:.+]]: tensor<4xf32> {genesis.name = "y", genesis.role = "input"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"})
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[DX:.+]] = genesis.mul %[[G]], %[[Y]] : tensor<4xf32>
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}, %y: tensor<4xf32> {genesis.name = "y", genesis.role = "input"}) -> tensor<f32> {
  %0 = genesis.mul %x, %y : tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// q = x / y: dx = g / y, dy = -(g / y) * q = -g x / y^2.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}, %[[Y:.+]]: tensor<4xf32> {genesis.name = "y", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"}, tensor<4xf32> {genesis.name = "grad:y"})
// CHECK: %[[Q:.+]] = genesis.div %[[X]], %[[Y]] : tensor<4xf32>
// CHECK: %[[L:.+]] = genesis.reduce_sum %[[Q]]
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[DX:.+]] = genesis.div %[[G]], %[[Y]] : tensor<4xf32>
// CHECK: %[[M:.+]] = genesis.mul %[[DX]], %[[Q]] : tensor<4xf32>
// CHECK: %[[DY:.+]] = genesis.neg %[[M]] : tensor<4xf32>
// CHECK: return %[[L]], %[[DX]], %[[DY]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}, %y: tensor<4xf32> {genesis.name = "y", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.div %x, %y : tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// max routes g to the larger operand; ties split it 0.5 / 0.5.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}, %[[Y:.+]]: tensor<4xf32> {genesis.name = "y", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"}, tensor<4xf32> {genesis.name = "grad:y"})
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[ONE:.+]] = genesis.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK: %[[HALF:.+]] = genesis.constant dense<5.000000e-01> : tensor<4xf32>
// CHECK: %[[ZERO:.+]] = genesis.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[EQ:.+]] = genesis.compare eq, %[[X]], %[[Y]]
// CHECK: %[[TIE:.+]] = genesis.select %[[EQ]], %[[HALF]], %[[ZERO]]
// CHECK: %[[GT:.+]] = genesis.compare gt, %[[X]], %[[Y]]
// CHECK: %[[WX:.+]] = genesis.select %[[GT]], %[[ONE]], %[[TIE]]
// CHECK: %[[DX:.+]] = genesis.mul %[[G]], %[[WX]]
// CHECK: %[[ONE2:.+]] = genesis.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK: %[[HALF2:.+]] = genesis.constant dense<5.000000e-01> : tensor<4xf32>
// CHECK: %[[ZERO2:.+]] = genesis.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[EQ2:.+]] = genesis.compare eq, %[[Y]], %[[X]]
// CHECK: %[[TIE2:.+]] = genesis.select %[[EQ2]], %[[HALF2]], %[[ZERO2]]
// CHECK: %[[GT2:.+]] = genesis.compare gt, %[[Y]], %[[X]]
// CHECK: %[[WY:.+]] = genesis.select %[[GT2]], %[[ONE2]], %[[TIE2]]
// CHECK: %[[DY:.+]] = genesis.mul %[[G]], %[[WY]]
// CHECK: return %[[L]], %[[DX]], %[[DY]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}, %y: tensor<4xf32> {genesis.name = "y", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.max %x, %y : tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// select routes g to the chosen branch, zero to the other; c gets none.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%{{.+}}: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}, %{{.+}}: tensor<4xf32> {genesis.name = "y", genesis.role = "parameter"}, %[[C:.+]]: tensor<4xi1> {genesis.name = "c", genesis.role = "input"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"}, tensor<4xf32> {genesis.name = "grad:y"})
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[Z:.+]] = genesis.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[DX:.+]] = genesis.select %[[C]], %[[G]], %[[Z]]
// CHECK: %[[DY:.+]] = genesis.select %[[C]], %[[Z]], %[[G]]
// CHECK: return %[[L]], %[[DX]], %[[DY]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}, %y: tensor<4xf32> {genesis.name = "y", genesis.role = "parameter"}, %c: tensor<4xi1> {genesis.name = "c", genesis.role = "input"}) -> tensor<f32> {
  %0 = genesis.select %c, %x, %y : tensor<4xi1>, tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// reshape's gradient reshapes back.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<2x3xf32> {genesis.name = "grad:x"})
// CHECK: %[[E:.+]] = genesis.exp
// CHECK: %[[L:.+]] = genesis.reduce_sum %[[E]]
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[GE:.+]] = genesis.mul %[[G]], %[[E]] : tensor<6xf32>
// CHECK: %[[DX:.+]] = genesis.reshape %[[GE]] : tensor<6xf32> -> tensor<2x3xf32>
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<2x3xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %1 = genesis.exp %0 : tensor<6xf32>
  %2 = genesis.reduce_sum %1 dims [0] : tensor<6xf32>
  return %2 : tensor<f32>
}

// -----

// transpose [1, 2, 0]'s gradient is a transpose by the inverse, [2, 0, 1].
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<2x3x4xf32> {genesis.name = "grad:x"})
// CHECK: %[[E:.+]] = genesis.exp
// CHECK: %[[L:.+]] = genesis.reduce_sum %[[E]]
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[GE:.+]] = genesis.mul %[[G]], %[[E]] : tensor<3x4x2xf32>
// CHECK: %[[DX:.+]] = genesis.transpose %[[GE]], [2, 0, 1] : tensor<3x4x2xf32>
// CHECK: return %[[L]], %[[DX]] : tensor<f32>, tensor<2x3x4xf32>
func.func @loss(%x: tensor<2x3x4xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.transpose %x, [1, 2, 0] : tensor<2x3x4xf32>
  %1 = genesis.exp %0 : tensor<3x4x2xf32>
  %2 = genesis.reduce_sum %1 dims [0, 1, 2] : tensor<3x4x2xf32>
  return %2 : tensor<f32>
}

// -----

// Rows 1..2 and columns 1, 3, 5, 7 of a 4x8: the gradient pads the 2x4 back
// with low [1, 1], high [1, 0] and interior [0, 1].
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4x8xf32> {genesis.name = "grad:x"})
// CHECK: %[[E:.+]] = genesis.exp
// CHECK: %[[L:.+]] = genesis.reduce_sum %[[E]]
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[GE:.+]] = genesis.mul %[[G]], %[[E]] : tensor<2x4xf32>
// CHECK: %[[DX:.+]] = genesis.pad %[[GE]] low [1, 1] high [1, 0] interior [0, 1] : tensor<2x4xf32>
// CHECK: return %[[L]], %[[DX]] : tensor<f32>, tensor<4x8xf32>
func.func @loss(%x: tensor<4x8xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.slice %x start [1, 1] limit [3, 8] stride [1, 2] : tensor<4x8xf32>
  %1 = genesis.exp %0 : tensor<2x4xf32>
  %2 = genesis.reduce_sum %1 dims [0, 1] : tensor<2x4xf32>
  return %2 : tensor<f32>
}

// -----

// concat's gradient slices out x's columns [5, 8).
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32> {genesis.name = "x", genesis.role = "parameter"}, %{{.+}}: tensor<2x5xf32> {genesis.name = "y", genesis.role = "input"})
// CHECK-SAME: -> (tensor<f32>, tensor<2x3xf32> {genesis.name = "grad:x"})
// CHECK: %[[E:.+]] = genesis.exp
// CHECK: %[[L:.+]] = genesis.reduce_sum %[[E]]
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[GE:.+]] = genesis.mul %[[G]], %[[E]] : tensor<2x8xf32>
// CHECK: %[[DX:.+]] = genesis.slice %[[GE]] start [0, 5] limit [2, 8] stride [1, 1] : tensor<2x8xf32>
// CHECK: return %[[L]], %[[DX]] : tensor<f32>, tensor<2x3xf32>
func.func @loss(%x: tensor<2x3xf32> {genesis.name = "x", genesis.role = "parameter"}, %y: tensor<2x5xf32> {genesis.name = "y", genesis.role = "input"}) -> tensor<f32> {
  %0 = genesis.concat %y, %x dim 1 : tensor<2x5xf32>, tensor<2x3xf32>
  %1 = genesis.exp %0 : tensor<2x8xf32>
  %2 = genesis.reduce_sum %1 dims [0, 1] : tensor<2x8xf32>
  return %2 : tensor<f32>
}

// -----

// broadcast_in_dim [1] into 2x3x4: the gradient sums the new dims 0 and 2.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<3xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<3xf32> {genesis.name = "grad:x"})
// CHECK: %[[B:.+]] = genesis.broadcast_in_dim %[[X]], [1] : tensor<3xf32> -> tensor<2x3x4xf32>
// CHECK: %[[E:.+]] = genesis.exp %[[B]]
// CHECK: %[[L:.+]] = genesis.reduce_sum %[[E]]
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[GE:.+]] = genesis.mul %[[G]], %[[E]] : tensor<2x3x4xf32>
// CHECK: %[[DX:.+]] = genesis.reduce_sum %[[GE]] dims [0, 2] : tensor<2x3x4xf32>
// CHECK: return %[[L]], %[[DX]] : tensor<f32>, tensor<3xf32>
func.func @loss(%x: tensor<3xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.broadcast_in_dim %x, [1] : tensor<3xf32> -> tensor<2x3x4xf32>
  %1 = genesis.exp %0 : tensor<2x3x4xf32>
  %2 = genesis.reduce_sum %1 dims [0, 1, 2] : tensor<2x3x4xf32>
  return %2 : tensor<f32>
}

// -----

// take's gradient scatter-adds the rows' gradients into zeros.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<10x4xf32> {genesis.name = "x", genesis.role = "parameter"}, %[[IDS:.+]]: tensor<2x3xi64> {genesis.name = "ids", genesis.role = "input"})
// CHECK-SAME: -> (tensor<f32>, tensor<10x4xf32> {genesis.name = "grad:x"})
// CHECK: %[[T:.+]] = genesis.take %[[X]], %[[IDS]] axis 0
// CHECK: %[[E:.+]] = genesis.exp %[[T]]
// CHECK: %[[L:.+]] = genesis.reduce_sum %[[E]]
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[GE:.+]] = genesis.mul %[[G]], %[[E]] : tensor<2x3x4xf32>
// CHECK: %[[Z:.+]] = genesis.constant dense<0.000000e+00> : tensor<10x4xf32>
// CHECK: %[[DX:.+]] = genesis.scatter_add %[[Z]], %[[IDS]], %[[GE]] axis 0 : tensor<10x4xf32>, tensor<2x3xi64>, tensor<2x3x4xf32>
// CHECK: return %[[L]], %[[DX]] : tensor<f32>, tensor<10x4xf32>
func.func @loss(%x: tensor<10x4xf32> {genesis.name = "x", genesis.role = "parameter"}, %ids: tensor<2x3xi64> {genesis.name = "ids", genesis.role = "input"}) -> tensor<f32> {
  %0 = genesis.take %x, %ids axis 0 : tensor<10x4xf32>, tensor<2x3xi64>
  %1 = genesis.exp %0 : tensor<2x3x4xf32>
  %2 = genesis.reduce_sum %1 dims [0, 1, 2] : tensor<2x3x4xf32>
  return %2 : tensor<f32>
}

// -----

// reduce_sum over dim 1: the gradient is broadcast back along dim 1.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<2x3xf32> {genesis.name = "grad:x"})
// CHECK: %[[S:.+]] = genesis.reduce_sum %[[X]] dims [1]
// CHECK: %[[E:.+]] = genesis.exp %[[S]]
// CHECK: %[[L:.+]] = genesis.reduce_sum %[[E]]
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[GE:.+]] = genesis.mul %[[G]], %[[E]] : tensor<2xf32>
// CHECK: %[[R:.+]] = genesis.reshape %[[GE]] : tensor<2xf32> -> tensor<2x1xf32>
// CHECK: %[[DX:.+]] = genesis.broadcast_in_dim %[[R]], [0, 1] : tensor<2x1xf32> -> tensor<2x3xf32>
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<2x3xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.reduce_sum %x dims [1] : tensor<2x3xf32>
  %1 = genesis.exp %0 : tensor<2xf32>
  %2 = genesis.reduce_sum %1 dims [0] : tensor<2xf32>
  return %2 : tensor<f32>
}

// -----

// reduce_max: g goes to the positions equal to the max, split among ties.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<2x3xf32> {genesis.name = "grad:x"})
// CHECK: %[[M:.+]] = genesis.reduce_max %[[X]] dims [1]
// CHECK: %[[E:.+]] = genesis.exp %[[M]]
// CHECK: %[[L:.+]] = genesis.reduce_sum %[[E]]
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[GE:.+]] = genesis.mul %[[G]], %[[E]] : tensor<2xf32>
// CHECK: %[[MR:.+]] = genesis.reshape %[[M]] : tensor<2xf32> -> tensor<2x1xf32>
// CHECK: %[[MB:.+]] = genesis.broadcast_in_dim %[[MR]], [0, 1] : tensor<2x1xf32> -> tensor<2x3xf32>
// CHECK: %[[EQ:.+]] = genesis.compare eq, %[[X]], %[[MB]] : tensor<2x3xf32>
// CHECK: %[[MASK:.+]] = genesis.cast %[[EQ]] : tensor<2x3xi1> to tensor<2x3xf32>
// CHECK: %[[CNT:.+]] = genesis.reduce_sum %[[MASK]] dims [1] keepdim
// CHECK: %[[CNTB:.+]] = genesis.broadcast_in_dim %[[CNT]], [0, 1] : tensor<2x1xf32> -> tensor<2x3xf32>
// CHECK: %[[GR:.+]] = genesis.reshape %[[GE]] : tensor<2xf32> -> tensor<2x1xf32>
// CHECK: %[[GB:.+]] = genesis.broadcast_in_dim %[[GR]], [0, 1] : tensor<2x1xf32> -> tensor<2x3xf32>
// CHECK: %[[GM:.+]] = genesis.mul %[[GB]], %[[MASK]]
// CHECK: %[[DX:.+]] = genesis.div %[[GM]], %[[CNTB]]
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<2x3xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.reduce_max %x dims [1] : tensor<2x3xf32>
  %1 = genesis.exp %0 : tensor<2xf32>
  %2 = genesis.reduce_sum %1 dims [0] : tensor<2xf32>
  return %2 : tensor<f32>
}

// -----

// Y = X W: dX = G W^T, dW = X^T G.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4x3xf32> {genesis.name = "x", genesis.role = "parameter"}, %[[W:.+]]: tensor<3x2xf32> {genesis.name = "w", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4x3xf32> {genesis.name = "grad:x"}, tensor<3x2xf32> {genesis.name = "grad:w"})
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim {{.*}} -> tensor<4x2xf32>
// CHECK: %[[DX:.+]] = genesis.matmul %[[G]], %[[W]] transpose_rhs : tensor<4x2xf32>, tensor<3x2xf32>
// CHECK: %[[DW:.+]] = genesis.matmul %[[X]], %[[G]] transpose_lhs : tensor<4x3xf32>, tensor<4x2xf32>
// CHECK: return %[[L]], %[[DX]], %[[DW]]
func.func @loss(%x: tensor<4x3xf32> {genesis.name = "x", genesis.role = "parameter"}, %w: tensor<3x2xf32> {genesis.name = "w", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.matmul %x, %w : tensor<4x3xf32>, tensor<3x2xf32>
  %1 = genesis.reduce_sum %0 dims [0, 1] : tensor<4x2xf32>
  return %1 : tensor<f32>
}

// -----

// Y = X W^T: dX = G W, dW = G^T X.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4x3xf32> {genesis.name = "x", genesis.role = "parameter"}, %[[W:.+]]: tensor<2x3xf32> {genesis.name = "w", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4x3xf32> {genesis.name = "grad:x"}, tensor<2x3xf32> {genesis.name = "grad:w"})
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim {{.*}} -> tensor<4x2xf32>
// CHECK: %[[DX:.+]] = genesis.matmul %[[G]], %[[W]] : tensor<4x2xf32>, tensor<2x3xf32>
// CHECK: %[[DW:.+]] = genesis.matmul %[[G]], %[[X]] transpose_lhs : tensor<4x2xf32>, tensor<4x3xf32>
// CHECK: return %[[L]], %[[DX]], %[[DW]]
func.func @loss(%x: tensor<4x3xf32> {genesis.name = "x", genesis.role = "parameter"}, %w: tensor<2x3xf32> {genesis.name = "w", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.matmul %x, %w transpose_rhs : tensor<4x3xf32>, tensor<2x3xf32>
  %1 = genesis.reduce_sum %0 dims [0, 1] : tensor<4x2xf32>
  return %1 : tensor<f32>
}

// -----

// s = softmax(x): dx = s * (g - sum(g * s)) along dim 1.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<2x5xf32> {genesis.name = "x", genesis.role = "parameter"}, %[[T:.+]]: tensor<2x5xf32> {genesis.name = "t", genesis.role = "input"})
// CHECK-SAME: -> (tensor<f32>, tensor<2x5xf32> {genesis.name = "grad:x"})
// CHECK: %[[S:.+]] = genesis.softmax %[[X]] dim 1
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G0:.+]] = genesis.broadcast_in_dim
// CHECK: %[[G:.+]] = genesis.mul %[[G0]], %[[T]]
// CHECK: %[[GS:.+]] = genesis.mul %[[G]], %[[S]]
// CHECK: %[[SUM:.+]] = genesis.reduce_sum %[[GS]] dims [1] keepdim
// CHECK: %[[SUMB:.+]] = genesis.broadcast_in_dim %[[SUM]], [0, 1] : tensor<2x1xf32> -> tensor<2x5xf32>
// CHECK: %[[D:.+]] = genesis.sub %[[G]], %[[SUMB]]
// CHECK: %[[DX:.+]] = genesis.mul %[[S]], %[[D]]
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<2x5xf32> {genesis.name = "x", genesis.role = "parameter"}, %t: tensor<2x5xf32> {genesis.name = "t", genesis.role = "input"}) -> tensor<f32> {
  %0 = genesis.softmax %x dim 1 : tensor<2x5xf32>
  %1 = genesis.mul %0, %t : tensor<2x5xf32>
  %2 = genesis.reduce_sum %1 dims [0, 1] : tensor<2x5xf32>
  return %2 : tensor<f32>
}

// -----

// xhat = (x - mean) * rstd, gh = g * w:
// dx = rstd * (gh - mean(gh) - xhat * mean(gh * xhat)), dw = sum_0(g * xhat),
// db = sum_0(g).
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<2x8xf32> {genesis.name = "x", genesis.role = "parameter"}, %[[W:.+]]: tensor<8xf32> {genesis.name = "w", genesis.role = "parameter"}, %{{.+}}: tensor<8xf32> {genesis.name = "b", genesis.role = "parameter"}, %[[T:.+]]: tensor<2x8xf32> {genesis.name = "t", genesis.role = "input"})
// CHECK-SAME: -> (tensor<f32>, tensor<2x8xf32> {genesis.name = "grad:x"}, tensor<8xf32> {genesis.name = "grad:w"}, tensor<8xf32> {genesis.name = "grad:b"})
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G0:.+]] = genesis.broadcast_in_dim
// CHECK: %[[G:.+]] = genesis.mul %[[G0]], %[[T]]
// CHECK: %[[SX:.+]] = genesis.reduce_sum %[[X]] dims [1] keepdim
// CHECK: %[[SXB:.+]] = genesis.broadcast_in_dim %[[SX]]
// CHECK: %[[N1:.+]] = genesis.constant dense<1.250000e-01> : tensor<2x8xf32>
// CHECK: %[[MEAN:.+]] = genesis.mul %[[SXB]], %[[N1]]
// CHECK: %[[XC:.+]] = genesis.sub %[[X]], %[[MEAN]]
// CHECK: %[[XC2:.+]] = genesis.mul %[[XC]], %[[XC]]
// CHECK: %[[SV:.+]] = genesis.reduce_sum %[[XC2]] dims [1] keepdim
// CHECK: %[[SVB:.+]] = genesis.broadcast_in_dim %[[SV]]
// CHECK: %[[N2:.+]] = genesis.constant dense<1.250000e-01> : tensor<2x8xf32>
// CHECK: %[[VAR:.+]] = genesis.mul %[[SVB]], %[[N2]]
// CHECK: %[[EPS:.+]] = genesis.constant dense<9.99999974E-6> : tensor<2x8xf32>
// CHECK: %[[VE:.+]] = genesis.add %[[VAR]], %[[EPS]]
// CHECK: %[[RSTD:.+]] = genesis.rsqrt %[[VE]]
// CHECK: %[[XH:.+]] = genesis.mul %[[XC]], %[[RSTD]]
// CHECK: %[[WB:.+]] = genesis.broadcast_in_dim %[[W]], [1] : tensor<8xf32> -> tensor<2x8xf32>
// CHECK: %[[GH:.+]] = genesis.mul %[[G]], %[[WB]]
// CHECK: %[[GHX:.+]] = genesis.mul %[[GH]], %[[XH]]
// CHECK: %[[S1:.+]] = genesis.reduce_sum %[[GHX]] dims [1] keepdim
// CHECK: %[[S1B:.+]] = genesis.broadcast_in_dim %[[S1]]
// CHECK: %[[N3:.+]] = genesis.constant dense<1.250000e-01> : tensor<2x8xf32>
// CHECK: %[[M1:.+]] = genesis.mul %[[S1B]], %[[N3]]
// CHECK: %[[T1:.+]] = genesis.mul %[[XH]], %[[M1]]
// CHECK: %[[S2:.+]] = genesis.reduce_sum %[[GH]] dims [1] keepdim
// CHECK: %[[S2B:.+]] = genesis.broadcast_in_dim %[[S2]]
// CHECK: %[[N4:.+]] = genesis.constant dense<1.250000e-01> : tensor<2x8xf32>
// CHECK: %[[M2:.+]] = genesis.mul %[[S2B]], %[[N4]]
// CHECK: %[[D1:.+]] = genesis.sub %[[GH]], %[[M2]]
// CHECK: %[[D2:.+]] = genesis.sub %[[D1]], %[[T1]]
// CHECK: %[[DX:.+]] = genesis.mul %[[RSTD]], %[[D2]]
// CHECK: %[[GXH:.+]] = genesis.mul %[[G]], %[[XH]]
// CHECK: %[[DW:.+]] = genesis.reduce_sum %[[GXH]] dims [0] : tensor<2x8xf32>
// CHECK: %[[DB:.+]] = genesis.reduce_sum %[[G]] dims [0] : tensor<2x8xf32>
// CHECK: return %[[L]], %[[DX]], %[[DW]], %[[DB]]
func.func @loss(%x: tensor<2x8xf32> {genesis.name = "x", genesis.role = "parameter"}, %w: tensor<8xf32> {genesis.name = "w", genesis.role = "parameter"}, %b: tensor<8xf32> {genesis.name = "b", genesis.role = "parameter"}, %t: tensor<2x8xf32> {genesis.name = "t", genesis.role = "input"}) -> tensor<f32> {
  %0 = genesis.layer_norm %x weight %w : tensor<8xf32> bias %b : tensor<8xf32> eps 1.0e-05 : tensor<2x8xf32>
  %1 = genesis.mul %0, %t : tensor<2x8xf32>
  %2 = genesis.reduce_sum %1 dims [0, 1] : tensor<2x8xf32>
  return %2 : tensor<f32>
}

// -----

// r = rsqrt(mean(x^2) + eps), xhat = x * r, gh = g * w:
// dx = r * (gh - xhat * mean(gh * xhat)), dw = sum_0(g * xhat).
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<2x8xf32> {genesis.name = "x", genesis.role = "parameter"}, %[[W:.+]]: tensor<8xf32> {genesis.name = "w", genesis.role = "parameter"}, %[[T:.+]]: tensor<2x8xf32> {genesis.name = "t", genesis.role = "input"})
// CHECK-SAME: -> (tensor<f32>, tensor<2x8xf32> {genesis.name = "grad:x"}, tensor<8xf32> {genesis.name = "grad:w"})
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G0:.+]] = genesis.broadcast_in_dim
// CHECK: %[[G:.+]] = genesis.mul %[[G0]], %[[T]]
// CHECK: %[[EPS:.+]] = genesis.constant dense<9.99999974E-6> : tensor<2x8xf32>
// CHECK: %[[X2:.+]] = genesis.mul %[[X]], %[[X]]
// CHECK: %[[SS:.+]] = genesis.reduce_sum %[[X2]] dims [1] keepdim
// CHECK: %[[SSB:.+]] = genesis.broadcast_in_dim %[[SS]]
// CHECK: %[[N1:.+]] = genesis.constant dense<1.250000e-01> : tensor<2x8xf32>
// CHECK: %[[MS:.+]] = genesis.mul %[[SSB]], %[[N1]]
// CHECK: %[[MSE:.+]] = genesis.add %[[MS]], %[[EPS]]
// CHECK: %[[R:.+]] = genesis.rsqrt %[[MSE]]
// CHECK: %[[XH:.+]] = genesis.mul %[[X]], %[[R]]
// CHECK: %[[WB:.+]] = genesis.broadcast_in_dim %[[W]], [1] : tensor<8xf32> -> tensor<2x8xf32>
// CHECK: %[[GH:.+]] = genesis.mul %[[G]], %[[WB]]
// CHECK: %[[GHX:.+]] = genesis.mul %[[GH]], %[[XH]]
// CHECK: %[[S1:.+]] = genesis.reduce_sum %[[GHX]] dims [1] keepdim
// CHECK: %[[S1B:.+]] = genesis.broadcast_in_dim %[[S1]]
// CHECK: %[[N2:.+]] = genesis.constant dense<1.250000e-01> : tensor<2x8xf32>
// CHECK: %[[M1:.+]] = genesis.mul %[[S1B]], %[[N2]]
// CHECK: %[[T1:.+]] = genesis.mul %[[XH]], %[[M1]]
// CHECK: %[[D:.+]] = genesis.sub %[[GH]], %[[T1]]
// CHECK: %[[DX:.+]] = genesis.mul %[[R]], %[[D]]
// CHECK: %[[GXH:.+]] = genesis.mul %[[G]], %[[XH]]
// CHECK: %[[DW:.+]] = genesis.reduce_sum %[[GXH]] dims [0] : tensor<2x8xf32>
// CHECK: return %[[L]], %[[DX]], %[[DW]]
func.func @loss(%x: tensor<2x8xf32> {genesis.name = "x", genesis.role = "parameter"}, %w: tensor<8xf32> {genesis.name = "w", genesis.role = "parameter"}, %t: tensor<2x8xf32> {genesis.name = "t", genesis.role = "input"}) -> tensor<f32> {
  %0 = genesis.rms_norm %x, %w eps 1.0e-05 : tensor<2x8xf32>, tensor<8xf32>
  %1 = genesis.mul %0, %t : tensor<2x8xf32>
  %2 = genesis.reduce_sum %1 dims [0, 1] : tensor<2x8xf32>
  return %2 : tensor<f32>
}

// -----

// attention's gradient is one attention_grad on q, k, v, the forward output
// and g, with the same causal flag and scale.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[Q:.+]]: tensor<1x2x4x8xf32> {genesis.name = "x", genesis.role = "parameter"}, %[[K:.+]]: tensor<1x2x4x8xf32> {genesis.name = "k", genesis.role = "parameter"}, %[[V:.+]]: tensor<1x2x4x8xf32> {genesis.name = "v", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<1x2x4x8xf32> {genesis.name = "grad:x"}, tensor<1x2x4x8xf32> {genesis.name = "grad:k"}, tensor<1x2x4x8xf32> {genesis.name = "grad:v"})
// CHECK: %[[O:.+]] = genesis.attention %[[Q]], %[[K]], %[[V]] causal scale [[SCALE:.+]] :
// CHECK: %[[L:.+]] = genesis.reduce_sum %[[O]]
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[DQ:.+]], %[[DK:.+]], %[[DV:.+]] = genesis.attention_grad %[[Q]], %[[K]], %[[V]], %[[O]], %[[G]] causal scale [[SCALE]] :
// CHECK: return %[[L]], %[[DQ]], %[[DK]], %[[DV]]
func.func @loss(%x: tensor<1x2x4x8xf32> {genesis.name = "x", genesis.role = "parameter"}, %k: tensor<1x2x4x8xf32> {genesis.name = "k", genesis.role = "parameter"}, %v: tensor<1x2x4x8xf32> {genesis.name = "v", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.attention %x, %k, %v causal scale 0.35355339 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %1 = genesis.reduce_sum %0 dims [0, 1, 2, 3] : tensor<1x2x4x8xf32>
  return %1 : tensor<f32>
}

// -----

// cross_entropy's gradient is one cross_entropy_grad on the logits, the
// labels and the scalar g.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4x10xf32> {genesis.name = "x", genesis.role = "parameter"}, %[[IDS:.+]]: tensor<4xi64> {genesis.name = "ids", genesis.role = "input"})
// CHECK-SAME: -> (tensor<f32>, tensor<4x10xf32> {genesis.name = "grad:x"})
// CHECK: %[[CE:.+]] = genesis.cross_entropy %[[X]], %[[IDS]]
// CHECK: %[[L:.+]] = genesis.reduce_sum %[[CE]] dims []
// CHECK: %[[G:.+]] = genesis.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DX:.+]] = genesis.cross_entropy_grad %[[X]], %[[IDS]], %[[G]] : (tensor<4x10xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x10xf32>
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<4x10xf32> {genesis.name = "x", genesis.role = "parameter"}, %ids: tensor<4xi64> {genesis.name = "ids", genesis.role = "input"}) -> tensor<f32> {
  %0 = genesis.cross_entropy %x, %ids : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  %1 = genesis.reduce_sum %0 dims [] : tensor<f32>
  return %1 : tensor<f32>
}

// -----

// dropout's gradient is the same dropout (same seed, offset and probability,
// so the same mask and scale) applied to g.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32> {genesis.name = "x", genesis.role = "parameter"}, %[[SEED:.+]]: tensor<i64> {genesis.name = "seed", genesis.role = "input"})
// CHECK-SAME: -> (tensor<f32>, tensor<4x8xf32> {genesis.name = "grad:x"})
// CHECK: genesis.dropout %[[X]], %[[SEED]] {offset = 0 : i64, probability = 2.500000e-01 : f64}
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[DX:.+]] = genesis.dropout %[[G]], %[[SEED]] {offset = 0 : i64, probability = 2.500000e-01 : f64}
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<4x8xf32> {genesis.name = "x", genesis.role = "parameter"}, %s: tensor<i64> {genesis.name = "seed", genesis.role = "input"}) -> tensor<f32> {
  %0 = genesis.dropout %x, %s {offset = 0 : i64, probability = 0.25 : f64} : (tensor<4x8xf32>, tensor<i64>) -> tensor<4x8xf32>
  %1 = genesis.reduce_sum %0 dims [0, 1] : tensor<4x8xf32>
  return %1 : tensor<f32>
}

// -----

// x is used twice (exp(x) * x): the two contributions g * exp(x) and
// (g * x) * exp(x) are accumulated with genesis.add.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"})
// CHECK: %[[E:.+]] = genesis.exp %[[X]]
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[GX:.+]] = genesis.mul %[[G]], %[[X]]
// CHECK: %[[D1:.+]] = genesis.mul %[[G]], %[[E]]
// CHECK: %[[D2:.+]] = genesis.mul %[[GX]], %[[E]]
// CHECK: %[[DX:.+]] = genesis.add %[[D1]], %[[D2]]
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.exp %x : tensor<4xf32>
  %1 = genesis.mul %0, %x : tensor<4xf32>
  %2 = genesis.reduce_sum %1 dims [0] : tensor<4xf32>
  return %2 : tensor<f32>
}

// -----

// The parameter u does not reach the loss: its gradient is a zero constant.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"}, tensor<3x2xf32> {genesis.name = "grad:u"})
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[DX:.+]] = genesis.mul
// CHECK: %[[DU:.+]] = genesis.constant dense<0.000000e+00> : tensor<3x2xf32>
// CHECK: return %[[L]], %[[DX]], %[[DU]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}, %u: tensor<3x2xf32> {genesis.name = "u", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.exp %x : tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// stop_gradient(exp(x)) * x: only the direct use of x contributes, g * sg.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"})
// CHECK: %[[E:.+]] = genesis.exp %[[X]]
// CHECK: %[[SG:.+]] = genesis.stop_gradient %[[E]]
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[DX:.+]] = genesis.mul %[[G]], %[[SG]]
// CHECK-NEXT: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.exp %x : tensor<4xf32>
  %1 = genesis.stop_gradient %0 : tensor<4xf32>
  %2 = genesis.mul %1, %x : tensor<4xf32>
  %3 = genesis.reduce_sum %2 dims [0] : tensor<4xf32>
  return %3 : tensor<f32>
}

// -----

// x is an input, not a parameter: only dW = X^T G is built; dX is dead.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4x3xf32> {genesis.name = "x", genesis.role = "input"}, %[[W:.+]]: tensor<3x2xf32> {genesis.name = "w", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<3x2xf32> {genesis.name = "grad:w"})
// CHECK: genesis.matmul %[[X]], %[[W]] :
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK-NOT: genesis.matmul %[[G]], %[[W]]
// CHECK: %[[DW:.+]] = genesis.matmul %[[X]], %[[G]] transpose_lhs
// CHECK-NOT: genesis.matmul
// CHECK: return %[[L]], %[[DW]] : tensor<f32>, tensor<3x2xf32>
func.func @loss(%x: tensor<4x3xf32> {genesis.name = "x", genesis.role = "input"}, %w: tensor<3x2xf32> {genesis.name = "w", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.matmul %x, %w : tensor<4x3xf32>, tensor<3x2xf32>
  %1 = genesis.reduce_sum %0 dims [0, 1] : tensor<4x2xf32>
  return %1 : tensor<f32>
}

// -----

// argmax and compare carry no gradient: the select's branch fed by the argmax
// gets none, while the reduce_max branch and the exp path still flow to x.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<2x3xf32> {genesis.name = "grad:x"})
// CHECK: %[[M:.+]] = genesis.reduce_max %[[X]] dims [1]
// CHECK: %[[C:.+]] = genesis.compare gt,
// CHECK: %[[E:.+]] = genesis.exp %[[X]]
// CHECK: genesis.reduce_sum %[[E]] dims [1]
// CHECK: %[[L:.+]] = genesis.reduce_sum %{{.+}} dims [0] : tensor<2xf32>
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim {{.*}} -> tensor<2xf32>
// CHECK-NOT: genesis.argmax
// CHECK: %[[GR:.+]] = genesis.reshape %[[G]]
// CHECK: %[[GB:.+]] = genesis.broadcast_in_dim %[[GR]]
// CHECK: %[[DE:.+]] = genesis.mul %[[GB]], %[[E]]
// CHECK: %[[Z:.+]] = genesis.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK: %[[GM:.+]] = genesis.select %[[C]], %[[G]], %[[Z]]
// CHECK: genesis.compare eq, %[[X]]
// CHECK: genesis.reshape %[[GM]]
// CHECK: %[[DM:.+]] = genesis.div
// CHECK: %[[DX:.+]] = genesis.add %[[DE]], %[[DM]]
// CHECK-NOT: genesis.argmax
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<2x3xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.argmax %x dim 1 : tensor<2x3xf32>
  %1 = genesis.cast %0 : tensor<2xi64> to tensor<2xf32>
  %2 = genesis.reduce_max %x dims [1] : tensor<2x3xf32>
  %3 = genesis.compare gt, %2, %1 : tensor<2xf32>
  %4 = genesis.select %3, %2, %1 : tensor<2xi1>, tensor<2xf32>
  %5 = genesis.exp %x : tensor<2x3xf32>
  %6 = genesis.reduce_sum %5 dims [1] : tensor<2x3xf32>
  %7 = genesis.add %4, %6 : tensor<2xf32>
  %8 = genesis.reduce_sum %7 dims [0] : tensor<2xf32>
  return %8 : tensor<f32>
}

// -----

// d/dx |x| = g * sign(x) (0 at x = 0).
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"})
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[S:.+]] = genesis.sign %[[X]] : tensor<4xf32>
// CHECK: %[[DX:.+]] = genesis.mul %[[G]], %[[S]] : tensor<4xf32>
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.abs %x : tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// d/dx sqrt(x) = (0.5 g) / sqrt(x), reusing the forward sqrt.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"})
// CHECK: %[[Y:.+]] = genesis.sqrt %[[X]] : tensor<4xf32>
// CHECK: %[[L:.+]] = genesis.reduce_sum %[[Y]]
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[H:.+]] = genesis.constant dense<5.000000e-01> : tensor<4xf32>
// CHECK: %[[GH:.+]] = genesis.mul %[[G]], %[[H]] : tensor<4xf32>
// CHECK: %[[DX:.+]] = genesis.div %[[GH]], %[[Y]] : tensor<4xf32>
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.sqrt %x : tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// y = x^(-1/2): d/dx = -1/2 x^(-3/2) = (-0.5 g) * y^3.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"})
// CHECK: %[[Y:.+]] = genesis.rsqrt %[[X]] : tensor<4xf32>
// CHECK: %[[L:.+]] = genesis.reduce_sum %[[Y]]
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[Y2:.+]] = genesis.mul %[[Y]], %[[Y]] : tensor<4xf32>
// CHECK: %[[Y3:.+]] = genesis.mul %[[Y]], %[[Y2]] : tensor<4xf32>
// CHECK: %[[MH:.+]] = genesis.constant dense<-5.000000e-01> : tensor<4xf32>
// CHECK: %[[GM:.+]] = genesis.mul %[[G]], %[[MH]] : tensor<4xf32>
// CHECK: %[[DX:.+]] = genesis.mul %[[GM]], %[[Y3]] : tensor<4xf32>
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.rsqrt %x : tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// d/dx sigmoid(x) = g * y (1 - y), reusing the forward sigmoid.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"})
// CHECK: %[[Y:.+]] = genesis.sigmoid %[[X]] : tensor<4xf32>
// CHECK: %[[L:.+]] = genesis.reduce_sum %[[Y]]
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[ONE:.+]] = genesis.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK: %[[OMY:.+]] = genesis.sub %[[ONE]], %[[Y]] : tensor<4xf32>
// CHECK: %[[D:.+]] = genesis.mul %[[Y]], %[[OMY]] : tensor<4xf32>
// CHECK: %[[DX:.+]] = genesis.mul %[[G]], %[[D]] : tensor<4xf32>
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.sigmoid %x : tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// silu(x) = x s(x), s = sigmoid(x): d/dx = s (1 + x (1 - s)).
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"})
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[ONE:.+]] = genesis.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK: %[[S:.+]] = genesis.sigmoid %[[X]] : tensor<4xf32>
// CHECK: %[[OMS:.+]] = genesis.sub %[[ONE]], %[[S]] : tensor<4xf32>
// CHECK: %[[XOMS:.+]] = genesis.mul %[[X]], %[[OMS]] : tensor<4xf32>
// CHECK: %[[P:.+]] = genesis.add %[[ONE]], %[[XOMS]] : tensor<4xf32>
// CHECK: %[[D:.+]] = genesis.mul %[[S]], %[[P]] : tensor<4xf32>
// CHECK: %[[DX:.+]] = genesis.mul %[[G]], %[[D]] : tensor<4xf32>
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.silu %x : tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// d/dx sin(x) = g * cos(x).
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"})
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[C:.+]] = genesis.cos %[[X]] : tensor<4xf32>
// CHECK: %[[DX:.+]] = genesis.mul %[[G]], %[[C]] : tensor<4xf32>
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.sin %x : tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// d/dx cos(x) = -(g * sin(x)).
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"})
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[S:.+]] = genesis.sin %[[X]] : tensor<4xf32>
// CHECK: %[[GS:.+]] = genesis.mul %[[G]], %[[S]] : tensor<4xf32>
// CHECK: %[[DX:.+]] = genesis.neg %[[GS]] : tensor<4xf32>
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.cos %x : tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// d/dx erf(x) = g * (2 / sqrt(pi)) exp(-x^2); 2 / sqrt(pi) = 1.12837923.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"})
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[X2:.+]] = genesis.mul %[[X]], %[[X]] : tensor<4xf32>
// CHECK: %[[NX2:.+]] = genesis.neg %[[X2]] : tensor<4xf32>
// CHECK: %[[E:.+]] = genesis.exp %[[NX2]] : tensor<4xf32>
// CHECK: %[[K:.+]] = genesis.constant dense<1.12837923> : tensor<4xf32>
// CHECK: %[[D:.+]] = genesis.mul %[[E]], %[[K]] : tensor<4xf32>
// CHECK: %[[DX:.+]] = genesis.mul %[[G]], %[[D]] : tensor<4xf32>
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.erf %x : tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// gelu (default erf form) = x Phi(x): d/dx = Phi(x) + x phi(x), with
// Phi(x) = 0.5 (1 + erf(x / sqrt(2))) and phi(x) = exp(-x^2 / 2) / sqrt(2 pi);
// 1 / sqrt(2) = 0.707106769, 1 / sqrt(2 pi) = 0.398942292.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"})
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[ONE:.+]] = genesis.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK: %[[R2:.+]] = genesis.constant dense<0.707106769> : tensor<4xf32>
// CHECK: %[[XR2:.+]] = genesis.mul %[[X]], %[[R2]]
// CHECK: %[[ERF:.+]] = genesis.erf %[[XR2]]
// CHECK: %[[OPE:.+]] = genesis.add %[[ONE]], %[[ERF]]
// CHECK: %[[H:.+]] = genesis.constant dense<5.000000e-01>
// CHECK: %[[CDF:.+]] = genesis.mul %[[OPE]], %[[H]]
// CHECK: %[[X2:.+]] = genesis.mul %[[X]], %[[X]]
// CHECK: %[[MH:.+]] = genesis.constant dense<-5.000000e-01>
// CHECK: %[[X2H:.+]] = genesis.mul %[[X2]], %[[MH]]
// CHECK: %[[E:.+]] = genesis.exp %[[X2H]]
// CHECK: %[[N:.+]] = genesis.constant dense<0.398942292>
// CHECK: %[[PDF:.+]] = genesis.mul %[[E]], %[[N]]
// CHECK: %[[XPDF:.+]] = genesis.mul %[[X]], %[[PDF]]
// CHECK: %[[D:.+]] = genesis.add %[[CDF]], %[[XPDF]]
// CHECK: %[[DX:.+]] = genesis.mul %[[G]], %[[D]]
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.gelu %x : tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// x - y: dx = g, dy = -g.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%{{.+}}: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}, %{{.+}}: tensor<4xf32> {genesis.name = "y", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"}, tensor<4xf32> {genesis.name = "grad:y"})
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[DY:.+]] = genesis.neg %[[G]] : tensor<4xf32>
// CHECK-NEXT: return %[[L]], %[[G]], %[[DY]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}, %y: tensor<4xf32> {genesis.name = "y", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.sub %x, %y : tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// z = x^y: dx = g * y x^(y - 1); dy = g * z log(x), forced to 0 where x = 0
// and y >= 0 (where log(x) = -inf would give NaN).
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}, %[[Y:.+]]: tensor<4xf32> {genesis.name = "y", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"}, tensor<4xf32> {genesis.name = "grad:y"})
// CHECK: %[[Z:.+]] = genesis.pow %[[X]], %[[Y]] : tensor<4xf32>
// CHECK: %[[L:.+]] = genesis.reduce_sum %[[Z]]
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[ZERO:.+]] = genesis.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[ONE:.+]] = genesis.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK: %[[YM1:.+]] = genesis.sub %[[Y]], %[[ONE]]
// CHECK: %[[P:.+]] = genesis.pow %[[X]], %[[YM1]]
// CHECK: %[[YP:.+]] = genesis.mul %[[Y]], %[[P]]
// CHECK: %[[DX:.+]] = genesis.mul %[[G]], %[[YP]]
// CHECK: %[[LOGX:.+]] = genesis.log %[[X]]
// CHECK: %[[GE:.+]] = genesis.compare ge, %[[Y]], %[[ZERO]]
// CHECK: %[[EQ:.+]] = genesis.compare eq, %[[X]], %[[ZERO]]
// CHECK: %[[MASK:.+]] = genesis.and %[[EQ]], %[[GE]]
// CHECK: %[[ZL:.+]] = genesis.mul %[[Z]], %[[LOGX]]
// CHECK: %[[GZL:.+]] = genesis.mul %[[G]], %[[ZL]]
// CHECK: %[[DY:.+]] = genesis.select %[[MASK]], %[[ZERO]], %[[GZL]]
// CHECK: return %[[L]], %[[DX]], %[[DY]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}, %y: tensor<4xf32> {genesis.name = "y", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.pow %x, %y : tensor<4xf32>, tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// min routes g to the smaller operand; ties split it 0.5 / 0.5.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}, %[[Y:.+]]: tensor<4xf32> {genesis.name = "y", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"}, tensor<4xf32> {genesis.name = "grad:y"})
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[ONE:.+]] = genesis.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK: %[[HALF:.+]] = genesis.constant dense<5.000000e-01> : tensor<4xf32>
// CHECK: %[[ZERO:.+]] = genesis.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[EQ:.+]] = genesis.compare eq, %[[X]], %[[Y]]
// CHECK: %[[TIE:.+]] = genesis.select %[[EQ]], %[[HALF]], %[[ZERO]]
// CHECK: %[[LT:.+]] = genesis.compare lt, %[[X]], %[[Y]]
// CHECK: %[[WX:.+]] = genesis.select %[[LT]], %[[ONE]], %[[TIE]]
// CHECK: %[[DX:.+]] = genesis.mul %[[G]], %[[WX]]
// CHECK: %[[ONE2:.+]] = genesis.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK: %[[HALF2:.+]] = genesis.constant dense<5.000000e-01> : tensor<4xf32>
// CHECK: %[[ZERO2:.+]] = genesis.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[EQ2:.+]] = genesis.compare eq, %[[Y]], %[[X]]
// CHECK: %[[TIE2:.+]] = genesis.select %[[EQ2]], %[[HALF2]], %[[ZERO2]]
// CHECK: %[[LT2:.+]] = genesis.compare lt, %[[Y]], %[[X]]
// CHECK: %[[WY:.+]] = genesis.select %[[LT2]], %[[ONE2]], %[[TIE2]]
// CHECK: %[[DY:.+]] = genesis.mul %[[G]], %[[WY]]
// CHECK: return %[[L]], %[[DX]], %[[DY]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}, %y: tensor<4xf32> {genesis.name = "y", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.min %x, %y : tensor<4xf32>, tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<4xf32>
  return %1 : tensor<f32>
}

// -----

// A float cast's gradient is the cast back: f32 -> f64, exp in f64, -> f32.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"})
// CHECK: %[[X64:.+]] = genesis.cast %[[X]] : tensor<4xf32> to tensor<4xf64>
// CHECK: %[[E:.+]] = genesis.exp %[[X64]] : tensor<4xf64>
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[G64:.+]] = genesis.cast %[[G]] : tensor<4xf32> to tensor<4xf64>
// CHECK: %[[GE:.+]] = genesis.mul %[[G64]], %[[E]] : tensor<4xf64>
// CHECK: %[[DX:.+]] = genesis.cast %[[GE]] : tensor<4xf64> to tensor<4xf32>
// CHECK: return %[[L]], %[[DX]] : tensor<f32>, tensor<4xf32>
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.cast %x : tensor<4xf32> to tensor<4xf64>
  %1 = genesis.exp %0 : tensor<4xf64>
  %2 = genesis.cast %1 : tensor<4xf64> to tensor<4xf32>
  %3 = genesis.reduce_sum %2 dims [0] : tensor<4xf32>
  return %3 : tensor<f32>
}

// -----

// pad low [1, 0] high [0, 2] interior [0, 1] of a 2x3 gives a 3x7 holding x
// at rows 1..2 and columns 0, 2, 4: the gradient slices those back out.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<2x3xf32> {genesis.name = "grad:x"})
// CHECK: %[[E:.+]] = genesis.exp
// CHECK: %[[L:.+]] = genesis.reduce_sum %[[E]]
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[GE:.+]] = genesis.mul %[[G]], %[[E]] : tensor<3x7xf32>
// CHECK: %[[DX:.+]] = genesis.slice %[[GE]] start [1, 0] limit [3, 5] stride [1, 2] : tensor<3x7xf32>
// CHECK: return %[[L]], %[[DX]] : tensor<f32>, tensor<2x3xf32>
func.func @loss(%x: tensor<2x3xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.pad %x low [1, 0] high [0, 2] interior [0, 1] : tensor<2x3xf32>
  %1 = genesis.exp %0 : tensor<3x7xf32>
  %2 = genesis.reduce_sum %1 dims [0, 1] : tensor<3x7xf32>
  return %2 : tensor<f32>
}

// -----

// scatter_add: the operand gets g unchanged, the updates gather g's rows.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<10x4xf32> {genesis.name = "x", genesis.role = "parameter"}, %[[IDS:.+]]: tensor<3xi64> {genesis.name = "ids", genesis.role = "input"}, %[[U:.+]]: tensor<3x4xf32> {genesis.name = "u", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<10x4xf32> {genesis.name = "grad:x"}, tensor<3x4xf32> {genesis.name = "grad:u"})
// CHECK: %[[S:.+]] = genesis.scatter_add %[[X]], %[[IDS]], %[[U]] axis 0
// CHECK: %[[E:.+]] = genesis.exp %[[S]]
// CHECK: %[[L:.+]] = genesis.reduce_sum %[[E]]
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[GE:.+]] = genesis.mul %[[G]], %[[E]] : tensor<10x4xf32>
// CHECK: %[[DU:.+]] = genesis.take %[[GE]], %[[IDS]] axis 0 : tensor<10x4xf32>, tensor<3xi64>
// CHECK: return %[[L]], %[[GE]], %[[DU]] : tensor<f32>, tensor<10x4xf32>, tensor<3x4xf32>
func.func @loss(%x: tensor<10x4xf32> {genesis.name = "x", genesis.role = "parameter"}, %ids: tensor<3xi64> {genesis.name = "ids", genesis.role = "input"}, %u: tensor<3x4xf32> {genesis.name = "u", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.scatter_add %x, %ids, %u axis 0 : tensor<10x4xf32>, tensor<3xi64>, tensor<3x4xf32>
  %1 = genesis.exp %0 : tensor<10x4xf32>
  %2 = genesis.reduce_sum %1 dims [0, 1] : tensor<10x4xf32>
  return %2 : tensor<f32>
}

// -----

// reduce_min: g goes to the positions equal to the min, split among ties.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<2x3xf32> {genesis.name = "grad:x"})
// CHECK: %[[M:.+]] = genesis.reduce_min %[[X]] dims [1] : tensor<2x3xf32>
// CHECK: %[[L:.+]] = genesis.reduce_sum %[[M]]
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim {{.*}} -> tensor<2xf32>
// CHECK: %[[MR:.+]] = genesis.reshape %[[M]] : tensor<2xf32> -> tensor<2x1xf32>
// CHECK: %[[MB:.+]] = genesis.broadcast_in_dim %[[MR]], [0, 1] : tensor<2x1xf32> -> tensor<2x3xf32>
// CHECK: %[[EQ:.+]] = genesis.compare eq, %[[X]], %[[MB]]
// CHECK: %[[HIT:.+]] = genesis.cast %[[EQ]] : tensor<2x3xi1> to tensor<2x3xf32>
// CHECK: %[[CNT:.+]] = genesis.reduce_sum %[[HIT]] dims [1] keepdim
// CHECK: %[[CNTB:.+]] = genesis.broadcast_in_dim %[[CNT]]
// CHECK: %[[GR:.+]] = genesis.reshape %[[G]] : tensor<2xf32> -> tensor<2x1xf32>
// CHECK: %[[GB:.+]] = genesis.broadcast_in_dim %[[GR]], [0, 1] : tensor<2x1xf32> -> tensor<2x3xf32>
// CHECK: %[[GH:.+]] = genesis.mul %[[GB]], %[[HIT]]
// CHECK: %[[DX:.+]] = genesis.div %[[GH]], %[[CNTB]]
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<2x3xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.reduce_min %x dims [1] : tensor<2x3xf32>
  %1 = genesis.reduce_sum %0 dims [0] : tensor<2xf32>
  return %1 : tensor<f32>
}

// -----

// y = log_softmax(x): dx = g - exp(y) sum(g), with exp(y) = softmax(x).
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<2x5xf32> {genesis.name = "x", genesis.role = "parameter"}, %[[T:.+]]: tensor<2x5xf32> {genesis.name = "t", genesis.role = "input"})
// CHECK-SAME: -> (tensor<f32>, tensor<2x5xf32> {genesis.name = "grad:x"})
// CHECK: %[[Y:.+]] = genesis.log_softmax %[[X]] dim 1
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G0:.+]] = genesis.broadcast_in_dim
// CHECK: %[[G:.+]] = genesis.mul %[[G0]], %[[T]]
// CHECK: %[[SG:.+]] = genesis.reduce_sum %[[G]] dims [1] keepdim
// CHECK: %[[SGB:.+]] = genesis.broadcast_in_dim %[[SG]], [0, 1] : tensor<2x1xf32> -> tensor<2x5xf32>
// CHECK: %[[P:.+]] = genesis.exp %[[Y]]
// CHECK: %[[PS:.+]] = genesis.mul %[[P]], %[[SGB]]
// CHECK: %[[DX:.+]] = genesis.sub %[[G]], %[[PS]]
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<2x5xf32> {genesis.name = "x", genesis.role = "parameter"}, %t: tensor<2x5xf32> {genesis.name = "t", genesis.role = "input"}) -> tensor<f32> {
  %0 = genesis.log_softmax %x dim 1 : tensor<2x5xf32>
  %1 = genesis.mul %0, %t : tensor<2x5xf32>
  %2 = genesis.reduce_sum %1 dims [0, 1] : tensor<2x5xf32>
  return %2 : tensor<f32>
}

// -----

// rope: y = x cos + R(x) sin with R(x) = concat(-x[4:], x[:4]) and R^T = -R,
// so dx = g cos - R(g sin); the cos/sin tables are inputs and get none.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x8xf32> {genesis.name = "x", genesis.role = "parameter"}, %[[C:.+]]: tensor<4x8xf32> {genesis.name = "cos", genesis.role = "input"}, %[[S:.+]]: tensor<4x8xf32> {genesis.name = "sin", genesis.role = "input"}, %[[T:.+]]: tensor<2x4x8xf32> {genesis.name = "t", genesis.role = "input"})
// CHECK-SAME: -> (tensor<f32>, tensor<2x4x8xf32> {genesis.name = "grad:x"})
// CHECK: genesis.rope %[[X]], %[[C]], %[[S]]
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G0:.+]] = genesis.broadcast_in_dim
// CHECK: %[[G:.+]] = genesis.mul %[[G0]], %[[T]]
// CHECK: %[[CB:.+]] = genesis.broadcast_in_dim %[[C]], [1, 2] : tensor<4x8xf32> -> tensor<2x4x8xf32>
// CHECK: %[[SB:.+]] = genesis.broadcast_in_dim %[[S]], [1, 2] : tensor<4x8xf32> -> tensor<2x4x8xf32>
// CHECK: %[[GS:.+]] = genesis.mul %[[G]], %[[SB]]
// CHECK: %[[LO:.+]] = genesis.slice %[[GS]] start [0, 0, 0] limit [2, 4, 4] stride [1, 1, 1]
// CHECK: %[[HI:.+]] = genesis.slice %[[GS]] start [0, 0, 4] limit [2, 4, 8] stride [1, 1, 1]
// CHECK: %[[NHI:.+]] = genesis.neg %[[HI]]
// CHECK: %[[RGS:.+]] = genesis.concat %[[NHI]], %[[LO]] dim 2
// CHECK: %[[GC:.+]] = genesis.mul %[[G]], %[[CB]]
// CHECK: %[[DX:.+]] = genesis.sub %[[GC]], %[[RGS]]
// CHECK: return %[[L]], %[[DX]] : tensor<f32>, tensor<2x4x8xf32>
func.func @loss(%x: tensor<2x4x8xf32> {genesis.name = "x", genesis.role = "parameter"}, %c: tensor<4x8xf32> {genesis.name = "cos", genesis.role = "input"}, %s: tensor<4x8xf32> {genesis.name = "sin", genesis.role = "input"}, %t: tensor<2x4x8xf32> {genesis.name = "t", genesis.role = "input"}) -> tensor<f32> {
  %0 = genesis.rope %x, %c, %s : (tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
  %1 = genesis.mul %0, %t : tensor<2x4x8xf32>
  %2 = genesis.reduce_sum %1 dims [0, 1, 2] : tensor<2x4x8xf32>
  return %2 : tensor<f32>
}

// -----

// n = global_norm(x, y): dx = x * f, dy = y * f with f = g / n (0 where
// n = 0, as PyTorch's norm), broadcast to each input's shape.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32> {genesis.name = "x", genesis.role = "parameter"}, %[[Y:.+]]: tensor<4xf32> {genesis.name = "y", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<2x3xf32> {genesis.name = "grad:x"}, tensor<4xf32> {genesis.name = "grad:y"})
// CHECK: %[[N:.+]] = genesis.global_norm %[[X]], %[[Y]]
// CHECK: %[[L:.+]] = genesis.reduce_sum %[[N]] dims []
// CHECK: %[[G:.+]] = genesis.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[Z:.+]] = genesis.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[ISZ:.+]] = genesis.compare eq, %[[N]], %[[Z]] : tensor<f32>
// CHECK: %[[Q:.+]] = genesis.div %[[G]], %[[N]] : tensor<f32>
// CHECK: %[[F:.+]] = genesis.select %[[ISZ]], %[[Z]], %[[Q]]
// CHECK: %[[FX:.+]] = genesis.broadcast_in_dim %[[F]], [] : tensor<f32> -> tensor<2x3xf32>
// CHECK: %[[FXC:.+]] = genesis.cast %[[FX]]
// CHECK: %[[DX:.+]] = genesis.mul %[[X]], %[[FXC]] : tensor<2x3xf32>
// CHECK: %[[FY:.+]] = genesis.broadcast_in_dim %[[F]], [] : tensor<f32> -> tensor<4xf32>
// CHECK: %[[FYC:.+]] = genesis.cast %[[FY]]
// CHECK: %[[DY:.+]] = genesis.mul %[[Y]], %[[FYC]] : tensor<4xf32>
// CHECK: return %[[L]], %[[DX]], %[[DY]]
func.func @loss(%x: tensor<2x3xf32> {genesis.name = "x", genesis.role = "parameter"}, %y: tensor<4xf32> {genesis.name = "y", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.global_norm %x, %y : tensor<2x3xf32>, tensor<4xf32>
  %1 = genesis.reduce_sum %0 dims [] : tensor<f32>
  return %1 : tensor<f32>
}

// -----

// all_reduce sum's gradient is an all_reduce sum of g.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32> {genesis.name = "grad:x"})
// CHECK: %[[A:.+]] = genesis.all_reduce sum, %[[X]] : tensor<4xf32>
// CHECK: %[[E:.+]] = genesis.exp %[[A]]
// CHECK: %[[L:.+]] = genesis.reduce_sum %[[E]]
// CHECK: %[[G:.+]] = genesis.broadcast_in_dim
// CHECK: %[[GE:.+]] = genesis.mul %[[G]], %[[E]] : tensor<4xf32>
// CHECK: %[[DX:.+]] = genesis.all_reduce sum, %[[GE]] : tensor<4xf32>
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "parameter"}) -> tensor<f32> {
  %0 = genesis.all_reduce sum, %x : tensor<4xf32>
  %1 = genesis.exp %0 : tensor<4xf32>
  %2 = genesis.reduce_sum %1 dims [0] : tensor<4xf32>
  return %2 : tensor<f32>
}

// -----

// C = X^T W (transpose_lhs), X 3x4, W 3x2: dX = W G^T (3x4), dW = X G (3x2).
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<3x4xf32> {genesis.name = "x", genesis.role = "parameter"}, %[[W:.+]]: tensor<3x2xf32> {genesis.name = "w", genesis.role = "parameter"}, %[[T:.+]]: tensor<4x2xf32> {genesis.name = "t", genesis.role = "input"})
// CHECK-SAME: -> (tensor<f32>, tensor<3x4xf32> {genesis.name = "grad:x"}, tensor<3x2xf32> {genesis.name = "grad:w"})
// CHECK: genesis.matmul %[[X]], %[[W]] transpose_lhs :
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G0:.+]] = genesis.broadcast_in_dim
// CHECK: %[[G:.+]] = genesis.mul %[[G0]], %[[T]]
// CHECK: %[[DX:.+]] = genesis.matmul %[[W]], %[[G]] transpose_rhs : tensor<3x2xf32>, tensor<4x2xf32>
// CHECK: %[[DW:.+]] = genesis.matmul %[[X]], %[[G]] : tensor<3x4xf32>, tensor<4x2xf32>
// CHECK: return %[[L]], %[[DX]], %[[DW]] : tensor<f32>, tensor<3x4xf32>, tensor<3x2xf32>
func.func @loss(%x: tensor<3x4xf32> {genesis.name = "x", genesis.role = "parameter"}, %w: tensor<3x2xf32> {genesis.name = "w", genesis.role = "parameter"}, %t: tensor<4x2xf32> {genesis.name = "t", genesis.role = "input"}) -> tensor<f32> {
  %0 = genesis.matmul %x, %w transpose_lhs : tensor<3x4xf32>, tensor<3x2xf32>
  %1 = genesis.mul %0, %t : tensor<4x2xf32>
  %2 = genesis.reduce_sum %1 dims [0, 1] : tensor<4x2xf32>
  return %2 : tensor<f32>
}

// -----

// Batched C = X W per batch (2x4x3 by 2x3x5): dX = G W^T, dW = X^T G, batched.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<2x4x3xf32> {genesis.name = "x", genesis.role = "parameter"}, %[[W:.+]]: tensor<2x3x5xf32> {genesis.name = "w", genesis.role = "parameter"}, %[[T:.+]]: tensor<2x4x5xf32> {genesis.name = "t", genesis.role = "input"})
// CHECK-SAME: -> (tensor<f32>, tensor<2x4x3xf32> {genesis.name = "grad:x"}, tensor<2x3x5xf32> {genesis.name = "grad:w"})
// CHECK: genesis.matmul %[[X]], %[[W]] :
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G0:.+]] = genesis.broadcast_in_dim
// CHECK: %[[G:.+]] = genesis.mul %[[G0]], %[[T]]
// CHECK: %[[DX:.+]] = genesis.matmul %[[G]], %[[W]] transpose_rhs : tensor<2x4x5xf32>, tensor<2x3x5xf32>
// CHECK: %[[DW:.+]] = genesis.matmul %[[X]], %[[G]] transpose_lhs : tensor<2x4x3xf32>, tensor<2x4x5xf32>
// CHECK: return %[[L]], %[[DX]], %[[DW]] : tensor<f32>, tensor<2x4x3xf32>, tensor<2x3x5xf32>
func.func @loss(%x: tensor<2x4x3xf32> {genesis.name = "x", genesis.role = "parameter"}, %w: tensor<2x3x5xf32> {genesis.name = "w", genesis.role = "parameter"}, %t: tensor<2x4x5xf32> {genesis.name = "t", genesis.role = "input"}) -> tensor<f32> {
  %0 = genesis.matmul %x, %w : tensor<2x4x3xf32>, tensor<2x3x5xf32>
  %1 = genesis.mul %0, %t : tensor<2x4x5xf32>
  %2 = genesis.reduce_sum %1 dims [0, 1, 2] : tensor<2x4x5xf32>
  return %2 : tensor<f32>
}

// -----

// layer_norm without weight or bias: h = g, so
// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)).
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<2x8xf32> {genesis.name = "x", genesis.role = "parameter"}, %[[T:.+]]: tensor<2x8xf32> {genesis.name = "t", genesis.role = "input"})
// CHECK-SAME: -> (tensor<f32>, tensor<2x8xf32> {genesis.name = "grad:x"})
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G0:.+]] = genesis.broadcast_in_dim
// CHECK: %[[G:.+]] = genesis.mul %[[G0]], %[[T]]
// CHECK: %[[SX:.+]] = genesis.reduce_sum %[[X]] dims [1] keepdim
// CHECK: %[[SXB:.+]] = genesis.broadcast_in_dim %[[SX]]
// CHECK: %[[N1:.+]] = genesis.constant dense<1.250000e-01> : tensor<2x8xf32>
// CHECK: %[[MEAN:.+]] = genesis.mul %[[SXB]], %[[N1]]
// CHECK: %[[XC:.+]] = genesis.sub %[[X]], %[[MEAN]]
// CHECK: %[[XC2:.+]] = genesis.mul %[[XC]], %[[XC]]
// CHECK: %[[SV:.+]] = genesis.reduce_sum %[[XC2]] dims [1] keepdim
// CHECK: %[[SVB:.+]] = genesis.broadcast_in_dim %[[SV]]
// CHECK: %[[N2:.+]] = genesis.constant dense<1.250000e-01> : tensor<2x8xf32>
// CHECK: %[[VAR:.+]] = genesis.mul %[[SVB]], %[[N2]]
// CHECK: %[[EPS:.+]] = genesis.constant dense<9.99999974E-6> : tensor<2x8xf32>
// CHECK: %[[VE:.+]] = genesis.add %[[VAR]], %[[EPS]]
// CHECK: %[[RSTD:.+]] = genesis.rsqrt %[[VE]]
// CHECK: %[[XH:.+]] = genesis.mul %[[XC]], %[[RSTD]]
// CHECK: %[[GXH:.+]] = genesis.mul %[[G]], %[[XH]]
// CHECK: %[[S1:.+]] = genesis.reduce_sum %[[GXH]] dims [1] keepdim
// CHECK: %[[S1B:.+]] = genesis.broadcast_in_dim %[[S1]]
// CHECK: %[[N3:.+]] = genesis.constant dense<1.250000e-01> : tensor<2x8xf32>
// CHECK: %[[M1:.+]] = genesis.mul %[[S1B]], %[[N3]]
// CHECK: %[[T1:.+]] = genesis.mul %[[XH]], %[[M1]]
// CHECK: %[[S2:.+]] = genesis.reduce_sum %[[G]] dims [1] keepdim
// CHECK: %[[S2B:.+]] = genesis.broadcast_in_dim %[[S2]]
// CHECK: %[[N4:.+]] = genesis.constant dense<1.250000e-01> : tensor<2x8xf32>
// CHECK: %[[M2:.+]] = genesis.mul %[[S2B]], %[[N4]]
// CHECK: %[[D1:.+]] = genesis.sub %[[G]], %[[M2]]
// CHECK: %[[D2:.+]] = genesis.sub %[[D1]], %[[T1]]
// CHECK: %[[DX:.+]] = genesis.mul %[[RSTD]], %[[D2]]
// CHECK-NEXT: return %[[L]], %[[DX]] : tensor<f32>, tensor<2x8xf32>
func.func @loss(%x: tensor<2x8xf32> {genesis.name = "x", genesis.role = "parameter"}, %t: tensor<2x8xf32> {genesis.name = "t", genesis.role = "input"}) -> tensor<f32> {
  %0 = genesis.layer_norm %x eps 1.0e-05 : tensor<2x8xf32>
  %1 = genesis.mul %0, %t : tensor<2x8xf32>
  %2 = genesis.reduce_sum %1 dims [0, 1] : tensor<2x8xf32>
  return %2 : tensor<f32>
}

// -----

// cross_entropy with reduction = none and label_smoothing: the per-row
// cotangent (g * t) goes to cross_entropy_grad with the same attributes.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: (%[[X:.+]]: tensor<4x10xf32> {genesis.name = "x", genesis.role = "parameter"}, %[[IDS:.+]]: tensor<4xi64> {genesis.name = "ids", genesis.role = "input"}, %[[T:.+]]: tensor<4xf32> {genesis.name = "t", genesis.role = "input"})
// CHECK-SAME: -> (tensor<f32>, tensor<4x10xf32> {genesis.name = "grad:x"})
// CHECK: %[[CE:.+]] = genesis.cross_entropy %[[X]], %[[IDS]] {label_smoothing = 1.000000e-01 : f64, reduction = 0 : i32} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<4xf32>
// CHECK: %[[L:.+]] = genesis.reduce_sum
// CHECK: %[[G0:.+]] = genesis.broadcast_in_dim {{.*}} -> tensor<4xf32>
// CHECK: %[[G:.+]] = genesis.mul %[[G0]], %[[T]] : tensor<4xf32>
// CHECK: %[[DX:.+]] = genesis.cross_entropy_grad %[[X]], %[[IDS]], %[[G]] {label_smoothing = 1.000000e-01 : f64, reduction = 0 : i32} : (tensor<4x10xf32>, tensor<4xi64>, tensor<4xf32>) -> tensor<4x10xf32>
// CHECK: return %[[L]], %[[DX]]
func.func @loss(%x: tensor<4x10xf32> {genesis.name = "x", genesis.role = "parameter"}, %ids: tensor<4xi64> {genesis.name = "ids", genesis.role = "input"}, %t: tensor<4xf32> {genesis.name = "t", genesis.role = "input"}) -> tensor<f32> {
  %0 = genesis.cross_entropy %x, %ids {label_smoothing = 1.000000e-01 : f64, reduction = 0 : i32} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<4xf32>
  %1 = genesis.mul %0, %t : tensor<4xf32>
  %2 = genesis.reduce_sum %1 dims [0] : tensor<4xf32>
  return %2 : tensor<f32>
}
