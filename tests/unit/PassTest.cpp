//===- PassTest.cpp - Tile IR passes: IR text before and after ------------===//
//
// Each test parses Tile IR text, runs named passes and compares the printed
// result with the expected text in full, so any change of a pass's output
// shows up as a readable diff.
//
//===----------------------------------------------------------------------===//
#include "codegen/passes/Pipeline.h"
#include "codegen/passes/SelectMma.h"
#include "dsl/ir/IRParser.h"
#include "dsl/ir/Printer.h"
#include "dsl/ir/Verifier.h"
#include "dsl/ir/Walk.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

using namespace tilejit;

namespace {

std::vector<std::string> splitNames(const std::string &list) {
  std::vector<std::string> names;
  std::stringstream ss(list);
  std::string n;
  while (std::getline(ss, n, ','))
    names.push_back(n);
  return names;
}

/// Parses `text`, runs the comma-separated passes and returns the printed
/// kernel, or "ERROR" followed by the rendered diagnostics.
std::string runOn(const std::string &text, const std::string &passList) {
  DiagnosticEngine diags;
  auto m = ir::parseModule(diags, diags.addBuffer("pass.tir", text));
  if (!m || !ir::verify(*m->kernels.at(0), diags))
    return "ERROR\n" + diags.renderAll();
  if (!passes::runPasses(*m->kernels[0], splitNames(passList), diags))
    return "ERROR\n" + diags.renderAll();
  ir::VerifyOptions vo;
  vo.requirePlanned = m->kernels[0]->buffersPlanned;
  if (!ir::verify(*m->kernels[0], diags, vo))
    return "ERROR (verifier after passes)\n" + diags.renderAll();
  return ir::print(*m);
}

} // namespace

TEST(SpecializePass, ConstParamsBecomeConstants) {
  const char *input = R"TIR(kernel @spec(%x: tensor<f32, 1>) {
  spec BN = 128, CAUSAL = true
  grid {
    %0 = const_param {name = "BN", value = 128} : i64
    yield %0
  }
  body {
    %1 = const_param {name = "CAUSAL", value = 1} : i1
    %2 = if %1 : i64 {
      %3 = const_param {name = "BN", value = 128} : i64
      yield %3
    } else {
      %4 = const {value = 0} : i64
      yield %4
    }
    %5 = load %x, %2 : tile<f32, 128>
    store %x, %2, %5
  }
}
)TIR";
  const char *expected = R"TIR(kernel @spec(%x: tensor<f32, 1>) {
  spec BN = 128, CAUSAL = true
  grid {
    %0 = const {value = 128} : i64
    yield %0
  }
  body {
    %1 = const {value = 1} : i1
    %2 = if %1 : i64 {
      %3 = const {value = 128} : i64
      yield %3
    } else {
      %4 = const {value = 0} : i64
      yield %4
    }
    %5 = load %x, %2 : tile<f32, 128>
    store %x, %2, %5
  }
}
)TIR";
  EXPECT_EQ(runOn(input, "specialize"), expected);
}

