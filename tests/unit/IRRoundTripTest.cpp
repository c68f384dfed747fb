//===- IRRoundTripTest.cpp - Tile IR text: print, parse, print again ------===//
#include "codegen/passes/Pipeline.h"
#include "dsl/Frontend.h"
#include "dsl/ir/IRParser.h"
#include "dsl/ir/Printer.h"
#include "dsl/ir/Verifier.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

using namespace tilejit;

namespace {

std::string readSample(const std::string &name) {
  std::ifstream in(std::string(TILEJIT_SOURCE_ROOT) + "/ops/samples/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Parses `text`; the module is null (and `diags` holds why) on error.
std::unique_ptr<ir::Module> parseText(DiagnosticEngine &diags,
                                      const std::string &text) {
  return ir::parseModule(diags, diags.addBuffer("test.tir", text));
}

/// print(parse(text)), or the rendered diagnostics prefixed by "ERROR".
std::string reprint(const std::string &text) {
  DiagnosticEngine diags;
  auto m = parseText(diags, text);
  if (!m)
    return "ERROR\n" + diags.renderAll();
  return ir::print(*m);
}

/// Every op kind and attribute the printer knows, in one verified kernel.
const char *const kAllOps = R"TIR(kernel @all(%a: tensor<f32, 2>, %idx: tensor<i32, 1>, %n: i64, %s: f32) {
  spec T = f32, D = 16, CAUSAL = true
  budget 65536
  constraint %a.1 == 16 "a: size of axis 1 must equal D (16)"
  constraint %idx.0 == %a.0 "idx: size of axis 0 must equal M"
  grid {
    %0 = dim %a {axis = 0} : i64
    %1 = const {value = 4} : i64
    yield %0, %1
  }
  body {
    %2 = program_id {axis = 0} : i64
    %3 = num_programs {axis = 1} : i64
    %4 = stride %a {axis = 0} : i64
    %5 = const_param {name = "D", value = 16} : i64
    %6 = const {value = 1} : i1
    %7 = const {value = -2.5} : f32
    %8 = iota {axis = 1} : tile<i64, 4, 16>
    %9 = load %a, %2, %3 {other = -inf} : tile<f32, 4, 16>
    %10 = cmp %8, %8 {predicate = lt} : tile<i1, 4, 16>
    %11 = load %a, %2, %3, %10 {other = 1.5, mask} : tile<f32, 4, 16>
    %12 = reduce %11 {kind = max, axis = 1} : tile<f32, 4>
    %13 = reshape %12 : tile<f32, 4, 1>
    %14 = broadcast %13 : tile<f32, 4, 16>
    %15 = transpose %14 : tile<f32, 16, 4>
    %16 = splat %7 : tile<f32, 4, 4>
    %17 = mma %14, %15, %16 : tile<f32, 4, 4>
    %18 = mma %15, %14, %16 {transA, transB} : tile<f32, 4, 4>
    %19 = select %6, %s, %7 : f32
    %20 = fma %19, %s, %7 : f32
    %21 = cast %2 : i32
    %22, %23 = for %2, %n, %5, %17, %21 : tile<f32, 4, 4>, i32 {
    ^(%24: i64, %25: tile<f32, 4, 4>, %26: i32):
      %27 = add %25, %18 : tile<f32, 4, 4>
      %28 = shl %26, %21 : i32
      yield %27, %28
    }
    %29 = if %6 : f32 {
      %30 = exp %20 : f32
      yield %30
    } else {
      yield %20
    }
    if %6 {
      store_scalar %a, %2, %3, %29
    } else {
    }
    %31 = fused %22, %29 : tile<f32, 4, 4> {
    ^(%32: f32, %33: f32):
      %34 = const {value = 2.0} : f32
      %35 = mul %32, %33 : f32
      %36 = add %35, %34 : f32
      yield %36
    }
    %37 = load_scalar %idx, %2 {other = 7.0} : i32
    %38 = cast %8 : tile<i32, 4, 16>
    %39 = cast %38 : tile<i64, 4, 16>
    %40 = gather %a, %39, %39, %10 {mask} : tile<f32, 4, 16>
    scatter %a, %39, %39, %40, %10 {mask}
    %41 = exp2 %40 : tile<f32, 4, 16>
    %42 = log2 %41 : tile<f32, 4, 16>
    %43 = tanh %42 : tile<f32, 4, 16>
    %44 = sigmoid %43 : tile<f32, 4, 16>
    %45 = erf %44 : tile<f32, 4, 16>
    %46 = sin %45 : tile<f32, 4, 16>
    %47 = cos %45 : tile<f32, 4, 16>
    %48 = pow %46, %47 : tile<f32, 4, 16>
    store %a, %2, %3, %31
    store %a, %2, %3, %9, %10 {mask}
    store %a, %2, %3, %48
    %49 = copy %a, %2, %3, %a, %3, %2 {other = 1.5, stream, overlap = checked} : tile<f32, 4, 16>
  }
}
)TIR";

struct SampleCase {
  const char *file, *kernel;
  dsl::SpecValues spec;
};

std::vector<SampleCase> sampleCases() {
  return {
      {"softmax.tile", "softmax", {{"T", "f16"}}},
      {"softmax.tile", "softmax", {{"T", "f32"}, {"BN", "256"}}},
      {"matmul.tile", "matmul_abt", {{"T", "bf16"}}},
      {"elementwise.tile", "axpby", {{"T", "f32"}}},
      {"elementwise.tile", "convert", {{"S", "f16"}, {"D", "i8"}}},
      {"elementwise.tile", "copy", {{"T", "bf16"}, {"U", "u16"}}},
      {"flash_attention.tile",
       "attn",
       {{"T", "f16"}, {"D", "64"}, {"G", "2"}, {"CAUSAL", "true"}}},
      {"flash_attention.tile", "attn", {{"T", "f32"}, {"D", "32"}, {"G", "1"}}},
  };
}

} // namespace

