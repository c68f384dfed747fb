"""The five Ascend operators under torch_npu's names, on CPU tensors.

Code written against torch_npu runs by changing its import alone::

    import tilejit.torch_npu as torch_npu

    torch_npu.npu_incre_flash_attention(q, k, v, num_heads=32, input_layout="BSH")
    torch_npu.npu_scatter_pa_kv_cache(key, value, key_cache, value_cache, slots,
                                      cache_mode="Norm")

Each attribute is torch_npu's function of the same name and signature (op-plugin,
``op_plugin/config/op_plugin_functions.yaml``), backed by the ``torch.ops.tilejit``
operator that ``import tilejit.torch`` registers:

- ``npu_scatter_pa_kv_cache``, ``npu_scatter_pa_kv_cache_functional`` (aclnnScatterPaKvCache),
- ``npu_gather_pa_kv_cache``, ``npu_gather_pa_kv_cache_functional`` (aclnnGatherPaKvCache),
- ``npu_incre_flash_attention`` (aclnnIncreFlashAttentionV4),
- ``npu_nsa_compress_infer``: its ``cache=`` overload (``npu_nsa_compress_infer.cache``)
  reaches aclnnNsaCompressWithCache,
- ``npu_fusion_attention_grad``: with ``actual_seq_qlen``/``actual_seq_kvlen`` (layout TND)
  it reaches aclnnFlashAttentionUnpaddingScoreGradV5.

Where an operator module defines the torch_npu entry of the name (it checks the argument
kinds first, so a NumPy array raises ``TypeError`` rather than the dispatcher's
``RuntimeError``), that is the attribute; otherwise it is ``torch.ops.tilejit.<name>``
itself (its overloads, e.g. ``npu_nsa_compress_infer.cache``, resolved from the
arguments). What each schema cannot express is listed in the docstring of its module in
``tilejit._ops``.
"""
import importlib

import tilejit.torch  # noqa: F401  (registers the operators)
import torch

# Each name, the module that registers its operator, and whether that module's function of
# the name is the torch_npu entry (each module's docstring says so).
_SOURCES = {
    "npu_scatter_pa_kv_cache": ("tilejit._ops.kv_cache", True),
    "npu_scatter_pa_kv_cache_functional": ("tilejit._ops.kv_cache", True),
    "npu_gather_pa_kv_cache": ("tilejit._ops.kv_cache", True),
    "npu_gather_pa_kv_cache_functional": ("tilejit._ops.kv_cache", True),
    "npu_incre_flash_attention": ("tilejit._ops.incre_flash_attention", True),
    "npu_nsa_compress_infer": ("tilejit._ops.nsa_compress", True),
    "npu_fusion_attention_grad": ("tilejit._ops.fusion_attention_grad", True),
}

__all__ = sorted(_SOURCES)


def _bind(name):
    module_name, python_entry = _SOURCES[name]
    fn = getattr(importlib.import_module(module_name), name, None) if python_entry else None
    if not callable(fn):
        fn = getattr(torch.ops.tilejit, name)
    return fn


def __getattr__(name):
    # Bound on first use and kept: the operator modules are imported by tilejit.torch.
    if name not in _SOURCES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    fn = _bind(name)
    globals()[name] = fn
    return fn


def __dir__():
    return sorted(set(globals()) | set(_SOURCES))
