//===- Provenance.cpp - Where a plan step's ops came from -----------------===//

#include "dialect/IR/Provenance.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <vector>

using namespace mlir;

namespace genesis {

namespace {

/// Walks a location tree, carrying the innermost op name and the phase seen
/// on the way down, and records one entry per leaf.
class ProvenanceCollector {
public:
  explicit ProvenanceCollector(StringRef fallbackOp)
      : fallbackOp_(fallbackOp) {}

  void visit(Location loc, StringRef op, StringRef phase) {
    if (auto fused = dyn_cast<FusedLoc>(loc)) {
      for (Location member : fused.getLocations())
        visit(member, op, phase);
      return;
    }
    if (auto named = dyn_cast<NameLoc>(loc)) {
      StringRef name = named.getName().strref();
      // A VJP's ops are named after the forward op they differentiate.
      if (name.consume_front(kBackwardLocationPrefix))
        visit(named.getChildLoc(), name, "backward of ");
      else if (name == kOptimizerLocationName)
        visit(named.getChildLoc(), op, "optimizer ");
      else if (phase.empty()) // the innermost name: the op a pass decomposed
        visit(named.getChildLoc(), name, phase);
      else
        visit(named.getChildLoc(), op, phase);
      return;
    }
    if (auto call = dyn_cast<CallSiteLoc>(loc)) {
      visit(call.getCallee(), op, phase);
      return;
    }
    std::string where;
    if (auto file = dyn_cast<FileLineColLoc>(loc))
      where = (file.getFilename().strref() + ":" + Twine(file.getLine())).str();
    record(where, op.empty() ? fallbackOp_ : op, phase);
  }

  std::string text() const {
    std::string joined;
    for (size_t i = 0; i < entries_.size() && i < kProvenanceEntries; ++i)
      joined += (i ? "; " : "") + entries_[i];
    if (entries_.size() > kProvenanceEntries)
      joined += "; and " +
                std::to_string(entries_.size() - kProvenanceEntries) + " more";
    return joined;
  }

private:
  void record(const std::string &where, StringRef op, StringRef phase) {
    std::string entry =
        where + (where.empty() ? "" : " ") + phase.str() + op.str();
    if (!llvm::is_contained(entries_, entry))
      entries_.push_back(std::move(entry));
  }

  StringRef fallbackOp_;
  std::vector<std::string> entries_;
};

} // namespace

std::string describeProvenance(Operation *op) {
  ProvenanceCollector collector(op->getName().getStringRef());
  collector.visit(op->getLoc(), "", "");
  return collector.text();
}

Location memberLocation(Operation *op) {
  Location loc = op->getLoc();
  if (isa<FusedLoc>(loc) || op->getNumRegions() != 0)
    return loc;
  // Already named after the op it came from (a library call after its
  // matmul): op names hold the dialect's dot.
  if (auto named = dyn_cast<NameLoc>(loc)) {
    StringRef name = named.getName().strref();
    if (name.contains('.') && !name.starts_with(kBackwardLocationPrefix))
      return loc;
  }
  return NameLoc::get(
      StringAttr::get(op->getContext(), op->getName().getStringRef()), loc);
}

} // namespace genesis
