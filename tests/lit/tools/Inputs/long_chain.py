"""Prints a function adding its argument to itself N times (argv[1]) in a
chain of N genesis.add ops on tensor<4xf32>: y = (N + 1) x, exact in f32 for
small integers. (A chain of neg and abs would fold away.)"""
import sys

n = int(sys.argv[1])
lines = ['func.func @chain(%x: tensor<4xf32> {genesis.name = "x", genesis.role = "input"})'
         ' -> (tensor<4xf32> {genesis.name = "y"}) {']
previous = "%x"
for i in range(1, n + 1):
    lines.append(f"  %s{i} = genesis.add {previous}, %x : tensor<4xf32>")
    previous = f"%s{i}"
lines.append(f"  return {previous} : tensor<4xf32>")
lines.append("}")
print("\n".join(lines))
