//===- DiagnosticCapture.h - Collect MLIR errors as text --------*- C++ -*-===//
//
// Tools and the frontend turn MLIR diagnostics into one-line genesis::Error
// messages ("file:line:col: message") instead of letting MLIR print them.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_DIALECT_UTILS_DIAGNOSTICCAPTURE_H
#define GENESIS_DIALECT_UTILS_DIAGNOSTICCAPTURE_H

#include "dialect/IR/GenesisDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <string>
#include <vector>

namespace genesis {

/// While alive, records the error diagnostics of a context (and swallows
/// them) as "location: message" lines.
class DiagnosticCapture {
public:
  explicit DiagnosticCapture(mlir::MLIRContext *context)
      : handler(context, [this](mlir::Diagnostic &diagnostic) {
          if (diagnostic.getSeverity() == mlir::DiagnosticSeverity::Error)
            errors.push_back(describeLocation(diagnostic.getLocation()) + ": " +
                             diagnostic.str());
          return mlir::success();
        }) {}

  /// The first error, or `fallback` when none was reported.
  std::string firstError(const std::string &fallback) const {
    return errors.empty() ? fallback : errors.front();
  }

private:
  std::vector<std::string> errors;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace genesis

#endif // GENESIS_DIALECT_UTILS_DIAGNOSTICCAPTURE_H
