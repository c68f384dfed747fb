"""torch.ops.tilejit.npu_fusion_attention_grad (torch_npu's schema, the TND route
to FlashAttentionUnpaddingScoreGradV5) against the float64 NumPy reference of
ref_fag.py, in the spec's scenarios (flash_attention_unpadding_score_grad_v5.md,
section 10), with the spec's tolerances (section 8)."""
import threading

import numpy as np
import pytest
import torch

import tilejit
import tilejit.torch  # noqa: F401  (registers the operators)
from tilejit._ops import fusion_attention_grad as fag

import ref_fag as R

OP = torch.ops.tilejit.npu_fusion_attention_grad
F16, BF16, F32 = torch.float16, torch.bfloat16, torch.float32
BIG = 2147483647
CMASK = torch.ones(2048, 2048, dtype=torch.bool).triu_(1)


def rand(rng, shape, dtype, lo=-1.0, hi=1.0):
    return torch.from_numpy(rng.uniform(lo, hi, shape)).to(dtype)


def f64(t):
    return t.double().numpy()


class Case:
    """One problem: inputs in `dtype`, consistent O, M, L from a float64
    forward (O rounded to dtype, M and L to float32), the reference gradients."""

    def __init__(self, cq, ck, n1=2, n2=1, d=16, dv=None, dtype=F32, mode=0, pre=BIG, nxt=BIG,
                 mask=None, pse=None, keep_prob=1.0, seed=0, offset=0, sink=None, prefix=None,
                 layout="TND", scale=None, seed_data=0, t1=None, t2=None):
        rng = np.random.default_rng(seed_data)
        dv = d if dv is None else dv
        t1 = cq[-1] if t1 is None else t1
        t2 = ck[-1] if t2 is None else t2
        self.cq, self.ck, self.dtype, self.layout = list(cq), list(ck), dtype, layout
        self.q = rand(rng, (t1, n1, d), dtype)
        self.k = rand(rng, (t2, n2, d), dtype)
        self.v = rand(rng, (t2, n2, dv), dtype)
        self.dy = rand(rng, (t1, n1, dv), dtype)
        self.scale = d ** -0.5 if scale is None else scale
        self.sink = sink
        bat = R.batches(cq, ck)
        self.numels = n1 * sum(b[1] * b[3] for b in bat)
        drop = None
        if keep_prob < 1:
            drop = R.dropout_mask(self.numels, keep_prob, seed, offset)
        np_mask = None if mask is None else mask.numpy()
        np_pse = None if pse is None else (pse[0], f64(pse[1]))
        np_sink = None if sink is None else sink.double().numpy()
        self.kw = dict(scale=self.scale, mode=mode, pre=pre, nxt=nxt, mask=np_mask, pse=np_pse,
                       drop=drop, keep_prob=keep_prob, sink=np_sink, prefix=prefix)
        o, m, l = R.forward(f64(self.q), f64(self.k), f64(self.v), cq, ck, **self.kw)
        self.o = torch.from_numpy(o).to(dtype)
        self.m32 = m.astype(np.float32)
        self.l32 = l.astype(np.float32)
        self.smax = torch.from_numpy(R.stats_tensor(self.m32, cq, layout))
        self.ssum = torch.from_numpy(R.stats_tensor(self.l32, cq, layout))
        self.args = dict(atten_mask=mask, pse=None if pse is None else pse[1],
                         softmax_max=self.smax, softmax_sum=self.ssum, attention_in=self.o,
                         scale_value=self.scale, keep_prob=keep_prob, pre_tockens=pre,
                         next_tockens=nxt, seed=seed, offset=offset, numels=self.numels,
                         prefix=prefix, actual_seq_qlen=self.cq, actual_seq_kvlen=self.ck,
                         sparse_mode=mode, softmax_layout=layout, sink=sink)

    def run(self, **over):
        args = dict(self.args, **over)
        return OP(self.q, self.k, self.v, self.dy, self.q.shape[1], "TND", **args)

    def reference(self, o=None):
        o = f64(self.o) if o is None else o
        return R.backward(f64(self.q), f64(self.k), f64(self.v), f64(self.dy), o,
                          self.m32.astype(np.float64), self.l32.astype(np.float64),
                          self.cq, self.ck, **self.kw)

    def check(self, result=None, o=None):
        dq, dk, dv, dpse, dsink = self.run() if result is None else result
        rq, rk, rv, rs = self.reference(o)
        assert dq.dtype == dk.dtype == dv.dtype == self.dtype
        R.check("dq", dq, rq, self.dtype)
        R.check("dk", dk, rk, self.dtype)
        R.check("dv", dv, rv, self.dtype)
        if self.sink is not None:
            assert dsink.shape == self.sink.shape and dsink.dtype == F32
            c = {F32: 1e-4, F16: 2e-3, BF16: 1e-2}[self.dtype]
            bound = c * self.dsink_scale() + 1e-7
            err = np.abs(dsink.double().numpy() - rs)
            assert (err <= bound).all(), (err, bound)
        else:
            assert dsink.numel() == 0
        if self.args["pse"] is not None:
            assert dpse.shape == self.args["pse"].shape
        else:
            assert dpse.numel() == 0
        return dq, dk, dv, dsink

    def dsink_scale(self):
        """Σ_{b,i} |Psink_i · Σ_j P_ij dP_ij| per head (the spec's dθ bound)."""
        return R.backward(f64(self.q), f64(self.k), f64(self.v), f64(self.dy), f64(self.o),
                          self.m32.astype(np.float64), self.l32.astype(np.float64),
                          self.cq, self.ck, sink_abs=True, **self.kw)[3]


