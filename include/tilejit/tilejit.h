//===- tilejit/tilejit.h - The C++ API for your own kernels -----*- C++ -*-===//
///
/// \file
/// Write a kernel in the tile DSL (docs/dsl.md), specialise it, launch it on
/// host memory, read its stages: the public C++ API, exposing no LLVM type.
/// Errors come back as values (`Result`, `Status`); nothing here throws or
/// aborts the caller's process.
///
/// \code
///   auto src = tilejit::Source::fromFile("scale.tile");
///   if (!src) { std::cerr << src.error() << "\n"; return 1; }
///   auto k = tilejit::compile(*src, "scale", {{"T", "f32"}});
///   if (!k) { std::cerr << k.error() << "\n"; return 1; }
///   tilejit::Args args;
///   args.tensor(x.data(), {n}).tensor(y.data(), {n}).f32(2.0f);
///   if (tilejit::Status s = k->launch(args); !s) std::cerr << s.message() << "\n";
/// \endcode
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_TILEJIT_H
#define TILEJIT_TILEJIT_H

#include "tilejit/args.h"

#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tilejit {

namespace jit {
class KernelSource;
class CompiledKernel;
} // namespace jit

/// An argument list: one entry per kernel parameter, in declaration order
/// (`tensor`, `i32`, `i64`, `f32`, `boolean`; `named` to have the launch
/// check the parameter's name too).
using Args = rt::ArgPack;
using ElemType = rt::ElemType;
using ParamSig = rt::ParamSig;

/// What kind of mistake an error is, so that a binding can raise the
/// matching exception without reading the message (Python: CompileError,
/// TypeError, ValueError, tilejit.Error).
enum class ErrorKind {
  None,    ///< no error
  Compile, ///< a diagnostic of the source or of its specialisation (file:line:col)
  Type,    ///< arguments of the wrong number, kinds or element types
  Value,   ///< an argument of the right type whose shape or value is refused
  Other,   ///< anything else (an unreadable file, a bounds violation, no memory)
};

/// Success, or a message saying what went wrong and its kind.
class Status {
public:
  Status() = default;
  static Status error(std::string message, ErrorKind kind = ErrorKind::Other) {
    return Status(std::move(message), kind == ErrorKind::None ? ErrorKind::Other : kind);
  }
  explicit operator bool() const { return kind_ == ErrorKind::None; }
  const std::string &message() const { return message_; }
  ErrorKind kind() const { return kind_; }

private:
  Status(std::string message, ErrorKind kind) : message_(std::move(message)), kind_(kind) {}
  std::string message_;
  ErrorKind kind_ = ErrorKind::None;
};

/// A value, or the message of the error that prevented it.
template <class T> class Result {
public:
  Result(T value) : value_(std::move(value)) {}
  Result(Status error) : error_(error.message()), kind_(error.kind()) {}
  explicit operator bool() const { return value_.has_value(); }
  T &operator*() { return *value_; }
  const T &operator*() const { return *value_; }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }
  /// The error's message (empty on success).
  const std::string &error() const { return error_; }
  /// The error's kind (None on success).
  ErrorKind errorKind() const { return kind_; }

private:
  std::optional<T> value_;
  std::string error_;
  ErrorKind kind_ = ErrorKind::None;
};

/// A DSL source text and the name its diagnostics use.
class TILEJIT_API Source {
public:
  /// A source held in memory (`name` appears in diagnostics).
  static Source fromText(std::string name, std::string text);
  /// A regular file of at most 16 MiB; anything else is an error naming the
  /// path and the reason.
  static Result<Source> fromFile(const std::string &path);

  const std::string &name() const;
  const std::string &text() const;

private:
  explicit Source(std::shared_ptr<const jit::KernelSource> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const jit::KernelSource> impl_;
  friend struct Access;
};

/// One compile-time parameter's value: typed (an element type, an integer,
/// a boolean, an enumerator) or as text ("f16", "0x40", "true", "BNSD"),
/// which binding parses by the parameter's declared kind.
class SpecValue {
public:
  enum class Kind : uint8_t { Text, Dtype, Int, Bool, Enum };
  SpecValue() = default;
  SpecValue(const char *text) : text_(text) {}
  SpecValue(std::string text) : text_(std::move(text)) {}
  SpecValue(bool b) : kind_(Kind::Bool), int_(b) {}
  template <class I, class = std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool> &&
                                              !std::is_same_v<I, char>>>
  SpecValue(I v) : kind_(Kind::Int), int_(static_cast<int64_t>(v)) {}
  SpecValue(ElemType t) : kind_(Kind::Dtype), int_(static_cast<int64_t>(t)) {}
  static SpecValue enumerator(std::string name) {
    SpecValue v(std::move(name));
    v.kind_ = Kind::Enum;
    return v;
  }

