//===- ArrayIO.h - Reading and writing .npy and .safetensors ----*- C++ -*-===//
//
// Loaders trust nothing in the file: every length, offset, shape and dtype is
// checked against the file's actual size before any data is read, and any
// inconsistency throws genesis::Error naming the file (and tensor) and what
// was expected versus found. A missing file gives
// "cannot open '<path>': <strerror>".
//
// Savers are atomic (runtime/formats/AtomicFile.h): they write
// "<path>.tmp.<pid>", fsync it and rename it over the target, so a failed save
// never damages an existing file.
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_ARRAYIO_H
#define GENESIS_RUNTIME_ARRAYIO_H

#include "runtime/support/HostArray.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace genesis {

/// Reads a NumPy .npy file (format version 1.0, 2.0 or 3.0). Supported descrs
/// are '<f2', '<f4', '<f8', '<i4', '<i8' and '|b1' (also '?'); big-endian
/// data, Fortran order and other dtypes are rejected.
HostArray loadNpy(const std::string &path);

/// Writes format version 1.0, or 2.0 when the header needs more than 64 KiB.
/// bf16 has no .npy dtype, so saving a bf16 array throws.
void saveNpy(const std::string &path, const HostArray &array);

using NamedArrays = std::vector<std::pair<std::string, HostArray>>;

/// Reads every tensor of a .safetensors file, in the order of their data
/// offsets. When `metadata` is non-null it receives the "__metadata__" string
/// map (empty when the file has none).
NamedArrays
loadSafetensors(const std::string &path,
                std::map<std::string, std::string> *metadata = nullptr);

/// Reads and validates only the header of a .safetensors file and returns its
/// "__metadata__" map.
std::map<std::string, std::string>
loadSafetensorsMetadata(const std::string &path);

/// Writes the tensors contiguously in the given order; names must be unique
/// and must not be "__metadata__".
void saveSafetensors(const std::string &path, const NamedArrays &arrays,
                     const std::map<std::string, std::string> &metadata = {});

/// The result files of a tool's `-o` options: a .safetensors file receives
/// every result, a .npy file the next one in order. checkResultFiles refuses
/// (naming the file) an unknown extension, more .npy files than `count`
/// results, a file given twice, a directory and a file whose directory does
/// not exist; tools call it before they run, so such a run writes nothing.
/// (A write can still fail later, e.g. on a full disk; each file is written
/// atomically.) `owner` names the function in messages.
void checkResultFiles(const std::vector<std::string> &files, size_t count,
                      const std::string &owner);
/// Checks the files as checkResultFiles does, then writes `results` to them.
void writeResultFiles(const std::vector<std::string> &files,
                      const NamedArrays &results, const std::string &owner);

} // namespace genesis

#endif // GENESIS_RUNTIME_ARRAYIO_H