TEST(FoldConstantsPass, FoldsArithmeticBranchesLoopsAndDeadCode) {
  const char *input = R"TIR(kernel @fold(%t: tensor<i32, 1>, %n: i64) {
  grid {
    %0 = const {value = 2} : i64
    %1 = const {value = 3} : i64
    %2 = mul %0, %1 : i64
    yield %2
  }
  body {
    %3 = const {value = 100} : i8
    %4 = add %3, %3 : i8
    %5 = const {value = 0} : i32
    %6 = const {value = 7} : i32
    %7 = div %6, %5 : i32
    %8 = rem %6, %5 : i32
    %9 = const {value = -7} : i32
    %10 = div %9, %6 : i32
    %11 = cmp %9, %6 {predicate = lt} : i1
    %12 = select %11, %10, %7 : i32
    %13 = cast %4 : i32
    %14 = const {value = 0} : i64
    store_scalar %t, %14, %12
    store_scalar %t, %14, %13
    store_scalar %t, %14, %8
    %15 = const {value = 1.5} : f32
    %16 = mul %15, %15 : f32
    %17 = cast %16 : i32
    %18 = if %11 : i32 {
      %19 = add %17, %6 : i32
      yield %19
    } else {
      yield %6
    }
    store_scalar %t, %14, %18
    %20 = const {value = 10} : i64
    %21 = const {value = 1} : i64
    %22 = for %20, %14, %21, %6 : i32 {
    ^(%23: i64, %24: i32):
      store_scalar %t, %23, %24
      yield %24
    }
    store_scalar %t, %14, %22
    %25 = add %n, %n : i64
    %26 = const {value = 200} : u8
    %27 = const {value = 3} : u8
    %28 = div %26, %27 : u8
    %29 = cast %28 : i64
    store_scalar %t, %29, %6
  }
}
)TIR";
  const char *expected = R"TIR(kernel @fold(%t: tensor<i32, 1>, %n: i64) {
  grid {
    %0 = const {value = 6} : i64
    yield %0
  }
  body {
    %1 = const {value = 7} : i32
    %2 = const {value = 0} : i32
    %3 = const {value = -1} : i32
    %4 = const {value = -56} : i32
    %5 = const {value = 0} : i64
    store_scalar %t, %5, %3
    store_scalar %t, %5, %4
    store_scalar %t, %5, %2
    %6 = const {value = 9} : i32
    store_scalar %t, %5, %6
    store_scalar %t, %5, %1
    %7 = const {value = 66} : i64
    store_scalar %t, %7, %1
  }
}
)TIR";
  EXPECT_EQ(runOn(input, "fold-constants"), expected);
}

TEST(FoldConstantsPass, SpecializedBranchDisappears) {
  const char *input = R"TIR(kernel @spec(%x: tensor<f32, 1>) {
  spec BN = 128, CAUSAL = true
  grid {
    %0 = const_param {name = "BN", value = 128} : i64
    yield %0
  }
  body {
    %1 = const_param {name = "CAUSAL", value = 1} : i1
    %2 = if %1 : i64 {
      %3 = const_param {name = "BN", value = 128} : i64
      yield %3
    } else {
      %4 = const {value = 0} : i64
      yield %4
    }
    %5 = load %x, %2 : tile<f32, 128>
    store %x, %2, %5
  }
}
)TIR";
  const char *expected = R"TIR(kernel @spec(%x: tensor<f32, 1>) {
  spec BN = 128, CAUSAL = true
  grid {
    %0 = const {value = 128} : i64
    yield %0
  }
  body {
    %1 = const {value = 128} : i64
    %2 = load %x, %1 : tile<f32, 128>
    store %x, %1, %2
  }
}
)TIR";
  EXPECT_EQ(runOn(input, "specialize,fold-constants"), expected);
}

