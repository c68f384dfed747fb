"""tilejit._aclnn: the binding generated from include/aclnnop/*.h.

The headers are parsed here again with libclang, independently of the generator: every
``aclnn*`` function must have its binding with the header's parameters (names, order,
kinds, which are optional), so a header change cannot drift from Python. Then the
calling convention: positional and keyword arguments, every argument kind, NumPy arrays,
strided views and storage offsets, ``with_format``, the exceptions (kind errors, dtype
rules, shape rules, each with the status and a message naming the argument, outputs
untouched), and threads calling at once. References are NumPy code written here.
"""
import os
import threading

import numpy as np
import pytest

import tilejit
from tilejit import _aclnn

torch = pytest.importorskip("torch")

INCLUDE = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "include")


#===------------------------------------------------------------------------===#
# The headers, parsed here
#===------------------------------------------------------------------------===#

def _header_entry_points():
    """{Name: [(param, kind, optional), ...]} and the set of every aclnn* function, from
    the headers."""
    cindex = pytest.importorskip("clang.cindex")
    try:
        cindex.Index.create()
    except cindex.LibclangError:
        cindex.Config.set_library_file("/usr/lib/llvm-19/lib/libclang.so.1")
    tk = cindex.TypeKind
    structs = {"aclTensor": "tensor", "aclTensorList": "tensor_list",
               "aclIntArray": "int_array", "aclFloatArray": "float_array",
               "aclBoolArray": "bool_array"}

    def kind(t):
        t = t.get_canonical()
        if t.kind == tk.POINTER:
            p = t.get_pointee()
            if p.kind == tk.RECORD:
                return structs.get(p.get_declaration().spelling, "?" + p.spelling)
            if p.kind in (tk.CHAR_S, tk.CHAR_U):
                return "str"
            return "?" + t.spelling
        if t.kind == tk.BOOL:
            return "bool"
        if t.kind in (tk.INT, tk.LONG, tk.LONGLONG, tk.UINT, tk.ULONG, tk.ULONGLONG,
                      tk.SHORT, tk.ENUM):
            return "int"
        if t.kind in (tk.DOUBLE, tk.FLOAT):
            return "float"
        return "?" + t.spelling

    entries, functions = {}, set()
    headers = sorted(f for f in os.listdir(os.path.join(INCLUDE, "aclnnop"))
                     if f.endswith(".h"))
    assert headers
    for h in headers:
        path = os.path.join(INCLUDE, "aclnnop", h)
        tu = cindex.Index.create().parse(
            path, args=["-x", "c", "-I" + INCLUDE, "-DTILEJIT_BINDGEN"])
        assert not [d for d in tu.diagnostics if d.severity >= 3], h
        for c in tu.cursor.get_children():
            if (c.kind != cindex.CursorKind.FUNCTION_DECL or not c.spelling.startswith("aclnn")
                    or os.path.basename(c.location.file.name) != h):
                continue
            functions.add(c.spelling)
            if c.spelling.endswith("GetWorkspaceSize"):
                args = list(c.get_arguments())
                assert [a.spelling for a in args[-2:]] == ["workspaceSize", "executor"]
                entries[c.spelling[len("aclnn"):-len("GetWorkspaceSize")]] = [
                    (a.spelling, kind(a.type),
                     any(x.kind == cindex.CursorKind.ANNOTATE_ATTR
                         and x.spelling == "tilejit_optional" for x in a.get_children()))
                    for a in args[:-2]]
    return entries, functions


def test_every_header_function_has_its_binding():
    entries, functions = _header_entry_points()
    # Each aclnn* function is a phase 1 or the phase 2 of one.
    for f in functions:
        name = f[len("aclnn"):]
        if name.endswith("GetWorkspaceSize"):
            name = name[:-len("GetWorkspaceSize")]
        assert name in entries, f"{f} has no binding"
        assert callable(getattr(_aclnn, name, None)), f"tilejit._aclnn.{name} is missing"
    assert set(_aclnn.ENTRY_POINTS) == set(entries)
    for name, params in entries.items():
        assert not [p for p in params if p[1].startswith("?")], (name, params)
        assert [tuple(p) for p in _aclnn.ENTRY_POINTS[name]] == params, name


