//===- CpuCodegenTest.cpp - Compiled CPU kernels against the evaluator ----===//
//
// Each test writes functions whose results are genesis.fusion regions, runs
// genesis-lower-cpu and compileCpuKernels, loads the shared object with
// dlopen, runs every kernel on fresh random inputs and compares with the
// reference evaluator running the same function.
//
// Tolerance: arithmetic (+ - * / sqrt, comparisons, casts, max/min) is
// correctly rounded on both sides and must agree exactly; libm functions
// (exp, log, tanh, erf, sin, cos, pow) and reductions (f32 accumulation in
// the kernel, f64 in the evaluator) within 1e-5 relative to the magnitude of
// the terms, the f32 budget of the project.
//
//===----------------------------------------------------------------------===//

#include "dialect/Evaluator/Evaluator.h"
#include "dialect/IR/GenesisOps.h"
#include "passes/Passes.h"
#include "runtime/Random.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <dlfcn.h>
#include <fstream>
#include <map>

using namespace genesis;

namespace {

/// A loaded kernel library, unloaded and deleted at scope exit.
class KernelLibrary {
public:
  explicit KernelLibrary(const std::string &bytes) {
    path = ::testing::TempDir() + "/genesis_kernels_" +
           std::to_string(reinterpret_cast<uintptr_t>(this)) + ".so";
    std::ofstream(path, std::ios::binary) << bytes;
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  ~KernelLibrary() {
    if (handle)
      dlclose(handle);
    std::remove(path.c_str());
  }
  void (*kernel(const std::string &name))(void **) {
    return reinterpret_cast<void (*)(void **)>(dlsym(handle, name.c_str()));
  }
  void *handle = nullptr;

private:
  std::string path;
};

HostArray randomFor(mlir::Type type, uint64_t seed) {
  auto tensor = mlir::cast<mlir::RankedTensorType>(type);
  HostArray array(dtypeOf(tensor.getElementType()),
                  {tensor.getShape().begin(), tensor.getShape().end()});
  Generator generator(seed);
  for (int64_t i = 0; i < array.numel(); ++i) {
    double u = generator.uniform();
    if (isFloatDType(array.dtype()))
      array.setDouble(i, 4 * u - 2 + (u < 0.5 ? -0.01 : 0.01));
    else if (array.dtype() == DType::I1)
      array.setInt(i, u < 0.5);
    else
      array.setInt(i, static_cast<int64_t>(std::floor(200 * u)) - 100);
  }
  return array;
}

/// Runs `@f` of `ir` through the evaluator and through the compiled kernels
/// (each result of @f must be a fusion of @f's arguments) and returns the
/// largest scaled difference.
double maxError(const std::string &ir, uint64_t seed = 1,
                const std::map<unsigned, HostArray> &given = {}) {
  mlir::MLIRContext context;
  context.loadDialect<GenesisDialect, mlir::func::FuncDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(ir, &context);
  EXPECT_TRUE(module);
  auto function = module->lookupSymbol<mlir::func::FuncOp>("f");
  std::vector<HostArray> inputs;
  for (auto [i, type] : llvm::enumerate(function.getArgumentTypes()))
    inputs.push_back(given.count(i) ? given.at(i) : randomFor(type, seed++));
  std::vector<HostArray> expected = evaluate(function, inputs);

  mlir::PassManager pm(&context);
  pm.addPass(genesis::createGenesisLowerCpu());
  EXPECT_TRUE(mlir::succeeded(pm.run(*module)));
  mlir::FailureOr<std::string> library = compileCpuKernels(*module);
  EXPECT_TRUE(mlir::succeeded(library));
  if (mlir::failed(library))
    return INFINITY;
  KernelLibrary kernels(*library);
  EXPECT_NE(kernels.handle, nullptr) << dlerror();

  double worst = 0;
  auto returnOp = mlir::cast<mlir::func::ReturnOp>(
      function.getBody().front().getTerminator());
  for (auto [r, value] : llvm::enumerate(returnOp.getOperands())) {
    mlir::Operation *op = value.getDefiningOp();
    auto name = op->getAttrOfType<mlir::FlatSymbolRefAttr>("genesis.kernel");
    EXPECT_TRUE(name) << "result " << r << " has no kernel";
    if (!name)
      return INFINITY;
    auto kernel = kernels.kernel(name.getValue().str());
    EXPECT_NE(kernel, nullptr);
    std::vector<HostArray> outputs;
    for (mlir::Type type : op->getResultTypes()) {
      auto tensor = mlir::cast<mlir::RankedTensorType>(type);
      outputs.emplace_back(dtypeOf(tensor.getElementType()),
                           std::vector<int64_t>(tensor.getShape().begin(),
                                                tensor.getShape().end()));
    }
    std::vector<void *> args;
    for (mlir::Value input : op->getOperands())
      args.push_back(inputs[mlir::cast<mlir::BlockArgument>(input).getArgNumber()]
                         .data());
    for (HostArray &output : outputs)
      args.push_back(output.data());
    kernel(args.data());
    const HostArray &want = expected[r];
    const HostArray &got = outputs[mlir::cast<mlir::OpResult>(value).getResultNumber()];
    for (int64_t i = 0; i < want.numel(); ++i) {
      double a = got.getDouble(i), b = want.getDouble(i);
      if (std::isnan(b)) {
        EXPECT_TRUE(std::isnan(a)) << "element " << i;
        continue;
      }
      worst = std::max(worst, std::fabs(a - b) / std::max(1.0, std::fabs(b)));
    }
  }
  return worst;
}

TEST(CpuCodegen, ElementwiseChainsWithBroadcasts) {
  EXPECT_EQ(maxError(R"(
    func.func @f(%a: tensor<16x33xf32>, %b: tensor<33xf32>, %c: tensor<16x1xf32>) -> tensor<16x33xf32> {
      %r = genesis.fusion %a, %b, %c : (tensor<16x33xf32>, tensor<33xf32>, tensor<16x1xf32>) -> tensor<16x33xf32> {
      ^bb0(%x: tensor<16x33xf32>, %y: tensor<33xf32>, %z: tensor<16x1xf32>):
        %0 = genesis.broadcast_in_dim %y, [1] : tensor<33xf32> -> tensor<16x33xf32>
        %1 = genesis.broadcast_in_dim %z, [0, 1] : tensor<16x1xf32> -> tensor<16x33xf32>
        %2 = genesis.mul %x, %0 : tensor<16x33xf32>
        %3 = genesis.sub %2, %1 : tensor<16x33xf32>
        %4 = genesis.div %3, %0 : tensor<16x33xf32>
        %5 = genesis.abs %4 : tensor<16x33xf32>
        %6 = genesis.sqrt %5 : tensor<16x33xf32>
        %7 = genesis.max %6, %x : tensor<16x33xf32>
        %8 = genesis.min %7, %1 : tensor<16x33xf32>
        %9 = genesis.neg %8 : tensor<16x33xf32>
        %10 = genesis.relu %9 : tensor<16x33xf32>
        %c2 = genesis.constant dense<2.5> : tensor<16x33xf32>
        %11 = genesis.add %10, %c2 : tensor<16x33xf32>
        genesis.yield %11 : tensor<16x33xf32>
      }
      return %r : tensor<16x33xf32>
    })"),
            0.0);
}

TEST(CpuCodegen, TranscendentalsWithinF32Budget) {
  EXPECT_LT(maxError(R"(
    func.func @f(%a: tensor<7x19xf32>) -> tensor<7x19xf32> {
      %r = genesis.fusion %a : (tensor<7x19xf32>) -> tensor<7x19xf32> {
      ^bb0(%x: tensor<7x19xf32>):
        %0 = genesis.exp %x : tensor<7x19xf32>
        %1 = genesis.log %0 : tensor<7x19xf32>
        %2 = genesis.tanh %1 : tensor<7x19xf32>
        %3 = genesis.sigmoid %x : tensor<7x19xf32>
        %4 = genesis.silu %2 : tensor<7x19xf32>
        %5 = genesis.gelu %3 : tensor<7x19xf32>
        %6 = genesis.gelu %4 approximate = tanh : tensor<7x19xf32>
        %7 = genesis.sin %5 : tensor<7x19xf32>
        %8 = genesis.cos %6 : tensor<7x19xf32>
        %9 = genesis.erf %7 : tensor<7x19xf32>
        %10 = genesis.rsqrt %0 : tensor<7x19xf32>
        %11 = genesis.pow %0, %8 : tensor<7x19xf32>
        %12 = genesis.add %9, %10 : tensor<7x19xf32>
        %13 = genesis.add %12, %11 : tensor<7x19xf32>
        genesis.yield %13 : tensor<7x19xf32>
      }
      return %r : tensor<7x19xf32>
    })"),
            1e-5);
}

TEST(CpuCodegen, CompareSelectCastsAndMultipleOutputs) {
  EXPECT_EQ(maxError(R"(
    func.func @f(%a: tensor<9x5xf32>, %b: tensor<9x5xf32>, %i: tensor<9x5xi32>) -> (tensor<9x5xf32>, tensor<9x5xi32>, tensor<9x5xi1>) {
      %r:3 = genesis.fusion %a, %b, %i : (tensor<9x5xf32>, tensor<9x5xf32>, tensor<9x5xi32>) -> (tensor<9x5xf32>, tensor<9x5xi32>, tensor<9x5xi1>) {
      ^bb0(%x: tensor<9x5xf32>, %y: tensor<9x5xf32>, %n: tensor<9x5xi32>):
        %big = genesis.constant dense<3.0e+09> : tensor<9x5xf32>
        %0 = genesis.compare lt, %x, %y : tensor<9x5xf32>
        %1 = genesis.select %0, %x, %y : tensor<9x5xi1>, tensor<9x5xf32>
        %2 = genesis.mul %x, %big : tensor<9x5xf32>
        %3 = genesis.cast %2 : tensor<9x5xf32> to tensor<9x5xi32>
        %4 = genesis.add %3, %n : tensor<9x5xi32>
        %5 = genesis.cast %n : tensor<9x5xi32> to tensor<9x5xf32>
        %6 = genesis.add %1, %5 : tensor<9x5xf32>
        %7 = genesis.compare ne, %n, %3 : tensor<9x5xi32>
        %8 = genesis.not %7 : tensor<9x5xi1>
        genesis.yield %6, %4, %8 : tensor<9x5xf32>, tensor<9x5xi32>, tensor<9x5xi1>
      }
      return %r#0, %r#1, %r#2 : tensor<9x5xf32>, tensor<9x5xi32>, tensor<9x5xi1>
    })"),
            0.0);
}

TEST(CpuCodegen, ReductionsAsFusionRoots) {
  EXPECT_LT(maxError(R"(
    func.func @f(%a: tensor<6x40x3xf32>) -> (tensor<6x3xf32>, tensor<6x1x3xf32>, tensor<f32>, tensor<40xf32>) {
      %s = genesis.fusion %a : (tensor<6x40x3xf32>) -> tensor<6x3xf32> {
      ^bb0(%x: tensor<6x40x3xf32>):
        %0 = genesis.exp %x : tensor<6x40x3xf32>
        %1 = genesis.reduce_sum %0 dims [1] : tensor<6x40x3xf32>
        genesis.yield %1 : tensor<6x3xf32>
      }
      %m = genesis.fusion %a : (tensor<6x40x3xf32>) -> tensor<6x1x3xf32> {
      ^bb0(%x: tensor<6x40x3xf32>):
        %1 = genesis.reduce_max %x dims [1] keepdim : tensor<6x40x3xf32>
        genesis.yield %1 : tensor<6x1x3xf32>
      }
      %t = genesis.fusion %a : (tensor<6x40x3xf32>) -> tensor<f32> {
      ^bb0(%x: tensor<6x40x3xf32>):
        %0 = genesis.mul %x, %x : tensor<6x40x3xf32>
        %1 = genesis.reduce_sum %0 dims [0, 1, 2] : tensor<6x40x3xf32>
        genesis.yield %1 : tensor<f32>
      }
      %n = genesis.fusion %a : (tensor<6x40x3xf32>) -> tensor<40xf32> {
      ^bb0(%x: tensor<6x40x3xf32>):
        %1 = genesis.reduce_min %x dims [0, 2] : tensor<6x40x3xf32>
        genesis.yield %1 : tensor<40xf32>
      }
      return %s, %m, %t, %n : tensor<6x3xf32>, tensor<6x1x3xf32>, tensor<f32>, tensor<40xf32>
    })"),
            1e-5);
}

TEST(CpuCodegen, F64AndIntegerKernels) {
  EXPECT_LT(maxError(R"(
    func.func @f(%a: tensor<5x7xf64>, %i: tensor<5x7xi64>) -> (tensor<5x7xf64>, tensor<5x7xi64>) {
      %r = genesis.fusion %a : (tensor<5x7xf64>) -> tensor<5x7xf64> {
      ^bb0(%x: tensor<5x7xf64>):
        %0 = genesis.exp %x : tensor<5x7xf64>
        %1 = genesis.mul %0, %x : tensor<5x7xf64>
        genesis.yield %1 : tensor<5x7xf64>
      }
      %j = genesis.fusion %i : (tensor<5x7xi64>) -> tensor<5x7xi64> {
      ^bb0(%n: tensor<5x7xi64>):
        %0 = genesis.mul %n, %n : tensor<5x7xi64>
        %1 = genesis.relu %0 : tensor<5x7xi64>
        %2 = genesis.sub %1, %n : tensor<5x7xi64>
        %3 = genesis.abs %2 : tensor<5x7xi64>
        genesis.yield %3 : tensor<5x7xi64>
      }
      return %r, %j : tensor<5x7xf64>, tensor<5x7xi64>
    })"),
            1e-14);
}

TEST(CpuCodegen, ScalarKernel) {
  EXPECT_EQ(maxError(R"(
    func.func @f(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
      %r = genesis.fusion %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32> {
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        %0 = genesis.mul %x, %y : tensor<f32>
        genesis.yield %0 : tensor<f32>
      }
      return %r : tensor<f32>
    })"),
            0.0);
}

HostArray scalarOf(DType dtype, double value) {
  HostArray array(dtype, {});
  array.setDouble(0, value);
  return array;
}

TEST(CpuCodegen, OptimizerUpdates) {
  const char *ir = R"(
    func.func @f(%p: tensor<6x5xf32>, %g: tensor<6x5xf32>, %m: tensor<6x5xf32>, %v: tensor<6x5xf32>, %lr: tensor<f32>, %step: tensor<i64>)
        -> (tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>) {
      %0 = genesis.sgd_update %p, %g, %lr {weight_decay = 1.0e-02} : (tensor<6x5xf32>, tensor<6x5xf32>, tensor<f32>) -> tensor<6x5xf32>
      %1:2 = genesis.sgd_momentum_update %p, %g, %m, %lr, %step {momentum = 0.9, dampening = 0.1, weight_decay = 1.0e-03} : (tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>, tensor<f32>, tensor<i64>) -> (tensor<6x5xf32>, tensor<6x5xf32>)
      %2:3 = genesis.adam_update %p, %g, %m, %v, %lr, %step {weight_decay = 1.0e-02} : (tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>, tensor<f32>, tensor<i64>) -> (tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>)
      %3:3 = genesis.adamw_update %p, %g, %m, %v, %lr, %step {beta1 = 0.8, weight_decay = 1.0e-01} : (tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>, tensor<f32>, tensor<i64>) -> (tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>)
      return %0, %1#0, %1#1, %2#0, %2#1, %2#2, %3#0, %3#1, %3#2 : tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>
    })";
  // v must be non-negative (a second moment); steps 1 and 4.
  HostArray v = randomFor(mlir::RankedTensorType::get(
                              {6, 5}, mlir::Float32Type::get(
                                          std::make_unique<mlir::MLIRContext>().get())),
                          77);
  for (int64_t i = 0; i < v.numel(); ++i)
    v.setDouble(i, std::fabs(v.getDouble(i)));
  for (int64_t step : {1, 4})
    EXPECT_LT(maxError(ir, 5,
                       {{3, v},
                        {4, scalarOf(DType::F32, 0.05)},
                        {5, scalarOf(DType::I64, static_cast<double>(step))}}),
              1e-6)
        << "step " << step;
}

TEST(CpuCodegen, SoftmaxAlongEveryDimension) {
  for (int dim : {0, 1, 2})
    EXPECT_LT(maxError(R"(
      func.func @f(%x: tensor<3x4x5xf32>) -> (tensor<3x4x5xf32>, tensor<3x4x5xf32>) {
        %0 = genesis.softmax %x dim )" + std::to_string(dim) + R"( : tensor<3x4x5xf32>
        %1 = genesis.log_softmax %x dim )" + std::to_string(dim) + R"( : tensor<3x4x5xf32>
        return %0, %1 : tensor<3x4x5xf32>, tensor<3x4x5xf32>
      })"),
              1e-6)
        << "dim " << dim;
}

TEST(CpuCodegen, CrossEntropyAndItsGradient) {
  HostArray labels(DType::I64, {6});
  std::vector<int64_t> values = {3, -100, 0, 9, 5, -100};
  for (int64_t i = 0; i < 6; ++i)
    labels.setInt(i, values[i]);
  for (std::string reduction : {"0", "1", "2"})
    EXPECT_LT(maxError(R"(
      func.func @f(%x: tensor<6x10xf32>, %l: tensor<6xi64>, %g: tensor<6xf32>, %s: tensor<f32>) -> ()" +
                           std::string(reduction == "0" ? "tensor<6xf32>" : "tensor<f32>") +
                           R"(, tensor<6x10xf32>) {
        %0 = genesis.cross_entropy %x, %l {reduction = )" + reduction +
                           R"( : i32, label_smoothing = 0.1} : (tensor<6x10xf32>, tensor<6xi64>) -> )" +
                           std::string(reduction == "0" ? "tensor<6xf32>" : "tensor<f32>") + R"(
        %1 = genesis.cross_entropy_grad %x, %l, )" + std::string(reduction == "0" ? "%g" : "%s") +
                           R"( {reduction = )" + reduction +
                           R"( : i32, label_smoothing = 0.1} : (tensor<6x10xf32>, tensor<6xi64>, )" +
                           std::string(reduction == "0" ? "tensor<6xf32>" : "tensor<f32>") + R"() -> tensor<6x10xf32>
        return %0, %1 : )" + std::string(reduction == "0" ? "tensor<6xf32>" : "tensor<f32>") +
                           R"(, tensor<6x10xf32>
      })",
                       9, {{1, labels}}),
              1e-6)
        << "reduction " << reduction;
}

TEST(CpuCodegen, UnsupportedOpIsAClearError) {
  mlir::MLIRContext context;
  context.loadDialect<GenesisDialect, mlir::func::FuncDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(R"(
    func.func @f(%a: tensor<4xbf16>) -> tensor<4xbf16> {
      %r = genesis.fusion %a : (tensor<4xbf16>) -> tensor<4xbf16> {
      ^bb0(%x: tensor<4xbf16>):
        %0 = genesis.exp %x : tensor<4xbf16>
        genesis.yield %0 : tensor<4xbf16>
      }
      return %r : tensor<4xbf16>
    })",
                                                        &context);
  std::string message;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    message = d.str();
    return mlir::success();
  });
  mlir::PassManager pm(&context);
  pm.addPass(genesis::createGenesisLowerCpu());
  EXPECT_TRUE(mlir::failed(pm.run(*module)));
  EXPECT_NE(message.find("'genesis.exp' on 'tensor<4xbf16>' is not supported"),
            std::string::npos)
      << message;
}

} // namespace
