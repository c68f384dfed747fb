//===- PythonCases.cpp - tilejit's Python package against C++ and the C API
//===//
//
// The python/ cases (PythonCases.h): the launch of the tutorial's kernel
// from Python against the C++ API, and each operator's headline case through
// torch.ops.tilejit against the C API. The Python side is a process of its
// own (bench/peer/python_peer.py) started by the driver with the build's
// package on its PYTHONPATH; samples alternate between the two processes.
//
//===----------------------------------------------------------------------===//
#include "PythonCases.h"

#include "MachineLimits.h"
#include "Peer.h"

#include "acl/acl.h"
#include "tilejit/tilejit.h"

#include "llvm/Support/Error.h"

#include <cmath>
#include <numeric>
#include <vector>

namespace tilejit::bench {

namespace {

/// The tutorial's kernel (docs/python.md), one text for both sides so that
/// both compile the same specialisation.
const char *const kScaleSource = R"(
kernel scale<T: f32|f16|bf16, BN: i64 = 64>(x: gm<T>[N], y: gm<T>[N], a: f32)
    grid(cdiv(N, BN))
{
  let i = program_id(0) * BN;
  store(y, [i], cast<T>(cast<f32>(load(x, [i], [BN])) * a));
}
)";

const char *dtypeName(host::DataType t) {
  switch (t) {
  case host::DataType::Float:
    return "f32";
  case host::DataType::Float16:
    return "f16";
  case host::DataType::BFloat16:
    return "bf16";
  case host::DataType::Int8:
    return "i8";
  case host::DataType::UInt8:
    return "u8";
  case host::DataType::Int16:
    return "i16";
  case host::DataType::Int32:
    return "i32";
  case host::DataType::Int64:
    return "i64";
  case host::DataType::Bool:
    return "bool";
  default:
    return "";
  }
}

/// Marks `r` "not available" (the Python side is missing): no times, no
/// error, so the run does not fail.
Result unavailable(Result r, const std::string &why) {
  r.note = "not available: " + why;
  return r;
}

/// The Python side; an error says why there is none.
llvm::Expected<Peer &> pythonSide(Context &ctx) {
  Peer *p = ctx.python();
  if (p && p->running())
    return *p;
  return llvm::createStringError(
      ctx.options().pythonNote.empty()
          ? "the Python process is not running (`tilejit bench` starts it)"
          : ctx.options().pythonNote);
}

/// Sets the Python side up with `spec`; false with `r` marked (not
/// available, or the error) where it refuses.
bool setupPython(Peer &py, const nlohmann::json &spec, Result &r) {
  llvm::Error e = py.setup(spec);
  if (!e)
    return true;
  if (py.lastAnswer().value("unavailable", false))
    r.note = "not available: " + llvm::toString(std::move(e));
  else
    r.error = "python side: " + llvm::toString(std::move(e));
  return false;
}

/// Kernel launches per sample: a launch takes about a microsecond, far
/// below the clock's and the pipe's resolution.
constexpr int kLaunchCalls = 2000;

/// The tutorial's kernel on N = 16 floats: C++ launches against Python's
/// `k(x, y, 3.0)` on `arrays` ("numpy" or "torch").
Result launchCase(Context &ctx, const std::string &arrays) {
  Result r;
  r.bound = Bound::Latency;
  r.inCache = true;
  r.extra = {{"target_difference_us", kLaunchTargetUs},
             {"calls_per_sample", kLaunchCalls}};
  llvm::Expected<Peer &> side = pythonSide(ctx);
  if (!side)
    return unavailable(r, llvm::toString(side.takeError()));
  Peer *py = &*side;
  // The C++ side exactly as a C++ user writes it (include/tilejit/tilejit.h).
  auto k =
      tilejit::compile(tilejit::Source::fromText("scale.tile", kScaleSource),
                       "scale", {{"T", "f32"}});
  if (!k) {
    r.error = k.error();
    return r;
  }
  const int64_t n = 16;
  std::vector<float> x(n), y(n, 0.0f);
  std::iota(x.begin(), x.end(), 0.0f);
  tilejit::Args args;
  args.tensor(x.data(), {n}).tensor(y.data(), {n}).f32(3.0f);
  if (tilejit::Status s = k->launch(args); !s) {
    r.error = s.message();
    return r;
  }
  for (int64_t i = 0; i < n; ++i)
    if (y[i] != 3.0f * x[i]) {
      r.error = "the C++ launch computed a wrong y";
      return r;
    }
  const nlohmann::json spec = {{"case", "launch"},
                               {"source", kScaleSource},
                               {"kernel", "scale"},
                               {"params", {{"T", "f32"}}},
                               {"n", n},
                               {"a", 3.0},
                               {"arrays", arrays},
                               {"calls", kLaunchCalls}};
  if (!setupPython(*py, spec, r))
    return r;
  // The same specialisation on both sides: the same tiling key (the source
  // text is the same string).
  const std::string pyKey = py->lastAnswer().value("key", "");
  if (pyKey != k->key()) {
    r.error = "python compiled " + pyKey + ", C++ " + k->key();
    return r;
  }
  r.peerNote = py->lastAnswer().value("note", "");
  int failed = 0;
  ctx.measureAgainst(
      r,
      [&] {
        for (int i = 0; i < kLaunchCalls; ++i)
          failed += !k->launch(args);
      },
      *py, ctx.options().quick ? 5 : 31);
  if (failed) {
    r.error = std::to_string(failed) + " C++ launches failed";
    return r;
  }
  r.genSeconds /= kLaunchCalls;
  r.peerSeconds /= kLaunchCalls;
  if (r.genSeconds > 0 && r.peerSeconds > 0)
    r.extra.push_back({"difference_us", (r.peerSeconds - r.genSeconds) * 1e6});
  r.note = "C++: tilejit::compile gave " + k->key() +
           ", then Kernel::launch with an Args built once; " +
           std::to_string(kLaunchCalls) + " calls per sample on each side";
  return r;
}

} // namespace

