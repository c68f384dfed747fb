#!/usr/bin/env python3
"""PyTorch as tilejit's benchmark peer.

`tilejit bench` starts this script and speaks one JSON object per line with
it (bench/suite/Peer.h). A case writes its inputs to files, sends `setup`
(what to build from them); the peer loads them, runs its operator once,
compares its output with tilejit's where the case gave one, and answers.
Then each `run` calls the operator once and answers with the seconds it
took, timed here around the call alone; tilejit flushes the cache before
sending it, as before its own calls.

What the peer computes, at its best on a CPU (buffers preallocated and
`out=` variants where PyTorch has them, threads = tilejit's, oneDNN and an
optimised BLAS: tilejit puts Debian's OpenBLAS first on this process's
LD_LIBRARY_PATH, and `hello` names the BLAS actually loaded here, read from
/proc/self/maps after a matmul; a reference or unidentified BLAS makes the
benchmark report "no peer". The allocator settings come from the parent's
environment):
  ifa      decode attention over a paged cache: the pages the block table
           names gathered (index_select), then softmax(q k^T scale) v per
           KV-head group, batched (bf16 in bf16; f16 inputs computed in f32,
           as PyTorch 1.x has no f16 matmul on the CPU);
  scatter  index_put_ of the key and value rows into the flattened caches;
  gather   index_select of the rows a block table names;
  fag      the attention backward through autograd: softmax(q k^T scale +
           mask) v built once per case, each call torch.autograd.grad of
           the output against q, k, v with the same dy.
"""
import json
import sys
import time

from blas import detect_blas
from peer_protocol import serve, settings

try:
    import numpy as np
    import torch
except Exception as e:  # noqa: BLE001 - any import failure means no peer
    print(json.dumps({"ok": False, "error": f"torch does not import: {e}"}), flush=True)
    sys.exit(0)


def loaded_blas():
    """The BLAS this process actually calls: one small matmul (so that whatever loads
    lazily is loaded), then this process's maps."""
    a = torch.ones(64, 64)
    torch.mm(a, a)
    with open("/proc/self/maps", encoding="utf-8") as f:
        maps = f.read()
    try:
        config = torch.__config__.show()
    except Exception:  # noqa: BLE001 - only a fallback
        config = ""
    return detect_blas(maps, config)


def load(path, dtype, shape):
    """A tensor of `dtype` and `shape` from the raw bytes of `path`."""
    raw = np.fromfile(path, dtype=np.uint8)
    if dtype == torch.bfloat16:
        t = torch.from_numpy(raw.view(np.int16).copy()).view(torch.bfloat16)
    elif dtype == torch.float16:
        t = torch.from_numpy(raw.view(np.float16).copy())
    elif dtype == torch.float32:
        t = torch.from_numpy(raw.view(np.float32).copy())
    elif dtype == torch.int32:
        t = torch.from_numpy(raw.view(np.int32).copy())
    elif dtype == torch.int64:
        t = torch.from_numpy(raw.view(np.int64).copy())
    else:
        raise ValueError(f"dtype {dtype}")
    return t.reshape(shape)


def half_dtype(name):
    return torch.bfloat16 if name == "bf16" else torch.float16