TEST(IRRoundTrip, AllOpsKernelPrintsBackIdentically) {
  DiagnosticEngine diags;
  auto m = parseText(diags, kAllOps);
  ASSERT_TRUE(m) << diags.renderAll();
  ASSERT_EQ(m->kernels.size(), 1u);
  EXPECT_TRUE(ir::verify(*m->kernels[0], diags)) << diags.renderAll();
  EXPECT_EQ(ir::print(*m), kAllOps);
}

TEST(IRRoundTrip, AllOpsKernelAfterPipeline) {
  DiagnosticEngine diags;
  auto m = parseText(diags, kAllOps);
  ASSERT_TRUE(m) << diags.renderAll();
  ir::Kernel &k = *m->kernels[0];
  ASSERT_TRUE(passes::runDefaultPipeline(k, diags)) << diags.renderAll();
  std::string planned = ir::print(k);
  EXPECT_NE(planned.find("scratch "), std::string::npos);
  EXPECT_NE(planned.find(" buf("), std::string::npos);
  EXPECT_EQ(reprint(planned), planned);
  DiagnosticEngine d2;
  auto again = parseText(d2, planned);
  ASSERT_TRUE(again) << d2.renderAll();
  ir::VerifyOptions vo;
  vo.requirePlanned = true;
  EXPECT_TRUE(ir::verify(*again->kernels[0], d2, vo)) << d2.renderAll();
  EXPECT_TRUE(again->kernels[0]->buffersPlanned);
  EXPECT_EQ(again->kernels[0]->scratchBytes, k.scratchBytes);
}

