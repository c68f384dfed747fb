//===- KvCopyCase.h - A KV-cache data-movement case, shared -----*- C++ -*-===//
///
/// \file
/// The prefill- and decode-sized cases of the KV-cache operators that only
/// move rows (GatherPaKvCache, ScatterPaKvCache): phase 1 of the call is
/// prepared once; the launch (phase 2) is timed alternately with the
/// hand-written twin and the peer.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_BENCH_SUITE_KVCOPYCASE_H
#define TILEJIT_BENCH_SUITE_KVCOPYCASE_H

#include "Suite.h"

#include "ops/host/Executor.h"

namespace tilejit::bench {

/// Prepares `args` into an executor of `Args::kOpName` with `prepare`, sets
/// the peer up with `setupPeer(r)` and times the launch against `twin`.
/// Prefill-sized calls are bound by the copy bandwidth: `bytes` read plus
/// written, half of them the working set; decode-sized ones are latency.
template <typename Args, typename SetupPeer>
Result kvCopyCase(Context &ctx, const Args &args,
                  host::Status (*prepare)(const Args &, host::Executor &),
                  bool (*twin)(const Args &), double bytes, bool decode,
                  SetupPeer &&setupPeer) {
  Result r;
  host::Executor exec(Args::kOpName);
  if (host::Status s = prepare(args, exec); !s) {
    r.error = s.message();
    return r;
  }
  r.bound = decode ? Bound::Latency : Bound::Copy;
  r.bytes = bytes;
  r.workingSetBytes = bytes / 2;
  setupPeer(r);
  ctx.measure(
      r, [&] { (void)exec.run({}); }, [&] { (void)twin(args); }, true);
  return r;
}

} // namespace tilejit::bench

#endif
