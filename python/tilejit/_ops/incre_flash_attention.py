"""``torch.ops.tilejit.npu_incre_flash_attention``: torch_npu's incremental (decode)
flash attention, reaching aclnnIncreFlashAttentionV4 through ``tilejit._aclnn``.

The schema is torch_npu's (op-plugin, ``op_plugin/config/op_plugin_functions.yaml``), with
its names, defaults and keywords; the arguments map to the aclnn parameters as torch_npu's
``npu_incre_flash_attention_symint`` maps them:

- ``key`` / ``value`` become one-element tensor lists;
- the output is allocated here: ``query``'s shape, INT8 when ``quant_scale2`` is given
  (post-quantization), FLOAT16 when ``query`` is INT8 (which the operator then refuses:
  V4 has no INT8 query), ``query``'s dtype otherwise;
- ``padding_mask`` is torch_npu's reserved parameter: accepted and not used;
- every other keyword goes to the aclnn parameter of the same meaning, unchanged.

Every check the aclnn operator makes (spec incre_flash_attention_v4.md, section 8) applies
as for a C caller; its status becomes a ``tilejit.ArgumentTypeError`` (a ``TypeError``) or a
``tilejit.ArgumentValueError`` (a ``ValueError``) carrying the C message. Strided views are
accepted (the operator gathers them). Only PyTorch CPU tensors are accepted (others:
``TypeError``); on ``meta`` tensors the operator only propagates the output's shape and dtype.

What torch_npu's schema cannot express (the spec covers it, this operator cannot reach it):

- the tensor-list KV mode with one tensor per batch (spec 3.2, mode 2): ``key``/``value``
  are single tensors, so the list always has one element (B = 1 is the same as contiguous);
- an INT8 output without ``quant_scale2`` or a float output with it: the output dtype
  follows from ``quant_scale2`` (spec 8 #11's first two rules cannot be broken);
- a null required argument (spec 8, 161001): the schema requires ``query``, ``key`` and
  ``value``, and the output and layout always exist.

``npu_incre_flash_attention`` in this module is the Python entry ``tilejit.torch_npu``
exports: it checks that every tensor argument is a ``torch.Tensor`` (a NumPy array raises
``TypeError`` there, where the dispatcher would raise a ``RuntimeError``) and calls the
operator.
"""
import torch

from tilejit import _aclnn
from tilejit._ops import LIB, check_entry, check_kinds, register

_NAME = "npu_incre_flash_attention"

LIB.define(
    "npu_incre_flash_attention(Tensor query, Tensor key, Tensor value, *, "
    "Tensor? padding_mask=None, Tensor? atten_mask=None, Tensor? pse_shift=None, "
    "SymInt[]? actual_seq_lengths=None, Tensor? antiquant_scale=None, "
    "Tensor? antiquant_offset=None, Tensor? block_table=None, "
    "Tensor? dequant_scale1=None, Tensor? quant_scale1=None, Tensor? dequant_scale2=None, "
    "Tensor? quant_scale2=None, Tensor? quant_offset2=None, Tensor? kv_padding_size=None, "
    "int num_heads=1, float scale_value=1.0, str input_layout=\"BSH\", "
    "int num_key_value_heads=0, int block_size=0, int inner_precise=1) -> Tensor")

# The tensor arguments, in schema order.
_TENSORS = ("query", "key", "value", "padding_mask", "atten_mask", "pse_shift",
            "antiquant_scale", "antiquant_offset", "block_table", "dequant_scale1",
            "quant_scale1", "dequant_scale2", "quant_scale2", "quant_offset2",
            "kv_padding_size")


def _output_dtype(query, quant_scale2):
    """torch_npu's rule: INT8 with post-quantization, FLOAT16 for an INT8 query."""
    if quant_scale2 is not None:
        return torch.int8
    if query.dtype == torch.int8:
        return torch.float16
    return query.dtype


def _cpu(query, key, value, *, padding_mask=None, atten_mask=None, pse_shift=None,
         actual_seq_lengths=None, antiquant_scale=None, antiquant_offset=None,
         block_table=None, dequant_scale1=None, quant_scale1=None, dequant_scale2=None,
         quant_scale2=None, quant_offset2=None, kv_padding_size=None, num_heads=1,
         scale_value=1.0, input_layout="BSH", num_key_value_heads=0, block_size=0,
         inner_precise=1):
    args = locals()
    check_kinds(_NAME, "cpu", {n: args[n] for n in _TENSORS})
    out = torch.empty(query.shape, dtype=_output_dtype(query, quant_scale2))
    _aclnn.IncreFlashAttentionV4(
        query=query, key=[key], value=[value], pseShift=pse_shift, attenMask=atten_mask,
        actualSeqLengths=None if actual_seq_lengths is None else [int(x) for x in actual_seq_lengths],
        dequantScale1=dequant_scale1, quantScale1=quant_scale1, dequantScale2=dequant_scale2,
        quantScale2=quant_scale2, quantOffset2=quant_offset2, antiquantScale=antiquant_scale,
        antiquantOffset=antiquant_offset, blocktable=block_table, kvPaddingSize=kv_padding_size,
        numHeads=num_heads, scaleValue=scale_value, inputLayout=input_layout,
        numKeyValueHeads=num_key_value_heads, blockSize=block_size, innerPrecise=inner_precise,
        attentionOut=out)
    return out


def _meta(query, key, value, *, padding_mask=None, atten_mask=None, pse_shift=None,
          actual_seq_lengths=None, antiquant_scale=None, antiquant_offset=None,
          block_table=None, dequant_scale1=None, quant_scale1=None, dequant_scale2=None,
          quant_scale2=None, quant_offset2=None, kv_padding_size=None, num_heads=1,
          scale_value=1.0, input_layout="BSH", num_key_value_heads=0, block_size=0,
          inner_precise=1):
    args = locals()
    check_kinds(_NAME, "meta", {n: args[n] for n in _TENSORS})
    return torch.empty(query.shape, dtype=_output_dtype(query, quant_scale2), device="meta")


register(_NAME, _cpu, _meta)


def npu_incre_flash_attention(query, key, value, *, padding_mask=None, atten_mask=None,
                              pse_shift=None, actual_seq_lengths=None, antiquant_scale=None,
                              antiquant_offset=None, block_table=None, dequant_scale1=None,
                              quant_scale1=None, dequant_scale2=None, quant_scale2=None,
                              quant_offset2=None, kv_padding_size=None, num_heads=1,
                              scale_value=1.0, input_layout="BSH", num_key_value_heads=0,
                              block_size=0, inner_precise=1):
    """torch_npu.npu_incre_flash_attention on CPU tensors (see the module's docstring)."""
    args = locals()
    check_entry(_NAME, {n: args[n] for n in _TENSORS})
    rest = {n: v for n, v in args.items() if n not in ("query", "key", "value")}
    return torch.ops.tilejit.npu_incre_flash_attention(query, key, value, **rest)