TEST(IRRoundTrip, SampleKernelsBeforeAndAfterPipeline) {
  for (const SampleCase &c : sampleCases()) {
    SCOPED_TRACE(std::string(c.file) + " " + c.kernel);
    DiagnosticEngine diags;
    auto file = dsl::parse(diags, diags.addBuffer(c.file, readSample(c.file)));
    ASSERT_TRUE(file) << diags.renderAll();
    auto k = dsl::lowerKernel(*file, c.kernel, c.spec, diags);
    ASSERT_TRUE(k) << diags.renderAll();
    EXPECT_TRUE(ir::verify(*k, diags)) << diags.renderAll();
    std::string lowered = ir::print(*k);
    EXPECT_EQ(reprint(lowered), lowered);

    // The pipeline on the parsed text gives what it gives on the original.
    DiagnosticEngine d2;
    auto parsed = parseText(d2, lowered);
    ASSERT_TRUE(parsed) << d2.renderAll();
    // Every pass leaves verified IR (as debug builds check).
    passes::PipelineOptions checkEach;
    checkEach.afterPass = [&](const std::string &pass, const ir::Kernel &kk,
                              bool) {
      ir::VerifyOptions vo;
      vo.requirePlanned = pass == "plan-buffers";
      EXPECT_TRUE(ir::verify(kk, diags, vo)) << pass << "\n" << diags.renderAll();
    };
    ASSERT_TRUE(passes::runDefaultPipeline(*k, diags, checkEach))
        << diags.renderAll();
    ASSERT_TRUE(passes::runDefaultPipeline(*parsed->kernels[0], d2))
        << d2.renderAll();
    ir::VerifyOptions planned;
    planned.requirePlanned = true;
    EXPECT_TRUE(ir::verify(*k, diags, planned)) << diags.renderAll();
    std::string optimised = ir::print(*k);
    EXPECT_EQ(ir::print(*parsed->kernels[0]), optimised);
    EXPECT_EQ(reprint(optimised), optimised);
    // The decision passes are idempotent: run again, none changes the kernel.
    for (const char *pass : {"forward-tiles", "select-moves", "select-mma", "schedule-prefetch"}) {
      passes::PipelineOptions again;
      again.afterPass = [&](const std::string &, const ir::Kernel &, bool changed) {
        EXPECT_FALSE(changed) << pass;
      };
      EXPECT_TRUE(passes::runPasses(*k, {pass}, diags, again)) << diags.renderAll();
    }
    EXPECT_EQ(ir::print(*k), optimised);
  }
}

TEST(IRRoundTrip, ModuleWithTwoKernels) {
  std::string text = "kernel @a() {\n  grid {\n    %0 = const {value = 1} : i64\n"
                     "    yield %0\n  }\n  body {\n  }\n}\n"
                     "kernel @b(%t: tensor<u8, 6>) {\n  grid {\n"
                     "    %0 = dim %t {axis = 5} : i64\n    yield %0\n  }\n"
                     "  body {\n    %1 = const {value = 255} : u8\n  }\n}\n";
  EXPECT_EQ(reprint(text), text);
}

TEST(IRRoundTrip, FloatConstantsKeepTheirValue) {
  for (double v : {0.1, -0.0, 1e-30, 3.4028234663852886e38, 1.0 / 3.0, 1e10,
                   -HUGE_VAL, HUGE_VAL}) {
    auto k = std::make_unique<ir::Kernel>("f");
    ir::OpAttrs one;
    one.intValue = 1;
    auto c = std::make_unique<ir::Op>(ir::OpKind::Constant, SourceLoc());
    c->addResult(ir::Type::scalar(ir::ScalarKind::I64));
    c->attrs() = one;
    ir::Value *ext = k->grid().append(std::move(c))->result();
    auto y = std::make_unique<ir::Op>(ir::OpKind::Yield, SourceLoc());
    y->addOperand(ext);
    k->grid().append(std::move(y));
    auto f = std::make_unique<ir::Op>(ir::OpKind::Constant, SourceLoc());
    f->addResult(ir::Type::scalar(ir::ScalarKind::F32));
    f->attrs().floatValue = static_cast<float>(v);
    k->body().append(std::move(f));
    std::string text = ir::print(*k);
    DiagnosticEngine diags;
    auto m = parseText(diags, text);
    ASSERT_TRUE(m) << diags.renderAll();
    double back = m->kernels[0]->body().ops()[0]->attrs().floatValue;
    EXPECT_EQ(static_cast<float>(back), static_cast<float>(v)) << text;
    EXPECT_EQ(std::signbit(back), std::signbit(v)) << text;
    EXPECT_EQ(ir::print(*m), text);
  }
}

