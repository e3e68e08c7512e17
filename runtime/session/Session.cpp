//===- Session.cpp - Executing a plan on the CPU --------------------------===//

#include "runtime/session/Session.h"
#include "runtime/cuda/CudaBackend.h"
#include "runtime/plan/MemoryReport.h"
#include "runtime/session/ThreadPool.h"
#include "runtime/support/Error.h"
#include "runtime/support/Gelu.h"
#include "runtime/support/MemFile.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <new>
#include <optional>
#include <unistd.h>
#include <variant>

namespace genesis {

namespace {

using KernelFunction = void (*)(void **);

/// A dlopen'ed kernel image, closed with the session. It keeps the memfd it
/// was loaded from open: dlopen finds a loaded library by its path,
/// /proc/self/fd/N, so a later image loaded from a reused descriptor number
/// would be handed this library instead of its own.
class LoadedImage {
public:
  LoadedImage(void *handle, int fd) : handle_(handle), fd_(fd) {}
  LoadedImage(const LoadedImage &) = delete;
  LoadedImage &operator=(const LoadedImage &) = delete;
  ~LoadedImage() {
    dlclose(handle_);
    close(fd_);
  }
  void *handle() const { return handle_; }

private:
  void *handle_;
  int fd_;
};

struct AlignedFree {
  std::align_val_t alignment;
  void operator()(uint8_t *pointer) const {
    ::operator delete(pointer, alignment);
  }
};
using AlignedBytes = std::unique_ptr<uint8_t, AlignedFree>;

struct LaunchOp {
  KernelFunction kernel;
  std::vector<uint32_t> args;
  /// Null when the image has no `symbol_range`; then the launch is one piece.
  RangeFunction range = nullptr;
  int64_t outerExtent = 1;
  /// Whether the launch is worth splitting (see kMinSplitBytes).
  bool split = false;
};

/// Waking the pool costs some 10-20 us; a launch whose argument tensors
/// total fewer bytes than this (some 50 us of work) runs faster on the
/// calling thread alone (measured on the MLP train step's kernels).
/// GENESIS_MIN_SPLIT_BYTES overrides it (tests set 0 to split everything).
constexpr uint64_t kMinSplitBytes = 512 * 1024;

uint64_t minSplitBytes(const std::string &where) {
  const char *value = std::getenv("GENESIS_MIN_SPLIT_BYTES");
  if (!value || !*value)
    return kMinSplitBytes;
  char *end = nullptr;
  unsigned long long bytes = std::strtoull(value, &end, 10);
  if (*end != '\0' || *value == '-')
    throw Error(where + ": GENESIS_MIN_SPLIT_BYTES is '" + value +
                "', not a byte count");
  return bytes;
}

struct GemmOp {
  GemmDesc desc;
  DType dtype;
};

struct CopyOp {
  uint32_t src;
  uint32_t dst;
  uint64_t bytes;
};

struct FillOp {
  uint32_t dst;
  uint64_t bytes;
  /// The value rounded to dst's dtype, as one element.
  HostArray element;
};

struct CompiledStep {
  std::variant<LaunchOp, GemmOp, CopyOp, FillOp> op;
  std::string name;
  std::string location;
  uint64_t calls = 0;
  double seconds = 0;
};

struct CompiledFunction {
  std::string name;
  std::vector<uint32_t> inputs;
  std::vector<uint32_t> outputs;
  std::vector<CompiledStep> steps;
  /// Per plan step (either target), for numerics reruns: the tensors it
  /// writes.
  std::vector<std::vector<uint32_t>> writes;
  bool advancesStep;
  uint64_t rngOffsetAdvance;
  bool ran = false;
  /// CPU: what replay() reruns on, the inputs of the last run (the device
  /// keeps a cuda function's).
  std::map<std::string, HostArray> lastInputs;
  uint64_t lastInputBytes = 0;
};

bool isPersistentRole(plan::Role role) {
  return isCheckpointedRole(role) || role == plan::Role::Lr ||
         role == plan::Role::RngSeed || role == plan::Role::Step;
}

/// Roles whose values the caller must provide before they are read.
bool needsBinding(plan::Role role) {
  return role == plan::Role::Parameter || role == plan::Role::Buffer ||
         role == plan::Role::Lr;
}

/// "a parameter", "an input".
std::string withArticle(plan::Role role) {
  std::string name = roleName(role);
  return (std::strchr("aeiou", name[0]) ? "an " : "a ") + name;
}

std::string typeString(DType dtype, const std::vector<int64_t> &shape) {
  return dtypeName(dtype) + shapeString(shape);
}

uint64_t availableMemoryBytes() {
  return uint64_t(sysconf(_SC_AVPHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
}

/// `buffers`: what the memory holds (largestLiveBuffers), or "".
[[noreturn]] void throwOutOfMemory(const std::string &where,
                                   const std::string &what, uint64_t bytes,
                                   const std::string &buffers = "") {
  throw Error(where + ": out of memory: " + what + " needs " +
              std::to_string(bytes) + " bytes but only " +
              std::to_string(availableMemoryBytes()) + " bytes are available" +
              (buffers.empty() ? "" : "; " + buffers));
}

void blasGemm(bool transposeA, bool transposeB, int m, int n, int k,
              float alpha, const float *a, int lda, const float *b, int ldb,
              float beta, float *c, int ldc) {
  cblas_sgemm(CblasRowMajor, transposeA ? CblasTrans : CblasNoTrans,
              transposeB ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b,
              ldb, beta, c, ldc);
}

void blasGemm(bool transposeA, bool transposeB, int m, int n, int k,
              double alpha, const double *a, int lda, const double *b, int ldb,
              double beta, double *c, int ldc) {
  cblas_dgemm(CblasRowMajor, transposeA ? CblasTrans : CblasNoTrans,
              transposeB ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b,
              ldb, beta, c, ldc);
}

template <typename T>
void runGemm(const GemmDesc &gemm, const T *a, const T *b, T *c, const T *bias,
             const T *aux) {
  int m = static_cast<int>(gemm.m), n = static_cast<int>(gemm.n),
      k = static_cast<int>(gemm.k);
  int lda = gemm.transposeA ? m : k;
  int ldb = gemm.transposeB ? k : n;
  bool addBias = bias != nullptr;
  bool relu = gemm.epilogue == plan::Epilogue::Relu ||
              gemm.epilogue == plan::Epilogue::BiasRelu;
  bool applyGelu = gemm.epilogue == plan::Epilogue::Gelu ||
                   gemm.epilogue == plan::Epilogue::BiasGelu;
  // The plan loader admits aux with DGelu only, for one batch.
  bool geluGradient = gemm.epilogue == plan::Epilogue::DGelu;
  for (int64_t batch = 0; batch < gemm.batchCount; ++batch) {
    T *cBatch = c + batch * gemm.strideC;
    blasGemm(gemm.transposeA, gemm.transposeB, m, n, k,
             static_cast<T>(gemm.alpha), a + batch * gemm.strideA, lda,
             b + batch * gemm.strideB, ldb, static_cast<T>(gemm.beta), cBatch,
             n);
    if (!addBias && !relu && !applyGelu && !geluGradient)
      continue;
    for (int64_t i = 0; i < int64_t(m) * n; ++i) {
      T value = cBatch[i];
      if (addBias)
        value += bias[i % n];
      if (relu)
        value = value > T(0) ? value : T(0);
      if (applyGelu)
        value = static_cast<T>(geluTanh(value));
      if (geluGradient)
        value = static_cast<T>(value * geluTanhDerivative(aux[i]));
      cBatch[i] = value;
    }
  }
}

template <typename T>
void fillWith(void *dst, uint64_t bytes, const void *element) {
  T value;
  std::memcpy(&value, element, sizeof(T));
  std::fill_n(static_cast<T *>(dst), bytes / sizeof(T), value);
}

} // namespace

struct Session::Impl {
  std::vector<std::unique_ptr<LoadedImage>> images;
  AlignedBytes arena{nullptr, AlignedFree{std::align_val_t(64)}};
  uint64_t arenaBytes = 0;
  /// Per tensor: its arena offset (temporaries) and storage (persistent).
  std::vector<uint64_t> arenaOffsets;
  std::vector<std::optional<HostArray>> persistent;
  std::vector<bool> bound;
  std::map<std::string, uint32_t> tensorIndex;
  std::vector<CompiledFunction> functions;
  uint64_t externalBytes = 0;
  uint64_t peakBytes = 0;
  /// Null when kernels run on the calling thread only.
  std::unique_ptr<ThreadPool> pool;
  /// Set for a cuda plan, which runs there; the rest of Impl then keeps only
  /// the host side (persistent tensors, bindings, function signatures).
  std::unique_ptr<CudaBackend> cuda;
  /// The inputs every function's last run left for replay().
  uint64_t lastInputBytes = 0;

  void execute(CompiledStep &step, const std::vector<void *> &data) const;
  /// CPU: every tensor's data pointer for a run on `owned` inputs and
  /// outputs.
  std::vector<void *> dataPointers(const std::vector<TensorInfo> &tensors,
                                   std::map<uint32_t, HostArray> &owned);
};

std::vector<void *>
Session::Impl::dataPointers(const std::vector<TensorInfo> &tensors,
                            std::map<uint32_t, HostArray> &owned) {
  std::vector<void *> data(tensors.size(), nullptr);
  for (uint32_t i = 0; i < tensors.size(); ++i) {
    if (persistent[i])
      data[i] = persistent[i]->data();
    else if (tensors[i].role == plan::Role::Temporary)
      data[i] = arena.get() + arenaOffsets[i];
  }
  for (auto &[index, array] : owned)
    data[index] = array.data();
  return data;
}

void Session::Impl::execute(CompiledStep &step,
                            const std::vector<void *> &data) const {
  if (auto *launch = std::get_if<LaunchOp>(&step.op)) {
    std::vector<void *> args;
    args.reserve(launch->args.size());
    for (uint32_t index : launch->args)
      args.push_back(data[index]);
    if (pool && launch->split)
      pool->run(launch->range, args.data(), launch->outerExtent);
    else
      launch->kernel(args.data());
  } else if (auto *gemm = std::get_if<GemmOp>(&step.op)) {
    const GemmDesc &desc = gemm->desc;
    void *bias = desc.bias ? data[*desc.bias] : nullptr;
    void *aux = desc.aux ? data[*desc.aux] : nullptr;
    if (gemm->dtype == DType::F32)
      runGemm(desc, static_cast<const float *>(data[desc.a]),
              static_cast<const float *>(data[desc.b]),
              static_cast<float *>(data[desc.c]),
              static_cast<const float *>(bias),
              static_cast<const float *>(aux));
    else
      runGemm(desc, static_cast<const double *>(data[desc.a]),
              static_cast<const double *>(data[desc.b]),
              static_cast<double *>(data[desc.c]),
              static_cast<const double *>(bias),
              static_cast<const double *>(aux));
  } else if (auto *copy = std::get_if<CopyOp>(&step.op)) {
    // The planner may give non-overlapping lifetimes the same bytes, and a
    // copy of a tensor onto itself is harmless, so regions may overlap.
    if (copy->bytes != 0)
      std::memmove(data[copy->dst], data[copy->src], copy->bytes);
  } else {
    const FillOp &fill = std::get<FillOp>(step.op);
    const uint64_t bytes = fill.bytes;
    void *dst = data[fill.dst];
    switch (fill.element.nbytes()) {
    case 1:
      fillWith<uint8_t>(dst, bytes, fill.element.data());
      break;
    case 2:
      fillWith<uint16_t>(dst, bytes, fill.element.data());
      break;
    case 4:
      fillWith<uint32_t>(dst, bytes, fill.element.data());
      break;
    default:
      fillWith<uint64_t>(dst, bytes, fill.element.data());
      break;
    }
  }
}

//===----------------------------------------------------------------------===//
// Session
//===----------------------------------------------------------------------===//

namespace {

std::string stepWhere(const CompiledFunction &function, size_t index,
                      const std::string &location) {
  std::string where =
      "function '" + function.name + "' step #" + std::to_string(index);
  return location.empty() ? where : where + " (" + location + ")";
}

std::unique_ptr<LoadedImage> loadImage(const plan::KernelImage &image,
                                       uint32_t index,
                                       const std::string &where) {
  std::string what = where + ": kernel image #" + std::to_string(index);
  // dlopen needs a path; a memfd gives one without touching the disk and
  // disappears with the process.
  int fd = createMemFile("genesis-image-" + std::to_string(index),
                         image.bytes()->data(), image.bytes()->size(), what);
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    std::string problem = dlerror();
    close(fd);
    throw Error(what + " (elf-so) cannot be loaded: " + problem);
  }
  return std::make_unique<LoadedImage>(handle, fd);
}

/// Writes the step count into step tensors and the RNG state into rng_seed
/// tensors, before each run.
void feedSessionTensors(const std::vector<TensorInfo> &tensors,
                        std::vector<std::optional<HostArray>> &persistent,
                        uint64_t step, Generator::State rng) {
  for (uint32_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].role == plan::Role::Step)
      persistent[i]->dataAs<int64_t>()[0] = static_cast<int64_t>(step);
    if (tensors[i].role == plan::Role::RngSeed) {
      int64_t *words = persistent[i]->dataAs<int64_t>();
      words[0] = static_cast<int64_t>(rng.seed);
      words[1] = static_cast<int64_t>(rng.offset);
    }
  }
}

/// After a successful run of `function`.
void advanceCounters(const CompiledFunction &function, uint64_t &step,
                     Generator::State &rng) {
  if (function.advancesStep)
    ++step;
  rng.offset += function.rngOffsetAdvance;
}

} // namespace

