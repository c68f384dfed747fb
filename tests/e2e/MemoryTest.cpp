//===- MemoryTest.cpp - Bounds-checked tile loads and stores ---------------===//
//
// Tiles that hang over any edge of a tensor (negative offsets, past the end,
// whole rows outside, strided views): in-bounds elements move, the others
// read `other` and are never written. Checked on both vector widths against
// a plain loop.
//
//===----------------------------------------------------------------------===//
#include "jit/Compiler.h"
#include "tests/e2e/TargetLevels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

using namespace tilejit;
using tilejit::test_support::levels;

namespace {

const char *kShift = R"(
// y[r, c] = x[r + DR, c + DC] + 1 over 5 x 21 tiles; out-of-range reads give -7.
kernel shift(x: gm<f32>[R, C], y: gm<f32>[R2, C2], dr: i64, dc: i64) grid(cdiv(R2, 5), cdiv(C2, 21)) {
  let r0 = program_id(0) * 5;
  let c0 = program_id(1) * 21;
  let t = load(x, [r0 + dr, c0 + dc], [5, 21], other = -7.0);
  store(y, [r0, c0], t + 1.0);
}
)";

} // namespace

TEST(Memory, OverhangingTilesMoveOnlyInBoundsElements) {
  const int64_t R = 13, C = 37;
  for (jit::TargetLevel level : levels())
    for (auto [dr, dc] : {std::pair<int64_t, int64_t>{0, 0}, {-3, -5}, {4, 9}, {-20, 0}, {0, 40}}) {
      SCOPED_TRACE("dr=" + std::to_string(dr) + " dc=" + std::to_string(dc));
      std::vector<float> x(R * C);
      for (int64_t i = 0; i < R * C; ++i)
        x[i] = static_cast<float>(i);
      // y is a strided view: every row padded to 40, padding must stay intact.
      const int64_t ld = 40;
      std::vector<float> y(R * ld, 123.0f);
      static jit::KernelSource src("shift.tile", kShift);
      auto k = jit::Compiler::instance(level)->get(src, "shift", {});
      ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
      rt::ArgPack args;
      args.tensor(x.data(), {R, C}).tensor(y.data(), {R, C}, {ld, 1}).i64(dr).i64(dc);
      ASSERT_FALSE(static_cast<bool>(k->kernel->launch(args)));
      for (int64_t r = 0; r < R; ++r)
        for (int64_t c = 0; c < ld; ++c) {
          float want = 123.0f;
          if (c < C) {
            int64_t sr = r + dr, sc = c + dc;
            bool in = sr >= 0 && sr < R && sc >= 0 && sc < C;
            want = (in ? x[sr * C + sc] : -7.0f) + 1.0f;
          }
          ASSERT_EQ(y[r * ld + c], want) << "r=" << r << " c=" << c;
        }
    }
}

namespace {
const char *kReduce = R"(
kernel r<T: f32|i32>(x: gm<T>[R, C], y: gm<T>[C2], z: gm<T>[R2]) grid(1) {
  let t = load(x, [0, 0], [37, 19]);
  store(y, [0], sum(t, axis = 0));
  store(z, [0], max(t, axis = 1));
}
)";
} // namespace

