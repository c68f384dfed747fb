"""Your own kernels from Python: compile, launch on NumPy and PyTorch, jit, emit, errors.

Every launch is checked against a NumPy computation of the same thing written here.
"""
import threading

import numpy as np
import pytest

import tilejit

torch = pytest.importorskip("torch")

AXPBY = """
// y = alpha * x + beta * y in f32, stored back as T (integers round half to even).
kernel axpby<T: type, BN: i64 = 64>(x: gm<T>[N], y: gm<T>[N], alpha: f32, beta: f32)
    grid(cdiv(N, BN))
{
  let i0 = program_id(0) * BN;
  let r = alpha * cast<f32>(load(x, [i0], [BN])) + beta * cast<f32>(load(y, [i0], [BN]));
  if T == f32 || T == f16 || T == bf16 {
    store(y, [i0], cast<T>(r));
  } else {
    store(y, [i0], cast<T>(round(r)));
  }
}
"""

# Rows of a 2-D tensor scaled by a per-row factor and an i64 offset: strided views.
ROWS = """
kernel rows<T: f32|f16|bf16, BM: i64 = 4, BN: i64 = 16>(
    x: gm<T>[M, N], f: gm<f32>[M], y: gm<f32>[M, N], off: i64, flip: bool)
    grid(cdiv(M, BM), cdiv(N, BN))
{
  let m0 = program_id(0) * BM;
  let n0 = program_id(1) * BN;
  var v = cast<f32>(load(x, [m0, n0], [BM, BN])) * expand_dims(load(f, [m0], [BM]), 1);
  if flip {
    v = -v;
  }
  store(y, [m0, n0], v + cast<f32>(off));
}
"""

NP_DTYPES = [np.float32, np.float16, np.int8, np.uint8, np.int16, np.int32, np.int64]
TORCH_DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int8, torch.uint8,
                torch.int16, torch.int32, torch.int64]


def axpby_reference(x, y, alpha, beta, dtype):
    r = np.float32(alpha) * x.astype(np.float32) + np.float32(beta) * y.astype(np.float32)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return np.clip(np.rint(r), info.min, info.max).astype(dtype)
    return r.astype(dtype)


def sample(shape, dtype, rng):
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -50), min(info.max, 50), shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", NP_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [1, 63, 64, 1000])
def test_numpy_every_dtype(dtype, n):
    rng = np.random.default_rng(n)
    k = tilejit.compile(AXPBY, "axpby", T=dtype)
    x, y = sample(n, dtype, rng), sample(n, dtype, rng)
    want = axpby_reference(x, y, 1.5, -0.5, dtype)
    k(x, y, 1.5, -0.5)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=str)
def test_torch_every_dtype(dtype):
    rng = np.random.default_rng(7)
    k = tilejit.compile(AXPBY, "axpby", T=dtype)
    n = 300
    if dtype == torch.bfloat16:
        x = torch.randn(n, generator=torch.Generator().manual_seed(1)).to(dtype)
        y = torch.randn(n, generator=torch.Generator().manual_seed(2)).to(dtype)
        want = (1.5 * x.float() - 0.5 * y.float()).to(dtype)
        k(x, y, 1.5, -0.5)
        assert torch.equal(y, want)
        return
    npdt = torch.empty(0, dtype=dtype).numpy().dtype.type
    xn, yn = sample(n, npdt, rng), sample(n, npdt, rng)
    want = axpby_reference(xn, yn, 1.5, -0.5, npdt)
    x, y = torch.from_numpy(xn.copy()), torch.from_numpy(yn.copy())
    k(x, y, 1.5, -0.5)
    np.testing.assert_array_equal(y.numpy(), want)


def test_in_place_without_copy():
    k = tilejit.compile(AXPBY, "axpby", T="f32")
    base = np.zeros(200, np.float32)
    view = base[50:150]
    x = np.ones(100, np.float32)
    k(x, view, 2.0, 0.0)
    assert (base[50:150] == 2.0).all() and (base[:50] == 0).all() and (base[150:] == 0).all()
    t = torch.zeros(200)
    k(torch.ones(100), t[100:], 3.0, 0.0)
    assert (t[100:] == 3.0).all() and (t[:100] == 0).all()


