//===- OpRegistry.h - Where operators plug into the aclnn C API -*- C++ -*-===//
///
/// \file
/// The aclnn entry points (ops/aclnn/) own the C signatures; each operator
/// owns its validation and launch. They meet here: every operator has an
/// argument struct (ops/aclnn/OpArgs.h, one field per C parameter) and one
/// registry slot holding its Prepare function:
///
/// \code
///   // ops/scatter_pa_kv_cache/ScatterPaKvCacheAclnn.cpp
///   static Status prepare(const aclnn::ScatterPaKvCacheArgs &args,
///                         host::Executor &executor) {
///     if (!args.key) return Status::error(status::ParamNullptr, "key is
///     null");
///     ...                                    // validation, tiling
///     executor.setLaunch([=](const LaunchContext &) { ...; return Status();
///     }); return Status::ok();
///   }
///   TILEJIT_REGISTER_ACLNN_OP(aclnn::ScatterPaKvCacheArgs, prepare);
/// \endcode
///
/// Phase 1 calls the registered Prepare with a fresh Executor; on success the
/// executor goes to the caller, on failure it is destroyed and the status
/// (with its message) is returned. Before an operator registers, phase 1
/// returns ACLNN_ERR_INNER (561000) "<op>: not implemented yet".
///
/// Linking: the registrar is a static object, so the object file holding it
/// must be linked. libtilejit.so links every object; a program linking the
/// static tilejit_ops must reference that object file (put the registrar in
/// the file with the operator's C++ entry point) or link the archive whole.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_HOST_OPREGISTRY_H
#define TILEJIT_OPS_HOST_OPREGISTRY_H

#include "ops/host/Executor.h"
#include "ops/host/Status.h"

#include <atomic>

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
  static PrepareFn<ArgsT> get() { return slot.load(std::memory_order_acquire); }
  /// Registers `fn` (nullptr unregisters); returns the previous one.
  static PrepareFn<ArgsT> set(PrepareFn<ArgsT> fn) {
    return slot.exchange(fn, std::memory_order_acq_rel);
  }

private:
  static inline std::atomic<PrepareFn<ArgsT>> slot{nullptr};
};

/// Registers a Prepare function at static-initialisation time.
struct OpRegistrar {
  /// Registers `fn` for `ArgsT`.
  template <typename ArgsT> explicit OpRegistrar(PrepareFn<ArgsT> fn) {
    OpRegistry<ArgsT>::set(fn);
  }
};

} // namespace tilejit::host

#define TILEJIT_REGISTER_CONCAT_INNER(a, b) a##b
#define TILEJIT_REGISTER_CONCAT(a, b) TILEJIT_REGISTER_CONCAT_INNER(a, b)

/// Registers `fn` (a PrepareFn<ArgsT>) as the operator's phase 1. Use at
/// namespace scope in a .cpp file, once per operator.
#define TILEJIT_REGISTER_ACLNN_OP(ArgsT, fn)                                   \
  static const ::tilejit::host::OpRegistrar TILEJIT_REGISTER_CONCAT(        \
      tilejitOpRegistrar,                                                      \
      __LINE__)(static_cast<::tilejit::host::PrepareFn<ArgsT>>(fn))

#endif