TEST(FuseElementwisePass, ChainsAbsorbSplatsAndBroadcasts) {
  const char *input = R"TIR(kernel @fuse(%x: tensor<f32, 2>, %s: f32) {
  grid {
    %0 = dim %x {axis = 0} : i64
    yield %0
  }
  body {
    %1 = program_id {axis = 0} : i64
    %2 = const {value = 0} : i64
    %3 = load %x, %1, %2 : tile<f32, 4, 64>
    %4 = reduce %3 {kind = max, axis = 1} : tile<f32, 4>
    %5 = reshape %4 : tile<f32, 4, 1>
    %6 = broadcast %5 : tile<f32, 4, 64>
    %7 = sub %3, %6 : tile<f32, 4, 64>
    %8 = exp %7 : tile<f32, 4, 64>
    %9 = splat %s : tile<f32, 4, 64>
    %10 = mul %8, %9 : tile<f32, 4, 64>
    store %x, %1, %2, %10
    %11 = add %8, %8 : tile<f32, 4, 64>
    store %x, %1, %2, %11
    %12 = add %1, %2 : i64
    %13 = neg %3 : tile<f32, 4, 64>
    store %x, %12, %2, %13
  }
}
)TIR";
  const char *expected = R"TIR(kernel @fuse(%x: tensor<f32, 2>, %s: f32) {
  grid {
    %0 = dim %x {axis = 0} : i64
    yield %0
  }
  body {
    %1 = program_id {axis = 0} : i64
    %2 = const {value = 0} : i64
    %3 = load %x, %1, %2 : tile<f32, 4, 64>
    %4 = reduce %3 {kind = max, axis = 1} : tile<f32, 4>
    %5 = reshape %4 : tile<f32, 4, 1>
    %6 = fused %5, %3 : tile<f32, 4, 64> {
    ^(%7: f32, %8: f32):
      %9 = sub %8, %7 : f32
      %10 = exp %9 : f32
      yield %10
    }
    %11 = fused %s, %6 : tile<f32, 4, 64> {
    ^(%12: f32, %13: f32):
      %14 = mul %13, %12 : f32
      yield %14
    }
    store %x, %1, %2, %11
    %15 = fused %6 : tile<f32, 4, 64> {
    ^(%16: f32):
      %17 = add %16, %16 : f32
      yield %17
    }
    store %x, %1, %2, %15
    %18 = add %1, %2 : i64
    %19 = fused %3 : tile<f32, 4, 64> {
    ^(%20: f32):
      %21 = neg %20 : f32
      yield %21
    }
    store %x, %18, %2, %19
  }
}
)TIR";
  EXPECT_EQ(runOn(input, "fuse-elementwise"), expected);
}

TEST(PlanBuffersPass, ReusesDeadBuffersAndKeepsLoopValuesApart) {
  const char *input = R"TIR(kernel @plan(%x: tensor<f32, 1>, %n: i64) {
  budget 4096
  grid {
    %0 = const {value = 1} : i64
    yield %0
  }
  body {
    %1 = const {value = 0} : i64
    %2 = load %x, %1 : tile<f32, 256>
    %3 = fused %2 : tile<f32, 256> {
    ^(%4: f32):
      %5 = exp %4 : f32
      yield %5
    }
    store %x, %1, %3
    %6 = load %x, %1 : tile<f32, 16>
    %7 = const {value = 64} : i64
    %8 = for %1, %n, %7, %6 : tile<f32, 16> {
    ^(%9: i64, %10: tile<f32, 16>):
      %11 = load %x, %9 : tile<f32, 16>
      %12 = reduce %2 {kind = sum, axis = 0} : f32
      %13 = fused %10, %11, %12 : tile<f32, 16> {
      ^(%14: f32, %15: f32, %16: f32):
        %17 = add %14, %15 : f32
        yield %17
      }
      yield %13
    }
    store %x, %1, %8
  }
}
)TIR";
  const char *expected = R"TIR(kernel @plan(%x: tensor<f32, 1>, %n: i64) {
  budget 4096
  scratch 2048
  grid {
    %0 = const {value = 1} : i64
    yield %0
  }
  body {
    %1 = const {value = 0} : i64
    %2 = load %x, %1 : tile<f32, 256> buf(0)
    %3 = fused %2 : tile<f32, 256> buf(1024) {
    ^(%4: f32):
      %5 = exp %4 : f32
      yield %5
    }
    store %x, %1, %3
    %6 = load %x, %1 : tile<f32, 16> buf(1024)
    %7 = const {value = 64} : i64
    %8 = for %1, %n, %7, %6 : tile<f32, 16> buf(1088) {
    ^(%9: i64, %10: tile<f32, 16> buf(1088)):
      %11 = load %x, %9 : tile<f32, 16> buf(1024)
      %12 = reduce %2 {kind = sum, axis = 0} : f32
      %13 = fused %10, %11, %12 : tile<f32, 16> buf(1152) {
      ^(%14: f32, %15: f32, %16: f32):
        %17 = add %14, %15 : f32
        yield %17
      }
      yield %13
    }
    store %x, %1, %8
  }
}
)TIR";
  EXPECT_EQ(runOn(input, "plan-buffers"), expected);
}

