//===- OpRegistry.h - Where operators plug into the aclnn C API -*- C++ -*-===//
///
/// \file
/// The aclnn entry points own the C signatures; each operator owns its
/// validation and launch. They meet here: every operator has an argument
/// struct (one field per C parameter, made from the operator's parameter
/// table, ops/aclnn/AclnnParams.h) and one registry slot holding its
/// Prepare function:
///
/// \code
///   // ops/scatter_pa_kv_cache/ScatterPaKvCache.cpp
///   host::Status prepareScatterPaKvCache(const aclnn::ScatterPaKvCacheArgs &a,
///                                        host::Executor &executor) {
///     if (!a.key)
///       return Status::error(status::ParamNullptr, "key must not be null");
///     ...                                    // validation, tiling
///     executor.setLaunch([=](const LaunchContext &) { ... });  // phase 2
///     return Status::ok();
///   }
///   // ops/scatter_pa_kv_cache/ScatterPaKvCacheAclnn.cpp
///   void ops::registerScatterPaKvCache() {
///     host::OpRegistry<aclnn::ScatterPaKvCacheArgs>::install(
///         &prepareScatterPaKvCache);
///   }
/// \endcode
///
/// Phase 1 calls the registered Prepare with a fresh Executor; on success the
/// executor goes to the caller, on failure it is destroyed and the status
/// (with its message) is returned. A slot left empty makes phase 1 return
/// ACLNN_ERR_INNER (561000) "<op>: not implemented yet".
///
/// Registration is explicit, not a static initialiser: the built-in
/// operators are installed by ops::registerBuiltinOperators
/// (ops/Operators.cpp), which runs once (std::call_once) on the registry's
/// first use, from the C entry points (through prepareOp), aclInit, or C++ code
/// that reads or replaces a slot. So every program that reaches the registry
/// links every built-in operator, whatever its link order or library kind, and
/// no registration depends on static-initialisation order.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_HOST_OPREGISTRY_H
#define TILEJIT_OPS_HOST_OPREGISTRY_H

#include "ops/host/Executor.h"
#include "ops/host/Status.h"

#include <atomic>

namespace tilejit::ops {
/// Installs the built-in operators' Prepare functions in their slots, once
/// (later calls return at once); ops/Operators.cpp.
void registerBuiltinOperators();
} // namespace tilejit::ops

namespace tilejit::host {

/// Phase 1 of an operator: validate `args`, then fill `executor` (workspace
/// size, launch closure). Writes nothing to the tensors.
template <typename ArgsT>
using PrepareFn = Status (*)(const ArgsT &args, Executor &executor);

/// The registry slot of the operator whose argument struct is `ArgsT`.
/// `ArgsT::kOpName` names the operator (e.g. "aclnnScatterPaKvCache").
template <typename ArgsT> class OpRegistry {
public:
  /// The registered Prepare, or nullptr.
  static PrepareFn<ArgsT> get() {
    ops::registerBuiltinOperators();
    return slot.load(std::memory_order_acquire);
  }
  /// Registers `fn` (nullptr unregisters); returns the previous one (after
  /// the built-in operators are installed, so that a test can put a fake in
  /// a slot and give the built-in one back).
  static PrepareFn<ArgsT> set(PrepareFn<ArgsT> fn) {
    ops::registerBuiltinOperators();
    return slot.exchange(fn, std::memory_order_acq_rel);
  }
  /// Installs a built-in operator's Prepare: for the operators'
  /// registerXxx(), which registerBuiltinOperators calls (get and set would
  /// wait for it).
  static void install(PrepareFn<ArgsT> fn) {
    slot.store(fn, std::memory_order_release);
  }

private:
  static inline std::atomic<PrepareFn<ArgsT>> slot{nullptr};
};

} // namespace tilejit::host

#endif
