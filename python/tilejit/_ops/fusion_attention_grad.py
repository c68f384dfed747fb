"""``torch.ops.tilejit.npu_fusion_attention_grad``: torch_npu's flash-attention
backward, on the route torch_npu takes when ``actual_seq_qlen`` and
``actual_seq_kvlen`` are given (packed TND batches): aclnnFlashAttentionUnpaddingScoreGradV5.

The schema is torch_npu's (op-plugin, ``op_plugin/config/op_plugin_functions.yaml``)
with its names, defaults and five results ``(dq, dk, dv, dpse, dsink)``. The
arguments map to the aclnn call as op-plugin maps them
(``op_plugin/ops/opapi/FlashAttentionKernelNpuOpApi.cpp``):

* ``pse_type`` is 1 (add the bias, then scale); no rope, no q/kv start indices;
* ``softmax_layout="TND"`` becomes ``"same_as_input"``, any other string is
  passed as given (``""``: the legacy batch-blocked layout);
* dropout: with ``0 < keep_prob < 1`` the keep mask is generated from
  ``(seed, offset, numels)`` into ``ceil(numels / 128) * 16`` bytes, as torch_npu
  generates it with ``aclnnDropoutGenMaskV2`` before the call. The generator is
  tilejit's own (``dropout_gen_mask``: counter-based, bit-reproducible, not
  the NPU's Philox bits), and ``tilejit.torch.flash_attention`` draws its
  forward's mask from the same function, so forward and backward agree;
* ``dpse`` is never computed (the operator marks it unused): zeros shaped like
  ``pse``, or an empty tensor without one; ``dsink`` is the sink's gradient, or
  an empty float tensor without a sink; ``gen_mask_parallel`` and ``sync``
  only choose NPU streams and change nothing here.

Every tensor argument must be a CPU ``torch.Tensor`` of the dtype the operator
takes (``TypeError`` otherwise); shapes and everything else are checked by the
aclnn call, as for a C caller (``tilejit.ArgumentValueError``, a ``ValueError``).
"""
import threading
from pathlib import Path

import torch

from tilejit._ops import LIB, check_entry, register
from tilejit._tilejit import ArgumentTypeError, ArgumentValueError

_SCHEMA = (
    "npu_fusion_attention_grad(Tensor query, Tensor key, Tensor value, Tensor dy, int head_num, "
    "str input_layout, *, Tensor? pse=None, Tensor? padding_mask=None, Tensor? atten_mask=None, "
    "Tensor? softmax_max=None, Tensor? softmax_sum=None, Tensor? softmax_in=None, "
    "Tensor? attention_in=None, float scale_value=1., float keep_prob=1., "
    "int pre_tockens=2147483647, int next_tockens=2147483647, int inner_precise=0, int seed=0, "
    "int offset=0, int numels=0, int[]? prefix=None, int[]? actual_seq_qlen=None, "
    "int[]? actual_seq_kvlen=None, int sparse_mode=0, bool gen_mask_parallel=True, "
    "bool sync=False, str softmax_layout=\"\", Tensor? sink=None) "
    "-> (Tensor, Tensor, Tensor, Tensor, Tensor)")

_FLOATS = (torch.float16, torch.bfloat16, torch.float32)
# op-plugin's EPSILON: keep_prob this close to 1 means no dropout.
_EPSILON = 1e-9

# The kernels shipped with the package (the forward of flash_attention and the
# dropout mask generator), compiled once per specialisation.
KERNEL_SOURCE = Path(__file__).resolve().parent.parent / "kernels" / "flash_attention_varlen.tile"
_kernels = {}
_kernels_lock = threading.Lock()


def kernel(name, **params):
    """The compiled kernel ``name`` of flash_attention_varlen.tile for ``params``."""
    key = (name, tuple(sorted(params.items())))
    k = _kernels.get(key)
    if k is None:
        import tilejit
        k = tilejit.compile(str(KERNEL_SOURCE), name, **params)
        with _kernels_lock:
            k = _kernels.setdefault(key, k)
    return k


def dropout_mask_bytes(numels):
    """Bytes of the keep mask torch_npu allocates for ``numels`` elements."""
    return (numels + 127) // 128 * 128 // 8


