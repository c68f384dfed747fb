#!/usr/bin/env python3
"""Writes the seed corpus of tile-fuzz-aclnn (fuzz/corpus/aclnn/).

Input layout (FuzzAclnn.cpp): byte 0 the operator (0 ScatterPaKvCache,
1 GatherPaKvCache, 2 IncreFlashAttentionV4, 3 NsaCompressWithCache,
4 FlashAttentionUnpaddingScoreGradV5); bytes 1..16 the header (byte 16:
how phase 2 is called); then edits of 4 bytes [kind, target, x, y]. Header
bytes left out are 0, the default choice. Each seed is a valid call of one
scenario, or a valid call with one lie.

  fuzz/make-aclnn-seeds.py [OUT_DIR]   (default: fuzz/corpus/aclnn)
"""
import os
import sys

SCATTER, GATHER, IFA, NSA, FAG = range(5)
# Edit kinds (applyEdit): 0 index element, 2 tensor lie, 4 int attribute,
# 5 float attribute (x odd) or string, 6 int array, 7 fill.
INDEX, LIE, INT, REAL_OR_STRING, ARRAY, FILL = 0, 2, 4, 5, 6, 7
# Lie kinds (lie(), x % 15).
VIEW_PAST, OFFSET_END, OFFSET_ANY, STRIDE, NULL_DATA, DIM_GROWN, DIM_SET, \
    RANK, DTYPE, FORMAT, PRESENCE, RELAYOUT, FEWER_DIMS, STORAGE_DIMS, \
    WINDOW = range(15)
# Phase 2 (header byte 16).
PLAIN, STREAM, REPEATABLE, NULL_WS, SHORT_WS, NULL_EXEC, TWICE, OTHER_OP, \
    DESTROY = range(9)


def seed(op, header=(), edits=()):
    h = list(header) + [0] * (16 - len(header))
    out = bytes([op] + h)
    for e in edits:
        out += bytes(e)
    return out