namespace {

/// Folds `op` applied to constants `a` and `b` (or just `a` when `b` is
/// empty) of kind `kind` into a kernel that stores the result, and returns
/// the stored constant's printed value, or "not folded".
std::string foldScalar(const std::string &op, const std::string &kind,
                       const std::string &a, const std::string &b = "",
                       const std::string &resultKind = "") {
  std::string rk = resultKind.empty() ? kind : resultKind;
  std::string text = "kernel @f(%t: tensor<" + rk +
                     ", 1>) {\n  grid {\n    %0 = const {value = 1} : i64\n"
                     "    yield %0\n  }\n  body {\n"
                     "    %1 = const {value = " + a + "} : " + kind + "\n";
  std::string operands = "%1";
  if (!b.empty()) {
    text += "    %2 = const {value = " + b + "} : " + kind + "\n";
    operands += ", %2";
  }
  text += "    %3 = " + op + " " + operands + " : " + rk + "\n" +
          "    %4 = const {value = 0} : i64\n"
          "    store_scalar %t, %4, %3\n  }\n}\n";
  DiagnosticEngine diags;
  auto m = ir::parseModule(diags, diags.addBuffer("f.tir", text));
  if (!m || !ir::verify(*m->kernels[0], diags))
    return "ERROR " + diags.renderAll();
  passes::runPasses(*m->kernels[0], {"fold-constants"}, diags);
  const ir::Op &store = *m->kernels[0]->body().ops().back();
  const ir::Op *def = store.operand(2)->definingOp();
  if (!def || def->kind() != ir::OpKind::Constant)
    return "not folded";
  std::string printed = ir::print(*m->kernels[0]);
  // The printed const line of the stored value: "value = X".
  if (ir::isFloat(def->result()->type().elem())) {
    std::ostringstream os;
    os << static_cast<float>(def->attrs().floatValue);
    return os.str();
  }
  return std::to_string(def->attrs().intValue);
}

} // namespace

TEST(FoldConstantsPass, IntegerArithmeticWraps) {
  EXPECT_EQ(foldScalar("add", "i8", "100", "100"), "-56");
  EXPECT_EQ(foldScalar("add", "u8", "200", "100"), "44");
  EXPECT_EQ(foldScalar("sub", "u16", "0", "1"), "65535");
  EXPECT_EQ(foldScalar("mul", "i32", "65536", "65536"), "0");
  EXPECT_EQ(foldScalar("add", "i64", "9223372036854775807", "1"),
            "-9223372036854775808");
  EXPECT_EQ(foldScalar("neg", "i32", "-2147483648"), "-2147483648");
  EXPECT_EQ(foldScalar("abs", "i8", "-128"), "-128");
  EXPECT_EQ(foldScalar("not", "u8", "15"), "240");
  EXPECT_EQ(foldScalar("xor", "i16", "-1", "255"), "-256");
}

TEST(FoldConstantsPass, DivisionTruncatesAndDivisionByZeroIsZero) {
  EXPECT_EQ(foldScalar("div", "i32", "-7", "2"), "-3");
  EXPECT_EQ(foldScalar("rem", "i32", "-7", "2"), "-1");
  EXPECT_EQ(foldScalar("div", "i32", "7", "0"), "0");
  EXPECT_EQ(foldScalar("rem", "i32", "7", "0"), "0");
  EXPECT_EQ(foldScalar("div", "u32", "4294967295", "2"), "2147483647");
  EXPECT_EQ(foldScalar("div", "i32", "-2147483648", "-1"), "-2147483648");
  EXPECT_EQ(foldScalar("rem", "i64", "-9223372036854775808", "-1"), "0");
  EXPECT_EQ(foldScalar("div", "i8", "-128", "-1"), "-128");
}