int runWithWorkspace(uint64_t bytes, aclOpExecutor *exec,
                     aclnnStatus (*phase2)(void *, uint64_t, aclOpExecutor *,
                                           aclrtStream)) {
  void *workspace = nullptr;
  if (bytes > 0 &&
      aclrtMalloc(&workspace, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
    return -1;
  const int rc = phase2(workspace, bytes, exec, nullptr);
  if (workspace)
    aclrtFree(workspace);
  return rc;
}

nlohmann::json pythonTensor(Peer &peer, const std::string &name,
                            const host::TensorView &v) {
  if (!v.isContiguous() || v.offset != 0 || !*dtypeName(v.dtype))
    throw std::runtime_error("python side: " + name + " (" + v.describe() +
                             ") is not a contiguous view of a known dtype");
  const size_t bytes =
      static_cast<size_t>(v.numel() * host::elementSize(v.dtype));
  return {{"path", peer.writeInput(name, v.data, bytes)},
          {"dtype", dtypeName(v.dtype)},
          {"shape", v.shape}};
}

Result torchOpsCase(Context &ctx, const TorchOpsCall &c) {
  Result r;
  r.bound = Bound::Latency;
  r.extra = {{"target_ratio", kTorchOpsTargetRatio}};
  llvm::Expected<Peer &> side = pythonSide(ctx);
  if (!side)
    return unavailable(r, llvm::toString(side.takeError()));
  Peer *py = &*side;
  nlohmann::json spec = c.inputs(*py);
  if (c.call() != 0) {
    r.error = aclGetRecentErrMsg();
    return r;
  }
  spec["case"] = "torch-op";
  spec["operator"] = c.op;
  spec["expect"] = c.expect(*py);
  if (!setupPython(*py, spec, r))
    return r;
  r.peerNote = py->lastAnswer().value("note", "");
  r.peerMaxAbsDiff = py->lastAnswer().value("max_abs_diff", -1.0);
  ctx.measureAgainst(
      r, [&] { (void)c.call(); }, *py, c.samples);
  return r;
}

namespace {

// Registration order is the report's order.
Registrar r0("python/launch/scale-f32-N16/numpy", "python",
             [](Context &c) { return launchCase(c, "numpy"); });
Registrar r1("python/launch/scale-f32-N16/torch", "python",
             [](Context &c) { return launchCase(c, "torch"); });
Registrar r2("python/torch-ops/ifa/decode/B8-N32-KV8-D128-L4096/paged-bsh/f16",
             "python", ifaTorchOps);
Registrar r3("python/torch-ops/nsa/decode/B64-N32-D128-W32-S16-P128/paged/f16",
             "python", nsaTorchOps);
Registrar r4("python/torch-ops/scatter/prefill-random-slots/"
             "T8192-N8-D128-BS128-256blocks/norm/f16",
             "python", scatterTorchOps);
Registrar
    r5("python/torch-ops/gather/prefill/T8192-R16-N8-D128-BS128-256blocks/"
       "norm/f16",
       "python", gatherTorchOps);
Registrar r6("python/torch-ops/fag/full/T4x1024-N8-D128/tnd/bf16", "python",
             fagTorchOps);

} // namespace

} // namespace tilejit::bench
