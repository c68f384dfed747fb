"""The torch.library registrations of the five operators (namespace ``tilejit``).

``LIB`` is the one ``torch.library.Library("tilejit", "DEF")`` every operator module defines
its schemas on; ``tilejit.torch`` imports the operator modules, which register their CPU and
Meta implementations at import (``register``). The checks every operator makes of its
arguments before the C API's own are here too, so that all five say the same thing.
"""
import torch

from tilejit._tilejit import ArgumentTypeError, ArgumentValueError

LIB = torch.library.Library("tilejit", "DEF")


def register(name, cpu, meta):
    """Registers operator ``name``'s CPU and Meta implementations. PyTorch 1.13 has no
    autograd fallthrough for Meta: without the AutogradMeta entry, meta tensors (and a mix
    of meta and CPU ones, which dispatch there) fail in the dispatcher."""
    LIB.impl(name, cpu, "CPU")
    LIB.impl(name, meta, "Meta")
    LIB.impl(name, meta, "AutogradMeta")


def check_kinds(op, device, tensors):
    """Every tensor argument (None where optional) is a strided torch.Tensor, on ``device``
    when one is given: ArgumentTypeError (a TypeError) otherwise. ``tensors``: name ->
    value."""
    for name, t in tensors.items():
        if t is None:
            continue
        if not isinstance(t, torch.Tensor):
            raise ArgumentTypeError(f"{op}: {name} must be a torch.Tensor, got "
                                    f"{type(t).__module__}.{type(t).__qualname__}")
        # is_cpu / is_meta: a fraction of device.type's cost, on every call.
        if device is not None and not (t.is_cpu if device == "cpu" else t.is_meta):
            raise ArgumentTypeError(f"{op}: {name} must be a {device} tensor, got one on "
                                    f"{t.device}")
        if t.layout != torch.strided:
            raise ArgumentTypeError(f"{op}: {name} must be a dense (strided) tensor, got "
                                    f"{t.layout}")


def check_entry(op, tensors):
    """What a torch_npu entry checks before it calls the operator: torch tensors (a NumPy
    array raises TypeError here, where the dispatcher would raise a RuntimeError), all on
    the CPU or all on meta."""
    check_kinds(op, None, tensors)
    devices = {t.device.type for t in tensors.values() if t is not None}
    if devices and devices != {"cpu"} and devices != {"meta"}:
        raise ArgumentTypeError(f"{op}: CPU tensors are required (or only meta tensors, for "
                                f"shapes), got devices {sorted(devices)}")


def check_no_overlap(op, tensors):
    """In-place destinations must not reach one element by two indices (PyTorch's rule for
    in-place writes): ArgumentValueError (a ValueError) otherwise."""
    for name, t in tensors.items():
        # 1 = MemOverlap::Yes.
        if t.dim() > 0 and torch._debug_has_internal_overlap(t) == 1:
            raise ArgumentValueError(
                f"{op}: {name} must not overlap itself (it is written in place), got shape "
                f"{list(t.shape)} with strides {list(t.stride())}")
