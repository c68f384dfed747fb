//===- FrontendLimitsTest.cpp - Hostile sizes: limits, not crashes --------===//
//
// Nesting depth (expressions, statements, Tile IR regions), integer literals
// and compile time. Each input is generated here: one past a limit must be a
// diagnostic naming the limit (far past it too: the parser stops at the limit
// instead of recursing on), and one just inside it must go through sema, the
// pipeline, the verifier and LLVM lowering (every stage recurses over the
// tree; this is also the case the ASan build runs, whose frames are larger).
// A long kernel goes through the front end; its time against its size is a
// benchmark (compile/front-end/4000-loops-and-ifs in bench/suite).
//
//===----------------------------------------------------------------------===//
#include "codegen/llvm/CodeGen.h"
#include "codegen/passes/Pipeline.h"
#include "dsl/Frontend.h"
#include "dsl/ir/IRParser.h"
#include "dsl/ir/Verifier.h"
#include "dsl/syntax/Parser.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <gtest/gtest.h>

#include <functional>
#include <string>

using namespace tilejit;

namespace {

std::string repeat(const std::string &s, unsigned n) {
  std::string out;
  out.reserve(s.size() * n);
  for (unsigned i = 0; i < n; ++i)
    out += s;
  return out;
}

/// The errors `diags` holds, one a line.
std::string errors(const DiagnosticEngine &diags) {
  std::string out;
  for (const Diagnostic &d : diags.diagnostics())
    if (d.severity == Severity::Error)
      out += d.message + "\n";
  return out;
}

std::string kernel(const std::string &body) {
  return "kernel k(x: gm<f32>[N]) grid(1) {\n" + body + "\n}\n";
}

/// Parses and lowers `text` (kernel k); the diagnostics' text, empty if it
/// compiled. With `full`, the default pipeline and LLVM lowering run too.
std::string compile(const std::string &text, bool full) {
  DiagnosticEngine diags;
  auto failed = [&](const char *stage) {
    std::string out = errors(diags);
    return out.empty() ? std::string(stage) + " failed without a diagnostic" : out;
  };
  uint32_t buf = diags.addBuffer("limits.tile", text);
  auto file = dsl::parse(diags, buf);
  if (!file)
    return failed("parse");
  auto k = dsl::lowerKernel(*file, "k", {}, diags);
  if (!k)
    return failed("lowering");
  if (full) {
    if (!passes::runDefaultPipeline(*k, diags) || !ir::verify(*k, diags))
      return failed("the pipeline");
    llvm::LLVMContext ctx;
    if (!codegen::lowerToLLVM(*k, ctx, codegen::TargetInfo{}, "limits", diags))
      return failed("codegen");
  }
  return errors(diags);
}

const unsigned kLimit = dsl::kMaxNestingDepth;
const std::string kExprLimitMsg =
    "expression nests deeper than the limit of " + std::to_string(kLimit);
const std::string kStmtLimitMsg =
    "statement nests deeper than the limit of " + std::to_string(kLimit);

/// An expression of nesting depth `n` in each of the forms that nest.
struct DeepForm {
  const char *name;
  std::function<std::string(unsigned)> make; ///< statements using x
};

const DeepForm kForms[] = {
    {"parentheses", [](unsigned n) {
       return "let a = " + repeat("(", n) + "x[0]" + repeat(")", n) + "; x[0] = a;";
     }},
    {"unary_minus", [](unsigned n) { return "let a = " + repeat("-", n) + "x[0]; x[0] = a;"; }},
    {"logical_not", [](unsigned n) {
       return "let a = " + repeat("!", n) + "(x[0] > 0.0); x[0] = select(a, 1.0, 2.0);";
     }},
    {"calls", [](unsigned n) {
       return "let a = " + repeat("abs(", n) + "x[0]" + repeat(")", n) + "; x[0] = a;";
     }},
    {"left_chain", [](unsigned n) { return "let a = x[0]" + repeat(" + x[1]", n) + "; x[0] = a;"; }},
    {"right_parenthesised_chain", [](unsigned n) {
       return "let a = " + repeat("x[1] * (", n) + "x[0]" + repeat(")", n) + "; x[0] = a;";
     }},
    {"tile_calls", [](unsigned n) {
       return "let t = load(x, [0], [16]);\nlet a = " + repeat("exp(", n) + "t" + repeat(")", n) +
              ";\nstore(x, [0], a);";
     }},
};

} // namespace

TEST(FrontendLimits, ExpressionsOnePastTheLimitAreRefusedNamingIt) {
  for (const DeepForm &f : kForms) {
    SCOPED_TRACE(f.name);
    std::string diag = compile(kernel(f.make(kLimit + 1)), false);
    EXPECT_NE(diag.find(kExprLimitMsg), std::string::npos) << diag;
    // Far past the limit: still one diagnostic, no stack overflow.
    diag = compile(kernel(f.make(100000)), false);
    EXPECT_NE(diag.find(kExprLimitMsg), std::string::npos) << diag;
  }
}

TEST(FrontendLimits, ExpressionsJustInsideTheLimitCompileThroughCodegen) {
  // Each form wraps its `n` levels around a leaf of depth 2 (x[0] or a
  // comparison) inside a statement's expression: n = limit - 3 is accepted.
  for (const DeepForm &f : kForms) {
    SCOPED_TRACE(f.name);
    std::string diag = compile(kernel(f.make(kLimit - 3)), true);
    EXPECT_EQ(diag, "");
  }
}

