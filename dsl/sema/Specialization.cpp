//===- Specialization.cpp - Compile-time parameter values, typed ----------===//
#include "dsl/sema/Specialization.h"

#include "dsl/ir/IR.h"

#include <algorithm>
#include <cstring>
#include <tuple>

namespace tilejit::dsl {

namespace {

/// A word-at-a-time mix over the entries (a few multiplies per entry, not
/// one per byte), then splitmix64's finaliser; stable across runs.
struct Hasher {
  uint64_t h = 0x9E3779B97F4A7C15ull;
  void word(uint64_t v) {
    h ^= v;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
  }
  void text(const std::string &s) {
    size_t i = 0;
    uint64_t w;
    for (; i + 8 <= s.size(); i += 8) {
      std::memcpy(&w, s.data() + i, 8);
      word(w);
    }
    // The tail (at most 7 bytes) and the length in one word, so "a" and
    // "a\0" differ.
    w = 0;
    std::memcpy(&w, s.data() + i, s.size() - i);
    word(w | (static_cast<uint64_t>(s.size() & 0xff) << 56));
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

Specialization::Specialization(std::initializer_list<value_type> entries)
    : entries_(entries) {
  // Stable: a name given twice keeps its order.
  std::stable_sort(entries_.begin(), entries_.end(),
                   [](const value_type &a, const value_type &b) { return a.first < b.first; });
  rehash();
}

void Specialization::insert(value_type entry) {
  if (entries_.empty() || !(entry.first < entries_.back().first)) {
    entries_.push_back(std::move(entry));
    return;
  }
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
  h.word(entries_.size());
  for (const auto &[name, value] : entries_) {
    h.text(name);
    h.word(static_cast<uint64_t>(value.kind()) << 56);
    h.word(static_cast<uint64_t>(value.integer()));
    if (!value.text().empty())
      h.text(value.text());
  }
  hash_ = h.finish();
}

} // namespace tilejit::dsl
