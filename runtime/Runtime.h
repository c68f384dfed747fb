//===- Runtime.h - The ABI between generated kernels and the host -*- C++ -*-===//
///
/// \file
/// Plain C++ (no LLVM headers): what a JIT-compiled kernel expects from its
/// caller, and what the caller gets back. codegen/llvm emits functions with
/// exactly these signatures; jit/ launches them; ops/ and tests fill
/// `ArgPack`s.
///
/// A compiled kernel exports three symbols, named by the kernel's symbol stem
/// (see `KernelSymbols`):
///   - `<stem>_program`: runs one program of the grid;
///   - `<stem>_grid`: computes the grid from the arguments and checks the
///     kernel's shape constraints before anything runs;
///   - `<stem>_scratch`: an i64 global, the bytes of local-buffer scratch one
///     program needs (the planned Unified Buffer size).
///
/// Arguments: `args[i]` points to parameter i, in declaration order. A tensor
/// parameter points to a `TensorDesc`; a scalar parameter points to its value
/// in its natural C type (i1 as uint8_t, i32 as int32_t, i64 as int64_t, f32
/// as float).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_RUNTIME_RUNTIME_H
#define TILEJIT_RUNTIME_RUNTIME_H

// TensorDesc, ElemType, ParamSig, ArgPack and TILEJIT_API: the public part.
#include "tilejit/args.h"

#include <cstdint>
#include <string>

namespace tilejit::rt {

/// Runs program `pid` (3 axes) of a grid with extents `nprog`. `scratch`
/// points to at least `<stem>_scratch` bytes, 64-byte aligned, private to the
/// calling thread for the duration of the call.
using ProgramFn = void (*)(void *const *args, const int64_t *pid,
                           const int64_t *nprog, void *scratch);

/// Writes the grid extents (3 axes; unused axes are 1) into `grid`. Returns 0,
/// or k+1 when shape constraint k is violated (nothing may run then).
using GridFn = int64_t (*)(void *const *args, int64_t *grid);

/// Moves between a global tensor and a tile's local buffer when the tile is
/// not wholly inside the tensor, is masked, or the tensor's innermost axis is
/// strided: generated code handles whole, contiguous tiles itself and calls
/// these out of line for the rest (one copy of this code instead of one per
/// access keeps kernels small and quick to compile).
///
/// The tile has `tileRank` axes of extents `shape`; it covers the tensor's
/// last `tileRank` axes starting at `offsets` (one per tensor axis, `rank` in
/// all; leading axes take one index each). Element (i...) of the tile is
/// element offsets + (0..., i...) of the tensor, stored row-major in the
/// buffer. `mask`, when not null, holds one byte (0 or 1) per tile element.
///
/// Load: elements outside the tensor or masked off read `*other` (bytes of
/// one element); with `boolean` set, loaded bytes become 0 or 1.
/// Store: only elements inside the tensor and not masked off are written.
/// Neither follows an index outside the tensor.
constexpr const char *kLoadTileSymbol = "tilejit_rt_load_tile";
constexpr const char *kStoreTileSymbol = "tilejit_rt_store_tile";
extern "C" TILEJIT_API void tilejit_rt_load_tile(void *buffer, const TensorDesc *tensor, int64_t rank,
                                     const int64_t *offsets, const int64_t *shape,
                                     int64_t tileRank, int64_t elemBytes,
                                     const uint8_t *mask, const void *other, int64_t boolean);
extern "C" TILEJIT_API void tilejit_rt_store_tile(const void *buffer, const TensorDesc *tensor,
                                      int64_t rank, const int64_t *offsets,
                                      const int64_t *shape, int64_t tileRank,
                                      int64_t elemBytes, const uint8_t *mask);

/// Debug mode (TILEJIT_DEBUG): a `check_bounds` whose access misses its
/// tensor reports it here (`site` is "file:line:col: load of x"; the region
/// [index, index + extent) along `axis` misses [0, size)). The launch that
/// runs the program stops at the first report and returns it as its error.
constexpr const char *kBoundsViolationSymbol = "tilejit_rt_bounds_violation";
extern "C" TILEJIT_API void tilejit_rt_bounds_violation(const char *site, int64_t axis, int64_t index,
                                            int64_t extent, int64_t size);

/// The symbol names of one compiled kernel.
struct KernelSymbols {
  std::string stem;
  std::string program() const { return stem + "_program"; }
  std::string grid() const { return stem + "_grid"; }
  std::string scratch() const { return stem + "_scratch"; }
};

} // namespace tilejit::rt

#endif
