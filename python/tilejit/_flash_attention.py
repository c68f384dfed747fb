"""``tilejit.torch.flash_attention``: flash attention on packed variable-length
batches, differentiable, on the CPU.

The forward is a tilejit kernel (kernels/flash_attention_varlen.tile, kernel
``fa_varlen_fwd``) that writes the output together with the row statistics
softmax_max / softmax_sum the backward needs, in the layout the backward takes
them; the backward is aclnnFlashAttentionUnpaddingScoreGradV5, called through
``torch.ops.tilejit.npu_fusion_attention_grad`` exactly as torch_npu's
training code calls it after its forward (dropout by seed, offset and numels).
"""
import threading

import torch

from tilejit._tilejit import ArgumentTypeError, ArgumentValueError
from tilejit._ops import fusion_attention_grad as _fag

# torch_npu's "no limit" for pre/next tokens.
_NO_LIMIT = 2147483647
# The compressed causal mask the backward's sparse modes 3 and 4 take: its
# shape is checked, its content (1 above the diagonal) is not read.
_causal_mask = None
_causal_mask_lock = threading.Lock()
_FLOATS = (torch.float16, torch.bfloat16, torch.float32)
_DTYPE_NAMES = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32"}
# Query rows per program of the forward kernel, and keys per step.
_BM = 64


def _compressed_mask():
    global _causal_mask
    if _causal_mask is None:
        with _causal_mask_lock:
            if _causal_mask is None:
                _causal_mask = torch.ones(2048, 2048, dtype=torch.bool).triu_(1)
    return _causal_mask


def _cu_seqlens(name, cu, total):
    """Cumulative offsets [0, s0, s0 + s1, ...] as a list of ints, checked."""
    if isinstance(cu, torch.Tensor):
        if cu.device.type != "cpu" or cu.dtype not in (torch.int32, torch.int64) or cu.dim() != 1:
            raise ArgumentTypeError(f"flash_attention: {name} must be a 1-D int32/int64 CPU tensor or a "
                            f"sequence of ints, got {cu.dtype} of shape {list(cu.shape)} on "
                            f"{cu.device}")
        cu = cu.tolist()
    else:
        cu = list(cu)
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in cu):
            raise ArgumentTypeError(f"flash_attention: {name} must hold ints")
    if len(cu) < 2 or cu[0] != 0:
        raise ArgumentValueError(f"flash_attention: {name} must start with 0 and hold at least one "
                         f"batch (B + 1 offsets), got {cu}")
    if any(b < a for a, b in zip(cu, cu[1:])) or cu[-1] > total:
        raise ArgumentValueError(f"flash_attention: {name} must not decrease and must end at most at "
                         f"{total} tokens, got {cu}")
    return cu


def _sparse(causal, window):
    """(sparse_mode, pre_tokens, next_tokens) of the backward for flash-attn's
    causal / window_size, both aligned at the bottom-right of each batch."""
    left, right = window
    if causal:
        right = 0
    if left < 0 and right < 0:
        return 0, _NO_LIMIT, _NO_LIMIT
    if causal and left < 0:
        return 3, _NO_LIMIT, 0
    pre = left if left >= 0 else _NO_LIMIT
    nxt = right if right >= 0 else _NO_LIMIT
    if pre + nxt <= 0:
        raise ArgumentValueError("flash_attention: the band of window (0, 0) (the diagonal alone) is not "
                         "one the backward takes: it needs left + right >= 1")
    return 4, pre, nxt


def _band(mode, pre, nxt, sq, skv):
    """The kept range lo <= j - i <= hi of one batch, clamped to [-sq, skv]."""
    delta = skv - sq
    lo, hi = -sq, skv
    if mode == 3:
        hi = delta
    elif mode == 4:
        lo, hi = delta - pre, delta + nxt
    return max(lo, -sq), min(hi, skv)


class _FlashAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, cu_q, cu_kv, scale, mode, pre, nxt, keep_prob, seed):
        t1, n1, d = q.shape
        t2, n2, dv = v.shape
        bcount = len(cu_q) - 1
        rows, work = [], []
        cnt = 0
        for b in range(bcount):
            sq, skv = cu_q[b + 1] - cu_q[b], cu_kv[b + 1] - cu_kv[b]
            lo, hi = _band(mode, pre, nxt, sq, skv)
            rows.append((cu_q[b], sq, cu_kv[b], skv, lo, hi, cnt, 0))
            work.extend((b, i) for i in range(0, sq, _BM))
            cnt += sq * skv
        seq = torch.tensor(rows, dtype=torch.int64)
        numels = n1 * cnt
        drop = keep_prob < 1.0
        o = torch.zeros(t1, n1, dv, dtype=q.dtype)
        smax = torch.zeros(t1, n1, 8, dtype=torch.float32)
        ssum = torch.zeros(t1, n1, 8, dtype=torch.float32)
        if work:
            kern = _fag.kernel("fa_varlen_fwd", T=_DTYPE_NAMES[q.dtype], D=d, DV=dv, BM=_BM,
                               DROP=drop)
            args = [q.permute(1, 0, 2), k.permute(1, 0, 2), v.permute(1, 0, 2), seq,
                    torch.tensor(work, dtype=torch.int64)]
            if drop:
                args.append(_fag.dropout_gen_mask(numels, keep_prob, seed, 0))
            args += [o.permute(1, 0, 2), smax.permute(1, 0, 2), ssum.permute(1, 0, 2), scale,
                     1.0 / keep_prob]
            kern(*args)
        ctx.save_for_backward(q, k, v, o, smax, ssum)
        ctx.params = (cu_q, cu_kv, scale, mode, pre, nxt, keep_prob, seed, numels)
        ctx.mark_non_differentiable(smax, ssum)
        return o, smax, ssum

    @staticmethod
    def backward(ctx, do, _dmax, _dsum):
        q, k, v, o, smax, ssum = ctx.saved_tensors
        cu_q, cu_kv, scale, mode, pre, nxt, keep_prob, seed, numels = ctx.params
        dq, dk, dv, _, _ = torch.ops.tilejit.npu_fusion_attention_grad(
            q, k, v, do.to(q.dtype).contiguous(), q.shape[1], "TND",
            atten_mask=_compressed_mask() if mode in (3, 4) else None,
            softmax_max=smax, softmax_sum=ssum, attention_in=o, scale_value=scale,
            keep_prob=keep_prob, pre_tockens=pre, next_tockens=nxt, seed=seed, offset=0,
            numels=numels, actual_seq_qlen=cu_q[1:], actual_seq_kvlen=cu_kv[1:],
            sparse_mode=mode, softmax_layout="TND")
        return dq, dk, dv, None, None, None, None, None, None, None, None