Session::Session(const PlanFile &planFile)
    : planName_(planFile.name()), rngState_(Generator().get_state()),
      impl_(std::make_unique<Impl>()) {
  const plan::Plan &plan = planFile.plan();
  std::string where = "plan file '" + planName_ + "'";
  bool onDevice = plan.header()->target() == plan::Target::Cuda;
  if (plan.header()->model_hash())
    modelHash_ = plan.header()->model_hash()->str();

  uint32_t tensorCount = plan.tensors()->size();
  impl_->arenaOffsets.resize(tensorCount);
  impl_->persistent.resize(tensorCount);
  impl_->bound.resize(tensorCount);
  uint64_t persistentBytes = 0;
  for (uint32_t i = 0; i < tensorCount; ++i) {
    const plan::Tensor &entry = *plan.tensors()->Get(i);
    tensors_.push_back({entry.name()->str(), toDType(entry.dtype()),
                        planFile.tensorShape(i), entry.role()});
    impl_->tensorIndex[tensors_.back().name] = i;
    impl_->arenaOffsets[i] = entry.arena_offset();
    if (isPersistentRole(entry.role()))
      persistentBytes += entry.bytes();
  }

  // An allocation beyond the machine's memory would only be found when the
  // kernel kills the process while zeroing it.
  // A cuda plan's arena is on the device; the host holds the persistent
  // tensors' values (as bound, and as last read back).
  impl_->arenaBytes = onDevice ? 0 : plan.memory()->arena_bytes();
  uint64_t physicalBytes =
      uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
  if (impl_->arenaBytes > physicalBytes ||
      persistentBytes > physicalBytes - impl_->arenaBytes)
    throwOutOfMemory(where,
                     "the arena (" + std::to_string(impl_->arenaBytes) +
                         " bytes) and the persistent tensors",
                     impl_->arenaBytes + persistentBytes,
                     largestLiveBuffers(planFile));
  std::align_val_t alignment{std::max<size_t>(64, plan.memory()->alignment())};
  try {
    impl_->arena = AlignedBytes(
        static_cast<uint8_t *>(::operator new(impl_->arenaBytes, alignment)),
        AlignedFree{alignment});
    std::memset(impl_->arena.get(), 0, impl_->arenaBytes);
    for (uint32_t i = 0; i < tensorCount; ++i)
      if (isPersistentRole(tensors_[i].role))
        impl_->persistent[i].emplace(tensors_[i].dtype, tensors_[i].shape);
  } catch (const std::bad_alloc &) {
    throwOutOfMemory(where, "the arena and the persistent tensors",
                     impl_->arenaBytes + persistentBytes,
                     largestLiveBuffers(planFile));
  }
  impl_->externalBytes = persistentBytes;
  impl_->peakBytes = impl_->arenaBytes + persistentBytes;

  if (onDevice)
    impl_->cuda = CudaBackend::create(
        planFile, where, "session of plan file '" + planName_ + "'");
  else
    for (uint32_t i = 0; i < plan.images()->size(); ++i)
      impl_->images.push_back(loadImage(*plan.images()->Get(i), i, where));
  // Each (image, symbol) is resolved once, however many steps launch it.
  std::map<std::pair<uint32_t, std::string>,
           std::pair<KernelFunction, RangeFunction>>
      kernels;
  uint64_t splitBytes = minSplitBytes(where);
  if (unsigned threads = sessionThreadCount(where); threads > 1 && !onDevice) {
    impl_->pool = std::make_unique<ThreadPool>(threads);
    if (impl_->pool->size() == 1)
      impl_->pool.reset();
  }

  for (const plan::Function *function : *plan.functions()) {
    CompiledFunction &compiled = impl_->functions.emplace_back();
    compiled.name = function->name()->str();
    compiled.inputs.assign(function->inputs()->begin(),
                           function->inputs()->end());
    compiled.outputs.assign(function->outputs()->begin(),
                            function->outputs()->end());
    compiled.advancesStep = function->advances_step();
    compiled.rngOffsetAdvance = function->rng_offset_advance();
    for (const plan::Step *step : *function->steps())
      compiled.writes.push_back(stepWrites(planFile, *step));
    if (onDevice)
      continue; // the backend compiles the steps
    for (const plan::Step *step : *function->steps()) {
      CompiledStep &out = compiled.steps.emplace_back();
      out.name = stepName(planFile, *step);
      if (step->location())
        out.location = step->location()->str();
      switch (step->kind_type()) {
      case plan::StepKind::KernelLaunch: {
        const plan::KernelLaunch &launch = *step->kind_as_KernelLaunch();
        auto &[kernel, range] =
            kernels[{launch.image(), launch.symbol()->str()}];
        if (!kernel) {
          void *symbol = dlsym(impl_->images[launch.image()]->handle(),
                               launch.symbol()->c_str());
          if (!symbol)
            throw Error(
                where + ": kernel image #" + std::to_string(launch.image()) +
                " has no symbol '" + launch.symbol()->str() + "' (" +
                stepWhere(compiled, compiled.steps.size() - 1, out.location) +
                ")");
          kernel = reinterpret_cast<KernelFunction>(symbol);
          // Optional: images without it run every launch as one piece.
          range = reinterpret_cast<RangeFunction>(
              dlsym(impl_->images[launch.image()]->handle(),
                    (launch.symbol()->str() + "_range").c_str()));
        }
        LaunchOp op{kernel,
                    {launch.args()->begin(), launch.args()->end()},
                    range,
                    launch.outer_extent()};
        uint64_t argBytes = 0;
        for (uint32_t arg : op.args) {
          uint64_t elements = 1;
          for (int64_t extent : tensors_[arg].shape)
            elements *= uint64_t(extent);
          argBytes += elements * dtypeSize(tensors_[arg].dtype);
        }
        op.split = range && op.outerExtent >= 2 && argBytes >= splitBytes;
        out.op = std::move(op);
        break;
      }
      case plan::StepKind::Gemm: {
        const plan::Gemm &gemm = *step->kind_as_Gemm();
        out.op = GemmOp{gemmDescOf(gemm), tensors_[gemm.a()].dtype};
        break;
      }
      case plan::StepKind::Copy: {
        const plan::Copy &copy = *step->kind_as_Copy();
        out.op = CopyOp{copy.src(), copy.dst(), copy.bytes()};
        break;
      }
      case plan::StepKind::Fill: {
        const plan::Fill &fill = *step->kind_as_Fill();
        const TensorInfo &dst = tensors_[fill.dst()];
        HostArray element(dst.dtype, {});
        element.setDouble(0, fill.value());
        out.op = FillOp{fill.dst(), plan.tensors()->Get(fill.dst())->bytes(),
                        std::move(element)};
        break;
      }
      default: // the loader allows attention steps only in cuda plans
        throw Error(where + ": step '" + out.name + "' has no CPU runtime");
      }
    }
  }
}

