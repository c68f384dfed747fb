"""docs/python.md's code runs: every ```python block, in order, in one namespace."""
import os
import re
from pathlib import Path

import pytest

pytest.importorskip("torch")

DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"


def blocks():
    return re.findall(r"^```python\n(.*?)^```$", DOC.read_text(), flags=re.S | re.M)


def test_the_tutorial_runs(tmp_path, capsys):
    found = blocks()
    assert len(found) >= 9, "docs/python.md lost its code blocks"
    namespace = {"__name__": "tutorial"}
    cwd = os.getcwd()
    os.chdir(tmp_path)  # a block that writes files writes them here
    try:
        for i, code in enumerate(found):
            exec(compile(code, f"{DOC.name}, block {i + 1}", "exec"), namespace)
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    # The printed values the page shows in its comments.
    assert "scale[BN=64,T=f32]@" in out and "scale[BN=32,T=f16]@" in out
    assert "6 35" in out
    assert "y: size of axis 0 must equal N (size of x axis 0)" in out
    assert "torch.Size([2, 1, 512]) meta" in out
    assert "ArgumentTypeError 161002" in out
    assert "'GatherPaKvCache', 'IncreFlashAttentionV4'" in out