def dropout_gen_mask(numels, keep_prob, seed, offset):
    """The bit-packed keep mask (uint8, ``dropout_mask_bytes(numels)`` bytes) of
    ``numels`` elements: bit ``e`` (LSB first in byte ``e // 8``) is 1 with
    probability ``keep_prob``, a function of ``(seed, offset + e)`` alone
    (flash_attention_varlen.tile, kernel fa_dropout_mask); bits past ``numels``
    are 0."""
    if numels < 0:
        raise ArgumentValueError(f"npu_fusion_attention_grad: numels must be >= 0, got {numels}")
    for name, v in (("seed", seed), ("offset", offset)):
        if not -2**63 <= v < 2**63:
            raise ArgumentValueError(f"npu_fusion_attention_grad: {name} {v} is outside int64")
    mask = torch.empty(dropout_mask_bytes(numels), dtype=torch.uint8)
    if mask.numel():
        kernel("fa_dropout_mask")(mask, seed, offset, float(keep_prob), numels)
    return mask


def _check_tensor(name, t, dtypes=None, optional=True):
    if t is None and optional:
        return
    if not isinstance(t, torch.Tensor):
        raise ArgumentTypeError(f"npu_fusion_attention_grad: {name} must be a torch.Tensor, "
                        f"got {type(t).__name__}")
    if t.device.type != "cpu" or t.layout != torch.strided:
        raise ArgumentTypeError(f"npu_fusion_attention_grad: {name} must be a strided CPU tensor, "
                        f"got one on {t.device} ({t.layout})")
    if dtypes is not None and t.dtype not in dtypes:
        names = ", ".join(str(d).replace("torch.", "") for d in dtypes)
        raise ArgumentTypeError(f"npu_fusion_attention_grad: {name} must be {names}, got "
                        f"{str(t.dtype).replace('torch.', '')}")


def _check_args(query, key, value, dy, input_layout, pse, padding_mask, atten_mask,
                softmax_max, softmax_sum, softmax_in, attention_in, keep_prob, sparse_mode,
                sink):
    """torch_npu's own checks, then the kind and dtype of every tensor."""
    _check_tensor("query", query, _FLOATS, optional=False)
    same = (query.dtype,)
    for name, t in (("key", key), ("value", value), ("dy", dy)):
        _check_tensor(name, t, same, optional=False)
    _check_tensor("attention_in", attention_in, same)
    _check_tensor("pse", pse, same)
    _check_tensor("padding_mask", padding_mask)
    _check_tensor("atten_mask", atten_mask, (torch.bool, torch.uint8))
    _check_tensor("softmax_max", softmax_max, (torch.float32,))
    _check_tensor("softmax_sum", softmax_sum, (torch.float32,))
    _check_tensor("softmax_in", softmax_in)
    _check_tensor("sink", sink, (torch.float32,))
    for name, t in (("query", query), ("key", key), ("value", value), ("dy", dy)):
        if t.dim() not in (3, 4):
            raise ArgumentValueError(f"npu_fusion_attention_grad: the shapes of the input {name} should "
                             f"be 3 or 4 dimensional, but got {t.dim()}-dimensional")
    if not (keep_prob > 0 and keep_prob <= 1):
        raise ArgumentValueError("npu_fusion_attention_grad: the keep_prob value must be in range of "
                         f"(0, 1], but got {keep_prob}")
    if not input_layout:
        raise ArgumentValueError("npu_fusion_attention_grad: input_layout is empty")
    if input_layout == "TND":
        if not (0 <= sparse_mode <= 8 and sparse_mode != 5):
            raise ArgumentValueError("npu_fusion_attention_grad: the sparse_mode value must be in range "
                             f"of [0,5) or (5,8], but got {sparse_mode}")
    elif not 0 <= sparse_mode <= 6:
        raise ArgumentValueError("npu_fusion_attention_grad: the sparse_mode value must be in range of "
                         f"[0,6], but got {sparse_mode}")
    if input_layout.upper() not in ("BSH", "SBH", "BNSD", "BSND", "TND"):
        raise ArgumentValueError("npu_fusion_attention_grad: the input_layout should be "
                         "BSH/SBH/BNSD/BSND/TND(case-insensitive), but got " + input_layout)