Session::~Session() = default;
Session::Session(Session &&) noexcept = default;
Session &Session::operator=(Session &&) noexcept = default;

void Session::fail(const std::string &problem) const {
  throw Error("session of plan file '" + planName_ + "': " + problem);
}

uint32_t Session::indexOf(const std::string &name) const {
  auto it = impl_->tensorIndex.find(name);
  if (it == impl_->tensorIndex.end())
    fail("the plan has no tensor named '" + name + "'");
  return it->second;
}

void Session::bind(const std::string &name, const HostArray &value) {
  uint32_t index = indexOf(name);
  const TensorInfo &info = tensors_[index];
  plan::Role role = info.role;
  if (!isPersistentRole(role) || role == plan::Role::RngSeed ||
      role == plan::Role::Step)
    fail("cannot bind '" + name + "': it is " + withArticle(role) +
         " tensor (bind takes parameter, optimizer_state, buffer and lr "
         "tensors)");
  if (value.dtype() != info.dtype || value.shape() != info.shape)
    fail("cannot bind '" + name + "': the plan declares it " +
         typeString(info.dtype, info.shape) + " but the value is " +
         value.typeString());
  HostArray &storage = *impl_->persistent[index];
  if (value.nbytes() != 0)
    std::memcpy(storage.data(), value.data(), value.nbytes());
  if (impl_->cuda)
    impl_->cuda->upload(index, storage);
  impl_->bound[index] = true;
}

