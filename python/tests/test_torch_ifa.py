"""torch.ops.tilejit.npu_incre_flash_attention (torch_npu's schema, aclnnIncreFlashAttentionV4)
against the float64 NumPy reference in ref_ifa.py, in every scenario of the spec
(incre_flash_attention_v4.md, section 11) that torch_npu's schema can express, plus its
refusals, meta tensors and concurrent calls.

Tolerances are the spec's acceptance bounds (section 7; see ref_ifa.check_float): about two
half-ulps of the output dtype relative to the result plus a term relative to the largest V
of the window for the float outputs, +-1 for INT8 outputs (the device's fp16 pipeline and
float32 rounding may move a value across a rounding boundary), exact zeros (or exact
quantize(0)) for empty windows.
"""
import math
import threading

import numpy as np
import pytest
import torch

import tilejit
from tilejit._ops import incre_flash_attention as ifa_mod

import ref_ifa

OP = torch.ops.tilejit.npu_incre_flash_attention
DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}
f16, bf16, i8 = torch.float16, torch.bfloat16, torch.int8


def f64(t):
    return t.detach().to(torch.float64).numpy()


def rand(gen, shape, dtype, lo=-2.0, hi=2.0):
    if dtype == torch.int8:
        return torch.randint(-128, 128, shape, generator=gen, dtype=torch.int8)
    return (torch.rand(shape, generator=gen, dtype=torch.float64) * (hi - lo) + lo).to(dtype)


def lay_query(q, layout):
    """(B, N, D) -> the query of ``layout`` (S = 1)."""
    B, N, D = q.shape
    return {"BSH": q.reshape(B, 1, N * D), "BNSD": q.reshape(B, N, 1, D),
            "BSND": q.reshape(B, 1, N, D)}[layout]


def lay_kv(k, layout):
    """Logical (B, Nkv, S, D) -> the contiguous KV tensor of ``layout``."""
    B, Nkv, S, D = k.shape
    if layout == "BNSD":
        return k.contiguous()
    bsnd = k.permute(0, 2, 1, 3).contiguous()
    return bsnd if layout == "BSND" else bsnd.reshape(B, S, Nkv * D)


def make_paged(gen, B, Nkv, D, bs, lens, dtype, *, four_d, shared=False, spare=True):
    """A physical block cache and table holding ``lens`` tokens per batch: shuffled block
    ids, -1 in unused table slots (and a spare column of them unless ``spare`` is False),
    optionally batch 1 reusing batch 0's first block. Returns
    (key cache, value cache, table, logical key, logical value); the logical arrays are
    (B, Nkv, capacity, D) gathered back through the table (zeros where no block is mapped)."""
    need = [math.ceil(L / bs) for L in lens]
    width = max(need) + spare
    NB = sum(need) + 3
    ids = torch.randperm(NB, generator=gen).tolist()
    table = torch.full((B, width), -1, dtype=torch.int32)
    it = iter(ids)
    for b in range(B):
        for j in range(need[b]):
            table[b, j] = next(it)
    if shared and B > 1 and need[0] and need[1]:
        table[1, 0] = table[0, 0]
    caches, logical = [], []
    for _ in range(2):
        phys = rand(gen, (NB, bs, Nkv, D), dtype)  # [block, row, head, d]
        log = torch.zeros((B, Nkv, width * bs, D), dtype=dtype)
        for b in range(B):
            for j in range(width):
                blk = int(table[b, j])
                if blk >= 0:
                    log[b, :, j * bs:(j + 1) * bs, :] = phys[blk].permute(1, 0, 2)
        caches.append(phys.permute(0, 2, 1, 3).contiguous() if four_d
                      else phys.reshape(NB, bs, Nkv * D))
        logical.append(log)
    return caches[0], caches[1], table, logical[0], logical[1]


