//===- Driver.cpp - One program at every target, in debug mode and interpreted ===//
#include "Driver.h"

#include "dsl/support/Diagnostics.h"
#include "dsl/syntax/Parser.h"
#include "jit/Compiler.h"
#include "jit/DiskCache.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

namespace tilejit::difftest {
namespace {

uint16_t f32ToHalfBits(float f) {
  // Round to nearest even, as the DSL's cast<f16> (used for inputs only).
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff)
    return static_cast<uint16_t>(sign | 0x7c00 | (mant ? 0x200 : 0));
  if (exp >= 31)
    return static_cast<uint16_t>(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10)
      return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1)))
      ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
    ++h;
  return static_cast<uint16_t>(sign | h);
}

float randomFloat(std::mt19937_64 &rng) {
  static const float specials[] = {
      0.0f, -0.0f, 1.4e-45f, -1.4e-45f, 1.1754942e-38f, 1.17549435e-38f,
      std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
      std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
      std::numeric_limits<float>::quiet_NaN(), 65504.0f, 65520.0f, 6.1035156e-05f,
      1.00048828125f,  // halfway between two f16 values
      1.00390625f,     // halfway between two bf16 values
      1.01171875f, 2.5f, -0.5f, 0.1f, 3.0e9f, -3.0e9f, 128.5f, 255.5f, 32767.5f};
  uint64_t r = rng() % 100;
  if (r < 18) {
    float f = specials[rng() % (sizeof specials / sizeof specials[0])];
    if (std::isnan(f) && (rng() & 1)) { // a NaN with a payload, or negative
      uint32_t bits = 0x7fc00000u | static_cast<uint32_t>(rng() & 0x3fffff);
      if (rng() & 1)
        bits |= 0x80000000u;
      std::memcpy(&f, &bits, 4);
    }
    return f;
  }
  if (r < 30)
    return static_cast<float>(static_cast<int64_t>(rng() % 33) - 16);
  if (r < 35) { // any finite bit pattern
    uint32_t bits = static_cast<uint32_t>(rng());
    if (((bits >> 23) & 0xff) == 0xff)
      bits &= ~0x40000000u;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  return static_cast<float>(static_cast<int64_t>(rng() % 4096) - 2048) / 256.0f;
}

void fillElement(ElemType t, uint8_t *dst, std::mt19937_64 &rng) {
  auto extreme = [&](int64_t lo, int64_t hi) -> int64_t {
    switch (rng() % 6) {
    case 0: return lo;
    case 1: return hi;
    case 2: return 0;
    case 3: return -1;
    case 4: return lo + 1;
    default: return hi - 1;
    }
  };
  bool special = rng() % 100 < 15;
  int64_t small = static_cast<int64_t>(rng() % 41) - 20;
  switch (t) {
  case ElemType::I1: *dst = static_cast<uint8_t>(rng() & 1); return;
  case ElemType::I8: { int8_t v = static_cast<int8_t>(special ? extreme(-128, 127) : small); std::memcpy(dst, &v, 1); return; }
  case ElemType::U8: { uint8_t v = static_cast<uint8_t>(special ? extreme(0, 255) : small & 0x3f); *dst = v; return; }
  case ElemType::I16: { int16_t v = static_cast<int16_t>(special ? extreme(-32768, 32767) : small); std::memcpy(dst, &v, 2); return; }
  case ElemType::U16: { uint16_t v = static_cast<uint16_t>(special ? extreme(0, 65535) : small & 0x3f); std::memcpy(dst, &v, 2); return; }
  case ElemType::I32: { int32_t v = static_cast<int32_t>(special ? extreme(INT32_MIN, INT32_MAX) : small); std::memcpy(dst, &v, 4); return; }
  case ElemType::U32: { uint32_t v = static_cast<uint32_t>(special ? extreme(0, UINT32_MAX) : small & 0x3f); std::memcpy(dst, &v, 4); return; }
  case ElemType::I64: { int64_t v = special ? extreme(INT64_MIN, INT64_MAX) : small; std::memcpy(dst, &v, 8); return; }
  case ElemType::F32: { float f = randomFloat(rng); std::memcpy(dst, &f, 4); return; }
  case ElemType::F16: {
    uint16_t h = special ? static_cast<uint16_t>(rng()) : f32ToHalfBits(randomFloat(rng));
    std::memcpy(dst, &h, 2);
    return;
  }
  case ElemType::BF16: {
    float f = randomFloat(rng);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    uint16_t h = special ? static_cast<uint16_t>(rng()) : static_cast<uint16_t>(bits >> 16);
    std::memcpy(dst, &h, 2);
    return;
  }
  }
}

/// Storage element indices inside the tensor's view.
std::vector<bool> viewMask(const ArgSpec &a) {
  std::vector<bool> in(static_cast<size_t>(a.storage), false);
  size_t rank = a.shape.size();
  std::vector<int64_t> idx(rank, 0);
  for (int64_t d : a.shape)
    if (d == 0)
      return in;
  while (true) {
    int64_t e = a.offset;
    for (size_t i = 0; i < rank; ++i)
      e += idx[i] * a.strides[i];
    if (e >= 0 && e < a.storage)
      in[static_cast<size_t>(e)] = true;
    size_t k = rank;
    while (k > 0) {
      --k;
      if (++idx[k] < a.shape[k])
        break;
      idx[k] = 0;
      if (k == 0)
        return in;
    }
    if (rank == 0)
      return in;
  }
}

struct Run {
  std::string name;      ///< "avx512", "avx2", "debug"
  jit::TargetLevel level;
  bool debug = false;
  std::string error;     ///< compile or launch error
  bool compiled = false;
  std::vector<Argument> args;
};

uint64_t bitsOf(ElemType t, const uint8_t *p) {
  uint64_t v = 0;
  std::memcpy(&v, p, elemBytes(t));
  return v;
}

bool isNaNBits(ElemType t, uint64_t b) {
  switch (t) {
  case ElemType::F32: return (b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu);
  case ElemType::F16: return (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu);
  case ElemType::BF16: return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu);
  default: return false;
  }
}

