//===- HandwrittenAvx2.cpp - The samples' hand-written twins for AVX2 -----===//
//
// Compiled with the ISA's flags (ops/CMakeLists.txt, by file-name suffix);
// called only after a run-time CPU check (Handwritten.cpp).
//
//===----------------------------------------------------------------------===//
#include "ops/samples/SamplesTwin.h"

namespace tilejit::ops::avx2 {
#define VL 8
#include "ops/samples/HandwrittenImpl.inc"
#undef VL
} // namespace tilejit::ops::avx2