TEST(FoldConstantsPass, MinMaxRespectSignedness) {
  EXPECT_EQ(foldScalar("min", "i8", "-1", "1"), "-1");
  EXPECT_EQ(foldScalar("min", "u8", "255", "1"), "1");
  EXPECT_EQ(foldScalar("max", "u32", "4294967295", "1"), "4294967295");
  EXPECT_EQ(foldScalar("max", "i32", "-1", "1"), "1");
}

TEST(FoldConstantsPass, ShiftsTakeTheAmountModuloTheWidth) {
  EXPECT_EQ(foldScalar("shl", "i32", "1", "33"), "2");
  EXPECT_EQ(foldScalar("shl", "i8", "1", "7"), "-128");
  EXPECT_EQ(foldScalar("shr", "i8", "-128", "7"), "-1");
  EXPECT_EQ(foldScalar("shr", "u8", "128", "7"), "1");
  EXPECT_EQ(foldScalar("shr", "i64", "-8", "65"), "-4");
}

TEST(FoldConstantsPass, ComparesSelectsAndCasts) {
  EXPECT_EQ(foldScalar("cmp", "u8", "255", "1", "i1"), "0"); // eq
  EXPECT_EQ(foldScalar("cast", "i8", "-1", "", "u32"), "4294967295");
  EXPECT_EQ(foldScalar("cast", "u8", "255", "", "i32"), "255");
  EXPECT_EQ(foldScalar("cast", "i32", "300", "", "i8"), "44");
  EXPECT_EQ(foldScalar("add", "f32", "1.5", "2.25"), "3.75");
  EXPECT_EQ(foldScalar("div", "f32", "1.0", "0.0"), "inf");
  EXPECT_EQ(foldScalar("cast", "f32", "2.75", "", "i32"), "2");
  EXPECT_EQ(foldScalar("cast", "f32", "-1e10", "", "i32"), "-2147483648");
  EXPECT_EQ(foldScalar("cast", "f32", "nan", "", "i32"), "0");
  EXPECT_EQ(foldScalar("cast", "f32", "300.5", "", "u8"), "255");
  EXPECT_EQ(foldScalar("cast", "i32", "-3", "", "f32"), "-3");
  EXPECT_EQ(foldScalar("max", "f32", "nan", "1.0"), "nan");
  EXPECT_EQ(foldScalar("min", "f32", "-2.0", "1.0"), "-2");
  EXPECT_EQ(foldScalar("abs", "f32", "-2.5"), "2.5");
}

TEST(FoldConstantsPass, SelectWithAConstantConditionPicksAnOperand) {
  const char *input = R"TIR(kernel @s(%t: tensor<f32, 1>, %a: f32, %b: f32) {
  grid {
    %0 = const {value = 1} : i64
    yield %0
  }
  body {
    %1 = const {value = 0} : i1
    %2 = select %1, %a, %b : f32
    %3 = const {value = 0} : i64
    store_scalar %t, %3, %2
  }
}
)TIR";
  const char *expected = R"TIR(kernel @s(%t: tensor<f32, 1>, %a: f32, %b: f32) {
  grid {
    %0 = const {value = 1} : i64
    yield %0
  }
  body {
    %1 = const {value = 0} : i64
    store_scalar %t, %1, %b
  }
}
)TIR";
  EXPECT_EQ(runOn(input, "fold-constants"), expected);
}

