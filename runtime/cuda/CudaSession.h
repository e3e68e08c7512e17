//===- CudaSession.h - The CUDA backend's session (private) -----*- C++ -*-===//
//
// The CudaBackend implementation, shared by the files that define its
// methods: CudaBackend.cpp (building, running, graphs) and
// CudaSessionChecks.cpp (numerics checks). Only those include it.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_CUDASESSION_H
#define GENESIS_RUNTIME_CUDASESSION_H

#include "runtime/cuda/CublasLtGemm.h"
#include "runtime/cuda/CudaApi.h"
#include "runtime/cuda/CudaBackend.h"
#include "runtime/cuda/CudnnAttention.h"
#include "runtime/cuda/NonFiniteKernel.h"

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace genesis::cuda_session {

using cuda::Api;
using cuda::check;
using cuda::GemmStep;
using cuda::Owned;

/// cuBLASLt's workspace when the plan reserves none in its arena: what its
/// fastest Hopper kernels use. Copies between overlapping regions are staged
/// through it too.
constexpr uint64_t kWorkspaceBytes = 32ull << 20;
/// Dynamic shared memory a kernel may use without opting in to more.
constexpr uint32_t kDefaultSharedMemoryBytes = 48u << 10;

using Module = Owned<CUmodule, CUresult>;
using Stream = Owned<CUstream, CUresult>;
using Event = Owned<CUevent, CUresult>;
using Graph = Owned<CUgraph, CUresult>;
using GraphExec = Owned<CUgraphExec, CUresult>;
using BlasLtHandle = Owned<cublasLtHandle_t, cublasStatus_t>;

/// One cuMemAlloc'ed block.
class DeviceMemory {
public:
  DeviceMemory(const Api &api, CUdeviceptr address)
      : api_(&api), address_(address) {}
  DeviceMemory(DeviceMemory &&other) noexcept
      : api_(other.api_), address_(std::exchange(other.address_, 0)) {}
  DeviceMemory &operator=(DeviceMemory &&) = delete;
  ~DeviceMemory() {
    if (address_)
      api_->cuMemFree_v2(address_);
  }

private:
  const Api *api_;
  CUdeviceptr address_;
};

/// The primary context of device 0, the one the CUDA runtime API (and so
/// cuBLASLt and other libraries in the process) uses too.
class PrimaryContext {
public:
  PrimaryContext(const Api &api, const std::string &where) : api_(api) {
    check(api.cuDeviceGet(&device_, 0), "cuDeviceGet",
          where + ": opening device 0");
    check(api.cuDevicePrimaryCtxRetain(&context_, device_),
          "cuDevicePrimaryCtxRetain",
          where + ": retaining the primary context of device 0");
  }
  PrimaryContext(const PrimaryContext &) = delete;
  PrimaryContext &operator=(const PrimaryContext &) = delete;
  ~PrimaryContext() { api_.cuDevicePrimaryCtxRelease_v2(device_); }

  CUdevice device() const { return device_; }
  CUcontext context() const { return context_; }

private:
  const Api &api_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
};

/// Makes a context current on the calling thread for a scope, restoring the
/// caller's afterwards. Should the push fail, the calls that follow fail
/// with a message naming them, so it reports nothing itself.
class CurrentContext {
public:
  CurrentContext(const Api &api, CUcontext context)
      : api_(api), pushed_(api.cuCtxPushCurrent_v2(context) == CUDA_SUCCESS) {}
  CurrentContext(const CurrentContext &) = delete;
  CurrentContext &operator=(const CurrentContext &) = delete;
  ~CurrentContext() {
    CUcontext popped;
    if (pushed_)
      api_.cuCtxPopCurrent_v2(&popped);
  }

private:
  const Api &api_;
  bool pushed_;
};

struct LaunchStep {
  CUfunction function;
  std::array<uint32_t, 3> grid;
  std::array<uint32_t, 3> block;
  uint32_t sharedMemoryBytes;
  /// Kernel parameter i is the device address args[i] (see Session.h).
  std::vector<CUdeviceptr> args;
};

/// A fused attention step: execution plan `plan` of the session's cuDNN
/// handle, run on `pointers` with `workspace` (the arena's, or a buffer of
/// the session's when it is too small).
struct AttentionStep {
  size_t plan;
  cuda::AttentionPointers pointers;
  uint64_t workspaceBytes;
  CUdeviceptr workspace = 0;
};

struct CopyStep {
  CUdeviceptr src;
  CUdeviceptr dst;
  uint64_t bytes;
  /// Distinct but overlapping regions, copied through the workspace.
  bool overlapping;
};

struct FillStep {
  CUdeviceptr dst;
  uint64_t count;
  /// 1, 2, 4 or 8: the bytes of one element, whose bits `pattern` holds.
  uint32_t elementBytes;
  uint64_t pattern;
};

struct DeviceStep {
  std::variant<LaunchStep, GemmStep, AttentionStep, CopyStep, FillStep> op;
  std::string name;
  std::string location;
  /// "session of plan file 'p': function 'f' step #2 (model.cpp:7)".
  std::string where;
  /// Recorded around the step in profiled runs; created on first use.
  Event start;
  Event end;
  uint64_t calls = 0;
  double seconds = 0;
};

struct DeviceFunction {
  std::string name;
  /// "session of plan file 'p': run 'f'".
  std::string where;
  /// The step and rng_seed tensors it reads.
  std::vector<uint32_t> fedTensors;
  /// Output and input tensors it hands back to the caller.
  std::vector<uint32_t> returned;
  /// Persistent tensors it updates in place.
  std::vector<uint32_t> updatedPersistent;
  std::vector<DeviceStep> steps;
  /// Numerics checks: copies of updatedPersistent (0 for an empty one),
  /// allocated by the first saveUpdated().
  std::vector<CUdeviceptr> savedCopies;
  uint64_t executions = 0;
  /// Captured by the second unprofiled execution.
  GraphExec graph;
};

class CudaSession final : public CudaBackend {
public:
  CudaSession(const PlanFile &planFile, std::string planWhere,
              std::string sessionWhere);
  ~CudaSession() override;

  void upload(uint32_t tensor, const HostArray &value) override;
  void download(uint32_t tensor, HostArray &mirror) override;
  void run(uint32_t index, std::map<uint32_t, HostArray> &io, uint64_t step,
           Generator::State rng) override;
  void replay(uint32_t index, uint64_t step, Generator::State rng) override;
  void synchronize() override;
  void saveUpdated(uint32_t index) override;
  void restoreUpdated(uint32_t index) override;
  std::vector<std::optional<uint64_t>>
  findNonFinite(const std::vector<uint32_t> &tensors,
                NumericsCheck check) override;
  void prepareSteps(uint32_t index, const std::map<uint32_t, HostArray> &io,
                    uint64_t step, Generator::State rng) override;
  void runStep(uint32_t index, size_t step) override;
  void readBytes(uint32_t tensor, uint64_t offset, void *out,
                 uint64_t bytes) override;
  void setProfiling(bool on) override { state_->profiling = on; }
  SessionStats stats() const override;
  void resetStats() override;

private:
  /// Everything that needs the context current to be released: it is built
  /// and destroyed while the context is pushed (see the constructor).
  struct State {
    Stream stream;
    std::vector<DeviceMemory> memory;
    uint64_t arenaBytes = 0;
    uint64_t allocatedBytes = 0;
    /// Per tensor: name, role, device address (0 for an empty tensor) and
    /// whether a run may have changed it since the host last saw it.
    std::vector<std::string> names;
    std::vector<plan::Role> roles;
    std::vector<DType> dtypes;
    std::vector<uint64_t> bytes;
    std::vector<CUdeviceptr> addresses;
    std::vector<bool> deviceNewer;
    /// The plan's image for this device (chooseCudaImage).
    Module module;
    /// Kernels launch with programmatic dependent launch: the image's
    /// kernels wait for the grids before them (Plan.fbs), and
    /// GENESIS_CUDA_PDL=0 does not ask otherwise.
    bool programmaticLaunch = false;
    BlasLtHandle blasLt;
    /// Created by the first attention step.
    std::unique_ptr<cuda::CudnnAttention> cudnn;
    /// Whether the first GEMM step of each shape times its candidate
    /// algorithms (CublasLtGemm.h).
    bool tuning = cuda::tuningEnabled();
    cuda::GemmTuner gemmTuner;
    /// The plan's arena workspace, or 0 until a GEMM or an overlapping copy
    /// needs one of kWorkspaceBytes.
    CUdeviceptr workspace = 0;
    uint64_t workspaceBytes = kWorkspaceBytes;
    std::vector<DeviceFunction> functions;
    bool profiling = false;
    /// Created by the first numerics check.
    std::unique_ptr<cuda::NonFiniteFinder> nonFiniteFinder;
  };

  void build(State &state, const PlanFile &planFile) const;
  /// Allocates and zeroes `bytes` for `what`; out of memory, the error
  /// names what `plan`'s arena holds at its peak (MemoryReport.h).
  CUdeviceptr allocate(State &state, uint64_t bytes, const std::string &what,
                       const PlanFile *plan = nullptr) const;
  Module loadModule(const plan::KernelImage &image, uint32_t index) const;
  /// Loads the image of `plan` that fits the device into `state`
  /// (chooseCudaImage; GENESIS_CUDA_IMAGE=ptx takes the PTX even where a
  /// cubin fits) and decides whether kernels launch programmatically.
  void loadImageForDevice(State &state, const plan::Plan &plan) const;
  LaunchStep
  compileLaunch(State &state, const plan::KernelLaunch &launch,
                const std::string &where,
                std::map<std::pair<uint32_t, std::string>,
                         std::pair<CUfunction, uint32_t>> &kernels) const;
  GemmStep compileGemm(State &state, const plan::Gemm &gemm, DType dtype,
                       const std::string &where) const;
  AttentionStep compileAttention(State &state, const PlanFile &planFile,
                                 const plan::Attention &attention,
                                 const std::string &where) const;
  /// Points every attention step at a workspace that is large enough.
  void placeAttentionWorkspaces(State &state) const;
  void ensureWorkspace(State &state) const;

  void uploadInputs(const DeviceFunction &function,
                    const std::map<uint32_t, HostArray> &io);
  /// Writes the step count and RNG state into the tensors `function` reads
  /// them from; marks what it updates in place as newer on the device.
  void feed(DeviceFunction &function, uint64_t stepCount, Generator::State rng);
  void launch(DeviceFunction &function, uint64_t stepCount,
              Generator::State rng);
  void capture(DeviceFunction &function);
  void enqueue(DeviceStep &step);
  /// Chooses a GEMM step's algorithm by timing, once per shape
  /// (CublasLtGemm.h); nothing for other steps or with GENESIS_TUNING=0.
  void tune(DeviceStep &step);
  void enqueueCopy(const CopyStep &copy, const std::string &where);
  void enqueueFill(const FillStep &fill, const std::string &where);

  const Api &api_;
  std::string planWhere_;
  std::string sessionWhere_;
  PrimaryContext context_;
  std::unique_ptr<State> state_;
};

} // namespace genesis::cuda_session

#endif // GENESIS_RUNTIME_CUDASESSION_H
