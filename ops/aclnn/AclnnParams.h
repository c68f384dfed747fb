//===- AclnnParams.h - Parameters written once -----------------*- C++ -*-===//
///
/// \file
/// Each operator writes the parameters of its aclnnXxxGetWorkspaceSize once,
/// in the upstream order and without workspaceSize and executor, as an
/// X-macro table in its folder (ops/<operator>/<Operator>Args.h):
///
/// \code
///   #define TILEJIT_GATHER_PA_KV_CACHE_PARAMS(X)   (each line ends in \)
///     X(Tensor, keyCache)
///     ...
///     X(String, cacheMode)
///     X(Bool, isSeqLensCumsum)
///
///   namespace tilejit::aclnn {
///   TILEJIT_ACLNN_ARGS(GatherPaKvCache, TILEJIT_GATHER_PA_KV_CACHE_PARAMS);
///   }
/// \endcode
///
/// From the table, TILEJIT_ACLNN_ARGS makes the argument struct the
/// operator's phase 1 takes (`aclnn::GatherPaKvCacheArgs`: one field per
/// parameter, `kOpName` = "aclnnGatherPaKvCache", `forEachTensor`), and
/// TILEJIT_ACLNN_ENTRIES (ops/aclnn/AclnnCommon.h), in the operator's
/// <Operator>Aclnn.cpp, makes its two C entry points. The public header
/// (include/aclnnop/) stays the contract: a table that disagrees with it is
/// a conflicting declaration, a compile error.
///
/// The kinds: the C parameter's type and the argument struct's field.
///
///   Kind           C parameter              field (default)
///   Tensor         const aclTensor *        const TensorView * (nullptr)
///   OutTensor      aclTensor *              const TensorView * (nullptr)
///   TensorList     const aclTensorList *    const TensorList * (nullptr)
///   IntArray       const aclIntArray *      const IntArray *   (nullptr)
///   String         char *                   const char *       (nullptr)
///   Bool           bool                     bool               (false)
///   Int            int64_t                  int64_t            (0)
///   Double         double                   double             (1.0: the
///                                           operators' doubles are scales
///                                           and a keep probability)
///
/// Pointers are nullptr exactly when the caller passed NULL; strings are the
/// caller's C strings. They live only during phase 1: a launch closure must
/// copy what it needs.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_ACLNN_ACLNNPARAMS_H
#define TILEJIT_OPS_ACLNN_ACLNNPARAMS_H

#include "ops/host/OpRegistry.h" // the registry slot each Args struct has
#include "ops/host/Status.h"
#include "ops/host/TensorView.h"

#include <cstdint>
#include <string>
#include <type_traits>

// The argument struct's field of each kind.
#define TILEJIT_ACLNN_FIELD(kind, name) TILEJIT_ACLNN_FIELD_##kind(name)
#define TILEJIT_ACLNN_FIELD_Tensor(name)                                       \
  const ::tilejit::host::TensorView *name = nullptr;
#define TILEJIT_ACLNN_FIELD_OutTensor(name)                                    \
  const ::tilejit::host::TensorView *name = nullptr;
#define TILEJIT_ACLNN_FIELD_TensorList(name)                                   \
  const ::tilejit::host::TensorList *name = nullptr;
#define TILEJIT_ACLNN_FIELD_IntArray(name)                                     \
  const ::tilejit::host::IntArray *name = nullptr;
#define TILEJIT_ACLNN_FIELD_String(name) const char *name = nullptr;
#define TILEJIT_ACLNN_FIELD_Bool(name) bool name = false;
#define TILEJIT_ACLNN_FIELD_Int(name) int64_t name = 0;
#define TILEJIT_ACLNN_FIELD_Double(name) double name = 1.0;

// forEachTensor's visit of each kind: tensors and tensor lists only.
#define TILEJIT_ACLNN_VISIT(kind, name) TILEJIT_ACLNN_VISIT_##kind(name)
#define TILEJIT_ACLNN_VISIT_Tensor(name) f(#name, name);
#define TILEJIT_ACLNN_VISIT_OutTensor(name) f(#name, name);
#define TILEJIT_ACLNN_VISIT_TensorList(name) f(#name, name);
#define TILEJIT_ACLNN_VISIT_IntArray(name)
#define TILEJIT_ACLNN_VISIT_String(name)
#define TILEJIT_ACLNN_VISIT_Bool(name)
#define TILEJIT_ACLNN_VISIT_Int(name)
#define TILEJIT_ACLNN_VISIT_Double(name)

/// The argument struct `Op##Args` of the operator aclnn##Op, from its table
/// `PARAMS` (use in namespace tilejit::aclnn).
#define TILEJIT_ACLNN_ARGS(Op, PARAMS)                                         \
  struct Op##Args {                                                            \
    static constexpr const char *kOpName = "aclnn" #Op;                        \
    PARAMS(TILEJIT_ACLNN_FIELD)                                                \
    /** Calls `f(name, pointer)` for every tensor and tensor-list argument,    \
        in parameter order. */                                                 \
    template <typename F> void forEachTensor(F &&f) const {                    \
      PARAMS(TILEJIT_ACLNN_VISIT)                                              \
    }                                                                          \
  }

namespace tilejit::aclnn {

/// The descriptor check (host::checkDescriptor) of every tensor argument
/// of `args` that is not null, and of every entry of its tensor lists
/// ("key[1]"), in parameter order; the first failure is returned. Runs
/// before any operator rule, in phase 1 of every operator.
template <typename ArgsT> host::Status checkTensorArgs(const ArgsT &args) {
  host::Status result;
  auto check = [&](const char *name, const auto *arg) {
    if (!result.isOk() || !arg)
      return;
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(*arg)>,
                                 host::TensorList>) {
      for (int64_t i = 0; i < arg->size() && result.isOk(); ++i)
        if (const host::TensorView *entry = arg->at(i))
          result = host::checkDescriptor(*entry, std::string(name) + "[" +
                                                     std::to_string(i) + "]");
    } else {
      result = host::checkDescriptor(*arg, name);
    }
  };
  args.forEachTensor(check);
  return result;
}

} // namespace tilejit::aclnn

#endif