TEST(Reduce, AlongEitherAxisOfATileWithTails) {
  const int64_t R = 37, C = 19;
  for (jit::TargetLevel level : levels()) {
    static jit::KernelSource src("reduce.tile", kReduce);
    {
      std::vector<int32_t> x(R * C), y(C), z(R);
      for (int64_t i = 0; i < R * C; ++i)
        x[i] = static_cast<int32_t>((i * 7919) % 1001) - 500;
      auto k = jit::Compiler::instance(level)->get(src, "r", {{"T", "i32"}});
      ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
      rt::ArgPack args;
      args.tensor(x.data(), {R, C}).tensor(y.data(), {C}).tensor(z.data(), {R});
      ASSERT_FALSE(static_cast<bool>(k->kernel->launch(args)));
      for (int64_t c = 0; c < C; ++c) {
        int32_t s = 0;
        for (int64_t r = 0; r < R; ++r)
          s += x[r * C + c];
        EXPECT_EQ(y[c], s) << "column " << c;
      }
      for (int64_t r = 0; r < R; ++r) {
        int32_t m = x[r * C];
        for (int64_t c = 1; c < C; ++c)
          m = std::max(m, x[r * C + c]);
        EXPECT_EQ(z[r], m) << "row " << r;
      }
    }
    {
      // Small integers in f32 sum exactly in any order.
      std::vector<float> x(R * C), y(C), z(R);
      for (int64_t i = 0; i < R * C; ++i)
        x[i] = static_cast<float>((i * 31) % 97) - 48.0f;
      auto k = jit::Compiler::instance(level)->get(src, "r", {{"T", "f32"}});
      ASSERT_TRUE(static_cast<bool>(k));
      rt::ArgPack args;
      args.tensor(x.data(), {R, C}).tensor(y.data(), {C}).tensor(z.data(), {R});
      ASSERT_FALSE(static_cast<bool>(k->kernel->launch(args)));
      for (int64_t c = 0; c < C; ++c) {
        float s = 0;
        for (int64_t r = 0; r < R; ++r)
          s += x[r * C + c];
        EXPECT_EQ(y[c], s);
      }
      for (int64_t r = 0; r < R; ++r)
        EXPECT_EQ(z[r], *std::max_element(&x[r * C], &x[r * C] + C));
    }
  }
}

namespace {
const char *kRowReduce = R"(
kernel rr<C: i64>(x: gm<f32>[R, N], s: gm<f32>[R2], m: gm<f32>[R3], n: gm<f32>[R4])
    grid(1) {
  let t = load(x, [0, 0], [3, C]);
  store(s, [0], sum(t, axis = 1));
  store(m, [0], max(t, axis = 1));
  store(n, [0], min(t, axis = 1));
}
)";
} // namespace

TEST(Reduce, InnermostAxisOfEveryLengthWithIndependentPartials) {
  // Lengths below one vector, a few vectors (straight line), whole rounds of
  // partial results in a loop, and a tail after them. Row 1 holds a NaN at
  // its end (max, min and sum are NaN), row 2 only -0 and +0 (max +0, min -0).
  static jit::KernelSource src("row_reduce.tile", kRowReduce);
  for (jit::TargetLevel level : levels())
    for (int64_t C : {5, 16, 40, 64, 100, 129, 300, 1024}) {
      SCOPED_TRACE("C=" + std::to_string(C));
      std::vector<float> x(3 * C), s(3), m(3), n(3);
      for (int64_t c = 0; c < C; ++c) {
        x[c] = static_cast<float>((c * 37) % 101) - 50.0f; // sums exactly in any order
        x[C + c] = static_cast<float>(c % 7);
        x[2 * C + c] = c % 3 == 1 ? 0.0f : -0.0f;
      }
      x[2 * C - 1] = std::nanf("");
      auto k = jit::Compiler::instance(level)->get(src, "rr", {{"C", std::to_string(C)}});
      ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
      rt::ArgPack args;
      args.tensor(x.data(), {3, C}).tensor(s.data(), {3}).tensor(m.data(), {3}).tensor(n.data(), {3});
      ASSERT_FALSE(static_cast<bool>(k->kernel->launch(args)));
      float sum = 0;
      for (int64_t c = 0; c < C; ++c)
        sum += x[c];
      EXPECT_EQ(s[0], sum);
      EXPECT_EQ(m[0], *std::max_element(x.begin(), x.begin() + C));
      EXPECT_EQ(n[0], *std::min_element(x.begin(), x.begin() + C));
      EXPECT_TRUE(std::isnan(s[1]) && std::isnan(m[1]) && std::isnan(n[1]));
      EXPECT_EQ(s[2], 0.0f);
      EXPECT_FALSE(std::signbit(m[2]) && C > 1) << "max(-0, +0) is +0";
      EXPECT_TRUE(std::signbit(n[2])) << "min(-0, +0) is -0";
    }
}

