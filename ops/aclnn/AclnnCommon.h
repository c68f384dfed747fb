//===- AclnnCommon.h - The two phases shared by every operator --*- C++ -*-===//
///
/// \file
/// Every aclnnXxxGetWorkspaceSize builds the operator's Args struct
/// (ops/aclnn/AclnnParams.h) and calls prepareOp; every aclnnXxx calls
/// runOp; TILEJIT_ACLNN_ENTRIES writes both from the operator's parameter
/// table. prepareOp and runOp do what all operators share:
///
/// Phase 1 (prepareOp): workspaceSize or executor null -> 161001; a tensor
/// argument whose descriptor lies (checkTensorArgs: data null with elements
/// -> 161001; a view reaching outside its storage, overflowing arithmetic,
/// a dtype with no size -> 161002); no operator registered -> 561000 "not
/// implemented yet"; otherwise the
/// registered Prepare validates and fills a fresh executor. On failure the
/// executor is destroyed, `*executor` is set to NULL and the status code is
/// returned with its message recorded for aclGetRecentErrMsg.
///
/// Phase 2 (runOp): executor null, or workspace null with workspaceSize > 0
/// -> 161001; a workspace smaller than phase 1 asked for, an executor made
/// for another operator, an executor handle that is not live (destroyed,
/// or single use and already run), or a stream handle that is not live ->
/// 161002. The launch closure runs on the stream (asynchronously; its
/// failure is reported by aclrtSynchronizeStream) or, on the default
/// stream, at once (its status is returned). A non-repeatable executor is
/// consumed by the run and freed after it (Executors.cpp).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_ACLNN_ACLNNCOMMON_H
#define TILEJIT_OPS_ACLNN_ACLNNCOMMON_H

#include "acl/acl_rt.h"
#include "ops/aclnn/AclObjects.h"
#include "ops/aclnn/AclnnParams.h"
#include "ops/host/OpRegistry.h"

#include <memory>
#include <string>

namespace tilejit::aclnn {

/// Makes `executor` a live handle (owned by the registry) and returns it.
aclOpExecutor *registerExecutor(std::unique_ptr<aclOpExecutor> executor);
/// Phase 2's hold on a live executor of the operator `api`: `out` shares
/// it; a single-use executor is unregistered (consumed) by this. A handle
/// that is not live, made by another operator, or given less workspace
/// than it asked for -> 161002 (and the executor is not consumed).
aclnnStatus acquireExecutor(const char *api, const aclOpExecutor *executor,
                            uint64_t workspaceSize,
                            std::shared_ptr<aclOpExecutor> &out);
/// aclSetAclOpExecutorRepeatable: null -> 161001, not live -> 161002.
aclnnStatus setExecutorRepeatable(const aclOpExecutor *executor);
/// aclDestroyAclOpExecutor: null -> 161001, not live -> 161002; the
/// executor is freed once no queued launch holds it.
aclnnStatus destroyExecutor(const aclOpExecutor *executor);
/// The number of live executor handles (for tests: none may leak).
size_t liveExecutorCount();

/// Phase 1 without the operator: the checks and executor hand-off shared by
/// all operators; `prepare` may be null (not implemented).
template <typename ArgsT>
aclnnStatus prepareOp(const ArgsT &args, uint64_t *workspaceSize,
                      aclOpExecutor **executor) {
  std::string api = std::string(ArgsT::kOpName) + "GetWorkspaceSize";
  if (executor)
    *executor = nullptr;
  if (!workspaceSize)
    return host::recordError(host::Status(host::status::ParamNullptr,
                                          "workspaceSize must not be null"),
                             api.c_str());
  if (!executor)
    return host::recordError(
        host::Status(host::status::ParamNullptr, "executor must not be null"),
        api.c_str());
  if (host::Status s = checkTensorArgs(args); !s)
    return host::recordError(s, api.c_str());
  host::PrepareFn<ArgsT> prepare = host::OpRegistry<ArgsT>::get();
  if (!prepare)
    return host::recordError(
        host::Status(host::status::Inner, "not implemented yet"), api.c_str());
  auto exec = std::make_unique<aclOpExecutor>(ArgsT::kOpName);
  host::Status status = prepare(args, *exec);
  if (!status.isOk())
    return host::recordError(status, api.c_str());
  *workspaceSize = exec->workspaceSize();
  *executor = registerExecutor(std::move(exec));
  return ACLNN_SUCCESS;
}

/// Phase 2 of the operator `opName` (e.g. "aclnnScatterPaKvCache").
aclnnStatus runOp(const char *opName, void *workspace, uint64_t workspaceSize,
                  aclOpExecutor *executor, aclrtStream stream);

} // namespace tilejit::aclnn

// The C parameter of each kind (ops/aclnn/AclnnParams.h), with its comma.
#define TILEJIT_ACLNN_PARAM(kind, name) TILEJIT_ACLNN_CTYPE_##kind name,
#define TILEJIT_ACLNN_CTYPE_Tensor const aclTensor *
#define TILEJIT_ACLNN_CTYPE_OutTensor aclTensor *
#define TILEJIT_ACLNN_CTYPE_TensorList const aclTensorList *
#define TILEJIT_ACLNN_CTYPE_IntArray const aclIntArray *
#define TILEJIT_ACLNN_CTYPE_String char *
#define TILEJIT_ACLNN_CTYPE_Bool bool
#define TILEJIT_ACLNN_CTYPE_Int int64_t
#define TILEJIT_ACLNN_CTYPE_Double double
// The parameter's name, as an initialiser of the Args struct's field.
#define TILEJIT_ACLNN_ARG(kind, name) name,

/// The two C entry points of the operator aclnn##Op from its table `PARAMS`
/// (use once, at namespace scope, in a .cpp file that includes the
/// operator's public header from include/aclnnop/):
///   aclnn##Op##GetWorkspaceSize(<PARAMS>, uint64_t *workspaceSize,
///                               aclOpExecutor **executor)  -> prepareOp
///   aclnn##Op(void *workspace, uint64_t workspaceSize,
///             aclOpExecutor *executor, aclrtStream stream) -> runOp
#define TILEJIT_ACLNN_ENTRIES(Op, PARAMS)                                      \
  extern "C" aclnnStatus aclnn##Op##GetWorkspaceSize(                          \
      PARAMS(TILEJIT_ACLNN_PARAM) uint64_t *workspaceSize,                     \
      aclOpExecutor **executor) {                                              \
    return ::tilejit::aclnn::prepareOp(                                        \
        ::tilejit::aclnn::Op##Args{PARAMS(TILEJIT_ACLNN_ARG)}, workspaceSize,  \
        executor);                                                             \
  }                                                                            \
  extern "C" aclnnStatus aclnn##Op(void *workspace, uint64_t workspaceSize,    \
                                   aclOpExecutor *executor,                    \
                                   aclrtStream stream) {                       \
    return ::tilejit::aclnn::runOp(::tilejit::aclnn::Op##Args::kOpName,        \
                                   workspace, workspaceSize, executor,         \
                                   stream);                                    \
  }

#endif
