//===- KernelJIT.h - One ORC LLJIT per target level --------------*- C++ -*-===//
///
/// \file
/// Wraps an llvm::orc::LLJIT configured for one target level (the host's
/// AVX-512, or a forced AVX2 level). Each kernel's object is linked under a
/// resource tracker of its own, owned by a KernelCode: the code stays mapped
/// while any owner holds it and is unmapped with the last one. A memory
/// manager between JITLink and the pages counts the bytes each kernel maps.
/// Kernels link against the process's runtime functions and against the
/// runtime library (the row-move functions), each compiled once per JIT.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_JIT_KERNELJIT_H
#define TILEJIT_JIT_KERNELJIT_H

#include "codegen/llvm/CodeGen.h"
#include "jit/Compiler.h"

#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/Target/TargetMachine.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tilejit::jit {

/// The CPU name and feature string a level compiles for on this host.
struct TargetChoice {
  TargetLevel level;
  std::string levelName; ///< "avx2" / "avx512"
  codegen::TargetInfo info;
};

/// Resolves `Host` (or `TILEJIT_TARGET`) and checks the host supports it.
/// With `emitOnly`, a level the host cannot run is described by a fixed CPU
/// (haswell / skylake-avx512) instead: its code may be printed, never run.
llvm::Expected<TargetChoice> chooseTarget(TargetLevel level, bool emitOnly = false);

class KernelJIT;
class CountingMemoryManager;

/// The machine code and data of one linked kernel: its resource tracker,
/// removed (its pages unmapped, its unwind frames deregistered, its symbols
/// dropped) when the last owner lets go. Owners: the CompiledKernel, and
/// through it the cache entry, every handle, executor and queued launch.
class KernelCode {
public:
  KernelCode(std::shared_ptr<KernelJIT> jit, llvm::orc::ResourceTrackerSP tracker, size_t home,
             std::string stem)
      : jit_(std::move(jit)), tracker_(std::move(tracker)), home_(home),
        stem_(std::move(stem)) {}
  ~KernelCode();
  KernelCode(const KernelCode &) = delete;
  KernelCode &operator=(const KernelCode &) = delete;
  /// Bytes of code and data mapped for the kernel (whole pages).
  uint64_t bytes() const { return bytes_; }

private:
  friend class KernelJIT; // links under the tracker, sets the bytes
  std::shared_ptr<KernelJIT> jit_;
  llvm::orc::ResourceTrackerSP tracker_;
  size_t home_;      ///< the JITDylib (KernelJIT::homes_) it is linked into
  std::string stem_; ///< its symbols' stem, defined there while it lives
  uint64_t bytes_ = 0;
};

class KernelJIT : public std::enable_shared_from_this<KernelJIT> {
public:
  /// Where the runtime library's compiled functions are kept between
  /// processes (the disk cache): `load(name)` returns a function's object,
  /// or nothing; `store(name, object)` keeps one just compiled. Either may be
  /// unset: a process then compiles the functions its kernels call.
  struct RuntimeObjects {
    std::function<std::optional<std::vector<char>>(const std::string &name)> load;
    std::function<void(const std::string &name, llvm::ArrayRef<char> object)> store;
  };

  static llvm::Expected<std::shared_ptr<KernelJIT>> create(const TargetChoice &t,
                                                           RuntimeObjects objects = {});
  ~KernelJIT();

  /// A fresh TargetMachine for this target (one per compilation: TargetMachines
  /// are not shared between threads).
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> makeTargetMachine() const;

  /// A linked kernel's entry points and the code that holds them.
  struct Symbols {
    rt::ProgramFn program;
    rt::GridFn grid;
    int64_t scratchBytes;
    std::shared_ptr<const KernelCode> code;
  };
  /// Links a relocatable object (compiled here, or a verified disk-cache
  /// entry) into a JITDylib of its own and resolves its symbols, so the same
  /// kernel may be linked twice in one process.
  /// `label` names the kernel for profilers (TILEJIT_PERF_MAP); default: the stem.
  llvm::Expected<Symbols> addObject(llvm::ArrayRef<char> object, const std::string &stem,
                                    const std::string &label = "");

  /// Bytes of code and data mapped for kernels now, whether cached or only
  /// held by handles (whole pages).
  uint64_t mappedBytes() const;

private:
  friend class KernelCode;
  explicit KernelJIT(TargetChoice t) : target_(std::move(t)) {}
  /// Removes a kernel's tracker and frees what it mapped.
  void remove(KernelCode &code);

  TargetChoice target_;
  CountingMemoryManager *memory_ = nullptr; ///< owned by the linking layer
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  /// The JITDylibs kernels link into, and the stems each defines now.
  struct Home {
    llvm::orc::JITDylib *dylib;
    std::set<std::string> stems;
  };
  std::mutex homesMutex_;
  std::vector<Home> homes_;
  std::atomic<uint64_t> links_{0};
  std::atomic<uint64_t> kernelBytes_{0}; ///< KernelCode bytes alive
  /// The runtime library (codegen::lowerRuntimeLibrary): every kernel's
  /// JITDylib links against it; each function is compiled once, at its
  /// first use.
  llvm::orc::JITDylib *runtime_ = nullptr;
};

/// Assembly text of a module for `tm` (the `asm` dump stage).
std::string emitAssembly(llvm::Module &module, llvm::TargetMachine &tm);

/// The relocatable object code of a module for `tm` (machine code
/// generation); consumes nothing, but runs the code generator on `module`.
llvm::Expected<std::vector<char>> emitObject(llvm::Module &module, llvm::TargetMachine &tm);

} // namespace tilejit::jit

#endif
