"""``torch.ops.tilejit.npu_scatter_pa_kv_cache`` and ``npu_gather_pa_kv_cache`` (each also
``_functional``): torch_npu's paged-KV-cache writes and reads, reaching aclnnScatterPaKvCache
and aclnnGatherPaKvCache through ``tilejit._aclnn``.

The schemas are torch_npu's (op-plugin, ``op_plugin/config/op_plugin_functions.yaml``), with
its names, defaults and keyword-only markers; the in-place forms mutate the caches (scatter)
or the outputs ``key``/``value`` (gather) and return nothing, the functional forms write into
copies and return them, leaving every input untouched. The arguments map to the aclnn
parameters as torch_npu's op-plugin code (ScatterPaKvCacheNpuOpApi.cpp,
GatherPaKvCacheKernelNpuOpApi.cpp) maps them:

- scatter: ``key, key_cache, slot_mapping, value, value_cache, compress_lens,
  compress_seq_offsets, seq_lens, cache_mode`` unchanged (``cache_mode`` None is NULL: the
  Norm layout; its default is ``'PA_NZ'`` as in torch_npu), ``scatterMode`` = ``"None"``,
  ``strides`` = ``[1, 1]``, ``offsets`` = ``[0, 0]``. Under ``'PA_NZ'`` the caches are passed
  with the FRACTAL_NZ storage format, as torch_npu's format-cast caches are.
- gather: torch_npu takes the cache mode from the NPU storage format of ``key_cache``
  (FRACTAL_NZ means ``"PA_NZ"``), which a CPU tensor does not have. The operator's shapes
  tell the two apart instead: under PA_NZ the outputs are 2-D ``[T, N*D]``, under Norm 3-D
  ``[T, N, D]`` (spec gather_pa_kv_cache.md, section 5), so a 2-D ``key`` selects
  ``"PA_NZ"`` (and FRACTAL_NZ caches) and any other rank ``"Norm"``.

The scenarios of the specs and which torch_npu's schema can express:

- scatter (scatter_pa_kv_cache.md, sections 4-5): Norm (S2; ``cache_mode='Norm'`` or None),
  key-only (S6; ``value`` and ``value_cache`` 0-D tensors), PA_NZ (S1; the default), and the
  4-D compressed key in both variants (S3; 4-D key/value with ``compress_lens`` and
  ``seq_lens``, averaging when ``compress_seq_offsets`` is given; ``cache_mode`` Norm or
  None) -- in every dtype the operator lists that PyTorch has. Not expressible: Nct
  (non-contiguous windows of a fused buffer, ``scatterMode="Nct"`` with its strides and
  offsets) and the compressed 3-D modes Alibi, Rope and Omni (``scatterMode``): torch_npu
  always passes ``scatterMode="None"`` and ``strides``/``offsets`` ``{1, 1}``/``{0, 0}``, so a
  3-D key is always the plain scatter (``compress_*`` and ``seq_lens`` are then ignored, as
  on the NPU). ``tilejit._aclnn.ScatterPaKvCache`` reaches them.
- gather (gather_pa_kv_cache.md): Norm and PA_NZ, cumulative or per-batch lengths
  (``is_seq_lens_cumsum``), offsets (``seq_offset``), every listed dtype PyTorch has, and
  PA_NZ's mixed key/value dtypes of one element size. Not expressible: an output whose rank
  contradicts the cache mode (the mode follows from the rank here).

Dtypes: the operators' lists include UINT16, UINT32, HIFLOAT8 and the FLOAT8 types; a
PyTorch without those dtypes (1.13 has none of them) cannot pass them here
(``tilejit._aclnn.with_format(t, dtype=...)`` reaches them through the low-level binding).

Every check the aclnn operators make applies as for a C caller, all before anything is
written: a refused call raises ``tilejit.ArgumentTypeError`` (a ``TypeError``: a dtype rule,
or an argument that is not a CPU tensor) or ``tilejit.ArgumentValueError`` (a
``ValueError``: shapes, modes) carrying the C message, and leaves every output as it was.
Strided views are accepted for every tensor (the operators read and write through the
strides; torch_npu's documentation asks for contiguous inputs, which remain correct here);
an in-place destination whose elements overlap in memory (an expanded view) is refused with
``ValueError``, as PyTorch refuses in-place writes into one. Slot, block and length values
are data, not checked (spec: out-of-range slots are dropped, invalid blocks read as zeros).
On ``meta`` tensors nothing runs: the functional forms return outputs of the right shapes
and dtypes.

``npu_scatter_pa_kv_cache`` and the three others in this module are the Python entries
``tilejit.torch_npu`` exports: they check that every tensor argument is a ``torch.Tensor``
(a NumPy array or a list raises ``TypeError`` there, where the dispatcher would raise a
``RuntimeError``) and call the operator.
"""
import torch

