//===- FrontendDiagnosticsTest.cpp - Bad kernels get precise diagnostics --===//
//
// Each case is a small kernel with one mistake: the first diagnostic must be
// an error at the expected line:column whose message contains the expected
// text, and the rendered form must carry the source line and a caret.
//
//===----------------------------------------------------------------------===//
#include "dsl/Frontend.h"

#include <gtest/gtest.h>

using namespace tilejit;

namespace {

struct Case {
  const char *name;
  const char *source;
  dsl::SpecValues spec;
  unsigned line, column;
  const char *message;
};

// A valid header most cases share: x is a 2-D f32 tensor of M x N.
#define HEAD "kernel k<T: f16|f32, D: i64 = 64>(x: gm<T>[M, N], y: gm<f32>[M, N], s: f32) grid(M) {\n"

const Case kCases[] = {
    {"unknown_character", "kernel k() grid(1) { let a = 1 @ 2; }", {}, 1, 32, "unexpected character '@'"},
    {"malformed_number", "kernel k() grid(1) { let a = 12abc; }", {}, 1, 30, "malformed number"},
    {"unterminated_comment", "kernel k() grid(1) { } /* never closed", {}, 1, 24, "unterminated block comment"},
    {"top_level_junk", "let a = 1;", {}, 1, 1, "expected 'kernel' at top level"},
    {"missing_kernel_name", "kernel (x: f32) grid(1) {}", {}, 1, 8, "expected kernel name"},
    {"missing_grid", "kernel k(x: f32) { }", {}, 1, 18, "expected 'grid(...)'"},
    {"too_many_grid_axes", "kernel k() grid(1, 2, 3, 4) { }", {}, 1, 26, "at most 3 axes"},
    {"missing_semicolon", "kernel k() grid(1) {\n  let a = 1\n}", {}, 3, 1, "expected ';' after declaration"},
    {"missing_rbrace", "kernel k() grid(1) {\n  let a = 1;\n", {}, 2, 13, "expected '}' to close kernel body"},
    {"bad_cparam_kind", "kernel k<T: 3>() grid(1) { }", {}, 1, 13, "expected a kind"},
    {"for_without_in", "kernel k() grid(1) { for i 0 .. 4 { } }", {}, 1, 28, "expected 'in' after loop variable"},
    {"for_without_range", "kernel k() grid(1) { for i in 0, 4 { } }", {}, 1, 32, "expected '..' in for range"},
    {"assign_to_call", "kernel k() grid(1) { exp(1.0) = 2.0; }", {}, 1, 31, "expected a variable or tensor element"},
    {"keyword_as_value", "kernel k() grid(1) { let a = for; }", {}, 1, 30, "found keyword 'for'"},
    {"undeclared_name", HEAD "  let a = b + 1;\n}", {{"T", "f32"}}, 2, 11, "use of undeclared name 'b'"},
    {"missing_dtype", HEAD "}", {}, 1, 10, "missing value for compile-time parameter 'T' (f16|f32)"},
    {"dtype_not_allowed", HEAD "}", {{"T", "bf16"}}, 1, 10, "dtype bf16 is not allowed for 'T'"},
    {"not_a_dtype", HEAD "}", {{"T", "f64"}}, 1, 10, "'f64' is not a dtype"},
    {"int_param_not_int", HEAD "}", {{"T", "f32"}, {"D", "abc"}}, 1, 22, "'abc' is not an integer"},
    {"unknown_spec_param", HEAD "}", {{"T", "f32"}, {"Q", "1"}}, 1, 1, "unknown compile-time parameter 'Q'"},
    {"f16_arithmetic", HEAD "  let t = load(x, [0, 0], [4, 8]);\n  let u = t * 2.0;\n}", {{"T", "f16"}}, 3, 11,
     "f16 and bf16 are storage types, use cast<f32>"},
    {"mixed_int_widths", "kernel k(a: i32, b: i64) grid(1) {\n  let c = a + b;\n}", {}, 2, 11,
     "mismatched element types i32 and i64"},
    {"stream_not_constant",
     "kernel k(x: gm<f32>[N], b: i64) grid(1) {\n  store(x, [0], load(x, [0], [8]), stream = b > 0);\n}", {},
     2, 45, "'stream' must be a compile-time boolean"},
    {"cached_not_constant",
     "kernel k(x: gm<f32>[N], b: i64) grid(1) {\n  store(x, [0], load(x, [0], [8], cached = b > 0));\n}", {},
     2, 44, "'cached' must be a compile-time boolean"},
    {"cached_on_store",
     "kernel k(x: gm<f32>[N]) grid(1) {\n  store(x, [0], load(x, [0], [8]), cached = true);\n}", {},
     2, 45, "unknown argument 'cached' of 'store'"},
    {"float_literal_for_int", "kernel k(a: i32) grid(1) {\n  let c = a + 1.5;\n}", {}, 2, 15,
     "float literal where i32 is expected"},
    {"assign_to_let", "kernel k() grid(1) {\n  let a = 1;\n  a = 2;\n}", {}, 3, 3,
     "cannot assign to 'a': only 'var' declarations are mutable"},
    {"incompatible_broadcast",
     HEAD "  let a = zeros<f32>([4, 8]);\n  let b = zeros<f32>([4, 6]);\n  let c = a + b;\n}", {{"T", "f32"}}, 4, 11,
     "incompatible tile shapes [4, 8] and [4, 6]"},
    {"non_constant_shape", HEAD "  let a = zeros<f32>([M, 8]);\n}", {{"T", "f32"}}, 2, 23,
     "tile shape must be a compile-time constant"},
    {"load_offset_rank", HEAD "  let a = load(x, [0], [4, 8]);\n}", {{"T", "f32"}}, 2, 19, "needs 2 offsets, got 1"},
    {"load_tile_rank_too_big", HEAD "  let a = load(x, [0, 0], [2, 4, 8]);\n}", {{"T", "f32"}}, 2, 27,
     "load of a rank-3 tile from a rank-2 tensor"},
    {"store_wrong_dtype", HEAD "  let a = zeros<f32>([4, 8]);\n  store(x, [0, 0], a);\n}", {{"T", "f16"}}, 3, 20,
     "use cast<f16>(...)"},
    {"mma_inner_mismatch",
     HEAD "  let a = zeros<f32>([4, 8]);\n  let b = zeros<f32>([6, 16]);\n  let c = dot(a, b);\n}", {{"T", "f32"}}, 4, 11,
     "inner dimensions of 'dot' do not match"},
    {"mma_bad_acc",
     HEAD "  let a = zeros<f32>([4, 8]);\n  let b = zeros<f32>([8, 16]);\n  let c = mma(a, b, zeros<f32>([4, 4]));\n}",
     {{"T", "f32"}}, 4, 21, "accumulator of 'mma' must be tile<f32, 4, 16>"},
    {"tensor_as_value", HEAD "  let a = x + 1;\n}", {{"T", "f32"}}, 2, 11, "tensor 'x' used as a value"},
    {"select_condition_type", HEAD "  let a = select(s, 1.0, 2.0);\n}", {{"T", "f32"}}, 2, 18,
     "the condition of 'select' must be i1"},
    {"if_condition_type", HEAD "  if s { }\n}", {{"T", "f32"}}, 2, 6, "condition of 'if' must be a scalar i1"},
    {"reduce_needs_axis", HEAD "  let a = sum(zeros<f32>([4, 8]));\n}", {{"T", "f32"}}, 2, 11, "needs 'axis = ...'"},
    {"reduce_axis_range", HEAD "  let a = max(zeros<f32>([4, 8]), axis = 2);\n}", {{"T", "f32"}}, 2, 42,
     "reduction axis out of range"},
    {"unknown_builtin", HEAD "  let a = frobnicate(1);\n}", {{"T", "f32"}}, 2, 11,
     "unknown builtin 'frobnicate'; the builtins are listed in docs/dsl.md, section 6"},
    {"misspelt_builtin", HEAD "  let a = tanhh(s);\n}", {{"T", "f32"}}, 2, 11,
     "unknown builtin 'tanhh'; did you mean 'tanh'?"},
    {"misspelt_builtin_two_close", HEAD "  let a = expp(s);\n}", {{"T", "f32"}}, 2, 11,
     "unknown builtin 'expp'; did you mean 'exp' or 'exp2'?"},
    {"misspelt_builtin_missing_letter", HEAD "  let a = sigmod(s);\n}", {{"T", "f32"}}, 2, 11,
     "unknown builtin 'sigmod'; did you mean 'sigmoid'?"},
    {"tanh_of_f16", HEAD "  let t = load(x, [0, 0], [4, 8]);\n  let u = tanh(t);\n}", {{"T", "f16"}}, 3, 11,
     "arithmetic 'tanh' on f16 is not supported; f16 and bf16 are storage types, use cast<f32>"},
    {"sin_of_int", "kernel k(a: i32) grid(1) {\n  let b = sin(a);\n}", {}, 2, 11, "'sin' needs a float operand, got i32"},
    {"pow_of_int", "kernel k(a: i32) grid(1) {\n  let b = pow(a, 2);\n}", {}, 2, 11, "'pow' needs a float operand, got i32"},
    {"pow_arity", HEAD "  let a = pow(s);\n}", {{"T", "f32"}}, 2, 11, "'pow' takes 2 positional arguments, 1 given"},
    {"pow_mixed_kinds", "kernel k(a: f32, b: i32) grid(1) {\n  let c = pow(a, b);\n}", {}, 2, 11,
     "mismatched element types f32 and i32 in 'pow'"},
    {"cast_without_type", HEAD "  let a = cast(1.0);\n}", {{"T", "f32"}}, 2, 11, "'cast' needs a type argument"},
    {"bitcast_width", HEAD "  let a = bitcast<i16>(s);\n}", {{"T", "f32"}}, 2, 11,
     "bitcast between kinds of different widths"},
    {"exp_of_int", "kernel k(a: i32) grid(1) {\n  let b = exp(a);\n}", {}, 2, 11, "'exp' needs a float operand"},
    {"program_id_axis", HEAD "  let a = program_id(3);\n}", {{"T", "f32"}}, 2, 22, "must be 0, 1 or 2"},
    {"index_rank", HEAD "  let a = x[0];\n}", {{"T", "f32"}}, 2, 11, "tensor 'x' has rank 2 but 1 indices"},
    {"unknown_named_arg", HEAD "  let a = load(x, [0, 0], [4], fill = 0.0);\n}", {{"T", "f32"}}, 2, 39,
     "unknown argument 'fill' of 'load'"},
    {"mask_not_bool", HEAD "  let a = load(x, [0, 0], [4], mask = zeros<f32>([4]));\n}", {{"T", "f32"}}, 2, 39,
     "mask must be i1"},
    {"redefinition", "kernel k() grid(1) {\n  let a = 1;\n  let a = 2;\n}", {}, 3, 3, "redefinition of 'a'"},
    {"budget_exceeded",
     "kernel k(y: gm<f32>[M]) grid(1) budget(1024) {\n  let a = zeros<f32>([64, 64]);\n  store(y, [0], sum(a + 1.0, axis = 1));\n}",
     {}, 1, 1, "over its budget of 1024 bytes"},
    {"transpose_rank", HEAD "  let a = transpose(zeros<f32>([8]));\n}", {{"T", "f32"}}, 2, 11,
     "'transpose' needs a rank-2 tile"},
    {"reshape_count", HEAD "  let a = reshape(zeros<f32>([8]), [3, 3]);\n}", {{"T", "f32"}}, 2, 11,
     "reshape of tile<f32, 8> (8 elements) to 9 elements"},
};

} // namespace

