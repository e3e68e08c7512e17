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
       `genesis.add`. A `genesis.attention` whose mask depends on a chosen
       argument is first decomposed (as genesis-decompose-attention does),
       so that the mask gets its cotangent. Broadcasts are explicit ops, so their VJPs reduce a
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
    5. With `loss-scale=dynamic` (PyTorch's GradScaler, kept in the graph):
       three more f32 scalars of state, `amp.loss_scale` (0 stands for
       `init-scale`, so zero-initialised state starts there),
       `amp.growth_tracker` (clean steps since the scale last changed) and
       `amp.skipped_steps`. The function differentiated is the loss times
       the scale (`@<function>_scaled`), so the backward runs on scaled
       cotangents; the loss and every gradient are divided by the scale
       before clipping. A step is clean when the global gradient norm is
       finite. A clean step updates as in 4, with Adam's step count less
       the skipped steps (PyTorch skips optimizer.step()); the tracker
       counts it, and at `growth-interval` the scale doubles and the
       tracker restarts. Otherwise every parameter and optimizer state
       keeps its value (a select on the finite flag), the scale halves,
       the tracker restarts and the skipped steps count one more. With a
       power-of-two init-scale (the default) every scale is a power of two,
       so a clean step's update equals the unscaled one's bit for bit
       unless a gradient underflows or overflows. The loss and the
       parameters must be f32 or f64 (16-bit ones are refused: 2^16 is not
       an f16).
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
    Option<"lossScale", "loss-scale", "std::string", /*default=*/"\"none\"",
           "none, or dynamic: GradScaler's dynamic loss scale (for f16)">,
    Option<"initScale", "init-scale", "double", /*default=*/"65536.0",
           "First dynamic loss scale">,
    Option<"growthInterval", "growth-interval", "int64_t",
           /*default=*/"2000",
           "Clean steps after which the dynamic loss scale doubles">,
  ];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