std::vector<std::string> Session::functionNames() const {
  std::vector<std::string> names;
  for (const CompiledFunction &function : impl_->functions)
    names.push_back(function.name);
  return names;
}

const HostArray &Session::tensor(const std::string &name) const {
  uint32_t index = indexOf(name);
  if (!impl_->persistent[index])
    fail("'" + name + "' is " + withArticle(tensors_[index].role) +
         " tensor, which the session does not hold");
  if (impl_->cuda)
    impl_->cuda->download(index, *impl_->persistent[index]);
  return *impl_->persistent[index];
}

NamedArrays Session::parameters() const {
  NamedArrays parameters;
  for (uint32_t i = 0; i < tensors_.size(); ++i)
    if (tensors_[i].role == plan::Role::Parameter) {
      if (impl_->cuda)
        impl_->cuda->download(i, *impl_->persistent[i]);
      parameters.emplace_back(tensors_[i].name, *impl_->persistent[i]);
    }
  return parameters;
}

uint32_t Session::indexOfFunction(const std::string &name) const {
  auto it = std::find_if(
      impl_->functions.begin(), impl_->functions.end(),
      [&](const CompiledFunction &function) { return function.name == name; });
  if (it == impl_->functions.end()) {
    std::string available;
    for (const std::string &functionName : functionNames())
      available += (available.empty() ? "" : ", ") + functionName;
    fail("no function '" + name + "' in the plan (it has: " + available + ")");
  }
  return static_cast<uint32_t>(it - impl_->functions.begin());
}

