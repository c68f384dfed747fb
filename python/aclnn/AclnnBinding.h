//===- AclnnBinding.h - The generic half of tilejit._aclnn ------*- C++ -*-===//
///
/// \file
/// tilejit._aclnn has two halves. gen_aclnn_bindings.py reads every
/// include/aclnnop/*.h with libclang and writes one table row per entry point
/// (its Python name, its phase-1 parameters with their kinds and which may be
/// null, a thunk calling phase 1 with the converted arguments, and phase 2);
/// this half, written once, turns Python arguments into the aclnn argument
/// objects, runs the two phases with the GIL released, and raises tilejit's
/// exceptions. Nothing here names an operator.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_PYTHON_ACLNN_ACLNNBINDING_H
#define TILEJIT_PYTHON_ACLNN_ACLNNBINDING_H

#include "aclnn/aclnn_base.h"

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>

namespace tilejit::pyaclnn {

/// What a phase-1 parameter takes, from its C type.
enum class Kind {
  Tensor,     ///< aclTensor *: a torch.Tensor on the CPU (or a NumPy array)
  TensorList, ///< aclTensorList *: a list or tuple of tensors
  IntArray,   ///< aclIntArray *: a sequence of ints
  FloatArray, ///< aclFloatArray *: a sequence of floats
  BoolArray,  ///< aclBoolArray *: a sequence of bools
  Int,        ///< an integer type: an int
  Float,      ///< double or float: a float (or an int)
  Str,        ///< char *: a str
  Bool,       ///< bool: a bool
};

/// One phase-1 parameter (workspaceSize and executor excluded).
struct Param {
  const char *name; ///< the header's parameter name, the Python keyword
  Kind kind;
  bool optional; ///< marked ACLNN_OPTIONAL: None passes NULL
};

/// One converted argument: the value phase 1 receives, in the member of its
/// kind (pointers are null for None).
struct Slot {
  aclTensor *tensor = nullptr;
  aclTensorList *tensorList = nullptr;
  aclIntArray *intArray = nullptr;
  aclFloatArray *floatArray = nullptr;
  aclBoolArray *boolArray = nullptr;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  char *str = nullptr;
};

/// Calls aclnnXxxGetWorkspaceSize with one slot per parameter, in order.
using Phase1Thunk = aclnnStatus (*)(const Slot *slots, uint64_t *workspaceSize,
                                    aclOpExecutor **executor);
/// aclnnXxx itself.
using Phase2Fn = aclnnStatus (*)(void *workspace, uint64_t workspaceSize,
                                 aclOpExecutor *executor, aclrtStream stream);

/// One entry point of the headers.
struct EntryPoint {
  const char *name;       ///< the Python name: "GatherPaKvCache"
  const char *phase1Name; ///< "aclnnGatherPaKvCacheGetWorkspaceSize"
  const char *header;     ///< "aclnnop/aclnn_gather_pa_kv_cache.h"
  const Param *params;
  size_t numParams;
  Phase1Thunk phase1;
  Phase2Fn phase2;
};

/// A named value of one of the headers' enums (aclFormat, aclDataType).
struct EnumName {
  const char *name; ///< without the ACL_ / ACL_FORMAT_ prefix: "FRACTAL_NZ"
  int value;
};

/// The tables the generator writes.
struct Tables {
  const EntryPoint *entries;
  size_t numEntries;
  const EnumName *formats;
  size_t numFormats;
  const EnumName *dataTypes;
  size_t numDataTypes;
};

/// Fills module `m`: one function per entry point, ENTRY_POINTS, FORMATS,
/// DATA_TYPES and with_format.
void defineModule(pybind11::module_ &m, const Tables &tables);

} // namespace tilejit::pyaclnn

#endif
