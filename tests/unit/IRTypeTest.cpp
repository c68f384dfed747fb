//===- IRTypeTest.cpp - Tile IR types and op tables ------------------------===//
#include "dsl/ir/IR.h"

#include <gtest/gtest.h>

using namespace tilejit::ir;

TEST(IRType, PrintsScalarTileAndTensor) {
  EXPECT_EQ(Type::scalar(ScalarKind::BF16).str(), "bf16");
  EXPECT_EQ(Type::tile(ScalarKind::F32, {16, 128}).str(), "tile<f32, 16, 128>");
  EXPECT_EQ(Type::tensor(ScalarKind::I8, 4).str(), "tensor<i8, 4>");
  EXPECT_EQ(Type::tile(ScalarKind::F16, {4, 8, 2}).numElements(), 64);
}

TEST(IRType, ScalarKindNamesRoundTrip) {
  for (unsigned i = 0; i <= static_cast<unsigned>(ScalarKind::F32); ++i) {
    auto k = static_cast<ScalarKind>(i);
    ScalarKind back;
    ASSERT_TRUE(parseScalarKind(scalarName(k), back)) << scalarName(k);
    EXPECT_EQ(back, k);
  }
  ScalarKind dummy;
  EXPECT_FALSE(parseScalarKind("f64", dummy));
}

TEST(IRType, MnemonicsRoundTrip) {
  for (unsigned i = 0; i <= static_cast<unsigned>(OpKind::Yield); ++i) {
    auto k = static_cast<OpKind>(i);
    OpKind back;
    ASSERT_TRUE(parseMnemonic(mnemonic(k), back)) << mnemonic(k);
    EXPECT_EQ(back, k);
  }
  EXPECT_TRUE(isElementwise(OpKind::Fma));
  EXPECT_FALSE(isElementwise(OpKind::Load));
}
