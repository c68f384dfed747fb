"""pytest set-up of the package's tests: where PyTorch is not installed, the PyTorch tests
(test_torch_*.py) are not collected instead of failing (the package works without it)."""
import importlib.util

collect_ignore_glob = []
if importlib.util.find_spec("torch") is None:
    collect_ignore_glob += ["test_torch_*.py"]
