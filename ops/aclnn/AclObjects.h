//===- AclObjects.h - What the C handles of the aclnn API are ---*- C++ -*-===//
///
/// \file
/// Completes the opaque C types of aclnn/acl_meta.h: each handle *is* the
/// runtime object (by public inheritance), so a `const aclTensor *` converts
/// implicitly to a `const host::TensorView *` and an `aclOpExecutor *` to
/// a `host::Executor *`. C++ only; included by the C API implementation,
/// the operators' aclnn glue and tests.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_ACLNN_ACLOBJECTS_H
#define TILEJIT_OPS_ACLNN_ACLOBJECTS_H

#include "aclnn/acl_meta.h"
#include "ops/host/Executor.h"
#include "ops/host/TensorView.h"

/// A C tensor handle: a TensorView.
struct aclTensor : tilejit::host::TensorView {};
/// A C scalar handle: a Scalar.
struct aclScalar : tilejit::host::Scalar {};
/// A C int-array handle: an IntArray.
struct aclIntArray : tilejit::host::IntArray {};
/// A C float-array handle: a FloatArray.
struct aclFloatArray : tilejit::host::FloatArray {};
/// A C bool-array handle: a BoolArray.
struct aclBoolArray : tilejit::host::BoolArray {};
/// A C tensor-list handle: a TensorList.
struct aclTensorList : tilejit::host::TensorList {};
/// A C executor handle: an Executor.
struct aclOpExecutor : tilejit::host::Executor {
  using Executor::Executor;
};

#endif
