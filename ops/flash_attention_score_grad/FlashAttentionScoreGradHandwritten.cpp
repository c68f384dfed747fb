//===- FlashAttentionScoreGradHandwritten.cpp - The twin's dispatcher -----===//
//
// Validates the call (section 7), keeps what the twin covers (contiguous
// tensors; fp32, bf16, fp16; GQA; no mask or a compressed mask; a sink) and
// runs the AVX-512 build. Explicit masks, pse, dropout and rope, strided
// views and hosts without AVX-512 are left to the generated operator.
//
//===----------------------------------------------------------------------===//
#include "ops/flash_attention_score_grad/FagTwin.h"
#include "ops/flash_attention_score_grad/FlashAttentionScoreGradTwin.h"
#include "ops/samples/SamplesTwin.h"

#include <string>

namespace tilejit::ops {

using host::DataType;
using host::TensorView;

bool flashAttentionScoreGradHandwritten(
    const aclnn::FlashAttentionUnpaddingScoreGradV5Args &args) {
  static const bool cpuOk = __builtin_cpu_supports("avx512f") &&
                            __builtin_cpu_supports("avx512bw") &&
                            __builtin_cpu_supports("avx512vl") &&
                            __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  // vdpbf16ps outruns the f32 FMAs on Zen 4 (two a cycle); on the Intel
  // cores with AVX512-BF16 it runs at half their rate (bf16DotPeakGflops
  // measures it), so bf16 runs on f32 panels there: the code generator's
  // rule (jit/KernelJIT.cpp, bf16DotFast).
  static const bool bf16Dot =
      cpuOk && __builtin_cpu_supports("avx512bf16") && __builtin_cpu_is("amd");
  if (!cpuOk || std::string(handwrittenIsa()) != "avx512")
    return false;
  fag::Problem p;
  if (!fag::validate(args, p))
    return false;
  if (p.empty)
    return true;
  if (p.dtype != DataType::Float && p.dtype != DataType::BFloat16 &&
      p.dtype != DataType::Float16)
    return false;
  if (p.dr > 0 || p.pse != fag::PseForm::None || p.dropout ||
      (p.mask != fag::MaskForm::None && p.mask != fag::MaskForm::Compressed))
    return false;
  for (const TensorView *t : {&p.q, &p.k, &p.v, &p.dy, &p.o, &p.m, &p.l, &p.dq, &p.dk, &p.dvOut})
    if (!t->isContiguous())
      return false;
  for (const auto *t : {&p.sinkT, &p.dsink})
    if (*t && !(*t)->isContiguous())
      return false;
  fag::scoreGradAvx512(p, bf16Dot && p.dtype == DataType::BFloat16);
  return true;
}

} // namespace tilejit::ops