std::map<std::string, HostArray>
Session::run(const std::string &functionName,
             std::map<std::string, HostArray> inputs) {
  uint32_t functionIndex = indexOfFunction(functionName);
  CompiledFunction &function = impl_->functions[functionIndex];
  std::string where = "run '" + function.name + "': ";

  std::vector<uint32_t> expectedInputs;
  std::string expectedList;
  for (uint32_t index : function.inputs)
    if (tensors_[index].role == plan::Role::Input) {
      expectedInputs.push_back(index);
      expectedList += (expectedList.empty() ? "" : ", ") + tensors_[index].name;
    }
  for (const auto &[name, array] : inputs) {
    auto it = impl_->tensorIndex.find(name);
    bool isInput =
        it != impl_->tensorIndex.end() &&
        std::count(expectedInputs.begin(), expectedInputs.end(), it->second);
    if (!isInput) {
      std::string hint = it != impl_->tensorIndex.end() &&
                                 needsBinding(tensors_[it->second].role)
                             ? " ('" + name + "' is " +
                                   withArticle(tensors_[it->second].role) +
                                   " tensor: bind it with Session::bind)"
                             : "";
      fail(where + "'" + name + "' is not an input of the function (its " +
           "inputs are: " + expectedList + ")" + hint);
    }
    const TensorInfo &info = tensors_[it->second];
    if (array.dtype() != info.dtype || array.shape() != info.shape)
      fail(where + "input '" + name + "' is " + array.typeString() +
           " but the plan expects " + typeString(info.dtype, info.shape));
  }
  for (uint32_t index : expectedInputs)
    if (!inputs.count(tensors_[index].name))
      fail(where + "missing input '" + tensors_[index].name + "' (" +
           typeString(tensors_[index].dtype, tensors_[index].shape) + ")");
  for (uint32_t index : function.inputs)
    if (needsBinding(tensors_[index].role) && !impl_->bound[index])
      fail(where + roleName(tensors_[index].role) + " '" +
           tensors_[index].name +
           "' was never bound (use Session::bind or load a checkpoint)");

  // Everything is checked: from here on the run cannot fail, except for
  // allocating the outputs, which changes nothing either (and, on cuda, for
  // errors of the device).
  std::map<uint32_t, HostArray> owned;
  uint64_t runBytes = 0;
  for (auto &[name, array] : inputs) {
    runBytes += array.nbytes();
    owned.emplace(impl_->tensorIndex.at(name), std::move(array));
  }
  for (uint32_t index : function.outputs)
    if (tensors_[index].role == plan::Role::Output) {
      const TensorInfo &info = tensors_[index];
      try {
        auto &array = owned.emplace(index, HostArray(info.dtype, info.shape))
                          .first->second;
        runBytes += array.nbytes();
      } catch (const std::bad_alloc &) {
        throwOutOfMemory("session of plan file '" + planName_ + "'",
                         "output '" + info.name + "' (" +
                             typeString(info.dtype, info.shape) + ")",
                         HostArray::numelOf(info.shape) *
                             dtypeSize(info.dtype));
      }
    }

  feedSessionTensors(tensors_, impl_->persistent, step_, rngState_);
  // A numerics check restores what the run updates in place (Session.h).
  std::map<uint32_t, HostArray> saved;
  if (checkNumerics_ != NumericsCheck::Off) {
    if (impl_->cuda)
      impl_->cuda->saveUpdated(functionIndex);
    for (uint32_t index : function.outputs) {
      if (tensors_[index].role == plan::Role::Input)
        saved.emplace(index, owned.at(index));
      else if (!impl_->cuda && tensors_[index].role != plan::Role::Output)
        saved.emplace(index, *impl_->persistent[index]);
    }
  }
  if (impl_->cuda) {
    impl_->cuda->run(functionIndex, owned, step_, rngState_);
  } else {
    std::vector<void *> data = impl_->dataPointers(tensors_, owned);
    for (CompiledStep &step : function.steps) {
      auto start = std::chrono::steady_clock::now();
      impl_->execute(step, data);
      std::chrono::duration<double> elapsed =
          std::chrono::steady_clock::now() - start;
      step.seconds += elapsed.count();
      ++step.calls;
    }
  }

  if (checkNumerics_ != NumericsCheck::Off) {
    std::vector<std::optional<uint64_t>> firsts =
        findNonFinite(function.outputs, owned);
    if (std::any_of(firsts.begin(), firsts.end(),
                    [](const std::optional<uint64_t> &first) { return first; }))
      reportNonFinite(functionIndex, saved, owned);
  }

  advanceCounters(function, step_, rngState_);
  impl_->peakBytes =
      std::max(impl_->peakBytes, impl_->arenaBytes + impl_->externalBytes +
                                     impl_->lastInputBytes + runBytes);

  std::map<std::string, HostArray> results;
  for (uint32_t index : function.outputs) {
    plan::Role role = tensors_[index].role;
    if (role == plan::Role::Output || role == plan::Role::Input)
      results.emplace(tensors_[index].name, std::move(owned.at(index)));
  }
  function.ran = true;
  if (!impl_->cuda) {
    // What replay() reruns on: the inputs the caller does not get back, and
    // copies of those it does (updated in place).
    function.lastInputs.clear();
    impl_->lastInputBytes -= function.lastInputBytes;
    function.lastInputBytes = 0;
    for (uint32_t index : expectedInputs) {
      const std::string &name = tensors_[index].name;
      auto returned = results.find(name);
      HostArray input = returned != results.end() ? returned->second
                                                  : std::move(owned.at(index));
      function.lastInputBytes += input.nbytes();
      function.lastInputs.emplace(name, std::move(input));
    }
    impl_->lastInputBytes += function.lastInputBytes;
  }
  return results;
}