from tilejit import _aclnn
from tilejit._ops import LIB, check_entry, check_kinds, check_no_overlap, register

_SCATTER_ARGS = ("Tensor key, Tensor value, {kc} key_cache, {vc} value_cache, "
                 "Tensor slot_mapping, *, Tensor? compress_lens=None, "
                 "Tensor? compress_seq_offsets=None, Tensor? seq_lens=None, "
                 "str? cache_mode='PA_NZ'")
_GATHER_ARGS = ("Tensor key_cache, Tensor value_cache, Tensor block_tables, Tensor seq_lens, "
                "{k} key, {v} value, *, Tensor? seq_offset=None, bool is_seq_lens_cumsum=False")

LIB.define("npu_scatter_pa_kv_cache(" + _SCATTER_ARGS.format(kc="Tensor(a!)", vc="Tensor(b!)")
           + ") -> ()")
LIB.define("npu_scatter_pa_kv_cache_functional(" + _SCATTER_ARGS.format(kc="Tensor", vc="Tensor")
           + ") -> (Tensor, Tensor)")
LIB.define("npu_gather_pa_kv_cache(" + _GATHER_ARGS.format(k="Tensor(a!)", v="Tensor(b!)")
           + ") -> ()")
LIB.define("npu_gather_pa_kv_cache_functional(" + _GATHER_ARGS.format(k="Tensor", v="Tensor")
           + ") -> (Tensor, Tensor)")

_NZ = "FRACTAL_NZ"


#===------------------------------------------------------------------------===#
# ScatterPaKvCache
#===------------------------------------------------------------------------===#

def _scatter_into(op, key, value, key_cache, value_cache, slot_mapping, compress_lens,
                  compress_seq_offsets, seq_lens, cache_mode):
    nz = cache_mode == "PA_NZ"
    _aclnn.ScatterPaKvCache(
        key=key,
        keyCacheRef=_aclnn.with_format(key_cache, _NZ) if nz else key_cache,
        slotMapping=slot_mapping, value=value,
        valueCacheRef=_aclnn.with_format(value_cache, _NZ) if nz else value_cache,
        compressLensOptional=compress_lens, compressSeqOffsetOptional=compress_seq_offsets,
        seqLensOptional=seq_lens, cacheModeOptional=cache_mode, scatterModeOptional="None",
        stridesOptional=[1, 1], offsetsOptional=[0, 0])


def _scatter_tensors(key, value, key_cache, value_cache, slot_mapping, compress_lens,
                     compress_seq_offsets, seq_lens):
    return {"key": key, "value": value, "key_cache": key_cache, "value_cache": value_cache,
            "slot_mapping": slot_mapping, "compress_lens": compress_lens,
            "compress_seq_offsets": compress_seq_offsets, "seq_lens": seq_lens}


def _scatter_cpu(key, value, key_cache, value_cache, slot_mapping, *, compress_lens=None,
                 compress_seq_offsets=None, seq_lens=None, cache_mode="PA_NZ"):
    op = "npu_scatter_pa_kv_cache"
    check_kinds(op, "cpu", _scatter_tensors(key, value, key_cache, value_cache, slot_mapping,
                                             compress_lens, compress_seq_offsets, seq_lens))
    check_no_overlap(op, {"key_cache": key_cache, "value_cache": value_cache})
    _scatter_into(op, key, value, key_cache, value_cache, slot_mapping, compress_lens,
                  compress_seq_offsets, seq_lens, cache_mode)


