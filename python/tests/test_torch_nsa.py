"""torch.ops.tilejit.npu_nsa_compress_infer.cache (torch_npu's schema, aclnnNsaCompressWithCache)
against the NumPy references in ref_nsa.py, in every scenario of the spec
(nsa_compress_with_cache.md, sections 7 and 9) that torch_npu's schema can express, plus its
refusals (each leaving ``cache`` untouched), meta tensors and concurrent calls.

Each written row is checked twice: bit for bit against spec 3's float32 reduction order
(``ref_nsa.compress(exact=True)``), and against the float64 sum with the bound
``u |r| + 2 g + tiny``, where ``u`` is the output dtype's unit roundoff (2^-11 for fp16,
2^-8 for bf16: the final rounding), ``g = cbs * 2^-24 * sum |x w|`` bounds the float32
accumulation error of cbs terms (the products of fp16 values are exact in float32), and tiny
is the smallest subnormal of the output dtype. Rows not written must stay bit-identical.
"""
import math
import threading

import numpy as np
import pytest
import torch

import tilejit
from tilejit._ops import nsa_compress as nsa_mod

import ref_nsa

OP = torch.ops.tilejit.npu_nsa_compress_infer.cache
f16, bf16 = torch.float16, torch.bfloat16
UNIT = {f16: 2.0 ** -11, bf16: 2.0 ** -8}
TINY = {f16: 2.0 ** -24, bf16: 2.0 ** -133}


def bits(t):
    """The uint16 bit patterns of an fp16/bf16 tensor (any strides)."""
    return t.contiguous().view(torch.int16).numpy().view(np.uint16)


def f32(t):
    return t.detach().float().numpy()


def rand(gen, shape, dtype, lo=-2.0, hi=2.0):
    return (torch.rand(shape, generator=gen, dtype=torch.float64) * (hi - lo) + lo).to(dtype)


def make(*, dtype=f16, B=2, N=4, D=32, cbs=32, stride=16, P=64, lens=(48, 64), R=None,
         num_blocks=None, seed=0):
    """A valid call: random pages, a random table (every logical page mapped), unique
    shuffled slots, a random cache (so that stray writes show). Returns the kwargs."""
    gen = torch.Generator().manual_seed(seed)
    lens = list(lens)
    W = max(1, max(math.ceil(max(lens) / P), 1))
    NB = num_blocks or B * W
    R = R or B + 3
    table = torch.randperm(max(NB, B * W), generator=gen)[:B * W].remainder(NB)
    return dict(input=rand(gen, (NB, P, N, D), dtype), weight=rand(gen, (cbs, N), dtype, -1.0, 1.0),
                slot_mapping=torch.randperm(R, generator=gen)[:B].to(torch.int32),
                compress_block_size=cbs, compress_stride=stride, page_block_size=P,
                block_table=table.reshape(B, W).to(torch.int32), actual_seq_len=lens,
                cache=rand(gen, (R, N, D), dtype, -5.0, 5.0))


def call(kw, op=None):
    k = dict(kw)
    args = [k.pop(n) for n in ("input", "weight", "slot_mapping", "compress_block_size",
                               "compress_stride", "page_block_size")]
    return (op or nsa_mod.npu_nsa_compress_infer)(*args, **k)


def run(kw, op=None):
    """Calls the operator and checks ``cache`` against both references."""
    cache = kw["cache"]
    dtype = cache.dtype
    before = f32(cache)
    args = (f32(kw["input"]), f32(kw["weight"]), kw["slot_mapping"].numpy(), kw["actual_seq_len"],
            kw["block_table"].numpy(), kw["compress_block_size"], kw["compress_stride"],
            kw["page_block_size"])
    # inf and NaN inputs are part of the tests: IEEE arithmetic, no warnings.
    with np.errstate(over="ignore", invalid="ignore"):
        exact = ref_nsa.compress(*args, before, exact=True)
        wide = ref_nsa.compress(*args, before, exact=False)
        mag = ref_nsa.abs_sum(args[0], args[1], args[3], args[4], args[5], args[6], args[7],
                              cache.shape[0], args[2])
        want = (exact.astype(np.float16).view(np.uint16) if dtype == f16
                else ref_nsa.to_bf16_bits(exact))
    out = call(kw, op)
    assert out is cache
    got = bits(cache)
    nan = np.isnan(exact)
    np.testing.assert_array_equal(np.isnan(f32(cache)), nan)
    mismatch = (got != want) & ~nan
    assert not mismatch.any(), (
        f"{mismatch.sum()} elements differ from spec 3's order, first at "
        f"{np.argwhere(mismatch)[0]}: got {f32(cache)[mismatch][0]}, want {exact[mismatch][0]}")
    finite = np.isfinite(wide) & np.isfinite(exact)
    g = kw["compress_block_size"] * 2.0 ** -24 * mag
    bound = UNIT[dtype] * np.abs(wide) + 2 * g + TINY[dtype]
    # Rows written in float and not overflowing the output dtype agree with the float64 sum.
    ok = np.isfinite(f32(cache))
    with np.errstate(invalid="ignore"):
        err = np.abs(f32(cache).astype(np.float64) - wide)
    assert np.all((err <= bound)[finite & ok]), float(np.max((err - bound)[finite & ok]))
    return before


