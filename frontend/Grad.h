//===- Grad.h - Differentiating traces --------------------------*- C++ -*-===//
//
// JAX's value_and_grad for traced functions: the gradient comes from the
// genesis-autodiff pass, not a tape.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_FRONTEND_GRAD_H
#define GENESIS_FRONTEND_GRAD_H

#include "frontend/Trace.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace genesis {

/// Finishes `trace` (whose first output must be a scalar float loss) and adds
/// `@<name>_grad` to its module: same arguments, results = the trace's
/// outputs followed by d(loss)/d(argument) for each argument named in `wrt`
/// (default: every bound parameter, in state_dict order). Throws
/// genesis::Error with the pass's message on failure.
mlir::func::FuncOp value_and_grad(Trace &trace,
                                  const std::vector<std::string> &wrt = {});

/// A function of traced tensors; differentiated functions return a scalar.
using TracedFunction = std::function<Tensor(const std::vector<Tensor> &)>;

/// JAX's value_and_grad(f, argnums) on concrete arrays: returns f's value and
/// its gradients with respect to the arguments listed in `argnums`. `f` is
/// traced and differentiated on the first call for each combination of
/// argument dtypes and shapes (like jax.jit's cache) and evaluated by the
/// reference evaluator.
std::function<std::pair<HostArray, std::vector<HostArray>>(
    const std::vector<HostArray> &)>
value_and_grad(TracedFunction f, std::vector<int> argnums = {0});

/// JAX's grad(f, argnums): the gradients only.
std::function<std::vector<HostArray>(const std::vector<HostArray> &)>
grad(TracedFunction f, std::vector<int> argnums = {0});

} // namespace genesis

#endif // GENESIS_FRONTEND_GRAD_H
