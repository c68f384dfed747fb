//===- TilingKey.cpp - Everything that changes a kernel's code ------------===//
#include "jit/TilingKey.h"

#include <cstdio>

namespace tilejit::jit {

uint64_t hashBytes(const void *data, size_t size, uint64_t seed) {
  const auto *p = static_cast<const unsigned char *>(data);
  uint64_t h = 0xcbf29ce484222325ull ^ seed;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  // splitmix64 finaliser: spreads FNV's weak low bits.
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

TilingKey::TilingKey(Fields f) : f_(std::move(f)) {
  str_ = f_.kernel + "[" + f_.params.str() + "]@" + f_.level + ".O" +
         std::to_string(f_.optLevel) + (f_.debug ? ".debug" : "");
  // The specialisation was hashed when it was bound: its hash seeds the hash
  // of the other fields.
  std::string rest = canonical(/*withParams=*/false);
  hash_ = hashBytes(rest.data(), rest.size(), f_.params.hash());
}

std::string TilingKey::canonical() const { return canonical(/*withParams=*/true); }

std::string TilingKey::canonical(bool withParams) const {
  std::string out;
  char src[17];
  std::snprintf(src, sizeof src, "%016llx",
                static_cast<unsigned long long>(f_.sourceHash));
  // Length-prefixed fields, so no two different keys print the same.
  auto field = [&](const std::string &name, const std::string &value) {
    out += name + ":" + std::to_string(value.size()) + ":" + value + ";";
  };
  field("kernel", f_.kernel);
  field("source", src);
  if (withParams)
    for (const auto &[n, v] : f_.params)
      field("param." + n, v.str());
  field("level", f_.level);
  field("cpu", f_.cpu);
  field("features", f_.features);
  field("l1d", std::to_string(f_.l1dBytes));
  field("tilejit", f_.tilejitVersion);
  field("llvm", f_.llvmVersion);
  field("opt", std::to_string(f_.optLevel));
  field("debug", f_.debug ? "1" : "0");
  return out;
}

std::string TilingKey::symbolStem() const {
  char buf[24];
  std::snprintf(buf, sizeof buf, "tj_%016llx",
                static_cast<unsigned long long>(hash_));
  return buf;
}

} // namespace tilejit::jit
