//===- Grad.h - Differentiating traces --------------------------*- C++ -*-===//
//
// JAX's value_and_grad for traced functions: the gradient comes from the
// genesis-autodiff pass, not a tape.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_FRONTEND_GRAD_H
#define GENESIS_FRONTEND_GRAD_H

#include "frontend/Trace.h"

#include <string>
#include <vector>

namespace genesis {

/// Finishes `trace` (whose first output must be a scalar float loss) and adds
/// `@<name>_grad` to its module: same arguments, results = the trace's
/// outputs followed by d(loss)/d(argument) for each argument named in `wrt`
/// (default: every bound parameter, in state_dict order). Throws
/// genesis::Error with the pass's message on failure.
mlir::func::FuncOp value_and_grad(Trace &trace,
                                  const std::vector<std::string> &wrt = {});

} // namespace genesis

#endif // GENESIS_FRONTEND_GRAD_H
