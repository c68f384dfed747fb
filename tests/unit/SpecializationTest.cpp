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
  std::optional<dsl::Specialization> values;
  std::string errors;
};

Bound bind(const dsl::Specialization &spec, const std::string &kernel = "k",
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

using Spec = dsl::Specialization;
using dsl::SpecValue;

} // namespace

TEST(Specialization, DefaultsAppliedTypedAndSorted) {
  Bound b = bind({{"T", "f32"}});
  ASSERT_TRUE(b.values) << b.errors;
  EXPECT_TRUE(b.values->bound());
  EXPECT_EQ(b.values->str(), "BN=64,CAUSAL=false,L=BSH,T=f32");
  const Spec typed = {{"T", ir::ScalarKind::F32}, {"BN", 64}, {"CAUSAL", false},
                      {"L", SpecValue::enumerator("BSH")}};
  EXPECT_EQ(*b.values, typed);
  EXPECT_EQ(b.values->hash(), typed.hash());
  ASSERT_NE(b.values->find("BN"), nullptr);
  EXPECT_EQ(b.values->find("BN")->kind(), SpecValue::Kind::Int);
  EXPECT_EQ(b.values->find("BN")->integer(), 64);
  EXPECT_EQ(b.values->find("T")->dtype(), ir::ScalarKind::F32);
  EXPECT_EQ(b.values->find("CAUSAL")->kind(), SpecValue::Kind::Bool);
  EXPECT_EQ(b.values->find("L")->kind(), SpecValue::Kind::Enum);
  EXPECT_EQ(b.values->find("L")->text(), "BSH");
}

TEST(Specialization, SpellingsOfOneValueBindAlike) {
  const Spec canonical = {{"T", ir::ScalarKind::F32}, {"BN", 64}, {"CAUSAL", true},
                          {"L", SpecValue::enumerator("BNSD")}};
  for (const Spec &spec : {
           Spec{{"L", "BNSD"}, {"CAUSAL", "1"}, {"BN", "0x40"}, {"T", "f32"}},
           Spec{{"T", "f32"}, {"BN", "064"}, {"CAUSAL", "true"}, {"L", "BNSD"}},
           Spec{{"T", "f32"}, {"BN", "+64"}, {"CAUSAL", "1"}, {"L", "BNSD"}},
           canonical,
           Spec{{"T", ir::ScalarKind::F32}, {"CAUSAL", true}, {"L", "BNSD"}},
       }) {
    Bound b = bind(spec);
    ASSERT_TRUE(b.values) << b.errors;
    EXPECT_EQ(*b.values, canonical) << b.values->str();
    EXPECT_EQ(b.values->hash(), canonical.hash());
    // Binding a bound value again gives it back.
    Bound again = bind(*b.values);
    ASSERT_TRUE(again.values) << again.errors;
    EXPECT_EQ(*again.values, canonical);
  }
}

TEST(Specialization, EntriesStaySortedAndHashed) {
  Spec s;
  const uint64_t empty = s.hash();
  s.emplace_back("T", "f32");
  s.push_back({"BN", 64});
  EXPECT_NE(s.hash(), empty);
  EXPECT_EQ(s.str(), "BN=64,T=f32");
  EXPECT_FALSE(s.bound());
  EXPECT_EQ(s, (Spec{{"BN", 64}, {"T", "f32"}}));
  EXPECT_NE(s, (Spec{{"BN", "64"}, {"T", "f32"}})) << "text is not yet an integer";
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
      {{{"T", "f32"}, {"BN", true}}, "'true' is a boolean, but 'BN' takes an integer"},
      {{{"T", 32}}, "'32' is an integer, but 'T' takes a dtype"},
      {{{"T", "f32"}, {"CAUSAL", 1}}, "'1' is an integer, but 'CAUSAL' takes a boolean"},
      {{{"T", "f32"}, {"L", ir::ScalarKind::F32}}, "'f32' is a dtype, but 'L' takes an enumerator"},
      {{{"T", ir::ScalarKind::I32}}, "dtype i32 is not allowed for 'T' (expected f16|bf16|f32)"},
      {{{"T", "f32"}, {"L", SpecValue::enumerator("TND")}}, "'TND' is not an enumerator of 'L'"},
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
