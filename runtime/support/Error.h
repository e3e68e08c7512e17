//===- Error.h - Genesis runtime error type ---------------------*- C++ -*-===//
//
// Every recoverable failure in the Genesis runtime (bad files, mismatched
// shapes, unsupported dtypes) is reported by throwing genesis::Error with a
// one-line message that names the problem and where it happened.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_ERROR_H
#define GENESIS_RUNTIME_ERROR_H

#include <stdexcept>

namespace genesis {

class Error : public std::runtime_error {
public:
  using runtime_error::runtime_error;
};

} // namespace genesis

#endif // GENESIS_RUNTIME_ERROR_H