class FrontendDiagnostics : public ::testing::TestWithParam<Case> {};

TEST_P(FrontendDiagnostics, ReportsTheMistakeWhereItIs) {
  const Case &c = GetParam();
  DiagnosticEngine diags;
  uint32_t buf = diags.addBuffer("bad.tile", c.source);
  auto file = dsl::parse(diags, buf);
  std::unique_ptr<ir::Kernel> kernel;
  if (file) {
    kernel = dsl::lowerKernel(*file, "k", c.spec, diags);
    // Budget errors come from the pass pipeline, which the compiler runs
    // after lowering.
    if (kernel && std::string(c.name) == "budget_exceeded") {
      extern bool runPipelineForTest(ir::Kernel &, DiagnosticEngine &);
      EXPECT_FALSE(runPipelineForTest(*kernel, diags));
    }
  }
  ASSERT_TRUE(diags.hasErrors()) << c.name << ": no error reported";
  const Diagnostic &d = diags.diagnostics().front();
  EXPECT_EQ(d.severity, Severity::Error);
  EXPECT_NE(d.message.find(c.message), std::string::npos)
      << c.name << ": got '" << d.message << "'";
  if (c.line) {
    EXPECT_EQ(d.loc.line, c.line) << c.name << ": " << diags.render(d);
    EXPECT_EQ(d.loc.column, c.column) << c.name << ": " << diags.render(d);
  }
  std::string rendered = diags.render(d);
  EXPECT_NE(rendered.find("bad.tile:" + std::to_string(d.loc.line) + ":" +
                          std::to_string(d.loc.column) + ": error: "),
            std::string::npos)
      << rendered;
  EXPECT_NE(rendered.find('^'), std::string::npos) << rendered;
}

INSTANTIATE_TEST_SUITE_P(BadKernels, FrontendDiagnostics, ::testing::ValuesIn(kCases),
                         [](const auto &info) { return std::string(info.param.name); });