@pytest.mark.parametrize("lib", ["numpy", "torch"])
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_strided_views(lib, dtype):
    if lib == "numpy" and dtype == "bf16":
        pytest.skip("NumPy has no bfloat16")
    k = tilejit.compile(ROWS, "rows", T=dtype)
    rng = np.random.default_rng(3)
    big = rng.standard_normal((20, 50)).astype(np.float32)
    f = rng.standard_normal(40).astype(np.float32)
    if lib == "numpy":
        xs = big.astype(np.float16 if dtype == "f16" else np.float32)
        x = xs[2:17:3, 5:45].T          # transposed, strided in both axes: [40, 5]
        fv = f[::1]
        xf = x.astype(np.float32)
        y = np.full((40, 5), 7.0, np.float32)
        k(x, fv, y, 3, False)
        want = xf * fv[:, None] + 3
        np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
    else:
        tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
        xs = torch.from_numpy(big).to(tdt)
        x = xs[2:17:3, 5:45].t()
        fv = torch.from_numpy(f)
        y = torch.full((80, 5), 7.0)[::2]   # every other row of a larger tensor
        k(x, fv, y, -2, True)
        want = -(x.float() * fv[:, None]) - 2
        torch.testing.assert_close(y, want, rtol=1e-6, atol=1e-6)


def test_negative_strides_numpy():
    k = tilejit.compile(AXPBY, "axpby", T=np.float32)
    x = np.arange(100, dtype=np.float32)
    y = np.zeros(100, np.float32)
    k(x[::-1], y, 1.0, 0.0)
    np.testing.assert_array_equal(y, x[::-1])


def test_kernel_properties():
    k = tilejit.compile(AXPBY, "axpby", T=np.float16, BN=128)
    assert k.key.startswith("axpby[BN=128,T=f16]@")
    assert [(p.name, p.tensor, p.dtype, p.rank) for p in k.signature] == [
        ("x", True, "f16", 1), ("y", True, "f16", 1), ("alpha", False, "f32", 0),
        ("beta", False, "f32", 0)]
    t = k.times
    assert set(t) == {"parse", "sema", "tile_passes", "codegen", "llvm_opt", "machine_code",
                      "total"}
    assert all(v >= 0 for v in t.values())
    again = tilejit.compile(AXPBY, "axpby", T="f16", BN=128)
    assert again.key == k.key and not again.compiled


def test_source_from_path(tmp_path):
    path = tmp_path / "axpby.tile"
    path.write_text(AXPBY)
    for source in (path, str(path), tilejit.Source.from_file(str(path))):
        k = tilejit.compile(source, "axpby", T="f32")
        x, y = np.ones(10, np.float32), np.ones(10, np.float32)
        k(x, y, 2.0, 1.0)
        assert (y == 3).all()
    with pytest.raises(tilejit.Error, match="cannot read"):
        tilejit.compile(str(tmp_path / "missing.tile"), "axpby", T="f32")


def test_compile_errors_carry_the_location():
    bad = AXPBY.replace("cast<f32>(load(y", "cast<f32>(lod(y")
    with pytest.raises(tilejit.CompileError) as e:
        tilejit.compile(bad, "axpby", T="f32")
    assert e.value.line == 7 and e.value.column > 0
    assert "lod" in str(e.value) and "^" in e.value.diagnostic
    with pytest.raises(tilejit.CompileError, match="did you mean 'BN'"):
        tilejit.compile(AXPBY, "axpby", T="f32", B=8)
    with pytest.raises(tilejit.CompileError, match="no kernel 'nope'"):
        tilejit.declaration(AXPBY, "nope")
    with pytest.raises(tilejit.ArgumentTypeError):
        tilejit.compile(AXPBY, "axpby", T=object())
    # A string is the DSL's text, checked by the compiler's binding.
    with pytest.raises(tilejit.CompileError, match="'float128' is not a dtype"):
        tilejit.compile(AXPBY, "axpby", T="float128")
    assert issubclass(tilejit.CompileError, tilejit.Error)


