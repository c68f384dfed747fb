//===- ScaleKernel.h - The tutorial's kernel, for the cache tests ---------===//
//
// The smallest kernel with a type and a block parameter (docs/tutorial.md):
// the cache, code-memory and compile-pool tests specialise it many ways.
//
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_TESTS_E2E_SCALEKERNEL_H
#define TILEJIT_TESTS_E2E_SCALEKERNEL_H

namespace tilejit::test_support {

inline constexpr const char *kScale = R"(
kernel scale<T: f32|f16, BN: i64 = 64>(x: gm<T>[N], y: gm<T>[N], a: f32) grid(cdiv(N, BN)) {
  let i = program_id(0) * BN;
  store(y, [i], cast<T>(cast<f32>(load(x, [i], [BN])) * a));
}
)";

} // namespace tilejit::test_support

#endif