def test_the_five_operators_and_their_optional_parameters():
    ep = _aclnn.ENTRY_POINTS
    assert {"IncreFlashAttentionV4", "FlashAttentionUnpaddingScoreGradV5", "ScatterPaKvCache",
            "GatherPaKvCache", "NsaCompressWithCache"} <= set(ep)
    optional = {n: {p for p, _, o in params if o} for n, params in ep.items()}
    assert optional["GatherPaKvCache"] == {"seqOffsetOptional", "cacheMode"}
    assert optional["ScatterPaKvCache"] == {
        "compressLensOptional", "compressSeqOffsetOptional", "seqLensOptional",
        "cacheModeOptional", "scatterModeOptional", "stridesOptional", "offsetsOptional"}
    # The spec's 161001 lists are the required parameters.
    required = {n: {p for p, _, o in params if not o} for n, params in ep.items()}
    assert {"query", "key", "value", "attentionOut", "inputLayout"} <= \
        required["IncreFlashAttentionV4"]
    assert {"input", "weight", "slotMapping", "outputCache"} <= \
        required["NsaCompressWithCache"]
    assert {"query", "keyIn", "value", "dy", "attentionInOptional", "dqOut", "dkOut",
            "dvOut"} <= required["FlashAttentionUnpaddingScoreGradV5"]
    kinds = dict((p, k) for p, k, _ in ep["IncreFlashAttentionV4"])
    assert kinds["key"] == "tensor_list" and kinds["actualSeqLengths"] == "int_array"
    assert kinds["scaleValue"] == "float" and kinds["numHeads"] == "int"
    assert dict((p, k) for p, k, _ in ep["GatherPaKvCache"])["isSeqLensCumsum"] == "bool"
    assert _aclnn.FORMATS["FRACTAL_NZ"] == 29 and _aclnn.FORMATS["ND"] == 2
    assert _aclnn.DATA_TYPES["FLOAT16"] == 1 and _aclnn.DATA_TYPES["BF16"] == 27
    assert "keyCache" in _aclnn.GatherPaKvCache.__doc__


#===------------------------------------------------------------------------===#
# GatherPaKvCache as the worked example
#===------------------------------------------------------------------------===#

def _gather_ref(kc, vc, tables, lens, key, value, offsets=None, cumsum=False, nz=False):
    """Spec gather_pa_kv_cache.md section 4 on NumPy arrays (key/value updated copies)."""
    key, value = key.copy(), value.copy()
    nb = kc.shape[0]
    bs = kc.shape[2] if nz else kc.shape[1]
    t_out = key.shape[0]
    b_count, width = tables.shape
    for b in range(b_count):
        if cumsum:
            s0, n = int(lens[b]), int(lens[b + 1] - lens[b])
        else:
            s0, n = int(lens[:b].sum()), int(lens[b])
        if s0 < 0 or s0 >= t_out or n <= 0:
            continue
        n = min(n, t_out - s0)
        base = int(offsets[b]) // bs if offsets is not None else 0
        for t in range(n):
            col = base + t // bs
            ok = 0 <= col < width and 0 <= tables[b, col] < nb
            for src, dst in ((kc, key), (vc, value)):
                if not ok:
                    dst[s0 + t] = 0
                elif nz:
                    dst[s0 + t] = src[tables[b, col], :, t % bs, :].reshape(-1)
                else:
                    dst[s0 + t] = src[tables[b, col], t % bs]
    return key, value


