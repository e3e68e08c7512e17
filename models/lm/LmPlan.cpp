//===- LmPlan.cpp - Compiled plans of a causal language model -------------===//

#include "models/lm/LmPlan.h"
#include "dialect/Utils/DiagnosticCapture.h"
#include "frontend/Trace.h"
#include "passes/Passes.h"

namespace genesis::models {
namespace {

std::vector<uint8_t> compile(Trace &trace,
                             const std::vector<std::string> &functions,
                             const LmPlanOptions &options) {
  DiagnosticCapture capture(&trace.context());
  PlanOptions planOptions;
  planOptions.target = options.target;
  planOptions.cudaChips = options.cudaChips;
  planOptions.allowTf32 = options.allowTf32;
  planOptions.mixedPrecision = options.mixedPrecision;
  planOptions.memoryBudget = options.memoryBudget;
  mlir::FailureOr<std::vector<uint8_t>> plan =
      compilePlan(trace.module(), functions, planOptions);
  if (mlir::failed(plan))
    throw Error(capture.firstError("compiling the plan failed"));
  return *plan;
}

} // namespace

std::vector<uint8_t> compileLmTrainingPlan(nn::Module &model, int64_t vocab,
                                           const LmPlanOptions &options) {
  const int64_t tokens = options.batch * options.sequence;
  Trace trace("loss");
  trace.bind(model);
  Tensor ids =
      trace.input("ids", DType::I64, {options.batch, options.sequence});
  Tensor targets =
      trace.input("targets", DType::I64, {options.batch, options.sequence});
  // cross_entropy takes [N, C] logits: every position is one prediction.
  Tensor logits = model.forward(ids).reshape({tokens, vocab});
  trace.output("loss", cross_entropy(logits, targets.reshape({tokens})));
  mlir::func::FuncOp loss = trace.finish();

  GenesisTrainStepOptions trainStep;
  trainStep.optimizer = "adamw";
  trainStep.weightDecay = options.weightDecay;
  trainStep.beta1 = options.beta1;
  trainStep.beta2 = options.beta2;
  trainStep.clipGradNorm = options.clipGradNorm;
  trainStep.lossScale = options.lossScale;
  for (auto &[name, parameter] : model.named_parameters())
    if (parameter->data().rank() == 1)
      trainStep.noDecay.push_back(name);
  DiagnosticCapture capture(&trace.context());
  if (mlir::failed(buildTrainStep(loss, trainStep)))
    throw Error(capture.firstError("building the train step failed"));
  return compile(trace, {"train_step", "loss"}, options);
}

std::vector<uint8_t> compileLmSamplingPlan(nn::Module &model,
                                           const LmPlanOptions &options) {
  // Sampling runs without dropout, whatever mode the model is in.
  bool training = model.is_training();
  model.eval();
  Trace trace("forward");
  trace.bind(model);
  Tensor ids = trace.input("ids", DType::I64, {1, options.sequence});
  trace.output("logits", model.forward(ids));
  trace.finish();
  model.train(training);
  // One window's forward: the budget is the training plan's.
  LmPlanOptions sampling = options;
  sampling.memoryBudget = 0;
  return compile(trace, {"forward"}, sampling);
}

} // namespace genesis::models
