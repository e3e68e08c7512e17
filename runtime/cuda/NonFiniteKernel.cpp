//===- NonFiniteKernel.cpp - Finding NaNs and infinities on the GPU -------===//

#include "runtime/cuda/NonFiniteKernel.h"

#include "runtime/support/Error.h"

#include <algorithm>
#include <limits>

namespace genesis::cuda {

namespace {

constexpr uint32_t kThreads = 256;
/// Enough blocks to fill an H100 several times over; the threads stride.
constexpr uint64_t kMaxBlocks = 4096;

/// genesis_first_nonfinite_b<bits>(data, count, mask, limit, first): for
/// every i < count with (data[i] & mask) >= limit, first = min(first, i).
std::string kernelSource(int bits) {
  std::string b = std::to_string(bits);
  std::string shift = bits == 16 ? "1" : bits == 32 ? "2" : "3";
  std::string load = bits == 16   ? "  ld.global.u16 %h1, [%rd9];\n"
                                    "  cvt.u64.u16 %rd10, %h1;\n"
                     : bits == 32 ? "  ld.global.u32 %r5, [%rd9];\n"
                                    "  cvt.u64.u32 %rd10, %r5;\n"
                                  : "  ld.global.u64 %rd10, [%rd9];\n";
  return ".visible .entry genesis_first_nonfinite_b" + b +
         "(\n"
         "  .param .u64 p_data, .param .u64 p_count, .param .u64 p_mask,\n"
         "  .param .u64 p_limit, .param .u64 p_first)\n"
         "{\n"
         "  .reg .pred %p<3>;\n"
         "  .reg .b16 %h<2>;\n"
         "  .reg .b32 %r<6>;\n"
         "  .reg .b64 %rd<11>;\n"
         "  ld.param.u64 %rd1, [p_data];\n"
         "  ld.param.u64 %rd2, [p_count];\n"
         "  ld.param.u64 %rd3, [p_mask];\n"
         "  ld.param.u64 %rd4, [p_limit];\n"
         "  ld.param.u64 %rd5, [p_first];\n"
         "  cvta.to.global.u64 %rd1, %rd1;\n"
         "  cvta.to.global.u64 %rd5, %rd5;\n"
         "  mov.u32 %r1, %ctaid.x;\n"
         "  mov.u32 %r2, %ntid.x;\n"
         "  mov.u32 %r3, %tid.x;\n"
         "  mov.u32 %r4, %nctaid.x;\n"
         "  mul.wide.u32 %rd6, %r1, %r2;\n"
         "  cvt.u64.u32 %rd7, %r3;\n"
         "  add.u64 %rd6, %rd6, %rd7;\n"
         "  mul.wide.u32 %rd8, %r4, %r2;\n"
         "LOOP:\n"
         "  setp.ge.u64 %p1, %rd6, %rd2;\n"
         "  @%p1 bra DONE;\n"
         "  shl.b64 %rd9, %rd6, " +
         shift +
         ";\n"
         "  add.u64 %rd9, %rd9, %rd1;\n" +
         load +
         "  and.b64 %rd10, %rd10, %rd3;\n"
         "  setp.ge.u64 %p2, %rd10, %rd4;\n"
         "  @%p2 red.global.min.u64 [%rd5], %rd6;\n"
         "  add.u64 %rd6, %rd6, %rd8;\n"
         "  bra LOOP;\n"
         "DONE:\n"
         "  ret;\n"
         "}\n";
}

} // namespace

NonFiniteFinder::NonFiniteFinder(const Api &api, const std::string &where)
    : api_(api) {
  std::string ptx = ".version 7.0\n.target sm_80\n.address_size 64\n";
  for (int bits : {16, 32, 64})
    ptx += kernelSource(bits);
  std::string what = where + ": loading the numerics-check kernels";
  check(api_.cuModuleLoadDataEx(&module_, ptx.c_str(), 0, nullptr, nullptr),
        "cuModuleLoadDataEx", what);
  const char *names[3] = {"genesis_first_nonfinite_b16",
                          "genesis_first_nonfinite_b32",
                          "genesis_first_nonfinite_b64"};
  for (int i = 0; i < 3; ++i) {
    CUresult result = api_.cuModuleGetFunction(&kernels_[i], module_, names[i]);
    if (result != CUDA_SUCCESS) {
      api_.cuModuleUnload(module_);
      check(result, "cuModuleGetFunction", what);
    }
  }
}

NonFiniteFinder::~NonFiniteFinder() {
  if (answers_)
    api_.cuMemFree_v2(answers_);
  if (module_)
    api_.cuModuleUnload(module_);
}

std::vector<std::optional<uint64_t>>
NonFiniteFinder::find(const std::vector<Region> &regions, NumericsCheck check,
                      CUstream stream, const std::string &where) {
  std::vector<std::optional<uint64_t>> firsts(regions.size());
  if (regions.empty())
    return firsts;
  std::string what =
      where + ": checking " + std::to_string(regions.size()) + " tensors for " +
      (check == NumericsCheck::NaN ? "NaNs" : "non-finite values");
  if (answerCapacity_ < regions.size()) {
    if (answers_)
      api_.cuMemFree_v2(answers_);
    answers_ = 0;
    answerCapacity_ = 0;
    cuda::check(api_.cuMemAlloc_v2(&answers_, 8 * regions.size()), "cuMemAlloc",
                what);
    answerCapacity_ = regions.size();
  }
  // All ones: no element found.
  cuda::check(
      api_.cuMemsetD32Async(answers_, 0xffffffffu, 2 * regions.size(), stream),
      "cuMemsetD32Async", what);
  for (size_t i = 0; i < regions.size(); ++i) {
    const Region &region = regions[i];
    std::optional<NonFiniteBits> bits = nonFiniteBits(region.dtype, check);
    if (!bits || region.count == 0)
      continue;
    size_t bytes = dtypeSize(region.dtype);
    CUfunction kernel = kernels_[bytes == 2 ? 0 : bytes == 4 ? 1 : 2];
    CUdeviceptr data = region.address, first = answers_ + 8 * i;
    uint64_t count = region.count, mask = bits->magnitudeMask,
             limit = bits->limit;
    void *params[] = {&data, &count, &mask, &limit, &first};
    CUlaunchConfig config{};
    config.gridDimX = static_cast<unsigned>(
        std::min<uint64_t>(kMaxBlocks, (count + kThreads - 1) / kThreads));
    config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = kThreads;
    config.blockDimY = config.blockDimZ = 1;
    config.hStream = stream;
    cuda::check(api_.cuLaunchKernelEx(&config, kernel, params, nullptr),
                "cuLaunchKernelEx", what);
  }
  std::vector<uint64_t> answers(regions.size());
  cuda::check(api_.cuMemcpyDtoHAsync_v2(answers.data(), answers_,
                                        8 * regions.size(), stream),
              "cuMemcpyDtoHAsync", what);
  cuda::check(api_.cuStreamSynchronize(stream), "cuStreamSynchronize", what);
  for (size_t i = 0; i < regions.size(); ++i)
    if (answers[i] != std::numeric_limits<uint64_t>::max())
      firsts[i] = answers[i];
  return firsts;
}

} // namespace genesis::cuda