def GenesisAmp : Pass<"genesis-amp", "mlir::func::FuncOp"> {
  let summary = "Mixed precision: f32 GEMMs computed in bf16 or f16";
  let description = [{
    Automatic mixed precision as PyTorch's autocast applies it to matmuls:
    every `genesis.matmul` with f32 operands becomes a matmul of its
    operands cast to `compute-type` (bf16 or f16; each value is cast once
    however many matmuls use it), whose result (accumulated in f32 by the
    GEMM, rounded to `compute-type` as autocast's output is) is cast back to
    f32 for its users. Everything else stays f32: parameters (the master
    weights), optimizer state, gradients, elementwise ops, normalisations,
    softmax and every reduction. Run it after genesis-train-step and
    genesis-decompose-attention, so the backward GEMMs and attention's
    batched GEMMs are covered too; the casts then fuse with their producers
    and consumers (genesis-fuse), so a GEMM reads and writes 16-bit values.
    Since a reshape stops fusion, an operand reached through reshapes is
    cast before them, and a result's reshapes reshape the 16-bit product,
    the cast following them.

    A GEMM whose only use is `genesis.add` of `broadcast_in_dim %bias,
    [rank - 1]` (a 1-D f32 bias of the last dimension), directly or through
    one reshape that keeps the last dimension, becomes a
    `genesis.library_call` with the `bias` epilogue, the bias cast to
    `compute-type` as autocast's linear casts it, and a 16-bit result
    (reshaped, then cast back to f32): the sum is rounded once, by the GEMM,
    and a linear layer's output is stored in 16 bits only.

    Cross-entropy with reduction none over 1024 classes or more (the GPU's
    wide kernel; genesis-decompose-cross-entropy leaves the mean to a
    reduce_sum) whose f32 logits widen a 16-bit GEMM result, through
    reshapes and selects of a constant (a mask of padded classes), reads
    those 16-bit logits, the chain rebuilt in 16 bits (the constant clamped
    to the type's finite range); the loss stays f32, computed in f32 as
    autocast does. Its gradient is written in 16 bits and the backward
    GEMMs read it directly. So no f32 [tokens, classes] tensor is stored.
  }];
  let options = [
    Option<"computeType", "compute-type", "std::string", /*default=*/"\"bf16\"",
           "bf16 or f16">,
  ];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

def GenesisPlanMemory : Pass<"genesis-plan-memory", "mlir::func::FuncOp"> {
  let summary = "Static offsets of every temporary in one arena";
  let description = [{
    Plans every temporary of a single-block function into one arena whose
    size the runtime allocates once, and records the plan as attributes:
    `genesis.offsets = array<i64: ...>` on each op of the top-level block
    with results (one offset per result, -1 for a result without a buffer),
    and `genesis.arena_bytes` and `genesis.temporary_bytes` (the sum of all
    planned values' sizes before any sharing, both i64) on the function. A
    remark on the function states both figures.

    Buffers: every tensor result of an op in the top-level block, of
    `product(shape) * ceil(bitwidth / 8)` bytes. Values inside regions
    (`genesis.fusion` bodies) live in registers and get none. Splat
    constants read only by fusions get none: their kernels materialise the
    value (and the runtime fills a returned one). One that an op kernel
    reads (a scatter_add's zero operand, a library call's) is planned from
    its first use, where the plan fills it, to its last. Function arguments (parameters,
    optimizer state, batch) are external: the runtime owns them. A returned
    update of an argument (a new parameter or optimizer state, bound by
    genesis.name; see passes/Analysis/ArgumentUpdates.h) gets none: its
    producer writes it into the argument's tensor. Other returned values are
    planned like any temporary; the runtime copies or aliases them out
    after the last step.

    Algorithm:
    1. Schedule: program order (the trace order). Op `i` of the top-level
       block defines its results at `i`; a value is live over
       `[definition, last use]` (a planned splat constant: `[first use, last
       use]`), where a use inside a nested region counts
       as a use by its ancestor op in the top-level block, so a returned
       value lives to the end.
    2. In-place reuse, in program order: a result takes the buffer of an
       operand when the operand is a planned temporary whose buffer's
       interval ends at this op, the byte sizes are equal, no other result
       of this op took that buffer, and the op may write over its input: an
       `Elementwise` op (any operand) or an optimizer update
       (each new parameter or state its own old one, else the gradient: the
       update is elementwise over parameter, gradient and state) or
       `genesis.cross_entropy_grad` (its logits: every kernel of it reads a
       row's logits before it writes the row's gradient, each element last
       read by the thread that writes it). A `genesis.reshape` takes its
       operand's buffer whether or not the operand dies there (a pure alias:
       no op writes a value after defining it). The values then share one
       buffer whose interval is the union of theirs, so a later op writes
       over it only where every value sharing it has died.
    3. Offsets, greedy by size as TFLite's arena planner and XLA's
       decreasing-size best-fit heap simulator: visit the buffers by
       decreasing size (ties: earlier definition first); the buffers placed
       so far whose intervals overlap the current one leave gaps between
       them; place it at the `alignment`-aligned start of the gap that fits
       it with the least waste (ties: the lowest), or after the highest of
       them when none fits. The arena size is the highest end of a buffer.
    4. Check the plan against liveness recomputed from the IR: every offset
       is aligned and inside the arena, and two values share bytes only when
       their live ranges are disjoint, or one is an operand of the other's
       defining op that dies there, has the same offset and may be written
       over by step 2's rule, or both are reshapes of one value (or that
       value) at the same offset. A violation is an internal error.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "Name of the only function to plan (default: every function)">,
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "Alignment in bytes of every buffer offset (a power of two)">,
  ];
}

def GenesisFuse : Pass<"genesis-fuse", "mlir::func::FuncOp"> {
  let summary = "GEMMs to library calls with epilogues; fusion groups to genesis.fusion";
  let description = [{
    Target-independent fusion: afterwards every kernel a backend emits is one
    `genesis.fusion` or one `genesis.library_call`. Loop and input fusion
    only regroup ops, so they change no result bit; a GEMM epilogue acts on
    the unrounded product (`genesis.library_call`'s semantics), so it may
    differ from the separate ops by one rounding of the product.

    1. GEMMs. Every `genesis.matmul` becomes a `genesis.library_call` with
       epilogue `none` and alpha 1. A call then absorbs, one at a time, the
       only user of its result (never when the result has other users):
       - `genesis.mul` by a splat float constant `c`, when the epilogue is
         `none` and alpha is 1: alpha becomes `c`;
       - `genesis.add`, in either operand order, of
         `genesis.broadcast_in_dim %bias, [rank - 1]` with a 1-D `bias` of
         the last result dimension, when the epilogue is `none`: epilogue
         `bias`;
       - `genesis.relu`, when the epilogue is `none` or `bias`: `relu` or
         `bias_relu`;
       - `genesis.gelu approximate = tanh`, likewise: `gelu` or `bias_gelu`.
       A `genesis.reshape` between the call and that user which keeps the
       last dimension (a linear layer's rows put back into their batch
       shape) is seen through when it is the result's only use and has one
       use itself: every absorbed op acts elementwise or along the last
       dimension, so the reshape goes after the new call.
       The new call takes the absorbed op's place, at the `FusedLoc` of both
       locations; a constant or broadcast left without users is erased.
    2. Loop fusion (XLA's). Fusible ops are the genesis ops with the
       `Elementwise` trait, `genesis.broadcast_in_dim`, splat
       `genesis.constant`s, the data-movement ops `transpose`, `slice`,
       `pad` and `concat` (computed by index mapping), and f32 or f64
       `genesis.rope` (computed from its operand's element and its partner
       half a row away; it counts as data movement below). Ops are visited
       consumers first (reverse program order). An op joins the group of its
       users when all of its users are in that one group, so nothing is
       computed twice; otherwise it roots a group of its own. Data movement
       joins loop groups only, never a reduction's (rule 3). A `reshape`
       joins the loop group of all of its users only when its operand's
       producer is fusible and used by it alone; any other reshape stays an
       alias of its operand. *Cheap* ops belong to no group but are cloned
       into every group that uses them: splat constants, broadcasts whose
       operand comes from outside every group anyway (a block argument, a
       cheap op, a reduction or a non-fusible op), and float casts that
       widen such a value (a 16-bit GEMM result read in f32) when every user
       is an elementwise op, a data-movement op other than reshape, a rope
       or a reduction: the wide copy is never stored (a decode step's
       16-bit query and key projections rotated in f32 by one kernel).
       2b. Duplication of cheap producers (XLA's). An elementwise op whose
       users are all grouped, in two or more groups of which one is a
       column reduction (it keeps the operand's last dimension, as a bias
       gradient does; row reductions and their consumers share registers
       in one row kernel on the GPU instead), is cloned into each of those
       groups rather than stored by one kernel for the others, when its
       cone is cheap:
       the op and, recursively, the elementwise producers that would be
       cloned with it number at most 32, and they read at most 3 values
       that are stored anyway (block arguments, results of non-fusible ops
       and reductions, and fusible results that a non-fusible op uses;
       cheap ops are free, the values they read count; a value that a
       group outside those the op is cloned into also reads is stored
       anyway), and those of them with as many elements as the op take no
       more bits per element than the op's result: a clone reads no more
       than the stored result would cost it (so a residual stream, an f32
       sum plus a bf16 branch output, is stored rather than recomputed from
       every branch by each reader). So a layer norm's or GELU's backward recomputes
       its normalised input or derivative in each reduction kernel that
       reads it. Without a column reduction among the groups, the op is
       cloned only when those values take strictly fewer bits per element
       than its result: a SiLU of a bf16 GEMM result, which SwiGLU's forward
       and backward both read, is recomputed in each rather than stored in
       f32. Reductions are never duplicated.
    3. Input fusion. A `genesis.reduce_sum`, `reduce_max` or `reduce_min`
       always roots a group, which its consumers never join; its producers
       join it as in 2. A producer with users elsewhere may still join a
       reduction's group as an extra result (multi-output fusion; it is
       still computed once) when its shape is the reduction operand's shape
       and no path leaves the group and re-enters it. That test is a
       reachability search from the producer's other users, which continues
       from every member of each group it enters (a group's kernel produces
       its results only after reading all of its inputs), so the groups stay
       acyclic. The first such group, in program order of the producer's
       users, is taken.
    4. Every other op (compound ops, indexing ops (take, scatter_add), `iota`,
       `argmax`, optimizer updates, collectives, non-splat constants,
       library calls, existing fusions) stays as it is, as does an op
       without users. A group of one op is still a fusion, except a single
       broadcast whose users are all non-fusible, which stays as it is, like
       a cheap op that no group uses, and a single data-movement op that
       reads no cheap op, which keeps its own kernel.
    5. Each group becomes a `genesis.fusion` at its last op. Its inputs are
       the values it uses from outside, deduplicated in first-use order and
       bound to block arguments in the same order; its ops move in, cheap
       ops are cloned in before their first use, and `genesis.yield` returns
       every value used outside, in program order; those uses then take the
       fusion's results. The fusion is located at the `FusedLoc` of the
       locations of its ops (not of the cloned ones). The block is then
       sorted topologically (a stable sort), since a side result may be used
       before the group's last op.

    6. A group holds at most 1024 ops; an op that would join a full group
       roots a group of its own. So a kernel's body stays shallow for the
       emitters, which follow an element's operands recursively, however
       long a chain of ops the function holds.

    With `grouping=false` (the pipelines' `fuse=false`), every GEMM becomes
    a library call with no epilogue and every fusible op or reduction a
    fusion of its own (cheap ops still cloned in): one kernel per op, for
    debugging and for locating a bad value.
  }];
  let options = [
    Option<"grouping", "grouping", "bool", /*default=*/"true",
           "Group ops into multi-op fusions and absorb GEMM epilogues">,
  ];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

def GenesisStepNumber : Pass<"genesis-step-number", "mlir::func::FuncOp"> {
  let summary = "A step argument counts from one inside the function";
  let description = [{
    The runtime feeds every `genesis.role = "step"` argument the number of
    completed steps; the train step wants the number of the step being
    taken. Every use of such an argument is replaced by `step + 1` (a
    `genesis.add` of a splat constant one, in the argument's element type,
    at the start of the entry block). Unused step arguments are left alone.
  }];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

def GenesisSplitMixedShapeFusions
    : Pass<"genesis-split-mixed-shape-fusions", "mlir::func::FuncOp"> {
  let summary = "One fusion per result shape (the CPU lowering's loop nests)";
  let description = [{
    genesis-lower-cpu emits one loop nest per fusion over one shape, so it
    cannot lower a multi-output input fusion (a reduction yielded beside an
    elementwise producer of its operand's shape). Each fusion whose results
    have more than one shape is replaced by one fusion per result shape, in
    order of first appearance: each clone takes every input of the original,
    yields only the results of its shape, and erases the ops those results
    do not need (walking the body backwards, erasing ops without uses). Each
    clone recomputes the producers it needs; they are elementwise, so no
    result bit changes.

    The CPU pipeline splits every such fusion. The CUDA pipeline runs it with
    `gpu-profitable`, which keeps a fusion whole (one kernel that stores its
    side results while it reads the reduction's operand) unless:
    - it has a column reduction (over leading dimensions) keeping fewer than
      512 elements: that emitter runs one block per 32 of them, and with
      fewer than 16 blocks the side result is written far below bandwidth
      (the MLP's bias gradients, 128 and 256 columns: its train step took
      0.268 ms whole against 0.233 ms split on the H100); or
    - it has a row reduction over more than 4096 elements and a result (the
      reduction's or a side result) feeding another fusion:
      genesis-merge-row-fusions chains such fusions
      into a row fusion whose threads hold more than 4 elements of each row,
      and there the split pieces' recomputation measured faster than the
      whole fusion's longer-lived values (layer_norm's backward over rows of
      8192: 0.317 ms split, 0.373 ms whole; over GPT-2's 768 the whole
      fusions are faster).
  }];
  let options = [
    Option<"gpuProfitable", "gpu-profitable", "bool", /*default=*/"false",
           "Split only where the GPU emitters do better with the split">,
  ];
}

def GenesisMergeRowFusions
    : Pass<"genesis-merge-row-fusions", "mlir::func::FuncOp"> {
  let summary = "Producer and consumer fusions merged into row fusions (CUDA)";
  let description = [{
    XLA's reduction epilogue fusion, generalised to chains, for the CUDA row
    fusion emitter. Fusions merge pairwise, producer into consumer, while
    the merged body has f32 sums or maxima over the last dimension of one
    row shape [rows..., C] only, every value computed from a reduction
    reaches the row only through elementwise ops and broadcasts along the
    last dimension, and every result is a full row or per row. A producer
    result used only by the consumer is no longer written; a merge that
    drops none (every producer result is used elsewhere too) still saves
    the consumer's second pass over the rows and is taken for rows of at
    most 4096 elements, which the row kernel keeps in registers (a layer
    norm's forward: the residual add and the row sum, the variance, the
    normalised 16-bit output). The merged fusion takes the producer's place (so the
    consumer's other inputs must precede it) and yields the producer's
    results still used elsewhere, then the consumer's. The scan restarts
    after each merge and ends when no pair merges. softmax's backward
    y * (g - rowsum(g * y)) and layer_norm's and rms_norm's (two to four
    chained sums) each become one fusion.
  }];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

def GenesisMergeSideResults
    : Pass<"genesis-merge-side-results", "mlir::func::FuncOp"> {
  let summary = "Elementwise consumers of a reduction fusion's side results join it (CUDA)";
  let description = [{
    genesis-fuse never lets a reduction's group take consumers, so an
    elementwise op that reads a multi-output reduction fusion's side result
    (a value of the reduction operand's shape, stored by the reduction
    kernel as it visits each element) becomes a kernel of its own that
    reads the side result back: a layer norm's input gradient, stored in
    f32 for the residual stream, and its bf16 copy for the next GEMM. A loop
    fusion whose ops are elementwise ops, broadcasts and splat constants,
    whose results all have the side shape, and whose inputs are side
    results of one reduction fusion (exactly one reduction, its result only
    yielded) or values defined before that fusion, joins it: the merged
    fusion takes the reduction fusion's place, its body gains the
    consumer's ops and its yields the consumer's results, which the
    reduction kernel stores at each element it visits. A loop fusion before
    a reduction fusion that reads one of its inputs (siblings: a GELU's
    backward dx and its bias gradient, which genesis-fuse's rule 2b made
    two kernels reading the same two tensors) joins it the same way when
    its inputs are defined before the reduction fusion and its users
    follow it. Repeated until none merges. The values computed are
    unchanged.
  }];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

def GenesisRemat : Pass<"genesis-remat", "mlir::ModuleOp"> {
  let summary = "Recompute cheap activations in the backward to fit a memory budget";
  let description = [{
    When the module's arguments (parameters, optimizer state, batch; one
    tensor per `genesis.name`, as the runtime holds them) and a function's
    arena (genesis-plan-memory's plan with the pass's `alignment`; the
    functions of a plan share one arena) need more than `budget` bytes, values
    saved across the peak are recomputed where they are used again instead
    of being kept: a GELU's output before its weight-gradient GEMM, the
    token-major copy of an attention output, a layer norm's 16-bit output.
    The budget does not count the GEMM library's workspace.

    Algorithm (greedy, as the planner sees the function):
    1. Plan the function's memory; stop when arguments plus arena fit.
    2. The peak: the op index where the planned buffers live together take
       the most bytes.
    3. Candidates: tensor results V of ops before the peak, not used at it,
       used again after it (first at op u, not only by the return). V is
       recomputable at u when its defining op is a recomputable op
       (elementwise, broadcast, iota, splat constant, data movement) or a
       genesis.fusion whose body computes V's yield from such ops, and
       every value the recomputation reads (a leaf) is available at u: a
       function argument, a splat constant, or a value live at u (its last
       use at or after u; for a body value, another result of the same
       fusion that is). Recursion continues through producers that are not
       available, up to 64 ops.
    4. Take the candidate with the most bytes freed per byte the
       recomputation moves (V's bytes over V's plus the leaves' plus 8 MiB
       for the kernel launch; ties: the larger V) among those of at least
       1/64 of the largest candidate's bytes, build a genesis.fusion computing V from its leaves marked
       `genesis.remat` (its kernel is named `<function>_remat<N>`, visible
       in `genesis-run --inspect` and `--profile`), insert it before u and
       let it serve V's uses from u on. A producer left without uses is
       erased. Repeat from 1.
    Fails with an error naming the budget and the bytes still needed when
    no candidate is left. The values computed are unchanged: the recomputing
    fusion applies the same ops to the same inputs.
  }];
  let options = [
    Option<"budget", "budget", "int64_t", /*default=*/"0",
           "Bytes the arguments and each function's arena may take (0: no "
           "budget)">,
    Option<"alignment", "alignment", "int64_t", /*default=*/"256",
           "Buffer alignment of the memory plan the budget is checked on">,
  ];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

def GenesisFuseCrossEntropyGradient
    : Pass<"genesis-fuse-cross-entropy-gradient", "mlir::func::FuncOp"> {
  let summary = "A per-row cross-entropy and its gradient as one op (CUDA)";
  let description = [{
    A training step computes each row's loss (`genesis.cross_entropy`,
    reduction none, as genesis-decompose-cross-entropy leaves a mean) and,
    in its backward, the logits' gradient (`genesis.cross_entropy_grad`,
    reduction none) with per-row cotangents that for a mean are
    `1 / count` of the rows that count: a function of the labels only. Two
    kernels then read the [tokens, classes] logits, GPT-2's 1.6 GB, twice.

    Algorithm, per `genesis.cross_entropy_grad` `g` of the function's block
    with reduction none, f32, bf16 or f16 logits (the GPU kernels compute in
    f32) and at least 1024 classes (kWideCrossEntropyClasses: narrower rows
    run faster a thread per row):
    1. find a `genesis.cross_entropy` `l` of `g`'s logits and labels, before
       `g`, with reduction none and `g`'s ignore_index and label_smoothing,
       whose result `g`'s cotangents do not depend on (their backward
       slice does not reach `l`);
    2. move the cotangents' computation before `l` (MLIR's
       moveValueDefinitions; nothing moves if an op with side effects is in
       it, and the pair stays apart);
    3. `%loss, %grad = genesis.cross_entropy_with_grad` at `l` replaces both.
    The gradient still takes the logits' buffer (genesis-plan-memory): the
    logits die at the fused op.
  }];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

def GenesisChunkClassifier
    : Pass<"genesis-chunk-classifier", "mlir::func::FuncOp"> {
  let summary = "A wide classifier, its loss and their gradients in row chunks (CUDA)";
  let description = [{
    A language model's classifier writes [tokens, classes] logits (GPT-2's
    16384 x 50304 in bf16: 1.6 GB), which live from the LM head's GEMM
    until the gradient GEMMs have read the logits' gradient written over
    them: the training step's peak. In row chunks only one chunk's logits
    are live at a time, and each chunk's weight gradient is a partial sum.

    Algorithm, per `genesis.cross_entropy_with_grad` `l` of at least
    `min-logits-bytes` of logits:
    1. match: the logits are the only use of a rank-2 `genesis.matmul` or
       `genesis.library_call` (epilogue none or bias, no aux) `h` of features
       `x` in `l`'s block, not transposed on the left; every use of the logits' gradient `g` is the left
       operand of a `genesis.matmul` that is either not transposed (a row
       product `g @ w`) or transposed on the left only (a weight product
       `g^T @ y`, `y`'s rows the logits' rows), whose other operand is
       defined before `l`. Anything else leaves `l` as it is.
    2. choose the chunk count C among powers of two dividing the rows into
       chunks of at least `min-chunk-rows` rows: the one minimising
       `logits bytes / C + C * weight product bytes` (a chunk's logits and
       every partial weight gradient, live together at the last chunk);
       C = 1 (nothing) when none is below the unchunked peak.
    3. at `l`, for each chunk in order: `h` of the chunk's rows of `x`, the
       fused loss and gradient of its rows of labels and cotangents, each
       row product of its gradient, each weight product of its gradient and
       its rows of `y`; then the per-row losses and row products are
       concatenated, and the weight products summed in f32 and rounded to
       their type, replacing the originals (with 16-bit products each
       partial is also rounded by its GEMM: C + 1 roundings, not one).
    Each chunk's logits die in its own products before the next chunk's GEMM
    defines its logits, so genesis-plan-memory overlaps them. The pass runs
    with or without a memory budget: memory first (GPT-2 124M: 8.38 ->
    7.44 GiB without a budget), at ~0.25 ms of slices, concatenations and
    smaller GEMMs a step; the partials stay live until their sum's consumer.
  }];
  let options = [
    Option<"minLogitsBytes", "min-logits-bytes", "int64_t",
           /*default=*/"256 << 20",
           "Smallest logits (bytes) worth chunking">,
    Option<"minChunkRows", "min-chunk-rows", "int64_t", /*default=*/"1024",
           "Fewest rows of a chunk (keeps the GEMMs efficient)">,
  ];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

def GenesisFuseGeluGradient
    : Pass<"genesis-fuse-gelu-gradient", "mlir::func::FuncOp"> {
  let summary = "A tanh GELU's gradient as the epilogue of the GEMM computing its cotangent (CUDA)";
  let description = [{
    Autodiff writes the gradient of `y = gelu(x)` (tanh approximation) as
    `dx = dy * d(x)`, where `d(x)` is an expression of `x`'s elementwise ops
    and splat constants. When `dy` is a rank-2 bf16 or f16 `genesis.matmul`
    (cuBLASLt's DGELU computes tanh approximately, 5.4e-4 relative measured
    in f32 on the H200, which only 16-bit rounding hides) reached only
    through reshapes and one widening cast (its only use), `x` is a value of
    the matmul's type and element count (through reshapes and one widening
    cast), the last dimension is a multiple of 8 (cuBLASLt's aux leading
    dimension), and `d` is GELU's derivative, the product becomes
    `genesis.library_call dgelu lhs, rhs aux x` (x reshaped to the matmul's
    shape), widened and reshaped back: cuBLASLt's DGELU epilogue multiplies
    the product by gelu'(x) as it stores it, so no kernel reads the product
    and x again to write dx. `d` is recognised by its value, not its form:
    its expression (add, sub, mul, div, neg, tanh, exp, casts and splat
    constants over one value x; the candidates for x are the values it
    reads, nearest the product first, since x itself may be computed
    elementwise, e.g. a bias added) is evaluated in f64 at 24 points of
    [-8, 8] and must equal the tanh GELU's derivative there within 1e-6
    relative (the expression's constants are f32: sqrt(2/pi) rounded to f32
    is 3e-8 off). (genesis-sink-widening-casts then lets users that narrow
    dx back to the matmul's type read the library call's result directly.) The rounding differs: dx is rounded to
    the matmul's type once (it was computed in f32 from the rounded dy);
    within bf16 tolerance. Run before genesis-sink-widening-casts and
    genesis-fuse.
  }];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

def GenesisPackAttention
    : Pass<"genesis-pack-attention", "mlir::func::FuncOp"> {
  let summary = "Fused attention reading its packed q/k/v projection in place (CUDA)";
  let description = [{
    A model that computes q, k and v with one projection (GPT-2's `c_attn`)
    splits its token-major rows, `[B, S, (Hq + 2 Hkv) D]`, into three slices
    and transposes each to head-major `[B, H, S, D]`; attention's result is
    transposed back for the output projection, and the backward transposes
    and concatenates the three gradients again: per layer seven copies of
    activations that cuDNN does not need, since it reads and writes strided
    views.

    Algorithm, per `genesis.fused_attention` `a` whose query, key and value
    are each `transpose(reshape(slice(P)), [0, 2, 1, 3])` of one rank-3
    `P`, the slices taking whole rows' columns [0, Hq D), [Hq D,
    (Hq + Hkv) D) and [(Hq + Hkv) D, (Hq + 2 Hkv) D) with unit strides, and
    `P`'s last dimension exactly (Hq + 2 Hkv) D:
    1. `%o, %lse = genesis.packed_attention P` replaces `a`; `a`'s users read
       `transpose(reshape(%o), [0, 2, 1, 3])`;
    2. each `genesis.fused_attention_grad` of `a` (its operands, `out`,
       `logsumexp`, causal and scale) becomes `genesis.packed_attention_grad
       P, %o, reshape(transpose(out_grad)), %lse`; its three gradients are
       the packed gradient's column slices, made head-major the same way.
    The canonicaliser that runs next folds the transposes back to back and
    the concatenation of adjacent slices, so the projection's output and
    gradient GEMMs read and write the packed tensors directly. Run after
    genesis-fused-attention and genesis-sink-widening-casts (which leave the
    slices, reshapes and transposes in 16 bits, next to each other).
  }];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

def GenesisSinkWideningCasts
    : Pass<"genesis-sink-widening-casts", "mlir::func::FuncOp"> {
  let summary = "Data movement of widened 16-bit values done in 16 bits (CUDA)";
  let description = [{
    A value widened from bf16 or f16 (`genesis.cast` to f32 or f64) and then
    only moved (transpose, reshape, slice, pad with zeros, concat of values
    widened from the same type, or added to a zero splat) holds the same
    values as the 16-bit value moved the same way and widened afterwards.
    Patterns, applied greedily to a fixed point:
    - `op(widen(x)...)` for those data-movement ops becomes
      `widen(op(x...))`;
    - `add(widen(x), 0)` becomes `widen(x)`: equal, though a -0 stays -0
      where the add made it +0 (no comparison tells them apart); the
      canonical form of a sum of zero-padded slices,
      `pad(concat(a + 0, b + 0))`, has these adds;
    - `narrow(widen(x))` to x's own type becomes x.
    So the widening moves towards the users: a 16-bit GEMM reads the moved
    16-bit tensor directly and f32 users widen it as they read it.
    GPT-2's attention gradient (dq, dk and dv from cuDNN, transposed and
    joined into the [tokens, 3 x width] gradient of the QKV projection) was
    stored in f32 and narrowed by a second kernel; it is now joined in
    bf16. Run after canonicalization (which forms the concats).
  }];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

def GenesisSplitColumnReductions
    : Pass<"genesis-split-column-reductions", "mlir::func::FuncOp"> {
  let summary = "Column reductions in two stages (CUDA)";
  let description = [{
    A column reduction (a reduce over the leading dimensions [0, k), k >= 2,
    of an f32 or f64 operand) whose kept columns fill fewer than 528 tiles
    of 32 (4 blocks for each of the H100's 132 SMs) runs in one stage on few
    blocks, each looping over every row: LayerNorm's weight and bias
    gradients and the bias gradients of GPT-2's linear layers ([16, 1024]
    rows, 768 to 3072 columns) moved 1.2 TB/s. When dimension 0 has at least
    2 indices and dimensions [1, k) at least 256 rows, the fusion's
    reduction keeps dimension 0 (a partial per index of it, [d0, columns...],
    one block per tile of columns and index of d0) and a new fusion after
    it reduces the partials over dimension 0. The fusion's side results are
    untouched. Each stage combines in a fixed order, so the result is
    deterministic; the rounding of a sum differs from the one-stage order.
    16-bit operands are left alone (their partials would round).
  }];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

def GenesisMergeSiblingReductions
    : Pass<"genesis-merge-sibling-reductions", "mlir::func::FuncOp"> {
  let summary = "Reduction fusions reading the same tensors merged (CUDA)";
  let description = [{
    XLA's sibling multi-output fusion for reductions. Two reduction fusions
    (reductionFusionRoots: reductions, yielded only, beside side results of
    their operands' shape) merge when their reductions reduce operands of
    one type over the same dimensions to one result type, they share an
    input (or read results of one op: the second stages of column reductions
    merged in their first), and every input of the later one is defined
    before the earlier one: the merged fusion takes the earlier one's place and yields both
    fusions' results, and its kernel reads each shared input once, one
    accumulator per reduction (genesis-lower-cuda). The scan restarts after
    each merge and ends when no pair merges. A LayerNorm's backward over
    GPT-2's [16, 1024, 768] rows: its two row sums (of dy * w and of
    dy * w * xhat) become one kernel, and the partials of its weight, bias
    and input-bias gradients (after genesis-split-column-reductions) one
    more, which also writes the input gradient, and their second stages a
    third.
  }];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

def GenesisMergeSiblingLoops
    : Pass<"genesis-merge-sibling-loops", "mlir::func::FuncOp"> {
  let summary = "Adjacent elementwise fusions reading the same tensors merged (CUDA)";
  let description = [{
    XLA's sibling multi-output fusion for loop fusions. A fusion that
    computes element by element (elementwise ops, broadcasts and splat
    constants; every result of one shape) takes the next fusion of the
    block when only reshapes and constants lie between them, that fusion
    computes element by element over the same shape, reads one of the
    first's inputs, reads nothing defined after the first, and the two hold
    at most 1024 ops together: the merged fusion takes the first's place,
    yields both fusions' results, and its kernel reads each shared input
    once. Repeated from the merged fusion until its next fusion does not
    merge. Only adjacent fusions merge, so no result moves across other
    work and no buffer lives longer past a kernel. SwiGLU's backward: the
    gradients of the up projection (dh * silu(gate)) and of the gate
    (dh * up * silu'(gate)) read dh and gate; one kernel reads them once.
  }];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

def GenesisFuseMatrixVector
    : Pass<"genesis-fuse-matrix-vector", "mlir::func::FuncOp"> {
  let summary = "Matrix-vector products of one input, and their elementwise consumer, in one kernel (CUDA)";
  let description = [{
    A decode step's GEMMs have a row or a few (isMatrixVectorProduct in
    passes/Analysis/MatrixVector.h), so each is a kernel reading its weight
    once, and the step's time goes to launching and draining many small
    kernels. Algorithm: walk the block; from a matrix-vector product, a
    group takes the following ones of the same lhs while only reshapes and
    constants lie between them (at most kMaxGemvFusionCalls, and at most 64
    of a lane's vector loads in any set of GEMMs of one column count, which
    one warp computes together). Then the next op, past reshapes and
    constants, joins as the epilogue when it is a fusion computing element
    by element whose inputs are the group's results (or reshapes of them),
    all of one column count N, with as many elements as M x N, or values
    defined before the group. The fusion computing the group's lhs (through
    reshapes) joins as the prologue when only reshapes and constants lie
    between it and the group, the epilogue reads none of its results, and
    every block of the kernel can compute it into shared memory
    (gemvPrologue: a row fusion of at most kMaxGemvRows rows or an
    elementwise fusion, the lhs at most kMaxGemvPrologueBytes). The group
    becomes one genesis.fusion in the first product's place: the prologue
    nested whole on body arguments, the products on body arguments (the
    lhs: the prologue's result, reshaped), the epilogue's body on them (its
    inputs that were reshapes of a product's result become reshapes
    inside), yielding the prologue's and each product's results still used
    outside and the epilogue's results. A group of one product with no
    prologue or epilogue stays as it is. The matrix-vector emitter of
    genesis-lower-cuda runs the fusion as one kernel (matrixVectorFusion):
    Qwen2's residual add and RMSNorm with its q, k and v projections of a
    token are one kernel, the next residual add and RMSNorm with its gate
    and up projections and SwiGLU's silu(gate) * up another, which never
    writes gate or up.
  }];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

def GenesisHorizontalLoopFusion
    : Pass<"genesis-horizontal-loop-fusion", "mlir::func::FuncOp"> {
  let summary = "Adjacent independent loop fusions of any shapes in one kernel (CUDA)";
  let description = [{
    XLA's horizontal loop fusion, for a decode step's small loops: Qwen2's
    rope of q, rope of k with its cache write and the value cache write are
    independent loops of three shapes, a launch each of a few microseconds
    with most of the GPU idle. Algorithm: walk the function's block; from
    a loop fusion (no reduction, GEMM, nested fusion or optimizer update,
    which genesis-group-optimizer-updates groups) of at most
    kMaxHorizontalElements elements a result (a larger loop fills the GPU
    alone), a run takes the following such fusions while only reshapes and
    constants lie between them (so no lifetime grows past a kernel), each
    reads no result of the run (its inputs are defined before the run's
    first fusion), none reads a function argument that another's result
    is returned to update (the plan may write an update into the argument's
    tensor while the other reads it), and the run holds at most
    kMaxFusionOps ops and kMaxHorizontalFusions fusions. The run becomes one
    fusion in the first's place (mergeFusions), yielding every result; the
    loop emitter of genesis-lower-cuda computes each result shape by its
    own grid-stride loop over its own range of the kernel's blocks.
  }];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

def GenesisGroupOptimizerUpdates
    : Pass<"genesis-group-optimizer-updates", "mlir::func::FuncOp"> {
  let summary = "Adjacent optimizer updates in one kernel (CUDA)";
  let description = [{
    XLA's horizontal loop fusion, for the optimizer: a train step updates
    each parameter (SGD, SGD with momentum, Adam, AdamW) as soon as its
    gradient is complete, so a layer's small updates (biases, norms) run
    as one launch each, a few microseconds apiece with most of the GPU
    idle. Algorithm: walk the function's block; from each update, a run
    takes the following updates while only reshapes and constants lie in
    between, each is independent of the earlier ones (it reads none of
    their results, and no tensor one of them may overwrite or reuse: their
    parameters, states and gradients; lr and step may be shared), and it
    holds at most 16 (at most 144 pointers of kernel parameters). A run of
    two or more becomes one `genesis.fusion` at its last member's place:
    its inputs are the members' operands, each once; its body clones the
    members in order and yields all their results. An earlier member's
    gradient now lives until the group (past reshapes and constants only):
    the pass runs before genesis-remat, which plans with it, and the memory
    planner lets each result take its own update's parameter, state or
    gradient buffer, as a lone update's would. genesis-lower-cuda gives
    such a fusion one kernel whose blocks are split among the members, each
    block running its member's update over its share of the elements. The
    evaluator runs the body as it is.
  }];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

def GenesisLowerCpu : Pass<"genesis-lower-cpu", "mlir::ModuleOp"> {
  let summary = "Fusion regions to CPU loop kernels";
  let description = [{
    For every `genesis.fusion` of every function, emits a kernel
    `func.func @<function>_fusion<N>` (marked `genesis.kernel`) taking the
    fusion's inputs and then its results as memrefs, followed by the range
    `[begin, end)` of the outermost loop, and records its name on the fusion
    (`genesis.kernel = @...`). The fusion stays in place for the plan.

    Algorithm (an elemental emitter, as XLA's): a loop fusion is one
    `scf.for` nest over the shape of its results (which must agree); for each
    element, every yielded value is computed by walking the body from the
    yield to the block arguments: an elementwise op becomes its arith/math
    scalar op (the semantics of GenesisOps.td: NaN-propagating max/min,
    saturating float-to-int casts, ...), `broadcast_in_dim` maps the index
    (size-1 dimensions read index 0), a splat constant becomes a scalar, a
    block argument a load. Scalars are memoised per element, so a value used
    twice is computed once. A fusion whose result is a `reduce_sum/max/min`
    loops over the kept dimensions and, inside, over the reduced ones with
    the accumulator carried in `iter_args`. Intermediates never reach memory.

    Ops outside fusions that the training step needs get a kernel each
    (`@<function>_<op><N>`): the optimizer updates (a loop over the
    parameter), softmax and log_softmax (three passes over the dimension
    per row) and cross_entropy and its gradient (row by row, one range);
    they compute in f64 and round once per stored value, in the evaluator's
    order of operations.
    `compileCpuKernels` then lowers the kernels to LLVM, optimises them at O3
    for the host CPU (vectorising the innermost loops) and links a shared
    object; the runtime may split each kernel's outer range across threads.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def GenesisLowerCuda : Pass<"genesis-lower-cuda", "mlir::ModuleOp"> {
  let summary = "Fusion regions and ops to GPU kernels (gpu.func)";
  let description = [{
    For every `genesis.fusion`, and every op outside fusions that has a CPU
    op kernel, of every function, emits a kernel `gpu.func
    @<function>_<kind><N>` into the `gpu.module @genesis_kernels` (the module
    becomes a `gpu.container_module`), taking the op's inputs and then its
    results as memrefs (one bare device pointer each once lowered), and
    records on the op `genesis.kernel = @...` and `genesis.launch =
    #genesis.launch<grid = [x, y, z], block = [x, y, z], shared = bytes>`
    (the dialect verifies both; today's emitters use 1-D grids and blocks).
    The op
    stays in place for the plan. Tensors of 2^31 or more elements are
    refused: kernels index with 32 bits.

    Emitters, chosen per kernel (as XLA's):
    - Loop fusion: a grid-stride loop (256-thread blocks, at most 132 x 8
      blocks) over the flattened result (results of several shapes, from
      genesis-horizontal-loop-fusion: a loop per shape over its own range of
      blocks), a group of `width` consecutive
      elements per iteration: 8 when every input and result is 16-bit, else
      4, when the element count allows. 32- and 16-bit results go through
      `vector.store`
      (alignment `width` x element bytes, at most 16: the arena and every
      device allocation are 256-byte aligned and groups start at multiples
      of the width). An input is read by one `vector.load` per group (lane 0
      loads, the others take their element) wherever the element walk
      reaches it through index maps that keep the group consecutive and
      aligned along the last dimension: the same shape, a transpose keeping
      the last dimension, a slice of stride 1 starting at a multiple of the
      width, a pad or a concat along the last dimension at multiples of it,
      a reshape whose last extents are multiples of it, a broadcast along
      the rows; its last extent must be a multiple of the width. Other
      inputs are read per element through the index map. Each element is
      computed by the elemental emitter shared with genesis-lower-cpu, in
      the element type; the multi-index is delinearised once per iteration
      (divisions by constants) when the lanes differ only in the last index.
    - Reduction fusion (reductions alike in operand type, dimensions and
      result type, yielded only, beside side results of their operands'
      shape: XLA's multi-output fusion, each operand element stored by the
      thread that visits it; one accumulator per reduction, so siblings
      merged by genesis-merge-sibling-reductions read shared inputs once).
      Reduced dimensions after the kept ones (a row reduction): a warp per
      row (8 rows per 256-thread block), each lane striding over the row
      (4 consecutive elements a step, read as vectors where the element walk
      keeps them consecutive, when the last dimension and the row are
      multiples of 4 and 128 and every input and result is 16- or 32-bit: a
      LayerNorm backward's row sums 36.7 -> 34.0 us on the H100), then a
      butterfly of `gpu.shuffle xor`; with fewer than 132 x 16 rows of 4096
      or more elements, a 1024-thread block per row, warps combined through
      shared memory (32 slots per reduction).
    - Reduction fusion with the reduced dimensions before the kept ones (a
      column reduction): 32 columns per block, the rows split across 8 (or
      32) warps, partial results combined in a fixed order through shared
      memory (one reduction at a time), so the result is deterministic.
      When tiles of 128 columns
      still give half the SMs a block (and the columns, the last extent and
      every input and result are 16- or 32-bit and multiples of 4), each
      thread takes 4 consecutive columns: its inputs, where the element walk
      keeps the 4 consecutive, and its side results move as one vector per
      row (GELU's backward: 0.181 -> 0.137 ms a layer in GPT-2); 8 columns
      (16-byte loads) when every input is 16-bit and tiles of 256 columns
      still give half the SMs a block (GELU's backward 0.137 -> 0.127 ms,
      the attention input's bias gradient 0.047 -> 0.038 ms).
    - Other reductions: a thread per kept element.
    - Row fusions (passes/Analysis/RowFusion.h: f32 sums or maxima over
      the last dimension of one row shape [rows..., C], values computed from
      a reduction reaching the row only through per-row broadcasts), which
      genesis-merge-row-fusions builds from chains such as softmax's,
      layer_norm's and rms_norm's backward (two to four chained
      sums). Its kernel is a block per row like the
      row emitter's: each thread computes the reductions' operands at its
      columns in body order, keeping every scalar in registers, each
      reduction a block reduction (its own shared slots; sums in f64, so a
      long row's total agrees with the evaluator before the rest cancels
      against it); the same scalars then give the yielded values, per-row
      ones stored by thread 0: one read of each input row and one write of
      each result. Rows of at most 65536 elements (64 a thread): both row
      emitters unroll over a thread's values, and compile time must not
      grow with the tensors, so wider rows stay reduction fusions.
    - f32 softmax and log_softmax over the last dimension, layer_norm and
      rms_norm (a row emitter): a block per row of T threads (a multiple of
      32, at most 1024), thread t holding columns t, t + T, ... in registers,
      so the row is read once and written once; the row's max and sum of
      exponentials (or mean and variance, two passes over the registers) are
      block reductions: a warp butterfly, then the warp totals through shared
      memory, added in warp order. Rows of more than 65536 elements run
      the op kernel of other ops (below), a thread per row.
    - Transposes outside fusions (any element type): the permutation is
      first reduced (size-1 dimensions dropped, operand dimensions that stay
      adjacent merged). If it moves the operand's last dimension B, the
      operand is viewed as [batch..., A, ..., B], A the dimension that
      becomes the result's last, and a 256-thread block (32 x 8) moves one
      32x32 tile of (A, B) of one batch index: 4 coalesced reads per thread
      (consecutive B) into a 32x33 shared tile (the padding column keeps the
      tile's columns in distinct banks), a `gpu.barrier`, 4 coalesced writes
      per thread (consecutive A); partial tiles are bounds-checked around the
      memory accesses only, so every thread reaches the barrier. The 1-D
      grid enumerates (batch, A tile, B tile). If the last dimension stays,
      a thread copies a group of up to 16 bytes of it (the widest power of
      two of elements dividing its extent; 1 for 64-bit elements) through
      the index map, one vector load and store.
    - slice, pad, concat, broadcast_in_dim, take (any element type) and iota
      outside fusions (a gather emitter): a grid-stride loop (256-thread
      blocks, at most 132 x 8) with a thread per result element, which
      delinearises its position (divisions by constants) and loads the
      element it comes from: start + i * stride (slice); (i - low) /
      (interior + 1) inside the operand and on the step, else zero (pad); the
      input whose range of the concatenated dimension holds i (concat); the
      id clamped into [0, n) in its own type, as the CPU kernel clamps
      (take); f32 and f64 rope over [..., S, D] computes x cos + rotate_half(x)
      sin from the element, its partner half a row away and the [S, D]
      tables.
    - scatter_add (f32, f64, i32, i64), viewed as result [outer, rows,
      inner] += updates [outer, ids, inner]: a 256-thread block per (outer,
      block of up to 32 consecutive rows, group of up to 4 x 256 inner
      columns); each thread owns columns t + 256q of the block's rows, their
      sums (f64 for f32) in registers, started from the operand. The block
      scans the ids in rounds of 4096: warp w loads the w-th eighth of a
      round's ids (16 per lane, all loads in flight), clamps them, and
      appends those inside the row block to its list in shared memory in id
      order (a redux.sync ballot and a popc give each lane its slot); after
      a barrier every thread walks the eight lists in warp order, 16
      entries' loads in flight, and adds the matching update rows' elements
      to its row's sums (a switch on the row, uniform across the block). So
      each element sums its updates
      in id order and f32 rounds once; the ids are read once per row block
      (rows / 32 x ids for an embedding gradient of width 768: 10 rows a
      block), the updates once.
    - genesis.decode_attention (genesis-decode-attention forms it): blocks
      per (batch, key/value head), each holding whole heads of the group's
      query rows, as many as stay under one block per SM
      (passes/Analysis/DecodeAttentionLayout.h); lane l of warp w owns keys
      (w K + i) 32 + l, reads the mask and loads a key only if some row sees
      it, and keeps its scores in registers; each row's max and sum of
      exponentials are block reductions (deterministic), so the
      probabilities are final; each warp then walks its keys in order, the
      owner lane's probabilities shuffled to the warp (keys no row sees
      skipped by the whole warp), lane l accumulating output columns l,
      l + 32, ... from coalesced value rows; the warps' partial outputs are
      added in warp order through shared memory and divided by the sum. A
      16-bit cache is widened as it is loaded.
    - f32 cross_entropy and cross_entropy_grad of rank-2 logits: with 1024
      classes or more and reduction none, a block per row. The loss holds
      the row in registers (block reductions of the max, the sum of
      exponentials and, with label smoothing, the sum of logits), reading
      the logits once; the gradient reads the row twice, first for each
      thread's running max and rescaled sum of exponentials (then two block
      reductions), then to write the gradient as it computes it, so no
      thread holds the row. Both read 16-byte vectors of consecutive
      classes when the class count is a multiple of the vector's (8 for
      16-bit logits), and the gradient writes them; otherwise a warp per
      row (lanes striding over the classes), the rows striding over the
      grid, and a mean or summed loss on one block adding its warps' row
      losses in a fixed order. Ignored rows give 0, labels out of range NaN,
      as on the CPU.
    - Other ops outside fusions (optimizer updates, softmax and log_softmax
      of other dimensions or types, dropout, attention, argmax): the
      CPU op kernel, a func.func
      over [begin, end) of its outer loop computing in f64, is cloned into
      the GPU module and called with one outer iteration per thread; the
      elementwise ones (optimizer updates, dropout) are emitted over their
      flattened shape, so each element gets a thread; an optimizer update's
      thread takes 8 elements, one per 128-element stride, so the step's
      scalars (Adam's bias corrections) can be computed once for 8.
    No kernel uses atomics, so every result is bitwise reproducible.
    A matrix-vector kernel (a product of at most 8 rows, or a fusion of
    genesis-fuse-matrix-vector) of one segment whose weights no function of
    the module updates (a generation plan's) issues every weight load, then
    its griddepcontrol.wait (sm_90 on; the codegen begins every other kernel
    with the wait): the weights stream while the kernels launched ahead of
    it drain and while its prologue computes.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def GenesisDedupeKernels : Pass<"genesis-dedupe-kernels", "mlir::ModuleOp"> {
  let summary = "Kernels with the same body compiled once (CPU and CUDA)";
  let description = [{
    The layers of a model lower to the same kernels under different names
    (GPT-2's 12 blocks: 927 kernels, 64 distinct bodies), and the kernels'
    code generation (LLVM, and ptxas for CUDA) is most of a plan's compile
    time. On the CPU, the module's functions marked `genesis.kernel`; on
    CUDA, in the `genesis_kernels` GPU module, first the private functions
    (the bodies that op kernels call), then the `gpu.func` kernels: a function
    that equals an earlier one but for its symbol name and locations (same
    attributes, body structurally equivalent: MLIR's OperationEquivalence,
    looked up by a hash of its ops) is erased, and every
    reference to it (the `genesis.kernel` attribute of the op that
    launches it, calls) names the earlier one instead. Calls are renamed
    before the kernels are compared, so kernels calling equal bodies are
    equal. Launch configurations are attributes of the launching ops, so one
    body may be launched with different grids. A module without kernels is
    left alone.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def GenesisPadClasses : Pass<"genesis-pad-classes", "mlir::func::FuncOp"> {
  let summary = "A classifier's class count padded to a multiple of 128, masked";
  let description = [{
    GEMMs whose output rows are an odd number of 16-bit elements (GPT-2's
    vocabulary of 50257) miss the tensor-core kernels that need 16-byte
    aligned rows; nanoGPT pads its vocabulary to 50304 for this reason. This
    pass pads inside the plan, so the parameters and checkpoints keep their
    shapes, and the loss and every gradient equal the unpadded model's.

    Taken: `genesis.cross_entropy` (label_smoothing 0) of logits reached
    through reshapes, each with one user, from
    `genesis.matmul %x, %w transpose_rhs` with `%w` a [C, K] tensor,
    C >= `min-classes` and C not a multiple of `multiple`.

    Rewrite, Cp = C rounded up to `multiple`:
    1. `%wp = genesis.pad %w high [Cp - C, 0]` (zero rows);
    2. the matmul of `%wp`, then `genesis.add` of a broadcast mask bias
       that is 0 for classes j < C and -1e30 for the padded ones (a select
       of an iota compared with C): the padded logits are 0 + (-1e30), and
       exp(-1e30 - max) is exactly 0 in f32, so the padded classes add
       nothing to the softmax's sum and get a zero gradient. An add of a
       bias, rather than a select, so that genesis-amp makes it the GEMM's
       epilogue (no pass over the [tokens, classes] logits); in f16 the
       bias rounds to -infinity, whose exp is 0 as well;
    3. the reshapes and the cross-entropy on Cp classes.
    Autodiff then slices the weight gradient back to [C, K] (pad's VJP).
    Run it before genesis-train-step.
  }];
  let options = [
    Option<"multiple", "multiple", "int64_t", /*default=*/"128",
           "the padded class count's multiple">,
    Option<"minClasses", "min-classes", "int64_t", /*default=*/"1024",
           "smaller classifiers are left alone">,
  ];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

def GenesisFusedAttention : Pass<"genesis-fused-attention", "mlir::func::FuncOp"> {
  let summary = "Attention and its gradient as fused (flash) attention ops";
  let description = [{
    Rewrites every `genesis.attention` that cuDNN's flash attention runs
    into `genesis.fused_attention`, and every `genesis.attention_grad` of it
    into `genesis.fused_attention_grad`, so that the CUDA plan computes
    both as library steps that never store the [B, Hq, S, T] scores.

    Taken: no mask; one head dimension D for query, key and value, a
    multiple of 8 and at most 128; element type `compute-type`, or f32 when
    `compute-type` is given (PyTorch's autocast runs
    `scaled_dot_product_attention` in 16 bits too). Anything else is left
    for genesis-decompose-attention, which runs after this pass.

    Algorithm, per taken attention `a`:
    1. f32 query, key and value are cast to `compute-type` (one cast each,
       right before `a`, so it fuses with their producers);
    2. `%out, %lse = genesis.fused_attention` replaces `a`; its 16-bit result
       is cast back to `a`'s element type for `a`'s users;
    3. each `genesis.attention_grad` in the same block after `a`, with `a`'s
       query, key, value, causal and scale, no mask, and `a`'s result as
       `out`, becomes `genesis.fused_attention_grad` of the 16-bit operands,
       `%out`, its `out_grad` cast to 16 bits, and `%lse`; its gradients are
       cast back. Other attention_grads stay (and are decomposed).
  }];
  let options = [
    Option<"computeType", "compute-type", "std::string", /*default=*/"\"\"",
           "bf16 or f16: the precision of f32 attention; empty: only "
           "attention already in 16 bits is taken">,
  ];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

def GenesisDecodeAttention
    : Pass<"genesis-decode-attention", "mlir::func::FuncOp"> {
  let summary = "Few-row f32 attention as genesis.decode_attention (CUDA)";
  let description = [{
    Rewrites every `genesis.attention` that a decode step runs (a few query
    rows per key/value head against a KV cache) into
    `genesis.decode_attention`, which genesis-lower-cuda runs as one kernel
    (flash-decoding in one block: the keys split over its warps, the warps'
    partial outputs merged) where genesis-decompose-attention would give
    four (scores, softmax, a transpose of the whole value cache, the
    product).

    Taken: an f32 attention (mask, if any, f32) whose result no
    `genesis.attention_grad` reads, and whose shapes have a
    DecodeAttentionLayout (at most 16 query rows per key/value head, head
    dimensions at most 256, the scores of a lane's keys within 64
    registers). Key and value that are widening casts of one 16-bit type
    (a bf16 or f16 KV cache read widened) are replaced by the casts'
    operands, so the kernel reads the cache where it lies; the casts go
    when nothing else reads them. Anything else is left for
    genesis-decompose-attention, which runs after this pass.
  }];
  let dependentDialects = ["::genesis::GenesisDialect"];
}

def GenesisDecomposeAttention
    : Pass<"genesis-decompose-attention", "mlir::func::FuncOp"> {
  let summary = "attention and attention_grad as batched GEMMs and row ops";
  let description = [{
    Rewrites every `genesis.attention` and `genesis.attention_grad` into the
    ops they are made of, so that a backend with fast GEMMs and row
    reductions (CUDA: cuBLASLt and the fusion emitters) runs them without a
    kernel of their own. The score matrix is materialised ([B, Hq, S, T]), as
    PyTorch's math attention does, for what genesis-fused-attention left.

    GQA costs nothing: the queries of one key/value head are contiguous
    ([B, Hq, S, D] is [B, Hkv, Hq/Hkv, S, D]), so `q` reshapes to
    [B*Hkv, Hq/Hkv*S, D] and every product is a batched GEMM over B*Hkv.
    Forward: `scores = scale * q k^T` (+ mask), causal positions j > i + T - S
    set to -inf (an iota comparison broadcast over B and H), then a softmax
    written with reduce_max / exp / reduce_sum / div in which a row whose
    maximum is -inf (it sees no key) gives zeros instead of NaN, as the
    op's semantics say; `out = P v`. With at most 16 query rows per
    key/value head (a decode step: one query for each head of a group), the
    forward's two products are row reductions of broadcast products instead
    of GEMMs (`q k^T` reduces [B*Hkv, rows, T, D] over D; `P v` reduces
    [B*Hkv, rows, Dv, T] over T, v transposed first), one warp per output:
    cuBLASLt runs such a GEMM as one tile per batch. Backward (the op's stated formulas):
    `dV = P^T dO`, `dP = dO V^T`, `dS = P (dP - rowsum(P * dP))` (which is
    rowsum(dO * O) for O recomputed from P, as the evaluator does),
    `dQ = scale dS K`, `dK = scale dS^T Q`; the grouped layout sums dK and dV
    over the query heads of a group inside the GEMMs.
  }];
}

def GenesisDecomposeLayerNorm
    : Pass<"genesis-decompose-layer-norm", "mlir::func::FuncOp"> {
  let summary = "f32 layer_norm and rms_norm as row sums and elementwise ops (CUDA)";
  let description = [{
    Rewrites every `genesis.layer_norm` of an f32 operand into
    `(x - mean(x)) * rsqrt(mean((x - mean(x))^2) + eps) * weight + bias`,
    and every f32 `genesis.rms_norm` into `x * rsqrt(mean(x^2) + eps) *
    weight`, the row statistics built op for op as the op's VJP builds them,
    so that CSE shares them between the forward and the backward of a train
    step.
    genesis-fuse and genesis-merge-row-fusions then make one row fusion of
    the norm, the ops before it (a residual add) and after it (the cast of
    its result to 16 bits): one kernel that reads x once and writes the
    16-bit result and the statistics the backward reads, where the layer
    norm op kernel wrote an f32 result that a cast kernel read back. 16-bit
    norms are left to the op kernel (its statistics accumulate in f32).
  }];
}

def GenesisDecomposeCrossEntropy
    : Pass<"genesis-decompose-cross-entropy", "mlir::func::FuncOp"> {
  let summary = "A cross_entropy's (and its gradient's) mean or sum as a reduce_sum of its rows";
  let description = [{
    Rewrites a `genesis.cross_entropy` with reduction `mean` or `sum` into the
    same op with reduction `none` (one loss per row, which a backend runs row
    parallel) followed by a `reduce_sum` over the rows and, for `mean`, a
    division by the number of rows whose label is not `ignore_index` (a
    compare, a cast and a second `reduce_sum`), which is the op's definition
    of the mean. Likewise a `genesis.cross_entropy_grad` with reduction
    `mean` or `sum` becomes the per-row gradient (reduction `none`) whose
    row cotangents are the loss's cotangent broadcast over the rows (divided
    by that count for `mean`). The CUDA pipeline runs it so that the sum over
    rows is a reduction fusion rather than a single block walking every row,
    and no gradient kernel has to count the labels.
  }];
}

def GenesisDecomposeGlobalNorm
    : Pass<"genesis-decompose-global-norm", "mlir::func::FuncOp"> {
  let summary = "A global_norm as row reductions a GPU runs in parallel";
  let description = [{
    Rewrites `genesis.global_norm` (the gradient clipping and loss-scaling
    norm) into `sqrt` of the sum, over its inputs, of each input's sum of
    squares, each input (cast to the result type first) viewed as
    `[n / C, C]` with `C` the largest divisor of its element count n that is
    at most max(32, min(4096, n / 2048)), so that there are rows enough for
    the GPU's warps: a `reduce_sum` over C (a row reduction, the squares
    fused into it) and then over the rows. An input whose n has no such
    divisor of at least 32 (a small or prime n) is summed in one reduction.
    The CUDA pipeline runs it: the op's kernel is otherwise one thread
    walking every element.
  }];
}

def GenesisWiden16Bit : Pass<"genesis-widen-16bit", "mlir::func::FuncOp"> {
  let summary = "bf16 and f16 arithmetic computed in f32, rounded once per op";
  let description = [{
    The CPU kernels compute in f32 and f64 and keep 16-bit floats as storage
    types (as PyTorch's CPU kernels do). Every genesis op with a bf16 or f16
    float operand or result, except those that only move values exactly
    (cast, select, constant, broadcast_in_dim, take, all_reduce, transpose,
    slice, reshape, pad, concat), is rewritten: each 16-bit operand is cast
    to f32, the op is cloned with f32 in place of each 16-bit result type,
    and each such result is cast back to its 16-bit type. One rounding per
    op, as the reference evaluator rounds (its f64 result to the 16-bit
    type): they differ only where the f32 result rounds to a 16-bit tie
    differently than the f64 one, by one 16-bit ulp at most. The CPU
    pipeline runs it first.
  }];
}

#endif // GENESIS_PASSES_PASSES_TD