TEST(PlanBuffersPass, OverBudgetNamesTheLargestTiles) {
  const char *input = R"TIR(kernel @big(%x: tensor<f32, 1>) {
  budget 3000
  grid {
    %0 = const {value = 1} : i64
    yield %0
  }
  body {
    %1 = const {value = 0} : i64
    %2 = load %x, %1 : tile<f32, 512>
    %3 = load %x, %1 : tile<f32, 256>
    %4 = load %x, %1 : tile<f32, 16>
    %5 = load %x, %1 : tile<f32, 128>
    store %x, %1, %2
    store %x, %1, %3
    store %x, %1, %4
    store %x, %1, %5
  }
}
)TIR";
  DiagnosticEngine diags;
  auto m = ir::parseModule(diags, diags.addBuffer("big.tir", input));
  ASSERT_TRUE(m) << diags.renderAll();
  EXPECT_FALSE(passes::runPasses(*m->kernels[0], {"plan-buffers"}, diags));
  const auto &d = diags.diagnostics();
  ASSERT_EQ(d.size(), 4u) << diags.renderAll();
  EXPECT_EQ(d[0].severity, Severity::Error);
  EXPECT_EQ(d[0].loc.line, 1u);
  EXPECT_NE(d[0].message.find("3648 bytes"), std::string::npos) << d[0].message;
  EXPECT_NE(d[0].message.find("3000"), std::string::npos) << d[0].message;
  EXPECT_EQ(d[1].severity, Severity::Note);
  EXPECT_EQ(d[1].loc.line, 9u);
  EXPECT_NE(d[1].message.find("2048 bytes"), std::string::npos);
  EXPECT_EQ(d[2].loc.line, 10u);
  EXPECT_EQ(d[3].loc.line, 12u);
}

TEST(Pipeline, RegistersPassesInOrderAndRejectsUnknownNames) {
  EXPECT_EQ(passes::registeredPasses(),
            (std::vector<std::string>{"specialize", "insert-bounds-checks", "fold-constants",
                                      "fuse-elementwise", "resolve-overlap", "canonicalize-nan",
                                      "forward-tiles", "select-moves", "select-mma",
                                      "schedule-prefetch", "plan-buffers"}));
  DiagnosticEngine diags;
  auto k = std::make_unique<ir::Kernel>("k");
  EXPECT_FALSE(passes::runPasses(*k, {"no-such-pass"}, diags));
  ASSERT_TRUE(diags.hasErrors());
  EXPECT_NE(diags.diagnostics()[0].message.find("unknown pass 'no-such-pass'"),
            std::string::npos);
}

TEST(Pipeline, ReportsWhetherEachPassChangedTheKernel) {
  const char *input = R"TIR(kernel @p(%x: tensor<f32, 1>) {
  grid {
    %0 = const {value = 1} : i64
    yield %0
  }
  body {
    %1 = const {value = 0} : i64
    %2 = load %x, %1 : tile<f32, 16>
    store %x, %1, %2
  }
}
)TIR";
  DiagnosticEngine diags;
  auto m = ir::parseModule(diags, diags.addBuffer("p.tir", input));
  ASSERT_TRUE(m) << diags.renderAll();
  std::vector<std::string> log;
  passes::PipelineOptions opts;
  opts.afterPass = [&](const std::string &name, const ir::Kernel &, bool changed) {
    log.push_back(name + (changed ? " changed" : " unchanged"));
  };
  ASSERT_TRUE(passes::runDefaultPipeline(*m->kernels[0], diags, opts))
      << diags.renderAll();
  EXPECT_EQ(log, (std::vector<std::string>{
                     "specialize unchanged", "insert-bounds-checks unchanged",
                     "fold-constants unchanged", "fuse-elementwise unchanged",
                     "resolve-overlap changed", "canonicalize-nan unchanged",
                     "forward-tiles changed", "select-moves unchanged",
                     "select-mma unchanged", "schedule-prefetch unchanged",
                     "plan-buffers changed"}));
  // The store writes the region its value was loaded from.
  EXPECT_EQ(m->kernels[0]->body().ops().back()->attrs().overlap, ir::Overlap::InPlace);
}

