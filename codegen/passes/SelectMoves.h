//===- SelectMoves.h - How tiles move between tensors and buffers -*- C++ -*-===//
///
/// \file
/// The `select-moves` pass decides what of a tile move is known at compile
/// time, and writes it on the op (dsl/ir/IR.h):
/// - `row_mask = lanes|rows` on a masked load or store of a non-boolean
///   tensor: how its slow path (a partial or masked tile, moved row by row
///   through a function shared by the module's accesses of that element
///   width) reads the mask: lane by lane, or one byte per row when the mask
///   is a [.., rows, 1] condition broadcast along the rows (a window's tail,
///   `mask = rows < end`), so that each row moves whole or not at all.
///   Boolean tiles move through the runtime and carry none.
/// - `stream` on a store (the source's hint: write around the caches) stays
///   only where the rows allow 16-byte non-temporal stores: 32 bytes or more,
///   a multiple of 16. Whether each row starts 16-byte aligned, and for a
///   tile copy whether the two tiles overlap, is tested at run time.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_CODEGEN_PASSES_SELECTMOVES_H
#define TILEJIT_CODEGEN_PASSES_SELECTMOVES_H

#include "codegen/passes/PassContext.h"

namespace tilejit::passes {

bool selectMoves(ir::Kernel &kernel, const PassContext &ctx);

} // namespace tilejit::passes

#endif
