//===- Optim.h - Optimizers, schedules, compiled train steps ----*- C++ -*-===//
//
// torch.optim in the Genesis frontend. An optimizer here is a description;
// compile_train_step traces the user's loss, runs genesis-autodiff and
// genesis-train-step, and returns a TrainStep that owns the optimizer state
// and advances the model by one compiled step per call. Learning-rate
// schedules are host functions of the step count whose value is passed to the
// step as an input, so changing the rate never recompiles.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_FRONTEND_OPTIM_H
#define GENESIS_FRONTEND_OPTIM_H

#include "frontend/Trace.h"
#include "frontend/nn/Module.h"
#include "runtime/support/LrSchedule.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace genesis::optim {

/// torch.optim.SGD.
struct SGD {
  double lr = 1e-2;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
};

/// torch.optim.Adam (L2 weight decay).
struct Adam {
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
};

/// torch.optim.AdamW (decoupled weight decay).
struct AdamW {
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 1e-2;
};

using Optimizer = std::variant<SGD, Adam, AdamW>;

struct TrainStepOptions {
  /// Parameters (state_dict names) of the group without weight decay, e.g.
  /// biases and norm weights.
  std::vector<std::string> no_decay;
  /// clip_grad_norm_ maximum (0: off) and clip_grad_value_ bound (0: off).
  double clip_grad_norm = 0.0;
  double clip_grad_value = 0.0;
  /// Micro-batches per step: every batch input gets a leading dimension of
  /// this size and the gradients are averaged over it.
  int64_t accumulation = 1;
  /// "dynamic": torch.cuda.amp.GradScaler's loss scale, kept in the
  /// optimizer state ("amp.loss_scale", "amp.growth_tracker",
  /// "amp.skipped_steps"): a step with non-finite gradients is skipped and
  /// halves the scale, `growth_interval` clean steps double it.
  std::string loss_scale = "none";
  double init_scale = 65536.0;
  int64_t growth_interval = 2000;
};

/// The loss of one batch: called once, while tracing, with the batch
/// tensors by name.
using LossFn = std::function<Tensor(const std::map<std::string, Tensor> &)>;

class TrainStep {
public:
  /// One optimizer step on `batch` (arrays by input name) at learning rate
  /// `lr` (the optimizer's own when negative); updates the model's
  /// parameters and the optimizer state, returns the loss.
  double step(const std::map<std::string, HostArray> &batch, double lr = -1);

  /// Steps taken so far.
  int64_t steps() const { return steps_; }
  /// The optimizer state ("<param>.exp_avg", ... and "step"), to checkpoint.
  NamedArrays state_dict() const;
  /// Restores state_dict() output; checks every name, dtype and shape first.
  void load_state_dict(const NamedArrays &state);
  /// The traced module (@loss, @loss_grad, @train_step).
  mlir::ModuleOp module() { return trace_->module(); }

private:
  friend TrainStep compile_train_step(nn::Module &, const LossFn &,
                                      const Optimizer &,
                                      const std::map<std::string, HostArray> &,
                                      const TrainStepOptions &);
  TrainStep() = default;

  std::unique_ptr<Trace> trace_;
  mlir::func::FuncOp function_;
  std::vector<nn::Parameter *> parameters_;
  NamedArrays state_;
  std::map<std::string, nn::Parameter *> buffers_;
  std::vector<std::string> batchNames_;
  double defaultLr_ = 0;
  int64_t steps_ = 0;
};

/// Traces `loss` over `example_batch` (names, dtypes and shapes of one
/// batch), differentiates it with respect to `model`'s parameters and builds
/// the train step for `optimizer` (PyTorch semantics). The model is traced in
/// its current train()/eval() mode.
TrainStep
compile_train_step(nn::Module &model, const LossFn &loss,
                   const Optimizer &optimizer,
                   const std::map<std::string, HostArray> &example_batch,
                   const TrainStepOptions &options = {});

} // namespace genesis::optim

#endif // GENESIS_FRONTEND_OPTIM_H
