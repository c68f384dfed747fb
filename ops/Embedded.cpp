//===- Embedded.cpp - .tile sources compiled into the library -------------===//
#include "ops/Embedded.h"

#include <cassert>
#include <map>
#include <memory>
#include <mutex>

namespace tilejit::ops {

const jit::KernelSource &embeddedKernel(const std::string &path) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<jit::KernelSource>> sources;
  std::lock_guard lock(mutex);
  auto &slot = sources[path];
  if (!slot) {
    std::string_view text = embeddedSource(path);
    assert(!text.empty() && "no embedded .tile source at that path");
    slot = std::make_unique<jit::KernelSource>(path, std::string(text));
  }
  return *slot;
}

} // namespace tilejit::ops
