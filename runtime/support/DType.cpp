//===- DType.cpp - Element types of host tensors --------------------------===//

#include "runtime/support/DType.h"

#include <cassert>

namespace genesis {

namespace {
constexpr DType kAllDTypes[] = {DType::F32, DType::F16, DType::BF16, DType::F64,
                                DType::I1,  DType::I32, DType::I64};
} // namespace

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F64:
    return "f64";
  case DType::I1:
    return "i1";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  }
  assert(false && "unknown DType");
  return "?";
}

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::I1:
    return 1;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  }
  assert(false && "unknown DType");
  return 0;
}

std::optional<DType> parseDType(std::string_view name) {
  for (DType dtype : kAllDTypes)
    if (name == dtypeName(dtype))
      return dtype;
  return std::nullopt;
}

bool isFloatDType(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16 ||
         dtype == DType::F64;
}

bool isIntegerDType(DType dtype) {
  return dtype == DType::I1 || dtype == DType::I32 || dtype == DType::I64;
}

} // namespace genesis
