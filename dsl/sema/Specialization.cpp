//===- Specialization.cpp - Compile-time parameter values, typed ----------===//
#include "dsl/sema/Specialization.h"

#include "dsl/ir/IR.h"

#include <algorithm>
#include <tuple>

namespace tilejit::dsl {

namespace {

/// 64-bit FNV-1a over the entries, then a splitmix64 finaliser (the mix
/// jit::hashBytes uses); stable across runs and platforms.
struct Hasher {
  uint64_t h = 0xcbf29ce484222325ull;
  void bytes(const void *data, size_t size) {
    const auto *p = static_cast<const unsigned char *>(data);
    for (size_t i = 0; i < size; ++i) {
      h ^= p[i];
      h *= 0x100000001b3ull;
    }
  }
  void text(const std::string &s) {
    uint64_t n = s.size();
    bytes(&n, sizeof n);
    bytes(s.data(), s.size());
  }
  uint64_t finish() const {
    uint64_t x = h;
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
  }
};

} // namespace

std::string SpecValue::str() const {
  switch (kind_) {
  case Kind::Dtype:
    return ir::scalarName(dtype());
  case Kind::Int:
    return std::to_string(int_);
  case Kind::Bool:
    return int_ ? "true" : "false";
  case Kind::Text:
  case Kind::Enum:
    return text_;
  }
  return text_;
}

bool SpecValue::operator<(const SpecValue &o) const {
  return std::tie(kind_, int_, text_) < std::tie(o.kind_, o.int_, o.text_);
}

Specialization::Specialization(std::initializer_list<value_type> entries) {
  for (const value_type &e : entries)
    insert(e);
  rehash();
}

void Specialization::insert(value_type entry) {
  // After every entry of the same name: a name given twice keeps its order.
  auto at = std::upper_bound(entries_.begin(), entries_.end(), entry.first,
                             [](const std::string &name, const value_type &e) {
                               return name < e.first;
                             });
  entries_.insert(at, std::move(entry));
}

void Specialization::emplace_back(std::string name, SpecValue value) {
  insert(value_type(std::move(name), std::move(value)));
  bound_ = false;
  rehash();
}

const SpecValue *Specialization::find(std::string_view name) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const value_type &e, std::string_view n) { return e.first < n; });
  return it != entries_.end() && it->first == name ? &it->second : nullptr;
}

std::string Specialization::str() const {
  std::string out;
  for (const auto &[name, value] : entries_)
    out += (out.empty() ? "" : ",") + name + "=" + value.str();
  return out;
}

Specialization Specialization::makeBound(std::vector<value_type> sortedEntries) {
  Specialization s;
  s.entries_ = std::move(sortedEntries);
  std::stable_sort(s.entries_.begin(), s.entries_.end(),
                   [](const value_type &a, const value_type &b) { return a.first < b.first; });
  s.bound_ = true;
  s.rehash();
  return s;
}

void Specialization::rehash() {
  Hasher h;
  uint64_t n = entries_.size();
  h.bytes(&n, sizeof n);
  for (const auto &[name, value] : entries_) {
    h.text(name);
    auto kind = static_cast<uint8_t>(value.kind());
    h.bytes(&kind, 1);
    int64_t i = value.integer();
    h.bytes(&i, sizeof i);
    h.text(value.text());
  }
  hash_ = h.finish();
}

} // namespace tilejit::dsl