# -- scenarios ---------------------------------------------------------------------------

def test_minimal_closed_form():
    # One query, one key: P = 1, O = v, so dS = dy·v − dy·O = 0: dq = dk = 0, dv = dy.
    q = torch.tensor([[[0.5]]])
    k = torch.tensor([[[-2.0]]])
    v = torch.tensor([[[3.0]]])
    dy = torch.tensor([[[0.25]]])
    s = 0.5 * -2.0
    st = dict(softmax_max=torch.full((1, 1, 8), s), softmax_sum=torch.ones(1, 1, 8))
    dq, dk, dv, dpse, dsink = OP(q, k, v, dy, 1, "TND", attention_in=v.clone(), **st,
                                 actual_seq_qlen=[1], actual_seq_kvlen=[1], softmax_layout="TND")
    assert dq.item() == 0.0 and dk.item() == 0.0 and dv.item() == 0.25
    assert dpse.shape == (0,) and dsink.shape == (0,) and dsink.dtype == F32


def test_varlen_empty_batches_and_tails():
    # q lengths [3,17,0,64,5], kv lengths [5,17,9,0,1] (sq > skv, sq < skv, empty
    # batches on both sides), then trailing (0, 0) batches.
    cq = list(np.cumsum([3, 17, 0, 64, 5, 0, 0]))
    ck = list(np.cumsum([5, 17, 9, 0, 1, 0, 0]))
    case = Case([int(x) for x in cq], [int(x) for x in ck], n1=2, n2=2)
    dq, dk, dv, _ = case.check()
    # The batch with skv = 0 gets dq = 0; the one with sq = 0 gets dk = dv = 0.
    assert dq[20:84].abs().max() == 0
    assert dk[22:31].abs().max() == 0 and dv[22:31].abs().max() == 0


def test_tokens_past_the_last_offset_get_zero_gradients():
    case = Case([4, 9], [6, 11], t1=12, t2=14, n1=2)
    dq, dk, dv, _ = case.check()
    assert dq[9:].abs().max() == 0 and dk[11:].abs().max() == 0 and dv[11:].abs().max() == 0


@pytest.mark.parametrize("n1,n2", [(8, 2), (4, 1)])
def test_gqa_and_mqa_with_a_sink_per_head(n1, n2):
    sink = torch.linspace(-1.0, 1.5, n1)
    Case([7, 20], [9, 30], n1=n1, n2=n2, d=8, sink=sink).check()


@pytest.mark.parametrize("mode,pre,nxt,cq,ck,prefix", [
    (2, BIG, 0, [5, 17], [9, 21], None),        # left-up causal, sq < skv then sq = skv
    (3, BIG, 0, [5, 11], [9, 18], None),        # right-down causal
    (4, 3, 1, [6, 20], [9, 20], None),          # band, sq > skv in the second batch
    (4, 2, -1, [7, 14], [7, 14], None),         # band with negative next tokens
    (6, BIG, 0, [5, 13], [9, 17], [4, 8]),      # prefix at skv - sq and at skv
    (6, BIG, 0, [6, 13], [4, 12], [0, 3]),      # prefix 0 where sq > skv
    (7, 6, -2, [3, 5], [3, 9], None),           # the document's mode-7 example
    (8, 4, 1, [3, 8, 12], [4, 9, 13], None),    # the document's mode-8 example
    (7, 9, 0, [3, 8, 8], [4, 9, 9], None),      # mode 7, band batch before an empty last
    (8, 9, 0, [0, 3, 8], [0, 4, 9], None),      # mode 8, band batch after an empty first
])
def test_compressed_sparse_modes(mode, pre, nxt, cq, ck, prefix):
    mask = torch.ones(3072, 2048, dtype=torch.bool) if mode == 6 else CMASK
    Case(cq, ck, n1=2, mode=mode, pre=pre, nxt=nxt, mask=mask, prefix=prefix).check()