def test_launch_errors_write_nothing():
    k = tilejit.compile(AXPBY, "axpby", T=np.float32)
    x = np.ones(16, np.float32)
    y = np.full(16, 5.0, np.float32)
    cases = [
        ((x, y, 1.0), TypeError, "takes 4 arguments"),
        ((x, y, 1.0, 2.0, 3.0), TypeError, "takes 4 arguments"),
        ((x.astype(np.float16), y, 1.0, 1.0), TypeError, "gm<f32>"),
        ((x, y, "a", 1.0), TypeError, "scalar f32"),
        (([1.0] * 16, y, 1.0, 1.0), TypeError, "NumPy array or a PyTorch CPU tensor"),
        ((x[:15], y, 1.0, 1.0), ValueError, "must equal N"),
        ((x.reshape(4, 4), y, 1.0, 1.0), ValueError, "rank"),
        ((np.broadcast_to(np.float32(1), 16), y, 1.0, 1.0), ValueError, "read-only"),
        ((torch.ones(16, device="meta"), y, 1.0, 1.0), TypeError, "not the CPU"),
        ((x, y, 1.0, 1.0, ), None, None),
    ]
    for args, kind, match in cases[:-1]:
        with pytest.raises(kind, match=match):
            k(*args)
        np.testing.assert_array_equal(y, 5.0)
        with pytest.raises(tilejit.Error):
            k(*args)
    with pytest.raises(TypeError, match="threads"):
        k(x, y, 1.0, 1.0, thread=2)
    k(x, y, 1.0, 1.0, threads=1)
    np.testing.assert_array_equal(y, 6.0)


def test_scalar_kinds():
    k = tilejit.compile(ROWS, "rows", T="f32")
    x = np.ones((4, 16), np.float32)
    f = np.ones(4, np.float32)
    y = np.zeros((4, 16), np.float32)
    with pytest.raises(TypeError, match="scalar i64"):
        k(x, f, y, 1.5, False)
    with pytest.raises(TypeError, match="scalar i1"):
        k(x, f, y, 1, 1)
    with pytest.raises(ValueError, match="outside int64"):
        k(x, f, y, 2**63, False)
    np.testing.assert_array_equal(y, 0)
    k(x, f, y, np.int64(4), np.bool_(True))
    np.testing.assert_array_equal(y, 3)


def test_jit_specialises_from_dtypes():
    @tilejit.jit
    def axpby():
        return AXPBY

    for dtype in (np.float32, np.float16, np.int32):
        x, y = np.arange(10).astype(dtype), np.ones(10, dtype)
        axpby(x, y, 2.0, 1.0)
        np.testing.assert_array_equal(y, axpby_reference(np.arange(10).astype(dtype),
                                                         np.ones(10, dtype), 2.0, 1.0, dtype))
    xb = torch.arange(10, dtype=torch.bfloat16)
    yb = torch.zeros(10, dtype=torch.bfloat16)
    axpby(xb, yb, 1.0, 0.0, BN=16)
    assert torch.equal(xb, yb)
    k = axpby.specialize(xb, yb, 1.0, 0.0, BN=16)
    assert k.key.startswith("axpby[BN=16,T=bf16]")
    before = tilejit.cache_stats()["compiles"]
    axpby(xb, yb, 1.0, 0.0, BN=16)
    assert tilejit.cache_stats()["compiles"] == before
    with pytest.raises(TypeError, match="both are declared gm<T>"):
        axpby(np.ones(4, np.float32), np.ones(4, np.float16), 1.0, 1.0)
    with pytest.raises(TypeError, match="T=f16 was given"):
        axpby(np.ones(4, np.float32), np.ones(4, np.float32), 1.0, 1.0, T=np.float16)
    assert "spec T = f32" in axpby.emit("tile-opt", np.ones(4, np.float32),
                                        np.ones(4, np.float32), 1.0, 1.0)


def test_jit_named_kernel_and_bad_source():
    @tilejit.jit(kernel="rows")
    def whatever():
        return ROWS

    x = torch.ones(4, 16, dtype=torch.float16)
    y = torch.zeros(4, 16)
    whatever(x, torch.full((4,), 2.0), y, 1, False)
    assert (y == 3).all()

    @tilejit.jit
    def broken():
        return 42

    with pytest.raises(TypeError, match="must return the kernel's source"):
        broken(x)