def _cpu(query, key, value, dy, head_num, input_layout, *, pse=None,
         padding_mask=None, atten_mask=None, softmax_max=None,
         softmax_sum=None, softmax_in=None, attention_in=None,
         scale_value=1.0, keep_prob=1.0, pre_tockens=2147483647,
         next_tockens=2147483647, inner_precise=0, seed=0, offset=0,
         numels=0, prefix=None, actual_seq_qlen=None,
         actual_seq_kvlen=None, sparse_mode=0, gen_mask_parallel=True,
         sync=False, softmax_layout="", sink=None):
    """The CPU implementation (see the module's docstring)."""
    del gen_mask_parallel, sync  # NPU stream choices
    _check_args(query, key, value, dy, input_layout, pse, padding_mask, atten_mask, softmax_max,
                softmax_sum, softmax_in, attention_in, keep_prob, sparse_mode, sink)
    from tilejit import _aclnn

    drop_mask = None
    if abs(keep_prob - 1.0) >= _EPSILON:
        drop_mask = dropout_gen_mask(numels, keep_prob, seed, offset)
    dq = torch.empty(query.shape, dtype=query.dtype)
    dk = torch.empty(key.shape, dtype=key.dtype)
    dv = torch.empty(value.shape, dtype=value.dtype)
    dsink = torch.empty(sink.shape if sink is not None else (0,), dtype=torch.float32)
    _aclnn.FlashAttentionUnpaddingScoreGradV5(
        query=query, queryRope=None, keyIn=key, keyInRope=None, value=value, dy=dy,
        pseShiftOptional=pse, dropMaskOptional=drop_mask, paddingMaskOptional=padding_mask,
        attenMaskOptional=atten_mask, softmaxMaxOptional=softmax_max,
        softmaxSumOptional=softmax_sum, softmaxInOptional=softmax_in,
        attentionInOptional=attention_in, sinkInOptional=sink,
        prefixOptional=None if prefix is None else list(prefix),
        actualSeqQLenOptional=None if actual_seq_qlen is None else list(actual_seq_qlen),
        actualSeqKvLenOptional=None if actual_seq_kvlen is None else list(actual_seq_kvlen),
        qStartIdxOptional=None, kvStartIdxOptional=None,
        scaleValue=float(scale_value), keepProb=float(keep_prob), preTokens=pre_tockens,
        nextTokens=next_tockens, headNum=head_num, inputLayout=input_layout.upper(),
        innerPrecise=inner_precise, sparseMode=sparse_mode, pseType=1,
        softmaxInLayout="same_as_input" if softmax_layout == "TND" else softmax_layout,
        dqOut=dq, dqRopeOut=None, dkOut=dk, dkRopeOut=None, dvOut=dv, dpseOut=None,
        dsinkOut=dsink if sink is not None else None)
    # dpse: the operator never computes it.
    dpse = (torch.zeros(pse.shape, dtype=pse.dtype) if pse is not None
            else torch.empty(0, dtype=query.dtype))
    return dq, dk, dv, dpse, dsink


def _npu_fusion_attention_grad_meta(query, key, value, dy, head_num, input_layout, *, pse=None,
                                    sink=None, **kwargs):
    """Shapes only: dq, dk, dv like query, key, value; dpse like pse (or [0]);
    dsink like sink, float32 (or [0])."""
    given = dict(kwargs, query=query, key=key, value=value, dy=dy, pse=pse, sink=sink)
    for name in _TENSOR_ARGS:
        t = given.get(name)
        if isinstance(t, torch.Tensor) and t.device.type != "meta":
            raise ArgumentTypeError(f"npu_fusion_attention_grad: {name} is on {t.device} while other "
                            "arguments are on meta: every tensor must be on one device")
    del head_num, input_layout
    meta = dict(device="meta")
    return (torch.empty(query.shape, dtype=query.dtype, **meta),
            torch.empty(key.shape, dtype=key.dtype, **meta),
            torch.empty(value.shape, dtype=value.dtype, **meta),
            torch.empty(pse.shape if pse is not None else (0,),
                        dtype=pse.dtype if pse is not None else query.dtype, **meta),
            torch.empty(sink.shape if sink is not None else (0,), dtype=torch.float32, **meta))


LIB.define(_SCHEMA)
register("npu_fusion_attention_grad", _cpu, _npu_fusion_attention_grad_meta)

_TENSOR_ARGS = ("query", "key", "value", "dy", "pse", "padding_mask", "atten_mask",
                "softmax_max", "softmax_sum", "softmax_in", "attention_in", "sink")


def npu_fusion_attention_grad(query, key, value, dy, head_num, input_layout, **kwargs):
    """torch_npu.npu_fusion_attention_grad: the operator, after a check that every tensor
    argument is a torch.Tensor (a NumPy array raises TypeError here, where the dispatcher
    would raise a RuntimeError)."""
    given = dict(kwargs, query=query, key=key, value=value, dy=dy)
    check_entry("npu_fusion_attention_grad", {n: given.get(n) for n in _TENSOR_ARGS})
    return torch.ops.tilejit.npu_fusion_attention_grad(query, key, value, dy, head_num,
                                                       input_layout, **kwargs)


__all__ = ["npu_fusion_attention_grad", "dropout_gen_mask", "dropout_mask_bytes"]
