# lit configuration of the Genesis FileCheck tests. The layout of tests/lit
# mirrors the source tree (dialect/IR, dialect/Evaluator, tools, ...).
import os
import sys

import lit.formats

config.name = "Genesis"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.genesis_obj_root, "tests", "lit")

config.environment["PATH"] = os.pathsep.join(
    [config.genesis_tools_dir, config.llvm_tools_dir, "/usr/lib/llvm-22/bin",
     config.environment.get("PATH", os.environ.get("PATH", ""))])
config.substitutions.append(("%python", sys.executable))
config.substitutions.append(("%genesis_src", config.genesis_src_root))

# The CUDA pipeline compiles cubins with the toolkit's ptxas.
if os.access(os.path.join(os.environ.get("GENESIS_CUDA_PATH", "/usr/local/cuda"),
                          "bin", "ptxas"), os.X_OK):
    config.available_features.add("ptxas")