double valueOf(ElemType t, uint64_t b) {
  switch (t) {
  case ElemType::I1: return static_cast<double>(b & 1);
  case ElemType::I8: return static_cast<int8_t>(b);
  case ElemType::U8: return static_cast<uint8_t>(b);
  case ElemType::I16: return static_cast<int16_t>(b);
  case ElemType::U16: return static_cast<uint16_t>(b);
  case ElemType::I32: return static_cast<int32_t>(b);
  case ElemType::U32: return static_cast<uint32_t>(b);
  case ElemType::I64: return static_cast<double>(static_cast<int64_t>(b));
  case ElemType::F32: { float f; uint32_t x = static_cast<uint32_t>(b); std::memcpy(&f, &x, 4); return f; }
  case ElemType::F16: {
    uint32_t h = static_cast<uint32_t>(b), e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(m | 0x400, static_cast<int>(e) - 25);
    return (h & 0x8000) ? -v : v;
  }
  case ElemType::BF16: { uint32_t x = static_cast<uint32_t>(b) << 16; float f; std::memcpy(&f, &x, 4); return f; }
  }
  return 0;
}

std::string hexOf(ElemType t, uint64_t b) {
  std::ostringstream os;
  os << "0x" << std::hex << b << std::dec << " (" << valueOf(t, b) << ")";
  return os.str();
}

/// Where a debug-mode bounds message points: "line:col".
std::string locationOf(const std::string &message) {
  size_t k = message.find("bounds violation in kernel ");
  if (k == std::string::npos)
    return "";
  size_t colon = message.find(": ", k);
  if (colon == std::string::npos)
    return "";
  std::string rest = message.substr(colon + 2);
  // rest: "<file>:<line>:<col>: ..."
  size_t end = rest.find(": ");
  std::string loc = rest.substr(0, end);
  size_t c2 = loc.rfind(':');
  if (c2 == std::string::npos)
    return "";
  size_t c1 = loc.rfind(':', c2 - 1);
  if (c1 == std::string::npos)
    return "";
  return loc.substr(c1 + 1);
}

jit::Compiler *compilerFor(jit::TargetLevel level) {
  auto c = jit::Compiler::instance(level);
  if (!c) {
    llvm::consumeError(c.takeError());
    return nullptr;
  }
  return &*c;
}

} // namespace

void initDriver() {
  setenv("TILEJIT_CACHE", "off", 1);
  unsetenv("TILEJIT_DEBUG");
  for (jit::TargetLevel l : {jit::TargetLevel::Avx2, jit::TargetLevel::Avx512})
    if (jit::Compiler::hostSupports(l))
      if (jit::Compiler *c = compilerFor(l))
        c->setDiskCache(jit::DiskCache());
}

void clearCaches() {
  for (jit::TargetLevel l : {jit::TargetLevel::Avx2, jit::TargetLevel::Avx512})
    if (jit::Compiler::hostSupports(l))
      if (jit::Compiler *c = compilerFor(l))
        c->clearMemoryCache();
}

