//===- tilejit/args.h - A kernel launch's arguments -------------*- C++ -*-===//
///
/// \file
/// The part of the launch ABI a caller of <tilejit/tilejit.h> fills in:
/// tensor descriptors (the layout JIT-compiled kernels read), element types,
/// a kernel's runtime parameters and the argument block (`ArgPack`, which
/// tilejit.h calls `tilejit::Args`). Plain C++, no other header of tilejit's;
/// the rest of the ABI (kernel entry points, the runtime's out-of-line
/// helpers) is internal (runtime/Runtime.h, which includes this one).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_ARGS_H
#define TILEJIT_ARGS_H

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <type_traits>
#include <vector>

/// Marks what libtilejit.so exports: the library is built with
/// -fvisibility=hidden, so a declaration without it stays inside.
#ifndef TILEJIT_API
#define TILEJIT_API __attribute__((visibility("default")))
#endif

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

/// The element type of a tensor or scalar argument, in the DSL's names (the
/// order of the DSL's scalar kinds).
enum class ElemType : uint8_t { I1, I8, U8, I16, U16, I32, U32, I64, F16, BF16, F32 };

constexpr const char *elemTypeName(ElemType t) {
  constexpr const char *names[] = {"i1",  "i8",  "u8",  "i16", "u16", "i32",
                                   "u32", "i64", "f16", "bf16", "f32"};
  return names[static_cast<unsigned>(t)];
}

/// The element type a DSL kind names ("f16", "u8", ...); false if none.
inline bool parseElemType(const std::string &name, ElemType &out) {
  for (unsigned i = 0; i <= static_cast<unsigned>(ElemType::F32); ++i)
    if (name == elemTypeName(static_cast<ElemType>(i))) {
      out = static_cast<ElemType>(i);
      return true;
    }
  return false;
}

/// The element type of a C++ pointee: uint16_t is u16 and uint8_t is u8, so
/// f16 and bf16 data, i1 bytes and untyped memory name theirs explicitly
/// (`ArgPack::tensor(ElemType, ...)`).
template <class T> constexpr ElemType elemTypeOf() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, float>)
    return ElemType::F32;
  else if constexpr (std::is_same_v<U, int64_t>)
    return ElemType::I64;
  else if constexpr (std::is_same_v<U, int32_t>)
    return ElemType::I32;
  else if constexpr (std::is_same_v<U, uint32_t>)
    return ElemType::U32;
  else if constexpr (std::is_same_v<U, int16_t>)
    return ElemType::I16;
  else if constexpr (std::is_same_v<U, uint16_t>)
    return ElemType::U16;
  else if constexpr (std::is_same_v<U, int8_t>)
    return ElemType::I8;
  else if constexpr (std::is_same_v<U, uint8_t>)
    return ElemType::U8;
  else {
    static_assert(!std::is_same_v<T, T>, "name the element type: tensor(ElemType, data, ...)");
    return ElemType::U8;
  }
}

/// One runtime parameter of a compiled kernel, as its declaration has it.
struct ParamSig {
  std::string name;
  bool tensor = false;
  ElemType type = ElemType::F32;
  int64_t rank = 0; ///< a tensor's declared rank
};

/// Builds an argument block: one entry per kernel parameter, in declaration
/// order, each with its kind and element type (and optionally the
/// parameter's name), which `CompiledKernel::launch` checks against the
/// kernel's signature before anything runs. Values are stored inside the
/// pack (stable addresses), so the pack must outlive the launch. A copy
/// points at its own values (tensors' data pointers are copied as given).
class ArgPack {
public:
  ArgPack() = default;
  ArgPack(const ArgPack &other)
      : tensors_(other.tensors_), scalars_(other.scalars_),
        entries_(other.entries_) {
    relink();
  }
  ArgPack &operator=(const ArgPack &other) {
    if (this != &other) {
      tensors_ = other.tensors_;
      scalars_ = other.scalars_;
      entries_ = other.entries_;
      relink();
    }
    return *this;
  }
  // A deque's move keeps its elements where they are.
  ArgPack(ArgPack &&) = default;
  ArgPack &operator=(ArgPack &&) = default;