TEST(Memory, StridedViewsAndMasksUseTheVectorRowPath) {
  // x is a column-major view (innermost stride R): loads gather. The mask
  // keeps even columns only; masked-off elements read `other` and masked
  // stores leave y alone.
  const char *kMasked = R"(
kernel m(x: gm<f32>[R, C], y: gm<f32>[R, C]) grid(cdiv(R, 4), cdiv(C, 24)) {
  let r0 = program_id(0) * 4;
  let c0 = program_id(1) * 24;
  let even = (iota<i64>([4, 24], 1) + c0) % 2 == 0;
  let t = load(x, [r0, c0], [4, 24], mask = even, other = -1.0);
  store(y, [r0, c0], t * 2.0, mask = iota<i64>([4, 24], 0) + r0 != 3);
}
)";
  const int64_t R = 11, C = 53;
  for (jit::TargetLevel level : levels()) {
    std::vector<float> xs(R * C), y(R * C, 5.0f);
    for (int64_t i = 0; i < R * C; ++i)
      xs[i] = static_cast<float>(i);
    static jit::KernelSource src("masked.tile", kMasked);
    auto k = jit::Compiler::instance(level)->get(src, "m", {});
    ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
    rt::ArgPack args;
    // Element (r, c) of the view lives at xs[c * R + r].
    args.tensor(xs.data(), {R, C}, {1, R}).tensor(y.data(), {R, C});
    ASSERT_FALSE(static_cast<bool>(k->kernel->launch(args)));
    for (int64_t r = 0; r < R; ++r)
      for (int64_t c = 0; c < C; ++c) {
        float want = r == 3 ? 5.0f : (c % 2 == 0 ? xs[c * R + r] : -1.0f) * 2.0f;
        ASSERT_EQ(y[r * C + c], want) << "r=" << r << " c=" << c;
      }
  }
}

namespace {
// Masked moves over a contiguous innermost axis (inline, a vector of lanes
// at a time): 3 x 37 tiles shifted by (dr, dc), so that some lie wholly
// inside the tensor and others hang over every edge. y receives every lane
// of the masked load (its tile grid is unshifted); z only the lanes the
// mask w lets through. y2 and z2 the same with masks broadcast along the
// rows (whole rows move or not).
const char *kMaskedRows = R"(
kernel mr<T: u8|f16|f32|i64>(x: gm<T>[R, C], m: gm<i1>[R, C], w: gm<i1>[R, C],
                             y: gm<T>[R2, C2], z: gm<T>[R, C], y2: gm<T>[R2, C2],
                             z2: gm<T>[R, C], dr: i64, dc: i64)
    grid(cdiv(R, 3) + 1, cdiv(C, 37) + 1) {
  let r0 = program_id(0) * 3 - dr;
  let c0 = program_id(1) * 37 - dc;
  let t = load(x, [r0, c0], [3, 37], mask = load(m, [r0, c0], [3, 37]), other = 7);
  store(y, [program_id(0) * 3, program_id(1) * 37], t);
  store(z, [r0, c0], load(x, [r0, c0], [3, 37]), mask = load(w, [r0, c0], [3, 37]));
  let rows = iota<i64>([3, 1], 0) + r0 + 30;
  let t2 = load(x, [r0, c0], [3, 37], mask = rows % 3 != 1, other = 7);
  store(y2, [program_id(0) * 3, program_id(1) * 37], t2);
  store(z2, [r0, c0], load(x, [r0, c0], [3, 37]), mask = rows % 4 != 2);
}
)";
} // namespace

