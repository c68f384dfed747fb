//===- IfaPlan.h - IncreFlashAttentionV4: validated geometry -----*- C++
//-*-===//
///
/// \file
/// What phase 1 learns from the arguments (internal to the operator).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_INCRE_FLASH_ATTENTION_IFAPLAN_H
#define TILEJIT_OPS_INCRE_FLASH_ATTENTION_IFAPLAN_H

#include "ops/host/Status.h"
#include "ops/incre_flash_attention/IncreFlashAttentionArgs.h"

#include <cstdint>
#include <vector>

namespace tilejit::ops::ifa {

enum class Layout { BSH, BNSD, BSND };
/// Contiguous: one KV tensor with dim0 == B; List: one tensor per batch;
/// Paged: block cache with a block table.
enum class KvMode { Contiguous, List, Paged };

struct Geometry {
  Layout layout = Layout::BSH;
  KvMode mode = KvMode::Contiguous;
  int64_t b = 0, n = 0, nkv = 0, g = 1, d = 0;
  host::DataType kvDtype = host::DataType::Float16;
  bool paged = false, cache4d = false, padding = false;
  bool pse = false, mask = false, quantKv = false, quantOut = false;
  int64_t blockSize = 0, numBlocks = 0;
  int64_t sMax = 0;           ///< max S_b (capacity for paged)
  std::vector<int64_t> sOf;   ///< S_b (not for paged)
  std::vector<int64_t> len;   ///< actual length per batch (before padding)
  std::vector<int64_t> start; ///< window start (filled at launch)
};

/// Section 8's rules in order; fills `g` on success.
host::Status validate(const aclnn::IncreFlashAttentionV4Args &a,
                         Geometry &g);

} // namespace tilejit::ops::ifa

#endif
