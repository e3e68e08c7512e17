//===- CublasLtGemm.cpp - A plan's GEMM steps through cuBLASLt ------------===//

#include "runtime/cuda/CublasLtGemm.h"
#include "runtime/support/Error.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace genesis::cuda {

namespace {

using MatmulPreference = Owned<cublasLtMatmulPreference_t, cublasStatus_t>;
using Event = Owned<CUevent, CUresult>;

/// The alignment cuBLASLt's heuristics assume unless told less; cuMemAlloc
/// gives at least this.
constexpr uint64_t kBestOperandAlignment = 256;
/// Algorithms asked of the heuristic: its first choice and the runners-up
/// worth timing (the gap past the first few is rarely closed).
constexpr int kCandidates = 8;
/// Back-to-back runs timed as one interval per candidate and round.
constexpr int kTimedRuns = 4;

void *devicePointer(CUdeviceptr address) {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(address));
}

/// The largest power of two, up to kBestOperandAlignment, dividing `address`
/// and, for batches, the byte stride between them.
uint32_t operandAlignment(CUdeviceptr address, int64_t batchCount,
                          int64_t strideElements, uint64_t elementBytes) {
  uint64_t bits = address | kBestOperandAlignment;
  if (batchCount > 1 && strideElements != 0)
    bits |= uint64_t(strideElements) * elementBytes;
  return static_cast<uint32_t>(bits & (~bits + 1));
}

cublasStatus_t runMatmul(const Api &api, cublasLtHandle_t handle,
                         const GemmStep &step, size_t candidate,
                         CUdeviceptr workspace, CUstream stream) {
  const cublasLtMatmulHeuristicResult_t &algorithm = step.candidates[candidate];
  return api.cublasLtMatmul(
      handle, step.desc.get(), step.alpha.data(), devicePointer(step.a),
      step.layoutA.get(), devicePointer(step.b), step.layoutB.get(),
      step.beta.data(), devicePointer(step.c), step.layoutC.get(),
      devicePointer(step.c), step.layoutC.get(), &algorithm.algo,
      devicePointer(workspace), algorithm.workspaceSize, stream);
}

} // namespace