TEST(Memory, MaskedTilesOverContiguousRowsMoveInline) {
  static jit::KernelSource src("masked_rows.tile", kMaskedRows);
  const int64_t R = 10, C = 83, R2 = (R + 2) / 3 * 3 + 3, C2 = (C + 36) / 37 * 37 + 37;
  struct Kind {
    const char *name;
    size_t size;
    uint64_t seven; // the bits of `other` = 7
  };
  for (Kind kind : {Kind{"u8", 1, 7}, Kind{"f16", 2, 0x4700}, Kind{"f32", 4, 0x40e00000},
                    Kind{"i64", 8, 7}})
    for (jit::TargetLevel level : levels())
      for (auto [dr, dc] : {std::pair<int64_t, int64_t>{0, 0}, {1, 5}, {2, 36}}) {
        SCOPED_TRACE(std::string(kind.name) + " dr=" + std::to_string(dr) +
                     " dc=" + std::to_string(dc));
        const size_t es = kind.size;
        std::vector<unsigned char> x(R * C * es), y(R2 * C2 * es, 0xAB), z(R * C * es, 0xCD);
        std::vector<unsigned char> y2 = y, z2 = z;
        for (size_t i = 0; i < x.size(); ++i)
          x[i] = static_cast<unsigned char>(i * 37 + 11);
        // Masks whose true bytes are not all 1 (loads give exactly 0 / 1).
        std::vector<uint8_t> m(R * C), w(R * C);
        for (int64_t i = 0; i < R * C; ++i) {
          m[i] = (i * 7) % 5 < 3 ? static_cast<uint8_t>(1 + i % 3) : 0;
          w[i] = (i * 11) % 4 == 1 ? 0 : static_cast<uint8_t>(1 + i % 2);
        }
        auto k = jit::Compiler::instance(level)->get(src, "mr", {{"T", kind.name}});
        ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
        rt::ArgPack args;
        rt::ElemType t = rt::ElemType::U8;
        ASSERT_TRUE(rt::parseElemType(kind.name, t));
        args.tensor(t, x.data(), {R, C}).tensor(rt::ElemType::I1, m.data(), {R, C});
        args.tensor(rt::ElemType::I1, w.data(), {R, C});
        args.tensor(t, y.data(), {R2, C2}).tensor(t, z.data(), {R, C});
        args.tensor(t, y2.data(), {R2, C2}).tensor(t, z2.data(), {R, C}).i64(dr).i64(dc);
        ASSERT_FALSE(static_cast<bool>(k->kernel->launch(args)));
        auto bits = [&](const std::vector<unsigned char> &v, int64_t i) {
          uint64_t b = 0;
          std::memcpy(&b, &v[static_cast<size_t>(i) * es], es);
          return b;
        };
        for (int64_t i = 0; i < R2; ++i)
          for (int64_t j = 0; j < C2; ++j) {
            int64_t r = i - dr, c = j - dc;
            bool on = r >= 0 && r < R && c >= 0 && c < C && m[r * C + c] != 0;
            uint64_t want = on ? bits(x, r * C + c) : kind.seven;
            ASSERT_EQ(bits(y, i * C2 + j), want) << "y " << i << "," << j;
            bool rowOn = r >= 0 && r < R && c >= 0 && c < C && (r + 30) % 3 != 1;
            ASSERT_EQ(bits(y2, i * C2 + j), rowOn ? bits(x, r * C + c) : kind.seven)
                << "y2 " << i << "," << j;
          }
        uint64_t untouched = 0;
        std::memset(&untouched, 0xCD, es);
        for (int64_t i = 0; i < R * C; ++i) {
          ASSERT_EQ(bits(z, i), w[i] ? bits(x, i) : untouched) << "z " << i;
          ASSERT_EQ(bits(z2, i), (i / C + 30) % 4 != 2 ? bits(x, i) : untouched) << "z2 " << i;
        }
      }
}

namespace {
// Row copies with non-temporal stores: whole tiles copied straight from
// tensor to tensor (`store(.., load(..))`), through a tile buffer (`t + 0`
// is computed first), a tile overhanging the end (plain path), and a
// tensor copied onto itself, shifted (overlap: the plain memmove path).
const char *kStream = R"(
kernel copy_rows(x: gm<u16>[R, C], y: gm<u16>[R2, C2], s: i64, shift: i64) grid(R) {
  let r = program_id(0);
  store(y, [(r * s) % R2, shift], load(x, [r, 0], [200]), stream = true);
}
kernel self_shift(x: gm<u16>[N], d: i64) grid(1) {
  store(x, [d], load(x, [0], [512]), stream = true);
}
kernel computed(x: gm<f32>[N], y: gm<f32>[N2], off: i64) grid(1) {
  store(y, [off], load(x, [0], [300]) * 2.0, stream = true);
}
)";
} // namespace

