//===- CudnnAttention.cpp - Fused attention steps through cuDNN -----------===//
//
// cudnn-frontend is built with NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING: every
// cuDNN call goes through `cudnn_frontend::cudnn_dlhandle`, which this file
// sets after dlopen'ing libcudnn.so.9 (cudnn-frontend itself dlopens
// libcudart for the device's properties).
//
// Layouts: q, out and their gradients are row-major [B, Hq, S, D]; k, v and
// theirs [B, Hkv, T, D]; logsumexp is f32 [B, Hq, S] (cuDNN's Stats,
// [B, Hq, S, 1]), the natural logarithm of each score row's sum of
// exponentials, which the backward reads instead of recomputing it. A
// packed step gives cuDNN strided views instead: q, k, v (and their
// gradients) of token-major rows (Hq + 2 Hkv) D wide, out and out_grad of
// rows Hq D wide.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudnnAttention.h"
#include "runtime/cuda/CudaApi.h"
#include "runtime/support/Error.h"

#include <dlfcn.h>

#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#ifdef GENESIS_HAVE_CUDNN_FRONTEND
#include <cudnn_frontend.h>

namespace cudnn_frontend {
// The library handle cudnn-frontend's dynamic loading calls through.
void *cudnn_dlhandle = nullptr;
} // namespace cudnn_frontend
#endif

namespace genesis::cuda {

#ifdef GENESIS_HAVE_CUDNN_FRONTEND

namespace fe = cudnn_frontend;

namespace {

/// cuDNN 9.x: the fused attention forward and backward with GQA and
/// bottom-right causal masks.
constexpr int64_t kMinimumCudnnVersion = 90300;

struct Loaded {
  std::string unavailable;
};

const Loaded &loadCudnn() {
  static const Loaded loaded = [] {
    Loaded result;
    void *library = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char *error = dlerror();
      result.unavailable =
          "cuDNN 9 cannot be loaded (" +
          std::string(error ? error : "libcudnn.so.9 not found") +
          "); put the folder holding libcudnn.so.9 on LD_LIBRARY_PATH (with "
          "PyTorch: python3 -c \"import nvidia.cudnn, os; "
          "print(os.path.dirname(nvidia.cudnn.__file__))\" gives the folder "
          "above its lib/)";
      return result;
    }
    fe::cudnn_dlhandle = library;
    int64_t version = fe::detail::get_backend_version();
    if (version < kMinimumCudnnVersion)
      result.unavailable = "cuDNN " + std::to_string(version) +
                           " is too old; fused attention needs " +
                           std::to_string(kMinimumCudnnVersion) + " or later";
    return result;
  }();
  return loaded;
}

fe::DataType_t ioType(DType dtype) {
  return dtype == DType::F16 ? fe::DataType_t::HALF : fe::DataType_t::BFLOAT16;
}

/// What distinguishes one execution plan from another.
using PlanKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                           bool, double, DType, bool, bool>;

PlanKey keyOf(const AttentionDesc &s, DType dtype) {
  return {s.batch,    s.queryHeads, s.kvHeads, s.queryLength,
          s.kvLength, s.headDim,    s.causal,  s.scale,
          dtype,      s.backward(), s.packed};
}

/// Strides of a [B, heads, length, D] operand: head-major, or (packed)
/// token-major rows `rowWidth` elements wide.
std::vector<int64_t> stridesOf(const AttentionDesc &s, int64_t heads,
                               int64_t length, int64_t rowWidth) {
  if (s.packed)
    return {length * rowWidth, s.headDim, rowWidth, 1};
  return {heads * length * s.headDim, length * s.headDim, s.headDim, 1};
}

std::string describe(const AttentionDesc &s, DType dtype) {
  return std::string(s.backward() ? "attention backward"
                                  : "attention forward") +
         " (B=" + std::to_string(s.batch) +
         ", Hq=" + std::to_string(s.queryHeads) +
         ", Hkv=" + std::to_string(s.kvHeads) +
         ", S=" + std::to_string(s.queryLength) +
         ", T=" + std::to_string(s.kvLength) +
         ", D=" + std::to_string(s.headDim) + (s.causal ? ", causal" : "") +
         (s.packed ? ", packed" : "") + ", " + dtypeName(dtype) + ")";
}

} // namespace

