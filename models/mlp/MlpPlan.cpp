//===- MlpPlan.cpp - The compiled MLP training plan -----------------------===//

#include "models/mlp/MlpPlan.h"
#include "dialect/Utils/DiagnosticCapture.h"
#include "frontend/Trace.h"
#include "passes/Passes.h"

#include <iostream>

namespace genesis::models {

std::vector<uint8_t> compileMlpTrainingPlan(nn::Sequential &model,
                                            int64_t batch, bool printIr,
                                            plan::Target target) {
  Trace trace("loss");
  trace.bind(model);
  Tensor images = trace.input("images", DType::F32, {batch, 784});
  Tensor labels = trace.input("labels", DType::I64, {batch});
  Tensor logits = model.forward(images);
  trace.output("loss", cross_entropy(logits, labels));
  trace.output("logits", logits);
  mlir::func::FuncOp loss = trace.finish();
  GenesisTrainStepOptions options;
  options.optimizer = "adamw";
  options.weightDecay = 0.01;
  for (auto &[name, parameter] : model.named_parameters())
    if (parameter->data().rank() == 1)
      options.noDecay.push_back(name);
  DiagnosticCapture capture(&trace.context());
  if (mlir::failed(buildTrainStep(loss, options)))
    throw Error(capture.firstError("building the train step failed"));
  if (printIr)
    std::cout << trace.str() << "\n";
  PlanOptions planOptions;
  planOptions.target = target;
  // Kernels for the GPU here, if any, which mlp-fashion-mnist runs them on.
  if (target == plan::Target::Cuda)
    planOptions.cudaChips = parseCudaArchs("native");
  mlir::FailureOr<std::vector<uint8_t>> plan =
      compilePlan(trace.module(), {"train_step", "loss"}, planOptions);
  if (mlir::failed(plan))
    throw Error(capture.firstError("compiling the plan failed"));
  return *plan;
}

} // namespace genesis::models