def _explicit_mask(rng, shape, dtype, bat, n1):
    """An explicit mask of `shape` whose packed reading keeps the diagonal of
    every row (no fully masked rows)."""
    a = rng.random(shape) < 0.4
    flat = a.reshape(-1)
    if len(shape) == 2 or shape[0] == 1:
        np.fill_diagonal(a.reshape(shape[-2], shape[-1]), False)
    else:
        for b, (_, sq, _, skv, cnt) in enumerate(bat):
            heads = range(n1) if shape[1] > 1 else [0]
            for h in heads:
                base = (n1 * cnt + h * sq * skv) if shape[1] > 1 else cnt
                for i in range(min(sq, skv)):
                    flat[base + i * skv + i] = False
    return torch.from_numpy(a).to(dtype)


@pytest.mark.parametrize("form", ["2d", "1,1", "B,1", "B,N1"])
@pytest.mark.parametrize("mdtype", [torch.bool, torch.uint8])
def test_explicit_masks(form, mdtype):
    rng = np.random.default_rng(5)
    cq, ck, n1 = [6, 13], [8, 15], 2     # varlen: the batched forms are read packed
    bat = R.batches(cq, ck)
    sqm, skm, b = 7, 8, 2
    shape = {"2d": (sqm, skm), "1,1": (1, 1, sqm, skm), "B,1": (b, 1, sqm, skm),
             "B,N1": (b, n1, sqm, skm)}[form]
    mask = _explicit_mask(rng, shape, mdtype, bat, n1)
    Case(cq, ck, n1=n1, mode=1, mask=mask).check()


def test_mode0_explicit_mask_with_band():
    mask = torch.zeros(8, 8, dtype=torch.bool)
    mask[0, 5] = True
    Case([8, 16], [8, 16], mode=0, pre=2, nxt=1, mask=mask).check()
    Case([8, 16], [8, 16], mode=0, pre=5, nxt=-1, mask=mask).check()
    Case([8, 16], [8, 16], mode=0, pre=-1, nxt=4, mask=mask).check()


def _toeplitz_alibi(n1, bp, skvmax, dtype):
    """[Bp, N1, 1024, Skvmax], E[r][c] = g(r − c + Skvmax − 1024), g(d) = −α_h·|d|."""
    r = np.arange(1024)[:, None]
    c = np.arange(skvmax)[None, :]
    d = np.abs(r - c + skvmax - 1024)
    e = np.stack([np.stack([-(0.05 + 0.1 * h + 0.01 * b) * d for h in range(n1)])
                  for b in range(bp)])
    return torch.from_numpy(e).to(dtype)


@pytest.mark.parametrize("bp", [1, 2])
def test_pse_alibi_compressed(bp):
    cq, ck = [9, 21], [9, 21]
    pse = _toeplitz_alibi(2, bp, 12, F32)
    Case(cq, ck, n1=2, mode=3, mask=CMASK, pse=("alibi", pse)).check()


def test_pse_packed_1d_forms():
    rng = np.random.default_rng(3)
    cq, ck, n1 = [5, 12], [6, 15], 2
    kv = rand(rng, (n1 * 15,), F32)
    Case(cq, ck, n1=n1, pse=("kv", kv)).check()
    full = rand(rng, (n1 * (5 * 6 + 7 * 9),), F32)
    Case(cq, ck, n1=n1, pse=("full", full)).check()


def test_dropout_from_seed_offset_numels():
    # skv not multiples of 8: rows start inside bytes.
    case = Case([5, 12], [7, 18], n1=2, keep_prob=0.9, seed=1234, offset=17)
    case.check()
    # A longer mask (numels larger than needed) keeps the same leading bits.
    case.check(case.run(numels=case.numels + 1000))


def test_dropout_with_sink_and_gqa():
    Case([6, 15], [9, 19], n1=4, n2=2, keep_prob=0.8, seed=-77, offset=3,
         sink=torch.tensor([0.5, -0.5, 2.0, -3.0])).check()


