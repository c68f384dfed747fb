"""Float64 NumPy references for the flash-attention tests (test_torch_fag.py,
test_flash_attention.py), written from the spec
(flash_attention_unpadding_score_grad_v5.md, sections 2-6) for these tests:
packed TND batches, every sparse mode, explicit masks, pse with pseType 1,
dropout bits, sink, GQA. ``forward`` gives O, M and L (section 3), ``backward``
the gradients from given O, M and L (section 4), ``dropout_mask`` the keep mask
tilejit's generator makes (bit by bit, in uint64 arithmetic)."""
import numpy as np

NEG = -3.4028234663852886e38
_M64 = (1 << 64) - 1


def batches(cq, ck):
    """Per batch (q0, sq, k0, skv, cnt), cnt = sum of sq * skv before it."""
    out, pq, pk, cnt = [], 0, 0, 0
    for a, b in zip(cq, ck):
        out.append((pq, a - pq, pk, b - pk, cnt))
        cnt += (a - pq) * (b - pk)
        pq, pk = a, b
    return out


def keep_matrix(mode, b, sq, skv, bat, pre, nxt, mask=None, h=0, n1=1, prefix=None):
    """keep_ij of batch b (section 5); mask: the explicit mask as stored
    (rule 0: None keeps everything)."""
    if mask is None:
        return np.ones((sq, skv), bool)
    i = np.arange(sq)[:, None]
    j = np.arange(skv)[None, :]
    d = skv - sq
    if mode in (0, 1):
        a = np.asarray(mask).astype(bool)
        if a.ndim == 2 or a.shape[0] == 1:
            mat = a.reshape(a.shape[-2], a.shape[-1])[:sq, :skv]
        else:
            flat = a.reshape(-1)
            cnt = bat[b][4]
            base = cnt if a.shape[1] == 1 else n1 * cnt + h * sq * skv
            mat = flat[base:base + sq * skv].reshape(sq, skv)
        keep = ~mat
        if mode == 0:
            keep &= (j - i >= -pre) & (j - i <= nxt)
        return keep
    if mode == 2:
        return j <= i
    if mode == 3:
        return j <= i + d
    if mode == 4:
        return (j >= i + d - pre) & (j <= i + d + nxt)
    if mode == 6:
        return (j <= i + d) | (j < prefix[b])
    if mode in (7, 8):
        live = [x for x in range(len(bat)) if bat[x][1] > 0]
        beta = live[-1] if mode == 7 else live[0]
        if b == beta:
            return (j >= i + d - pre) & (j <= i + d + nxt)
        return (j <= i + d) if mode == 7 else (j <= i)
    raise ValueError(mode)


def pse_matrix(pse, b, h, sq, skv, bat, n1, skvmax):
    """pse_ij of batch b, head h (section 6.1) for the forms pseType 1 takes;
    pse = (form, E), form "alibi" (4-D [Bp, N1, 1024, Skvmax]), "kv"
    (1-D [N1·T2]) or "full" (1-D [N1·Σ sq·skv])."""
    if pse is None:
        return 0.0
    form, e = pse
    e = np.asarray(e, np.float64)
    i = np.arange(sq)[:, None]
    j = np.arange(skv)[None, :]
    _, _, k0, _, cnt = bat[b]
    if form == "alibi":
        t = (i - j) - (skvmax - 1024)
        bb = 0 if e.shape[0] == 1 else b
        return np.where(t >= 0, e[bb, h][np.maximum(t, 0), 0], e[bb, h][0, np.maximum(-t, 0)])
    flat = e.reshape(-1)
    if form == "kv":
        return np.broadcast_to(flat[n1 * k0 + h * skv + j], (sq, skv))
    base = n1 * cnt + h * sq * skv
    return flat[base:base + sq * skv].reshape(sq, skv)


def dropout_bits(mask, b, h, sq, skv, bat, n1):
    """Z_ij of batch b, head h from the bit-packed mask (section 2.4)."""
    cnt = bat[b][4]
    e = n1 * cnt + h * sq * skv + np.arange(sq)[:, None] * skv + np.arange(skv)[None, :]
    m = np.asarray(mask, np.uint8)
    return ((m[e >> 3] >> (e & 7)) & 1).astype(np.float64)


