//===- Compiler.h - DSL source + specialisation -> callable kernel -*- C++ -*-===//
///
/// \file
/// The one room that chains the pipeline: parse and check the DSL (dsl/),
/// lower to Tile IR, run the Tile IR passes (codegen/passes), lower to LLVM IR
/// and optimise (codegen/llvm), and compile with ORC LLJIT for the host CPU.
/// Compiled kernels are cached by `TilingKey`: in memory (a hit costs well
/// under a microsecond; N threads asking for one new key compile it once) and,
/// where enabled, on disk.
///
/// Typical use (ops/ and tests):
/// \code
///   static const KernelSource src = ops::embeddedKernel("ops/samples/softmax.tile");
///   Specialization spec{{"T", ir::ScalarKind::F16}, {"BN", 1024}};  // or as text
///   auto c = Compiler::instance(TargetLevel::Host);             // Expected<Compiler &>
///   auto k = c->get(src, "softmax", spec);                       // Expected<KernelRef>
///   if (!k) return k.takeError();
///   rt::ArgPack args; args.tensor(x, {M, N}).tensor(y, {M, N}); // x, y: float*
///   if (auto err = k->kernel->launch(args)) ...
/// \endcode
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_JIT_COMPILER_H
#define TILEJIT_JIT_COMPILER_H

#include "runtime/Runtime.h"
#include "dsl/sema/Specialization.h"
#include "jit/TilingKey.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace tilejit::dsl {
class ParsedFile; // dsl/Frontend.h
}

namespace tilejit::jit {

/// A DSL source text with the name diagnostics use for it. `hash` is computed
/// once at construction, so building keys never rehashes the text.
class KernelSource {
public:
  KernelSource(std::string name, std::string text);
  // Built-in kernels embedded at build time come from ops/Embedded.h.
  /// Reads a regular file of at most kMaxSourceBytes; anything else (missing,
  /// unreadable, a directory, a FIFO, too large) is an error naming the path
  /// and the reason.
  static llvm::Expected<KernelSource> fromFile(const std::string &path);
  static constexpr int64_t kMaxSourceBytes = 16 << 20;

  const std::string &name() const { return name_; }
  const std::string &text() const { return text_; }
  uint64_t hash() const { return hash_; }

  /// The source parsed: once per process and text (by its hash), whichever
  /// compiler asks first; a syntax error is an error holding the rendered
  /// diagnostics (a failed parse is not kept).
  llvm::Expected<std::shared_ptr<const dsl::ParsedFile>> parsed() const;
  /// How many parses `parsed` has run in this process (tests count them).
  static uint64_t parseCount();

private:
  std::string name_, text_;
  uint64_t hash_;
};

/// Compile-time parameter values by name, typed ({"T", ir::ScalarKind::F16},
/// {"D", 128}, {"CAUSAL", true}, {"LAYOUT", SpecValue::enumerator("BNSD")})
/// or, from text, {"D", "128"}: see dsl/sema/Specialization.h. `makeKey` binds it
/// to the kernel's declaration; the key holds the bound value.
using Specialization = dsl::Specialization;
using SpecValue = dsl::SpecValue;

/// The dtype value of a launch element type (rt::ElemType lists the DSL's
/// scalar kinds in their order), for operators' host code.
inline SpecValue dtypeValue(rt::ElemType t) {
  return SpecValue(static_cast<ir::ScalarKind>(t));
}

/// Wall time of each stage of one compilation, in milliseconds.
struct StageTimes {
  double parse = 0, sema = 0, tilePasses = 0, codegen = 0, llvmOpt = 0,
         machineCode = 0, link = 0, total = 0;
};

class KernelJIT;
class KernelCode;
class DiskCache;

/// A kernel compiled for one tiling key; immutable and shareable.
class CompiledKernel {
public:
  const TilingKey &key() const { return key_; }
  rt::ProgramFn program() const { return program_; }
  rt::GridFn grid() const { return grid_; }
  int64_t scratchBytes() const { return scratchBytes_; }
  const StageTimes &times() const { return times_; }
  /// One message per shape constraint, in the grid function's numbering.
  const std::vector<std::string> &constraintMessages() const {
    return constraintMessages_;
  }

  /// The runtime parameters, in declaration order.
  const std::vector<rt::ParamSig> &signature() const { return signature_; }
  /// Bytes of machine code and data mapped for this kernel (whole pages):
  /// what it counts against the in-memory tier's bound. The code stays
  /// mapped while this object lives, in the cache or not.
  uint64_t codeBytes() const;

