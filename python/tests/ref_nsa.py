"""NumPy references of NsaCompressWithCache (spec nsa_compress_with_cache.md, sections 3
and 5) for the tests of ``npu_nsa_compress_infer.cache``, written from the spec alone (not
from the C++ reference in ops/).

Two references over the same window selection:

- ``compress(..., exact=False)``: the float64 sum ``sum_t x[t] * w[t]`` (what torch_npu's
  golden computes), checked with a tolerance derived from the output dtype;
- ``compress(..., exact=True)``: spec 3's normative order in float32 (one rounding per
  product, the 8-wide tile folds, then the fold over tiles, round-to-nearest-even at every
  step, which NumPy's float32 arithmetic is), rounded to the output dtype: the operator must
  match it bit for bit.
"""
import numpy as np


def to_bf16_bits(x32):
    """float32 -> bfloat16 bit patterns (uint16), round to nearest even, NaN kept quiet."""
    u = np.ascontiguousarray(x32, np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(x32)
    return np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), rounded)


def bf16_bits_to_f32(bits):
    """bfloat16 bit patterns (uint16) -> float32, exact."""
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def fold(v):
    """Spec 3's in-place fold of v[0..n-1] along axis 0 (float32 adds in the given order)."""
    v = list(v)
    n = len(v)
    a = 1
    while a < n:
        a *= 2
    a //= 2
    for j in range(n - a):
        v[j] = v[j] + v[j + a]
    while a > 1:
        a //= 2
        for j in range(a):
            v[j] = v[j] + v[j + a]
    return v[0]


def qualifies(s, cbs, stride):
    """Spec 3: entry with length s completes a window in this step."""
    return s >= cbs and (s - cbs) % stride == 0


def gather_window(x, block_table, b, s, cbs, P):
    """The window tokens s-cbs .. s-1 of entry b, (cbs, N, D), or None when a page id it
    needs is outside [0, blockNum) (spec 5: nothing is written for that entry)."""
    rows = []
    for k in range(s - cbs, s):
        page = int(block_table[b, k // P])
        if not 0 <= page < x.shape[0]:
            return None
        rows.append(x[page, k % P])
    return np.stack(rows)


def compress(x, w, slots, seq_lens, block_table, cbs, stride, P, cache, *, exact):
    """Spec 3 and 5 applied to a copy of ``cache``.

    ``x`` (blockNum, P, N, D), ``w`` (cbs, N) and ``cache`` (R, N, D) are float32 arrays
    holding the exact values of the fp16/bf16 tensors; returns the new cache as float64 when
    ``exact`` is False, or as the float32 accumulators (before the final rounding) when it is
    True, with untouched rows copied from ``cache``.
    """
    out = np.array(cache, np.float64 if not exact else np.float32)
    R = cache.shape[0]
    for b, s in enumerate(seq_lens):
        if not qualifies(s, cbs, stride):
            continue
        r = int(slots[b])
        if not 0 <= r < R:
            continue
        win = gather_window(x, block_table, b, s, cbs, P)
        if win is None:
            continue
        if exact:
            p = win.astype(np.float32) * w.astype(np.float32)[:, :, None]  # (cbs, N, D)
            tiles = [fold(p[8 * i:8 * i + 8]) for i in range(cbs // 8)]
            out[r] = fold(tiles)
        else:
            out[r] = np.einsum("tnd,tn->nd", win.astype(np.float64), w.astype(np.float64))
    return out


def abs_sum(x, w, seq_lens, block_table, cbs, stride, P, R, slots):
    """sum_t |x[t] * w[t]| per written (row, h, d), for the float64 comparison's bound."""
    out = np.zeros((R,) + x.shape[2:])
    for b, s in enumerate(seq_lens):
        r = int(slots[b])
        if not qualifies(s, cbs, stride) or not 0 <= r < R:
            continue
        win = gather_window(x, block_table, b, s, cbs, P)
        if win is not None:
            out[r] = np.einsum("tnd,tn->nd", np.abs(win.astype(np.float64)),
                               np.abs(w.astype(np.float64)))
    return out