def written_rows(kw):
    rows = set()
    for b, s in enumerate(kw["actual_seq_len"]):
        if ref_nsa.qualifies(s, kw["compress_block_size"], kw["compress_stride"]):
            rows.add(int(kw["slot_mapping"][b]))
    return rows


# --- the spec's test matrix (section 9) -----------------------------------------------------

MATRIX = {
    "1-no-window": dict(dtype=f16, B=1, N=1, D=192, cbs=32, stride=16, P=128, lens=[43]),
    "2-one-window": dict(dtype=f16, B=1, N=1, D=192, cbs=32, stride=16, P=128, lens=[48]),
    "3-bf16-cbs16": dict(dtype=bf16, B=4, N=32, D=192, cbs=16, stride=16, P=128, lens=[144, 192, 144, 144]),
    "4-odd-n-max-d-max-cbs": dict(dtype=f16, B=2, N=37, D=256, cbs=64, stride=16, P=128, lens=[144, 192]),
    "5-cbs48": dict(dtype=bf16, B=4, N=13, D=256, cbs=48, stride=16, P=128, lens=[144, 192, 144, 144]),
    "6-n64": dict(dtype=f16, B=32, N=64, D=96, cbs=32, stride=16, P=128, num_blocks=3,
                  lens=[32 + 16 * (i % 9) + (i % 3 == 2) for i in range(32)]),
    "7-many-entries": dict(dtype=f16, B=64, N=1, D=192, cbs=48, stride=16, P=128,
                           lens=[48 + 16 * (i % 12) + 5 * (i % 4 == 3) for i in range(64)]),
    "8-page-crossing": dict(dtype=bf16, B=3, N=8, D=64, cbs=32, stride=16, P=64, lens=[80, 64, 70]),
    "9-nothing-qualifies": dict(dtype=f16, B=4, N=32, D=192, cbs=16, stride=16, P=128, lens=[1, 2, 3, 4]),
    "10-stride-eq-cbs": dict(dtype=f16, B=2, N=4, D=32, cbs=32, stride=32, P=64, lens=[32, 64]),
}


@pytest.mark.parametrize("name", sorted(MATRIX))
def test_matrix(name):
    kw = make(seed=len(name), **MATRIX[name])
    before = run(kw)
    rows = written_rows(kw)
    untouched = [r for r in range(kw["cache"].shape[0]) if r not in rows]
    np.testing.assert_array_equal(f32(kw["cache"])[untouched], before[untouched])
    if name in ("1-no-window", "9-nothing-qualifies"):
        assert not rows
    else:
        assert rows


@pytest.mark.parametrize("dtype", [f16, bf16])
@pytest.mark.parametrize("cbs,stride", [(16, 16), (32, 16), (32, 32), (48, 16), (48, 48),
                                        (64, 16), (64, 32), (64, 64)])
def test_every_window_shape(dtype, cbs, stride, P=64):
    lens = [cbs, cbs + stride, cbs + 2 * stride, cbs + 1]
    run(make(dtype=dtype, B=4, N=3, D=16, cbs=cbs, stride=stride, P=P, lens=lens,
             seed=cbs + stride))


