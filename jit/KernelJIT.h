//===- KernelJIT.h - One ORC LLJIT per target level --------------*- C++ -*-===//
///
/// \file
/// Wraps an llvm::orc::LLJIT configured for one target level (the host's
/// AVX-512, or a forced AVX2 level), adds each kernel module under its own
/// ResourceTracker and looks up the runtime symbols of runtime/Runtime.h.
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

class KernelJIT {
public:
  /// Where the runtime library's compiled functions are kept between
  /// processes (the disk cache): `load(name)` returns a function's object,
  /// or nothing; `store(name, object)` keeps one just compiled. Either may be
  /// unset: a process then compiles the functions its kernels call.
  struct RuntimeObjects {
    std::function<std::optional<std::vector<char>>(const std::string &name)> load;
    std::function<void(const std::string &name, llvm::ArrayRef<char> object)> store;
  };

  static llvm::Expected<std::unique_ptr<KernelJIT>> create(const TargetChoice &t,
                                                           RuntimeObjects objects = {});

  /// A fresh TargetMachine for this target (one per compilation: TargetMachines
  /// are not shared between threads).
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> makeTargetMachine() const;

  /// Adds an optimised module and resolves `<stem>_program`, `_grid` and
  /// `_scratch` (this is where machine code is generated).
  struct Symbols {
    rt::ProgramFn program;
    rt::GridFn grid;
    int64_t scratchBytes;
  };
  llvm::Expected<Symbols> add(llvm::orc::ThreadSafeModule module,
                              const std::string &stem);
  /// Links a relocatable object (compiled here, or a verified disk-cache
  /// entry) into a JITDylib of its own and resolves its symbols, so the same
  /// kernel may be linked twice in one process.
  /// `label` names the kernel for profilers (TILEJIT_PERF_MAP); default: the stem.
  llvm::Expected<Symbols> addObject(llvm::ArrayRef<char> object, const std::string &stem,
                                    const std::string &label = "");

private:
  explicit KernelJIT(TargetChoice t) : target_(std::move(t)) {}
  TargetChoice target_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  /// The runtime library (codegen::lowerRuntimeLibrary): every kernel's
  /// JITDylib links against it; each function is compiled once, at its
  /// first use.
  llvm::orc::JITDylib *runtime_ = nullptr;
  std::atomic<uint64_t> dylibs_{0};
};

/// Assembly text of a module for `tm` (the `asm` dump stage).
std::string emitAssembly(llvm::Module &module, llvm::TargetMachine &tm);

/// The relocatable object code of a module for `tm` (machine code
/// generation); consumes nothing, but runs the code generator on `module`.
llvm::Expected<std::vector<char>> emitObject(llvm::Module &module, llvm::TargetMachine &tm);

} // namespace tilejit::jit

#endif
