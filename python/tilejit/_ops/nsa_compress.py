"""``torch.ops.tilejit.npu_nsa_compress_infer.cache``: torch_npu's NSA compression into a
cache, reaching aclnnNsaCompressWithCache through ``tilejit._aclnn``.

The schema is torch_npu's ``npu_nsa_compress_infer.cache`` overload (op-plugin,
``op_plugin/config/op_plugin_functions.yaml``): ``cache`` is written in place and returned.
The arguments map to the aclnn parameters as torch_npu's generated code maps them:
``actual_seq_len`` -> ``actSeqLenOptional`` (an empty array when None), ``block_table`` ->
``blockTableOptional``, ``layoutOptional`` = ``"TND"``, ``actSeqLenType`` = 1 (per-entry
lengths), the three sizes and the tensors unchanged.

Every check the aclnn operator makes (spec nsa_compress_with_cache.md, section 4) applies as
for a C caller, all of them before anything is written: a refused call raises
``tilejit.ArgumentTypeError`` (a ``TypeError``) or ``tilejit.ArgumentValueError`` (a
``ValueError``) carrying the C message and leaves ``cache`` untouched. Strided views are
accepted for every tensor; a ``cache`` whose elements overlap in memory (e.g. an expanded
view) is refused here with ``ValueError``, as PyTorch refuses in-place writes into one. Only
PyTorch CPU tensors are accepted (others: ``TypeError``); on ``meta`` tensors the operator
returns ``cache`` (shape and dtype only, nothing runs).

What torch_npu's schema cannot express (the spec covers it, this operator cannot reach it):
another ``layoutOptional`` (always "TND", which has no effect, spec 2), ``actSeqLenType`` 0
(prefix sums, unsupported by the operator anyway), and a null ``actSeqLenOptional`` (None
becomes an empty array; either is refused unless B = 0 matches, spec 4).

``npu_nsa_compress_infer`` in this module is the Python entry ``tilejit.torch_npu`` exports:
it checks that every tensor argument is a ``torch.Tensor`` (a NumPy array raises
``TypeError`` there, where the dispatcher would raise a ``RuntimeError``) and calls the
operator.
"""
import torch

from tilejit import _aclnn
from tilejit._ops import LIB, check_entry, check_kinds, check_no_overlap, register
from tilejit._tilejit import ArgumentTypeError

_NAME = "npu_nsa_compress_infer.cache"

LIB.define(
    "npu_nsa_compress_infer.cache(Tensor input, Tensor weight, Tensor slot_mapping, "
    "int compress_block_size, int compress_stride, int page_block_size, *, "
    "Tensor? block_table=None, int[]? actual_seq_len=None, Tensor(a!) cache) -> Tensor(a!)")

_TENSORS = ("input", "weight", "slot_mapping", "block_table", "cache")


def _cpu(input, weight, slot_mapping, compress_block_size, compress_stride, page_block_size,
         *, block_table=None, actual_seq_len=None, cache):
    check_kinds(_NAME, "cpu", {"input": input, "weight": weight, "slot_mapping": slot_mapping,
                         "block_table": block_table, "cache": cache})
    check_no_overlap(_NAME, {"cache": cache})
    _aclnn.NsaCompressWithCache(
        input=input, weight=weight, slotMapping=slot_mapping,
        actSeqLenOptional=[] if actual_seq_len is None else [int(x) for x in actual_seq_len],
        blockTableOptional=block_table, layoutOptional="TND",
        compressBlockSize=compress_block_size, compressStride=compress_stride,
        actSeqLenType=1, pageBlockSize=page_block_size, outputCache=cache)
    return cache


def _meta(input, weight, slot_mapping, compress_block_size, compress_stride, page_block_size,
          *, block_table=None, actual_seq_len=None, cache):
    check_kinds(_NAME, "meta", {"input": input, "weight": weight, "slot_mapping": slot_mapping,
                          "block_table": block_table, "cache": cache})
    return cache


register(_NAME, _cpu, _meta)


def npu_nsa_compress_infer(input, weight, slot_mapping, compress_block_size, compress_stride,
                           page_block_size, *, block_table=None, actual_seq_len=None, cache):
    """torch_npu.npu_nsa_compress_infer (its ``cache`` overload) on CPU tensors: writes the
    compressed windows into ``cache`` and returns it (see the module's docstring)."""
    if cache is None:
        raise ArgumentTypeError(f"{_NAME}: cache must be a torch.Tensor, got None")
    check_entry(_NAME, {"input": input, "weight": weight, "slot_mapping": slot_mapping,
                        "block_table": block_table, "cache": cache})
    return torch.ops.tilejit.npu_nsa_compress_infer.cache(
        input, weight, slot_mapping, compress_block_size, compress_stride, page_block_size,
        block_table=block_table, actual_seq_len=actual_seq_len, cache=cache)
