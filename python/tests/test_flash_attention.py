"""tilejit.torch.flash_attention: its forward (a tile-DSL kernel) against the
float64 NumPy reference of ref_fag.py, its gradients (FlashAttentionUnpaddingScoreGradV5)
against float64 PyTorch autograd through a plain softmax attention, for causal,
band, GQA and dropout (one mask for forward and backward) in the three dtypes."""
import threading

import numpy as np
import pytest
import torch

import tilejit.torch
from tilejit._flash_attention import _sparse

import ref_fag as R

F16, BF16, F32 = torch.float16, torch.bfloat16, torch.float32
fa = tilejit.torch.flash_attention

# Three batches: sq < skv, sq > skv (rows without keys under causal), and one
# longer than the kernel's 64-row block.
CU_Q = [0, 5, 17, 87]
CU_K = [0, 9, 12, 82]

# Tolerances. Forward: O is rounded once to its dtype (half an ulp: 2^-11 for
# f16, 2^-8 for bf16) after an f32 computation. Gradients: the spec's bounds
# for the backward (section 8), against exact float64 gradients; the backward
# takes Δ from the rounded O, which moves dS by at most |dy|·|O|·ulp/2, inside
# them.
FWD_TOL = {F32: (1e-5, 1e-6), F16: (1e-3, 5e-4), BF16: (8e-3, 4e-3)}


def inputs(dtype, n1=4, n2=2, d=16, dv=None, cu_q=CU_Q, cu_k=CU_K, seed=0):
    rng = np.random.default_rng(seed)
    dv = d if dv is None else dv
    t = lambda *s: torch.from_numpy(rng.uniform(-1, 1, s)).to(dtype)  # noqa: E731
    return t(cu_q[-1], n1, d), t(cu_k[-1], n2, d), t(cu_k[-1], n2, dv), t(cu_q[-1], n1, dv)


def keep_fn(causal, window, cu_q, cu_k):
    """The kept positions of each batch (flash-attn's bottom-right alignment)."""
    left, right = window
    if causal:
        right = 0

    def keep(b):
        sq, skv = cu_q[b + 1] - cu_q[b], cu_k[b + 1] - cu_k[b]
        i = np.arange(sq)[:, None] + (skv - sq)
        j = np.arange(skv)[None, :]
        k = np.ones((sq, skv), bool)
        if left >= 0:
            k &= j >= i - left
        if right >= 0:
            k &= j <= i + right
        return k
    return keep