def _gather_problem(dtype=torch.float16, index=torch.int32, nb=4, bs=4, n=2, dk=8, dv=16,
                    lens=(3, 5, 0, 2), seed=0):
    g = torch.Generator().manual_seed(seed)
    kc = torch.randn(nb, bs, n, dk, generator=g).to(dtype)
    vc = torch.randn(nb, bs, n, dv, generator=g).to(dtype)
    b = len(lens)
    width = 3
    tables = torch.randint(0, nb, (b, width), generator=g, dtype=torch.int64).to(index)
    seq = torch.tensor(lens, dtype=index)
    t = sum(lens)
    key = torch.full((t, n, dk), 7, dtype=dtype)
    value = torch.full((t, n, dv), 7, dtype=dtype)
    return kc, vc, tables, seq, key, value


def _np(t):
    return t.view(torch.int16).numpy() if t.dtype == torch.bfloat16 else t.numpy()


def _check_gather(kc, vc, tables, seq, key, value, **ref_kw):
    rk, rv = _gather_ref(_np(kc), _np(vc), tables.numpy(), seq.numpy(), _np(key),
                         _np(value), **ref_kw)
    return rk, rv


def test_positional_and_keyword_calls_match_the_reference():
    kc, vc, tables, seq, key, value = _gather_problem()
    rk, rv = _check_gather(kc, vc, tables, seq, key, value)
    _aclnn.GatherPaKvCache(kc, vc, tables, seq, key, value, None, "Norm", False)
    assert np.array_equal(_np(key), rk) and np.array_equal(_np(value), rv)

    kc, vc, tables, seq, key, value = _gather_problem(index=torch.int64, seed=1)
    offs = torch.tensor([0, 4, 1, 5], dtype=torch.int64)
    cum = torch.tensor([0, 3, 8, 8, 10], dtype=torch.int64)
    rk, rv = _check_gather(kc, vc, tables, cum, key, value, offsets=offs.numpy(), cumsum=True)
    # Keywords in any order; the optional cacheMode omitted (NULL: Norm).
    _aclnn.GatherPaKvCache(isSeqLensCumsum=True, valueRef=value, keyRef=key, seqLens=cum,
                           blockTables=tables, valueCache=vc, keyCache=kc,
                           seqOffsetOptional=offs)
    assert np.array_equal(_np(key), rk) and np.array_equal(_np(value), rv)


def test_strided_views_storage_offsets_and_numpy_arrays():
    kc, vc, tables, seq, key, value = _gather_problem(dtype=torch.float32, seed=2)
    # Caches as permuted views of other storage, outputs as windows of bigger tensors.
    kc_view = kc.permute(1, 0, 2, 3).contiguous().permute(1, 0, 2, 3)
    big_k = torch.full((key.shape[0] + 3, 2, 8), -1.0)
    big_v = torch.full((value.shape[0] + 3, 2, 32), -1.0)
    k_view = big_k[2:2 + key.shape[0]]
    v_view = big_v[1:1 + value.shape[0], :, ::2]
    k_view.fill_(7)
    v_view.fill_(7)
    before_k, before_v = big_k.clone(), big_v.clone()
    rk, rv = _check_gather(kc, vc, tables, seq, k_view.contiguous(), v_view.contiguous())
    _aclnn.GatherPaKvCache(kc_view, vc, tables, seq, k_view, v_view, None, None, False)
    assert np.array_equal(k_view.numpy(), rk) and np.array_equal(v_view.numpy(), rv)
    # Nothing outside the views was written.
    mask = torch.ones_like(big_k, dtype=torch.bool)
    mask[2:2 + key.shape[0]] = False
    assert torch.equal(big_k[mask], before_k[mask])
    mask = torch.ones_like(big_v, dtype=torch.bool)
    mask[1:1 + value.shape[0], :, ::2] = False
    assert torch.equal(big_v[mask], before_v[mask])

    # NumPy arrays, including a dtype PyTorch 1.13 lacks (UINT16) and a negative stride.
    rng = np.random.default_rng(3)
    kc_n = rng.integers(0, 65535, (4, 4, 2, 8), dtype=np.uint16)
    vc_n = rng.integers(0, 65535, (4, 4, 2, 8), dtype=np.uint16)[:, ::-1]
    tables_n = rng.integers(0, 4, (4, 3)).astype(np.int32)
    seq_n = np.array([3, 5, 0, 2], dtype=np.int32)
    key_n = np.zeros((10, 2, 8), np.uint16)
    value_n = np.zeros((10, 2, 8), np.uint16)
    rk, rv = _gather_ref(kc_n, vc_n, tables_n, seq_n, key_n, value_n)
    _aclnn.GatherPaKvCache(kc_n, vc_n, tables_n, seq_n, key_n, value_n, None, "Norm", False)
    assert np.array_equal(key_n, rk) and np.array_equal(value_n, rv)


