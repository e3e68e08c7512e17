//===- CudaApi.cpp - The CUDA driver and cuBLASLt, loaded at run time -----===//

#include "runtime/cuda/CudaApi.h"
#include "runtime/support/Error.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <type_traits>

namespace genesis::cuda {

namespace {

struct LoadedApi {
  Api api;
  /// Why loading failed; empty when it succeeded.
  std::string unavailable;
};

std::string lastLoaderError() {
  const char *message = dlerror();
  return message ? message : "no reason given";
}

std::string resultNameWith(const Api &api, CUresult result) {
  const char *name = nullptr;
  const char *description = nullptr;
  if (api.cuGetErrorName(result, &name) != CUDA_SUCCESS || !name)
    return "CUresult " + std::to_string(int(result));
  api.cuGetErrorString(result, &description);
  return std::string(name) +
         (description ? " (" + std::string(description) + ")" : "");
}

std::string versionString(int version) {
  return std::to_string(version / 1000) + "." +
         std::to_string(version % 1000 / 10);
}

/// Fills `loaded.api`, or says in `loaded.unavailable` why it cannot.
void load(LoadedApi &loaded) {
  Api &api = loaded.api;
  // Neither library is ever unloaded: sessions come and go, and both keep
  // process-wide state that must outlive them.
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!driver) {
    loaded.unavailable = "the CUDA driver library libcuda.so.1 cannot be "
                         "loaded (" +
                         lastLoaderError() + ")";
    return;
  }
  // The first symbol `library` lacks.
  std::string missing;
  void *library = driver;
  auto resolve = [&](auto &function, const char *symbol) {
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(
        dlsym(library, symbol));
    if (!function && missing.empty())
      missing = symbol;
  };
#define GENESIS_RESOLVE(symbol) resolve(api.symbol, #symbol);
  GENESIS_CUDA_DRIVER_FUNCTIONS(GENESIS_RESOLVE)
  if (!missing.empty()) {
    loaded.unavailable = "libcuda.so.1 has no " + missing +
                         " (the driver is older than this runtime's CUDA " +
                         versionString(CUDA_VERSION) + ")";
    return;
  }
  if (CUresult result = api.cuInit(0); result != CUDA_SUCCESS) {
    loaded.unavailable = "cuInit failed: " + resultNameWith(api, result);
    return;
  }
  int version = 0;
  if (api.cuDriverGetVersion(&version) != CUDA_SUCCESS ||
      version < CUDA_VERSION) {
    loaded.unavailable = "the driver supports CUDA " + versionString(version) +
                         " but the runtime was built for CUDA " +
                         versionString(CUDA_VERSION);
    return;
  }
  int devices = 0;
  if (CUresult result = api.cuDeviceGetCount(&devices);
      result != CUDA_SUCCESS || devices == 0) {
    loaded.unavailable =
        "the driver sees no CUDA device" +
        (result != CUDA_SUCCESS
             ? " (cuDeviceGetCount failed: " + resultNameWith(api, result) + ")"
             : std::string());
    return;
  }

  // The library path first (where a machine may put its own copy), then the
  // toolkit the runtime was built against.
  std::string blasLtName = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
  void *blasLt = dlopen(blasLtName.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!blasLt) {
    std::string fromPath = lastLoaderError();
    blasLt = dlopen((GENESIS_CUDA_LIBRARY_DIR "/" + blasLtName).c_str(),
                    RTLD_NOW | RTLD_LOCAL);
    if (!blasLt) {
      loaded.unavailable =
          "cuBLASLt cannot be loaded: " + fromPath + "; " + lastLoaderError();
      return;
    }
  }
  library = blasLt;
  GENESIS_CUBLASLT_FUNCTIONS(GENESIS_RESOLVE)
#undef GENESIS_RESOLVE
  if (!missing.empty())
    loaded.unavailable = blasLtName + " has no " + missing;
}

const LoadedApi &loadedApi() {
  static const LoadedApi loaded = [] {
    LoadedApi result;
    load(result);
    return result;
  }();
  return loaded;
}

} // namespace

const Api &api(const std::string &where) {
  const LoadedApi &loaded = loadedApi();
  if (!loaded.unavailable.empty())
    throw Error(where + ": cannot run a cuda plan: " + loaded.unavailable);
  return loaded.api;
}

std::string unavailableReason() { return loadedApi().unavailable; }

bool tuningEnabled() {
  const char *setting = std::getenv("GENESIS_TUNING");
  return !deterministicMode() && (!setting || std::strcmp(setting, "0") != 0);
}

bool deterministicMode() {
  const char *setting = std::getenv("GENESIS_DETERMINISTIC");
  return setting && std::strcmp(setting, "1") == 0;
}

std::string resultName(CUresult result) {
  return resultNameWith(loadedApi().api, result);
}

void check(CUresult result, const char *call, const std::string &what) {
  if (result != CUDA_SUCCESS)
    throw Error(what + ": " + call + " failed: " + resultName(result));
}

void check(cublasStatus_t status, const char *call, const std::string &what) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return;
  const Api &api = loadedApi().api;
  throw Error(what + ": " + call +
              " failed: " + api.cublasLtGetStatusName(status) + " (" +
              api.cublasLtGetStatusString(status) + ")");
}

} // namespace genesis::cuda
