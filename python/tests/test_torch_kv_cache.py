"""torch.ops.tilejit.npu_scatter_pa_kv_cache / npu_gather_pa_kv_cache (and _functional),
through tilejit.torch_npu as torch_npu code calls them.

Every scenario torch_npu's schemas can express (scatter: Norm, key-only, PA_NZ, the 4-D
compressed key with and without averaging; gather: Norm and PA_NZ, cumulative or per-batch
lengths, offsets) in every dtype of the specs' lists that this PyTorch has, against NumPy
references written here from the specs (scatter_pa_kv_cache.md sections 3-6,
gather_pa_kv_cache.md section 4). Copies are compared bit for bit, averages too. Then the
functional forms leave their inputs alone, bad inputs raise the right exception and leave
every output as it was, meta tensors propagate shapes, and threads call at once.
"""
import threading

import numpy as np
import pytest
import torch

import tilejit
import tilejit.torch  # noqa: F401  (registers the operators)
from tilejit import torch_npu

OPS = torch.ops.tilejit

# The specs' KV types (L12) that this PyTorch has.
KV_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.int8, torch.uint8,
             torch.int16, torch.int32] + [
    getattr(torch, n) for n in ("uint16", "uint32", "float8_e5m2", "float8_e4m3fn")
    if hasattr(torch, n)]
INDEX_DTYPES = [torch.int32, torch.int64]
BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
TORCH_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def ids(dtypes):
    return [str(d).replace("torch.", "") for d in dtypes]


def rand(shape, dtype, gen):
    """Random bit patterns of `dtype` (NaNs included: copies are compared bitwise)."""
    esize = torch.empty((), dtype=dtype).element_size()
    n = int(np.prod(shape)) * esize
    return torch.randint(0, 256, (n,), dtype=torch.uint8, generator=gen).view(dtype) \
        .reshape(shape)


def bits(t):
    """The bit patterns of a tensor as a NumPy array (unsigned, same element size)."""
    t = t.contiguous()
    return t.view(TORCH_BITS[t.element_size()]).numpy().view(BITS[t.element_size()])


#===------------------------------------------------------------------------===#
# References (NumPy, on bit patterns)
#===------------------------------------------------------------------------===#

