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

def GenesisTrainStep : Pass<"genesis-train-step", "mlir::ModuleOp"> {
  let summary = "Loss, gradients and optimizer update as one @train_step";
  let description = [{
    From `@<function>` (first result a scalar loss; parameters are the
    arguments with `genesis.role = "parameter"`) builds `@train_step`:

      (parameters..., optimizer state..., batch..., lr: tensor<f32>,
       step: tensor<i64>) -> (loss, new parameters..., new state...)

    `step` is the 1-based step count and `lr` the step's learning rate, both
    computed on the host (schedules need no recompilation). State per
    parameter: none for plain SGD, `<name>.momentum_buffer` for SGD with
    momentum, `<name>.exp_avg` and `<name>.exp_avg_sq` for Adam and AdamW.
    A runtime updates parameters and state in place from the results.

    Algorithm:
    1. Differentiate `@<function>` with respect to its parameters
       (genesis-autodiff) unless `@<function>_grad` exists.
    2. With `accumulation = K > 1`, every batch input gets a leading
       dimension K; the gradient function's body is cloned once per
       micro-batch on slice k (dropout seeds offset by k), and the losses and
       gradients are averaged over the K copies, which equals one step on
       the whole batch of a mean loss.
    3. Optionally clamp every gradient element to
       `[-clip-grad-value, clip-grad-value]`, then scale all gradients by
       `min(1, clip-grad-norm / (global_norm + 1e-6))` (torch's
       clip_grad_norm_).
    4. Apply one genesis.sgd_update / sgd_momentum_update / adam_update /
       adamw_update per parameter with PyTorch semantics; parameters named
       in `no-decay` form a second group with zero weight decay.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"loss\"",
           "Name of the loss function">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"sgd\"",
           "sgd, adam or adamw">,
    Option<"momentum", "momentum", "double", /*default=*/"0.0", "SGD momentum">,
    Option<"dampening", "dampening", "double", /*default=*/"0.0",
           "SGD dampening">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "SGD Nesterov momentum">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "Weight decay (L2 for sgd and adam, decoupled for adamw)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "Adam beta2">,
    Option<"epsilon", "eps", "double", /*default=*/"1e-8", "Adam epsilon">,
    ListOption<"noDecay", "no-decay", "std::string",
               "Parameters (genesis.name) without weight decay">,
    Option<"clipGradNorm", "clip-grad-norm", "double", /*default=*/"0.0",
           "Maximum global gradient norm (0: no clipping)">,
    Option<"clipGradValue", "clip-grad-value", "double", /*default=*/"0.0",
           "Maximum absolute gradient element (0: no clipping)">,
    Option<"accumulation", "accumulation", "int64_t", /*default=*/"1",
           "Micro-batches accumulated per step">,
  ];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

#endif // GENESIS_PASSES_PASSES_TD