struct CudnnAttention::Impl {
  cudnnHandle_t handle = nullptr;
  std::vector<std::shared_ptr<fe::graph::Graph>> graphs;
  std::vector<int64_t> workspaces;
  std::map<PlanKey, size_t> indexOf;
};

std::string CudnnAttention::unavailableReason() {
  return loadCudnn().unavailable;
}

CudnnAttention::CudnnAttention(CUstream stream, const std::string &where)
    : impl_(std::make_unique<Impl>()) {
  const Loaded &loaded = loadCudnn();
  if (!loaded.unavailable.empty())
    throw Error(where +
                ": cannot run a fused attention step: " + loaded.unavailable);
  if (fe::detail::create_handle(&impl_->handle) != CUDNN_STATUS_SUCCESS)
    throw Error(where + ": cudnnCreate failed");
  if (fe::detail::set_stream(impl_->handle, stream) != CUDNN_STATUS_SUCCESS) {
    fe::detail::destroy_handle(impl_->handle);
    throw Error(where + ": cudnnSetStream failed");
  }
}

CudnnAttention::~CudnnAttention() {
  impl_->graphs.clear();
  fe::detail::destroy_handle(impl_->handle);
}

size_t CudnnAttention::prepare(const AttentionDesc &s, DType dtype,
                               const std::string &where) {
  PlanKey key = keyOf(s, dtype);
  if (auto found = impl_->indexOf.find(key); found != impl_->indexOf.end())
    return found->second;
  auto graph = std::make_shared<fe::graph::Graph>();
  graph->set_io_data_type(ioType(dtype))
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  // Row widths of the packed layout: q, k, v and their gradients; out and
  // out_grad.
  int64_t packedWidth = (s.queryHeads + 2 * s.kvHeads) * s.headDim,
          outWidth = s.queryHeads * s.headDim;
  auto tensor = [&](AttentionOperand uid, const char *name, int64_t heads,
                    int64_t length, int64_t rowWidth) {
    return graph->tensor(
        fe::graph::Tensor_attributes()
            .set_name(name)
            .set_uid(uid)
            .set_dim({s.batch, heads, length, s.headDim})
            .set_stride(stridesOf(s, heads, length, rowWidth)));
  };
  auto q = tensor(kQuery, "q", s.queryHeads, s.queryLength, packedWidth);
  auto k = tensor(kKey, "k", s.kvHeads, s.kvLength, packedWidth);
  auto v = tensor(kValue, "v", s.kvHeads, s.kvLength, packedWidth);
  // Our causal mask aligns the last query with the last key; for S = T
  // that is also the top-left alignment.
  bool bottomRight = s.causal && s.queryLength != s.kvLength;
  auto outputLike = [&](const std::shared_ptr<fe::graph::Tensor_attributes> &t,
                        AttentionOperand uid, int64_t heads, int64_t length,
                        int64_t rowWidth) {
    t->set_output(true)
        .set_uid(uid)
        .set_dim({s.batch, heads, length, s.headDim})
        .set_stride(stridesOf(s, heads, length, rowWidth));
  };
  if (!s.backward()) {
    auto options = fe::graph::SDPA_attributes()
                       .set_name("attention")
                       .set_generate_stats(true)
                       .set_attn_scale(static_cast<float>(s.scale));
    if (bottomRight)
      options.set_causal_mask_bottom_right(true);
    else
      options.set_causal_mask(s.causal);
    auto [out, stats] = graph->sdpa(q, k, v, options);
    outputLike(out, kOut, s.queryHeads, s.queryLength, outWidth);
    stats->set_output(true)
        .set_uid(kLogSumExp)
        .set_data_type(fe::DataType_t::FLOAT)
        .set_dim({s.batch, s.queryHeads, s.queryLength, 1})
        .set_stride({s.queryHeads * s.queryLength, s.queryLength, 1, 1});
  } else {
    auto out = tensor(kOut, "out", s.queryHeads, s.queryLength, outWidth);
    auto outGrad =
        tensor(kOutGrad, "out_grad", s.queryHeads, s.queryLength, outWidth);
    auto stats = graph->tensor(
        fe::graph::Tensor_attributes()
            .set_name("logsumexp")
            .set_uid(kLogSumExp)
            .set_data_type(fe::DataType_t::FLOAT)
            .set_dim({s.batch, s.queryHeads, s.queryLength, 1})
            .set_stride({s.queryHeads * s.queryLength, s.queryLength, 1, 1}));
    auto options = fe::graph::SDPA_backward_attributes()
                       .set_name("attention_backward")
                       .set_attn_scale(static_cast<float>(s.scale))
                       .set_deterministic_algorithm(deterministicMode());
    if (bottomRight)
      options.set_causal_mask_bottom_right(true);
    else
      options.set_causal_mask(s.causal);
    auto [dq, dk, dv] =
        graph->sdpa_backward(q, k, v, out, outGrad, stats, options);
    outputLike(dq, kQueryGrad, s.queryHeads, s.queryLength, packedWidth);
    outputLike(dk, kKeyGrad, s.kvHeads, s.kvLength, packedWidth);
    outputLike(dv, kValueGrad, s.kvHeads, s.kvLength, packedWidth);
  }
  auto fail = [&](const char *stage, fe::error_t status) {
    throw Error(where + ": cuDNN cannot run this " + describe(s, dtype) + ": " +
                stage + ": " + status.get_message());
  };
  if (auto status = graph->validate(); !status.is_good())
    fail("validate", status);
  if (auto status = graph->build_operation_graph(impl_->handle);
      !status.is_good())
    fail("build_operation_graph", status);
  if (auto status = graph->create_execution_plans({fe::HeurMode_t::A});
      !status.is_good())
    fail("create_execution_plans", status);
  if (auto status = graph->check_support(impl_->handle); !status.is_good())
    fail("check_support", status);
  if (auto status = graph->build_plans(impl_->handle); !status.is_good())
    fail("build_plans", status);
  int64_t workspace = 0;
  if (auto status = graph->get_workspace_size(workspace); !status.is_good())
    fail("get_workspace_size", status);
  impl_->graphs.push_back(std::move(graph));
  impl_->workspaces.push_back(workspace);
  return impl_->indexOf[key] = impl_->graphs.size() - 1;
}