def test_dropout_mask_generator_bits():
    for numels, kp, seed, off in ((1000, 0.9, 123, 0), (77, 0.5, -5, 10),
                                  (4099, 0.25, 2**62, 2**40)):
        mask = fag.dropout_gen_mask(numels, kp, seed, off)
        assert mask.dtype == torch.uint8 and mask.numel() == (numels + 127) // 128 * 16
        assert np.array_equal(mask.numpy(), R.dropout_mask(numels, kp, seed, off))
    bits = np.unpackbits(fag.dropout_gen_mask(200000, 0.7, 9, 0).numpy(), bitorder="little")
    assert abs(bits[:200000].mean() - 0.7) < 0.005 and not bits[200000:].any()


@pytest.mark.parametrize("theta", [8.0, -8.0])
def test_sink_extremes_and_fully_masked_rows(theta):
    # Mode 3 with sq > skv leaves the first rows without keys: with a sink they
    # have M = θ, L = 1, and give no gradient.
    Case([6, 10], [3, 7], n1=2, mode=3, mask=CMASK, sink=torch.full((2,), theta)).check()


@pytest.mark.parametrize("dtype", [F16, BF16])
def test_half_dtypes(dtype):
    Case([20, 45], [24, 40], n1=4, n2=2, d=32, dtype=dtype, mode=3, mask=CMASK,
         sink=torch.tensor([0.1, 0.2, -0.3, 0.0])).check()
    Case([13, 30], [17, 34], n1=2, d=16, dtype=dtype, keep_prob=0.85, seed=5, offset=0).check()


@pytest.mark.parametrize("d,dv", [(1, 1), (3, 3), (72, 40)])
def test_head_dims(d, dv):
    Case([5, 13], [6, 11], n1=2, d=d, dv=dv).check()


def test_softmax_layouts_agree():
    a = Case([4, 9, 16], [5, 12, 14], n1=3, layout="TND")
    b = Case([4, 9, 16], [5, 12, 14], n1=3, layout="")
    # Same data, same statistics, two memory arrangements: identical results.
    assert torch.equal(a.q, b.q) and not torch.equal(a.smax, b.smax)
    ra, rb = a.run(), b.run()
    for x, y in zip(ra[:3], rb[:3]):
        assert torch.equal(x, y)
    a.check(ra)


def test_inconsistent_attention_in():
    # Δ is taken from attention_in, dθ from Σ P·dP: an O that is not the forward's.
    case = Case([6, 14], [7, 16], n1=2, sink=torch.tensor([0.3, -0.2]))
    o2 = case.o * 0.5 + 0.1
    res = case.run(attention_in=o2)
    case.check(res, o=f64(o2))


def test_non_contiguous_inputs():
    case = Case([5, 12], [6, 15], n1=2, n2=2)
    q = case.q.transpose(0, 1).contiguous().transpose(0, 1)
    k = torch.empty(case.k.shape[0], 2, 24)[:, :, 4:20].copy_(case.k)
    assert not q.is_contiguous() and not k.is_contiguous()
    res = OP(q, k, case.v, case.dy, 2, "TND", **case.args)
    case.check(res)


def test_deterministic_and_inputs_untouched():
    case = Case([9, 30], [12, 28], n1=4, n2=2, sink=torch.zeros(4), keep_prob=0.9, seed=3)
    before = [t.clone() for t in (case.q, case.k, case.v, case.dy, case.o, case.smax)]
    r1, r2 = case.run(), case.run()
    for x, y in zip(r1, r2):
        assert torch.equal(x, y)
    for t, b in zip((case.q, case.k, case.v, case.dy, case.o, case.smax), before):
        assert torch.equal(t, b)


def test_several_threads():
    cases = [Case([5, 14], [7, 13], n1=2, seed_data=s, sink=torch.tensor([0.1, 0.4]))
             for s in range(4)]
    want = [c.run() for c in cases]
    got, errors = [None] * 8, []

    def work(i):
        try:
            got[i] = cases[i % 4].run()
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in range(8):
        for x, y in zip(got[i], want[i % 4]):
            assert torch.equal(x, y)


# -- Meta ----------------------------------------------------------------------------------