def _scatter_functional_cpu(key, value, key_cache, value_cache, slot_mapping, *,
                            compress_lens=None, compress_seq_offsets=None, seq_lens=None,
                            cache_mode="PA_NZ"):
    op = "npu_scatter_pa_kv_cache_functional"
    check_kinds(op, "cpu", _scatter_tensors(key, value, key_cache, value_cache, slot_mapping,
                                             compress_lens, compress_seq_offsets, seq_lens))
    # torch_npu clones the caches contiguous and scatters into the clones.
    key_out = key_cache.clone(memory_format=torch.contiguous_format)
    value_out = value_cache.clone(memory_format=torch.contiguous_format)
    _scatter_into(op, key, value, key_out, value_out, slot_mapping, compress_lens,
                  compress_seq_offsets, seq_lens, cache_mode)
    return key_out, value_out


def _scatter_meta(key, value, key_cache, value_cache, slot_mapping, *, compress_lens=None,
                  compress_seq_offsets=None, seq_lens=None, cache_mode="PA_NZ"):
    check_kinds("npu_scatter_pa_kv_cache", None, _scatter_tensors(
        key, value, key_cache, value_cache, slot_mapping, compress_lens,
        compress_seq_offsets, seq_lens))


def _scatter_functional_meta(key, value, key_cache, value_cache, slot_mapping, *,
                             compress_lens=None, compress_seq_offsets=None, seq_lens=None,
                             cache_mode="PA_NZ"):
    check_kinds("npu_scatter_pa_kv_cache_functional", None, _scatter_tensors(
        key, value, key_cache, value_cache, slot_mapping, compress_lens,
        compress_seq_offsets, seq_lens))
    return (torch.empty(key_cache.shape, dtype=key_cache.dtype, device="meta"),
            torch.empty(value_cache.shape, dtype=value_cache.dtype, device="meta"))


#===------------------------------------------------------------------------===#
# GatherPaKvCache
#===------------------------------------------------------------------------===#

def _gather_into(key_cache, value_cache, block_tables, seq_lens, key, value, seq_offset,
                 is_seq_lens_cumsum):
    # PA_NZ's outputs are [T, N*D], Norm's [T, N, D] (see the module's docstring).
    nz = key.dim() == 2
    _aclnn.GatherPaKvCache(
        keyCache=_aclnn.with_format(key_cache, _NZ) if nz else key_cache,
        valueCache=_aclnn.with_format(value_cache, _NZ) if nz else value_cache,
        blockTables=block_tables, seqLens=seq_lens, keyRef=key, valueRef=value,
        seqOffsetOptional=seq_offset, cacheMode="PA_NZ" if nz else "Norm",
        isSeqLensCumsum=bool(is_seq_lens_cumsum))


def _gather_tensors(key_cache, value_cache, block_tables, seq_lens, key, value, seq_offset):
    return {"key_cache": key_cache, "value_cache": value_cache, "block_tables": block_tables,
            "seq_lens": seq_lens, "key": key, "value": value, "seq_offset": seq_offset}


def _gather_cpu(key_cache, value_cache, block_tables, seq_lens, key, value, *,
                seq_offset=None, is_seq_lens_cumsum=False):
    op = "npu_gather_pa_kv_cache"
    check_kinds(op, "cpu", _gather_tensors(key_cache, value_cache, block_tables, seq_lens,
                                            key, value, seq_offset))
    check_no_overlap(op, {"key": key, "value": value})
    _gather_into(key_cache, value_cache, block_tables, seq_lens, key, value, seq_offset,
                 is_seq_lens_cumsum)


def _gather_functional_cpu(key_cache, value_cache, block_tables, seq_lens, key, value, *,
                           seq_offset=None, is_seq_lens_cumsum=False):
    op = "npu_gather_pa_kv_cache_functional"
    check_kinds(op, "cpu", _gather_tensors(key_cache, value_cache, block_tables, seq_lens,
                                            key, value, seq_offset))
    # torch_npu gathers into clones of key and value (rows not gathered keep their values).
    key_out = key.clone()
    value_out = value.clone()
    _gather_into(key_cache, value_cache, block_tables, seq_lens, key_out, value_out,
                 seq_offset, is_seq_lens_cumsum)
    return key_out, value_out


def _gather_meta(key_cache, value_cache, block_tables, seq_lens, key, value, *,
                 seq_offset=None, is_seq_lens_cumsum=False):
    check_kinds("npu_gather_pa_kv_cache", None, _gather_tensors(
        key_cache, value_cache, block_tables, seq_lens, key, value, seq_offset))


