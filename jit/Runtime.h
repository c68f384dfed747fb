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
#ifndef TILEJIT_JIT_RUNTIME_H
#define TILEJIT_JIT_RUNTIME_H

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace tilejit::rt {

constexpr int kMaxRank = 6;

/// A view of a global tensor. Strides are in elements, not bytes. The
/// generated code reads `data`, `sizes[0..rank)` and `strides[0..rank)` at
/// fixed offsets, so this layout is part of the ABI.
struct TensorDesc {
  void *data = nullptr;
  int64_t rank = 0;
  int64_t sizes[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
};
static_assert(offsetof(TensorDesc, data) == 0);
static_assert(offsetof(TensorDesc, rank) == 8);
static_assert(offsetof(TensorDesc, sizes) == 16);
static_assert(offsetof(TensorDesc, strides) == 16 + 8 * kMaxRank);

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
extern "C" void tilejit_rt_load_tile(void *buffer, const TensorDesc *tensor, int64_t rank,
                                     const int64_t *offsets, const int64_t *shape,
                                     int64_t tileRank, int64_t elemBytes,
                                     const uint8_t *mask, const void *other, int64_t boolean);
extern "C" void tilejit_rt_store_tile(const void *buffer, const TensorDesc *tensor,
                                      int64_t rank, const int64_t *offsets,
                                      const int64_t *shape, int64_t tileRank,
                                      int64_t elemBytes, const uint8_t *mask);

/// The symbol names of one compiled kernel.
struct KernelSymbols {
  std::string stem;
  std::string program() const { return stem + "_program"; }
  std::string grid() const { return stem + "_grid"; }
  std::string scratch() const { return stem + "_scratch"; }
};

/// Builds an argument block. Values are stored inside the pack (stable
/// addresses), so the pack must outlive the launch.
class ArgPack {
public:
  /// A contiguous row-major tensor.
  ArgPack &tensor(void *data, const std::vector<int64_t> &sizes) {
    std::vector<int64_t> strides(sizes.size());
    int64_t s = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
      strides[i] = s;
      s *= sizes[i];
    }
    return tensor(data, sizes, strides);
  }
  /// A strided tensor (strides in elements).
  ArgPack &tensor(void *data, const std::vector<int64_t> &sizes,
                  const std::vector<int64_t> &strides) {
    TensorDesc &d = tensors_.emplace_back();
    d.data = data;
    d.rank = static_cast<int64_t>(sizes.size());
    for (size_t i = 0; i < sizes.size() && i < kMaxRank; ++i) {
      d.sizes[i] = sizes[i];
      d.strides[i] = strides[i];
    }
    ptrs_.push_back(&d);
    return *this;
  }
  ArgPack &i32(int32_t v) { return push(&v, 4); }
  ArgPack &i64(int64_t v) { return push(&v, 8); }
  ArgPack &f32(float v) { return push(&v, 4); }
  ArgPack &boolean(bool v) {
    uint8_t b = v;
    return push(&b, 1);
  }

  void *const *data() const { return ptrs_.data(); }
  size_t size() const { return ptrs_.size(); }

private:
  ArgPack &push(const void *v, size_t n) {
    Slot &s = scalars_.emplace_back();
    __builtin_memcpy(s.bytes, v, n);
    ptrs_.push_back(s.bytes);
    return *this;
  }
  struct Slot {
    alignas(8) unsigned char bytes[8] = {};
  };
  std::deque<TensorDesc> tensors_;
  std::deque<Slot> scalars_;
  std::vector<void *> ptrs_;
};

} // namespace tilejit::rt

#endif