@pytest.mark.parametrize("stage", ["ast", "tile", "tile-opt", "llvm", "llvm-opt", "asm"])
def test_emit_every_stage(stage):
    text = tilejit.emit(AXPBY, "axpby", stage=stage, T="f16")
    marker = {"ast": "Kernel", "tile": "kernel @axpby", "tile-opt": "spec T = f16",
              "llvm": "define", "llvm-opt": "define", "asm": "ret"}[stage]
    assert marker in text
    with pytest.raises(ValueError, match="stage"):
        tilejit.emit(AXPBY, "axpby", stage="bitcode", T="f16")


def test_declaration():
    d = tilejit.declaration(AXPBY, "axpby")
    assert d["kernel"] == "axpby"
    assert [(c["name"], c["kind"], c["default"]) for c in d["compile_params"]] == [
        ("T", "dtype", None), ("BN", "int", "64")]
    assert [(p["name"], p["tensor"], p["type"], p["dims"]) for p in d["params"]] == [
        ("x", True, "T", ["N"]), ("y", True, "T", ["N"]), ("alpha", False, "f32", []),
        ("beta", False, "f32", [])]


def test_specialize_binds_text_to_typed_values():
    # Strings in, typed values out: the binding `compile` uses, defaults applied.
    assert tilejit.specialize(AXPBY, "axpby", T=np.float16) == {"BN": 64, "T": "f16"}
    assert tilejit.specialize(AXPBY, "axpby", T="f32", BN="0x20") == {"BN": 32, "T": "f32"}
    with pytest.raises(tilejit.CompileError, match="'sixty' is not an integer \\(for 'BN'\\)"):
        tilejit.specialize(AXPBY, "axpby", T="f32", BN="sixty")


def test_cache_stats_and_version():
    s = tilejit.cache_stats()
    assert set(s) == {"entries", "memory_hits", "disk_hits", "compiles"}
    tilejit.compile(AXPBY, "axpby", T="i16")
    s2 = tilejit.cache_stats()
    tilejit.compile(AXPBY, "axpby", T="i16")
    assert tilejit.cache_stats()["memory_hits"] == s2["memory_hits"] + 1
    v = tilejit.version()
    assert v and all(part.isdigit() for part in v.split("."))


def test_threads_launch_at_once():
    k = tilejit.compile(AXPBY, "axpby", T=np.float32, BN=32)
    n, workers, rounds = 4096, 8, 25
    errors = []
    outs = [np.zeros(n, np.float32) for _ in range(workers)]
    xs = [np.full(n, i, np.float32) for i in range(workers)]

    def work(i):
        try:
            for _ in range(rounds):
                k(xs[i], outs[i], 1.0, 1.0)
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in range(workers):
        np.testing.assert_array_equal(outs[i], float(i * rounds))


def test_threads_compile_at_once():
    # Distinct specialisations compiled from several threads: each gets its own kernel.
    results, errors = {}, []

    def work(bn):
        try:
            results[bn] = tilejit.compile(AXPBY, "axpby", T="u8", BN=bn)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(bn,)) for bn in (16, 32, 48, 80)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert {k.key.split("@")[0] for k in results.values()} == {
        f"axpby[BN={bn},T=u8]" for bn in (16, 32, 48, 80)}


def test_the_gil_is_released_while_a_kernel_runs():
    # A Python thread counts while the main thread launches a long kernel on one core; its
    # rate during the launches is compared with its rate during a sleep of the same length
    # (which releases the GIL). With the GIL held through a launch the counter could move
    # only at the launches' edges: a small fraction of the sleep's rate.
    import time
    k = tilejit.compile(ROWS, "rows", T="f32", BM=1, BN=16)
    m, n = 8192, 4096
    x = np.ones((m, n), np.float32)
    f = np.ones(m, np.float32)
    y = np.zeros((m, n), np.float32)
    count = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        before, t0 = count[0], time.perf_counter()
        k(x, f, y, 0, False, threads=1)
        during, elapsed = count[0] - before, time.perf_counter() - t0
        before = count[0]
        time.sleep(elapsed)
        free = count[0] - before
    finally:
        stop.set()
        spinner.join()
    assert (y == 1).all()
    # The two cases lie far apart on either side of the bound.
    assert during > 0.3 * free, (during, free, elapsed)
