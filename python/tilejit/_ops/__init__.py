"""The torch.library registrations of the five operators (namespace ``tilejit``).

``LIB`` is the one ``torch.library.Library("tilejit", "DEF")`` every operator
module defines its schemas on; ``tilejit.torch`` imports the operator modules,
which register their CPU and Meta implementations on import.
"""
import torch

LIB = torch.library.Library("tilejit", "DEF")