def test_with_format_selects_the_nz_layout_and_reinterprets_dtypes():
    nb, bs, n, d, e = 3, 4, 2, 16, 16   # fp16: E = 16
    kc = torch.randn(nb, n * d // e, bs, e).half()
    vc = torch.randn(nb, n * d // e, bs, e).half()
    tables = torch.tensor([[2, 0], [1, 2]], dtype=torch.int32)
    seq = torch.tensor([5, 3], dtype=torch.int32)
    key = torch.zeros(8, n * d).half()
    value = torch.zeros(8, n * d).half()
    # PA_NZ needs FRACTAL_NZ caches: ND ones are refused, nothing written.
    with pytest.raises(tilejit.ArgumentValueError, match="keyCache: format") as info:
        _aclnn.GatherPaKvCache(kc, vc, tables, seq, key, value, None, "PA_NZ", False)
    assert info.value.status == 561002 and info.value.argument == "keyCache"
    assert not key.any() and not value.any()
    rk, rv = _gather_ref(kc.numpy(), vc.numpy(), tables.numpy(), seq.numpy(), key.numpy(),
                         value.numpy(), nz=True)
    nz_k = _aclnn.with_format(kc, "FRACTAL_NZ")
    assert nz_k.format == "FRACTAL_NZ" and nz_k.tensor is kc and nz_k.dtype is None
    _aclnn.GatherPaKvCache(nz_k, _aclnn.with_format(vc, "FRACTAL_NZ"), tables, seq, key,
                           value, cacheMode="PA_NZ", isSeqLensCumsum=False)
    assert np.array_equal(key.numpy(), rk) and np.array_equal(value.numpy(), rv)

    # dtype=: uint8 bytes passed as FLOAT8_E4M3FN (a pure copy keeps every bit).
    kc8 = torch.randint(0, 256, (2, 4, 1, 32), dtype=torch.uint8)
    key8 = torch.zeros(6, 1, 32, dtype=torch.uint8)
    value8 = torch.zeros(6, 1, 32, dtype=torch.uint8)
    f8 = lambda t: _aclnn.with_format(t, "ND", dtype="FLOAT8_E4M3FN")  # noqa: E731
    tables8 = torch.tensor([[1, 0]], dtype=torch.int32)
    seq8 = torch.tensor([6], dtype=torch.int32)
    rk, rv = _gather_ref(kc8.numpy(), kc8.numpy(), tables8.numpy(), seq8.numpy(),
                         key8.numpy(), value8.numpy())
    _aclnn.GatherPaKvCache(f8(kc8), f8(kc8), tables8, seq8, f8(key8), f8(value8), None,
                           "Norm", False)
    assert np.array_equal(key8.numpy(), rk) and np.array_equal(value8.numpy(), rv)
    # A FLOAT8 cache with a UINT8 output breaks the operator's dtype rule.
    with pytest.raises(tilejit.ArgumentTypeError, match="keyRef: dtype"):
        _aclnn.GatherPaKvCache(f8(kc8), f8(kc8), tables8, seq8, key8, f8(value8), None,
                               "Norm", False)
    with pytest.raises(ValueError, match="unknown format 'NZ'"):
        _aclnn.with_format(kc, "NZ")
    with pytest.raises(ValueError, match="unknown dtype"):
        _aclnn.with_format(kc, "ND", dtype="float16")
    with pytest.raises(tilejit.ArgumentTypeError, match="element size"):
        _aclnn.GatherPaKvCache(_aclnn.with_format(kc, "ND", dtype="FLOAT"), vc, tables, seq,
                               key, value, None, "PA_NZ", False)


#===------------------------------------------------------------------------===#
# Errors
#===------------------------------------------------------------------------===#

def _untouched(*pairs):
    return all(torch.equal(a, b) for a, b in pairs)


@pytest.mark.parametrize("bad, param, what", [
    ([1.0, 2.0], "keyRef", "torch.Tensor on the CPU"),
    ("tensor", "keyRef", "torch.Tensor on the CPU"),
    (torch.empty(10, 2, 8, device="meta"), "keyRef", "CPU tensor is required"),
    (torch.quantize_per_tensor(torch.zeros(10, 2, 8), 0.1, 0, torch.qint8), "keyRef",
     "dtype qint8 has no aclDataType"),
    (torch.zeros(10, 2, 8).to_sparse(), "keyRef", "strided tensor is required"),
])
def test_arguments_of_the_wrong_kind_raise_type_errors(bad, param, what):
    kc, vc, tables, seq, key, value = _gather_problem()
    value0 = value.clone()
    with pytest.raises(tilejit.ArgumentTypeError, match=what) as info:
        _aclnn.GatherPaKvCache(kc, vc, tables, seq, bad, value, None, "Norm", False)
    assert isinstance(info.value, TypeError) and isinstance(info.value, tilejit.Error)
    assert info.value.status is None and info.value.argument == param
    assert param in str(info.value)
    assert _untouched((value, value0))


def test_scalar_string_and_array_kinds_and_the_call_shape():
    kc, vc, tables, seq, key, value = _gather_problem()
    args = [kc, vc, tables, seq, key, value, None, "Norm", False]
    cases = [
        ({7: 1.5}, "cacheMode", "a str is required"),
        ({8: 1}, "isSeqLensCumsum", "a bool is required"),
        ({8: None}, "isSeqLensCumsum", "not optional"),
        ({0: None}, "keyCache", "not optional"),
        ({7: "No\0rm"}, "cacheMode", "NUL"),
    ]
    for change, param, what in cases:
        a = list(args)
        for i, v in change.items():
            a[i] = v
        with pytest.raises((tilejit.ArgumentTypeError, tilejit.ArgumentValueError),
                           match=what) as info:
            _aclnn.GatherPaKvCache(*a)
        assert info.value.argument == param
    with pytest.raises(tilejit.ArgumentTypeError, match="missing required argument 'valueRef'"):
        _aclnn.GatherPaKvCache(kc, vc, tables, seq, key)
    with pytest.raises(tilejit.ArgumentTypeError, match="takes 9 arguments, got 10"):
        _aclnn.GatherPaKvCache(*args, True)
    with pytest.raises(tilejit.ArgumentTypeError, match="unexpected keyword argument 'mode'"):
        _aclnn.GatherPaKvCache(*args[:8], isSeqLensCumsum=False, mode="Norm")
    with pytest.raises(tilejit.ArgumentTypeError, match="multiple values for argument 'keyRef'"):
        _aclnn.GatherPaKvCache(*args, keyRef=key)
    # int, float, int-array and tensor-list kinds (IncreFlashAttentionV4).
    q = torch.zeros(1, 1, 16).half()
    kv = [torch.zeros(1, 4, 16).half()]
    out = torch.zeros(1, 1, 16).half()
    base = dict(query=q, key=kv, value=kv, numHeads=1, scaleValue=1.0, inputLayout="BSH",
                numKeyValueHeads=0, blockSize=0, innerPrecise=1, attentionOut=out)
    for change, param, what in [
        (dict(numHeads=1.0), "numHeads", "an int is required"),
        (dict(numHeads=2**70), "numHeads", "64 bits"),
        (dict(scaleValue="1"), "scaleValue", "a float is required"),
        (dict(actualSeqLengths="12"), "actualSeqLengths", "a sequence of ints"),
        (dict(actualSeqLengths=[1, 2.5]), "actualSeqLengths", "an int is required"),
        (dict(key=kv[0]), "key", "a list or tuple of tensors"),
        (dict(key=[np.zeros(3), "x"]), "key", "torch.Tensor on the CPU"),
    ]:
        with pytest.raises((tilejit.ArgumentTypeError, tilejit.ArgumentValueError),
                           match=what) as info:
            _aclnn.IncreFlashAttentionV4(**dict(base, **change))
        assert info.value.argument == param
    # NumPy integers and floats pass as ints and floats; the list entries as a tuple.
    _aclnn.IncreFlashAttentionV4(**dict(base, numHeads=np.int64(1), scaleValue=np.float32(1),
                                        key=tuple(kv), actualSeqLengths=(np.int32(4),)))


@pytest.mark.parametrize("change, status, cls, param", [
    # Shapes: the operator's rules, ValueError, with the aclnn status.
    (dict(keyRef=torch.zeros(10, 2, 8, 1).half()), 161002, tilejit.ArgumentValueError, "keyRef"),
    (dict(keyRef=torch.zeros(10, 3, 8).half()), 561002, tilejit.ArgumentValueError, "keyRef"),
    (dict(seqLens=torch.tensor([3, 5, 0], dtype=torch.int32)), 561002,
     tilejit.ArgumentValueError, "seqLens"),
    (dict(cacheMode="nz"), 561002, tilejit.ArgumentValueError, "cacheMode"),
    # dtypes: TypeError, with the aclnn status.
    (dict(keyRef=torch.zeros(10, 2, 8).float()), 161002, tilejit.ArgumentTypeError, "keyRef"),
    (dict(seqLens=torch.tensor([3, 5, 0, 2], dtype=torch.int64)), 161002,
     tilejit.ArgumentTypeError, "seqLens"),
    (dict(blockTables=torch.zeros(4, 3, dtype=torch.int16)), 161002,
     tilejit.ArgumentTypeError, "blockTables"),
])
def test_operator_rules_raise_with_the_status_and_leave_outputs_untouched(change, status, cls,
                                                                           param):
    kc, vc, tables, seq, key, value = _gather_problem()
    args = dict(keyCache=kc, valueCache=vc, blockTables=tables, seqLens=seq, keyRef=key,
                valueRef=value, seqOffsetOptional=None, cacheMode="Norm",
                isSeqLensCumsum=False)
    args.update(change)
    saved = [(t, t.clone()) for t in args.values() if isinstance(t, torch.Tensor)]
    with pytest.raises(cls) as info:
        _aclnn.GatherPaKvCache(**args)
    e = info.value
    assert e.status == status and e.argument == param
    assert e.message.startswith("aclnnGatherPaKvCacheGetWorkspaceSize: " + param)
    assert str(e).startswith(e.message) and f"status {status}" in str(e)
    assert _untouched(*saved)


def test_every_operator_reaches_its_c_checks():
    # One refused call per entry point: the C message comes back with its status.
    with pytest.raises(tilejit.ArgumentValueError, match="keyCacheRef") as info:
        _aclnn.ScatterPaKvCache(torch.zeros(2, 1, 8).half(), torch.zeros(1, 4, 2, 8).half(),
                                torch.zeros(2, dtype=torch.int32), torch.zeros(2, 1, 8).half(),
                                torch.zeros(1, 4, 1, 8).half(), cacheModeOptional="Norm")
    assert info.value.status == 561002
    with pytest.raises(tilejit.ArgumentTypeError, match="slotMapping: dtype") as info:
        _aclnn.NsaCompressWithCache(
            torch.zeros(2, 64, 1, 16).half(), torch.zeros(16, 1).half(),
            torch.zeros(1, dtype=torch.int64), [16], torch.zeros(1, 2, dtype=torch.int32), None,
            16, 16, 1, 64, torch.zeros(4, 1, 16).half())
    assert info.value.status == 161002
    with pytest.raises(tilejit.ArgumentValueError, match="inputLayout") as info:
        _aclnn.IncreFlashAttentionV4(
            torch.zeros(1, 1, 16).half(), [torch.zeros(1, 4, 16).half()],
            [torch.zeros(1, 4, 16).half()], None, None, None, None, None, None, None, None,
            None, None, None, None, 1, 1.0, "bsh", 0, 0, 1, torch.zeros(1, 1, 16).half())
    assert info.value.argument == "inputLayout"
    t = torch.zeros(2, 1, 8)
    st = torch.zeros(2, 1, 8)
    with pytest.raises(tilejit.ArgumentValueError, match="headNum") as info:
        _aclnn.FlashAttentionUnpaddingScoreGradV5(
            t, None, t, None, t, t, None, None, None, None, st, st, None, t, None, None, [2],
            [2], None, None, 1.0, 1.0, 65536, 65536, 0, "TND", 0, 0, 1, None,
            torch.zeros(2, 1, 8), None, torch.zeros(2, 1, 8), None, torch.zeros(2, 1, 8),
            None, None)
    assert info.value.status == 161002


#===------------------------------------------------------------------------===#
# Threads
#===------------------------------------------------------------------------===#

def test_threads_calling_at_once_get_their_own_results_and_errors():
    problems = [_gather_problem(seed=s, lens=(2 + s % 3, 4, 1, 3)) for s in range(8)]
    refs = [_check_gather(*p) for p in problems]
    errors = [None] * 8
    barrier = threading.Barrier(8)

    def work(i):
        kc, vc, tables, seq, key, value = problems[i]
        barrier.wait()
        for _ in range(20):
            if i % 2:
                # Odd threads also fail between their calls: the message and status
                # they get are their own.
                try:
                    _aclnn.GatherPaKvCache(kc, vc, tables, seq[:3], key, value, None,
                                           "Norm", False)
                except tilejit.ArgumentValueError as e:
                    if e.argument != "seqLens" or e.status != 561002:
                        errors[i] = e
                else:
                    errors[i] = "no error"
            _aclnn.GatherPaKvCache(kc, vc, tables, seq, key, value, None, "Norm", False)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [None] * 8
    for (kc, vc, tables, seq, key, value), (rk, rv) in zip(problems, refs):
        assert np.array_equal(_np(key), rk) and np.array_equal(_np(value), rv)


#===------------------------------------------------------------------------===#
# The generator refuses what it cannot bind
#===------------------------------------------------------------------------===#

GENERATOR = os.path.join(os.path.dirname(__file__), os.pardir, "aclnn", "gen_aclnn_bindings.py")


def _generate(tmp_path, extra_header):
    """Runs the generator over a copy of include/ with one more aclnnop/ header."""
    import shutil
    import subprocess
    import sys
    pytest.importorskip("clang.cindex")
    inc = tmp_path / "include"
    shutil.copytree(INCLUDE, inc)
    (inc / "aclnnop" / "aclnn_extra.h").write_text(
        '#include "aclnn/aclnn_base.h"\n' + extra_header)
    out = tmp_path / "out.cpp"
    proc = subprocess.run([sys.executable, GENERATOR, "--include-dir", str(inc),
                           "--output", str(out)], capture_output=True, text=True)
    return proc, out


def test_generator_binds_a_new_entry_point_from_its_header(tmp_path):
    proc, out = _generate(tmp_path, """
aclnnStatus aclnnExtraGetWorkspaceSize(const aclTensor *x, const aclTensor *y ACLNN_OPTIONAL,
    const aclFloatArray *w ACLNN_OPTIONAL, int32_t n, float s, char *mode,
    uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnExtra(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
""")
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert '{"Extra", "aclnnExtraGetWorkspaceSize", "aclnnop/aclnn_extra.h"' in text
    for row in ('{"x", Kind::Tensor, false}', '{"y", Kind::Tensor, true}',
                '{"w", Kind::FloatArray, true}', '{"n", Kind::Int, false}',
                '{"s", Kind::Float, false}', '{"mode", Kind::Str, false}'):
        assert row in text
    assert "static_cast<int32_t>(s[3].i)" in text and "static_cast<float>(s[4].f)" in text


@pytest.mark.parametrize("header, error", [
    ("aclnnStatus aclnnExtraGetWorkspaceSize(const aclScalar *x, uint64_t *workspaceSize,"
     " aclOpExecutor **executor);\naclnnStatus aclnnExtra(void *w, uint64_t n,"
     " aclOpExecutor *e, aclrtStream s);", "a type the binding does not know"),
    ("aclnnStatus aclnnExtraGetWorkspaceSize(const aclTensor *x, uint64_t *workspaceSize,"
     " aclOpExecutor **executor);", "has no phase 2"),
    ("aclnnStatus aclnnExtraRun(const aclTensor *x);", "neither a phase 1"),
    ("aclnnStatus aclnnExtraGetWorkspaceSize(int64_t n ACLNN_OPTIONAL, uint64_t *"
     "workspaceSize, aclOpExecutor **executor);\naclnnStatus aclnnExtra(void *w, uint64_t n,"
     " aclOpExecutor *e, aclrtStream s);", "not a pointer"),
    ("aclnnStatus aclnnExtraGetWorkspaceSize(const aclTensor *x);\naclnnStatus aclnnExtra("
     "void *w, uint64_t n, aclOpExecutor *e, aclrtStream s);", "must end with"),
    ("aclnnStatus aclnnExtraGetWorkspaceSize(const aclTensor *x, uint64_t *workspaceSize,"
     " aclOpExecutor **executor);\naclnnStatus aclnnExtra(aclOpExecutor *e);",
     "phase 2 must be"),
    ("aclnnStatus aclnnExtraGetWorkspaceSize(const aclTensor *x uint64_t);", "does not parse"),
])
def test_generator_refuses_what_it_cannot_bind(tmp_path, header, error):
    proc, _ = _generate(tmp_path, header)
    assert proc.returncode == 1 and error in proc.stderr, proc.stderr


def test_the_gil_is_released_while_the_operator_runs():
    # A thread that wakes every 0.1 ms records the times it ran Python; the main thread
    # records when each of its calls ran. With a switch interval longer than the test,
    # the main thread lets go of the GIL only where something releases it, so a wake-up
    # inside a call means the call released it.
    nb, bs, width = 64, 128, 4096
    kc = torch.ones(nb, bs, 1, 16, dtype=torch.float16)
    tables = torch.arange(nb, dtype=torch.int32).repeat(width // nb).reshape(1, width)
    rows = width * bs                            # 512K rows of 32 bytes
    args = (kc, kc, tables, torch.tensor([rows], dtype=torch.int32),
            torch.zeros(rows, 1, 16, dtype=torch.float16),
            torch.zeros(rows, 1, 16, dtype=torch.float16), None, "Norm", False)
    _aclnn.GatherPaKvCache(*args)                 # compiled before the measured calls
    import time
    wakes, calls = [], []
    stop = threading.Event()

    def sleeper():
        while not stop.is_set():
            time.sleep(0.0001)
            wakes.append(time.perf_counter())

    import sys
    interval = sys.getswitchinterval()
    t = threading.Thread(target=sleeper)
    t.start()
    sys.setswitchinterval(100.0)
    try:
        for _ in range(30):
            start = time.perf_counter()
            _aclnn.GatherPaKvCache(*args)
            calls.append((start, time.perf_counter()))
    finally:
        sys.setswitchinterval(interval)
        stop.set()
        t.join()
    inside = sum(1 for w in wakes for a, b in calls if a < w < b)
    assert inside > 0, (len(wakes), [b - a for a, b in calls][:5])
