//===- AclObjects.h - What the C handles of the aclnn API are ---*- C++ -*-===//
///
/// \file
/// Completes the opaque C types of aclnn/acl_meta.h: each handle *is* the
/// runtime object (by public inheritance), so a `const aclTensor *` converts
/// implicitly to a `const runtime::TensorView *` and an `aclOpExecutor *` to
/// a `runtime::Executor *`. C++ only; included by the C API implementation,
/// the operators' aclnn glue and tests.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_ACLNN_ACLOBJECTS_H
#define TILEJIT_OPS_ACLNN_ACLOBJECTS_H

#include "aclnn/acl_meta.h"
#include "ops/runtime/Executor.h"
#include "ops/runtime/TensorView.h"

/// A C tensor handle: a TensorView.
struct aclTensor : tilejit::runtime::TensorView {};
/// A C scalar handle: a Scalar.
struct aclScalar : tilejit::runtime::Scalar {};
/// A C int-array handle: an IntArray.
struct aclIntArray : tilejit::runtime::IntArray {};
/// A C float-array handle: a FloatArray.
struct aclFloatArray : tilejit::runtime::FloatArray {};
/// A C bool-array handle: a BoolArray.
struct aclBoolArray : tilejit::runtime::BoolArray {};
/// A C tensor-list handle: a TensorList.
struct aclTensorList : tilejit::runtime::TensorList {};
/// A C executor handle: an Executor.
struct aclOpExecutor : tilejit::runtime::Executor {
  using Executor::Executor;
};

#endif