def flash_attention(q, k, v, cu_seqlens_q, cu_seqlens_kv, *, dropout_p=0.0, scale=None,
                    causal=False, window=(-1, -1), generator=None, return_softmax_stats=False):
    """Attention over packed variable-length batches, as flash-attn's
    ``flash_attn_varlen_func``: differentiable in q, k and v.

    q: [T1, N1, D]; k: [T2, N2, D]; v: [T2, N2, Dv] (Dv <= D); float16,
    bfloat16 or float32 CPU tensors of one dtype; N1 a multiple of N2 (GQA:
    query head h reads kv head h // (N1 // N2)). ``cu_seqlens_q`` /
    ``cu_seqlens_kv``: B + 1 cumulative offsets starting at 0 (int tensors or
    sequences); batch b is tokens cu[b] .. cu[b + 1] of each. ``scale``
    defaults to D ** -0.5. ``causal`` and ``window = (left, right)`` (-1: no
    limit) are aligned at the bottom-right of each batch, as flash-attn aligns
    them: query i of a batch with sq queries and skv keys keeps key j when
    i + skv - sq - left <= j <= i + skv - sq + right (right = 0 when causal).
    ``dropout_p``: the probability of dropping an attention weight (its keep
    mask drawn from ``generator``, or PyTorch's default one, and regenerated
    identically for the backward). Rows that keep no key give 0.

    Returns o [T1, N1, Dv], or (o, softmax_max, softmax_sum) with the row
    maximum and sum of exp (each [T1, N1, 8], all 8 lanes equal) when
    ``return_softmax_stats``.
    """
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor) or t.device.type != "cpu" or t.layout != torch.strided:
            raise ArgumentTypeError(f"flash_attention: {name} must be a strided CPU torch.Tensor")
        if t.dtype not in _FLOATS or t.dtype != q.dtype:
            raise ArgumentTypeError(f"flash_attention: q, k and v must share one dtype of float16, "
                            f"bfloat16, float32; got {q.dtype}, {k.dtype}, {v.dtype}")
        if t.dim() != 3:
            raise ArgumentValueError(f"flash_attention: {name} must be [T, N, D], got shape "
                             f"{list(t.shape)}")
    t1, n1, d = q.shape
    t2, n2, dv = v.shape
    if k.shape[:2] != v.shape[:2] or k.shape[2] != d:
        raise ArgumentValueError(f"flash_attention: k {list(k.shape)} and v {list(v.shape)} must be "
                         f"[T2, N2, D] and [T2, N2, Dv] with q's D = {d}")
    if n2 == 0 or n1 % n2 != 0:
        raise ArgumentValueError(f"flash_attention: the query heads ({n1}) must be a multiple of the "
                         f"kv heads ({n2})")
    if dv > d or not 1 <= d <= 768:
        raise ArgumentValueError(f"flash_attention: needs 1 <= Dv <= D <= 768, got D = {d}, Dv = {dv}")
    cu_q = _cu_seqlens("cu_seqlens_q", cu_seqlens_q, t1)
    cu_kv = _cu_seqlens("cu_seqlens_kv", cu_seqlens_kv, t2)
    if len(cu_q) != len(cu_kv):
        raise ArgumentValueError(f"flash_attention: cu_seqlens_q and cu_seqlens_kv must hold the same "
                         f"number of batches, got {len(cu_q) - 1} and {len(cu_kv) - 1}")
    if not 0.0 <= dropout_p < 1.0:
        raise ArgumentValueError(f"flash_attention: dropout_p must be in [0, 1), got {dropout_p}")
    if len(window) != 2:
        raise ArgumentValueError(f"flash_attention: window must be (left, right), got {window}")
    mode, pre, nxt = _sparse(bool(causal), (int(window[0]), int(window[1])))
    scale = float(d ** -0.5 if scale is None else scale)
    seed = 0
    if dropout_p > 0.0:
        seed = int(torch.randint(-2**63, 2**63 - 1, (1,), dtype=torch.int64,
                                 generator=generator).item())
    o, smax, ssum = _FlashAttention.apply(q.contiguous(), k.contiguous(), v.contiguous(), cu_q,
                                          cu_kv, scale, mode, pre, nxt, 1.0 - float(dropout_p),
                                          seed)
    return (o, smax, ssum) if return_softmax_stats else o


__all__ = ["flash_attention"]