TEST(FuseElementwisePass, GroupsReadAtMostEightTiles) {
  // A sum of twelve loaded tiles (a cache window's tokens): one loop over
  // all twelve would walk twelve rows in lockstep. Groups stop at eight
  // input tiles; the rest fuse on their own.
  std::string input = R"TIR(kernel @window(%x: tensor<f32, 2>) {
  grid {
    %0 = dim %x {axis = 0} : i64
    yield %0
  }
  body {
    %1 = const {value = 0} : i64
)TIR";
  for (int t = 0; t < 12; ++t)
    input += "    %c" + std::to_string(t) + " = const {value = " + std::to_string(t) +
             "} : i64\n    %l" + std::to_string(t) + " = load %x, %c" + std::to_string(t) +
             ", %1 : tile<f32, 1, 64>\n";
  input += "    %s0 = add %l0, %l1 : tile<f32, 1, 64>\n";
  for (int t = 2; t < 12; ++t)
    input += "    %s" + std::to_string(t - 1) + " = add %s" + std::to_string(t - 2) + ", %l" +
             std::to_string(t) + " : tile<f32, 1, 64>\n";
  input += "    store %x, %1, %1, %s10\n  }\n}\n";
  std::string out = runOn(input, "fuse-elementwise");
  ASSERT_EQ(out.find("ERROR"), std::string::npos) << out;
  int groups = 0;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    size_t at = line.find("= fused ");
    if (at == std::string::npos)
      continue;
    ++groups;
    std::string operands = line.substr(at + 8, line.find(" :", at) - at - 8);
    int n = static_cast<int>(std::count(operands.begin(), operands.end(), '%'));
    EXPECT_LE(n, 8) << line;
  }
  EXPECT_EQ(groups, 2) << out;
}

TEST(FuseElementwisePass, ColumnsBroadcastAlongRowsDoNotCount) {
  // A weighted sum of `tokens` loaded [4, 64] tiles, each times its own
  // [4, 1] weight column broadcast along the rows (a cache window's tokens
  // and their weights). The columns are read once per row and do not count
  // towards the eight streamed inputs: eight tokens fuse into one loop of 16
  // inputs, nine split.
  auto groupsOf = [](int tokens) {
    std::string input = R"TIR(kernel @window(%x: tensor<f32, 2>, %w: tensor<f32, 2>) {
  grid {
    %0 = dim %x {axis = 0} : i64
    yield %0
  }
  body {
    %z = const {value = 0} : i64
)TIR";
    for (int t = 0; t < tokens; ++t) {
      std::string n = std::to_string(t);
      input += "    %c" + n + " = const {value = " + n + "} : i64\n";
      input += "    %l" + n + " = load %x, %c" + n + ", %z : tile<f32, 4, 64>\n";
      input += "    %w" + n + " = load %w, %z, %c" + n + " : tile<f32, 4, 1>\n";
      input += "    %b" + n + " = broadcast %w" + n + " : tile<f32, 4, 64>\n";
      input += "    %p" + n + " = mul %l" + n + ", %b" + n + " : tile<f32, 4, 64>\n";
    }
    input += "    %s0 = add %p0, %p1 : tile<f32, 4, 64>\n";
    for (int t = 2; t < tokens; ++t)
      input += "    %s" + std::to_string(t - 1) + " = add %s" + std::to_string(t - 2) + ", %p" +
               std::to_string(t) + " : tile<f32, 4, 64>\n";
    input += "    store %x, %z, %z, %s" + std::to_string(tokens - 2) + "\n  }\n}\n";
    std::string out = runOn(input, "fuse-elementwise");
    EXPECT_EQ(out.find("ERROR"), std::string::npos) << out;
    int groups = 0;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);)
      groups += line.find("= fused ") != std::string::npos;
    return groups;
  };
  EXPECT_EQ(groupsOf(8), 1);
  EXPECT_EQ(groupsOf(9), 2);
}

