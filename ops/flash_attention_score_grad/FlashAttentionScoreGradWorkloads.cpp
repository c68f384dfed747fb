//===- FlashAttentionScoreGradWorkloads.cpp - The operator in `tilejit demo` -===//
#include "ops/Workloads.h"
#include "ops/flash_attention_score_grad/FlashAttentionScoreGradTwin.h"
#include "ops/flash_attention_score_grad/FlashAttentionScoreGradData.h"
#include "ops/samples/SamplesTwin.h"

#include <algorithm>
#include <cmath>

namespace tilejit::ops {

namespace {

using host::DataType;

/// Section 8's element-wise tolerance for `dtype`: |X - R| <= rtol |R| +
/// atol max|R| on every output; maxAbsErr is the worst |X - R| / max|R|.
bool withinTolerance(fag::Data &data, DataType dtype, double &worst) {
  const fag::Tolerance tol = fag::toleranceFor(dtype);
  bool ok = true;
  worst = 0;
  for (const char *name : {"dq", "dk", "dv"}) {
    std::vector<double> x = data.output(name, 0), r = data.output(name, 1);
    double m = 0;
    for (double v : r)
      m = std::max(m, std::abs(v));
    for (size_t i = 0; i < x.size(); ++i) {
      const double e = std::abs(x[i] - r[i]);
      ok &= e <= tol.rtol * std::abs(r[i]) + tol.atol * m;
      worst = std::max(worst, m > 0 ? e / m : e);
    }
  }
  return ok;
}

WorkloadResult run(const std::string &name, const fag::Config &config) {
  WorkloadResult r;
  r.name = name;
  fag::Data data(config);
  const auto &args = data.args();
  if (!runFirstCall(args, prepareFlashAttentionScoreGrad, r))
    return r;
  flashAttentionScoreGradReference(data.argsWithFreshOutputs());
  r.passed = withinTolerance(data, config.dtype, r.maxAbsErr);
  pairedMedianMicroseconds([&] { (void)flashAttentionScoreGrad(args); },
                           [&] { flashAttentionScoreGradHandwritten(args); }, r.generatedUs,
                           r.handwrittenUs, 5);
  return r;
}

/// Two sequences of 512 tokens, 8 query heads over 2 KV heads, D = 128.
fag::Config trainingStep(DataType dtype, int64_t mode) {
  fag::Config c;
  c.dtype = dtype;
  c.seqQ = c.seqKv = {512, 512};
  c.n1 = 8;
  c.n2 = 2;
  c.d = 128;
  c.sparseMode = mode;
  c.mask = mode == 0 ? fag::MaskForm::None : fag::MaskForm::Compressed;
  c.seed = 71;
  return c;
}

} // namespace

std::vector<Workload> flashAttentionScoreGradWorkloads() {
  return {
      {"flash_attention_grad_bf16_causal",
       "backward of 2 x 512 tokens, 8 heads over 2 KV heads, D=128, causal (mode 3), bf16",
       [] {
         return run("flash_attention_grad_bf16_causal", trainingStep(DataType::BFloat16, 3));
       }},
      {"flash_attention_grad_f32", "the same backward without a mask, fp32",
       [] { return run("flash_attention_grad_f32", trainingStep(DataType::Float, 0)); }},
  };
}

std::vector<BuiltinKernel> flashAttentionScoreGradKernels() {
  const std::string src = "ops/flash_attention_score_grad/flash_attention_score_grad.tile";
  return {
      {"fag_pre", src, "fag_pre", {{"T", "bf16"}, {"DV", "128"}, {"D", "128"}}},
      {"fag_main", src, "fag_main", {{"T", "bf16"}, {"D", "128"}, {"DV", "128"}, {"G", "4"}}},
      {"fag_dq", src, "fag_dq", {{"T", "bf16"}, {"D", "128"}}},
  };
}

} // namespace tilejit::ops
