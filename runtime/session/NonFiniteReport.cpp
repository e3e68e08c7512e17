//===- NonFiniteReport.cpp - What a numerics check found ------------------===//

#include "runtime/session/Session.h"

namespace genesis {

std::string NonFiniteReport::phase() const {
  // Provenance entries (dialect/IR/Provenance.h): "<file:line> <op>",
  // "<file:line> backward of <op>", "optimizer <op>".
  if (location.find("backward of ") != std::string::npos)
    return "backward";
  if (location.rfind("optimizer ", 0) == 0 ||
      location.find("; optimizer ") != std::string::npos)
    return "optimizer";
  return location.empty() ? "" : "forward";
}

std::string NonFiniteReport::message() const {
  std::string text = "run '" + function + "' at training step " +
                     std::to_string(trainingStep) + ": ";
  std::string what = value + " in '" + tensor + "' (" + dtypeName(dtype) +
                     shapeString(shape) + ") at " +
                     elementPosition(shape, element);
  if (!step) {
    text += "the function's input " + what + ", before any step ran";
  } else {
    std::string phaseText = phase();
    text += "step #" + std::to_string(*step) + " (" + stepName + ")" +
            (phaseText.empty() ? "" : ", " + phaseText) + ", wrote " + what;
    if (!location.empty())
      text += "; its ops: " + location;
  }
  if (!inputsFile.empty())
    text += "; the run's inputs are in '" + inputsFile + "'";
  if (!inputsError.empty())
    text += "; its inputs could not be written: " + inputsError;
  return text;
}

NonFiniteError::NonFiniteError(const std::string &where, NonFiniteReport report)
    : Error(where + report.message()), report_(std::move(report)) {}

} // namespace genesis