GemmStep prepareGemm(const Api &api, cublasLtHandle_t handle,
                     const plan::Gemm &gemm, DType dtype,
                     const GemmAddresses &addresses, uint64_t workspaceBytes,
                     const std::string &what) {
  cudaDataType_t type = CUDA_R_32F, scaleType = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  switch (dtype) {
  case DType::F32:
    if (gemm.allow_tf32())
      compute = CUBLAS_COMPUTE_32F_FAST_TF32;
    break;
  case DType::F64:
    type = scaleType = CUDA_R_64F;
    compute = CUBLAS_COMPUTE_64F;
    break;
  case DType::F16:
    type = CUDA_R_16F;
    break;
  default: // bf16: the plan loader admits no other dtype
    type = CUDA_R_16BF;
    break;
  }

  GemmStep step;
  cublasLtMatmulDesc_t desc = nullptr;
  check(api.cublasLtMatmulDescCreate(&desc, compute, scaleType),
        "cublasLtMatmulDescCreate", what);
  step.desc = MatmulDesc(desc, api.cublasLtMatmulDescDestroy);
  auto setDesc = [&](cublasLtMatmulDescAttributes_t attribute,
                     const auto &value) {
    check(api.cublasLtMatmulDescSetAttribute(desc, attribute, &value,
                                             sizeof(value)),
          "cublasLtMatmulDescSetAttribute", what);
  };
  setDesc(CUBLASLT_MATMUL_DESC_TRANSA,
          int32_t(gemm.transpose_b() ? CUBLAS_OP_T : CUBLAS_OP_N));
  setDesc(CUBLASLT_MATMUL_DESC_TRANSB,
          int32_t(gemm.transpose_a() ? CUBLAS_OP_T : CUBLAS_OP_N));
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  switch (gemm.epilogue()) {
  case plan::Epilogue::None:
    break;
  case plan::Epilogue::Bias:
    epilogue = CUBLASLT_EPILOGUE_BIAS;
    break;
  case plan::Epilogue::Relu:
    epilogue = CUBLASLT_EPILOGUE_RELU;
    break;
  case plan::Epilogue::BiasRelu:
    epilogue = CUBLASLT_EPILOGUE_RELU_BIAS;
    break;
  case plan::Epilogue::Gelu:
    epilogue = CUBLASLT_EPILOGUE_GELU;
    break;
  case plan::Epilogue::BiasGelu:
    epilogue = CUBLASLT_EPILOGUE_GELU_BIAS;
    break;
  case plan::Epilogue::DGelu:
    epilogue = CUBLASLT_EPILOGUE_DGELU;
    break;
  }
  setDesc(CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(epilogue));
  // Every batch adds the same bias: CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE
  // keeps its default, 0; the bias dtype defaults to D's.
  if (gemm.bias())
    setDesc(CUBLASLT_MATMUL_DESC_BIAS_POINTER,
            static_cast<const void *>(devicePointer(addresses.bias)));
  // aux is m x n row-major: the column-major n x m of C (see GemmStep),
  // leading dimension n.
  if (gemm.aux()) {
    setDesc(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER,
            static_cast<const void *>(devicePointer(addresses.aux)));
    setDesc(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, int64_t(gemm.n()));
  }

  int64_t m = gemm.m(), n = gemm.n(), k = gemm.k();
  int64_t batchCount = gemm.batch_count();
  auto layout = [&](uint64_t rows, uint64_t cols, int64_t leading,
                    int64_t stride) {
    cublasLtMatrixLayout_t layoutHandle = nullptr;
    check(api.cublasLtMatrixLayoutCreate(&layoutHandle, type, rows, cols,
                                         leading),
          "cublasLtMatrixLayoutCreate", what);
    MatrixLayout owned(layoutHandle, api.cublasLtMatrixLayoutDestroy);
    if (batchCount > 1) {
      int32_t count = static_cast<int32_t>(batchCount);
      check(api.cublasLtMatrixLayoutSetAttribute(
                layoutHandle, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                sizeof(count)),
            "cublasLtMatrixLayoutSetAttribute", what);
      check(api.cublasLtMatrixLayoutSetAttribute(
                layoutHandle, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                &stride, sizeof(stride)),
            "cublasLtMatrixLayoutSetAttribute", what);
    }
    return owned;
  };
  // Column-major views of the row-major operands (see GemmStep).
  step.layoutA = gemm.transpose_b() ? layout(k, n, k, gemm.stride_b())
                                    : layout(n, k, n, gemm.stride_b());
  step.layoutB = gemm.transpose_a() ? layout(m, k, m, gemm.stride_a())
                                    : layout(k, m, k, gemm.stride_a());
  step.layoutC = layout(n, m, n, gemm.stride_c());
  step.a = addresses.b;
  step.b = addresses.a;
  step.c = addresses.c;

  cublasLtMatmulPreference_t preference = nullptr;
  check(api.cublasLtMatmulPreferenceCreate(&preference),
        "cublasLtMatmulPreferenceCreate", what);
  MatmulPreference ownedPreference(preference,
                                   api.cublasLtMatmulPreferenceDestroy);
  auto setPreference = [&](cublasLtMatmulPreferenceAttributes_t attribute,
                           const auto &value) {
    check(api.cublasLtMatmulPreferenceSetAttribute(preference, attribute,
                                                   &value, sizeof(value)),
          "cublasLtMatmulPreferenceSetAttribute", what);
  };
  setPreference(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, workspaceBytes);
  // Batches at odd strides are less aligned than the allocations; an
  // algorithm assuming more would fault.
  uint64_t elementBytes = dtypeSize(dtype);
  uint32_t alignmentA =
      operandAlignment(step.a, batchCount, gemm.stride_b(), elementBytes);
  uint32_t alignmentB =
      operandAlignment(step.b, batchCount, gemm.stride_a(), elementBytes);
  uint32_t alignmentC =
      operandAlignment(step.c, batchCount, gemm.stride_c(), elementBytes);
  setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignmentA);
  setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignmentB);
  setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignmentC);
  setPreference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignmentC);

  step.candidates.resize(kCandidates);
  int found = 0;
  check(api.cublasLtMatmulAlgoGetHeuristic(
            handle, desc, step.layoutA.get(), step.layoutB.get(),
            step.layoutC.get(), step.layoutC.get(), preference, kCandidates,
            step.candidates.data(), &found),
        "cublasLtMatmulAlgoGetHeuristic", what);
  step.candidates.resize(std::max(found, 0));
  step.candidates.erase(
      std::remove_if(step.candidates.begin(), step.candidates.end(),
                     [](const cublasLtMatmulHeuristicResult_t &result) {
                       return result.state != CUBLAS_STATUS_SUCCESS;
                     }),
      step.candidates.end());
  if (step.candidates.empty())
    throw Error(what + ": cuBLASLt has no algorithm for this " +
                dtypeName(dtype) + " gemm (epilogue " +
                epilogueName(gemm.epilogue()) +
                (gemm.allow_tf32() ? ", tf32" : "") + ")");

  if (scaleType == CUDA_R_64F) {
    double alpha = gemm.alpha(), beta = gemm.beta();
    std::memcpy(step.alpha.data(), &alpha, sizeof(alpha));
    std::memcpy(step.beta.data(), &beta, sizeof(beta));
  } else {
    float alpha = static_cast<float>(gemm.alpha());
    float beta = static_cast<float>(gemm.beta());
    std::memcpy(step.alpha.data(), &alpha, sizeof(alpha));
    std::memcpy(step.beta.data(), &beta, sizeof(beta));
  }
  step.tunable = gemm.beta() == 0;
  step.key = std::string(dtypeName(dtype)) + (gemm.allow_tf32() ? " tf32" : "");
  for (int64_t field :
       {m, n, k, batchCount, int64_t(gemm.transpose_a()),
        int64_t(gemm.transpose_b()), gemm.stride_a(), gemm.stride_b(),
        gemm.stride_c(), int64_t(gemm.epilogue()), int64_t(alignmentA),
        int64_t(alignmentB), int64_t(alignmentC)})
    step.key += " " + std::to_string(field);
  return step;
}