def test_meta_shapes():
    m = dict(device="meta")
    q = torch.empty(10, 4, 16, dtype=BF16, **m)
    k = torch.empty(12, 2, 16, dtype=BF16, **m)
    v = torch.empty(12, 2, 8, dtype=BF16, **m)
    dq, dk, dv, dpse, dsink = OP(q, k, v, torch.empty(10, 4, 8, dtype=BF16, **m), 4, "TND",
                                 pse=torch.empty(4 * 12, dtype=BF16, **m),
                                 sink=torch.empty(4, **m), actual_seq_qlen=[10],
                                 actual_seq_kvlen=[12])
    assert [t.device.type for t in (dq, dk, dv, dpse, dsink)] == ["meta"] * 5
    assert (dq.shape, dk.shape, dv.shape, dpse.shape, dsink.shape) == (
        (10, 4, 16), (12, 2, 16), (12, 2, 8), (48,), (4,))
    assert (dq.dtype, dpse.dtype, dsink.dtype) == (BF16, BF16, F32)
    _, _, _, dpse, dsink = OP(q, k, v, q, 4, "TND")
    assert dpse.shape == (0,) and dsink.shape == (0,) and dsink.dtype == F32


# -- bad input -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def good():
    return Case([5, 12], [6, 15], n1=2)


def _raises(exc, case, fn):
    """fn raises exc and leaves every tensor of the case as it was."""
    tensors = (case.q, case.k, case.v, case.dy, case.o, case.smax, case.ssum)
    before = [t.clone() for t in tensors]
    with pytest.raises(exc) as ei:
        fn()
    for t, b in zip(tensors, before):
        assert torch.equal(t, b)
    return ei.value


def test_wrong_kind_or_dtype_is_a_type_error(good):
    g = good
    for bad in (
            lambda: OP(g.q.double(), g.k, g.v, g.dy, 2, "TND", **g.args),
            lambda: OP(g.q, g.k.half(), g.v, g.dy, 2, "TND", **g.args),
            lambda: OP(g.q, g.k, g.v, g.dy, 2, "TND", **dict(g.args, softmax_max=g.smax.half())),
            lambda: OP(g.q, g.k, g.v, g.dy, 2, "TND", **dict(g.args, atten_mask=CMASK.int())),
            lambda: OP(g.q, g.k, g.v, g.dy, 2, "TND", **dict(g.args, sink=torch.zeros(2).half())),
            lambda: OP(g.q, g.k, g.v, g.dy, 2, "TND", **dict(g.args, attention_in=g.o.half())),
            # torch_npu's entry, given what the dispatcher would refuse with a RuntimeError.
            lambda: fag.npu_fusion_attention_grad(g.q.numpy(), g.k, g.v, g.dy, 2, "TND"),
            # Meta and CPU tensors mixed, through the operator and its CPU implementation.
            lambda: OP(g.q, g.k.to("meta"), g.v, g.dy, 2, "TND", **g.args),
            lambda: fag._cpu(g.q, g.k.to("meta"), g.v, g.dy, 2, "TND"),
    ):
        _raises(TypeError, g, bad)


def test_bad_values_are_value_errors(good):
    g = good
    for over, code in (
            (dict(keep_prob=0.0), None),
            (dict(keep_prob=1.5), None),
            (dict(sparse_mode=5), None),
            (dict(sparse_mode=9), None),
            (dict(actual_seq_qlen=[5, 13]), 161002),          # past T1
            (dict(actual_seq_kvlen=[6]), 161002),             # lengths differ
            (dict(actual_seq_qlen=None, actual_seq_kvlen=None), 161002),
            (dict(softmax_max=torch.zeros(12, 2, 4)), 161002),
            (dict(sparse_mode=3, atten_mask=torch.ones(64, 64, dtype=torch.bool)), 161002),
            (dict(sparse_mode=4, atten_mask=CMASK, pre_tockens=0, next_tockens=0), 161002),
            (dict(keep_prob=0.9, numels=8), 161002),          # mask shorter than needed
    ):
        err = _raises(ValueError, g, lambda: g.run(**over))
        if code is not None:
            assert isinstance(err, tilejit.ArgumentValueError) and err.status == code
    with pytest.raises(ValueError):
        OP(g.q, g.k[:, :, :8], g.v, g.dy, 2, "TND", **g.args)           # q.D != k.D
    with pytest.raises(ValueError):
        OP(g.q, g.k, g.v, g.dy, 3, "TND", **g.args)                      # head_num
    with pytest.raises(ValueError):
        OP(g.q, g.k, g.v, g.dy, 2, "XYZ", **g.args)                      # layout
    with pytest.raises(ValueError):
        OP(g.q, g.k, g.v, g.dy, 2, "BSND", **g.args)                     # not this route
    with pytest.raises(tilejit.Error):
        OP(g.q, g.k, g.v, g.dy, 2, "TND", **dict(g.args, attention_in=None))