void Session::setCheckNumerics(NumericsCheck check, std::string inputsFile) {
  checkNumerics_ = check;
  numericsInputsFile_ = std::move(inputsFile);
}

std::vector<std::optional<uint64_t>>
Session::findNonFinite(const std::vector<uint32_t> &tensors,
                       std::map<uint32_t, HostArray> &owned) {
  if (impl_->cuda)
    return impl_->cuda->findNonFinite(tensors, checkNumerics_);
  std::vector<void *> data = impl_->dataPointers(tensors_, owned);
  std::vector<std::optional<uint64_t>> firsts;
  for (uint32_t index : tensors) {
    const TensorInfo &info = tensors_[index];
    firsts.push_back(firstNonFinite(data[index], HostArray::numelOf(info.shape),
                                    info.dtype, checkNumerics_));
  }
  return firsts;
}

void Session::reportNonFinite(uint32_t functionIndex,
                              const std::map<uint32_t, HostArray> &saved,
                              std::map<uint32_t, HostArray> &owned) {
  CompiledFunction &function = impl_->functions[functionIndex];
  auto restore = [&] {
    if (impl_->cuda)
      impl_->cuda->restoreUpdated(functionIndex);
    for (const auto &[index, array] : saved)
      (tensors_[index].role == plan::Role::Input ? owned.at(index)
                                                 : *impl_->persistent[index]) =
          array;
  };
  restore();

  // The same run again, step by step, checking the tensors it reads and
  // then what each step writes.
  struct Hit {
    std::optional<size_t> step;
    uint32_t tensor;
    uint64_t element;
  };
  auto firstIn = [&](const std::vector<uint32_t> &tensors,
                     std::optional<size_t> step) -> std::optional<Hit> {
    std::vector<std::optional<uint64_t>> firsts = findNonFinite(tensors, owned);
    for (size_t i = 0; i < tensors.size(); ++i)
      if (firsts[i])
        return Hit{step, tensors[i], *firsts[i]};
    return std::nullopt;
  };
  std::vector<void *> data;
  if (impl_->cuda)
    impl_->cuda->prepareSteps(functionIndex, owned, step_, rngState_);
  else
    data = impl_->dataPointers(tensors_, owned);
  std::optional<Hit> hit = firstIn(function.inputs, std::nullopt);
  for (size_t i = 0; !hit && i < function.writes.size(); ++i) {
    if (impl_->cuda)
      impl_->cuda->runStep(functionIndex, i);
    else
      impl_->execute(function.steps[i], data);
    hit = firstIn(function.writes[i], i);
  }
  // The value, read before the second restore can overwrite it.
  HostArray value(DType::F64, {});
  if (hit) {
    const TensorInfo &info = tensors_[hit->tensor];
    HostArray element(info.dtype, {});
    uint64_t offset = hit->element * dtypeSize(info.dtype);
    if (impl_->cuda)
      impl_->cuda->readBytes(hit->tensor, offset, element.data(),
                             element.nbytes());
    else
      std::memcpy(element.data(),
                  static_cast<const uint8_t *>(data[hit->tensor]) + offset,
                  element.nbytes());
    value.setDouble(0, element.getDouble(0));
  }
  restore();

  std::string where = "session of plan file '" + planName_ + "': ";
  if (!hit)
    fail("run '" + function.name + "' at training step " +
         std::to_string(step_) + ": its outputs held a " +
         (checkNumerics_ == NumericsCheck::NaN ? "NaN" : "non-finite value") +
         " but the same run step by step wrote none (a nondeterministic "
         "step?); the session is as before the run");
  NonFiniteReport report;
  report.function = function.name;
  report.trainingStep = step_;
  report.step = hit->step;
  if (hit->step) {
    // stats() lists every function's steps in plan order, with their names
    // and locations.
    size_t index = 0;
    for (const StepTiming &step : stats().steps)
      if (step.function == function.name && index++ == *hit->step) {
        report.stepName = step.name;
        report.location = step.location;
      }
  }
  const TensorInfo &info = tensors_[hit->tensor];
  report.tensor = info.name;
  report.dtype = info.dtype;
  report.shape = info.shape;
  report.element = hit->element;
  report.value = nonFiniteName(value.getDouble(0));
  if (!numericsInputsFile_.empty()) {
    NamedArrays inputs;
    for (uint32_t index : function.inputs) {
      const std::string &name = tensors_[index].name;
      inputs.emplace_back(name, tensors_[index].role == plan::Role::Input
                                    ? owned.at(index)
                                    : tensor(name));
    }
    try {
      saveSafetensors(numericsInputsFile_, inputs);
      report.inputsFile = numericsInputsFile_;
    } catch (const Error &error) { // the report matters more
      report.inputsError = error.what();
    }
  }
  throw NonFiniteError(where, std::move(report));
}