  /// Checks `args` against the signature (count; tensor or scalar; element
  /// type; rank; the parameter's name where the entry is named; a tensor with
  /// elements has data and no negative size) and the shape constraints: a
  /// mismatch is an error naming the argument and nothing runs. Then computes
  /// the grid and runs every program across cores (`TILEJIT_NUM_THREADS`
  /// caps them; `numThreads` > 0 caps them further for this call).
  llvm::Error launch(const rt::ArgPack &args, int numThreads = 0) const;
  /// The argument check alone.
  llvm::Error check(const rt::ArgPack &args) const;

  // Construction is the compiler's business.
  CompiledKernel(TilingKey key, std::shared_ptr<const KernelCode> code, rt::ProgramFn program,
                 rt::GridFn grid, int64_t scratchBytes, StageTimes times,
                 std::vector<std::string> constraintMessages,
                 std::vector<rt::ParamSig> signature)
      : key_(std::move(key)), code_(std::move(code)), program_(program), grid_(grid),
        scratchBytes_(scratchBytes), times_(times),
        constraintMessages_(std::move(constraintMessages)),
        signature_(std::move(signature)) {}

private:
  llvm::Error run(void *const *args, int numThreads) const;

  TilingKey key_;
  std::shared_ptr<const KernelCode> code_; ///< keeps program_ and grid_ mapped
  rt::ProgramFn program_;
  rt::GridFn grid_;
  int64_t scratchBytes_;
  StageTimes times_;
  std::vector<std::string> constraintMessages_;
  std::vector<rt::ParamSig> signature_;
};

/// What `Compiler::get` returns: the kernel, and whether this request compiled
/// it (false when it was served from a cache).
struct KernelRef {
  std::shared_ptr<const CompiledKernel> kernel;
  bool compiled = false;
  const CompiledKernel *operator->() const { return kernel.get(); }
};

struct CompileOptions {
  /// LLVM optimisation level 0..3.
  unsigned optLevel = 3;
  /// Bounds-checked code (docs/dsl.md, "Debug mode"); unset: TILEJIT_DEBUG.
  std::optional<bool> debug;
};

/// Counters of the kernel cache.
struct CacheStats {
  uint64_t entries = 0, memoryHits = 0, diskHits = 0, compiles = 0;
  /// The in-memory tier: bytes of code and data its entries map, its bound
  /// (TILEJIT_MEMORY_CACHE_MAX_BYTES) and the entries evicted to keep it.
  uint64_t memoryBytes = 0, memoryMaxBytes = 0, evictions = 0;
  /// Bytes mapped for every kernel alive, cached or held only by handles.
  uint64_t mappedBytes = 0;
};

/// Which stages to dump, from `TILEJIT_DUMP`; see DumpStage.
enum class DumpStage : unsigned {
  Ast = 1, Tile = 2, TileOpt = 4, Llvm = 8, LlvmOpt = 16, Asm = 32,
  /// Not a stage's text: where the compile's time went, stage by stage and
  /// LLVM pass by pass (dump only).
  Passes = 64
};

/// The instruction set generated code may use. `Host` means the host CPU's
/// own features, or the level `TILEJIT_TARGET=avx2|avx512` names.
enum class TargetLevel { Host, Avx2, Avx512 };

/// Asks Linux for the AMX tile data state (ARCH_REQ_XCOMP_PERM,
/// XFEATURE_XTILEDATA), which a process needs before any of its threads
/// executes an AMX instruction: once per process (the compiler asks when it
/// picks the host target). False where it is refused or not Linux/x86-64.
bool requestAmxPermission();

class Compiler {
  /// Prints "tilejit: error: <err>" on stderr and exits with status 1
  /// (instance(), inline like it).
  [[noreturn]] static void exitWith(llvm::Error err) {
    llvm::errs() << "tilejit: error: " << llvm::toString(std::move(err)) << "\n";
    std::exit(1);
  }

public:
  /// For programs and tests only: the host's compiler (or the one
  /// `TILEJIT_TARGET` names), and the process ends with the reason when there
  /// is none (a bad TILEJIT_TARGET, a CPU without AVX2). Defined inline here,
  /// so it is compiled into the programs that call it and never into
  /// libtilejit.so: the library's own code asks instance(TargetLevel::Host)
  /// and returns the error (scripts/check-layering.sh checks that).
  static Compiler &instance() {
    auto c = instance(TargetLevel::Host);
    if (!c)
      exitWith(c.takeError());
    return *c;
  }
  /// The process-wide compiler for a forced level (one per level), so tests
  /// exercise the AVX2 and AVX-512 paths in one process. Asking for AVX-512 on
  /// a CPU without it is an error.
  static llvm::Expected<Compiler &> instance(TargetLevel level);
  /// A compiler that only prints code (`emit`) for `level`, whether or not
  /// this CPU can run it (`tile-opt --target avx512` on an AVX2 machine). Its
  /// `get` refuses to JIT code the host cannot run.
  static llvm::Expected<Compiler &> forEmission(TargetLevel level);
  /// Whether this CPU can run code of `level`.
  static bool hostSupports(TargetLevel level);

