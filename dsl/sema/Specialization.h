//===- Specialization.h - Compile-time parameter values, typed ---*- C++ -*-===//
///
/// \file
/// One kernel instance's compile-time parameters: name -> typed value (a
/// dtype, an integer, a boolean or an enumerator), the one value that flows
/// from an operator's host code through the tiling key, the kernel caches and
/// the front end (docs/dsl.md, "Specialisation").
///
/// A request may hold values as text ({"BN", "0x40"}, as the command line,
/// Python and the public API give them); binding it to a kernel's declaration
/// (dsl::bindSpecialization) parses each text by its parameter's kind,
/// checks every value against the declaration, applies the defaults and
/// returns the canonical value: every declared parameter, typed, sorted by
/// name, hashed once. Two requests that mean one kernel bind to equal values.
///
/// Entries are kept sorted by name (a name given twice keeps both, in the
/// order given, for binding to report). The hash is computed when the value
/// is built or changed, never on lookup.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_DSL_SEMA_SPECIALIZATION_H
#define TILEJIT_DSL_SEMA_SPECIALIZATION_H

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilejit::ir {
enum class ScalarKind : uint8_t; // dsl/ir/IR.h
}

namespace tilejit::dsl {

/// One compile-time parameter's value.
class SpecValue {
public:
  enum class Kind : uint8_t {
    Text,  ///< not yet bound: parsed by the parameter's kind when bound
    Dtype, ///< an element type (`T: f16|bf16`)
    Int,   ///< a 64-bit signed integer (`D: i64`)
    Bool,  ///< `CAUSAL: bool`
    Enum,  ///< an enumerator's name (`L: enum(BSH, BNSD)`)
  };

  SpecValue() = default;
  SpecValue(const char *text) : text_(text) {}
  SpecValue(std::string text) : text_(std::move(text)) {}
  SpecValue(std::string_view text) : text_(text) {}
  SpecValue(bool b) : kind_(Kind::Bool), int_(b) {}
  template <std::integral I>
    requires(!std::same_as<I, bool> && !std::same_as<I, char>)
  SpecValue(I v) : kind_(Kind::Int), int_(static_cast<int64_t>(v)) {}
  SpecValue(ir::ScalarKind k) : kind_(Kind::Dtype), int_(static_cast<int64_t>(k)) {}
  static SpecValue enumerator(std::string name) {
    SpecValue v(std::move(name));
    v.kind_ = Kind::Enum;
    return v;
  }

  Kind kind() const { return kind_; }
  ir::ScalarKind dtype() const { return static_cast<ir::ScalarKind>(int_); }
  int64_t integer() const { return int_; }
  bool boolean() const { return int_ != 0; }
  /// Text: the text as given; Enum: the enumerator's name.
  const std::string &text() const { return text_; }

  /// The value as the key prints it: a dtype's name (`bf16`), a decimal
  /// integer, `true`/`false`, an enumerator's name; text as given.
  std::string str() const;

  bool operator==(const SpecValue &o) const {
    return kind_ == o.kind_ && int_ == o.int_ && text_ == o.text_;
  }
  bool operator<(const SpecValue &o) const;

private:
  Kind kind_ = Kind::Text;
  int64_t int_ = 0;  ///< Int, Bool (0/1), Dtype (the ScalarKind)
  std::string text_; ///< Text, Enum
};

/// Compile-time parameter values by name; see the file comment.
class Specialization {
public:
  using value_type = std::pair<std::string, SpecValue>;
  using const_iterator = std::vector<value_type>::const_iterator;

  Specialization() { rehash(); }
  Specialization(std::initializer_list<value_type> entries);
  /// From name/value pairs whose values convert to SpecValue (text pairs
  /// among them).
  template <class It> Specialization(It first, It last) {
    for (; first != last; ++first)
      insert(value_type(first->first, SpecValue(first->second)));
    rehash();
  }

  /// From text pairs, as the command line, Python and manifests give them
  /// (binding parses each by its parameter's kind).
  Specialization(const std::vector<std::pair<std::string, std::string>> &text)
      : Specialization(text.begin(), text.end()) {}

  /// Adds an entry (kept sorted by name; a repeated name is kept after the
  /// first, for binding to report).
  void emplace_back(std::string name, SpecValue value);
  void push_back(value_type entry) { emplace_back(std::move(entry.first), std::move(entry.second)); }

  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const value_type &operator[](size_t i) const { return entries_[i]; }
  /// The value of parameter `name`, or null.
  const SpecValue *find(std::string_view name) const;

  /// Whether this is a value binding made: canonical, validated against the
  /// kernel's declaration, every declared parameter present.
  bool bound() const { return bound_; }
  /// The hash of the entries (names and typed values), computed when the
  /// value was built or last changed.
  uint64_t hash() const { return hash_; }
  /// `P=V,...` in name order, as the tiling key prints it.
  std::string str() const;

  /// Equal entries (names and typed values); `bound` is not compared.
  bool operator==(const Specialization &o) const {
    return hash_ == o.hash_ && entries_ == o.entries_;
  }
  bool operator<(const Specialization &o) const { return entries_ < o.entries_; }

  /// The canonical value binding makes (dsl::bindSpecialization): sorted,
  /// typed, every declared parameter; only the front end builds one.
  static Specialization makeBound(std::vector<value_type> sortedEntries);

private:
  void insert(value_type entry);
  void rehash();

  std::vector<value_type> entries_;
  uint64_t hash_ = 0;
  bool bound_ = false;
};

} // namespace tilejit::dsl

#endif