def ref_scatter_norm(key, value, kc, vc, slots, key_only=False):
    """S2 / S6: token i goes to slot slots[i] of [nb, bs, N, D] caches."""
    kc = kc.copy()
    vc = None if key_only else vc.copy()
    nb, bs = kc.shape[:2]
    for i, s in enumerate(slots):
        if 0 <= s < nb * bs:
            kc[s // bs, s % bs] = key[i]
            if not key_only:
                vc[s // bs, s % bs] = value[i]
    return kc, vc


def ref_scatter_nz(key, value, kc, vc, slots):
    """S1: the token vector (N*D) stored as C strips of E in [nb, C, bs, E] caches."""
    kc, vc = kc.copy(), vc.copy()
    nb, _, bs, _ = kc.shape
    for i, s in enumerate(slots):
        if 0 <= s < nb * bs:
            for src, cache in ((key, kc), (value, vc)):
                cache[s // bs, :, s % bs, :] = src[i].reshape(cache.shape[1], cache.shape[3])
    return kc, vc


def mean_bits(rows, dtype):
    """Section 6: the average of `rows` ([n, D] bit patterns of `dtype`) as bit patterns."""
    n = rows.shape[0]
    if dtype.is_floating_point:
        if dtype == torch.float16:
            x = rows.view(np.float16).astype(np.float32)
        elif dtype == torch.bfloat16:
            x = (rows.astype(np.uint32) << 16).view(np.float32)
        else:
            x = rows.view(np.float32)
        acc = np.zeros(rows.shape[1], np.float32)
        for j in range(n):                      # fp32, in token order, from +0.0
            acc = (acc + x[j]).astype(np.float32)
        q = (acc / np.float32(n)).astype(np.float32)
        if dtype == torch.float16:
            return q.astype(np.float16).view(np.uint16)
        if dtype == torch.bfloat16:             # round to nearest even
            u = q.view(np.uint32).astype(np.uint64)
            return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
        return q.view(np.uint32)
    signed = {torch.int8: np.int8, torch.int16: np.int16, torch.int32: np.int32}
    if dtype in signed:
        v = rows.view(signed[dtype]).astype(np.int64).sum(axis=0)
        if dtype == torch.int32:                # a 32-bit two's-complement sum
            v = (v + 2**31) % 2**32 - 2**31
        q = np.sign(v) * (np.abs(v) // n)       # truncated toward zero
        return q.astype(signed[dtype]).view(rows.dtype)
    v = rows.astype(np.int64).sum(axis=0)       # unsigned: floor
    return (v // n).astype(rows.dtype)


def ref_scatter_4d(key, value, kc, vc, slots, lens, seq_lens, offsets, dtype):
    """S3: key/value [B, S, N, D], caches [nb, bs, 1, D]; TAIL without offsets, MEAN
    (the Rope body of S5) with them."""
    kc, vc = kc.copy(), vc.copy()
    b_count, s_len, heads, _ = key.shape
    nb, bs = kc.shape[:2]

    def put(d, krow, vrow):
        if 0 <= d < nb * bs:
            kc[d // bs, d % bs, 0] = krow
            vc[d // bs, d % bs, 0] = vrow

    for b in range(b_count):
        for h in range(heads):
            s, w = int(slots[b, h]), int(lens[b, h])
            if s < 0:
                continue
            if offsets is None:
                for j in range(w):
                    t = int(seq_lens[b]) - w + j
                    if 0 <= t < s_len:
                        put(s + j, key[b, t, h], value[b, t, h])
                continue
            length = min(int(seq_lens[b]), s_len)
            o = int(offsets[b * heads + h])
            if o < 0 or w <= 0 or o >= length:
                for j in range(length):
                    put(s + j, key[b, j, h], value[b, j, h])
                continue
            we = min(w, length - o)
            for j in range(o):
                put(s + j, key[b, j, h], value[b, j, h])
            put(s + o, mean_bits(key[b, o:o + we, h], dtype),
                mean_bits(value[b, o:o + we, h], dtype))
            for j in range(o + we, length):
                put(s + o + 1 + (j - o - we), key[b, j, h], value[b, j, h])
    return kc, vc


def ref_gather(kc, vc, tables, lens, key, value, offsets=None, cumsum=False, nz=False):
    """Gather section 4: batch b's first len(b) tokens, through its block-table row."""
    key, value = key.copy(), value.copy()
    nb = kc.shape[0]
    bs = kc.shape[2] if nz else kc.shape[1]
    t_out = key.shape[0]
    for b in range(tables.shape[0]):
        s0 = int(lens[b]) if cumsum else int(lens[:b].sum())
        n = int(lens[b + 1] - lens[b]) if cumsum else int(lens[b])
        if s0 < 0 or s0 >= t_out or n <= 0:
            continue
        base = int(offsets[b]) // bs if offsets is not None else 0
        for t in range(min(n, t_out - s0)):
            col = base + t // bs
            blk = int(tables[b, col]) if 0 <= col < tables.shape[1] else -1
            for cache, out in ((kc, key), (vc, value)):
                if not 0 <= blk < nb:
                    out[s0 + t] = 0
                elif nz:
                    out[s0 + t] = cache[blk, :, t % bs, :].reshape(-1)
                else:
                    out[s0 + t] = cache[blk, t % bs]
    return key, value


#===------------------------------------------------------------------------===#
# Scatter
#===------------------------------------------------------------------------===#

def scatter_norm_problem(dtype, index, gen, dk=8, dv=16):
    t, n, nb, bs = 6, 2, 3, 4
    key = rand((t, n, dk), dtype, gen)
    value = rand((t, n, dv), dtype, gen)
    kc = rand((nb, bs, n, dk), dtype, gen)
    vc = rand((nb, bs, n, dv), dtype, gen)
    # A padding token (-1), the last slot, one past the end (dropped), block crossings.
    slots = torch.tensor([0, 5, -1, nb * bs - 1, nb * bs, 7], dtype=index)
    return key, value, kc, vc, slots


@pytest.mark.parametrize("index", INDEX_DTYPES, ids=ids(INDEX_DTYPES))
@pytest.mark.parametrize("dtype", KV_DTYPES, ids=ids(KV_DTYPES))
def test_scatter_norm(dtype, index):
    gen = torch.Generator().manual_seed(1)
    key, value, kc, vc, slots = scatter_norm_problem(dtype, index, gen)
    rk, rv = ref_scatter_norm(bits(key), bits(value), bits(kc), bits(vc), slots.numpy())
    inputs = [key, value, kc, vc, slots]
    saved = [x.clone() for x in inputs]
    # The functional form returns updated copies and leaves every input as it was.
    ok, ov = torch_npu.npu_scatter_pa_kv_cache_functional(key, value, kc, vc, slots,
                                                          cache_mode="Norm")
    assert np.array_equal(bits(ok), rk) and np.array_equal(bits(ov), rv)
    assert all(np.array_equal(bits(a), bits(b)) for a, b in zip(inputs, saved))
    # The in-place form (cache_mode None is the Norm layout too).
    assert torch_npu.npu_scatter_pa_kv_cache(key, value, kc, vc, slots, cache_mode=None) is None
    assert np.array_equal(bits(kc), rk) and np.array_equal(bits(vc), rv)


@pytest.mark.parametrize("dtype", [torch.int8, torch.float16, torch.float32],
                         ids=ids([torch.int8, torch.float16, torch.float32]))
def test_scatter_key_only(dtype):
    gen = torch.Generator().manual_seed(2)
    key, _, kc, _, slots = scatter_norm_problem(dtype, torch.int64, gen)
    value = torch.zeros((), dtype=dtype)        # "value: []": 0-D value and value cache
    vc = rand((), dtype, gen)
    vc0 = vc.clone()
    rk, _ = ref_scatter_norm(bits(key), None, bits(kc), None, slots.numpy(), key_only=True)
    ok, ov = torch_npu.npu_scatter_pa_kv_cache_functional(key, value, kc, vc, slots,
                                                          cache_mode="Norm")
    assert np.array_equal(bits(ok), rk)
    assert ov.shape == () and np.array_equal(bits(ov), bits(vc0))
    torch_npu.npu_scatter_pa_kv_cache(key, value, kc, vc, slots, cache_mode="Norm")
    assert np.array_equal(bits(kc), rk) and np.array_equal(bits(vc), bits(vc0))


@pytest.mark.parametrize("dtype", KV_DTYPES, ids=ids(KV_DTYPES))
def test_scatter_pa_nz(dtype):
    gen = torch.Generator().manual_seed(3)
    esize = torch.empty((), dtype=dtype).element_size()
    e = 32 // esize
    # Dk * size and Dv * size multiples of 32 bytes, Dk != Dv.
    t, n, dk, dv, nb, bs = 5, 2, 32, 64 // esize, 2, 4
    key = rand((t, n, dk), dtype, gen)
    value = rand((t, n, dv), dtype, gen)
    kc = rand((nb, n * dk // e, bs, e), dtype, gen)
    vc = rand((nb, n * dv // e, bs, e), dtype, gen)
    slots = torch.tensor([3, -1, 0, 7, 4], dtype=torch.int32)
    rk, rv = ref_scatter_nz(bits(key), bits(value), bits(kc), bits(vc), slots.numpy())
    ok, ov = torch_npu.npu_scatter_pa_kv_cache_functional(key, value, kc, vc, slots)
    assert np.array_equal(bits(ok), rk) and np.array_equal(bits(ov), rv)
    torch_npu.npu_scatter_pa_kv_cache(key, value, kc, vc, slots)   # cache_mode='PA_NZ'
    assert np.array_equal(bits(kc), rk) and np.array_equal(bits(vc), rv)


def scatter_4d_problem(dtype, gen, real=False):
    b, s, n, dk, dv, nb, bs = 2, 6, 3, 8, 4, 4, 4
    if real:
        key = (torch.randn(b, s, n, dk, generator=gen) * 50).to(dtype)
        value = (torch.randn(b, s, n, dv, generator=gen) * 50).to(dtype)
    else:
        key = rand((b, s, n, dk), dtype, gen)
        value = rand((b, s, n, dv), dtype, gen)
    kc = rand((nb, bs, 1, dk), dtype, gen)
    vc = rand((nb, bs, 1, dv), dtype, gen)
    # Head runs cross block boundaries; the last one runs past the capacity (dropped).
    slots = torch.tensor([[0, 5, -1], [9, 2, 14]], dtype=torch.int32)
    lens = torch.tensor([[2, 0, 4], [3, 6, 2]], dtype=torch.int32)
    seq_lens = torch.tensor([4, 6], dtype=torch.int32)
    return key, value, kc, vc, slots, lens, seq_lens


@pytest.mark.parametrize("dtype", [torch.float32, torch.int8, torch.bfloat16],
                         ids=ids([torch.float32, torch.int8, torch.bfloat16]))
def test_scatter_4d_key_tail(dtype):
    gen = torch.Generator().manual_seed(4)
    key, value, kc, vc, slots, lens, seq_lens = scatter_4d_problem(dtype, gen)
    rk, rv = ref_scatter_4d(bits(key), bits(value), bits(kc), bits(vc), slots.numpy(),
                            lens.numpy(), seq_lens.numpy(), None, dtype)
    ok, ov = torch_npu.npu_scatter_pa_kv_cache_functional(
        key, value, kc, vc, slots, compress_lens=lens, seq_lens=seq_lens, cache_mode="Norm")
    assert np.array_equal(bits(ok), rk) and np.array_equal(bits(ov), rv)
    torch_npu.npu_scatter_pa_kv_cache(key, value, kc, vc, slots, compress_lens=lens,
                                      seq_lens=seq_lens, cache_mode=None)
    assert np.array_equal(bits(kc), rk) and np.array_equal(bits(vc), rv)


MEAN_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.int8, torch.uint8,
               torch.int16, torch.int32]


@pytest.mark.parametrize("dtype", MEAN_DTYPES, ids=ids(MEAN_DTYPES))
def test_scatter_4d_key_mean(dtype):
    gen = torch.Generator().manual_seed(5)
    key, value, kc, vc, slots, lens, seq_lens = scatter_4d_problem(dtype, gen, real=True)
    # Offsets: no compression (-1), a window at 0, one clipped by the batch, one at L - w,
    # one at L (no compression), one inside.
    offsets = torch.tensor([1, -1, 0, 2, 4, 3], dtype=torch.int32)
    rk, rv = ref_scatter_4d(bits(key), bits(value), bits(kc), bits(vc), slots.numpy(),
                            lens.numpy(), seq_lens.numpy(), offsets.numpy(), dtype)
    ok, ov = torch_npu.npu_scatter_pa_kv_cache_functional(
        key, value, kc, vc, slots, compress_lens=lens, compress_seq_offsets=offsets,
        seq_lens=seq_lens, cache_mode="Norm")
    assert np.array_equal(bits(ok), rk) and np.array_equal(bits(ov), rv)
    torch_npu.npu_scatter_pa_kv_cache(key, value, kc, vc, slots, compress_lens=lens,
                                      compress_seq_offsets=offsets, seq_lens=seq_lens,
                                      cache_mode="Norm")
    assert np.array_equal(bits(kc), rk) and np.array_equal(bits(vc), rv)


def test_scatter_3d_key_ignores_the_compression_arguments():
    # torch_npu passes scatterMode "None": a 3-D key is the plain scatter whatever else.
    gen = torch.Generator().manual_seed(6)
    key, value, kc, vc, slots = scatter_norm_problem(torch.float16, torch.int32, gen)
    rk, rv = ref_scatter_norm(bits(key), bits(value), bits(kc), bits(vc), slots.numpy())
    extra = torch.ones(6, dtype=torch.int32)
    ok, ov = torch_npu.npu_scatter_pa_kv_cache_functional(
        key, value, kc, vc, slots, compress_lens=extra, compress_seq_offsets=extra,
        seq_lens=extra, cache_mode="Norm")
    assert np.array_equal(bits(ok), rk) and np.array_equal(bits(ov), rv)


#===------------------------------------------------------------------------===#
# Gather
#===------------------------------------------------------------------------===#

def gather_problem(dtype, index, gen, nz=False, vdtype=None, lens=(5, 0, 3, 2)):
    vdtype = vdtype or dtype
    nb, bs, n, dk, dv = 5, 4, 2, 32, 16
    b = len(lens)
    if nz:
        ek = 32 // torch.empty((), dtype=dtype).element_size()
        ev = 32 // torch.empty((), dtype=vdtype).element_size()
        kc = rand((nb, n * dk // ek, bs, ek), dtype, gen)
        vc = rand((nb, n * dv // ev, bs, ev), vdtype, gen)
    else:
        kc = rand((nb, bs, n, dk), dtype, gen)
        vc = rand((nb, bs, n, dv), vdtype, gen)
    # Block ids: valid ones, -1 and nb (both gather zeros).
    tables = torch.tensor([[4, 1, 0], [2, 2, 2], [3, -1, 1], [nb, 0, 4]], dtype=index)[:b]
    total = sum(lens)
    t = total + 2                                # two tail rows no batch covers
    key = rand((t, n * dk) if nz else (t, n, dk), dtype, gen)
    value = rand((t, n * dv) if nz else (t, n, dv), vdtype, gen)
    return kc, vc, tables, key, value


@pytest.mark.parametrize("cumsum", [False, True], ids=["lengths", "cumsum"])
@pytest.mark.parametrize("index", INDEX_DTYPES, ids=ids(INDEX_DTYPES))
@pytest.mark.parametrize("dtype", KV_DTYPES, ids=ids(KV_DTYPES))
def test_gather_norm(dtype, index, cumsum):
    gen = torch.Generator().manual_seed(7)
    lens = (5, 0, 3, 2)
    kc, vc, tables, key, value = gather_problem(dtype, index, gen, lens=lens)
    seq = np.cumsum((0,) + lens) if cumsum else np.array(lens)
    seq_lens = torch.tensor(seq, dtype=index)
    offsets = torch.tensor([0, 3, 5, 1], dtype=index)     # column shifts 0, 0, 1, 0
    for seq_offset in (None, offsets):
        k0, v0 = key.clone(), value.clone()
        rk, rv = ref_gather(bits(kc), bits(vc), tables.numpy(), seq_lens.numpy(), bits(k0),
                            bits(v0), None if seq_offset is None else seq_offset.numpy(),
                            cumsum)
        saved = [x.clone() for x in (kc, vc, tables, seq_lens, k0, v0)]
        ok, ov = torch_npu.npu_gather_pa_kv_cache_functional(
            kc, vc, tables, seq_lens, k0, v0, seq_offset=seq_offset, is_seq_lens_cumsum=cumsum)
        assert np.array_equal(bits(ok), rk) and np.array_equal(bits(ov), rv)
        assert all(np.array_equal(bits(a), bits(b)) for a, b in
                   zip((kc, vc, tables, seq_lens, k0, v0), saved))
        assert torch_npu.npu_gather_pa_kv_cache(
            kc, vc, tables, seq_lens, k0, v0, seq_offset=seq_offset,
            is_seq_lens_cumsum=cumsum) is None
        assert np.array_equal(bits(k0), rk) and np.array_equal(bits(v0), rv)


NZ_PAIRS = [(d, d) for d in KV_DTYPES] + [(torch.float16, torch.bfloat16),
                                         (torch.int8, torch.uint8)]


@pytest.mark.parametrize("dtype, vdtype", NZ_PAIRS,
                         ids=[f"{a}-{b}" for a, b in zip(ids(p[0] for p in NZ_PAIRS),
                                                         ids(p[1] for p in NZ_PAIRS))])
def test_gather_pa_nz(dtype, vdtype):
    # PA_NZ: 2-D outputs [T, N*D]; keys and values may differ in dtype, not in size.
    gen = torch.Generator().manual_seed(8)
    kc, vc, tables, key, value = gather_problem(dtype, torch.int32, gen, nz=True,
                                                vdtype=vdtype)
    seq_lens = torch.tensor([0, 5, 5, 8, 10], dtype=torch.int32)
    offsets = torch.tensor([4, 0, 2, 0], dtype=torch.int32)
    rk, rv = ref_gather(bits(kc), bits(vc), tables.numpy(), seq_lens.numpy(), bits(key),
                        bits(value), offsets.numpy(), cumsum=True, nz=True)
    ok, ov = torch_npu.npu_gather_pa_kv_cache_functional(
        kc, vc, tables, seq_lens, key, value, seq_offset=offsets, is_seq_lens_cumsum=True)
    assert np.array_equal(bits(ok), rk) and np.array_equal(bits(ov), rv)
    torch_npu.npu_gather_pa_kv_cache(kc, vc, tables, seq_lens, key, value, seq_offset=offsets,
                                     is_seq_lens_cumsum=True)
    assert np.array_equal(bits(key), rk) and np.array_equal(bits(value), rv)


#===------------------------------------------------------------------------===#
# Views, bad inputs, meta, threads
#===------------------------------------------------------------------------===#

def test_strided_views_are_read_and_written_through_their_strides():
    gen = torch.Generator().manual_seed(9)
    # Scatter: a transposed key, caches that are windows of bigger storage.
    key = rand((2, 6, 8), torch.float16, gen).transpose(0, 1)     # [6, 2, 8], strided
    value = rand((6, 2, 16), torch.float16, gen)
    big_k = rand((3, 4, 2, 12), torch.float16, gen)
    big_v = rand((4, 4, 2, 16), torch.float16, gen)
    kc, vc = big_k[..., 2:10], big_v[1:]
    slots = torch.tensor([0, 5, -1, 11, 3, 7], dtype=torch.int32)
    rk, rv = ref_scatter_norm(bits(key), bits(value), bits(kc), bits(vc), slots.numpy())
    before_k, before_v = bits(big_k).copy(), bits(big_v).copy()
    torch_npu.npu_scatter_pa_kv_cache(key, value, kc, vc, slots, cache_mode="Norm")
    assert np.array_equal(bits(kc), rk) and np.array_equal(bits(vc), rv)
    after_k = bits(big_k)
    assert np.array_equal(after_k[..., :2], before_k[..., :2])
    assert np.array_equal(after_k[..., 10:], before_k[..., 10:])
    assert np.array_equal(bits(big_v)[0], before_v[0])
    # Gather: outputs as windows with a storage offset, a permuted cache.
    kc2 = rand((4, 5, 2, 32), torch.int8, gen).permute(1, 0, 2, 3)   # [5, 4, 2, 32]
    vc2 = rand((5, 4, 2, 16), torch.int8, gen)
    tables = torch.tensor([[4, 1], [2, 0]], dtype=torch.int64)
    seq_lens = torch.tensor([6, 3], dtype=torch.int64)
    out_k = rand((12, 2, 32), torch.int8, gen)
    out_v = rand((12, 2, 16), torch.int8, gen)
    k_view, v_view = out_k[2:11], out_v[3:12]
    rk, rv = ref_gather(bits(kc2), bits(vc2), tables.numpy(), seq_lens.numpy(), bits(k_view),
                        bits(v_view))
    before_k, before_v = bits(out_k).copy(), bits(out_v).copy()
    torch_npu.npu_gather_pa_kv_cache(kc2, vc2, tables, seq_lens, k_view, v_view)
    assert np.array_equal(bits(k_view), rk) and np.array_equal(bits(v_view), rv)
    assert np.array_equal(bits(out_k)[:2], before_k[:2])
    assert np.array_equal(bits(out_k)[11:], before_k[11:])
    assert np.array_equal(bits(out_v)[:3], before_v[:3])


def test_out_of_range_slots_and_blocks_are_data_not_errors():
    # Spec sections 8 / 6: a slot outside [0, capacity) writes nothing, a block id
    # outside [0, nb) gathers zeros; neither is an error (phase 1 cannot see device data).
    gen = torch.Generator().manual_seed(10)
    key, value, kc, vc, _ = scatter_norm_problem(torch.float32, torch.int64, gen)
    slots = torch.tensor([-5, 12, 10**12, -1, 2**40, 13], dtype=torch.int64)
    k0, v0 = kc.clone(), vc.clone()
    torch_npu.npu_scatter_pa_kv_cache(key, value, kc, vc, slots, cache_mode="Norm")
    assert np.array_equal(bits(kc), bits(k0)) and np.array_equal(bits(vc), bits(v0))
    kc, vc, tables, key, value = gather_problem(torch.float32, torch.int32, gen)
    tables.fill_(-7)
    ok, ov = torch_npu.npu_gather_pa_kv_cache_functional(
        kc, vc, tables, torch.tensor([5, 0, 3, 2], dtype=torch.int32), key, value)
    assert not bits(ok)[:10].any() and not bits(ov)[:10].any()
    assert np.array_equal(bits(ok)[10:], bits(key)[10:])


def _scatter_args():
    gen = torch.Generator().manual_seed(11)
    key, value, kc, vc, slots = scatter_norm_problem(torch.float16, torch.int32, gen)
    return dict(key=key, value=value, key_cache=kc, value_cache=vc, slot_mapping=slots,
                cache_mode="Norm")


def _gather_args():
    gen = torch.Generator().manual_seed(12)
    kc, vc, tables, key, value = gather_problem(torch.float16, torch.int32, gen)
    return dict(key_cache=kc, value_cache=vc, block_tables=tables,
                seq_lens=torch.tensor([5, 0, 3, 2], dtype=torch.int32), key=key, value=value)


BAD_INPUTS = [
    # (op, change, exception, message)
    ("scatter", dict(key_cache=lambda a: a["key_cache"].bfloat16()), tilejit.ArgumentTypeError,
     "keyCacheRef: dtype BFLOAT16 must equal key's dtype FLOAT16"),
    ("scatter", dict(slot_mapping=lambda a: a["slot_mapping"].short()),
     tilejit.ArgumentTypeError, "slotMapping: dtype INT16"),
    ("scatter", dict(key=lambda a: a["key"].double(), value=lambda a: a["value"].double()),
     tilejit.ArgumentTypeError, "key: dtype DOUBLE"),
    ("scatter", dict(key=lambda a: a["key"].numpy()), tilejit.ArgumentTypeError,
     "key must be a torch.Tensor, got numpy.ndarray"),
    ("scatter", dict(slot_mapping=lambda a: a["slot_mapping"].tolist()),
     tilejit.ArgumentTypeError, "slot_mapping must be a torch.Tensor, got builtins.list"),
    ("scatter", dict(key=lambda a: a["key"].to("meta")), tilejit.ArgumentTypeError,
     r"CPU tensors are required \(or only meta tensors"),
    ("scatter", dict(key_cache=lambda a: a["key_cache"][:, :, :1]), tilejit.ArgumentValueError,
     r"keyCacheRef: shape\[2:4\] must be \[N, Dk\]"),
    ("scatter", dict(value=lambda a: a["value"][:5]), tilejit.ArgumentValueError, "value"),
    ("scatter", dict(cache_mode=lambda a: "nz"), tilejit.ArgumentValueError, "cacheMode"),
    ("scatter", dict(cache_mode=lambda a: "PA_NZ"), tilejit.ArgumentValueError,
     "PA_NZ last dim"),
    ("scatter", dict(key_cache=lambda a: a["key_cache"][:1].expand(3, 4, 2, 8)),
     tilejit.ArgumentValueError, "key_cache must not overlap itself"),
    ("gather", dict(key=lambda a: a["key"].float()), tilejit.ArgumentTypeError,
     "keyRef: dtype FLOAT must equal keyCache's dtype FLOAT16"),
    ("gather", dict(seq_lens=lambda a: a["seq_lens"].long()), tilejit.ArgumentTypeError,
     "seqLens: dtype INT64 must equal blockTables' dtype INT32"),
    ("gather", dict(block_tables=lambda a: a["block_tables"].numpy()),
     tilejit.ArgumentTypeError, "block_tables must be a torch.Tensor"),
    ("gather", dict(key=lambda a: a["key"][:, :1]), tilejit.ArgumentValueError,
     r"keyRef: shape\[1:3\] must equal keyCache's \[N, Dk\]"),
    ("gather", dict(key_cache=lambda a: a["key_cache"][0]), tilejit.ArgumentValueError,
     "keyCache: rank must be 4"),
    ("gather", dict(seq_lens=lambda a: a["seq_lens"][:3]), tilejit.ArgumentValueError,
     "seqLens"),
    ("gather", dict(value=lambda a: a["value"][:1].expand(12, 2, 16)),
     tilejit.ArgumentValueError, "value must not overlap itself"),
]


# Each bad input through the in-place and the functional form (the overlap rule is the
# in-place forms' only: the functional ones write into fresh copies).
BAD_CALLS = [(functional, *bad) for bad in BAD_INPUTS for functional in (False, True)
             if not (functional and "overlap" in bad[3])]


@pytest.mark.parametrize("functional, op, change, exc, message", BAD_CALLS,
                         ids=[f"{c[1]}-{i}-{'functional' if c[0] else 'inplace'}"
                              for i, c in enumerate(BAD_CALLS)])
def test_bad_inputs_raise_and_leave_every_output_untouched(functional, op, change, exc,
                                                           message):
    args = _scatter_args() if op == "scatter" else _gather_args()
    for name, f in change.items():
        args[name] = f(args)
    tensors = {k: v for k, v in args.items() if isinstance(v, torch.Tensor)}
    saved = {k: bits(v).copy() for k, v in tensors.items() if v.device.type == "cpu"}
    fn = {("scatter", False): torch_npu.npu_scatter_pa_kv_cache,
          ("scatter", True): torch_npu.npu_scatter_pa_kv_cache_functional,
          ("gather", False): torch_npu.npu_gather_pa_kv_cache,
          ("gather", True): torch_npu.npu_gather_pa_kv_cache_functional}[op, functional]
    with pytest.raises(exc, match=message) as info:
        fn(**args)
    assert isinstance(info.value, TypeError if exc is tilejit.ArgumentTypeError else ValueError)
    for k, v in saved.items():
        assert np.array_equal(bits(tensors[k]), v), k


def test_the_operators_raise_the_same_through_torch_ops():
    args = _scatter_args()
    args["key_cache"] = args["key_cache"].bfloat16()
    kc0 = args["key_cache"].clone()
    with pytest.raises(tilejit.ArgumentTypeError, match="keyCacheRef: dtype") as info:
        OPS.npu_scatter_pa_kv_cache(**args)
    assert info.value.status == 161002 and info.value.argument == "keyCacheRef"
    assert np.array_equal(bits(args["key_cache"]), bits(kc0))
    args = _gather_args()
    args["key"] = args["key"][:, :1]
    with pytest.raises(tilejit.ArgumentValueError) as info:
        OPS.npu_gather_pa_kv_cache_functional(**args)
    assert info.value.status == 561002 and info.value.argument == "keyRef"


def test_meta_tensors_propagate_shapes_without_running():
    meta = {k: (v.to("meta") if isinstance(v, torch.Tensor) else v)
            for k, v in _scatter_args().items()}
    ok, ov = torch_npu.npu_scatter_pa_kv_cache_functional(**meta)
    assert ok.device.type == "meta" and ok.shape == (3, 4, 2, 8) and ok.dtype == torch.float16
    assert ov.shape == (3, 4, 2, 16)
    assert OPS.npu_scatter_pa_kv_cache(**meta) is None
    meta = {k: v.to("meta") for k, v in _gather_args().items()}
    ok, ov = OPS.npu_gather_pa_kv_cache_functional(**meta, is_seq_lens_cumsum=True)
    assert ok.device.type == "meta" and ok.shape == (12, 2, 32) and ov.shape == (12, 2, 16)
    assert torch_npu.npu_gather_pa_kv_cache(**meta) is None
    # Key-only and 4-D shapes too; a meta call checks kinds, not shapes (nothing runs).
    ok, ov = OPS.npu_scatter_pa_kv_cache_functional(
        torch.empty(2, 3, 1, 8, device="meta"), torch.empty((), device="meta"),
        torch.empty(4, 4, 1, 8, device="meta"), torch.empty((), device="meta"),
        torch.empty(2, 1, dtype=torch.int32, device="meta"), cache_mode="Norm")
    assert ok.shape == (4, 4, 1, 8) and ov.shape == ()


def test_schemas_are_torch_npus():
    schemas = {str(getattr(OPS, n).default._schema) for n in (
        "npu_scatter_pa_kv_cache", "npu_scatter_pa_kv_cache_functional",
        "npu_gather_pa_kv_cache", "npu_gather_pa_kv_cache_functional")}
    scatter = ("Tensor key, Tensor value, Tensor{a} key_cache, Tensor{b} value_cache, "
               "Tensor slot_mapping, *, Tensor? compress_lens=None, "
               "Tensor? compress_seq_offsets=None, Tensor? seq_lens=None, "
               "str? cache_mode=\"PA_NZ\"")
    gather = ("Tensor key_cache, Tensor value_cache, Tensor block_tables, Tensor seq_lens, "
              "Tensor{a} key, Tensor{b} value, *, Tensor? seq_offset=None, "
              "bool is_seq_lens_cumsum=False")
    assert schemas == {
        "tilejit::npu_scatter_pa_kv_cache(" + scatter.format(a="(a!)", b="(b!)") + ") -> ()",
        "tilejit::npu_scatter_pa_kv_cache_functional(" + scatter.format(a="", b="")
        + ") -> (Tensor, Tensor)",
        "tilejit::npu_gather_pa_kv_cache(" + gather.format(a="(a!)", b="(b!)") + ") -> ()",
        "tilejit::npu_gather_pa_kv_cache_functional(" + gather.format(a="", b="")
        + ") -> (Tensor, Tensor)"}


def test_torch_npu_module_has_the_five_operators():
    names = ["npu_scatter_pa_kv_cache", "npu_scatter_pa_kv_cache_functional",
             "npu_gather_pa_kv_cache", "npu_gather_pa_kv_cache_functional",
             "npu_incre_flash_attention", "npu_nsa_compress_infer", "npu_fusion_attention_grad"]
    assert sorted(torch_npu.__all__) == sorted(names)
    for n in names:
        assert callable(getattr(torch_npu, n)) and n in dir(torch_npu)
    with pytest.raises(AttributeError):
        torch_npu.npu_rotary_mul  # noqa: B018


def test_threads_calling_at_once():
    def work(i, results):
        gen = torch.Generator().manual_seed(100 + i)
        dtype = KV_DTYPES[i % len(KV_DTYPES)]
        key, value, kc, vc, slots = scatter_norm_problem(dtype, INDEX_DTYPES[i % 2], gen)
        rk, rv = ref_scatter_norm(bits(key), bits(value), bits(kc), bits(vc), slots.numpy())
        ok = True
        for _ in range(10):
            a, b = torch_npu.npu_scatter_pa_kv_cache_functional(key, value, kc, vc, slots,
                                                                cache_mode="Norm")
            ok &= np.array_equal(bits(a), rk) and np.array_equal(bits(b), rv)
            # Gather the written tokens back (slot s is block s // 4, position s % 4).
            tables = torch.tensor([[0, 1, 2]], dtype=torch.int32)
            out_k = torch.zeros(12, 2, 8, dtype=dtype)
            out_v = torch.zeros(12, 2, 16, dtype=dtype)
            torch_npu.npu_gather_pa_kv_cache(a, b, tables, torch.tensor([12], dtype=torch.int32),
                                             out_k, out_v)
            ok &= np.array_equal(bits(out_k), rk.reshape(12, 2, 8))
            ok &= np.array_equal(bits(out_v), rv.reshape(12, 2, 16))
        results[i] = ok

    results = [None] * 6
    threads = [threading.Thread(target=work, args=(i, results)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 6