namespace {
const char *kBoolAndLead = R"(
kernel bl(m: gm<i1>[R, C], y: gm<f32>[R2, C2], z: gm<i1>[R3, C3],
          x3: gm<f32>[B, R4, C4], u: gm<f32>[R5, C5], bb: i64) grid(1) {
  let t = load(m, [2, 3], [4, 8]);
  store(y, [0, 0], select(t, 1.0, -1.0));
  store(z, [1, 4], t);
  store(u, [0, 0], load(x3, [bb, 1, 2], [4, 8], other = 9.0));
}
)";
} // namespace

TEST(Memory, PartialBooleanTilesAndLeadingAxesOutside) {
  // An i1 tile over the corner of a 5 x 9 mask whose true bytes are not 1:
  // loads give exactly true/false, outside reads false, and the store writes
  // only inside. A 3-D tensor with a strided innermost axis, read at a leading
  // index inside and outside it.
  static jit::KernelSource src("bool_lead.tile", kBoolAndLead);
  const int64_t R = 5, C = 9, B = 2, R4 = 4, C4 = 11;
  for (jit::TargetLevel level : levels()) {
    for (int64_t bb : {1, 2, -1}) {
      SCOPED_TRACE("bb=" + std::to_string(bb));
      std::vector<uint8_t> m(R * C), z(R * C, 5);
      for (int64_t i = 0; i < R * C; ++i)
        m[i] = (i * 7) % 3 == 0 ? 0 : static_cast<uint8_t>(1 + i % 5);
      std::vector<float> y(4 * 8), x3(B * R4 * C4 * 2), u(4 * 8);
      for (size_t i = 0; i < x3.size(); ++i)
        x3[i] = static_cast<float>(i);
      auto k = jit::Compiler::instance(level)->get(src, "bl", {});
      ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
      rt::ArgPack args;
      args.tensor(rt::ElemType::I1, m.data(), {R, C}).tensor(y.data(), {4, 8});
      args.tensor(rt::ElemType::I1, z.data(), {R, C});
      // x3 viewed with every second element of its rows.
      args.tensor(x3.data(), {B, R4, C4}, {R4 * C4 * 2, C4 * 2, 2}).tensor(u.data(), {4, 8}).i64(bb);
      ASSERT_FALSE(static_cast<bool>(k->kernel->launch(args)));
      for (int64_t i = 0; i < 4; ++i)
        for (int64_t j = 0; j < 8; ++j) {
          int64_t r = 2 + i, c = 3 + j;
          bool in = r < R && c < C;
          bool t = in && m[r * C + c] != 0;
          EXPECT_EQ(y[i * 8 + j], t ? 1.0f : -1.0f) << i << "," << j;
          int64_t zr = 1 + i, zc = 4 + j;
          if (zr < R && zc < C) {
            EXPECT_EQ(z[zr * C + zc], t ? 1 : 0) << i << "," << j;
          }
          int64_t xr = 1 + i, xc = 2 + j;
          bool xin = bb >= 0 && bb < B && xr < R4 && xc < C4;
          float want = xin ? x3[bb * R4 * C4 * 2 + xr * C4 * 2 + xc * 2] : 9.0f;
          EXPECT_EQ(u[i * 8 + j], want) << i << "," << j;
        }
      for (int64_t r = 0; r < R; ++r)
        for (int64_t c = 0; c < C; ++c)
          if (r < 1 || c < 4) {
            EXPECT_EQ(z[r * C + c], 5) << "written outside the tile: " << r << "," << c;
          }
    }
  }
}