void enqueueGemm(const Api &api, cublasLtHandle_t handle, const GemmStep &step,
                 CUdeviceptr workspace, CUstream stream,
                 const std::string &where) {
  check(runMatmul(api, handle, step, step.chosen, workspace, stream),
        "cublasLtMatmul", where);
}

void GemmTuner::tune(const Api &api, cublasLtHandle_t handle, GemmStep &step,
                     CUdeviceptr workspace, CUstream stream,
                     const std::string &where) {
  if (!step.tunable || step.candidates.size() < 2)
    return;
  auto known = choices_.find(step.key);
  if (known != choices_.end() && known->second < step.candidates.size()) {
    step.chosen = known->second;
    return;
  }
  std::string what = where + ": timing cuBLASLt's algorithms";
  auto makeEvent = [&] {
    CUevent created = nullptr;
    check(api.cuEventCreate(&created, CU_EVENT_DEFAULT), "cuEventCreate", what);
    return Event(created, api.cuEventDestroy_v2);
  };
  Event start = makeEvent(), end = makeEvent();
  std::vector<float> best(step.candidates.size(),
                          std::numeric_limits<float>::infinity());
  for (int round = 0; round < 2; ++round)
    for (size_t i = 0; i < step.candidates.size(); ++i) {
      // An algorithm the heuristic offered but that refuses these operands
      // is left out, not an error: the others can run.
      if (round == 0 && runMatmul(api, handle, step, i, workspace, stream) !=
                            CUBLAS_STATUS_SUCCESS)
        continue;
      if (best[i] == std::numeric_limits<float>::infinity() && round == 1)
        continue;
      check(api.cuEventRecord(start.get(), stream), "cuEventRecord", what);
      for (int run = 0; run < kTimedRuns; ++run)
        check(runMatmul(api, handle, step, i, workspace, stream),
              "cublasLtMatmul", what);
      check(api.cuEventRecord(end.get(), stream), "cuEventRecord", what);
      check(api.cuStreamSynchronize(stream), "cuStreamSynchronize", what);
      float milliseconds = 0;
      check(api.cuEventElapsedTime_v2(&milliseconds, start.get(), end.get()),
            "cuEventElapsedTime", what);
      best[i] = std::min(best[i], milliseconds);
    }
  step.chosen = static_cast<size_t>(std::min_element(best.begin(), best.end()) -
                                    best.begin());
  choices_[step.key] = step.chosen;
  // The last run wrote C with another candidate; the caller's run writes it
  // with the chosen one.
}

} // namespace genesis::cuda
