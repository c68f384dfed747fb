//===- FrontendTest.cpp - Parsing and lowering the sample kernels ---------===//
#include "codegen/passes/Pipeline.h"
#include "dsl/Frontend.h"
#include "dsl/ir/Printer.h"
#include "dsl/ir/Walk.h"
#include "jit/Options.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

using namespace tilejit;

namespace {

std::string readSample(const std::string &name) {
  std::ifstream in(std::string(TILEJIT_SOURCE_ROOT) + "/ops/samples/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Lowered {
  DiagnosticEngine diags;
  std::unique_ptr<dsl::ParsedFile> file;
  std::unique_ptr<ir::Kernel> kernel;
};

std::unique_ptr<Lowered> lower(const std::string &text, const std::string &kernel,
                               const dsl::SpecValues &spec) {
  auto l = std::make_unique<Lowered>();
  uint32_t buf = l->diags.addBuffer("test.tile", text);
  l->file = dsl::parse(l->diags, buf);
  if (l->file)
    l->kernel = dsl::lowerKernel(*l->file, kernel, spec, l->diags);
  return l;
}

int countOps(ir::Kernel &k, ir::OpKind kind) {
  int n = 0;
  ir::walk(k, [&](ir::Op &op) { n += op.kind() == kind; });
  return n;
}

} // namespace

TEST(Frontend, LowersSoftmaxWithLoopCarriedTiles) {
  auto l = lower(readSample("softmax.tile"), "softmax", {{"T", "f16"}});
  ASSERT_TRUE(l->kernel) << l->diags.renderAll();
  ir::Kernel &k = *l->kernel;
  ASSERT_EQ(k.params.size(), 2u);
  EXPECT_EQ(k.params[0].type.str(), "tensor<f16, 2>");
  // y's [M, N] repeats x's: two EqualsDim constraints.
  ASSERT_EQ(k.constraints.size(), 2u);
  EXPECT_EQ(k.constraints[0].kind, ir::ShapeConstraint::Kind::EqualsDim);
  // The first loop carries m and l (two tile<f32, 1024> values).
  ir::Op *firstFor = nullptr;
  ir::walk(k, [&](ir::Op &op) {
    if (op.kind() == ir::OpKind::For && !firstFor)
      firstFor = &op;
  });
  ASSERT_TRUE(firstFor);
  ASSERT_EQ(firstFor->numResults(), 2u);
  EXPECT_EQ(firstFor->result(0)->type().str(), "tile<f32, 1024>");
  EXPECT_EQ(countOps(k, ir::OpKind::Reduce), 2);
  EXPECT_EQ(countOps(k, ir::OpKind::Store), 1);
  EXPECT_EQ(k.specialization.size(), 2u);
}

TEST(Frontend, PipelineFusesAndPlansSoftmax) {
  auto l = lower(readSample("softmax.tile"), "softmax", {{"T", "bf16"}, {"BN", "256"}});
  ASSERT_TRUE(l->kernel) << l->diags.renderAll();
  ASSERT_TRUE(passes::runDefaultPipeline(*l->kernel, l->diags)) << l->diags.renderAll();
  ir::Kernel &k = *l->kernel;
  EXPECT_EQ(countOps(k, ir::OpKind::ConstParam), 0);
  EXPECT_GT(countOps(k, ir::OpKind::Fused), 0);
  // No elementwise tile op is left outside a fused body.
  bool stray = false;
  std::function<void(ir::Block &)> scan = [&](ir::Block &b) {
    for (auto &op : b.ops()) {
      if (op->kind() == ir::OpKind::Fused)
        continue;
      if (ir::isElementwise(op->kind()) && op->result()->type().isTile())
        stray = true;
      for (unsigned i = 0; i < op->numBlocks(); ++i)
        scan(*op->block(i));
    }
  };
  scan(k.body());
  EXPECT_FALSE(stray) << ir::print(k);
  if (jit::Options::process().testPrint())
    std::cout << ir::print(k);
  EXPECT_TRUE(k.buffersPlanned);
  EXPECT_GT(k.scratchBytes, 0);
  EXPECT_LE(k.scratchBytes, 196608);
}

TEST(Frontend, MathBuiltinsLowerToTheirOps) {
  const char *src = R"(
kernel k(x: gm<f32>[N], y: gm<f32>[N], s: f32) grid(1) {
  let t = load(x, [0], [16]);
  let u = exp2(t) + log2(t) + tanh(t) + sigmoid(t) + erf(t) + sin(t) + cos(t);
  store(y, [0], u + pow(t, 2) + pow(2.0, t) + pow(t, t));
  y[0] = pow(s, 0.5) + pow(2, 3) + sin(s);
}
)";
  auto l = lower(src, "k", {});
  ASSERT_TRUE(l->kernel) << l->diags.renderAll();
  ir::Kernel &k = *l->kernel;
  for (ir::OpKind kind : {ir::OpKind::Exp2, ir::OpKind::Log2, ir::OpKind::Tanh,
                          ir::OpKind::Sigmoid, ir::OpKind::Erf, ir::OpKind::Cos})
    EXPECT_EQ(countOps(k, kind), 1) << ir::mnemonic(kind);
  EXPECT_EQ(countOps(k, ir::OpKind::Sin), 2);
  EXPECT_EQ(countOps(k, ir::OpKind::Pow), 5);
  // Literals adapt to the other operand (a scalar splats over the tile);
  // two literals are f32, as pow is defined on f32 only.
  ir::walk(k, [&](ir::Op &op) {
    if (op.kind() != ir::OpKind::Pow)
      return;
    const ir::Type &t = op.result()->type();
    EXPECT_EQ(t.elem(), ir::ScalarKind::F32);
    EXPECT_EQ(op.operand(0)->type(), t);
    EXPECT_EQ(op.operand(1)->type(), t);
  });
}