def _gather_functional_meta(key_cache, value_cache, block_tables, seq_lens, key, value, *,
                            seq_offset=None, is_seq_lens_cumsum=False):
    check_kinds("npu_gather_pa_kv_cache_functional", None, _gather_tensors(
        key_cache, value_cache, block_tables, seq_lens, key, value, seq_offset))
    return (torch.empty(key.shape, dtype=key.dtype, device="meta"),
            torch.empty(value.shape, dtype=value.dtype, device="meta"))


_IMPLS = {
    "npu_scatter_pa_kv_cache": (_scatter_cpu, _scatter_meta),
    "npu_scatter_pa_kv_cache_functional": (_scatter_functional_cpu, _scatter_functional_meta),
    "npu_gather_pa_kv_cache": (_gather_cpu, _gather_meta),
    "npu_gather_pa_kv_cache_functional": (_gather_functional_cpu, _gather_functional_meta),
}
for _name, (_cpu, _meta) in _IMPLS.items():
    register(_name, _cpu, _meta)


#===------------------------------------------------------------------------===#
# The torch_npu entries (tilejit.torch_npu)
#===------------------------------------------------------------------------===#

def npu_scatter_pa_kv_cache(key, value, key_cache, value_cache, slot_mapping, *,
                            compress_lens=None, compress_seq_offsets=None, seq_lens=None,
                            cache_mode="PA_NZ"):
    """torch_npu.npu_scatter_pa_kv_cache on CPU tensors: writes ``key``/``value`` into the
    paged caches in place (see the module's docstring)."""
    check_entry("npu_scatter_pa_kv_cache", _scatter_tensors(
        key, value, key_cache, value_cache, slot_mapping, compress_lens, compress_seq_offsets,
        seq_lens))
    return torch.ops.tilejit.npu_scatter_pa_kv_cache(
        key, value, key_cache, value_cache, slot_mapping, compress_lens=compress_lens,
        compress_seq_offsets=compress_seq_offsets, seq_lens=seq_lens, cache_mode=cache_mode)


def npu_scatter_pa_kv_cache_functional(key, value, key_cache, value_cache, slot_mapping, *,
                                       compress_lens=None, compress_seq_offsets=None,
                                       seq_lens=None, cache_mode="PA_NZ"):
    """torch_npu.npu_scatter_pa_kv_cache_functional on CPU tensors: returns the updated
    copies of the caches (see the module's docstring)."""
    check_entry("npu_scatter_pa_kv_cache_functional", _scatter_tensors(
        key, value, key_cache, value_cache, slot_mapping, compress_lens, compress_seq_offsets,
        seq_lens))
    return torch.ops.tilejit.npu_scatter_pa_kv_cache_functional(
        key, value, key_cache, value_cache, slot_mapping, compress_lens=compress_lens,
        compress_seq_offsets=compress_seq_offsets, seq_lens=seq_lens, cache_mode=cache_mode)


def npu_gather_pa_kv_cache(key_cache, value_cache, block_tables, seq_lens, key, value, *,
                           seq_offset=None, is_seq_lens_cumsum=False):
    """torch_npu.npu_gather_pa_kv_cache on CPU tensors: gathers the sequences into ``key``
    and ``value`` in place (see the module's docstring)."""
    check_entry("npu_gather_pa_kv_cache", _gather_tensors(
        key_cache, value_cache, block_tables, seq_lens, key, value, seq_offset))
    return torch.ops.tilejit.npu_gather_pa_kv_cache(
        key_cache, value_cache, block_tables, seq_lens, key, value, seq_offset=seq_offset,
        is_seq_lens_cumsum=is_seq_lens_cumsum)


def npu_gather_pa_kv_cache_functional(key_cache, value_cache, block_tables, seq_lens, key,
                                      value, *, seq_offset=None, is_seq_lens_cumsum=False):
    """torch_npu.npu_gather_pa_kv_cache_functional on CPU tensors: returns copies of
    ``key`` and ``value`` with the sequences gathered (see the module's docstring)."""
    check_entry("npu_gather_pa_kv_cache_functional", _gather_tensors(
        key_cache, value_cache, block_tables, seq_lens, key, value, seq_offset))
    return torch.ops.tilejit.npu_gather_pa_kv_cache_functional(
        key_cache, value_cache, block_tables, seq_lens, key, value, seq_offset=seq_offset,
        is_seq_lens_cumsum=is_seq_lens_cumsum)