def _scores(q, k, b, h, bat, g, scale, pse, n1, skvmax):
    q0, sq, k0, skv, _ = bat[b]
    x = q[q0:q0 + sq, h] @ k[k0:k0 + skv, h // g].T
    p = pse_matrix(pse, b, h, sq, skv, bat, n1, skvmax)
    return scale * (x + p)


def forward(q, k, v, cq, ck, *, scale, mode=0, pre=2147483647, nxt=2147483647, mask=None,
            pse=None, drop=None, keep_prob=1.0, sink=None, prefix=None):
    """O [T1, N1, Dv], M and L [T1, N1] in float64 (section 3; pseType 1).
    Rows with no kept key and no sink: O = 0, M = NEG, L = 0."""
    q, k, v = (np.asarray(t, np.float64) for t in (q, k, v))
    t1, n1, _ = q.shape
    g = n1 // k.shape[1]
    bat = batches(cq, ck)
    skvmax = max(x[3] for x in bat)
    o = np.zeros((t1, n1, v.shape[2]))
    mm = np.zeros((t1, n1))
    ll = np.zeros((t1, n1))
    for b, (q0, sq, k0, skv, _) in enumerate(bat):
        if sq == 0:
            continue
        for h in range(n1):
            s = _scores(q, k, b, h, bat, g, scale, pse, n1, skvmax) if skv else np.zeros((sq, 0))
            keep = keep_matrix(mode, b, sq, skv, bat, pre, nxt, mask, h, n1, prefix)
            s = np.where(keep, s, -np.inf)
            m = s.max(axis=1, initial=-np.inf)
            if sink is not None:
                m = np.maximum(m, sink[h])
            safe = np.where(np.isfinite(m), m, 0.0)
            pe = np.exp(s - safe[:, None])
            l = pe.sum(axis=1)
            if sink is not None:
                l = l + np.exp(sink[h] - safe)
            p = np.where(l[:, None] > 0, pe / np.where(l > 0, l, 1)[:, None], 0.0)
            if drop is not None and keep_prob < 1:
                p = p * dropout_bits(drop, b, h, sq, skv, bat, n1) / np.float32(keep_prob)
            o[q0:q0 + sq, h] = p @ v[k0:k0 + skv, h // g]
            mm[q0:q0 + sq, h] = np.where(np.isfinite(m), m, NEG)
            ll[q0:q0 + sq, h] = l
    return o, mm, ll


def stats_tensor(x, cq, layout):
    """[T1, N1] statistics as the [T1, N1, 8] array the operator reads in
    ``layout`` ("TND": same_as_input; "": legacy batch-blocked, head-major)."""
    t1, n1 = x.shape
    out = np.repeat(x[:, :, None], 8, axis=2).astype(np.float32)
    if layout == "TND":
        return out
    flat = np.empty(t1 * n1 * 8, np.float32)
    pq = 0
    for c in cq:
        sq = c - pq
        blk = out[pq:c].transpose(1, 0, 2).reshape(-1)  # [N1, sq, 8]
        flat[pq * n1 * 8:(pq * n1 + n1 * sq) * 8] = blk
        pq = c
    flat[pq * n1 * 8:] = out[pq:].reshape(-1)
    return flat.reshape(t1, n1, 8)


def backward(q, k, v, dy, o, m, l, cq, ck, *, scale, mode=0, pre=2147483647, nxt=2147483647,
             mask=None, pse=None, drop=None, keep_prob=1.0, sink=None, prefix=None,
             sink_abs=False):
    """dq, dk, dv, dsink in float64 from the given O, M and L [T1, N1]
    (section 4; σ and κ rounded to float32). sink_abs: dsink sums the absolute
    value of each row's term instead (the scale of the spec's dθ bound)."""
    q, k, v, dy, o = (np.asarray(t, np.float64) for t in (q, k, v, dy, o))
    scale = float(np.float32(scale))
    kp = float(np.float32(keep_prob))
    t1, n1, _ = q.shape
    g = n1 // k.shape[1]
    bat = batches(cq, ck)
    skvmax = max(x[3] for x in bat)
    dq, dk, dv = np.zeros_like(q), np.zeros_like(k), np.zeros_like(v)
    dsink = np.zeros(n1)
    for b, (q0, sq, k0, skv, _) in enumerate(bat):
        if sq == 0 or skv == 0:
            continue
        for h in range(n1):
            hk = h // g
            s = _scores(q, k, b, h, bat, g, scale, pse, n1, skvmax)
            keep = keep_matrix(mode, b, sq, skv, bat, pre, nxt, mask, h, n1, prefix)
            mi = m[q0:q0 + sq, h][:, None]
            li = l[q0:q0 + sq, h][:, None]
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                p = np.where(keep, np.exp(s - mi) / li, 0.0)
            dyb = dy[q0:q0 + sq, h]
            dw = dyb @ v[k0:k0 + skv, hk].T
            if drop is not None and kp < 1:
                z = dropout_bits(drop, b, h, sq, skv, bat, n1)
                dp, w = dw * z / kp, p * z / kp
            else:
                dp, w = dw, p
            delta = (dyb * o[q0:q0 + sq, h]).sum(axis=1)[:, None]
            dx = scale * p * (dp - delta)
            dq[q0:q0 + sq, h] += dx @ k[k0:k0 + skv, hk]
            dk[k0:k0 + skv, hk] += dx.T @ q[q0:q0 + sq, h]
            dv[k0:k0 + skv, hk] += w.T @ dyb
            if sink is not None:
                with np.errstate(over="ignore"):
                    psink = np.exp(sink[h] - mi[:, 0]) / li[:, 0]
                term = psink * (p * dp).sum(axis=1)
                dsink[h] += np.abs(term).sum() if sink_abs else -term.sum()
    return dq, dk, dv, dsink


def _mix64(z):
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def dropout_mask(numels, keep_prob, seed, offset):
    """The keep mask of tilejit's generator: element e kept iff the top 24 bits
    of splitmix64(mix(seed) + (offset + e + 1)·γ), over 2^24, are below
    float32(keep_prob); ceil(numels / 128) * 16 bytes, LSB first."""
    gamma = np.uint64(0x9E3779B97F4A7C15)
    nbytes = (numels + 127) // 128 * 16
    e = np.arange(nbytes * 8, dtype=np.uint64)
    with np.errstate(over="ignore"):
        sm = _mix64(np.array([seed & _M64], np.uint64) * gamma)
        z = _mix64((e + np.uint64(offset & _M64) + np.uint64(1)) * gamma + sm)
    u = (z >> np.uint64(40)).astype(np.float64) / 2.0**24
    kept = (u < np.float32(keep_prob)) & (e < numels)
    return np.packbits(kept.reshape(-1, 8), axis=1, bitorder="little").reshape(-1)


def check(name, x, ref, dtype, rms=None):
    """The spec's element-wise and relative-RMS checks (section 8) for outputs
    of ``dtype``."""
    import torch
    tol = {torch.float32: (1e-4, 1e-5, 1e-5), torch.float16: (2e-3, 1e-3, 1e-3),
           torch.bfloat16: (1e-2, 8e-3, 8e-3)}[dtype]
    rtol, atol, rrms = tol if rms is None else (tol[0], tol[1], rms)
    x = x.detach().double().numpy() if isinstance(x, torch.Tensor) else np.asarray(x, np.float64)
    ref = np.asarray(ref, np.float64)
    assert x.shape == ref.shape, (name, x.shape, ref.shape)
    m = np.abs(ref).max() if ref.size else 0.0
    err = np.abs(x - ref)
    bad = err > rtol * np.abs(ref) + atol * m
    assert not bad.any(), (f"{name}: {bad.sum()} of {bad.size} elements off, worst "
                           f"{err.max():.3g} (max |ref| {m:.3g})")
    nr = np.linalg.norm(ref)
    if nr > 0:
        assert np.linalg.norm(x - ref) / nr <= rrms, (
            f"{name}: relative RMS {np.linalg.norm(x - ref) / nr:.3g} > {rrms}")
