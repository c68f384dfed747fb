"""What every peer process of `tilejit bench` shares (bench/suite/Peer.h).

A peer reads one JSON request per line on stdin and answers one JSON object per line on
stdout: `hello` (what the peer is), `setup` (build a case), `run` (one timed call; with
`flush`, first a read of that many bytes of a buffer of its own), `reset`, `quit`.
`serve` runs that loop; a peer supplies what `hello`, `setup` and `run` do.
"""
import json
import os
import sys


class Unavailable(Exception):
    """The case's side does not exist in this peer (answered as "unavailable")."""


def settings():
    """The environment variables that change how a peer's calls run (LD_LIBRARY_PATH: which
    BLAS it loads)."""
    return {k: os.environ[k] for k in sorted(os.environ)
            if k.startswith("MALLOC_") or k.endswith("_NUM_THREADS")
            or k in ("OMP_WAIT_POLICY", "LD_LIBRARY_PATH")}


_flush = None


def flush_cache(nbytes):
    """Reads `nbytes` of a buffer of this process's own, untimed: the next call finds its
    data in memory, not in the cache, and this process's OpenMP workers awake (a parallel
    read through PyTorch where it imports), as the benchmark's own calls find them after
    its flush."""
    global _flush
    if nbytes <= 0:
        return
    try:
        import torch
        make = lambda n: torch.ones(n, dtype=torch.int32)  # noqa: E731
    except ImportError:
        import numpy as np
        make = lambda n: np.ones(n, dtype=np.int32)  # noqa: E731
    count = nbytes // 4
    if _flush is None or len(_flush) != count:
        _flush = make(count)
    _flush.sum()


def serve(hello, setup, run):
    """The request loop. `hello(msg)` returns the hello answer's fields; `setup(msg)` builds
    a case and returns (case, the answer's fields); `run(case)` times one call and returns
    its seconds. An exception answers `ok: false` with its message (Unavailable also says
    `unavailable: true`)."""
    current = None
    for line in sys.stdin:
        try:
            msg = json.loads(line)
            op = msg.get("op")
            if op == "quit":
                break
            if op == "hello":
                answer = {"ok": True, **hello(msg)}
            elif op == "setup":
                current = None
                current, fields = setup(msg)
                answer = {"ok": True, **fields}
            elif op == "run":
                if current is None:
                    raise RuntimeError("no case set up")
                flush_cache(int(msg.get("flush", 0)))
                answer = {"ok": True, "s": run(current)}
            elif op == "reset":
                current = None
                answer = {"ok": True}
            else:
                answer = {"ok": False, "error": f"unknown op {op}"}
        except Unavailable as e:
            answer = {"ok": False, "unavailable": True, "error": str(e)}
        except Exception as e:  # noqa: BLE001 - reported to the benchmark
            answer = {"ok": False, "error": f"{type(e).__name__}: {e}"}
        print(json.dumps(answer), flush=True)
