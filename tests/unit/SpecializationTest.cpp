//===- SpecializationTest.cpp - Compile-time parameters bound before keying ===//
//
// dsl::bindSpecialization is what the compiler runs before it forms a tiling
// key: these cases pin its canonical forms (one specialisation, one list)
// and every way a specialisation can be wrong, plus the overflow rules of
// compile-time arithmetic and tile shapes.
//
//===----------------------------------------------------------------------===//
#include "dsl/Frontend.h"

#include <gtest/gtest.h>

using namespace tilejit;

namespace {

const char *kKernel = R"(
kernel k<T: f16|bf16|f32, BN: i64 = 64, CAUSAL: bool = false, L: enum(BSH, BNSD) = BSH>(
    x: gm<T>[N], y: gm<T>[N]) grid(cdiv(N, BN)) {
  let i = program_id(0) * BN;
  store(y, [i], load(x, [i], [BN]));
}
kernel other<D: i64>(x: gm<f32>[D]) grid(1) { }
)";

struct Bound {
  std::optional<dsl::SpecValues> values;
  std::string errors;
};

Bound bind(const dsl::SpecValues &spec, const std::string &kernel = "k",
           const char *source = kKernel) {
  DiagnosticEngine diags;
  auto file = dsl::parse(diags, diags.addBuffer("k.tile", source));
  EXPECT_TRUE(file) << diags.renderAll();
  if (!file)
    return {};
  Bound b;
  b.values = dsl::bindSpecialization(*file, kernel, spec, diags);
  b.errors = diags.renderAll();
  EXPECT_EQ(b.values.has_value(), !diags.hasErrors());
  return b;
}

using Spec = dsl::SpecValues;

} // namespace

TEST(Specialization, DefaultsAppliedInDeclarationOrder) {
  Bound b = bind({{"T", "f32"}});
  ASSERT_TRUE(b.values) << b.errors;
  EXPECT_EQ(*b.values, (Spec{{"T", "f32"}, {"BN", "64"}, {"CAUSAL", "false"}, {"L", "BSH"}}));
}

TEST(Specialization, SpellingsOfOneValueBindAlike) {
  const Spec canonical = {{"T", "f32"}, {"BN", "64"}, {"CAUSAL", "true"}, {"L", "BNSD"}};
  for (const Spec &spec : {
           Spec{{"L", "BNSD"}, {"CAUSAL", "1"}, {"BN", "0x40"}, {"T", "f32"}},
           Spec{{"T", "f32"}, {"BN", "064"}, {"CAUSAL", "true"}, {"L", "BNSD"}},
           Spec{{"T", "f32"}, {"BN", "+64"}, {"CAUSAL", "1"}, {"L", "BNSD"}},
       }) {
    Bound b = bind(spec);
    ASSERT_TRUE(b.values) << b.errors;
    EXPECT_EQ(*b.values, canonical);
  }
}

TEST(Specialization, WrongSpecialisationsAreDiagnosed) {
  struct Case {
    Spec spec;
    const char *message;
  };
  const Case cases[] = {
      {{{"T", "f32"}, {"T", "f16"}}, "'T' of kernel 'k' is given twice ('f32' and 'f16')"},
      {{{"T", "f32"}, {"B", "32"}},
       "unknown compile-time parameter 'B' for kernel 'k'; did you mean 'BN'? (its parameters: "
       "T: f16|bf16|f32, BN: i64 = 64, CAUSAL: bool = false, L: enum(BSH, BNSD) = BSH)"},
      {{{"T", "f32"}, {"WIDTH", "32"}}, "unknown compile-time parameter 'WIDTH' for kernel 'k' (its"},
      {{}, "missing value for compile-time parameter 'T' (f16|bf16|f32)"},
      {{{"T", "f64"}}, "'f64' is not a dtype (for 'T')"},
      {{{"T", "i32"}}, "dtype i32 is not allowed for 'T' (expected f16|bf16|f32)"},
      {{{"T", "f32"}, {"BN", "99999999999999999999"}},
       "'99999999999999999999' is out of range for 'BN' (a 64-bit signed integer)"},
      {{{"T", "f32"}, {"BN", "-0x8000000000000001"}}, "is out of range for 'BN'"},
      {{{"T", "f32"}, {"BN", "64k"}}, "'64k' is not an integer (for 'BN')"},
      {{{"T", "f32"}, {"BN", ""}}, "'' is not an integer (for 'BN')"},
      {{{"T", "f32"}, {"BN", "0x"}}, "'0x' is not an integer (for 'BN')"},
      {{{"T", "f32"}, {"CAUSAL", "2"}}, "'2' is not a boolean (for 'CAUSAL'); expected true or false"},
      {{{"T", "f32"}, {"CAUSAL", "yes"}}, "'yes' is not a boolean"},
      {{{"T", "f32"}, {"L", "TND"}}, "'TND' is not an enumerator of 'L' (expected BSH|BNSD)"},
  };
  for (const Case &c : cases) {
    Bound b = bind(c.spec);
    EXPECT_FALSE(b.values);
    EXPECT_NE(b.errors.find(c.message), std::string::npos)
        << "want: " << c.message << "\ngot: " << b.errors;
    EXPECT_NE(b.errors.find("k.tile:"), std::string::npos) << b.errors;
  }
}

TEST(Specialization, UnknownKernelNamesTheCloseOnes) {
  Bound b = bind({}, "otter");
  EXPECT_FALSE(b.values);
  EXPECT_NE(b.errors.find("no kernel named 'otter'; did you mean 'other'? (the file has: k, other)"),
            std::string::npos)
      << b.errors;
}

TEST(Specialization, CompileTimeArithmeticNeverOverflows) {
  // A tile too large for any size computation, and constant arithmetic
  // outside int64, are errors where they are written.
  struct Case {
    const char *source;
    Spec spec;
    const char *message;
  };
  const Case cases[] = {
      {"kernel k<B: i64>() grid(1) { let t = zeros<f32>([B, B]); }",
       {{"B", "72057594037927936"}},
       "tile shape of 'zeros' has more than 2^40 elements"},
      {"kernel k<B: i64>() grid(1) { let t = zeros<f32>([B * B]); }",
       {{"B", "4294967296"}},
       "integer overflow in compile-time arithmetic"},
      {"kernel k<B: i64>() grid(1) { let t = zeros<f32>([cdiv(B, 2)]); }",
       {{"B", "-9223372036854775808"}},
       "tile dimension must be positive"},
      {"kernel k<B: i64>() grid(1) { let t = zeros<f32>([0 - B]); }",
       {{"B", "-9223372036854775808"}},
       "integer overflow in compile-time arithmetic"},
  };
  for (const Case &c : cases) {
    DiagnosticEngine diags;
    auto file = dsl::parse(diags, diags.addBuffer("k.tile", c.source));
    ASSERT_TRUE(file) << diags.renderAll();
    auto kernel = dsl::lowerKernel(*file, "k", c.spec, diags);
    EXPECT_FALSE(kernel) << c.source;
    EXPECT_NE(diags.renderAll().find(c.message), std::string::npos)
        << "want: " << c.message << "\ngot: " << diags.renderAll();
  }
}