TEST(Frontend, BuiltinListIsSortedKnownAndDocumented) {
  const std::vector<std::string> &names = dsl::builtinNames();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  std::ifstream in(std::string(TILEJIT_SOURCE_ROOT) + "/docs/dsl.md");
  std::stringstream docs;
  docs << in.rdbuf();
  std::string text = docs.str();
  size_t section = text.find("## 6. Builtins");
  ASSERT_NE(section, std::string::npos);
  std::string table = text.substr(section, text.find("## 7.", section) - section);
  for (const std::string &n : names) {
    // Documented: `name(` or `name<` in the table of section 6.
    EXPECT_TRUE(table.find("`" + n + "(") != std::string::npos ||
                table.find("`" + n + "<") != std::string::npos ||
                table.find("`" + n + "`") != std::string::npos)
        << n << " is not in docs/dsl.md section 6";
    // Known: a call with no arguments fails on its arguments, not its name.
    auto l = lower("kernel k() grid(1) {\n  let a = " + n + "();\n}", "k", {});
    ASSERT_TRUE(l->diags.hasErrors()) << n;
    EXPECT_EQ(l->diags.diagnostics().front().message.find("unknown builtin"),
              std::string::npos)
        << l->diags.renderAll();
  }
}

TEST(Frontend, UnknownBuiltinFarFromAllListsThem) {
  auto l = lower("kernel k() grid(1) {\n  let a = frobnicate(1);\n}", "k", {});
  ASSERT_TRUE(l->diags.hasErrors());
  const auto &d = l->diags.diagnostics();
  ASSERT_EQ(d.size(), 2u) << l->diags.renderAll();
  EXPECT_EQ(d[1].severity, Severity::Note);
  std::string all;
  for (const std::string &n : dsl::builtinNames())
    all += (all.empty() ? "" : ", ") + n;
  EXPECT_EQ(d[1].message, "the builtins: " + all);
  EXPECT_NE(d[1].message.find("sigmoid"), std::string::npos);
}