  /// Moves every tensor whose data lies in [from, from + bytes) by the same
  /// offset into the buffer at `to` (for a copy of the pack over another
  /// copy of its buffers).
  void relocate(const void *from, size_t bytes, void *to) {
    const auto lo = reinterpret_cast<uintptr_t>(from);
    for (TensorDesc &d : tensors_) {
      const auto p = reinterpret_cast<uintptr_t>(d.data);
      if (d.data && p >= lo && p - lo < bytes)
        d.data = static_cast<char *>(to) + (p - lo);
    }
  }

  /// What one entry claims to be.
  struct Entry {
    bool tensor = false;
    ElemType type = ElemType::F32;
    int64_t givenRank = 0;      ///< tensors: the rank given (may exceed kMaxRank)
    const char *name = nullptr; ///< the parameter it is meant for, if named
  };

  /// A contiguous row-major tensor of `type`.
  ArgPack &tensor(ElemType type, void *data, const std::vector<int64_t> &sizes) {
    std::vector<int64_t> strides(sizes.size());
    int64_t s = 1;
    for (size_t i = sizes.size(); i-- > 0;) {
      strides[i] = s;
      s = static_cast<int64_t>(static_cast<uint64_t>(s) * static_cast<uint64_t>(sizes[i]));
    }
    return tensor(type, data, sizes, strides);
  }
  /// A strided tensor of `type` (strides in elements, one per size).
  ArgPack &tensor(ElemType type, void *data, const std::vector<int64_t> &sizes,
                  const std::vector<int64_t> &strides) {
    TensorDesc &d = tensors_.emplace_back();
    d.data = data;
    d.rank = static_cast<int64_t>(sizes.size());
    for (size_t i = 0; i < sizes.size() && i < kMaxRank; ++i) {
      d.sizes[i] = sizes[i];
      d.strides[i] = i < strides.size() ? strides[i] : 0;
    }
    if (strides.size() != sizes.size())
      d.rank = -1; // refused at launch: a stride per size
    entries_.push_back({true, type, static_cast<int64_t>(sizes.size()), nullptr});
    ptrs_.push_back(&d);
    return *this;
  }
  /// The same, the element type from the pointee (float, int64_t, ...).
  template <class T> ArgPack &tensor(T *data, const std::vector<int64_t> &sizes) {
    return tensor(elemTypeOf<T>(), const_cast<std::remove_cv_t<T> *>(data), sizes);
  }
  template <class T>
  ArgPack &tensor(T *data, const std::vector<int64_t> &sizes,
                  const std::vector<int64_t> &strides) {
    return tensor(elemTypeOf<T>(), const_cast<std::remove_cv_t<T> *>(data), sizes, strides);
  }
  ArgPack &i32(int32_t v) { return push(&v, 4, ElemType::I32); }
  ArgPack &i64(int64_t v) { return push(&v, 8, ElemType::I64); }
  ArgPack &f32(float v) { return push(&v, 4, ElemType::F32); }
  ArgPack &boolean(bool v) {
    uint8_t b = v;
    return push(&b, 1, ElemType::I1);
  }
  /// Names the parameter the last entry is for (a string that outlives the
  /// pack): the launch checks it, so an argument list out of order fails by
  /// name instead of running.
  ArgPack &named(const char *name) {
    if (!entries_.empty())
      entries_.back().name = name;
    return *this;
  }

  void *const *data() const { return ptrs_.data(); }
  size_t size() const { return ptrs_.size(); }
  const Entry &entry(size_t i) const { return entries_[i]; }

private:
  /// Points ptrs_ at this pack's own values, in entry order.
  void relink() {
    ptrs_.clear();
    size_t t = 0, v = 0;
    for (const Entry &e : entries_)
      ptrs_.push_back(e.tensor ? static_cast<void *>(&tensors_[t++])
                               : static_cast<void *>(scalars_[v++].bytes));
  }
  ArgPack &push(const void *v, size_t n, ElemType type) {
    Slot &s = scalars_.emplace_back();
    __builtin_memcpy(s.bytes, v, n);
    ptrs_.push_back(s.bytes);
    entries_.push_back({false, type, 0, nullptr});
    return *this;
  }
  struct Slot {
    alignas(8) unsigned char bytes[8] = {};
  };
  std::deque<TensorDesc> tensors_;
  std::deque<Slot> scalars_;
  std::vector<void *> ptrs_;
  std::vector<Entry> entries_;
};

} // namespace tilejit::rt

#endif
