//===- SchedulePrefetch.h - Which op spreads which prefetch --------*- C++ -*-===//
///
/// \file
/// The `schedule-prefetch` pass decides where the lines of each `prefetch
/// {spread}` are requested (codegen/llvm/CodeGenPrefetch.cpp emits them):
/// the spread prefetches of a block wait, in order, for its `mma` and
/// `fused` ops; each such op whose inner loops are long enough takes the
/// oldest one and requests `per` of its lines in each inner iteration: the
/// fewest (at most 8) that finish every row within the iterations; for a
/// one-row region, the fewest that finish its lines wholly inside the row
/// (the last line after the op). The iteration count follows from the op's
/// shape and, for an mma, from select-mma's form and block (so this pass runs
/// after it); an mma on AMX tiles or with K = 0 takes none. The pairing is
/// written on the prefetch: `by = N` (the N-th mma or fused op after it in
/// its block) and `per = P`; a spread prefetch without `by` is requested at
/// the block's end.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_CODEGEN_PASSES_SCHEDULEPREFETCH_H
#define TILEJIT_CODEGEN_PASSES_SCHEDULEPREFETCH_H

#include "codegen/passes/PassContext.h"

namespace tilejit::passes {

bool schedulePrefetch(ir::Kernel &kernel, const PassContext &ctx);

} // namespace tilejit::passes

#endif
