//===- FlashAttentionScoreGradData.h - Problems for tests, benches, demo -*- C++ -*-===//
///
/// \file
/// Builds a consistent FlashAttentionUnpaddingScoreGradV5 problem: random
/// inputs (q, k, v, dy, rope parts in U(-1, 1)), then a float64 forward
/// (section 3 of the spec, with the same mask, pse, dropout and sink) whose
/// row statistics M and L are stored as fp32 (all 8 lanes, in the chosen
/// softmaxInLayout) and whose output O is rounded to the input dtype, as
/// section 8 prescribes for test data. The object owns every buffer and the
/// TensorViews; `args()` points into them (valid while the object lives).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_FLASH_ATTENTION_SCORE_GRAD_FLASHATTENTIONSCOREGRADDATA_H
#define TILEJIT_OPS_FLASH_ATTENTION_SCORE_GRAD_FLASHATTENTIONSCOREGRADDATA_H

#include "ops/flash_attention_score_grad/FlashAttentionScoreGradArgs.h"
#include "ops/flash_attention_score_grad/FlashAttentionScoreGrad.h"
#include "ops/host/DataType.h"
#include "ops/host/TensorView.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tilejit::ops::fag {

/// What to build. Lengths are per batch (not cumulative).
struct Config {
  host::DataType dtype = host::DataType::Float;
  std::vector<int64_t> seqQ{16}, seqKv{16};
  int64_t n1 = 1, n2 = 1, d = 64;
  int64_t dv = 0; ///< 0: equal to d
  int64_t dr = 0; ///< rope dim (bf16 only; requires a mask)
  int64_t sparseMode = 0;
  int64_t preTokens = 65536, nextTokens = 65536;
  /// The attenMask: None, or the form to build (Compressed for modes 2-8
  /// builds the canonical 2048x2048 / 3072x2048 content).
  MaskForm mask = MaskForm::None;
  bool maskBool = false;        ///< bool (else uint8) explicit mask
  bool mask4d = false;          ///< Shared / Compressed as [1, 1, rows, cols] (else 2-D)
  double maskDensity = 0.0;     ///< fraction of masked positions in an explicit mask (random)
  int64_t pseType = 1;
  PseForm pse = PseForm::None;
  int64_t pseBatches = 1;       ///< Bp for alibi, 1 ([N1]) or B ([B, N1]) for slopes
  bool qStartGiven = false, kvStartGiven = false;
  int64_t qStart = 0, kvStart = 0;
  double keepProb = 1.0;
  int64_t dropMaskExtraBytes = 0;
  bool dropMaskAlways = false;  ///< give a dropMask even when keepProb == 1
  bool sink = false;
  std::vector<float> sinkValues; ///< n1 values (default: random in U(-1, 1))
  std::vector<int64_t> prefix;   ///< mode 6
  bool statsTnd = true;          ///< softmaxInLayout "same_as_input" (else "")
  int64_t extraTokensQ = 0, extraTokensKv = 0; ///< tokens past the last offset
  int64_t trailingEmptyBatches = 0;            ///< (0, 0) batches appended
  bool strided = false;          ///< every tensor a non-contiguous view (padded strides)
  double scale = 0;              ///< 0: D^-0.5
  uint64_t seed = 1;
};

/// Section 8's tolerances for one input dtype: element-wise |X - R| <=
/// rtol |R| + atol max|R|, relative RMS <= rms, and dθ within sinkC times
/// its scale (sinkGradScale).
struct Tolerance {
  double rtol, atol, rms, sinkC;
};
Tolerance toleranceFor(host::DataType t);

/// The value every output element (and every gap of a strided output's
/// storage) holds before a run: 12345 rounded to `dtype`.
double outputSentinel(host::DataType dtype);

/// Section 3 in float64 over a Data's current inputs (as stored, widened
/// exactly). Rows outside all batches, and rows with nothing kept and no
/// sink, hold m = l = 0 and o = 0 here.
struct Forward {
  std::vector<double> m, l; ///< [T1][N1], row-major
  std::vector<double> o;    ///< [T1][N1][Dv], row-major
};

/// Per query head h, sum over b and i of |Psink_i * sum_j P_ij * dP_ij|:
/// the scale of section 8's dθ tolerance, read from `args` as the
/// reference reads them (zeros without a sink).
std::vector<double>
sinkGradScale(const aclnn::FlashAttentionUnpaddingScoreGradV5Args &args);

/// A built problem: inputs, forward statistics, outputs (filled with a
/// sentinel so that tests see what was written), and the aclnn arguments.
class Data {
public:
  explicit Data(const Config &config);
  ~Data();
  Data(const Data &) = delete;
  Data &operator=(const Data &) = delete;

  const Config &config() const;
  /// The operator's arguments over this object's buffers.
  const aclnn::FlashAttentionUnpaddingScoreGradV5Args &args() const;
  /// Another set of output views (same shapes and dtypes, own buffers, the
  /// same sentinel), e.g. for the reference: args() with dq, dk, dv,
  /// dqRope, dkRope and dsink replaced.
  aclnn::FlashAttentionUnpaddingScoreGradV5Args argsWithFreshOutputs();
  /// An output's elements as double, by name ("dq", "dk", "dv", "dqRope",
  /// "dkRope", "dsink"), read through the view (of args() or of the fresh
  /// outputs made by argsWithFreshOutputs(), `set` 0 or 1).
  std::vector<double> output(const std::string &name, int set = 0) const;
  /// Refills the outputs of set `set` with the sentinel.
  void resetOutputs(int set = 0);
  /// True if no element of set `set`'s output storages outside the views
  /// (the gaps of strided outputs) changed from the sentinel.
  bool outputGapsIntact(int set = 0) const;

  /// Element `flat` (row-major over the view's shape) of an input by name:
  /// "query", "keyIn", "value", "dy", "queryRope", "keyInRope",
  /// "attentionIn", "softmaxMax", "softmaxSum", "sink", "pse", "dropMask",
  /// "attenMask"; read through the view.
  double input(const std::string &name, int64_t flat) const;
  /// Stores `value` (rounded to the tensor's dtype) into that element.
  void setInput(const std::string &name, int64_t flat, double value);
  /// The element count of an input by name (0 when it is absent).
  int64_t inputNumel(const std::string &name) const;
  /// Section 3 in float64 from the current inputs (the builder's own
  /// reading of the config, independent of the reference).
  Forward forward() const;
  /// Recomputes attentionIn, softmaxMax and softmaxSum from the current
  /// inputs, as the constructor does.
  void refreshForward();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace tilejit::ops::fag

#endif
