//===- CudaBackend.cpp - Running cuda plans on the GPU --------------------===//
//
// Every device address is fixed when the session is created (the arena,
// each persistent tensor and each input and output buffer is one
// allocation), so a function's steps can be captured into a CUDA graph once
// and replayed for as long as the session lives. The driver and cuBLASLt are
// reached through runtime/cuda/CudaApi.h.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaSession.h"
#include "runtime/plan/MemoryReport.h"
#include "runtime/support/Error.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

namespace genesis {

namespace cuda_session {

CudaSession::CudaSession(const PlanFile &planFile, std::string planWhere,
                         std::string sessionWhere)
    : api_(cuda::api(planWhere)), planWhere_(std::move(planWhere)),
      sessionWhere_(std::move(sessionWhere)), context_(api_, planWhere_) {
  // Should building throw, `state` is destroyed before `current` pops the
  // context, so everything built so far is released inside it.
  CurrentContext current(api_, context_.context());
  auto state = std::make_unique<State>();
  build(*state, planFile);
  state_ = std::move(state);
}

CudaSession::~CudaSession() {
  CurrentContext current(api_, context_.context());
  // Work still queued (replays) must not outlive its memory.
  api_.cuStreamSynchronize(state_->stream.get());
  state_.reset();
}

CUdeviceptr CudaSession::allocate(State &state, uint64_t bytes,
                                  const std::string &what,
                                  const PlanFile *plan) const {
  CUdeviceptr address = 0;
  CUresult result = api_.cuMemAlloc_v2(&address, bytes);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) {
    size_t freeBytes = 0, totalBytes = 0;
    api_.cuMemGetInfo_v2(&freeBytes, &totalBytes);
    throw Error(planWhere_ + ": out of device memory: " + what + " needs " +
                std::to_string(bytes) + " bytes, " + std::to_string(freeBytes) +
                " bytes free of " + std::to_string(totalBytes) +
                (plan ? "; " + largestLiveBuffers(*plan) : ""));
  }
  check(result, "cuMemAlloc",
        planWhere_ + ": allocating " + what + " (" + std::to_string(bytes) +
            " bytes)");
  state.memory.emplace_back(api_, address);
  state.allocatedBytes += bytes;
  // Zeroed, like the CPU session's memory: optimizer state starts at zero.
  check(api_.cuMemsetD8Async(address, 0, bytes, state.stream.get()),
        "cuMemsetD8Async", planWhere_ + ": zeroing " + what);
  return address;
}

void CudaSession::ensureWorkspace(State &state) const {
  if (!state.workspace)
    state.workspace =
        allocate(state, state.workspaceBytes, "the cuBLASLt workspace");
}

void CudaSession::loadImageForDevice(State &state,
                                     const plan::Plan &plan) const {
  int major = 0, minor = 0;
  for (auto [attribute, value] :
       {std::pair{CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major},
        std::pair{CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &minor}})
    check(api_.cuDeviceGetAttribute(value, attribute, context_.device()),
          "cuDeviceGetAttribute",
          planWhere_ + ": reading the device's compute capability");
  uint32_t device = static_cast<uint32_t>(major * 10 + minor);
  const char *choice = std::getenv("GENESIS_CUDA_IMAGE");
  bool ptxOnly = choice && std::string(choice) == "ptx";
  std::optional<uint32_t> image = chooseCudaImage(plan, device, ptxOnly);
  if (!image)
    throw Error(planWhere_ + ": no kernel image runs on this device (sm_" +
                std::to_string(device) + "); the plan has " +
                cudaImageList(plan) +
                (ptxOnly ? " and GENESIS_CUDA_IMAGE=ptx asks for a PTX" : "") +
                ": compile it with --cuda-arch=sm_" + std::to_string(device));
  const plan::KernelImage &chosen = *plan.images()->Get(*image);
  state.module = loadModule(chosen, *image);
  const char *pdl = std::getenv("GENESIS_CUDA_PDL");
  state.programmaticLaunch = chosen.waits_for_prerequisite_grids() &&
                             device >= kFirstProgrammaticLaunchChip &&
                             !(pdl && std::string(pdl) == "0");
}

Module CudaSession::loadModule(const plan::KernelImage &image,
                               uint32_t index) const {
  std::string what = planWhere_ + ": kernel image #" + std::to_string(index) +
                     " (" + imageFormatName(image.format()) + ")";
  const void *data = image.bytes()->data();
  // The driver reads PTX up to a NUL, which the plan does not store.
  std::string ptx;
  if (image.format() == plan::ImageFormat::Ptx) {
    ptx.assign(reinterpret_cast<const char *>(image.bytes()->data()),
               image.bytes()->size());
    data = ptx.c_str();
  }
  std::vector<char> log(16 << 10, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log.data(),
                    reinterpret_cast<void *>(uintptr_t(log.size() - 1))};
  CUmodule module = nullptr;
  CUresult result = api_.cuModuleLoadDataEx(&module, data, 2, options, values);
  if (result != CUDA_SUCCESS) {
    std::string details(log.data());
    std::replace(details.begin(), details.end(), '\n', ' ');
    throw Error(what + " does not load: cuModuleLoadDataEx failed: " +
                cuda::resultName(result) +
                (details.empty() ? "" : ": " + details));
  }
  return Module(module, api_.cuModuleUnload);
}

LaunchStep CudaSession::compileLaunch(
    State &state, const plan::KernelLaunch &launch, const std::string &where,
    std::map<std::pair<uint32_t, std::string>, std::pair<CUfunction, uint32_t>>
        &kernels) const {
  std::string symbol = launch.symbol()->str();
  std::string kernelName =
      "kernel '" + symbol + "' of image #" + std::to_string(launch.image());
  auto [entry, isNew] =
      kernels.try_emplace({launch.image(), symbol}, nullptr, 0);
  auto &[function, sharedMemoryLimit] = entry->second;
  if (isNew) {
    CUresult result =
        api_.cuModuleGetFunction(&function, state.module.get(), symbol.c_str());
    if (result == CUDA_ERROR_NOT_FOUND)
      throw Error(planWhere_ + ": kernel image #" +
                  std::to_string(launch.image()) + " has no symbol '" + symbol +
                  "' (" + where + ")");
    check(result, "cuModuleGetFunction",
          planWhere_ + ": " + where + ": resolving " + kernelName);
    sharedMemoryLimit = kDefaultSharedMemoryBytes;
  }

  // The ABI (Session.h): one 8-byte device address per argument. Checked
  // here, since a kernel reads whatever it is given.
  size_t parameterCount = 0;
  for (;; ++parameterCount) {
    size_t offset = 0, bytes = 0;
    CUresult result =
        api_.cuFuncGetParamInfo(function, parameterCount, &offset, &bytes);
    if (result == CUDA_ERROR_INVALID_VALUE) // past the last parameter
      break;
    check(result, "cuFuncGetParamInfo",
          planWhere_ + ": " + where + ": reading the parameters of " +
              kernelName);
    if (bytes != sizeof(CUdeviceptr))
      throw Error(planWhere_ + ": " + where + ": parameter " +
                  std::to_string(parameterCount) + " of " + kernelName +
                  " has " + std::to_string(bytes) +
                  " bytes, not those of a device address (8)");
  }
  if (parameterCount != launch.args()->size())
    throw Error(planWhere_ + ": " + where + ": " + kernelName + " takes " +
                std::to_string(parameterCount) +
                " parameters but the launch passes " +
                std::to_string(launch.args()->size()) + " tensors");

  uint32_t sharedMemoryBytes = launch.shared_memory_bytes();
  if (sharedMemoryBytes > sharedMemoryLimit) {
    int deviceLimit = 0;
    check(api_.cuDeviceGetAttribute(
              &deviceLimit,
              CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
              context_.device()),
          "cuDeviceGetAttribute",
          planWhere_ + ": reading the device's shared memory per block");
    if (sharedMemoryBytes > uint32_t(deviceLimit))
      throw Error(planWhere_ + ": " + where + ": " + kernelName +
                  " is launched with " + std::to_string(sharedMemoryBytes) +
                  " bytes of shared memory; the device allows " +
                  std::to_string(deviceLimit) + " per block");
    check(api_.cuFuncSetAttribute(
              function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
              int(sharedMemoryBytes)),
          "cuFuncSetAttribute",
          planWhere_ + ": " + where + ": letting " + kernelName + " use " +
              std::to_string(sharedMemoryBytes) + " bytes of shared memory");
    sharedMemoryLimit = sharedMemoryBytes;
  }

  LaunchStep step{
      function,
      {launch.grid()->x(), launch.grid()->y(), launch.grid()->z()},
      {launch.block()->x(), launch.block()->y(), launch.block()->z()},
      sharedMemoryBytes,
      {}};
  for (uint32_t arg : *launch.args())
    step.args.push_back(state.addresses[arg]);
  return step;
}

GemmStep CudaSession::compileGemm(State &state, const plan::Gemm &gemm,
                                  DType dtype, const std::string &where) const {
  std::string what = planWhere_ + ": " + where;
  if (!state.blasLt) {
    cublasLtHandle_t handle = nullptr;
    check(api_.cublasLtCreate(&handle), "cublasLtCreate",
          what + ": creating the cuBLASLt handle");
    state.blasLt = BlasLtHandle(handle, api_.cublasLtDestroy);
  }
  ensureWorkspace(state);
  // Optional operands: flatbuffers::Optional<uint32_t>.
  auto address = [&](auto index) {
    return index ? state.addresses[*index] : CUdeviceptr(0);
  };
  return cuda::prepareGemm(
      api_, state.blasLt.get(), gemm, dtype,
      {state.addresses[gemm.a()], state.addresses[gemm.b()],
       state.addresses[gemm.c()], address(gemm.bias()), address(gemm.aux())},
      state.workspaceBytes, what);
}

bool isPersistent(plan::Role role) {
  return isCheckpointedRole(role) || role == plan::Role::Lr ||
         role == plan::Role::RngSeed || role == plan::Role::Step;
}

void CudaSession::build(State &state, const PlanFile &planFile) const {
  const plan::Plan &plan = planFile.plan();
  CUstream stream = nullptr;
  check(api_.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate",
        planWhere_ + ": creating the session's stream");
  state.stream = Stream(stream, api_.cuStreamDestroy_v2);

  uint32_t tensorCount = plan.tensors()->size();
  state.arenaBytes = plan.memory()->arena_bytes();
  CUdeviceptr arena = 0;
  if (state.arenaBytes != 0)
    arena = allocate(state, state.arenaBytes, "the arena", &planFile);
  if (plan.memory()->workspace_bytes() != 0) {
    state.workspace = arena + plan.memory()->workspace_offset();
    state.workspaceBytes = plan.memory()->workspace_bytes();
  }
  state.addresses.assign(tensorCount, 0);
  state.deviceNewer.assign(tensorCount, false);
  for (uint32_t i = 0; i < tensorCount; ++i) {
    const plan::Tensor &entry = *plan.tensors()->Get(i);
    state.names.push_back(entry.name()->str());
    state.roles.push_back(entry.role());
    state.dtypes.push_back(toDType(entry.dtype()));
    state.bytes.push_back(entry.bytes());
    if (entry.role() == plan::Role::Temporary)
      state.addresses[i] = arena + entry.arena_offset();
    else if (entry.bytes() != 0)
      state.addresses[i] =
          allocate(state, entry.bytes(),
                   std::string(roleName(entry.role())) + " '" + state.names[i] +
                       "' (" + dtypeName(toDType(entry.dtype())) +
                       shapeString(planFile.tensorShape(i)) + ")",
                   &planFile);
  }

  if (plan.images()->size() != 0)
    loadImageForDevice(state, plan);

  std::map<std::pair<uint32_t, std::string>, std::pair<CUfunction, uint32_t>>
      kernels;
  for (const plan::Function *function : *plan.functions()) {
    DeviceFunction &compiled = state.functions.emplace_back();
    compiled.name = function->name()->str();
    compiled.where = sessionWhere_ + ": run '" + compiled.name + "'";
    for (uint32_t input : *function->inputs())
      if (state.roles[input] == plan::Role::Step ||
          state.roles[input] == plan::Role::RngSeed)
        compiled.fedTensors.push_back(input);
    for (uint32_t output : *function->outputs()) {
      plan::Role role = state.roles[output];
      if (role == plan::Role::Output || role == plan::Role::Input)
        compiled.returned.push_back(output);
      else if (isPersistent(role))
        compiled.updatedPersistent.push_back(output);
    }
    for (uint32_t i = 0; i < function->steps()->size(); ++i) {
      const plan::Step &step = *function->steps()->Get(i);
      DeviceStep &out = compiled.steps.emplace_back();
      out.name = stepName(planFile, step);
      if (step.location())
        out.location = step.location()->str();
      std::string where =
          "function '" + compiled.name + "' step #" + std::to_string(i) +
          (out.location.empty() ? "" : " (" + out.location + ")");
      out.where = sessionWhere_ + ": " + where;
      switch (step.kind_type()) {
      case plan::StepKind::KernelLaunch:
        out.op =
            compileLaunch(state, *step.kind_as_KernelLaunch(), where, kernels);
        break;
      case plan::StepKind::Gemm: {
        const plan::Gemm &gemm = *step.kind_as_Gemm();
        out.op =
            compileGemm(state, gemm, planFile.tensorDType(gemm.a()), where);
        break;
      }
      case plan::StepKind::Attention:
        out.op =
            compileAttention(state, planFile, *step.kind_as_Attention(), where);
        break;
      case plan::StepKind::Copy: {
        const plan::Copy &copy = *step.kind_as_Copy();
        CUdeviceptr src = state.addresses[copy.src()];
        CUdeviceptr dst = state.addresses[copy.dst()];
        bool overlapping =
            src != dst && src < dst + copy.bytes() && dst < src + copy.bytes();
        if (overlapping)
          ensureWorkspace(state);
        out.op = CopyStep{src, dst, copy.bytes(), overlapping};
        break;
      }
      default: { // the loader admits no other kind
        const plan::Fill &fill = *step.kind_as_Fill();
        DType dtype = planFile.tensorDType(fill.dst());
        HostArray element(dtype, {});
        element.setDouble(0, fill.value());
        FillStep op{state.addresses[fill.dst()],
                    plan.tensors()->Get(fill.dst())->bytes() / dtypeSize(dtype),
                    static_cast<uint32_t>(dtypeSize(dtype)), 0};
        std::memcpy(&op.pattern, element.data(), element.nbytes());
        out.op = op;
        break;
      }
      }
    }
  }
  placeAttentionWorkspaces(state);
  check(api_.cuStreamSynchronize(stream), "cuStreamSynchronize",
        planWhere_ + ": zeroing the device memory");
}

AttentionStep CudaSession::compileAttention(State &state,
                                            const PlanFile &planFile,
                                            const plan::Attention &attention,
                                            const std::string &where) const {
  if (!state.cudnn)
    state.cudnn =
        std::make_unique<cuda::CudnnAttention>(state.stream.get(), planWhere_);
  AttentionDesc desc = attentionDescOf(attention);
  AttentionStep step{};
  step.plan = state.cudnn->prepare(desc, planFile.tensorDType(desc.query),
                                   planWhere_ + ": " + where);
  step.workspaceBytes = state.cudnn->workspaceBytes(step.plan);
  auto address = [&](std::optional<uint32_t> index) {
    return index ? state.addresses[*index] : CUdeviceptr(0);
  };
  step.pointers = {address(desc.query),     address(desc.key),
                   address(desc.value),     address(desc.out),
                   address(desc.logSumExp), address(desc.outGrad),
                   address(desc.queryGrad), address(desc.keyGrad),
                   address(desc.valueGrad)};
  if (desc.packed) {
    // Key and value start after the query heads of each token's row (and
    // so do their gradients).
    CUdeviceptr keyOffset = desc.queryHeads * desc.headDim *
                            dtypeSize(planFile.tensorDType(desc.query));
    CUdeviceptr valueOffset =
        keyOffset / desc.queryHeads * (desc.queryHeads + desc.kvHeads);
    auto offset = [&](cuda::AttentionOperand key,
                      cuda::AttentionOperand value) {
      step.pointers[key] += keyOffset;
      step.pointers[value] += valueOffset;
    };
    offset(cuda::kKey, cuda::kValue);
    if (desc.backward())
      offset(cuda::kKeyGrad, cuda::kValueGrad);
  }
  return step;
}

void CudaSession::placeAttentionWorkspaces(State &state) const {
  uint64_t largest = 0;
  for (DeviceFunction &function : state.functions)
    for (DeviceStep &step : function.steps)
      if (auto *attention = std::get_if<AttentionStep>(&step.op))
        largest = std::max(largest, attention->workspaceBytes);
  if (largest == 0)
    return;
  CUdeviceptr workspace = state.workspace;
  if (!workspace || largest > state.workspaceBytes)
    // The plan reserved less than this cuDNN asks for: one buffer of the
    // session's, shared by every attention step.
    workspace = allocate(state, largest, "the fused attention workspace");
  for (DeviceFunction &function : state.functions)
    for (DeviceStep &step : function.steps)
      if (auto *attention = std::get_if<AttentionStep>(&step.op))
        attention->workspace = workspace;
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

void CudaSession::tune(DeviceStep &step) {
  State &state = *state_;
  if (!state.tuning)
    return;
  if (auto *gemm = std::get_if<GemmStep>(&step.op))
    state.gemmTuner.tune(api_, state.blasLt.get(), *gemm, state.workspace,
                         state.stream.get(), step.where);
}

void CudaSession::enqueueCopy(const CopyStep &copy, const std::string &where) {
  CUstream stream = state_->stream.get();
  if (copy.bytes == 0 || copy.src == copy.dst)
    return;
  if (!copy.overlapping) {
    check(api_.cuMemcpyDtoDAsync_v2(copy.dst, copy.src, copy.bytes, stream),
          "cuMemcpyDtoDAsync", where);
    return;
  }
  // As memmove: each chunk is read whole before it is written, and the
  // chunks go in the order that reads every byte before it is overwritten.
  bool backward = copy.dst > copy.src;
  for (uint64_t done = 0; done < copy.bytes;) {
    uint64_t length = std::min(state_->workspaceBytes, copy.bytes - done);
    uint64_t offset = backward ? copy.bytes - done - length : done;
    check(api_.cuMemcpyDtoDAsync_v2(state_->workspace, copy.src + offset,
                                    length, stream),
          "cuMemcpyDtoDAsync", where);
    check(api_.cuMemcpyDtoDAsync_v2(copy.dst + offset, state_->workspace,
                                    length, stream),
          "cuMemcpyDtoDAsync", where);
    done += length;
  }
}

void CudaSession::enqueueFill(const FillStep &fill, const std::string &where) {
  CUstream stream = state_->stream.get();
  if (fill.count == 0)
    return;
  switch (fill.elementBytes) {
  case 1:
    check(api_.cuMemsetD8Async(fill.dst, uint8_t(fill.pattern), fill.count,
                               stream),
          "cuMemsetD8Async", where);
    break;
  case 2:
    check(api_.cuMemsetD16Async(fill.dst, uint16_t(fill.pattern), fill.count,
                                stream),
          "cuMemsetD16Async", where);
    break;
  case 4:
    check(api_.cuMemsetD32Async(fill.dst, uint32_t(fill.pattern), fill.count,
                                stream),
          "cuMemsetD32Async", where);
    break;
  default: {
    // No 64-bit memset: the low and the high words, each a column of a
    // pitch-8 2D memset (which graphs capture as memset nodes).
    auto low = uint32_t(fill.pattern), high = uint32_t(fill.pattern >> 32);
    if (low == high) {
      check(api_.cuMemsetD32Async(fill.dst, low, 2 * fill.count, stream),
            "cuMemsetD32Async", where);
      break;
    }
    check(api_.cuMemsetD2D32Async(fill.dst, 8, low, 1, fill.count, stream),
          "cuMemsetD2D32Async", where);
    check(api_.cuMemsetD2D32Async(fill.dst + 4, 8, high, 1, fill.count, stream),
          "cuMemsetD2D32Async", where);
    break;
  }
  }
}

void CudaSession::enqueue(DeviceStep &step) {
  if (auto *launch = std::get_if<LaunchStep>(&step.op)) {
    std::vector<void *> params;
    params.reserve(launch->args.size());
    for (CUdeviceptr &arg : launch->args)
      params.push_back(&arg);
    CUlaunchAttribute programmatic{};
    programmatic.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    programmatic.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config{};
    config.gridDimX = launch->grid[0];
    config.gridDimY = launch->grid[1];
    config.gridDimZ = launch->grid[2];
    config.blockDimX = launch->block[0];
    config.blockDimY = launch->block[1];
    config.blockDimZ = launch->block[2];
    config.sharedMemBytes = launch->sharedMemoryBytes;
    config.hStream = state_->stream.get();
    config.attrs = &programmatic;
    config.numAttrs = state_->programmaticLaunch ? 1 : 0;
    check(api_.cuLaunchKernelEx(&config, launch->function, params.data(),
                                nullptr),
          "cuLaunchKernelEx", step.where);
  } else if (auto *gemm = std::get_if<GemmStep>(&step.op)) {
    cuda::enqueueGemm(api_, state_->blasLt.get(), *gemm, state_->workspace,
                      state_->stream.get(), step.where);
  } else if (auto *attention = std::get_if<AttentionStep>(&step.op)) {
    state_->cudnn->run(attention->plan, attention->pointers,
                       attention->workspace, step.where);
  } else if (auto *copy = std::get_if<CopyStep>(&step.op)) {
    enqueueCopy(*copy, step.where);
  } else {
    enqueueFill(std::get<FillStep>(step.op), step.where);
  }
}

void CudaSession::capture(DeviceFunction &function) {
  CUstream stream = state_->stream.get();
  std::string what = function.where + ": capturing its steps in a CUDA graph";
  // Thread-local: other threads' sessions keep working meanwhile.
  check(
      api_.cuStreamBeginCapture_v2(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
      "cuStreamBeginCapture", what);
  try {
    for (DeviceStep &step : function.steps)
      enqueue(step);
  } catch (...) {
    // Ends the broken capture, so that the stream works again.
    CUgraph broken = nullptr;
    api_.cuStreamEndCapture(stream, &broken);
    if (broken)
      api_.cuGraphDestroy(broken);
    throw;
  }
  CUgraph captured = nullptr;
  check(api_.cuStreamEndCapture(stream, &captured), "cuStreamEndCapture", what);
  Graph graph(captured, api_.cuGraphDestroy);
  CUgraphExec executable = nullptr;
  check(api_.cuGraphInstantiateWithFlags(&executable, graph.get(), 0),
        "cuGraphInstantiateWithFlags", what);
  function.graph = GraphExec(executable, api_.cuGraphExecDestroy);
}

void CudaSession::feed(DeviceFunction &function, uint64_t stepCount,
                       Generator::State rng) {
  State &state = *state_;
  CUstream stream = state.stream.get();
  // Memsets carry the values themselves, so no host buffer has to live until
  // the stream reaches them (replays do not wait).
  for (uint32_t tensor : function.fedTensors) {
    auto feed = [&](CUdeviceptr at, uint64_t value) {
      for (uint32_t word : {0, 1})
        check(api_.cuMemsetD32Async(at + 4 * word,
                                    uint32_t(value >> (32 * word)), 1, stream),
              "cuMemsetD32Async",
              function.where + ": feeding '" + state.names[tensor] + "'");
    };
    CUdeviceptr address = state.addresses[tensor];
    if (state.roles[tensor] == plan::Role::Step) {
      feed(address, stepCount);
    } else {
      feed(address, rng.seed);
      feed(address + 8, rng.offset);
    }
  }
  for (uint32_t tensor : function.updatedPersistent)
    state.deviceNewer[tensor] = true;
}

void CudaSession::launch(DeviceFunction &function, uint64_t stepCount,
                         Generator::State rng) {
  State &state = *state_;
  CUstream stream = state.stream.get();
  feed(function, stepCount, rng);
  if (state.profiling) {
    for (DeviceStep &step : function.steps) {
      for (Event *event : {&step.start, &step.end})
        if (!*event) {
          CUevent created = nullptr;
          check(api_.cuEventCreate(&created, CU_EVENT_DEFAULT), "cuEventCreate",
                step.where + ": creating its timing events");
          *event = Event(created, api_.cuEventDestroy_v2);
        }
      tune(step); // outside the step's events
      check(api_.cuEventRecord(step.start.get(), stream), "cuEventRecord",
            step.where);
      enqueue(step);
      check(api_.cuEventRecord(step.end.get(), stream), "cuEventRecord",
            step.where);
    }
    check(api_.cuStreamSynchronize(stream), "cuStreamSynchronize",
          function.where);
    for (DeviceStep &step : function.steps) {
      float milliseconds = 0;
      check(api_.cuEventElapsedTime_v2(&milliseconds, step.start.get(),
                                       step.end.get()),
            "cuEventElapsedTime", step.where);
      step.seconds += milliseconds / 1e3;
      ++step.calls;
    }
  } else if (function.executions == 0 || function.steps.empty()) {
    // The first execution loads the kernels, warms cuBLASLt and times its
    // algorithms, which a capture cannot do.
    for (DeviceStep &step : function.steps) {
      tune(step);
      enqueue(step);
    }
  } else {
    if (!function.graph)
      capture(function);
    check(api_.cuGraphLaunch(function.graph.get(), stream), "cuGraphLaunch",
          function.where);
  }
  ++function.executions;
}

void CudaSession::run(uint32_t index, std::map<uint32_t, HostArray> &io,
                      uint64_t step, Generator::State rng) {
  CurrentContext current(api_, context_.context());
  State &state = *state_;
  DeviceFunction &function = state.functions[index];
  CUstream stream = state.stream.get();
  uploadInputs(function, io);
  launch(function, step, rng);
  for (uint32_t tensor : function.returned) {
    HostArray &array = io.at(tensor);
    if (array.nbytes() != 0)
      check(api_.cuMemcpyDtoHAsync_v2(array.data(), state.addresses[tensor],
                                      array.nbytes(), stream),
            "cuMemcpyDtoHAsync",
            function.where + ": copying '" + state.names[tensor] + "' (" +
                std::to_string(array.nbytes()) + " bytes) to the host");
  }
  check(api_.cuStreamSynchronize(stream), "cuStreamSynchronize",
        function.where);
}

void CudaSession::uploadInputs(const DeviceFunction &function,
                               const std::map<uint32_t, HostArray> &io) {
  State &state = *state_;
  for (const auto &[tensor, array] : io)
    if (state.roles[tensor] == plan::Role::Input && array.nbytes() != 0)
      check(api_.cuMemcpyHtoDAsync_v2(state.addresses[tensor], array.data(),
                                      array.nbytes(), state.stream.get()),
            "cuMemcpyHtoDAsync",
            function.where + ": copying input '" + state.names[tensor] + "' (" +
                std::to_string(array.nbytes()) + " bytes) to the device");
}

void CudaSession::replay(uint32_t index, uint64_t step, Generator::State rng) {
  CurrentContext current(api_, context_.context());
  launch(state_->functions[index], step, rng);
}

void CudaSession::synchronize() {
  CurrentContext current(api_, context_.context());
  check(api_.cuStreamSynchronize(state_->stream.get()), "cuStreamSynchronize",
        sessionWhere_ + ": synchronizing");
}

void CudaSession::upload(uint32_t tensor, const HostArray &value) {
  CurrentContext current(api_, context_.context());
  State &state = *state_;
  if (value.nbytes() != 0)
    check(api_.cuMemcpyHtoDAsync_v2(state.addresses[tensor], value.data(),
                                    value.nbytes(), state.stream.get()),
          "cuMemcpyHtoDAsync",
          sessionWhere_ + ": bind '" + state.names[tensor] + "' (" +
              std::to_string(value.nbytes()) + " bytes)");
  state.deviceNewer[tensor] = false;
}

void CudaSession::download(uint32_t tensor, HostArray &mirror) {
  State &state = *state_;
  if (!state.deviceNewer[tensor])
    return;
  CurrentContext current(api_, context_.context());
  std::string what = sessionWhere_ + ": reading '" + state.names[tensor] +
                     "' (" + std::to_string(mirror.nbytes()) +
                     " bytes) from the device";
  check(api_.cuMemcpyDtoHAsync_v2(mirror.data(), state.addresses[tensor],
                                  mirror.nbytes(), state.stream.get()),
        "cuMemcpyDtoHAsync", what);
  check(api_.cuStreamSynchronize(state.stream.get()), "cuStreamSynchronize",
        what);
  state.deviceNewer[tensor] = false;
}

SessionStats CudaSession::stats() const {
  SessionStats stats;
  for (const DeviceFunction &function : state_->functions)
    for (const DeviceStep &step : function.steps)
      stats.steps.push_back(
          {function.name, step.name, step.location, step.calls, step.seconds});
  stats.arenaBytes = state_->arenaBytes;
  stats.externalBytes = state_->allocatedBytes - state_->arenaBytes;
  // Everything is allocated when the session is created.
  stats.peakBytes = state_->allocatedBytes;
  return stats;
}

void CudaSession::resetStats() {
  for (DeviceFunction &function : state_->functions)
    for (DeviceStep &step : function.steps) {
      step.calls = 0;
      step.seconds = 0;
    }
}

} // namespace cuda_session

std::unique_ptr<CudaBackend>
CudaBackend::create(const PlanFile &planFile, const std::string &planWhere,
                    const std::string &sessionWhere) {
  return std::make_unique<cuda_session::CudaSession>(planFile, planWhere,
                                                     sessionWhere);
}

std::string cudaUnavailableReason() { return cuda::unavailableReason(); }

std::optional<uint32_t> cudaDeviceChip() {
  if (!cuda::unavailableReason().empty())
    return std::nullopt;
  const cuda::Api &api = cuda::api("reading device 0's compute capability");
  CUdevice device = 0;
  int major = 0, minor = 0;
  if (api.cuDeviceGet(&device, 0) != CUDA_SUCCESS ||
      api.cuDeviceGetAttribute(&major,
                               CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                               device) != CUDA_SUCCESS ||
      api.cuDeviceGetAttribute(&minor,
                               CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                               device) != CUDA_SUCCESS)
    return std::nullopt;
  return static_cast<uint32_t>(major * 10 + minor);
}

} // namespace genesis