SEEDS = {
    # ScatterPaKvCache: h0 scenario (0 S2, 1 key-only, 2 PA_NZ, 3 Nct,
    # 4 Alibi/Rope/Omni, 5 4-D key), h1 dtype, h2 index dtype, h3 T, h4 N,
    # h5 Dk, h6 Dv, h7 block size, h8 extra blocks, h9 seed.
    "scatter-norm": seed(SCATTER, [0, 0, 0, 3, 1, 0, 0, 0, 1, 7]),
    "scatter-norm-bf16-int64": seed(SCATTER, [0, 1, 1, 5, 2, 2, 1, 2, 0, 3]),
    "scatter-key-only": seed(SCATTER, [1, 2, 0, 4, 0, 3]),
    "scatter-nz-int8": seed(SCATTER, [2, 3, 0, 5, 1, 1, 0, 3]),
    "scatter-nz-f16": seed(SCATTER, [2, 0, 1, 2, 2, 0, 1, 2]),
    "scatter-nct": seed(SCATTER, [3, 0, 0, 4, 1, 0, 0, 1, 0, 5, 0, 0, 2, 1, 6]),
    "scatter-alibi": seed(SCATTER, [4, 0, 0, 0, 1, 0, 0, 0, 0, 9, 1, 3, 0]),
    "scatter-rope": seed(SCATTER, [4, 1, 0, 0, 2, 0, 0, 0, 0, 9, 2, 2, 1]),
    "scatter-omni": seed(SCATTER, [4, 0, 1, 0, 0, 0, 0, 2, 0, 9, 1, 3, 2]),
    "scatter-4d": seed(SCATTER, [5, 0, 0, 0, 1, 0, 0, 0, 1, 4, 1, 3, 0]),
    "scatter-4d-mean": seed(SCATTER, [5, 2, 0, 0, 1, 0, 0, 0, 1, 4, 1, 3, 1]),
    "scatter-slot-past-end": seed(SCATTER, [0, 0, 0, 3], [(INDEX, 0, 1, 3)]),
    "scatter-slot-negative": seed(SCATTER, [0, 0, 0, 3], [(INDEX, 0, 0, 4)]),
    "scatter-cache-view-past": seed(SCATTER, [0], [(LIE, 1, VIEW_PAST, 0)]),
    "scatter-key-stride-zero": seed(SCATTER, [0, 0, 0, 3], [(LIE, 0, STRIDE, 0)]),
    "scatter-stream": seed(SCATTER, [0, 0, 0, 2] + [0] * 11 + [STREAM]),
    # GatherPaKvCache: h0 mode (0 Norm, 1 PA_NZ, 2 null, 3 ""), h1 dtype,
    # h2 index dtype, h3 B, h4 N, h5 Dk, h6 Dv, h7 block size, h8 cumsum (1)
    # and offsets (2), h9 seed, h10 blocks per sequence, h11 extra blocks.
    "gather-norm": seed(GATHER, [0, 0, 0, 1, 1, 0, 0, 0, 0, 3, 1]),
    "gather-norm-cumsum-offsets": seed(GATHER, [0, 1, 1, 2, 0, 2, 1, 2, 3, 5, 2]),
    "gather-nz": seed(GATHER, [1, 0, 0, 1, 1, 1, 0, 3, 0, 4, 1]),
    "gather-nz-int8": seed(GATHER, [1, 3, 0, 0, 0, 0, 1, 0, 1, 2]),
    "gather-null-mode": seed(GATHER, [2, 2, 0, 2]),
    "gather-block-past-end": seed(GATHER, [0, 0, 0, 1], [(INDEX, 0, 0, 3)]),
    "gather-lengths-huge": seed(GATHER, [0, 0, 1, 1], [(INDEX, 1, 0, 8)]),
    "gather-out-negative-stride": seed(GATHER, [0, 0, 0, 1], [(LIE, 4, STRIDE, 6)]),
    "gather-repeatable": seed(GATHER, [0, 0, 0, 1] + [0] * 11 + [REPEATABLE]),
    # IncreFlashAttentionV4: h0 layout (BSH, BNSD, BSND), h1 B, h2 Nkv,
    # h3 group, h4 D, h5 S, h6 dtype, h7 KV (contiguous, list, paged),
    # h8 block size / 4-D cache, h9 seed, h10 lengths, h11 pse/mask bits,
    # h12 int8 KV, h13 kvPaddingSize, mask dtype.
    "ifa-bsh": seed(IFA, [0, 1, 0, 1, 0, 7]),
    "ifa-bnsd-lengths": seed(IFA, [1, 2, 1, 0, 1, 9, 1, 0, 0, 4, 1]),
    "ifa-bsnd-list": seed(IFA, [2, 1, 0, 1, 0, 5, 0, 1, 0, 2]),
    "ifa-paged-3d": seed(IFA, [0, 1, 0, 0, 0, 15, 0, 2, 0, 6]),
    "ifa-paged-4d": seed(IFA, [1, 1, 1, 1, 0, 15, 1, 2, 2, 6]),
    "ifa-pse-mask": seed(IFA, [1, 1, 0, 0, 0, 6, 0, 0, 0, 1, 1, 4 | 16]),
    "ifa-int8-kv": seed(IFA, [0, 0, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 1]),
    "ifa-padding": seed(IFA, [1, 1, 0, 0, 0, 8, 0, 0, 0, 1, 1, 0, 0, 1]),
    "ifa-block-past-end": seed(IFA, [0, 1, 0, 0, 0, 15, 0, 2], [(INDEX, 0, 0, 3)]),
    "ifa-query-offset-end": seed(IFA, [0], [(LIE, 0, OFFSET_END, 0)]),
    "ifa-length-huge": seed(IFA, [1, 1, 0, 0, 0, 15, 0, 2], [(ARRAY, 0, 0, 8)]),
    # NsaCompressWithCache: h0 dtype, h1 N, h2 D, h3 window, h4 page size,
    # h5 B, h6 blocks per entry, h7 slot dtype, h8 extra pages, h9 seed,
    # h10 extra slots, h11 layout.
    "nsa-basic": seed(NSA, [0, 1, 0, 0, 0, 1, 0, 0, 0, 2]),
    "nsa-bf16-128": seed(NSA, [1, 0, 1, 2, 1, 2, 1, 1, 1, 3, 1, 1]),
    "nsa-window16": seed(NSA, [0, 2, 0, 1, 0, 2, 1, 0, 0, 4, 2, 2]),
    "nsa-slot-past-end": seed(NSA, [0, 1, 0, 0, 0, 1], [(INDEX, 0, 0, 3)]),
    "nsa-page-negative": seed(NSA, [0, 1, 0, 0, 0, 1], [(INDEX, 1, 0, 4)]),
    "nsa-weight-null": seed(NSA, [0], [(LIE, 1, NULL_DATA, 0)]),
    # FlashAttentionUnpaddingScoreGradV5: h0 dtype, h1 B, h2 N2, h3 group,
    # h4 D, h5 Dv = D/2, h6 mask (none, explicit mode 0, explicit mode 1,
    # compressed mode 2), h7 dropout (1) and sink (2), h8 fills, h9 seed,
    # h10 softmaxInLayout.
    "fag-basic": seed(FAG, [0, 0, 0, 0, 0, 0, 0, 0, 0, 1]),
    "fag-gqa-bf16": seed(FAG, [1, 1, 1, 1, 0, 0, 1, 0, 1, 2]),
    "fag-f32-dv": seed(FAG, [2, 0, 0, 0, 2, 1, 2, 0, 0, 3, 1]),
    "fag-causal-compressed": seed(FAG, [0, 1, 0, 0, 1, 0, 3, 0, 1, 4]),
    "fag-dropout-sink": seed(FAG, [0, 0, 1, 0, 0, 0, 0, 3, 0x55, 5]),
    "fag-lengths-negative": seed(FAG, [0, 1], [(ARRAY, 1, 0, 4)]),
    "fag-dq-rank": seed(FAG, [0], [(LIE, 15, RANK, 1)]),
}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus", "aclnn")
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(out, name + ".bin"), "wb") as f:
            f.write(data)
    print(f"{len(SEEDS)} seeds in {out}")


if __name__ == "__main__":
    main()