TEST(IRRoundTrip, ConstraintMessagesAreEscaped) {
  std::string text =
      "kernel @m(%t: tensor<f32, 1>) {\n"
      "  constraint %t.0 == 4 \"say \\\"four\\\" \\\\ not five\"\n"
      "  grid {\n    %0 = const {value = 1} : i64\n    yield %0\n  }\n"
      "  body {\n  }\n}\n";
  DiagnosticEngine diags;
  auto m = parseText(diags, text);
  ASSERT_TRUE(m) << diags.renderAll();
  EXPECT_EQ(m->kernels[0]->constraints.at(0).message, "say \"four\" \\ not five");
  EXPECT_EQ(ir::print(*m), text);
}

TEST(IRRoundTrip, CommentsAndLocationsAreAccepted) {
  std::string text = "// leading comment\nkernel @c() { // trailing\n  grid {\n"
                     "    %0 = const {value = 2} : i64 loc(3:7)\n"
                     "    yield %0 loc(4:1)\n  }\n  body {\n  }\n}\n";
  DiagnosticEngine diags;
  auto m = parseText(diags, text);
  ASSERT_TRUE(m) << diags.renderAll();
  const ir::Op &c = *m->kernels[0]->grid().ops()[0];
  EXPECT_EQ(c.attrs().intValue, 2);
  // Locations point into the .tir text.
  EXPECT_EQ(c.loc().line, 4u);
  EXPECT_EQ(c.loc().column, 5u);
}

namespace {

/// Parses `text` expecting failure; returns the first error's "line:message".
std::string parseError(const std::string &text) {
  DiagnosticEngine diags;
  auto m = parseText(diags, text);
  if (m)
    return "parsed";
  for (const Diagnostic &d : diags.diagnostics())
    if (d.severity == Severity::Error)
      return std::to_string(d.loc.line) + ":" + d.message;
  return "no error";
}

std::string wrapBody(const std::string &ops) {
  return "kernel @k(%t: tensor<f32, 1>) {\n  grid {\n"
         "    %0 = const {value = 1} : i64\n    yield %0\n  }\n  body {\n" +
         ops + "  }\n}\n";
}

} // namespace

TEST(IRParser, ReportsErrorsWithLocations) {
  EXPECT_EQ(parseError(wrapBody("    %1 = add %9, %9 : i64\n")),
            "7:use of undefined value '%9'");
  EXPECT_EQ(parseError(wrapBody("    %1 = frobnicate : i64\n")),
            "7:unknown operation 'frobnicate'");
  EXPECT_EQ(parseError(wrapBody("    %1 = const {value = 1} : tile<f32>\n")),
            "7:a tile has rank 1..4");
  EXPECT_EQ(parseError(wrapBody("    %1 = const {value = 1} : q32\n")),
            "7:unknown type 'q32'");
  EXPECT_EQ(parseError(wrapBody("    %1, %2 = const {value = 1} : i64\n")),
            "7:'const' has 2 result names but 1 result types");
  EXPECT_EQ(parseError(wrapBody("    %1 = const {value = 1} : i64\n"
                                "    %1 = const {value = 2} : i64\n")),
            "8:redefinition of value '%1'");
  EXPECT_EQ(parseError(wrapBody("    %1 = const {value = 1.5} : i64\n")),
            "7:'const' needs an integer value");
  EXPECT_EQ(parseError(wrapBody("    %1 = dim %t {axis = 0, colour = 3} : i64\n")),
            "7:unknown attribute 'colour'");
  EXPECT_EQ(parseError("kernel @k() {\n  grid {\n    yield\n"),
            "4:expected '}' at the end of a block, found end of input");
  EXPECT_EQ(parseError("kernel @k(%t: tensor<f32, 9>) {\n}\n"),
            "1:expected 'tensor<kind, rank>' with rank 1..6");
  EXPECT_EQ(parseError("kernel k() {\n}\n"),
            "1:expected '@name' after 'kernel', found 'k'");
}
