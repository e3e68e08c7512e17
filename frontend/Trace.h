//===- Trace.h - Recording a model function as genesis IR -------*- C++ -*-===//
//
// A Trace builds one `func.func` in the genesis dialect. Inputs and bound
// module parameters become function arguments (named by the `genesis.name`
// argument attribute and tagged with a `genesis.role`), every frontend call
// appends ops, and `output` adds results. `finish` returns the verified
// function.
//
//   genesis::Trace trace("forward");
//   trace.bind(model);                       // parameters -> arguments
//   Tensor x = trace.input("x", DType::F32, {64, 784});
//   trace.output("logits", model.forward(x));
//   mlir::func::FuncOp f = trace.finish();
//
// Several traces can record functions of one module (one plan then holds
// them all, sharing persistent tensors by name):
//
//   genesis::Trace prefill("prefill");
//   genesis::Trace decode("decode", prefill);   // same module and context
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_FRONTEND_TRACE_H
#define GENESIS_FRONTEND_TRACE_H

#include "frontend/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace genesis {

namespace nn {
class Module;
}

class Trace {
public:
  explicit Trace(const std::string &functionName = "forward");
  /// Records `functionName` into the module and context of `other`; the
  /// module lives as long as any trace recording into it. Throws if the
  /// module already has a function of that name.
  Trace(const std::string &functionName, Trace &other);
  ~Trace();
  Trace(const Trace &) = delete;
  Trace &operator=(const Trace &) = delete;

  mlir::MLIRContext &context() { return *shared_->context; }

  /// A function argument supplied at run time (role "input").
  Tensor input(const std::string &name, DType dtype, const Shape &shape,
               Site site = Site::current());
  /// Makes every parameter and buffer of `module` an argument named by
  /// `prefix` + its state_dict key (roles "parameter" and "buffer"), in
  /// state_dict order.
  void bind(nn::Module &module, const std::string &prefix = "",
            Site site = Site::current());
  /// bind for a model that computes in `compute`: a floating parameter or
  /// buffer stored in another type (bf16 weights of an f32 model) is an
  /// argument of its stored type that the model sees cast to `compute`, as
  /// autocast reads 16-bit weights (genesis-amp's GEMMs then read them
  /// directly). The model reads such a tensor but must not return an
  /// update of it: its update would be of type `compute`.
  void bind_cast(nn::Module &module, DType compute,
                 const std::string &prefix = "", Site site = Site::current());
  /// The scalar i64 seed argument of dropout (role "rng_seed"), created on
  /// first use.
  Tensor rng_seed();
  /// Reserves `count` Philox counters; dropout ops get disjoint ranges.
  int64_t reserve_rng_offsets(int64_t count);
  /// Adds a function result.
  void output(const std::string &name, const Tensor &value,
              Site site = Site::current());

  /// Adds the return and verifies; later calls return the same function.
  mlir::func::FuncOp finish();
  mlir::ModuleOp module() { return shared_->module.get(); }
  /// The module as text (finishes the trace first).
  std::string str();

  /// Evaluator arguments in function order: bound parameters and buffers
  /// from their modules, inputs and the seed from `inputs` by name.
  std::vector<HostArray>
  arguments(const std::map<std::string, HostArray> &inputs) const;
  std::vector<std::string> output_names() const { return outputNames_; }

  //===--------------------------------------------------------------------===//
  // Used by the op builders of the frontend.
  //===--------------------------------------------------------------------===//

  mlir::OpBuilder &builder() { return builder_; }
  mlir::Location location(Site site);
  /// Inserts the op described by `state`, infers its result types (ops
  /// without type inference must come with their types), verifies it and
  /// throws genesis::Error with the dialect's message at `site` if the op is
  /// invalid; nothing is left in the function then.
  mlir::Operation *insert(mlir::OperationState &state);
  [[noreturn]] void fail(Site site, const std::string &message);

private:
  mlir::BlockArgument addArgument(const std::string &name,
                                  const std::string &role, mlir::Type type,
                                  Site site);
  void checkOpen(Site site) const;
  void bindModule(nn::Module &module, std::optional<DType> compute,
                  const std::string &prefix, Site site);

  /// The context and module, shared by the traces recording into them.
  struct Shared {
    std::unique_ptr<mlir::MLIRContext> context;
    /// Declared after the context: destroyed before it.
    mlir::OwningOpRef<mlir::ModuleOp> module;
  };

  static std::shared_ptr<Shared> newModule();
  Trace(const std::string &functionName, std::shared_ptr<Shared> shared);

  std::shared_ptr<Shared> shared_;
  mlir::func::FuncOp function_;
  mlir::OpBuilder builder_;
  bool finished_ = false;
  std::vector<mlir::Value> outputs_;
  std::vector<std::string> outputNames_;
  /// Argument i is bound to bound_[i] when it is a parameter or buffer.
  std::vector<const HostArray *> bound_;
  std::optional<Tensor> seed_;
  int64_t nextRngOffset_ = 0;
};

} // namespace genesis

#endif // GENESIS_FRONTEND_TRACE_H
