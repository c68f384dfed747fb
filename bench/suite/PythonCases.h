//===- PythonCases.h - tilejit's Python package against C++ and the C API -*-
// C++ -*-===//
///
/// \file
/// The two overhead figures of the Python package (python/), measured side
/// by side in one run against a second process, bench/peer/python_peer.py,
/// which imports the package from the build tree and times its calls:
///
///   - python/launch/...: the tutorial's kernel launched from Python on a
///     cache hit (`k(x, y, 3.0)`, NumPy arrays, then PyTorch CPU tensors)
///     against the C++ launch of the same kernel (tilejit::compile, then
///     Kernel::launch with an Args built once), loops of many calls per
///     sample; the figure is the difference of the medians per call
///     (target: at most 2 µs).
///   - python/torch-ops/<op>/...: each operator's headline case called
///     through `torch.ops.tilejit.<torch_npu name>` against the same call
///     through the C API (phase 1 + phase 2), on the same inputs, one call
///     per sample, the cache flushed before each call on both sides; the
///     figure is the median of the per-sample ratios torch.ops / C API
///     (target: at most 1.03).
///
/// A case whose Python side is missing (the package not built, an operator
/// not registered) reports "not available" without failing the run.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_BENCH_SUITE_PYTHONCASES_H
#define TILEJIT_BENCH_SUITE_PYTHONCASES_H

#include "Suite.h"

#include "aclnn/aclnn_base.h"
#include "ops/host/TensorView.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>

namespace tilejit::bench {

/// Targets of issue 31 (the report shows them beside the figures).
constexpr double kLaunchTargetUs = 2.0;       ///< Python above C++, per launch
constexpr double kTorchOpsTargetRatio = 1.03; ///< torch.ops / C API

/// One headline case called through torch.ops.tilejit and the C API.
struct TorchOpsCall {
  /// The operator under torch.ops.tilejit, with its overload where it has
  /// one: "npu_incre_flash_attention", "npu_nsa_compress_infer.cache".
  std::string op;
  /// Writes the inputs (before any call: in-place operators read them) and
  /// returns the Python side's spec: "tensors" (name: python_peer's tensor
  /// spec), "args" and "kwargs" (values; {"tensor": name} for a tensor).
  std::function<nlohmann::json(Peer &)> inputs;
  /// The whole call through the C API (phase 1 + phase 2); 0: success.
  std::function<int()> call;
  /// After one call: the outputs to compare with, as a list of
  /// {"of": "result" | "result.<i>" | tensor name, tensor spec...}.
  std::function<nlohmann::json(Peer &)> expect;
  int samples = 0; ///< 0: the run's count
};

/// Times `c` both ways (Bound::Latency, the cache flushed before each
/// call): the C API as the generated side, torch.ops as the peer.
Result torchOpsCase(Context &ctx, const TorchOpsCall &c);

/// Phase 2 of a prepared call as a C caller runs it (CANN's samples): a
/// workspace of `bytes` from aclrtMalloc where the operator asks for one,
/// freed after the call.
int runWithWorkspace(uint64_t bytes, aclOpExecutor *exec,
                     aclnnStatus (*phase2)(void *, uint64_t, aclOpExecutor *,
                                           aclrtStream));

/// A tensor for the Python side: `v`'s bytes written to a file (a
/// contiguous view), its dtype and shape.
nlohmann::json pythonTensor(Peer &peer, const std::string &name,
                            const host::TensorView &v);

/// The headline cases, built where each operator's problem is (its *Cases.cpp).
Result ifaTorchOps(Context &ctx);
Result nsaTorchOps(Context &ctx);
Result scatterTorchOps(Context &ctx);
Result gatherTorchOps(Context &ctx);
Result fagTorchOps(Context &ctx);

} // namespace tilejit::bench

#endif
