//===- KvCacheLayout.h - The rules of a paged KV cache ----------*- C++ -*-===//
///
/// \file
/// What the operators that move KV-cache rows (ScatterPaKvCache,
/// GatherPaKvCache) share from the specs: the KV and index dtype lists, the
/// FRACTAL_NZ strip width, and when a copy's output should bypass the
/// caches.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_COMMON_KVCACHELAYOUT_H
#define TILEJIT_OPS_COMMON_KVCACHELAYOUT_H

#include "ops/host/DataType.h"

#include <cstdint>

namespace tilejit::ops {

/// The twelve KV element types of the specs ("L12"): FLOAT16, FLOAT,
/// BFLOAT16, INT8, UINT8, INT16, UINT16, INT32, UINT32, HIFLOAT8,
/// FLOAT8_E5M2, FLOAT8_E4M3FN.
bool isKvDataType(host::DataType type);
/// "FLOAT16, FLOAT, ..." (for messages).
const char *kvDataTypeList();
/// INT32 or INT64.
bool isIndexDataType(host::DataType type);

/// Elements per 32-byte FRACTAL_NZ strip: 32 / sizeof(type).
int64_t nzStripElems(host::DataType type);

/// Whether a gather writes its outputs around the caches (non-temporal
/// stores): when they total 16 MiB or more. Outputs that size do not stay in
/// the cache for the operator that reads them next (a core complex's L3
/// slice is 32 MiB on the development machine, shared; the system reports
/// the whole socket's), and a store that does not first read its line, as
/// an ordinary store must, saves a third of the traffic.
bool streamsOutput(int64_t outputBytes);

} // namespace tilejit::ops

#endif