TEST(SelectMma, DecidesForTheTargetAndIsIdempotent) {
  // b is loaded before the loop (its packing leaves it), a inside it.
  const char *input = R"TIR(kernel @m(%a: tensor<f16, 2>, %b: tensor<f32, 2>, %n: i64) {
  grid {
    %0 = const {value = 1} : i64
    yield %0
  }
  body {
    %1 = const {value = 0} : i64
    %2 = const {value = 1} : i64
    %3 = load %b, %1, %1 : tile<f32, 32, 64>
    %4 = splat %1 : tile<i64, 4, 32>
    %5 = const {value = 0.0} : f32
    %6 = splat %5 : tile<f32, 4, 32>
    %7 = for %1, %n, %2, %6 : tile<f32, 4, 32> {
    ^(%8: i64, %9: tile<f32, 4, 32>):
      %10 = load %a, %8, %1 : tile<f16, 4, 64>
      %11 = mma %10, %3, %9 {transB} : tile<f32, 4, 32>
      yield %11
    }
  }
}
)TIR";
  auto mmaOf = [](ir::Kernel &k) {
    ir::Op *found = nullptr;
    ir::walk(k, [&](ir::Op &op) {
      if (op.kind() == ir::OpKind::Mma)
        found = &op;
    });
    return found;
  };
  for (unsigned bits : {256u, 512u}) {
    DiagnosticEngine diags;
    auto m = ir::parseModule(diags, diags.addBuffer("m.tir", input));
    ASSERT_TRUE(m) << diags.renderAll();
    codegen::TargetInfo target;
    target.vectorBits = bits;
    passes::PassContext ctx{target, diags};
    EXPECT_TRUE(passes::selectMma(*m->kernels[0], ctx));
    const ir::OpAttrs &at = mmaOf(*m->kernels[0])->attrs();
    // Four rows are few at both widths: the dot form, R rows of b a pass.
    EXPECT_EQ(at.mmaForm, ir::MmaForm::Dot);
    EXPECT_EQ(at.blockRows, 4);
    EXPECT_EQ(at.blockCols, bits == 512 ? 4 : 2);
    EXPECT_EQ(at.packA, 0); // f16, changes with the loop: converted here
    EXPECT_EQ(at.packB, -1);
    EXPECT_FALSE(passes::selectMma(*m->kernels[0], ctx));
    EXPECT_TRUE(ir::verify(*m->kernels[0], diags)) << diags.renderAll();
    // A packing hoisted out of more loops than there are is rejected.
    mmaOf(*m->kernels[0])->attrs().packA = 2;
    EXPECT_FALSE(ir::verify(*m->kernels[0], diags));
  }
}

// forward-tiles: a load stored right after it becomes one `copy` (the load's
// `other`, the store's `stream`), which plan-buffers gives the buffer its
// slow path moves the tile through; a pair with a scalar op between stays a
// `load {copy}` and its `store {forwarded}`. A second run changes nothing.
TEST(ForwardTilesPass, AdjacentLoadStorePairsBecomeACopy) {
  const char *in = R"TIR(kernel @k(%x: tensor<f32, 2>, %y: tensor<f32, 2>, %n: i64) {
  grid {
    %0 = const {value = 1} : i64
    yield %0
  }
  body {
    %1 = load %x, %n, %n {other = 2.0} : tile<f32, 4, 32>
    store %y, %n, %n, %1 {stream}
    %2 = load %x, %n, %n : tile<f32, 4, 32>
    %3 = const {value = 0} : i64
    store %y, %3, %n, %2
  }
}
)TIR";
  const char *want = R"TIR(kernel @k(%x: tensor<f32, 2>, %y: tensor<f32, 2>, %n: i64) {
  scratch 512
  grid {
    %0 = const {value = 1} : i64
    yield %0
  }
  body {
    %1 = copy %x, %n, %n, %y, %n, %n {other = 2.0, stream} : tile<f32, 4, 32> buf(0)
    %2 = load %x, %n, %n {copy} : tile<f32, 4, 32> buf(0)
    %3 = const {value = 0} : i64
    store %y, %3, %n, %2 {forwarded}
  }
}
)TIR";
  EXPECT_EQ(runOn(in, "forward-tiles,select-moves,plan-buffers"), want);
  // Planned buffers parse back; the decision passes leave the result alone.
  EXPECT_EQ(runOn(want, "forward-tiles,select-moves"), want);
}
