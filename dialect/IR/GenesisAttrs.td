//===- GenesisAttrs.td - Genesis dialect attributes --------*- tablegen -*-===//
//
// The typed attributes through which the compiler tells the plan emitter how
// a kernel runs.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_DIALECT_IR_GENESISATTRS_TD
#define GENESIS_DIALECT_IR_GENESISATTRS_TD

include "dialect/IR/GenesisBase.td"
include "mlir/IR/AttrTypeBase.td"

def Genesis_LaunchAttr : AttrDef<Genesis_Dialect, "Launch"> {
  let mnemonic = "launch";
  let summary = "A CUDA kernel launch: grid, block and dynamic shared memory";
  let description = [{
    `genesis-lower-cuda` records on every op it emits a kernel for the launch
    of that kernel, which the plan emitter copies into the plan's kernel
    launch step:

    ```mlir
    #genesis.launch<grid = [64, 1, 1], block = [256, 1, 1], shared = 0>
    ```

    `grid` is the number of blocks in x, y and z, `block` the threads per
    block in x, y and z, `shared` the bytes of dynamic shared memory. The
    verifier holds them to CUDA's limits on sm_90, the target: three sizes
    each, all at least 1; grid x below 2^31, grid y and z at most 65535;
    block x and y at most 1024, block z at most 64, and at most 1024 threads
    in all; shared memory from 0 to 227 KiB (the runtime checks what the
    device it runs on allows).
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "blocks in x, y, z">:$grid,
    ArrayRefParameter<"int64_t", "threads per block in x, y, z">:$block,
    "int64_t":$shared);
  let assemblyFormat =
      "`<` `grid` `=` `[` $grid `]` `,` `block` `=` `[` $block `]` `,` "
      "`shared` `=` $shared `>`";
  let genVerifyDecl = 1;
}

#endif // GENESIS_DIALECT_IR_GENESISATTRS_TD
