#!/usr/bin/env python3
"""tilejit's own Python package, timed by `tilejit bench` (the python/ cases).

`tilejit bench` starts this script with the build's package first on its
PYTHONPATH and speaks the peer's protocol with it (bench/suite/Peer.h: one
JSON object per line; `hello`, `setup`, `run`, `reset`, `quit`). Each `run`
answers with the seconds of one sample, timed here around the calls alone,
while the benchmark times the C++ side of the same case in its own process,
the two alternating.

Setups:
  launch    the tutorial's kernel compiled with `tilejit.compile(source,
            kernel, **params)` (a cache hit from then on); a sample is a
            loop of `calls` launches `k(x, y, a)` on NumPy arrays or PyTorch
            CPU tensors of `n` float32 (the benchmark divides by `calls`);
  torch-op  one call of `torch.ops.tilejit.<op>` (registered by
            `import tilejit.torch`) on tensors loaded from the files the
            benchmark wrote, its outputs compared with the C API's; a sample
            is one call. An operator that is not registered answers
            "unavailable" (the case then reports "not available").
"""
import importlib
import json
import pkgutil
import sys
import time

from peer_protocol import Unavailable, serve, settings

try:
    import numpy as np
    import tilejit
except Exception as e:  # noqa: BLE001 - any import failure: no Python side
    print(json.dumps({"ok": False, "error": f"tilejit does not import: {type(e).__name__}: {e}"}),
          flush=True)
    sys.exit(0)

# PyTorch and the operators, where they import (the launch cases on NumPy
# need neither).
torch = None
TORCH_NOTE = ""
try:
    import torch  # noqa: F811
except Exception as e:  # noqa: BLE001
    TORCH_NOTE = f"torch does not import: {type(e).__name__}: {e}"


def register_ops():
    """Imports tilejit.torch, which registers the operators. Where it fails
    (an operator module missing or broken), each module of tilejit._ops is
    imported on its own so that the others are still there; the note says
    what failed."""
    if torch is None:
        return TORCH_NOTE
    try:
        importlib.import_module("tilejit.torch")
        return ""
    except Exception as e:  # noqa: BLE001
        note = f"import tilejit.torch failed ({type(e).__name__}: {e})"
    failed = []
    try:
        ops = importlib.import_module("tilejit._ops")
        for m in pkgutil.iter_modules(ops.__path__):
            try:
                importlib.import_module(f"tilejit._ops.{m.name}")
            except Exception as e:  # noqa: BLE001
                failed.append(f"{m.name}: {type(e).__name__}: {e}")
    except Exception as e:  # noqa: BLE001
        failed.append(f"tilejit._ops: {type(e).__name__}: {e}")
    note += "; each operator module imported on its own"
    if failed:
        note += " (failed: " + "; ".join(failed) + ")"
    return note


NUMPY_DTYPES = {"f32": np.float32, "f16": np.float16, "i8": np.int8, "u8": np.uint8,
                "i16": np.int16, "i32": np.int32, "i64": np.int64, "bool": np.bool_}


def load(spec):
    """A PyTorch CPU tensor from a file of raw bytes: {path, dtype, shape}."""
    raw = np.fromfile(spec["path"], dtype=np.uint8)
    if spec["dtype"] == "bf16":
        t = torch.from_numpy(raw.view(np.int16).copy()).view(torch.bfloat16)
    else:
        t = torch.from_numpy(raw.view(NUMPY_DTYPES[spec["dtype"]]).copy())
    return t.reshape(spec["shape"])


def max_abs_diff(got, want):
    """0 where the bits are equal, else max |got - want| in float64 (1 for
    integers that differ; 1e308 where a difference is not finite)."""
    if tuple(got.shape) != tuple(want.shape) or got.dtype != want.dtype:
        raise RuntimeError(f"output {got.dtype}{list(got.shape)} where the C API's is "
                           f"{want.dtype}{list(want.shape)}")
    got = got.contiguous()
    if torch.equal(got.view(torch.uint8) if got.dtype != torch.bool else got,
                   want.view(torch.uint8) if want.dtype != torch.bool else want):
        return 0.0
    if not got.is_floating_point():
        return 1.0
    d = float((got.double() - want.double()).abs().max())
    return d if d == d and d != float("inf") else 1e308


