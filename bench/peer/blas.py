"""Which BLAS a process calls, from its /proc/PID/maps (bench/peer/torch_peer.py).

Debian's python3-torch links libblas.so.3, which the system's alternative resolves to
OpenBLAS, BLIS, ATLAS or the reference BLAS (libblas3); the benchmark's peer must run on
an optimised one. Kept apart from torch_peer.py so that it is tested without torch.
"""
import os
import re


def _blas_kind(path):
    """What BLAS the library at `path` is: (name, optimised), or None where
    the file is no BLAS."""
    low = path.lower()
    base = os.path.basename(low)
    parent = os.path.basename(os.path.dirname(low))
    if not re.match(r"lib(open)?blas|libmkl_|libblis|libsatlas|libtatlas", base) or ".so" not in base:
        return None
    if "openblas" in low:
        m = re.search(r"openblas-(openmp|pthread|serial)", low)
        return (f"OpenBLAS ({m.group(1)})" if m else "OpenBLAS"), True
    if "mkl" in low:
        return "MKL", True
    if "blis" in low:
        return "BLIS", True
    if "atlas" in low:
        return "ATLAS", True
    if base.startswith("libblas.so") and parent == "blas":
        return "reference BLAS (libblas3)", False
    if base.startswith("libblas.so"):
        return "unidentified BLAS", False
    return None


def detect_blas(maps_text, config_text=""):
    """The BLAS a process calls, from the text of its /proc/PID/maps (and, where no BLAS
    file is mapped, torch.__config__.show()): a dict of `name`, `path` (the mapped file,
    or None), `optimised` (OpenBLAS, MKL, BLIS, ATLAS, or oneDNN alone where torch was
    built so) and `why`.

    The file that PyTorch links (libblas.so.*, or a library named for its BLAS) decides:
    another BLAS mapped beside the reference one (OpenBLAS pulled in by Debian's
    liblapack.so.3, say) is not what torch's gemm calls resolve to."""
    paths = []
    for line in maps_text.splitlines():
        fields = line.split(None, 5)
        if len(fields) == 6 and fields[5].startswith("/"):
            path = fields[5].strip()
            if path not in paths and _blas_kind(path):
                paths.append(path)
    # libblas.so.* first: the name torch's library is linked against.
    linked = [p for p in paths if os.path.basename(p).startswith("libblas.so")]
    for path in linked or paths:
        name, optimised = _blas_kind(path)
        if optimised:
            why = "an optimised BLAS"
        elif name.startswith("reference"):
            why = "the reference implementation (Netlib), not a peer a user would run"
        else:
            why = "not identified as an optimised BLAS (OpenBLAS, MKL, BLIS)"
        return {"name": name, "path": path, "optimised": optimised, "why": why}
    info = re.search(r"BLAS_INFO=(\w+)", config_text)
    if info and info.group(1) in ("mkl", "open", "blis"):
        name = {"mkl": "MKL", "open": "OpenBLAS", "blis": "BLIS"}[info.group(1)]
        return {"name": f"{name} (linked into torch)", "path": None, "optimised": True,
                "why": "torch reports it (BLAS_INFO), no BLAS file is mapped"}
    if "USE_MKLDNN=ON" in config_text:
        return {"name": "oneDNN only", "path": None, "optimised": True,
                "why": "no BLAS library is mapped; torch reports oneDNN (USE_MKLDNN=ON)"}
    return {"name": "unknown", "path": None, "optimised": False,
            "why": "no BLAS library is mapped and torch reports none"}