TEST(FrontendLimits, StatementsOnePastTheLimitAreRefusedNamingIt) {
  auto nestedFor = [](unsigned n) {
    return kernel("var a = 0;\n" + repeat("for i in 0..N {\n", n) + "a += 1;\n" + repeat("}", n) +
                  "\nx[0] = cast<f32>(a);");
  };
  auto nestedIf = [](unsigned n) {
    return kernel("var a = 0;\n" + repeat("if x[0] > 0.0 {\n", n) + "a += 1;\n" + repeat("}", n) +
                  "\nx[0] = cast<f32>(a);");
  };
  auto elseIfChain = [](unsigned n) {
    std::string s = "var a = 0;\nif x[0] < 0.0 { a = 0; }";
    for (unsigned i = 1; i < n; ++i)
      s += " else if x[0] < " + std::to_string(i) + ".0 { a = " + std::to_string(i) + "; }";
    return kernel(s + "\nx[0] = cast<f32>(a);");
  };
  for (auto &[name, make] :
       std::vector<std::pair<const char *, std::function<std::string(unsigned)>>>{
           {"for", nestedFor}, {"if", nestedIf}, {"else_if", elseIfChain}}) {
    SCOPED_TRACE(name);
    // `n` nested statements around one more: depth n + 1.
    std::string diag = compile(make(kLimit), false);
    EXPECT_NE(diag.find(kStmtLimitMsg), std::string::npos) << diag;
    diag = compile(make(20000), false);
    EXPECT_NE(diag.find(kStmtLimitMsg), std::string::npos) << diag;
    diag = compile(make(kLimit - 1), true);
    EXPECT_EQ(diag, "");
  }
}

TEST(FrontendLimits, IntegerLiteralsOutsideInt64AreErrors) {
  auto literal = [](const std::string &lit) {
    return kernel("let a = " + lit + ";\nx[0] = cast<f32>(a);");
  };
  const std::string range = "is out of range (at most 9223372036854775807";
  for (const char *bad : {"9223372036854775808", "18446744073709551615",
                          "99999999999999999999999999", "0x8000000000000000",
                          "0xffffffffffffffff", "0x1ffffffffffffffff"}) {
    SCOPED_TRACE(bad);
    std::string want = "integer literal '";
    want.append(bad).append("' ").append(range);
    std::string diag = compile(literal(bad), false);
    EXPECT_NE(diag.find(want), std::string::npos) << diag;
  }
  for (const char *good : {"9223372036854775807", "0x7fffffffffffffff", "0", "-9223372036854775807"}) {
    SCOPED_TRACE(good);
    EXPECT_EQ(compile(literal(good), false), "");
  }
}

TEST(FrontendLimits, TileIRRegionsPastTheLimitAreRefused) {
  auto nested = [](unsigned n) {
    std::string s = "kernel @k(%x: tensor<f32, 1>) {\n  grid {\n    %g = const {value = 1} : i64\n"
                    "    yield %g\n  }\n  body {\n    %c = const {value = 1} : i64\n";
    for (unsigned i = 0; i < n; ++i)
      s += "    for %c, %c, %c {\n    ^(%i" + std::to_string(i) + ": i64):\n";
    s += "    store_scalar %x, %c, %f\n";
    for (unsigned i = 0; i < n; ++i)
      s += "    yield\n    }\n";
    return s + "  }\n}\n";
  };
  for (unsigned n : {ir::kMaxRegionDepth, 50000u}) {
    DiagnosticEngine diags;
    uint32_t buf = diags.addBuffer("deep.tir", nested(n));
    EXPECT_EQ(ir::parseModule(diags, buf), nullptr);
    std::string out = errors(diags);
    EXPECT_NE(out.find("regions nest deeper than the limit of " +
                       std::to_string(ir::kMaxRegionDepth)),
              std::string::npos)
        << out;
  }
}

TEST(FrontendLimits, LongKernelGoesThroughTheFrontEnd) {
  // Thousands of sequential loops and ifs, each with its own tile
  // arithmetic: parse, sema, the pipeline and the verifier accept it. How
  // long that takes is measured by the benchmark
  // compile/front-end/4000-loops-and-ifs (bench/suite/CompileCases.cpp).
  const unsigned n = 4000;
  std::string body = "var t = zeros<f32>([16]);\nlet s = x[0];\n";
  for (unsigned i = 0; i < n; ++i) {
    std::string v = std::to_string(i);
    body.append("for i").append(v).append(" in 0..N { t = t + load(x, [i").append(v);
    body.append("], [16]) * 2.0; }\nif s > ").append(v).append(".0 { t = t - 1.0; }\n");
  }
  body += "store(x, [0], t);";
  DiagnosticEngine diags;
  uint32_t buf = diags.addBuffer("long.tile", kernel(body));
  auto file = dsl::parse(diags, buf);
  ASSERT_TRUE(file);
  auto k = dsl::lowerKernel(*file, "k", {}, diags);
  ASSERT_TRUE(k);
  ASSERT_TRUE(passes::runDefaultPipeline(*k, diags));
  ASSERT_TRUE(ir::verify(*k, diags));
  EXPECT_EQ(errors(diags), "");
}