std::vector<Argument> makeInputs(const Program &p) {
  std::vector<Argument> out;
  for (size_t i = 0; i < p.args.size(); ++i) {
    const ArgSpec &a = p.args[i];
    if (!a.isTensor) {
      Scalar s;
      s.type = a.type;
      s.i = a.intValue;
      std::memcpy(&s.f, &a.floatBits, 4);
      out.push_back(s);
      continue;
    }
    std::mt19937_64 rng(a.dataSeed);
    Tensor t;
    t.type = a.type;
    t.shape = a.shape;
    t.strides = a.strides;
    t.offset = a.offset;
    unsigned eb = elemBytes(a.type);
    t.storage.resize(static_cast<size_t>(a.storage) * eb);
    for (auto &b : t.storage)
      b = static_cast<uint8_t>(rng());
    std::vector<bool> in = viewMask(a);
    for (size_t e = 0; e < in.size(); ++e)
      if (in[e] || a.type == ElemType::I1)
        fillElement(a.type, &t.storage[e * eb], rng);
    out.push_back(std::move(t));
  }
  return out;
}

Verdict checkProgram(const Program &p, const std::string &text) {
  // Absent conditional parameters take no argument: the launch, the
  // interpreter and the comparisons see the present ones only.
  if (std::any_of(p.args.begin(), p.args.end(), [](const ArgSpec &a) { return !a.present; })) {
    Program q = p;
    std::erase_if(q.args, [](const ArgSpec &a) { return !a.present; });
    return checkProgram(q, text);
  }
  Verdict v;
  jit::KernelSource source("difftest.tile", text);
  const std::vector<std::pair<std::string, std::string>> specText = specOf(p);
  const jit::Specialization spec = specText;
  const std::vector<Argument> inputs = makeInputs(p);
  if (getenv("TILEJIT_DIFFTEST_DUMP")) // the inputs' bytes, for a human
    for (size_t i = 0; i < inputs.size(); ++i)
      if (const auto *t = std::get_if<Tensor>(&inputs[i])) {
        fprintf(stderr, "%s:", p.args[i].name.c_str());
        for (uint8_t b : t->storage)
          fprintf(stderr, " %02x", b);
        fprintf(stderr, "\n");
      }

  bool has512 = jit::Compiler::hostSupports(jit::TargetLevel::Avx512);
  jit::TargetLevel host = has512 ? jit::TargetLevel::Avx512 : jit::TargetLevel::Avx2;
  std::vector<Run> runs;
  if (has512)
    runs.push_back({"avx512", jit::TargetLevel::Avx512, false, "", false, {}});
  runs.push_back({"avx2", jit::TargetLevel::Avx2, false, "", false, {}});
  runs.push_back({"debug", host, true, "", false, {}});

  for (Run &r : runs) {
    jit::Compiler *c = compilerFor(r.level);
    if (!c) {
      r.error = "no compiler for this level";
      continue;
    }
    jit::CompileOptions options;
    options.debug = r.debug;
    auto k = c->get(source, p.kernel, spec, options);
    if (!k) {
      v.failureClass = "rejected";
      v.detail = r.name + ": " + llvm::toString(k.takeError());
      return v;
    }
    r.compiled = true;
    r.args = inputs;
    rt::ArgPack pack;
    for (Argument &arg : r.args) {
      if (auto *t = std::get_if<Tensor>(&arg)) {
        pack.tensor(t->type, t->storage.data() + t->offset * elemBytes(t->type), t->shape, t->strides);
        continue;
      }
      const Scalar &s = std::get<Scalar>(arg);
      switch (s.type) {
      case ElemType::I1: pack.boolean(s.i != 0); break;
      case ElemType::I32: pack.i32(static_cast<int32_t>(s.i)); break;
      case ElemType::F32: pack.f32(s.f); break;
      default: pack.i64(s.i); break;
      }
    }
    if (llvm::Error err = k->kernel->launch(pack, 1))
      r.error = llvm::toString(std::move(err));
  }

  // The interpreter.
  std::optional<Outcome> ref;
  {
    DiagnosticEngine diags;
    uint32_t buf = diags.addBuffer("difftest.tile", text);
    auto file = dsl::parseFile(diags, buf);
    if (!file) {
      v.notInterpreted = "parse error";
    } else {
      std::map<std::string, std::string> specMap(specText.begin(), specText.end());
      auto res = interpret(*file, p.kernel, specMap, inputs);
      if (auto *o = std::get_if<Outcome>(&res))
        ref = std::move(*o);
      else
        v.notInterpreted = std::get<std::string>(res);
    }
  }

  std::ostringstream detail;
  std::set<std::string> classes;
  auto fail = [&](const std::string &cls, const std::string &what) {
    if (classes.insert(cls).second || detail.str().size() < 1500)
      detail << cls << ": " << what << "\n";
  };

  // Launch errors: only debug mode may stop, and only at a bounds violation.
  Run &dbg = runs.back();
  for (Run &r : runs) {
    if (r.error.empty())
      continue;
    if (r.debug && r.error.find("bounds violation") != std::string::npos) {
      v.violation = true;
      continue;
    }
    fail("launch-error", r.name + ": " + r.error);
  }
  if (ref) {
    if (ref->violation && !v.violation)
      fail("violation-missed", "the interpreter reports " + std::to_string(ref->violation->line) + ":" +
                                   std::to_string(ref->violation->column) + " " + ref->violation->message);
    if (!ref->violation && v.violation)
      fail("violation-spurious", dbg.error);
    if (ref->violation && v.violation) {
      std::string want = std::to_string(ref->violation->line) + ":" + std::to_string(ref->violation->column);
      if (locationOf(dbg.error) != want)
        fail("violation-location", "debug: " + dbg.error + "; interpreter: " + want + " " + ref->violation->message);
    }
  }

  // Element by element.
  size_t plainEnd = runs.size() - 1; // runs[0 .. plainEnd) are plain builds
  const Run &hostPlain = runs.front();
  for (size_t ai = 0; ai < p.args.size(); ++ai) {
    const ArgSpec &a = p.args[ai];
    if (!a.isTensor)
      continue;
    ElemType t = a.type;
    unsigned eb = elemBytes(t);
    std::vector<bool> in = viewMask(a);
    const Tensor &orig = std::get<Tensor>(inputs[ai]);
    const std::vector<double> *tol = ref ? &ref->tolerance[ai] : nullptr;
    const Tensor *want = ref ? &std::get<Tensor>(ref->args[ai]) : nullptr;
    auto at = [&](const Run &r, size_t e) {
      return bitsOf(t, std::get<Tensor>(r.args[ai]).storage.data() + e * eb);
    };
    for (size_t e = 0; e < in.size(); ++e) {
      std::string where = a.name + "[storage " + std::to_string(e) + "]";
      if (!in[e]) {
        uint64_t o = bitsOf(t, orig.storage.data() + e * eb);
        for (const Run &r : runs)
          if (r.compiled && !(r.debug && v.violation) && at(r, e) != o) {
            fail("padding", r.name + " wrote " + where + " outside the tensor: " + hexOf(t, at(r, e)) +
                                " was " + hexOf(t, o));
            break;
          }
        continue;
      }
      double tl = tol && e < tol->size() ? (*tol)[e] : (a.exact ? 0.0 : INFINITY);
      // Debug against the plain build of its level.
      if (!v.violation && dbg.compiled && hostPlain.compiled) {
        uint64_t x = at(hostPlain, e), y = at(dbg, e);
        if (x != y) {
          bool nans = isNaNBits(t, x) && isNaNBits(t, y);
          fail(nans ? "nan-payload" : "mismatch-debug",
               where + ": " + hostPlain.name + " " + hexOf(t, x) + ", debug " + hexOf(t, y));
        }
      }
      // The levels with each other where the result is exact.
      if (plainEnd == 2 && tl == 0 && runs[0].compiled && runs[1].compiled) {
        uint64_t x = at(runs[0], e), y = at(runs[1], e);
        if (x != y) {
          bool nans = isNaNBits(t, x) && isNaNBits(t, y);
          fail(nans ? "nan-payload" : "mismatch-levels",
               where + ": avx512 " + hexOf(t, x) + ", avx2 " + hexOf(t, y));
        }
      }
      if (!want || std::isinf(tl))
        continue;
      uint64_t w = bitsOf(t, want->storage.data() + e * eb);
      for (size_t ri = 0; ri < plainEnd; ++ri) {
        const Run &r = runs[ri];
        if (!r.compiled)
          continue;
        uint64_t x = at(r, e);
        if (x == w)
          continue;
        if (isNaNBits(t, x) && isNaNBits(t, w))
          continue;
        if (tl > 0 && isFloatKind(t)) {
          double dx = valueOf(t, x), dw = valueOf(t, w);
          if (!std::isnan(dx) && !std::isnan(dw) && std::fabs(dx - dw) <= tl)
            continue;
          if (dx == dw)
            continue;
        }
        fail("mismatch-interp", where + ": " + r.name + " " + hexOf(t, x) + ", interpreter " +
                                    hexOf(t, w) + " (tolerance " + std::to_string(tl) + ")");
      }
    }
  }
  static const char *order[] = {"launch-error",   "violation-missed", "violation-spurious",
                                "violation-location", "padding",      "mismatch-debug",
                                "mismatch-levels", "mismatch-interp", "nan-payload"};
  for (const char *c : order)
    if (classes.count(c)) {
      v.failureClass = c;
      break;
    }
  v.detail = detail.str();
  return v;
}

} // namespace tilejit::difftest
