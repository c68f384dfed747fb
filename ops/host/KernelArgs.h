//===- KernelArgs.h - Host tensors as kernel arguments ----------*- C++ -*-===//
///
/// \file
/// What an operator's host side needs to pass its tensors to a kernel: the
/// DSL kind a dtype specialises a kernel with, the argument element type of
/// a kind or a dtype, and a view's axes collapsed into the 2-D/3-D views the
/// kernels take.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_HOST_KERNELARGS_H
#define TILEJIT_OPS_HOST_KERNELARGS_H

#include "ops/host/DataType.h"
#include "ops/host/TensorView.h"
#include "runtime/Runtime.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tilejit::host {

/// The unsigned DSL kind of an element of `bytes` bytes ("u8", "u16",
/// "u32"): byte-exact moves specialise on the width only.
const char *copyKind(int64_t bytes);
/// "i32" or "i64" for an index dtype.
const char *indexKind(DataType type);
/// The DSL kind of a value dtype: "f16", "bf16", "f32", "i8", else "u8".
const char *valueKind(DataType type);
/// The argument element type of a DSL kind ("f16", "u8", ...) an operator
/// specialised a kernel with.
rt::ElemType elemType(const char *kind);
/// The argument element type of a tensor of `type` (bool as u8, its bytes).
rt::ElemType elemType(DataType type);

/// A view re-expressed with fewer axes (for rt::ArgPack::tensor).
struct FlatView {
  void *data = nullptr;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
};

/// Merges the axes of `view` in groups: `groups` lists the number of
/// consecutive source axes per result axis (they must add up to the rank).
/// A group merges only if its axes are nested (stride[k] == size[k+1] *
/// stride[k+1], size-1 axes ignored); otherwise nullopt.
std::optional<FlatView> collapse(const TensorView &view,
                                 const std::vector<int> &groups);

} // namespace tilejit::host

#endif