def test_exact_order_is_visible():
    # A plain left-to-right float32 sum differs from spec 3's order on these inputs: the
    # bit-exact check above would catch an implementation summing in another order.
    kw = make(dtype=f16, B=2, N=8, D=64, cbs=64, stride=16, P=64, lens=[64, 128], seed=31)
    x, w = f32(kw["input"]), f32(kw["weight"])
    table = kw["block_table"].numpy()
    win = ref_nsa.gather_window(x, table, 1, 128, 64, 64)
    seq = np.zeros(win.shape[1:], np.float32)
    for t in range(64):
        seq = seq + win[t] * w[t][:, None]
    tree = ref_nsa.fold([ref_nsa.fold(win[8 * i:8 * i + 8] * w[8 * i:8 * i + 8, :, None])
                         for i in range(8)])
    assert np.any(seq.astype(np.float16) != tree.astype(np.float16))
    run(kw)


# --- edge cases (section 7) and value-level preconditions (section 5) -----------------------

def test_negative_and_short_lengths_write_nothing():
    kw = make(lens=[-16, 31, 33], B=3, seed=40)
    before = run(kw)
    np.testing.assert_array_equal(f32(kw["cache"]), before)


def test_duplicate_slots_later_entry_wins():
    kw = make(B=3, lens=[48, 64, 48], seed=41)
    kw["slot_mapping"] = torch.tensor([2, 2, 2], dtype=torch.int32)
    run(kw)


def test_out_of_range_slot_writes_nothing_for_that_entry():
    kw = make(B=3, lens=[48, 64, 48], R=4, seed=42)
    kw["slot_mapping"] = torch.tensor([1, 4, -1], dtype=torch.int32)
    before = run(kw)
    np.testing.assert_array_equal(f32(kw["cache"])[[0, 2, 3]], before[[0, 2, 3]])


def test_out_of_range_page_writes_nothing_for_that_entry():
    kw = make(B=3, lens=[48, 64, 20], seed=43)
    kw["block_table"][1, 0] = kw["input"].shape[0]  # entry 1's window needs page 0
    kw["block_table"][2, :] = -1                   # entry 2 does not qualify: never read
    before = run(kw)
    assert (f32(kw["cache"])[int(kw["slot_mapping"][1])] == before[int(kw["slot_mapping"][1])]).all()


def test_unused_table_entries_may_hold_anything():
    kw = make(B=2, lens=[48, 40], P=64, seed=44)
    kw["block_table"] = torch.cat([kw["block_table"], torch.tensor([[-5], [10 ** 6]], dtype=torch.int32)], 1)
    run(kw)


def test_first_window_and_page_crossing_with_permuted_table():
    kw = make(dtype=bf16, B=2, N=2, D=16, cbs=32, stride=16, P=64, lens=[32, 80], seed=45)
    kw["block_table"] = kw["block_table"].flip(1).contiguous()
    run(kw)


@pytest.mark.parametrize("dtype", [f16, bf16])
def test_nan_and_inf_propagate(dtype):
    kw = make(dtype=dtype, B=2, N=2, D=16, lens=[48, 64], seed=46)
    kw["input"][kw["block_table"][0, 0], 20, 0, 3] = float("inf")
    kw["input"][kw["block_table"][1, 0], 40, 1, 5] = float("nan")
    run(kw)
    c = kw["cache"].float()
    assert not torch.isfinite(c[int(kw["slot_mapping"][0]), 0, 3])
    assert torch.isnan(c[int(kw["slot_mapping"][1]), 1, 5])


def test_fp16_overflow_gives_inf():
    kw = make(dtype=f16, B=1, N=1, D=16, cbs=32, lens=[32], seed=47)
    kw["input"].fill_(60000.0)
    kw["weight"].fill_(1.0)
    run(kw)
    assert torch.isinf(kw["cache"][int(kw["slot_mapping"][0])]).all()


def test_bf16_extremes():
    kw = make(dtype=bf16, B=1, N=2, D=16, cbs=16, stride=16, lens=[16], seed=48)
    kw["input"][..., 0, :] = 3.0e38
    kw["input"][..., 1, :] = 1.0e-38
    run(kw)


def test_n1_and_d16_and_n64():
    run(make(B=2, N=1, D=16, lens=[48, 64], seed=49))
    run(make(B=1, N=64, D=16, lens=[48], seed=50))