ANTIQUANT_FORMS = {
    "tensor": lambda Nkv, D: (2,),
    "2NkvD": lambda Nkv, D: (2, Nkv, D),
    "2Nkv1D": lambda Nkv, D: (2, Nkv, 1, D),
    "21NkvD": lambda Nkv, D: (2, 1, Nkv, D),
    "2Hkv": lambda Nkv, D: (2, Nkv * D),
}
QUANT_FORMS = {
    "tensor": lambda N, D: (1,),
    "ND": lambda N, D: (N * D,), "1ND": lambda N, D: (1, N * D), "11ND": lambda N, D: (1, 1, N * D),
    "N,D": lambda N, D: (N, D), "N1D": lambda N, D: (N, 1, D), "1N,D": lambda N, D: (1, N, D),
    "1N1D": lambda N, D: (1, N, 1, D), "11N,D": lambda N, D: (1, 1, N, D),
}


def run(*, dtype="float16", layout="BNSD", B=2, N=4, Nkv=2, D=16, S=24, kv_int8=False,
        asl=None, mask=None, pse=None, kv_pad=None, paged=None, antiquant=None, quant=None,
        scale=None, pass_nkv=True, inner_precise=1, seed=0, call=None):
    """Builds one call from logical data, runs it and checks it against ref_ifa.

    mask: (form, dtype, fill) with form "2d"/"3d"/"4d" and fill "random", "full" or
      "random2" (uint8 value 2 for masked); pse: "B" or "1" (its dim0); kv_pad: the
      kvPaddingSize value; paged: dict(bs=, four_d=, shared=); antiquant: (form, offset?);
      quant: (form, offset?, param dtype). Returns the output tensor.
    """
    gen = torch.Generator().manual_seed(seed)
    qdt = DTYPES[dtype]
    kvdt = torch.int8 if kv_int8 else qdt
    asl_list = None if asl is None else [int(x) for x in asl]
    scale = 1.0 / math.sqrt(D) if scale is None else scale
    q = rand(gen, (B, N, D), qdt)
    kw = dict(num_heads=N, scale_value=scale, input_layout=layout,
              num_key_value_heads=Nkv if pass_nkv else 0, inner_precise=inner_precise)
    if paged is not None:
        lens = asl_list if len(asl_list) > 1 else asl_list * B
        kc, vc, table, K, V = make_paged(gen, B, Nkv, D, paged["bs"], lens, kvdt,
                                        four_d=paged["four_d"], shared=paged.get("shared", False),
                                        spare=paged.get("spare", True))
        S = K.shape[2]
        kw.update(block_table=table, block_size=paged["bs"])
        key, value = kc, vc
    else:
        K, V = rand(gen, (B, Nkv, S, D), kvdt), rand(gen, (B, Nkv, S, D), kvdt)
        key, value = lay_kv(K, layout), lay_kv(V, layout)
    if asl is not None:
        kw["actual_seq_lengths"] = asl

    sc_k = sc_v = off_k = off_v = None
    if antiquant is not None:
        form, with_offset = antiquant
        shape = ANTIQUANT_FORMS[form](Nkv, D)
        sc = rand(gen, shape, qdt, 0.005, 0.03)
        kw["antiquant_scale"] = sc
        flat = f64(sc).reshape(2, -1)
        sc_k, sc_v = [np.broadcast_to(flat[i].reshape(-1, D) if flat.shape[1] > 1 else flat[i],
                                      (Nkv, D)) for i in (0, 1)]
        if with_offset:
            off = rand(gen, shape, qdt, -20.0, 20.0)
            kw["antiquant_offset"] = off
            oflat = f64(off).reshape(2, -1)
            off_k, off_v = [np.broadcast_to(oflat[i].reshape(-1, D) if oflat.shape[1] > 1
                                            else oflat[i], (Nkv, D)) for i in (0, 1)]
    Kd = ref_ifa.dequant(f64(K), sc_k, off_k)
    Vd = ref_ifa.dequant(f64(V), sc_v, off_v)

    mask_np = None
    if mask is not None:
        form, mdt, fill = mask
        Sm = S + 5
        bits = torch.rand((B, Sm), generator=gen) < 0.3
        if fill == "full":
            bits[:] = True
        vals = (bits.to(torch.uint8) * (2 if fill == "random2" else 1)).to(mdt)
        shape = {"2d": (B, Sm), "3d": (B, 1, Sm), "4d": (B, 1, 1, Sm)}[form]
        kw["atten_mask"] = vals.reshape(shape)
        mask_np = bits.numpy()
    pse_np = None
    if pse is not None:
        PB = B if pse == "B" else 1
        p = rand(gen, (PB, N, 1, S + 3), qdt, -3.0, 3.0)
        kw["pse_shift"] = p
        pse_np = f64(p)[:, :, 0, :]
    pad_active = None
    if kv_pad is not None:
        kw["kv_padding_size"] = torch.tensor([kv_pad], dtype=torch.int64)
        if asl_list and paged is None:
            pad_active = kv_pad

    sc2 = off2 = None
    if quant is not None:
        form, with_offset, pdt = quant
        shape = QUANT_FORMS[form](N, D)
        pt = {"float32": torch.float32, "bfloat16": torch.bfloat16}[pdt]
        s2 = rand(gen, shape, pt, 20.0, 60.0)
        kw["quant_scale2"] = s2
        sc2 = f64(s2).reshape(-1)
        sc2 = sc2[0] if sc2.size == 1 else sc2.reshape(N, D)
        off2 = 0.0
        if with_offset:
            # k + 0.25 offsets: no rounding ties in quantize(0) (an exact expectation).
            o2 = (torch.randint(-10, 10, shape, generator=gen).to(torch.float64) + 0.25).to(pt)
            kw["quant_offset2"] = o2
            off2 = f64(o2).reshape(-1)
            off2 = off2[0] if off2.size == 1 else off2.reshape(N, D)

    query = lay_query(q, layout)
    out = (call or OP)(query, key, value, **kw)
    assert out.shape == query.shape
    assert out.dtype == (torch.int8 if quant is not None else qdt)

    wins = ref_ifa.windows(B, S, asl_list, pad_active)
    ref, amax = ref_ifa.attention(f64(q), Kd, Vd, scale=float(np.float32(scale)), wins=wins,
                                  G=N // Nkv, mask=mask_np, pse=pse_np)
    o = f64(out).reshape(B, N, D)
    if quant is None:
        msg = ref_ifa.check_float(o, ref, amax, dtype)
        assert msg is None, msg
    else:
        empty = np.isnan(ref)
        zero_q = np.broadcast_to(np.clip(np.rint(np.asarray(off2, np.float64)), -128, 127),
                                 (B, N, D))
        np.testing.assert_array_equal(o[empty], zero_q[empty])
        qref = ref_ifa.quantize(np.where(empty, 0.0, ref), sc2, off2)
        diff = np.abs(o - qref)[~empty]
        assert diff.size == 0 or diff.max() <= 1, f"int8 output off by {diff.max()}"
        # Saturation, never wrap-around: far outside the range is exactly the bound.
        raw = np.where(empty, 0.0, ref) * sc2 + off2
        assert np.all(o[(raw > 200) & ~empty] == 127) and np.all(o[(raw < -200) & ~empty] == -128)
    return out


# --- The document example and the layouts ---------------------------------------------------

def test_document_example_all_ones():
    q = torch.ones(1, 2, 1, 16, dtype=torch.float16)
    k = torch.ones(1, 2, 16, 16, dtype=torch.float16)
    mask = torch.zeros(1, 1, 1, 16, dtype=torch.int8)
    out = OP(q, k, k, atten_mask=mask, num_heads=2, scale_value=0.25, input_layout="BNSD")
    assert out.dtype == torch.float16 and out.shape == (1, 2, 1, 16)
    assert torch.equal(out, torch.ones_like(out))


@pytest.mark.parametrize("layout", ["BSH", "BNSD", "BSND"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_layouts(layout, dtype):
    for seed in (1, 2):
        run(layout=layout, dtype=dtype, seed=seed)


def test_layouts_agree_bitwise():
    res = {lay: run(layout=lay, seed=7).reshape(-1) for lay in ("BSH", "BNSD", "BSND")}
    assert torch.equal(res["BSH"], res["BNSD"]) and torch.equal(res["BNSD"], res["BSND"])


@pytest.mark.parametrize("D", [16, 64, 128, 256, 512])
def test_head_dims(D):
    run(D=D, N=2, Nkv=1, S=17, dtype="float16" if D % 128 else "bfloat16", seed=D)


@pytest.mark.parametrize("S", [1, 17, 1000])
def test_sequence_lengths(S):
    run(S=S, B=1, N=2, Nkv=2, seed=S)


@pytest.mark.parametrize("S,D", [(8192, 64), (65536, 16)])
def test_long_sequence_is_split_and_deterministic(S, D):
    a = run(B=1, N=2, Nkv=1, D=D, S=S, seed=3)
    b = run(B=1, N=2, Nkv=1, D=D, S=S, seed=3)
    assert torch.equal(a, b)


def test_batch_limit():
    # S = 1: the softmax has one weight, so the output is exactly V.
    gen = torch.Generator().manual_seed(2)
    q = rand(gen, (65536, 1, 16), f16)
    v = rand(gen, (65536, 1, 16), f16)
    assert torch.equal(OP(q, q, v, num_heads=1), v)
    q = torch.zeros(65537, 1, 16, dtype=f16)
    with pytest.raises(ValueError, match="65536"):
        OP(q, q, q, num_heads=1)


def test_large_scale_does_not_overflow():
    run(scale=300.0, S=40, seed=4)


# --- GQA ---------------------------------------------------------------------------------

@pytest.mark.parametrize("N,Nkv", [(4, 4), (4, 2), (8, 1), (64, 1)])
def test_gqa(N, Nkv):
    run(N=N, Nkv=Nkv, D=16, S=20, B=2, seed=N * 10 + Nkv)


def test_num_key_value_heads_zero_means_num_heads():
    run(N=3, Nkv=3, pass_nkv=False, seed=5)


# --- actual_seq_lengths ----------------------------------------------------------------------

@pytest.mark.parametrize("asl", [[13], [0, 24], [24, 5], [3, 7, 99], [0]])
def test_actual_seq_lengths(asl):
    run(asl=asl, S=24, seed=len(asl) + asl[0])


def test_actual_seq_lengths_as_a_tensor():
    # The dispatcher turns an int64 tensor into the SymInt[] list, as torch_npu's does.
    run(asl=torch.tensor([5, 9]), seed=6)


# --- masks and pse ---------------------------------------------------------------------------

@pytest.mark.parametrize("form", ["2d", "3d", "4d"])
@pytest.mark.parametrize("mdt", [torch.bool, torch.int8, torch.uint8])
def test_masks(form, mdt):
    run(mask=(form, mdt, "random"), asl=[20, 11], seed=int(form[0]) * 7 + len(str(mdt)))


def test_mask_nonzero_byte_masks_and_full_row_gives_mean_of_v():
    run(mask=("2d", torch.uint8, "random2"), seed=8)
    out = run(mask=("3d", torch.bool, "full"), asl=[7, 3], seed=9)
    assert torch.isfinite(out.float()).all()


@pytest.mark.parametrize("pb", ["B", "1"])
def test_pse_after_scale(pb):
    run(pse=pb, scale=0.5, seed=10)


def test_pse_on_masked_positions_has_no_effect():
    run(pse="B", mask=("2d", torch.bool, "random"), asl=[24, 17], scale=0.5, seed=11)


# --- KV left padding ----------------------------------------------------------------------

@pytest.mark.parametrize("pad", [5, -3, 60, 14])
def test_kv_left_padding(pad):
    run(S=64, asl=[10], kv_pad=pad, mask=("2d", torch.int8, "random"), pse="B", seed=12)


def test_kv_padding_ignored_without_actual_seq_lengths():
    run(S=30, kv_pad=7, seed=13)


# --- page attention ---------------------------------------------------------------------------

@pytest.mark.parametrize("four_d", [False, True])
@pytest.mark.parametrize("bs", [16, 128])
def test_paged(four_d, bs):
    run(paged=dict(bs=bs, four_d=four_d, shared=True), asl=[bs + 3, 2 * bs],
        layout="BNSD" if four_d else "BSH", seed=bs + four_d)


@pytest.mark.parametrize("layout", ["BSH", "BSND"])
def test_paged_3d_cache_with_any_query_layout(layout):
    run(paged=dict(bs=16, four_d=False), asl=[33, 16, 1], B=3, layout=layout, seed=14)


def test_paged_with_mask_pse_and_ignored_left_padding():
    run(paged=dict(bs=16, four_d=True), asl=[40, 9], mask=("4d", torch.bool, "random"),
        pse="1", kv_pad=5, seed=15)


def test_paged_lengths_fill_the_table_exactly():
    run(paged=dict(bs=16, four_d=True, spare=False), asl=[48, 32], seed=29)


def test_paged_block_size_512():
    run(paged=dict(bs=512, four_d=True), asl=[600], B=1, N=2, Nkv=1, D=16, seed=16)


# --- INT8 KV (antiquant) -------------------------------------------------------------------

@pytest.mark.parametrize("form", sorted(ANTIQUANT_FORMS))
@pytest.mark.parametrize("with_offset", [False, True])
def test_antiquant(form, with_offset):
    layout = {"2Nkv1D": "BNSD", "21NkvD": "BNSD", "2NkvD": "BSND", "2Hkv": "BSH"}.get(form, "BNSD")
    run(kv_int8=True, antiquant=(form, with_offset), layout=layout, seed=17)


def test_antiquant_bf16_with_gqa_paged_and_mask():
    run(dtype="bfloat16", kv_int8=True, antiquant=("2Nkv1D", True), N=8, Nkv=2,
        paged=dict(bs=32, four_d=True), asl=[70, 32], mask=("2d", torch.bool, "random"), seed=18)


def test_antiquant_paged_block_size_128():
    run(kv_int8=True, antiquant=("2Hkv", True), paged=dict(bs=128, four_d=False), asl=[130],
        layout="BSH", B=1, seed=19)


# --- INT8 output (post-quantization) -------------------------------------------------------

@pytest.mark.parametrize("form", sorted(QUANT_FORMS))
def test_quant_out_forms(form):
    run(quant=(form, True, "float32"), asl=[24, 0], seed=20)


@pytest.mark.parametrize("dtype,pdt", [("float16", "float32"), ("bfloat16", "float32"),
                                       ("bfloat16", "bfloat16")])
@pytest.mark.parametrize("with_offset", [False, True])
def test_quant_out_dtypes(dtype, pdt, with_offset):
    run(dtype=dtype, quant=("tensor", with_offset, pdt), asl=[0, 19], seed=21)
    run(dtype=dtype, quant=("N,D", with_offset, pdt), asl=[0, 19], seed=22)


def test_quant_out_with_int8_kv_and_paged():
    run(kv_int8=True, antiquant=("tensor", True), quant=("1N1D", True, "float32"),
        paged=dict(bs=32, four_d=False), asl=[40, 64], layout="BSH", seed=23)


@pytest.mark.parametrize("form", ["tensor", "N,D"])
def test_quant_out_saturates(form):
    # V is +-100 per batch, so the attention result is exactly +-100 and x * 10 saturates.
    gen = torch.Generator().manual_seed(24)
    q = rand(gen, (2, 4, 1, 16), f16)
    k = rand(gen, (2, 2, 8, 16), f16)
    v = torch.full((2, 2, 8, 16), 100.0, dtype=f16)
    v[1] = -100.0
    out = OP(q, k, v, num_heads=4, num_key_value_heads=2, input_layout="BNSD",
             quant_scale2=torch.full(QUANT_FORMS[form](4, 16), 10.0))
    assert out.dtype == torch.int8
    assert torch.all(out[0] == 127) and torch.all(out[1] == -128)


# --- empty optional tensors, inner_precise ----------------------------------------------------

def test_empty_optional_tensors_are_absent():
    e = torch.empty(0)
    run(call=lambda *a, **k: OP(*a, dequant_scale1=e, quant_scale1=e, dequant_scale2=e,
                                padding_mask=e, **k), seed=25)


def test_inner_precise_zero_and_one_agree():
    a = run(inner_precise=0, kv_int8=True, antiquant=("2NkvD", True), seed=26)
    b = run(inner_precise=1, kv_int8=True, antiquant=("2NkvD", True), seed=26)
    assert torch.equal(a, b)


def test_padding_mask_is_reserved_and_ignored():
    a = run(seed=27)
    b = run(seed=27, call=lambda *x, **k: OP(*x, padding_mask=torch.ones(2, 24), **k))
    assert torch.equal(a, b)


def test_strided_views_are_accepted():
    gen = torch.Generator().manual_seed(28)
    B, N, D, S = 2, 2, 16, 12
    big_q = rand(gen, (B, N, 1, 2 * D), torch.float16)
    big_k = rand(gen, (B, N, S, 2 * D), torch.float16)
    big_v = rand(gen, (B, N, S, 2 * D), torch.float16)
    q, k, v = big_q[..., ::2], big_k[..., 1::2], big_v[..., :D]
    assert not q.is_contiguous()
    out = OP(q, k, v, num_heads=N, scale_value=0.3, input_layout="BNSD")
    ref = OP(q.contiguous(), k.contiguous(), v.contiguous(), num_heads=N, scale_value=0.3,
             input_layout="BNSD")
    assert torch.equal(out, ref)


# --- refusals ---------------------------------------------------------------------------------

def base(**over):
    """A valid small BNSD call's arguments, with ``over`` replacing some."""
    gen = torch.Generator().manual_seed(99)
    B, N, D, S = 2, 4, 16, 8
    args = dict(query=rand(gen, (B, N, 1, D), torch.float16),
                key=rand(gen, (B, 2, S, D), torch.float16),
                value=rand(gen, (B, 2, S, D), torch.float16),
                num_heads=N, num_key_value_heads=2, input_layout="BNSD", scale_value=0.25)
    args.update(over)
    return args


def call(args):
    a = dict(args)
    return ifa_mod.npu_incre_flash_attention(a.pop("query"), a.pop("key"), a.pop("value"), **a)


def test_base_call_is_valid():
    assert call(base()).shape == (2, 4, 1, 16)


TYPE_ERRORS = {
    "query-fp32": dict(query=torch.zeros(2, 4, 1, 16)),
    "kv-bf16-q-fp16": dict(key=torch.zeros(2, 2, 8, 16, dtype=bf16),
                           value=torch.zeros(2, 2, 8, 16, dtype=bf16)),
    "key-value-dtypes-differ": dict(value=torch.zeros(2, 2, 8, 16, dtype=i8)),
    "all-int8": dict(query=torch.zeros(2, 4, 1, 16, dtype=i8), key=torch.zeros(2, 2, 8, 16, dtype=i8),
                     value=torch.zeros(2, 2, 8, 16, dtype=i8),
                     antiquant_scale=torch.ones(2, dtype=f16)),
    "mask-fp16": dict(atten_mask=torch.zeros(2, 8, dtype=f16)),
    "pse-dtype": dict(pse_shift=torch.zeros(2, 4, 1, 8, dtype=bf16)),
    "antiquant-fp32": dict(key=torch.zeros(2, 2, 8, 16, dtype=i8), value=torch.zeros(2, 2, 8, 16, dtype=i8),
                           antiquant_scale=torch.ones(2)),
    "quant2-bf16-fp16-query": dict(quant_scale2=torch.ones(1, dtype=bf16)),
    "quant-offset-dtype": dict(quant_scale2=torch.ones(1), quant_offset2=torch.ones(1, dtype=bf16)),
    "block-table-int64": dict(block_table=torch.zeros(2, 1, dtype=torch.int64), block_size=16,
                              actual_seq_lengths=[4], key=torch.zeros(3, 16, 32, dtype=f16),
                              value=torch.zeros(3, 16, 32, dtype=f16), input_layout="BSH",
                              query=torch.zeros(2, 1, 64, dtype=f16)),
    "kv-padding-int32": dict(kv_padding_size=torch.zeros(1, dtype=torch.int32), actual_seq_lengths=[4]),
}

VALUE_ERRORS = {
    "asl-2-of-3": dict(query=torch.zeros(3, 4, 1, 16, dtype=f16), key=torch.zeros(3, 2, 8, 16, dtype=f16),
                       value=torch.zeros(3, 2, 8, 16, dtype=f16), actual_seq_lengths=[1, 2]),
    "asl-negative": dict(actual_seq_lengths=[-1]),
    "asl-past-S": dict(actual_seq_lengths=[9]),
    "mask-dim0": dict(atten_mask=torch.zeros(1, 8, dtype=torch.bool)),
    "mask-narrow": dict(atten_mask=torch.zeros(2, 7, dtype=torch.bool)),
    "mask-per-head": dict(atten_mask=torch.zeros(2, 4, 1, 8, dtype=torch.bool)),
    "pse-narrow": dict(pse_shift=torch.zeros(2, 4, 1, 7, dtype=f16)),
    "pse-heads": dict(pse_shift=torch.zeros(2, 3, 1, 8, dtype=f16)),
    "pse-rank3": dict(pse_shift=torch.zeros(2, 4, 8, dtype=f16)),
    "layout-TND": dict(input_layout="TND"),
    "layout-lowercase": dict(input_layout="bnsd"),
    "query-S2": dict(query=torch.zeros(2, 4, 2, 16, dtype=f16)),
    "num-heads-mismatch": dict(num_heads=2),
    "nkv-not-divisor": dict(num_heads=4, num_key_value_heads=3),
    "nkv-gt-n": dict(num_key_value_heads=8),
    "group-65": dict(query=torch.zeros(1, 65, 1, 16, dtype=f16), key=torch.zeros(1, 1, 8, 16, dtype=f16),
                     value=torch.zeros(1, 1, 8, 16, dtype=f16), num_heads=65, num_key_value_heads=1),
    "d-513": dict(query=torch.zeros(1, 1, 1, 513, dtype=f16), key=torch.zeros(1, 1, 8, 513, dtype=f16),
                  value=torch.zeros(1, 1, 8, 513, dtype=f16), num_heads=1, num_key_value_heads=1),
    "inner-precise-2": dict(inner_precise=2),
    "inner-precise-neg": dict(inner_precise=-1),
    "kv-shape-mismatch": dict(value=torch.zeros(2, 2, 9, 16, dtype=f16)),
    "kv-batch": dict(key=torch.zeros(3, 2, 8, 16, dtype=f16), value=torch.zeros(3, 2, 8, 16, dtype=f16)),
    "dequant-scale1": dict(dequant_scale1=torch.ones(1)),
    "quant-scale1": dict(quant_scale1=torch.ones(1)),
    "dequant-scale2": dict(dequant_scale2=torch.ones(1)),
    "int8-kv-no-scale": dict(key=torch.zeros(2, 2, 8, 16, dtype=i8), value=torch.zeros(2, 2, 8, 16, dtype=i8)),
    "antiquant-fp16-kv": dict(antiquant_scale=torch.ones(2, dtype=f16)),
    "antiquant-offset-no-scale": dict(key=torch.zeros(2, 2, 8, 16, dtype=i8), value=torch.zeros(2, 2, 8, 16, dtype=i8),
                                      antiquant_offset=torch.ones(2, dtype=f16)),
    "antiquant-offset-shape": dict(key=torch.zeros(2, 2, 8, 16, dtype=i8), value=torch.zeros(2, 2, 8, 16, dtype=i8),
                                   antiquant_scale=torch.ones(2, 2, 16, dtype=f16),
                                   antiquant_offset=torch.ones(2, dtype=f16)),
    "quant-offset-without-scale": dict(quant_offset2=torch.ones(1)),
    "quant-scale-rank5": dict(quant_scale2=torch.ones(1, 1, 1, 4, 16)),
    "quant-offset-shape": dict(quant_scale2=torch.ones(4, 16), quant_offset2=torch.ones(1)),
}

PAGED = dict(query=torch.zeros(2, 4, 1, 16, dtype=f16), key=torch.zeros(4, 2, 16, 16, dtype=f16),
             value=torch.zeros(4, 2, 16, 16, dtype=f16), block_table=torch.tensor([[0, 1], [2, 3]], dtype=torch.int32),
             block_size=16, actual_seq_lengths=[20, 32])
PAGED_ERRORS = {
    "bs-0": dict(block_size=0), "bs-8": dict(block_size=8), "bs-528": dict(block_size=528),
    "no-asl": dict(actual_seq_lengths=None),
    "capacity": dict(actual_seq_lengths=[20, 33]),
    "4d-with-bsh": dict(input_layout="BSH", query=torch.zeros(2, 1, 64, dtype=f16)),
    "table-dim0": dict(block_table=torch.tensor([[0, 1]], dtype=torch.int32)),
    "int8-bs-16": dict(key=torch.zeros(4, 2, 16, 16, dtype=i8), value=torch.zeros(4, 2, 16, 16, dtype=i8),
                       antiquant_scale=torch.ones(2, dtype=f16)),
    # Nkv * D = 128 * 512 = 65536 in a 3-D cache (every other rule holds).
    "hkv-65536": dict(input_layout="BSH", query=torch.zeros(2, 1, 65536, dtype=f16),
                      key=torch.zeros(2, 16, 65536, dtype=f16), value=torch.zeros(2, 16, 65536, dtype=f16),
                      num_heads=128, num_key_value_heads=128, actual_seq_lengths=[4],
                      block_table=torch.tensor([[0], [1]], dtype=torch.int32)),
}


def expect(exc, args):
    with pytest.raises(exc) as info:
        call(args)
    err = info.value
    assert isinstance(err, tilejit.Error), f"{type(err).__name__} is not a tilejit.Error: {err}"
    assert err.status in (161001, 161002, 561002), err.status
    assert "IncreFlashAttentionV4" in str(err), str(err)
    return err


@pytest.mark.parametrize("name", sorted(TYPE_ERRORS))
def test_type_errors(name):
    expect(TypeError, base(**TYPE_ERRORS[name]))


@pytest.mark.parametrize("name", sorted(VALUE_ERRORS))
def test_value_errors(name):
    expect(ValueError, base(**VALUE_ERRORS[name]))


@pytest.mark.parametrize("name", sorted(PAGED_ERRORS))
def test_paged_errors(name):
    expect(ValueError, base(**{**PAGED, **PAGED_ERRORS[name]}))


def test_paged_base_is_valid():
    assert call(base(**PAGED)).shape == (2, 4, 1, 16)


@pytest.mark.parametrize("bad", [-1, 4, 1000])
def test_block_id_out_of_range(bad):
    table = torch.tensor([[0, 1], [2, bad]], dtype=torch.int32)
    expect(ValueError, base(**{**PAGED, "block_table": table}))


def test_unused_table_slots_may_hold_anything():
    table = torch.tensor([[0, 1, -7], [2, 3, 1000]], dtype=torch.int32)
    assert call(base(**{**PAGED, "block_table": table})).shape == (2, 4, 1, 16)


# --- kinds: NumPy arrays, devices, meta -------------------------------------------------------

@pytest.mark.parametrize("name", ["query", "key", "value", "atten_mask", "block_table"])
def test_numpy_array_is_a_type_error(name):
    args = base()
    args[name] = np.zeros((2, 4, 1, 16), np.float16)
    with pytest.raises(TypeError, match=name):
        call(args)


def test_meta_and_cpu_mixed_is_a_type_error():
    args = base()
    args["key"] = torch.empty(args["key"].shape, dtype=f16, device="meta")
    with pytest.raises(TypeError, match="meta"):
        call(args)


def test_meta_propagates_shapes_and_dtypes():
    m = lambda *s, dtype=f16: torch.empty(*s, dtype=dtype, device="meta")  # noqa: E731
    out = OP(m(3, 1, 64), m(3, 40, 32), m(3, 40, 32), num_heads=4, num_key_value_heads=2)
    assert out.device.type == "meta" and out.shape == (3, 1, 64) and out.dtype == f16
    out = ifa_mod.npu_incre_flash_attention(
        m(2, 8, 1, 16, dtype=bf16), m(5, 2, 16, 16, dtype=i8), m(5, 2, 16, 16, dtype=i8),
        antiquant_scale=m(2, dtype=bf16), quant_scale2=m(1, dtype=torch.float32),
        block_table=m(2, 3, dtype=torch.int32), block_size=16, actual_seq_lengths=[20, 30],
        num_heads=8, num_key_value_heads=2, input_layout="BNSD")
    assert out.device.type == "meta" and out.shape == (2, 8, 1, 16) and out.dtype == i8


# --- several threads at once ----------------------------------------------------------------

def test_threads():
    errors = []

    def work(i):
        try:
            for j in range(3):
                run(seed=100 + 10 * i + j, dtype=("float16", "bfloat16")[i % 2],
                    layout=("BSH", "BNSD", "BSND")[j], asl=[20, 11], mask=("2d", torch.bool, "random"))
        except BaseException as e:  # reported in the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