TEST(Memory, StreamedStoresCopyEveryAlignment) {
  static jit::KernelSource src("stream.tile", kStream);
  for (jit::TargetLevel level : levels()) {
    jit::Compiler &c = *jit::Compiler::instance(level);
    auto rows = c.get(src, "copy_rows", {});
    auto self = c.get(src, "self_shift", {});
    auto comp = c.get(src, "computed", {});
    ASSERT_TRUE(rows && self && comp);
    // Rows of 200 u16 (400 bytes) into rows of 203 at every shift 0..3
    // (destination alignment varies by row and shift); the last tile hangs
    // over the row end when shift > 3: plain path, in-bounds part only.
    const int64_t R = 23, C = 200, C2 = 203;
    for (int64_t shift : {0, 1, 2, 3, 5}) {
      std::vector<uint16_t> x(R * C), y(R * C2, 0xBEEF);
      for (size_t i = 0; i < x.size(); ++i)
        x[i] = static_cast<uint16_t>(i * 7 + 1);
      rt::ArgPack args;
      args.tensor(x.data(), {R, C}).tensor(y.data(), {R, C2}).i64(5).i64(shift);
      ASSERT_FALSE(static_cast<bool>(rows->kernel->launch(args)));
      for (int64_t r = 0; r < R; ++r)
        for (int64_t col = 0; col < C2; ++col) {
          int64_t from = col - shift;
          int64_t src0 = -1;
          for (int64_t q = 0; q < R; ++q)
            if ((q * 5) % R == r)
              src0 = q;
          uint16_t want = from >= 0 && from < C ? x[src0 * C + from] : 0xBEEF;
          ASSERT_EQ(y[r * C2 + col], want)
              << "shift " << shift << " r " << r << " c " << col;
        }
    }
    // Overlapping source and destination: memmove semantics.
    for (int64_t d : {1, 16, 100}) {
      std::vector<uint16_t> x(700);
      for (size_t i = 0; i < x.size(); ++i)
        x[i] = static_cast<uint16_t>(i);
      std::vector<uint16_t> want = x;
      std::copy(x.begin(), x.begin() + 512, want.begin() + d);
      rt::ArgPack args;
      args.tensor(x.data(), {700}).i64(d);
      ASSERT_FALSE(static_cast<bool>(self->kernel->launch(args)));
      EXPECT_EQ(x, want) << "d " << d;
    }
    // A computed tile stored with the hint, at odd offsets.
    for (int64_t off : {0, 1, 3}) {
      std::vector<float> x(300), y(310, -1.0f);
      for (size_t i = 0; i < x.size(); ++i)
        x[i] = static_cast<float>(i) * 0.5f;
      rt::ArgPack args;
      args.tensor(x.data(), {300}).tensor(y.data(), {310}).i64(off);
      ASSERT_FALSE(static_cast<bool>(comp->kernel->launch(args)));
      for (int64_t i = 0; i < 310; ++i) {
        float want = i >= off && i < off + 300 ? x[i - off] * 2.0f : -1.0f;
        ASSERT_EQ(y[i], want) << "off " << off << " i " << i;
      }
    }
  }
}

TEST(Memory, ALoadSeesTheTensorAsItWasBeforeALaterStore) {
  // The load is read by one fused loop, after a store to the same tensor:
  // the loop must see the values loaded, not the ones stored since.
  const char *kReorder = R"(
kernel k(x: gm<f32>[N], y: gm<f32>[N]) grid(1) {
  let t = load(x, [0], [16]);
  store(x, [0], full<f32>([16], 5.0));
  store(y, [0], t + 1.0);
}
)";
  static jit::KernelSource src("reorder.tile", kReorder);
  for (jit::TargetLevel level : levels()) {
    std::vector<float> x(16), y(16, 0.0f);
    for (int i = 0; i < 16; ++i)
      x[static_cast<size_t>(i)] = static_cast<float>(i);
    auto k = jit::Compiler::instance(level)->get(src, "k", {});
    ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
    rt::ArgPack args;
    args.tensor(x.data(), {16}).tensor(y.data(), {16});
    ASSERT_FALSE(static_cast<bool>(k->kernel->launch(args)));
    for (int i = 0; i < 16; ++i) {
      EXPECT_EQ(y[static_cast<size_t>(i)], static_cast<float>(i) + 1.0f) << i;
      EXPECT_EQ(x[static_cast<size_t>(i)], 5.0f) << i;
    }
  }
}