void Session::replay(const std::string &functionName, int times) {
  uint32_t functionIndex = indexOfFunction(functionName);
  CompiledFunction &function = impl_->functions[functionIndex];
  std::string where = "replay '" + function.name + "': ";
  if (times < 0)
    fail(where + "times is " + std::to_string(times) + ", not a count");
  if (!function.ran)
    fail(where + "the function has not run yet (replay reruns it on the "
                 "inputs of its last run)");
  for (int i = 0; i < times; ++i) {
    if (!impl_->cuda) {
      run(function.name, function.lastInputs);
      continue;
    }
    feedSessionTensors(tensors_, impl_->persistent, step_, rngState_);
    impl_->cuda->replay(functionIndex, step_, rngState_);
    advanceCounters(function, step_, rngState_);
  }
}

void Session::synchronize() {
  if (impl_->cuda)
    impl_->cuda->synchronize();
}

void Session::setProfiling(bool on) {
  if (impl_->cuda)
    impl_->cuda->setProfiling(on);
}

SessionStats Session::stats() const {
  if (impl_->cuda)
    return impl_->cuda->stats();
  SessionStats stats;
  for (const CompiledFunction &function : impl_->functions)
    for (const CompiledStep &step : function.steps)
      stats.steps.push_back(
          {function.name, step.name, step.location, step.calls, step.seconds});
  stats.arenaBytes = impl_->arenaBytes;
  stats.externalBytes = impl_->externalBytes;
  stats.peakBytes = impl_->peakBytes;
  return stats;
}

void Session::resetStats() {
  if (impl_->cuda)
    return impl_->cuda->resetStats();
  for (CompiledFunction &function : impl_->functions)
    for (CompiledStep &step : function.steps) {
      step.calls = 0;
      step.seconds = 0;
    }
}

} // namespace genesis
