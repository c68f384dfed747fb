//===- TilingKey.h - Everything that changes a kernel's code -----*- C++ -*-===//
///
/// \file
/// The tiling key of a kernel instance: kernel name, hash of its DSL source,
/// compile-time parameters, target (level, CPU name, features), tilejit and
/// LLVM versions and opt level. Two requests compile to the same code exactly
/// when their keys are equal. `str()` prints readably
/// (`softmax[BN=1024,T=f16]@avx512.O3`); `hash()` is precomputed, from the
/// specialisation's own hash (dsl::Specialization hashes itself once, when
/// bound) and the other fields.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_JIT_TILINGKEY_H
#define TILEJIT_JIT_TILINGKEY_H

#include "dsl/sema/Specialization.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace tilejit::jit {

class TilingKey {
public:
  struct Fields {
    std::string kernel;
    uint64_t sourceHash = 0;
    /// The compile-time parameters: the bound specialisation (typed, sorted
    /// by name).
    dsl::Specialization params;
    std::string level;    ///< "avx2" or "avx512"
    std::string cpu;      ///< CPU name given to LLVM
    std::string features; ///< feature string given to LLVM
    uint64_t l1dBytes = 0; ///< the L1 data cache codegen assumed (0: unknown)
    std::string tilejitVersion;
    std::string llvmVersion;
    unsigned optLevel = 3;
    bool debug = false; ///< bounds-checked code (TILEJIT_DEBUG)
    bool operator==(const Fields &) const = default;
  };

  TilingKey() = default;
  explicit TilingKey(Fields f);

  const Fields &fields() const { return f_; }
  /// Readable form: `name[P=V,...]@level.O<n>`.
  const std::string &str() const { return str_; }
  /// Every field, unambiguously (the disk cache's check of an entry's key;
  /// built when asked for).
  std::string canonical() const;
  uint64_t hash() const { return hash_; }
  /// `tj_<16 hex digits>`: the symbol stem of the compiled kernel.
  std::string symbolStem() const;

  bool operator==(const TilingKey &o) const { return hash_ == o.hash_ && f_ == o.f_; }
  bool operator!=(const TilingKey &o) const { return !(*this == o); }

private:
  std::string canonical(bool withParams) const;

  Fields f_;
  std::string str_;
  uint64_t hash_ = 0;
};

/// 64-bit FNV-1a followed by a final mix; stable across runs and platforms.
uint64_t hashBytes(const void *data, size_t size, uint64_t seed = 0);

} // namespace tilejit::jit

template <> struct std::hash<tilejit::jit::TilingKey> {
  size_t operator()(const tilejit::jit::TilingKey &k) const noexcept {
    return static_cast<size_t>(k.hash());
  }
};

#endif