def test_strided_views():
    gen = torch.Generator().manual_seed(51)
    kw = make(B=2, N=4, D=32, cbs=32, lens=[48, 64], seed=51)
    # input: every other channel of a wider page; weight: the transpose of an [N, cbs] tensor;
    # cache: every other row and a channel window of a larger tensor.
    wide_in = rand(gen, kw["input"].shape[:3] + (64,), f16)
    kw["input"] = wide_in[..., ::2]
    kw["weight"] = rand(gen, (4, 32), f16, -1.0, 1.0).t()
    big = rand(gen, (2 * 5, 4, 48), f16, -5.0, 5.0)
    kw["cache"] = big[::2, :, 8:40]
    assert not kw["input"].is_contiguous() and not kw["weight"].is_contiguous()
    assert not kw["cache"].is_contiguous()
    before = big.clone()
    run(kw)
    # Outside the view nothing changed: zero the view's elements in both and compare.
    after = big.clone()
    after[::2, :, 8:40] = 0
    before[::2, :, 8:40] = 0
    assert torch.equal(bits_t(after), bits_t(before))


def bits_t(t):
    return t.contiguous().view(torch.int16)


def test_self_overlapping_cache_is_refused_untouched():
    kw = make(seed=52)
    base = kw["cache"][:1].clone()
    kw["cache"] = base.expand(5, -1, -1)
    with pytest.raises(ValueError, match="overlap"):
        call(kw)
    assert torch.equal(bits_t(kw["cache"][0]), bits_t(base[0]))


# --- refusals: the right exception, status and an untouched cache --------------------------

def with_(kw, **over):
    k = dict(kw)
    k.update(over)
    return k


TYPE_ERRORS = {
    "fp32": lambda kw: with_(kw, input=kw["input"].float(), weight=kw["weight"].float(),
                             cache=kw["cache"].float()),
    "mixed-weight-bf16": lambda kw: with_(kw, weight=kw["weight"].to(bf16)),
    "mixed-cache-bf16": lambda kw: with_(kw, cache=kw["cache"].to(bf16)),
    "slot-int64": lambda kw: with_(kw, slot_mapping=kw["slot_mapping"].long()),
    "table-int64": lambda kw: with_(kw, block_table=kw["block_table"].long()),
}
VALUE_ERRORS = {
    "cbs-65": lambda kw: with_(kw, compress_block_size=65),
    "cbs-80": lambda kw: with_(kw, compress_block_size=80, weight=torch.zeros(80, 4, dtype=f16)),
    "stride-15": lambda kw: with_(kw, compress_stride=15),
    "stride-0": lambda kw: with_(kw, compress_stride=0),
    "cbs-lt-stride": lambda kw: with_(kw, compress_block_size=16, compress_stride=32,
                                      weight=torch.zeros(16, 4, dtype=f16)),
    "d-127": lambda kw: with_(kw, input=torch.zeros(4, 64, 4, 127, dtype=f16),
                              cache=torch.zeros(5, 4, 127, dtype=f16)),
    "d-272": lambda kw: with_(kw, input=torch.zeros(4, 64, 4, 272, dtype=f16),
                              cache=torch.zeros(5, 4, 272, dtype=f16)),
    "n-0": lambda kw: with_(kw, input=torch.zeros(4, 64, 0, 32, dtype=f16),
                            weight=torch.zeros(32, 0, dtype=f16), cache=torch.zeros(5, 0, 32, dtype=f16)),
    "n-66": lambda kw: with_(kw, input=torch.zeros(4, 64, 66, 16, dtype=f16),
                             weight=torch.zeros(32, 66, dtype=f16), cache=torch.zeros(5, 66, 16, dtype=f16)),
    "n-51": lambda kw: with_(kw, input=torch.zeros(4, 64, 51, 16, dtype=f16),
                             weight=torch.zeros(32, 51, dtype=f16), cache=torch.zeros(5, 51, 16, dtype=f16)),
    "page-32": lambda kw: with_(kw, input=torch.zeros(8, 32, 4, 32, dtype=f16), page_block_size=32,
                                block_table=torch.zeros(2, 2, dtype=torch.int32)),
    "page-size-mismatch": lambda kw: with_(kw, page_block_size=128),
    "b-2049": lambda kw: with_(kw, slot_mapping=torch.zeros(2049, dtype=torch.int32),
                               block_table=torch.zeros(2049, 1, dtype=torch.int32),
                               actual_seq_len=[1] * 2049),
    "weight-n-plus-1": lambda kw: with_(kw, weight=torch.zeros(32, 5, dtype=f16)),
    "weight-rows": lambda kw: with_(kw, weight=torch.zeros(16, 4, dtype=f16)),
    "cache-d": lambda kw: with_(kw, cache=torch.zeros(5, 4, 16, dtype=f16)),
    "cache-n": lambda kw: with_(kw, cache=torch.zeros(5, 3, 32, dtype=f16)),
    "cache-rank": lambda kw: with_(kw, cache=torch.zeros(5, 4 * 32, dtype=f16)),
    "input-rank": lambda kw: with_(kw, input=kw["input"].reshape(2, 64, 4 * 32)),
    "empty-input": lambda kw: with_(kw, input=torch.zeros(0, 64, 4, 32, dtype=f16)),
    "empty-cache": lambda kw: with_(kw, cache=torch.zeros(0, 4, 32, dtype=f16)),
    "no-table": lambda kw: with_(kw, block_table=None),
    "no-lengths": lambda kw: with_(kw, actual_seq_len=None),
    "slots-length": lambda kw: with_(kw, slot_mapping=kw["slot_mapping"][:1]),
    "table-dim0": lambda kw: with_(kw, block_table=kw["block_table"][:1]),
    "table-rank": lambda kw: with_(kw, block_table=kw["block_table"].reshape(-1)),
    "length-past-table": lambda kw: with_(kw, actual_seq_len=[48, 144]),
}