uint64_t CudnnAttention::workspaceBytes(size_t index) const {
  return static_cast<uint64_t>(impl_->workspaces.at(index));
}

void CudnnAttention::run(size_t index, const AttentionPointers &pointers,
                         CUdeviceptr workspace, const std::string &where) {
  std::unordered_map<int64_t, void *> pack;
  for (int i = 0; i < kAttentionOperandCount; ++i)
    if (pointers[i])
      // NOLINTNEXTLINE(performance-no-int-to-ptr): a device address.
      pack.emplace(i, reinterpret_cast<void *>(pointers[i]));
  // NOLINTNEXTLINE(performance-no-int-to-ptr): a device address.
  fe::error_t status = impl_->graphs.at(index)->execute(
      impl_->handle, pack, reinterpret_cast<void *>(workspace));
  if (!status.is_good())
    throw Error(where + ": cuDNN attention failed: " + status.get_message());
}

#else // !GENESIS_HAVE_CUDNN_FRONTEND

namespace {
constexpr const char *kBuiltWithout =
    "this runtime was built without cudnn-frontend (scripts/install-deps.sh "
    "installs it; then reconfigure the build)";
} // namespace

struct CudnnAttention::Impl {};

std::string CudnnAttention::unavailableReason() { return kBuiltWithout; }

CudnnAttention::CudnnAttention(CUstream, const std::string &where) {
  throw Error(where + ": cannot run a fused attention step: " + kBuiltWithout);
}

CudnnAttention::~CudnnAttention() = default;

size_t CudnnAttention::prepare(const AttentionDesc &, DType,
                               const std::string &) {
  return 0;
}

uint64_t CudnnAttention::workspaceBytes(size_t) const { return 0; }

void CudnnAttention::run(size_t, const AttentionPointers &, CUdeviceptr,
                         const std::string &) {}

#endif // GENESIS_HAVE_CUDNN_FRONTEND

} // namespace genesis::cuda
