"""A float64 NumPy reference of IncreFlashAttentionV4 (spec incre_flash_attention_v4.md,
sections 4 and 6) for the tests of ``npu_incre_flash_attention``, written from the spec
alone (not from the C++ reference in ops/).

The reference works on *logical* arrays, independent of any layout: the query as
``(B, N, D)``, the key and value caches as ``kv[b, k, p, d]`` of shape ``(B, Nkv, S, D)``,
the mask as one row per batch ``(B, Sm)``, the pse as ``(PB, N, Sp)``. The tests lay the
same data out in each layout (BSH, BNSD, BSND, paged) and compare against it, so a layout
mistake in the operator shows as a mismatch here.
"""
import numpy as np

MASKED_SCORE = -1e12  # spec 4.3: a masked score is replaced by this


def dequant(x, scale, offset):
    """Spec 4.2: ``(x + offset) * scale`` per (k, d) for INT8 KV; x unchanged otherwise.

    ``x`` is ``(B, Nkv, S, D)``; ``scale``/``offset`` are ``(Nkv, D)`` arrays (a per-tensor
    factor broadcast by the caller) or None.
    """
    x = np.asarray(x, np.float64)
    if scale is None:
        return x
    off = 0.0 if offset is None else np.asarray(offset, np.float64)[None, :, None, :]
    return (x + off) * np.asarray(scale, np.float64)[None, :, None, :]


def windows(B, S, actual_seq_lengths=None, kv_padding=None):
    """Spec 4.1: the (start, L) window of each batch, or None for the zero output.

    ``kv_padding`` is the value of kvPaddingSize[0] when left padding is active (the caller
    decides activity: contiguous KV, actual lengths given, no page attention), else None.
    """
    out = []
    for b in range(B):
        if actual_seq_lengths is None or len(actual_seq_lengths) == 0:
            L = S
        elif len(actual_seq_lengths) == 1:
            L = int(actual_seq_lengths[0])
        else:
            L = int(actual_seq_lengths[b])
        start = 0
        if kv_padding is not None:
            start = S - max(int(kv_padding), 0) - L
            if start < 0:
                out.append(None)
                continue
        out.append(None if L == 0 else (start, L))
    return out


def attention(q, k, v, *, scale, wins, G, mask=None, pse=None):
    """Spec 4.3 in float64: ``(B, N, D)`` float64 results (NaN rows where the window is empty)
    and ``A``, the per-(b, n) max |deqV| over the window (1 for an empty window, spec 7).

    ``q``: (B, N, D); ``k``, ``v``: dequantized (B, Nkv, S, D); ``scale``: the float32 value
    of scale_value; ``mask``: (B, Sm) bool (True = masked) or None; ``pse``: (PB, N, Sp) with
    PB in {1, B}, or None.
    """
    B, N, D = q.shape
    out = np.full((B, N, D), np.nan)
    amax = np.ones((B, N))
    for b in range(B):
        if wins[b] is None:
            continue
        start, L = wins[b]
        pos = np.arange(start, start + L)
        for n in range(N):
            kh = n // G
            kk = k[b, kh, pos, :]
            vv = v[b, kh, pos, :]
            s = scale * (kk @ q[b, n])
            if pse is not None:
                s = s + pse[0 if pse.shape[0] == 1 else b, n, pos]
            if mask is not None:
                s = np.where(mask[b, pos], MASKED_SCORE, s)
            e = np.exp(s - s.max())
            out[b, n] = (e @ vv) / e.sum()
            amax[b, n] = np.abs(vv).max()
    return out, amax


def quantize(x, scale, offset):
    """Spec 6.6 ([R] form): ``clamp(round_half_even(x * scale + offset), -128, 127)``.

    ``scale``/``offset`` broadcast against ``x`` (B, N, D): a scalar or an (N, D) array.
    """
    return np.clip(np.rint(x * scale + offset), -128, 127)


def check_float(out, ref, amax, dtype_name):
    """Spec 7's acceptance bound for FP16/BF16 outputs, exact zeros for empty windows.

    FP16: ``|o - r| <= 1e-3 |r| + 2e-3 A`` (about two half-ulps of fp16 relative to the
    result, plus the device's rounding of P and float32 accumulation relative to the
    largest V in the window); BF16: ``8e-3 |r| + 8e-3 A`` (one bf16 ulp, bf16 keeps 8
    significant bits). Returns a message naming the worst element, or None.
    """
    rel, absf = {"float16": (1e-3, 2e-3), "bfloat16": (8e-3, 8e-3)}[dtype_name]
    out = np.asarray(out, np.float64)
    empty = np.isnan(ref)
    if np.any(out[empty] != 0.0):
        return "an empty window's output is not exactly 0"
    r = np.where(empty, 0.0, ref)
    bound = rel * np.abs(r) + absf * amax[:, :, None]
    err = np.abs(out - r)
    bad = ~(err <= bound)
    if np.any(bad):
        i = np.unravel_index(np.argmax(np.where(bad, err - bound, -np.inf)), out.shape)
        return f"element {i}: got {out[i]}, reference {r[i]}, bound {bound[i]}"
    return None