class Launch:
    def __init__(self, s):
        self.calls = int(s["calls"])
        self.a = float(s["a"])
        self.k = tilejit.compile(s["source"], s["kernel"], **s["params"])
        n = int(s["n"])
        if s["arrays"] == "numpy":
            self.x = np.arange(n, dtype=np.float32)
            self.y = np.zeros(n, dtype=np.float32)
            expect = 3 * self.x if self.a == 3.0 else self.a * self.x
            kind = "NumPy arrays"
        else:
            if torch is None:
                raise Unavailable(TORCH_NOTE)
            self.x = torch.arange(n, dtype=torch.float32)
            self.y = torch.zeros(n, dtype=torch.float32)
            expect = (self.a * self.x).numpy()
            kind = "PyTorch CPU tensors"
        self.k(self.x, self.y, self.a)
        if not (np.asarray(self.y) == expect).all():
            raise RuntimeError("k(x, y, a) computed a wrong y")
        self.key = self.k.key
        self.note = f"k(x, y, {self.a:g}) on {kind} of {n} float32"
        self.max_abs_diff = None

    def __call__(self):
        k, x, y, a = self.k, self.x, self.y, self.a
        t = time.perf_counter()
        for _ in range(self.calls):
            k(x, y, a)
        return time.perf_counter() - t


class TorchOp:
    def __init__(self, s):
        if torch is None:
            raise Unavailable(TORCH_NOTE)
        name = s["operator"]
        packet, _, overload = name.partition(".")
        try:
            fn = getattr(torch.ops.tilejit, packet)
            if overload:
                fn = getattr(fn, overload)
        except (AttributeError, RuntimeError):
            why = f"torch.ops.tilejit.{name} is not registered"
            raise Unavailable(why + (f" ({OPS_NOTE})" if OPS_NOTE else "")) from None
        tensors = {k: load(v) for k, v in s["tensors"].items()}

        def value(v):
            if isinstance(v, dict) and set(v) == {"tensor"}:
                return tensors[v["tensor"]]
            return v

        self.fn = fn
        self.args = [value(v) for v in s["args"]]
        self.kwargs = {k: value(v) for k, v in s["kwargs"].items()}
        result = self()
        diffs = []
        for e in s["expect"]:
            of = e["of"]
            if of == "result":
                got = result
            elif of.startswith("result."):
                got = result[int(of.split(".", 1)[1])]
            else:
                got = tensors[of]
            diffs.append(max_abs_diff(got, load(e)))
        self.max_abs_diff = max(diffs) if diffs else None
        self.key = ""
        self.note = f"torch.ops.tilejit.{name}"

    def __call__(self):
        return self.fn(*self.args, **self.kwargs)

    def timed(self):
        t = time.perf_counter()
        self.fn(*self.args, **self.kwargs)
        return time.perf_counter() - t


CASES = {"launch": Launch, "torch-op": TorchOp}
OPS_NOTE = ""


def hello(msg):
    global OPS_NOTE
    threads = int(msg.get("threads", 1))
    OPS_NOTE = register_ops()
    ops = []
    if torch is not None:
        torch.set_num_threads(threads)
        try:
            ops = sorted(
                n.split("::", 1)[1]
                for n in torch._C._dispatch_get_registrations_for_dispatch_key("CPU")
                if n.startswith("tilejit::"))
        except Exception:  # noqa: BLE001 - a private API: the list is informative
            ops = []
    return {
        "tilejit": tilejit.version(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "torch": torch.__version__ if torch is not None else None,
        "ops": ops,
        "ops_note": OPS_NOTE,
        "threads": threads,
        "settings": settings(),
    }


def setup(msg):
    case = CASES[msg["case"]](msg)
    fields = {"note": case.note, "key": case.key}
    if case.max_abs_diff is not None:
        fields["max_abs_diff"] = case.max_abs_diff
    return case, fields


def run(case):
    return case.timed() if isinstance(case, TorchOp) else case()


if __name__ == "__main__":
    serve(hello, setup, run)