def refused(exc, status, mutate):
    kw = make(B=2, N=4, D=32, cbs=32, stride=16, P=64, lens=[48, 64], seed=60)
    kw = mutate(kw)
    cache = kw["cache"]
    before = cache.clone()
    with pytest.raises(exc) as info:
        call(kw)
    err = info.value
    assert isinstance(err, tilejit.Error), f"{type(err).__name__}: {err}"
    assert err.status == status, (err.status, str(err))
    assert "NsaCompressWithCache" in str(err)
    assert torch.equal(bits_t(cache), bits_t(before)), "a refused call wrote into cache"


@pytest.mark.parametrize("name", sorted(TYPE_ERRORS))
def test_type_errors(name):
    refused(TypeError, 161002, TYPE_ERRORS[name])


@pytest.mark.parametrize("name", sorted(VALUE_ERRORS))
def test_value_errors(name):
    refused(ValueError, 561002, VALUE_ERRORS[name])


def test_base_of_the_refusals_is_valid():
    run(make(B=2, N=4, D=32, cbs=32, stride=16, P=64, lens=[48, 64], seed=60))


@pytest.mark.parametrize("name", ["input", "weight", "slot_mapping", "block_table", "cache"])
def test_numpy_array_is_a_type_error(name):
    kw = make(seed=61)
    cache = kw["cache"]
    before = cache.clone()
    kw[name] = kw[name].numpy()
    with pytest.raises(TypeError, match=name):
        call(kw)
    if name != "cache":
        assert torch.equal(bits_t(cache), bits_t(before))


def test_meta_and_cpu_mixed_is_a_type_error():
    kw = make(seed=62)
    kw["weight"] = torch.empty(kw["weight"].shape, dtype=f16, device="meta")
    before = kw["cache"].clone()
    with pytest.raises(TypeError, match="meta"):
        call(kw)
    assert torch.equal(bits_t(kw["cache"]), bits_t(before))


def test_meta_returns_the_cache():
    m = lambda *s, dtype=f16: torch.empty(*s, dtype=dtype, device="meta")  # noqa: E731
    cache = m(9, 4, 32)
    out = OP(m(6, 64, 4, 32), m(32, 4), m(3, dtype=torch.int32), 32, 16, 64,
             block_table=m(3, 2, dtype=torch.int32), actual_seq_len=[48, 64, 80], cache=cache)
    assert out is cache and out.shape == (9, 4, 32) and out.dtype == f16
    out = nsa_mod.npu_nsa_compress_infer(m(6, 64, 4, 32, dtype=bf16), m(32, 4, dtype=bf16),
                                         m(3, dtype=torch.int32), 32, 16, 64,
                                         cache=m(9, 4, 32, dtype=bf16))
    assert out.device.type == "meta" and out.dtype == bf16


def test_through_torch_ops_directly():
    run(make(seed=63), op=lambda *a, **k: torch.ops.tilejit.npu_nsa_compress_infer(*a, **k))


# --- several threads at once ----------------------------------------------------------------

def test_threads():
    errors = []

    def work(i):
        try:
            for j in range(4):
                run(make(dtype=(f16, bf16)[i % 2], B=4, N=8, D=32, cbs=(32, 48)[j % 2], stride=16,
                         P=64, lens=[48, 64, 80, 96], seed=200 + 10 * i + j))
        except BaseException as e:  # reported in the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