  /// `spec` bound to kernel `kernel`'s declaration: the typed, canonical
  /// value a key holds (text parsed by each parameter's kind, defaults
  /// applied, sorted, hashed). The path from text (the command line, Python,
  /// the public API) to a typed value; an error names the parameter and the
  /// rule, with the declaration's file:line:col.
  llvm::Expected<Specialization> specialize(const KernelSource &source,
                                            const std::string &kernel,
                                            const Specialization &spec) const;

  /// The tiling key for this request, without compiling anything. Each
  /// distinct request (source text, kernel, specialisation as given,
  /// options) is bound once; the key made is kept, so asking again costs a
  /// probe by the specialisation's own hash.
  llvm::Expected<TilingKey> makeKey(const KernelSource &source,
                                    const std::string &kernel,
                                    const Specialization &spec,
                                    const CompileOptions &options = {}) const;

  /// Returns the compiled kernel for (source, kernel, spec), compiling it on
  /// the first request. DSL errors come back as an error whose message holds
  /// the rendered diagnostics (file:line:col, caret line).
  llvm::Expected<KernelRef> get(const KernelSource &source,
                                const std::string &kernel,
                                const Specialization &spec,
                                const CompileOptions &options = {});

  /// `get`, with the compile of a miss run on the process's compile pool
  /// (jit/CompilePool.h) while this thread waits: however many callers miss
  /// at once, at most the pool's threads compile. A hit, or a key another
  /// request is compiling, is served as `get` serves it. What aclnn phase 1
  /// and the operators call.
  llvm::Expected<KernelRef> getPooled(const KernelSource &source, const std::string &kernel,
                                      const Specialization &spec,
                                      const CompileOptions &options = {});

  /// Hot path: a key made earlier by `makeKey`. Well under a microsecond on a
  /// hit.
  llvm::Expected<KernelRef> get(const TilingKey &key,
                                const KernelSource &source);

  /// Runs the pipeline up to `stage` and returns that stage's text (for
  /// `tilejit compile --emit` and `tilejit dump`); never touches the cache.
  llvm::Expected<std::string> emit(const KernelSource &source,
                                   const std::string &kernel,
                                   const Specialization &spec,
                                   DumpStage stage,
                                   const CompileOptions &options = {});

  CacheStats stats() const;
  /// Drops every in-memory entry (kernels still referenced stay alive).
  void clearMemoryCache();
  /// Sets the in-memory tier's bound (bytes of code and data mapped for
  /// its kernels) and evicts down to it; the bound starts at
  /// TILEJIT_MEMORY_CACHE_MAX_BYTES.
  void setMemoryCacheMaxBytes(uint64_t bytes);

  /// The disk tier (jit/DiskCache.h): from the environment at creation;
  /// tests and tools may replace it.
  const DiskCache &diskCache() const;
  void setDiskCache(DiskCache disk);

  /// One kernel a process asked for: enough to compile it again elsewhere
  /// (`tilejit demo --record`, `tilejit warm`).
  struct Request {
    std::string source; ///< the KernelSource's name (an embedded path or a file)
    std::string kernel;
    Specialization spec;
    bool operator<(const Request &o) const {
      return std::tie(source, kernel, spec) < std::tie(o.source, o.kernel, o.spec);
    }
  };
  /// Starts recording the distinct requests `get` serves.
  void startRecording();
  std::vector<Request> recordedRequests() const;

  /// Target description used in keys: CPU name and feature string, and the
  /// vector width in f32 lanes (16 for AVX-512, 8 for AVX2).
  const std::string &targetName() const;
  unsigned vectorLanes() const;
  /// Whether the target sums bf16 products in pairs (AVX512-BF16), which
  /// the few-rows mma forms then use for bf16 x bf16.
  bool hasBf16Dot() const;
  /// True where an mma of bf16 operands with many rows outruns the same mma
  /// widened to f32 (AMX tiles, or AMD's `vdpbf16ps`).
  bool hasFastBf16Products() const;
  /// Whether generated code requests a prefetched region of `bytes` into L2
  /// only, by the L1 data cache code generation assumes (the host's, or
  /// TILEJIT_L1D_BYTES): hand-written code that prefetches follows it.
  bool prefetchesIntoL2(int64_t bytes) const;

  ~Compiler();

private:
  explicit Compiler(TargetLevel level);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace tilejit::jit

#endif
