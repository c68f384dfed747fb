//===- ForwardTiles.h - Tiles read and written in place -----------*- C++ -*-===//
///
/// \file
/// The `forward-tiles` pass decides which tiles skip their local buffer on
/// the fast path (the whole tile inside the tensor; otherwise the buffer is
/// used as before), and marks them (dsl/ir/IR.h):
/// - a `load {forward}`: its one user, a `fused` op or an `mma` (as a or b,
///   not acc) in the same block, reads it straight from the tensor, and
///   nothing between the two writes memory. Several users too, when every
///   one is such an mma in the load's block, none reading it as an f32 b not
///   transposed (read in place once per row block, from rows far apart),
///   and nothing from the load to the last of them writes memory (the query
///   rows two products of the attention backward read). An mma with few rows
///   (passes::mmaFewRows) reads b once, interleaved with its FMAs: from memory
///   far away a bulk copy first keeps more misses in flight, so only a
///   `cached` load (data the program has just brought in) is read in place
///   there.
/// - a `load {copy}`: its one user is an unmasked store of it, right after
///   (nothing but pure scalar ops between): rows go from tensor to tensor.
/// - a `fused` op whose one user is such a store writes its result straight
///   into the tensor.
/// - the store of either gets `forwarded`: its producer (the op defining its
///   value) does its fast path.
/// Not where resolve-overlap found the store `buffered`; where it is
/// `checked`, only when the store's offsets can be computed at the load
/// (the run-time test of the regions needs them there).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_CODEGEN_PASSES_FORWARDTILES_H
#define TILEJIT_CODEGEN_PASSES_FORWARDTILES_H

#include "codegen/passes/PassContext.h"

namespace tilejit::passes {

bool forwardTiles(ir::Kernel &kernel, const PassContext &ctx);

} // namespace tilejit::passes

#endif
