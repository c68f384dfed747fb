"""The five operators as PyTorch operators, ``torch.ops.tilejit.<name>``.

``import tilejit.torch`` registers them (CPU and Meta implementations) under
torch_npu's names and schemas; ``tilejit.torch_npu`` gathers them under the
names torch_npu gives them.
"""
import torch  # noqa: F401  (the real PyTorch: absolute import)

from tilejit._ops import LIB  # noqa: F401
# Each operator module defines its schemas on LIB and registers on import.
from tilejit._ops import kv_cache  # noqa: F401
from tilejit._ops import incre_flash_attention  # noqa: F401
from tilejit._ops import nsa_compress  # noqa: F401
from tilejit._ops import fusion_attention_grad  # noqa: F401
from tilejit._flash_attention import flash_attention  # noqa: F401
