//===- Kernels.cpp - How an operator gets and launches its kernels --------===//
#include "ops/host/Kernels.h"

#include "jit/Options.h"

#include <omp.h>

#include <algorithm>

namespace tilejit::host {

Status hostCompiler(jit::Compiler *&compiler) {
  auto c = jit::Compiler::instance(jit::TargetLevel::Host);
  if (!c)
    return Status::error(status::InnerFindKernel, "no compiler for this host: ",
                         llvm::toString(c.takeError()));
  compiler = &*c;
  return Status::ok();
}

Status getKernel(const jit::KernelSource &source, const std::string &kernel,
                 const jit::Specialization &spec,
                 std::shared_ptr<const jit::CompiledKernel> &out,
                 KernelUse *use) {
  jit::Compiler *compiler = nullptr;
  if (Status s = hostCompiler(compiler); !s)
    return s;
  // The compiler keeps the key of each request it has seen: a decode-sized
  // call finds its kernel by the specialisation's own hash and two probes.
  // A miss compiles on the process's compile pool, so that callers meeting
  // new shapes at once compile at most the pool's threads at a time.
  auto ref = compiler->getPooled(source, kernel, spec);
  if (!ref)
    return Status::error(status::InnerFindKernel, "kernel ", kernel,
                         " of ", source.name(),
                         " did not compile: ", llvm::toString(ref.takeError()));
  out = ref->kernel;
  if (use)
    *use = {out, ref->compiled};
  return Status::ok();
}

Status launchKernel(const jit::CompiledKernel &kernel, const rt::ArgPack &args,
                    const char *what) {
  if (llvm::Error err = kernel.launch(args))
    return Status::error(status::Inner, what, ": ",
                         llvm::toString(std::move(err)));
  return Status::ok();
}

int64_t launchThreads() {
  static const int64_t threads = [] {
    int64_t n = omp_get_max_threads();
    if (unsigned cap = jit::Options::process().numThreads())
      n = std::min<int64_t>(n, cap);
    return std::max<int64_t>(n, 1);
  }();
  return threads;
}

int64_t programsFor(int64_t work) {
  return std::clamp<int64_t>(work, 1, launchThreads() * 4);
}

} // namespace tilejit::host
