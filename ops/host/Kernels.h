//===- KvCache.h - What the paged KV-cache operators share -------*- C++
//-*-===//
///
/// \file
/// Host-side helpers of the operators that move KV-cache rows
/// (ScatterPaKvCache, GatherPaKvCache, and the paged paths of the attention
/// operators): the dtype lists of the specs, the FRACTAL_NZ strip width,
/// the DSL kinds that carry an element of a given width, collapsing a view's
/// axes into the 2-D/3-D views the kernels take, and fetching a compiled
/// kernel as a host::Status.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_COMMON_KVCACHE_H
#define TILEJIT_OPS_COMMON_KVCACHE_H

#include "jit/Compiler.h"
#include "ops/host/Executor.h"
#include "ops/host/Status.h"
#include "ops/host/TensorView.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilejit::ops {

/// The twelve KV element types of the specs ("L12"): FLOAT16, FLOAT,
/// BFLOAT16, INT8, UINT8, INT16, UINT16, INT32, UINT32, HIFLOAT8,
/// FLOAT8_E5M2, FLOAT8_E4M3FN.
bool isKvDataType(host::DataType type);
/// "FLOAT16, FLOAT, ..." (for messages).
const char *kvDataTypeList();
/// INT32 or INT64.
bool isIndexDataType(host::DataType type);

/// Elements per 32-byte FRACTAL_NZ strip: 32 / sizeof(type).
int64_t nzStripElems(host::DataType type);

/// Whether a gather writes its outputs around the caches (non-temporal
/// stores): when they total 16 MiB or more. Outputs that size do not stay in
/// the cache for the operator that reads them next (a core complex's L3
/// slice is 32 MiB on the development machine, shared; the system reports
/// the whole socket's), and a store that does not first read its line, as
/// an ordinary store must, saves a third of the traffic.
bool streamsOutput(int64_t outputBytes);

/// The unsigned DSL kind of an element of `bytes` bytes ("u8", "u16",
/// "u32"): byte-exact moves specialise on the width only.
const char *copyKind(int64_t bytes);
/// "i32" or "i64" for an index dtype.
const char *indexKind(host::DataType type);
/// The DSL kind of a value dtype: "f16", "bf16", "f32", "i8", else "u8".
const char *valueKind(host::DataType type);
/// The argument element type of a DSL kind ("f16", "u8", ...) an operator
/// specialised a kernel with.
rt::ElemType elemType(const char *kind);
/// The argument element type of a tensor of `type` (bool as u8, its bytes).
rt::ElemType elemType(host::DataType type);

/// A view re-expressed with fewer axes (for rt::ArgPack::tensor).
struct FlatView {
  void *data = nullptr;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
};

/// Merges the axes of `view` in groups: `groups` lists the number of
/// consecutive source axes per result axis (they must add up to the rank).
/// A group merges only if its axes are nested (stride[k] == size[k+1] *
/// stride[k+1], size-1 axes ignored); otherwise nullopt.
std::optional<FlatView> collapse(const host::TensorView &view,
                                 const std::vector<int> &groups);

/// The process's compiler for the host, or 561003 saying why there is none
/// (a bad TILEJIT_TARGET or TILEJIT_L1D_BYTES, a CPU without AVX2): an
/// operator reports it rather than abort its caller.
host::Status hostCompiler(jit::Compiler *&compiler);

/// A compiled kernel for an operator, or 561003 naming the kernel and the
/// compiler's message. `use`, if given, receives its key and compile time.
host::Status getKernel(const jit::KernelSource &source,
                          const std::string &kernel,
                          const jit::Specialization &spec,
                          std::shared_ptr<const jit::CompiledKernel> &out,
                          host::KernelUse *use = nullptr);

/// Launches `kernel` and turns a launch error into 561000 naming `what`.
host::Status launchKernel(const jit::CompiledKernel &kernel,
                             const rt::ArgPack &args, const char *what);

/// One prepared launch of a kernel: phase 1 fills it, phase 2 runs it.
struct KernelLaunch {
  std::shared_ptr<const jit::CompiledKernel> kernel;
  rt::ArgPack args;
  host::KernelUse use; ///< the kernel's key and whether it was compiled
  /// Memory the kernel writes besides its outputs (`args` point into it),
  /// if any: each concurrent run gets its own (RunStates).
  std::vector<int64_t> scratch;
};

/// Makes `launch` the executor's phase 2 (errors name `op`) and records its
/// kernel use. Runs share `launch` (read only) unless it has scratch.
void setKernelLaunch(host::Executor &executor,
                     std::shared_ptr<const KernelLaunch> launch, const char *op);

/// The one-call C++ API of an operator: phase 1 (`prepare`), then phase 2
/// with the workspace phase 1 asked for. It trusts its views as C++ code
/// built them (the C API checks every descriptor first, in prepareOp; the
/// validation tests reshape views here to reach each shape rule).
template <typename Args>
host::Status prepareAndRun(const Args &args,
                              host::Status (*prepare)(const Args &,
                                                         host::Executor &)) {
  host::Executor executor(Args::kOpName);
  if (host::Status s = prepare(args, executor); !s)
    return s;
  // Uninitialised, as a device workspace is: no kernel reads workspace it
  // did not write, and zero-filling megabytes of it would cost more than
  // some calls.
  const size_t size = executor.workspaceSize();
  auto workspace = std::make_unique_for_overwrite<unsigned char[]>(size);
  return executor.run(host::LaunchContext{workspace.get(), size});
}

/// The cores a launch may use (OpenMP's count, capped by
/// TILEJIT_NUM_THREADS).
int64_t launchThreads();

/// The number of programs a grid-stride kernel should use for `work` units:
/// enough to keep every core busy, at most `work`, at least 1.
int64_t programsFor(int64_t work);

/// Bytes one program should move at least before another is worth a thread
/// (a fork and join cost microseconds, more than a decode-sized call moves).
inline constexpr int64_t kBytesPerProgram = 64 << 10;

/// programsFor over `chunks` independent units of work moving `bytes` in
/// all: one program (no fork) for decode-sized calls.
inline int64_t programsForBytes(int64_t chunks, int64_t bytes) {
  return programsFor(std::min(chunks, bytes / kBytesPerProgram));
}

} // namespace tilejit::ops

#endif