def attention_f64(q, k, v, cu_q, cu_k, scale, keep, drop=None, keep_prob=1.0):
    """Plain softmax attention in float64 torch ops (differentiable); rows that
    keep no key give 0; drop: the bit-packed keep mask (spec section 2.4)."""
    n1, g = q.shape[1], q.shape[1] // k.shape[1]
    bat = R.batches(cu_q[1:], cu_k[1:])
    blocks = []
    for b, (q0, sq, k0, skv, _) in enumerate(bat):
        kb = torch.from_numpy(keep(b))
        heads = []
        for h in range(n1):
            s = scale * q[q0:q0 + sq, h] @ k[k0:k0 + skv, h // g].T
            s = torch.where(kb, s, torch.full_like(s, -1e300))
            p = torch.softmax(s, dim=1) * kb.any(dim=1, keepdim=True)
            if drop is not None:
                z = torch.from_numpy(R.dropout_bits(drop, b, h, sq, skv, bat, n1))
                p = p * z / keep_prob
            heads.append(p @ v[k0:k0 + skv, h // g])
        blocks.append(torch.stack(heads, dim=1) if heads else q.new_zeros(sq, 0, v.shape[2]))
    tail = q.new_zeros(q.shape[0] - cu_q[-1], n1, v.shape[2])
    return torch.cat(blocks + [tail], dim=0)


def seed_of(generator_seed):
    """The mask seed flash_attention draws from a generator seeded so."""
    g = torch.Generator().manual_seed(generator_seed)
    return int(torch.randint(-2**63, 2**63 - 1, (1,), dtype=torch.int64, generator=g).item())


SCENARIOS = {
    "full": dict(),
    "causal": dict(causal=True),
    "band": dict(window=(6, 2)),
    "causal-window": dict(causal=True, window=(5, -1)),
    "dropout": dict(dropout_p=0.2),
    "dropout-causal": dict(dropout_p=0.1, causal=True),
}


def run_case(dtype, n1=4, n2=2, d=16, dv=None, causal=False, window=(-1, -1), dropout_p=0.0,
             scale=None, cu_q=CU_Q, cu_k=CU_K):
    q, k, v, dy = inputs(dtype, n1, n2, d, dv, cu_q, cu_k)
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    o, smax, ssum = fa(*leaves, cu_q, cu_k, causal=causal, window=window, dropout_p=dropout_p,
                       scale=scale, generator=torch.Generator().manual_seed(11),
                       return_softmax_stats=True)
    o.backward(dy)
    scale = d ** -0.5 if scale is None else scale
    mode, pre, nxt = _sparse(causal, window)
    drop = None
    if dropout_p:
        numels = n1 * sum(b[1] * b[3] for b in R.batches(cu_q[1:], cu_k[1:]))
        drop = R.dropout_mask(numels, 1 - dropout_p, seed_of(11), 0)
    ro, rm, rl = R.forward(*(t.double().numpy() for t in (q, k, v)), cu_q[1:], cu_k[1:],
                           scale=scale, mode=mode, pre=pre, nxt=nxt,
                           mask=np.ones((2048, 2048), bool) if mode else None, drop=drop,
                           keep_prob=1 - dropout_p)
    ref = [t.double().requires_grad_() for t in (q, k, v)]
    out = attention_f64(*ref, cu_q, cu_k, scale, keep_fn(causal, window, cu_q, cu_k), drop,
                        1 - dropout_p)
    out.backward(dy.double())
    return dict(o=o, smax=smax, ssum=ssum, grads=[t.grad for t in leaves], ro=ro, rm=rm, rl=rl,
                rout=out.detach().numpy(), rgrads=[t.grad.numpy() for t in ref])


@pytest.mark.parametrize("dtype", [F32, F16, BF16])
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_forward_and_gradients(dtype, name):
    r = run_case(dtype, **SCENARIOS[name])
    # The two float64 references agree (the NumPy one has the statistics).
    assert np.allclose(r["ro"], r["rout"], atol=1e-12)
    rtol, atol = FWD_TOL[dtype]
    o = r["o"].detach().double().numpy()
    assert r["o"].dtype == dtype
    err = np.abs(o - r["ro"])
    assert (err <= rtol * np.abs(r["ro"]) + atol).all(), err.max()
    # Statistics: f32 row maximum and sum of exp, all 8 lanes equal.
    sm, ss = r["smax"].numpy(), r["ssum"].numpy()
    assert (sm == sm[..., :1]).all() and (ss == ss[..., :1]).all()
    assert np.allclose(sm[..., 0], r["rm"], rtol=1e-6, atol=1e-6)
    assert np.allclose(ss[..., 0], r["rl"], rtol=1e-5, atol=0)
    for nm, g, rg in zip("qkv", r["grads"], r["rgrads"]):
        assert g.dtype == dtype
        R.check("d" + nm, g, rg, dtype)


def test_gqa_mqa_and_head_dims():
    for n1, n2, d, dv, cu_q, cu_k in ((6, 3, 8, 8, CU_Q, CU_K), (4, 1, 24, 16, CU_Q, CU_K),
                                      (2, 2, 3, 3, CU_Q, CU_K),
                                      (2, 1, 768, 512, [0, 70, 75], [0, 70, 90])):
        r = run_case(F32, n1=n1, n2=n2, d=d, dv=dv, causal=True, cu_q=cu_q, cu_k=cu_k)
        R.check("o", r["o"], r["ro"], F32)
        for nm, g, rg in zip("qkv", r["grads"], r["rgrads"]):
            R.check("d" + nm, g, rg, F32)


def test_custom_scale_and_int_tensor_offsets():
    cu_q = torch.tensor(CU_Q, dtype=torch.int32)
    cu_k = torch.tensor(CU_K, dtype=torch.int64)
    q, k, v, _ = inputs(F32)
    a = fa(q, k, v, cu_q, cu_k, scale=0.3, causal=True)
    b = fa(q, k, v, CU_Q, CU_K, scale=0.3, causal=True)
    assert torch.equal(a, b)
    r = run_case(F32, scale=0.3, causal=True)
    R.check("o", r["o"], r["ro"], F32)


def test_dropout_mask_is_shared_and_reproducible():
    q, k, v, dy = inputs(F32)
    outs = []
    for gseed in (11, 11, 12):
        leaves = [t.clone().requires_grad_() for t in (q, k, v)]
        o = fa(*leaves, CU_Q, CU_K, dropout_p=0.3, generator=torch.Generator().manual_seed(gseed))
        o.backward(dy)
        outs.append((o.detach(), [t.grad for t in leaves]))
    assert torch.equal(outs[0][0], outs[1][0])
    assert all(torch.equal(a, b) for a, b in zip(outs[0][1], outs[1][1]))
    assert not torch.equal(outs[0][0], outs[2][0])
    plain = fa(q, k, v, CU_Q, CU_K)
    assert not torch.allclose(plain, outs[0][0])


def test_rows_without_keys_and_tail_tokens():
    # Causal with sq > skv: the first rows of batch 1 keep no key (o = 0, no
    # gradient); tokens past the last offset get 0 too.
    q, k, v, dy = inputs(F32, cu_q=CU_Q, cu_k=CU_K)
    q = torch.cat([q, torch.ones(3, *q.shape[1:])])
    dy = torch.cat([dy, torch.ones(3, *dy.shape[1:])])
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    o, smax, ssum = fa(*leaves, CU_Q, CU_K, causal=True, return_softmax_stats=True)
    o.backward(dy)
    assert o[5:14].abs().max() == 0 and o[87:].abs().max() == 0
    assert (smax[5:14] == R.NEG).all() and (ssum[5:14] == 0).all()
    assert leaves[0].grad[5:14].abs().max() == 0 and leaves[0].grad[87:].abs().max() == 0
    assert all(torch.isfinite(t.grad).all() for t in leaves)


def test_bad_inputs():
    q, k, v, _ = inputs(F32)
    bad = [
        (TypeError, lambda: fa(q.double(), k, v, CU_Q, CU_K)),
        (TypeError, lambda: fa(q, k.half(), v, CU_Q, CU_K)),
        (TypeError, lambda: fa(q.numpy(), k, v, CU_Q, CU_K)),
        (TypeError, lambda: fa(q.to("meta"), k, v, CU_Q, CU_K)),
        (TypeError, lambda: fa(q, k, v, torch.tensor(CU_Q, dtype=torch.float32), CU_K)),
        (ValueError, lambda: fa(q[0], k, v, CU_Q, CU_K)),
        (ValueError, lambda: fa(q, k[:, :, :8], v, CU_Q, CU_K)),
        (ValueError, lambda: fa(q[:, :3], k, v, CU_Q, CU_K)),                 # 3 heads over 2
        (ValueError, lambda: fa(q, k, torch.zeros(82, 2, 32), CU_Q, CU_K)),    # Dv > D
        (ValueError, lambda: fa(q, k, v, [1, 5, 87], CU_K)),                   # no leading 0
        (ValueError, lambda: fa(q, k, v, [0, 5, 4, 87], CU_K)),                # decreasing
        (ValueError, lambda: fa(q, k, v, [0, 5, 17, 88], CU_K)),               # past T1
        (ValueError, lambda: fa(q, k, v, [0, 87], CU_K)),                      # batch counts
        (ValueError, lambda: fa(q, k, v, CU_Q, CU_K, dropout_p=1.0)),
        (ValueError, lambda: fa(q, k, v, CU_Q, CU_K, window=(0, 0))),
        (ValueError, lambda: fa(q, k, v, CU_Q, CU_K, causal=True, window=(0, -1))),
    ]
    before = [t.clone() for t in (q, k, v)]
    for exc, fn in bad:
        with pytest.raises(exc):
            fn()
    assert all(torch.equal(a, b) for a, b in zip((q, k, v), before))


def test_several_threads():
    data = [inputs(F32, seed=s) for s in range(3)]

    def step(i):
        q, k, v, dy = data[i % 3]
        leaves = [t.clone().requires_grad_() for t in (q, k, v)]
        o = fa(*leaves, CU_Q, CU_K, causal=True, dropout_p=0.1,
               generator=torch.Generator().manual_seed(i % 3))
        o.backward(dy)
        return [o.detach()] + [t.grad for t in leaves]

    want = [step(i) for i in range(3)]
    got, errors = [None] * 6, []

    def work(i):
        try:
            got[i] = step(i)
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in range(6):
        assert all(torch.equal(a, b) for a, b in zip(got[i], want[i % 3]))


@pytest.mark.parametrize("t1,t2", [(5, 0), (0, 4), (0, 0)])
def test_empty_sides(t1, t2):
    leaves = [torch.randn(*s).requires_grad_() for s in ((t1, 2, 8), (t2, 1, 8), (t2, 1, 8))]
    o = fa(*leaves, [0, t1], [0, t2])
    o.backward(torch.ones_like(o))
    assert o.shape == (t1, 2, 8) and (o == 0).all()
    assert all(t.grad.shape == t.shape and (t.grad == 0).all() for t in leaves)
