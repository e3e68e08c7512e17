//===- Passes.td - Genesis passes --------------------------*- tablegen -*-===//

#ifndef GENESIS_PASSES_PASSES_TD
#define GENESIS_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def GenesisAutodiff : Pass<"genesis-autodiff", "mlir::ModuleOp"> {
  let summary = "Reverse-mode differentiation of a loss function";
  let description = [{
    Adds `@<function>_grad` next to `@<function>`, whose first result must be
    a scalar floating-point loss. The new function takes the same arguments
    and returns the original results followed by the gradient of the loss
    with respect to each chosen argument (named `grad:<argument name>`).

    Algorithm (a graph transform, no tape):
    1. Clone the function. Mark *varied* values: the chosen arguments and,
       in program order, every floating-point result of an op with a varied
       operand. Mark *useful* values: the loss and, in reverse order, every
       operand of an op with a useful result. An op is *active* when one of
       its results is both.
    2. Seed the loss's cotangent with 1 and visit the active ops in reverse
       program order. An op with the `NonDifferentiable` trait stops the
       gradient; any other active op must implement
       `DifferentiableOpInterface`, whose `buildVjp` appends the ops that
       compute its operands' cotangents from its results'. A value with
       several users accumulates the cotangents it receives with
       `genesis.add`. Broadcasts are explicit ops, so their VJPs reduce a
       cotangent back to the operand's shape; `genesis.take` (embedding)
       accumulates repeated rows with `genesis.scatter_add`;
       `genesis.cross_entropy` skips ignored rows.
    3. Return the cotangents of the chosen arguments (zeros where the loss
       does not depend on one) and erase every op left without a user, which
       removes backward work nobody needs.

    Backward ops are located at `backward:<op>` wrapped around the forward
    op's location.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"loss\"",
           "Name of the function to differentiate">,
    ListOption<"wrt", "wrt", "std::string",
               "Names (genesis.name) of the arguments to differentiate with "
               "respect to; default: every argument whose genesis.role is "
               "\"parameter\"">,
  ];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

#endif // GENESIS_PASSES_PASSES_TD