class Ifa:
    def __init__(self, s):
        b, n, nkv, d, bs, length = s["b"], s["n"], s["nkv"], s["d"], s["bs"], s["len"]
        if any(l != length for l in s["lens"]):
            raise ValueError("ragged lengths are not set up for the peer")
        io = half_dtype(s["dtype"])
        self.compute = torch.bfloat16 if io == torch.bfloat16 else torch.float32
        per = length // bs
        blocks = b * per
        self.q = load(s["q"], io, (b, nkv, n // nkv, d)).to(self.compute)
        self.k = load(s["k"], io, (blocks, bs, nkv * d)).to(self.compute)
        self.v = load(s["v"], io, (blocks, bs, nkv * d)).to(self.compute)
        self.table = load(s["table"], torch.int32, (b * per,)).long()
        self.shape = (b, length, nkv, d)
        self.kbuf = torch.empty((blocks, bs, nkv * d), dtype=self.compute)
        self.vbuf = torch.empty_like(self.kbuf)
        self.scale = 1.0 / d**0.5
        self.out = torch.empty_like(self.q)
        self.io, self.n, self.d = io, n, d
        out = self()
        got = out.reshape(-1).float()
        want = load(s["expect"], io, (-1,)).float()
        self.max_abs_diff = float((got - want).abs().max())
        self.note = (
            f"pages gathered (index_select), then bmm/softmax/bmm per entry in "
            f"{'bf16' if self.compute == torch.bfloat16 else 'f32 (f16 inputs converted once)'}"
        )

    def __call__(self):
        torch.index_select(self.k, 0, self.table, out=self.kbuf)
        torch.index_select(self.v, 0, self.table, out=self.vbuf)
        b, length, nkv, d = self.shape
        k = self.kbuf.view(b, length, nkv, d)
        v = self.vbuf.view(b, length, nkv, d)
        for i in range(b):
            # [nkv, L, d] views with the cache's row stride: BLAS-compatible
            # batches, no copy.
            ki, vi = k[i].transpose(0, 1), v[i].transpose(0, 1)
            s = torch.bmm(self.q[i], ki.transpose(1, 2)).mul_(self.scale)
            torch.bmm(torch.softmax(s, dim=-1), vi, out=self.out[i])
        return self.out

class Scatter:
    def __init__(self, s):
        rows, row, tokens = s["rows"], s["row"], s["tokens"]
        self.key = load(s["key"], torch.float16, (tokens, row))
        self.value = load(s["value"], torch.float16, (tokens, row))
        self.kc = load(s["cache"], torch.float16, (rows, row))
        self.vc = self.kc.clone()
        self.slots = (load(s["slots"], torch.int32, (tokens,)).long(),)
        self()
        # Random bits may be NaN patterns: compare the bits.
        if not torch.equal(self.kc[self.slots[0]].view(torch.int16), self.key.view(torch.int16)):
            raise RuntimeError("index_put_ did not write the rows")
        self.max_abs_diff = None
        self.note = "index_put_ of the rows into the flattened caches"

    def __call__(self):
        self.kc.index_put_(self.slots, self.key)
        self.vc.index_put_(self.slots, self.value)


class Gather:
    def __init__(self, s):
        rows, row, tokens = s["rows"], s["row"], s["tokens"]
        self.kc = load(s["key_cache"], torch.float16, (rows, row))
        self.vc = load(s["value_cache"], torch.float16, (rows, row))
        self.index = load(s["index"], torch.int64, (tokens,))
        self.ko = torch.empty((tokens, row), dtype=torch.float16)
        self.vo = torch.empty_like(self.ko)
        self()
        self.max_abs_diff = None
        self.note = "index_select of the rows the block table names (out= buffers)"

    def __call__(self):
        torch.index_select(self.kc, 0, self.index, out=self.ko)
        torch.index_select(self.vc, 0, self.index, out=self.vo)


class Fag:
    def __init__(self, s):
        seq, n, d = s["seq"], s["n"], s["d"]
        if len(set(seq)) != 1:
            raise ValueError("the peer takes equal sequence lengths")
        b, length = len(seq), seq[0]
        dt = torch.bfloat16 if s["dtype"] == "bf16" else torch.float32

        def bnsd(name):
            return load(s[name], dt, (b, length, n, d)).permute(0, 2, 1, 3).contiguous()

        self.q = bnsd("q").requires_grad_()
        self.k = bnsd("k").requires_grad_()
        self.v = bnsd("v").requires_grad_()
        self.dy = bnsd("dy")
        scores = torch.matmul(self.q, self.k.transpose(-1, -2)) * s["scale"]
        if s["causal"]:
            mask = torch.ones(length, length, dtype=torch.bool).triu_(1)
            scores = scores.masked_fill(mask, float("-inf"))
        self.out = torch.matmul(torch.softmax(scores, dim=-1), self.v)
        dq = self()[0]
        got = dq.permute(0, 2, 1, 3).reshape(-1).float()
        want = load(s["expect_dq"], dt, (-1,)).float()
        self.max_abs_diff = float((got - want).abs().max())
        self.note = (
            "autograd backward of softmax(q k^T scale + mask) v "
            f"({s['dtype']}, graph built once, torch.autograd.grad per call)"
        )

    def __call__(self):
        return torch.autograd.grad(
            self.out, (self.q, self.k, self.v), grad_outputs=self.dy, retain_graph=True
        )


CASES = {"ifa": Ifa, "scatter": Scatter, "gather": Gather, "fag": Fag}


def hello(msg):
    torch.set_num_threads(int(msg.get("threads", 1)))
    blas = loaded_blas()
    return {
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "blas": blas["name"],
        "blas_path": blas["path"],
        "blas_optimised": blas["optimised"],
        "blas_why": blas["why"],
        "mkldnn": bool(torch.backends.mkldnn.is_available()),
        "cpu_capability": torch.backends.cpu.get_cpu_capability()
        if hasattr(torch.backends, "cpu")
        else "unknown",
        "settings": settings(),
        "grad": "torch.no_grad() except for the backward case",
    }


def setup(msg):
    with torch.no_grad() if msg["case"] != "fag" else torch.enable_grad():
        case = CASES[msg["case"]](msg)
    fields = {"note": case.note}
    if case.max_abs_diff is not None:
        fields["max_abs_diff"] = case.max_abs_diff
    return case, fields


def run(case):
    with torch.no_grad() if not isinstance(case, Fag) else torch.enable_grad():
        t = time.perf_counter()
        case()
        return time.perf_counter() - t


if __name__ == "__main__":
    serve(hello, setup, run)