  Kind kind() const { return kind_; }
  ElemType dtype() const { return static_cast<ElemType>(int_); }
  int64_t integer() const { return int_; }
  bool boolean() const { return int_ != 0; }
  /// Text: as given; Enum: the enumerator.
  const std::string &text() const { return text_; }
  /// As the tiling key prints it: "bf16", "128", "true", "BNSD"; text as given.
  std::string str() const {
    switch (kind_) {
    case Kind::Dtype: return rt::elemTypeName(dtype());
    case Kind::Int: return std::to_string(int_);
    case Kind::Bool: return int_ ? "true" : "false";
    default: return text_;
    }
  }
  bool operator==(const SpecValue &o) const {
    return kind_ == o.kind_ && int_ == o.int_ && text_ == o.text_;
  }
  bool operator!=(const SpecValue &o) const { return !(*this == o); }

private:
  Kind kind_ = Kind::Text;
  int64_t int_ = 0;
  std::string text_;
};

/// Compile-time parameter values by name, typed ({"T", ElemType::F16},
/// {"BN", 64}, {"CAUSAL", true}) or as text ({"T", "f16"}, {"BN", "64"}).
/// `compile` and `emit` bind it to the kernel's declaration; `specialize`
/// returns the bound value.
using Specialization = std::vector<std::pair<std::string, SpecValue>>;

/// The stages of the pipeline whose text `emit` returns.
enum class Stage { Ast, Tile, TileOpt, Llvm, LlvmOpt, Asm };

/// Wall time of each stage of one compilation, in milliseconds (a cache hit
/// reports the stages of the compile that made the kernel; `total` is this
/// request's cost).
struct StageTimes {
  double parse = 0, sema = 0, tilePasses = 0, codegen = 0, llvmOpt = 0, machineCode = 0,
         total = 0;
};

/// A kernel compiled for one specialisation; cheap to copy, immutable.
class TILEJIT_API Kernel {
public:
  /// The tiling key, readably: `scale[BN=64,T=f32]@avx512.O3`.
  const std::string &key() const;
  /// Whether this request compiled it (false: served from a cache).
  bool compiled() const { return compiled_; }
  StageTimes times() const;
  /// The runtime parameters, in declaration order.
  const std::vector<ParamSig> &signature() const;
  /// Bytes of local buffers one program uses.
  int64_t scratchBytes() const;

  /// Checks `args` against the signature and the declared shape relations
  /// (an error names the argument; nothing runs), then runs the grid across
  /// cores (`TILEJIT_NUM_THREADS` caps them; `threads` > 0 caps them further).
  Status launch(const Args &args, int threads = 0) const;

private:
  Kernel(std::shared_ptr<const jit::CompiledKernel> impl, bool compiled)
      : impl_(std::move(impl)), compiled_(compiled) {}
  std::shared_ptr<const jit::CompiledKernel> impl_;
  bool compiled_ = false;
  friend struct Access;
};

/// A compile-time parameter as a kernel declares it (`T: f16|bf16 = f16`).
struct CompileParamDecl {
  enum class Kind { Dtype, Int, Bool, Enum };
  std::string name;
  Kind kind = Kind::Int;
  /// Dtype: the allowed element types (empty: any); Enum: the enumerators.
  std::vector<std::string> choices;
  bool hasDefault = false;
  std::string defaultValue; ///< as text
};

/// A runtime parameter as a kernel declares it (`x: gm<T>[M, N]`, `a: f32`).
struct ParamDecl {
  std::string name;
  bool tensor = false;
  /// The element (tensor) or scalar type as written: a type ("f32") or the
  /// name of a dtype compile-time parameter ("T").
  std::string elemType;
  /// A tensor's dimensions as written: size names, literals, "_".
  std::vector<std::string> dims;
  /// Declared with `if COND`: present only in the specialisations where the
  /// condition holds.
  bool conditional = false;
};

/// A kernel's declaration before any specialisation: what a caller needs to
/// infer the compile-time parameters from its arguments (Python's
/// `@tilejit.jit` does).
struct Declaration {
  std::string kernel;
  std::vector<CompileParamDecl> compileParams;
  std::vector<ParamDecl> params;
};

/// The declaration of kernel `kernel` of `source` (a syntax error or an
/// unknown kernel is an ErrorKind::Compile error).
TILEJIT_API Result<Declaration> declaration(const Source &source, const std::string &kernel);

/// Compiles kernel `kernel` of `source` for `spec` (bound to the kernel's
/// declaration first: defaults applied, unknown or ill-typed values are
/// errors), or serves it from the in-memory or disk cache. DSL errors come
/// back with their file:line:col and caret lines.
TILEJIT_API Result<Kernel> compile(const Source &source, const std::string &kernel,
                       const Specialization &spec = {});

/// `compile` on the process's pool of compile threads (TILEJIT_COMPILE_THREADS,
/// every core where unset): returns at once, and the future holds the kernel
/// or the error, as `compile` would return them. Requests for one key, at once
/// or not, compile it once; at most the pool's threads compile at a time.
TILEJIT_API std::future<Result<Kernel>> compileAsync(const Source &source,
                                                     const std::string &kernel,
                                                     const Specialization &spec = {});

/// `spec` bound to kernel `kernel`'s declaration, as `compile` binds it:
/// every declared parameter with its typed value (text parsed by the
/// parameter's kind, defaults applied), sorted by name. An unknown name, a
/// name given twice, a missing value or a value of the wrong kind is an
/// ErrorKind::Compile error naming the parameter and the rule.
TILEJIT_API Result<Specialization> specialize(const Source &source, const std::string &kernel,
                                              const Specialization &spec);

/// The text of one stage of the same compilation (never cached).
TILEJIT_API Result<std::string> emit(const Source &source, const std::string &kernel,
                         const Specialization &spec, Stage stage);

/// Counters of the kernel cache.
struct CacheStats {
  uint64_t entries = 0, memoryHits = 0, diskHits = 0, compiles = 0;
  /// The in-memory tier: bytes of machine code and data its entries map,
  /// its bound (TILEJIT_MEMORY_CACHE_MAX_BYTES), and the entries evicted
  /// (least recently used first) to stay within it.
  uint64_t memoryBytes = 0, memoryMaxBytes = 0, evictions = 0;
  /// Bytes mapped for every kernel alive: cached, or evicted but still held
  /// by a Kernel handle (its code is freed with the last handle).
  uint64_t mappedBytes = 0;
};
TILEJIT_API CacheStats cacheStats();
/// Drops every in-memory entry (kernels still referenced stay alive).
TILEJIT_API void clearMemoryCache();

/// The tilejit release, e.g. "0.1.0".
TILEJIT_API std::string version();

} // namespace tilejit

#endif
