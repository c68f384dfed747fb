"""tilejit from Python: your own tile-DSL kernels on NumPy arrays and PyTorch tensors.

    import numpy as np, tilejit
    k = tilejit.compile(SOURCE, "scale", T=np.float32)
    k(x, y, 2.0)                      # in place, no copy

``import tilejit.torch`` registers the five Ascend operators as ``torch.ops.tilejit.*``;
``tilejit.torch_npu`` gathers them under torch_npu's names. See docs/python.md.
"""
from tilejit._api import (  # noqa: F401
    Error, CompileError, ArgumentTypeError, ArgumentValueError,
    Kernel, Source, compile, emit, specialize, declaration, jit, cache_stats, clear_memory_cache,
    version,
    dtype_name,
)

__version__ = version()
