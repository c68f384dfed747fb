//===- KvCache.cpp - What the paged KV-cache operators share --------------===//
#include "ops/common/KvCache.h"

#include "jit/Options.h"
#include "ops/common/RunStates.h"

#include <omp.h>

#include <algorithm>
#include <cassert>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

namespace tilejit::ops {

using host::DataType;
using host::Status;

bool isKvDataType(DataType type) {
  switch (type) {
  case DataType::Float16:
  case DataType::Float:
  case DataType::BFloat16:
  case DataType::Int8:
  case DataType::UInt8:
  case DataType::Int16:
  case DataType::UInt16:
  case DataType::Int32:
  case DataType::UInt32:
  case DataType::HiFloat8:
  case DataType::Float8E5M2:
  case DataType::Float8E4M3FN:
    return true;
  default:
    return false;
  }
}

const char *kvDataTypeList() {
  return "FLOAT16, FLOAT, BFLOAT16, INT8, UINT8, INT16, UINT16, INT32, UINT32, "
         "HIFLOAT8, FLOAT8_E5M2, FLOAT8_E4M3FN";
}

bool isIndexDataType(DataType type) {
  return type == DataType::Int32 || type == DataType::Int64;
}

int64_t nzStripElems(DataType type) {
  int64_t size = host::elementSize(type);
  return size > 0 ? 32 / size : 0;
}

bool streamsOutput(int64_t outputBytes) {
  return outputBytes >= (int64_t(16) << 20);
}

const char *copyKind(int64_t bytes) {
  switch (bytes) {
  case 1:
    return "u8";
  case 2:
    return "u16";
  default:
    return "u32";
  }
}

const char *indexKind(DataType type) {
  return type == DataType::Int64 ? "i64" : "i32";
}

const char *valueKind(DataType type) {
  switch (type) {
  case DataType::Float16:
    return "f16";
  case DataType::BFloat16:
    return "bf16";
  case DataType::Int8:
    return "i8";
  case DataType::Float:
    return "f32";
  default:
    return "u8";
  }
}

rt::ElemType elemType(const char *kind) {
  rt::ElemType t = rt::ElemType::U8;
  [[maybe_unused]] bool known = rt::parseElemType(kind, t);
  assert(known && "operators specialise with the DSL's kinds");
  return t;
}

rt::ElemType elemType(DataType type) {
  switch (type) {
  case DataType::Float: return rt::ElemType::F32;
  case DataType::Float16: return rt::ElemType::F16;
  case DataType::BFloat16: return rt::ElemType::BF16;
  case DataType::Int8: return rt::ElemType::I8;
  case DataType::Int16: return rt::ElemType::I16;
  case DataType::UInt16: return rt::ElemType::U16;
  case DataType::Int32: return rt::ElemType::I32;
  case DataType::UInt32: return rt::ElemType::U32;
  case DataType::Int64: return rt::ElemType::I64;
  default: return rt::ElemType::U8; // bool, uint8 and byte-moved 8-bit types
  }
}

std::optional<FlatView> collapse(const host::TensorView &view,
                                 const std::vector<int> &groups) {
  FlatView flat;
  flat.data = view.firstElement();
  size_t axis = 0;
  for (int count : groups) {
    if (count < 1 || axis + static_cast<size_t>(count) > view.shape.size())
      return std::nullopt;
    // Walk the group from its innermost axis outwards.
    int64_t size = 1, stride = 1;
    bool first = true;
    for (size_t k = axis + static_cast<size_t>(count); k-- > axis;) {
      int64_t n = view.shape[k], s = view.strides[k];
      if (n == 1)
        continue;
      if (first) {
        size = n;
        stride = s;
        first = false;
      } else if (s == size * stride) {
        size *= n;
      } else if (n != 0 && size != 0) {
        return std::nullopt;
      } else {
        size *= n;
      }
    }
    flat.sizes.push_back(size);
    flat.strides.push_back(stride);
    axis += static_cast<size_t>(count);
  }
  if (axis != view.shape.size())
    return std::nullopt;
  return flat;
}

namespace {

/// Tiling keys already made, by (source, kernel, specialisation). Making a
/// key builds strings (the target's feature list among them); finding a made
/// one is a hash of a few short strings and a probe, so a decode-sized call
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
    for (const auto &[name, value] : spec) {
      mix(name);
      mix(value);
    }
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
    return Status::error(host::status::InnerFindKernel, "no compiler for this host: ",
                         llvm::toString(c.takeError()));
  compiler = &*c;
  return Status::ok();
}

Status getKernel(const jit::KernelSource &source, const std::string &kernel,
                 const jit::Specialization &spec,
                 std::shared_ptr<const jit::CompiledKernel> &out,
                 host::KernelUse *use) {
  static KeyTable keys;
  auto key = keys.find(source, kernel, spec);
  if (!key)
    return Status::error(
        host::status::InnerFindKernel, "kernel ", kernel, " of ",
        source.name(), " has no tiling key: ", llvm::toString(key.takeError()));
  // A key was made, so the host's compiler exists.
  auto ref = jit::Compiler::instance().get(**key, source);
  if (!ref)
    return Status::error(host::status::InnerFindKernel, "kernel ", kernel,
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
    return Status::error(host::status::Inner, what, ": ",
                         llvm::toString(std::move(err)));
  return Status::ok();
}

namespace {
/// A run's own scratch and the pack pointing into it.
struct ScratchRun {
  rt::ArgPack args;
  std::vector<int64_t> scratch;

  static std::unique_ptr<ScratchRun> over(const rt::ArgPack &args,
                                          const std::vector<int64_t> &from) {
    auto r = std::make_unique<ScratchRun>();
    r->args = args;
    relocateBuffer(from, r->scratch, r->args);
    return r;
  }
  std::unique_ptr<ScratchRun> clone() const { return over(args, scratch); }
};
} // namespace

void setKernelLaunch(host::Executor &executor,
                     std::shared_ptr<const KernelLaunch> launch, const char *op) {
  executor.addKernelUse(launch->use);
  if (launch->scratch.empty()) {
    executor.setLaunch([launch = std::move(launch), op](const host::LaunchContext &) {
      return launchKernel(*launch->kernel, launch->args, op);
    });
    return;
  }
  // The phase-1 scratch goes with `launch`; the pool makes its own.
  auto states = std::make_shared<RunStates<ScratchRun>>(
      ScratchRun::over(launch->args, launch->scratch));
  executor.setLaunch([kernel = launch->kernel, states, op](const host::LaunchContext &) {
    return states->run([&](ScratchRun &r) { return launchKernel(*kernel, r.args, op); });
  });
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

} // namespace tilejit::ops
