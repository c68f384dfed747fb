//===- RuntimeAbiTest.cpp - The kernel argument block ----------------------===//
#include "runtime/Runtime.h"

#include <gtest/gtest.h>

using namespace tilejit::rt;

TEST(RuntimeAbi, ArgPackComputesRowMajorStrides) {
  float buf[24];
  ArgPack args;
  args.tensor(buf, {2, 3, 4}).f32(0.5f).i64(7);
  ASSERT_EQ(args.size(), 3u);
  auto *d = static_cast<const TensorDesc *>(args.data()[0]);
  EXPECT_EQ(d->data, buf);
  EXPECT_EQ(d->rank, 3);
  EXPECT_EQ(d->strides[0], 12);
  EXPECT_EQ(d->strides[1], 4);
  EXPECT_EQ(d->strides[2], 1);
  EXPECT_EQ(*static_cast<const float *>(args.data()[1]), 0.5f);
  EXPECT_EQ(*static_cast<const int64_t *>(args.data()[2]), 7);
}
