//===- Kernels.cpp - How an operator gets and launches its kernels --------===//
#include "ops/host/Kernels.h"

#include "jit/Options.h"

#include <omp.h>

#include <algorithm>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace tilejit::host {

namespace {

/// Tiling keys already made, by (source, kernel, specialisation). Making a
/// key binds the specialisation and builds strings (the target's feature list
/// among them); finding a made one is a hash of the kernel's name, the
/// specialisation's own hash and a probe, so a decode-sized call
/// spends well under a microsecond looking its kernel up.
class KeyTable {
public:
  llvm::Expected<const jit::TilingKey *> find(const jit::KernelSource &source,
                                              const std::string &kernel,
                                              const jit::Specialization &spec) {
    uint64_t h = source.hash() * 0x9E3779B97F4A7C15ull;
    auto mix = [&h](const std::string &s) {
      for (unsigned char c : s)
        h = (h ^ c) * 0x100000001B3ull;
      h = (h ^ 0xFF) * 0x100000001B3ull;
    };
    mix(kernel);
    // The specialisation hashed itself when it was built.
    h = (h ^ spec.hash()) * 0x100000001B3ull;
    auto matches = [&](const Entry &e) {
      return e.sourceHash == source.hash() && e.kernel == kernel &&
             e.spec == spec;
    };
    {
      std::shared_lock lock(mutex_);
      auto [lo, hi] = entries_.equal_range(h);
      for (auto it = lo; it != hi; ++it)
        if (matches(it->second))
          return &it->second.key; // nodes are never erased
    }
    auto compiler = jit::Compiler::instance(jit::TargetLevel::Host);
    if (!compiler)
      return compiler.takeError();
    auto made = compiler->makeKey(source, kernel, spec);
    if (!made)
      return made.takeError();
    std::unique_lock lock(mutex_);
    auto [lo, hi] = entries_.equal_range(h);
    for (auto it = lo; it != hi; ++it)
      if (matches(it->second))
        return &it->second.key;
    auto it = entries_.emplace(
        h, Entry{source.hash(), kernel, spec, std::move(*made)});
    return &it->second.key;
  }

private:
  struct Entry {
    uint64_t sourceHash;
    std::string kernel;
    jit::Specialization spec;
    jit::TilingKey key;
  };
  std::shared_mutex mutex_;
  std::unordered_multimap<uint64_t, Entry> entries_;
};

} // namespace

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
  static KeyTable keys;
  auto key = keys.find(source, kernel, spec);
  if (!key)
    return Status::error(
        status::InnerFindKernel, "kernel ", kernel, " of ",
        source.name(), " has no tiling key: ", llvm::toString(key.takeError()));
  // A key was made, so the host's compiler exists.
  auto ref = jit::Compiler::instance().get(**key, source);
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
