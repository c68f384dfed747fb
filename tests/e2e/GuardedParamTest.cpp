//===- GuardedParamTest.cpp - Parameters present under a condition -------===//
//
// `x: gm<f32>[N] if BIAS` declares a parameter that exists only in the
// specialisations where its compile-time condition holds (docs/dsl.md,
// section 2): absent, it takes no argument and no slot in the signature,
// and code that uses it must sit under an `if` on a compile-time condition
// (that branch is not lowered). Checked through the public API, as a user's
// kernel would be.
//
//===----------------------------------------------------------------------===//
#include "tilejit/tilejit.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

const char *kSource = R"(
kernel shift<BIAS: bool = false, MODE: enum(ADD, SUB) = ADD>(
    x: gm<f32>[N], b: gm<f32>[N] if BIAS, s: f32 if MODE == SUB, y: gm<f32>[N])
    grid(cdiv(N, 16)) {
  let i = program_id(0) * 16;
  var t = load(x, [i], [16]);
  if BIAS {
    t = t + load(b, [i], [16]);
  }
  if MODE == SUB {
    t = t - s;
  }
  store(y, [i], t);
}
kernel misuse<BIAS: bool = false>(x: gm<f32>[N], b: gm<f32>[N] if BIAS) grid(1) {
  store(x, [0], load(b, [0], [16]));
}
kernel runtime_guard(x: gm<f32>[N], n: i64, b: gm<f32>[N] if n > 0) grid(1) { }
)";

tilejit::Source source() { return tilejit::Source::fromText("guarded.tile", kSource); }

std::vector<std::string> names(const tilejit::Kernel &k) {
  std::vector<std::string> r;
  for (const tilejit::ParamSig &p : k.signature())
    r.push_back(p.name);
  return r;
}

TEST(GuardedParams, AbsentParametersLeaveTheSignature) {
  auto plain = tilejit::compile(source(), "shift", {});
  ASSERT_TRUE(plain) << plain.error();
  EXPECT_EQ(names(*plain), (std::vector<std::string>{"x", "y"}));
  auto both = tilejit::compile(source(), "shift", {{"BIAS", "true"}, {"MODE", "SUB"}});
  ASSERT_TRUE(both) << both.error();
  EXPECT_EQ(names(*both), (std::vector<std::string>{"x", "b", "s", "y"}));
}

TEST(GuardedParams, EachSpecialisationComputesWithWhatItHas) {
  const int64_t n = 40;
  std::vector<float> x(n), b(n), y(n, -1.0f);
  for (int64_t i = 0; i < n; ++i) {
    x[static_cast<size_t>(i)] = static_cast<float>(i);
    b[static_cast<size_t>(i)] = 0.5f * static_cast<float>(i);
  }
  auto plain = tilejit::compile(source(), "shift", {});
  ASSERT_TRUE(plain) << plain.error();
  tilejit::Args a;
  a.tensor(x.data(), {n}).named("x").tensor(y.data(), {n}).named("y");
  ASSERT_TRUE(plain->launch(a)) << plain->launch(a).message();
  EXPECT_EQ(y, x);

  auto both = tilejit::compile(source(), "shift", {{"BIAS", "true"}, {"MODE", "SUB"}});
  ASSERT_TRUE(both) << both.error();
  tilejit::Args c;
  c.tensor(x.data(), {n}).named("x").tensor(b.data(), {n}).named("b").f32(3.0f).named("s");
  c.tensor(y.data(), {n}).named("y");
  tilejit::Status s = both->launch(c);
  ASSERT_TRUE(s) << s.message();
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(y[static_cast<size_t>(i)], x[static_cast<size_t>(i)] + b[static_cast<size_t>(i)] - 3.0f);
}

TEST(GuardedParams, AnArgumentForAnAbsentParameterIsRefused) {
  const int64_t n = 16;
  std::vector<float> x(n, 1.0f), b(n, 2.0f), y(n, 7.0f);
  auto plain = tilejit::compile(source(), "shift", {});
  ASSERT_TRUE(plain) << plain.error();
  tilejit::Args a;
  a.tensor(x.data(), {n}).named("x").tensor(b.data(), {n}).named("b");
  a.tensor(y.data(), {n}).named("y");
  tilejit::Status s = plain->launch(a);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("takes 2 arguments (x, y); given 3"), std::string::npos)
      << s.message();
  EXPECT_EQ(y, std::vector<float>(n, 7.0f)); // nothing ran
}

TEST(GuardedParams, UsingAnAbsentParameterIsAnError) {
  auto k = tilejit::compile(source(), "misuse", {});
  ASSERT_FALSE(k);
  EXPECT_NE(k.error().find("parameter 'b' is absent from this specialisation"), std::string::npos)
      << k.error();
  EXPECT_TRUE(tilejit::compile(source(), "misuse", {{"BIAS", "true"}}));
}

TEST(GuardedParams, TheConditionMustBeKnownAtCompileTime) {
  auto k = tilejit::compile(source(), "runtime_guard", {});
  ASSERT_FALSE(k);
  EXPECT_NE(k.error().find("condition of parameter 'b' must be a compile-time constant"),
            std::string::npos)
      << k.error();
}

} // namespace

// The public specialisation: typed values or text, one bound value, one
// kernel; `specialize` returns the bound, typed value and names the
// parameter and the rule when a value is wrong.
TEST(GuardedParams, TypedAndTextSpecialisationsAreOneKernel) {
  auto typed = tilejit::compile(source(), "shift",
                                {{"BIAS", true}, {"MODE", tilejit::SpecValue::enumerator("SUB")}});
  ASSERT_TRUE(typed) << typed.error();
  auto text = tilejit::compile(source(), "shift", {{"MODE", "SUB"}, {"BIAS", "1"}});
  ASSERT_TRUE(text) << text.error();
  EXPECT_EQ(typed->key(), text->key());
  EXPECT_EQ(typed->key().rfind("shift[BIAS=true,MODE=SUB]@", 0), 0u) << typed->key();

  auto bound = tilejit::specialize(source(), "shift", {{"BIAS", "0x1"}});
  ASSERT_TRUE(bound) << bound.error();
  ASSERT_EQ(bound->size(), 2u);
  EXPECT_EQ((*bound)[0].first, "BIAS");
  EXPECT_EQ((*bound)[0].second.kind(), tilejit::SpecValue::Kind::Bool);
  EXPECT_TRUE((*bound)[0].second.boolean());
  EXPECT_EQ((*bound)[1].first, "MODE");
  EXPECT_EQ((*bound)[1].second, tilejit::SpecValue::enumerator("ADD")) << "the default";

  auto wrong = tilejit::specialize(source(), "shift", {{"BIAS", 2}});
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.errorKind(), tilejit::ErrorKind::Compile);
  EXPECT_NE(wrong.error().find("'2' is an integer, but 'BIAS' takes a boolean"), std::string::npos)
      << wrong.error();
}
