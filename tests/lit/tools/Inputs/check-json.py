"""Checks that a file (or stdin, "-") is one JSON document of tilejit's
--json results: an object with every KEY, or a non-empty array whose first
element has every KEY.

Usage: check-json.py FILE object|array KEY...
"""
import json
import sys

path, shape, keys = sys.argv[1], sys.argv[2], sys.argv[3:]
text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
doc = json.loads(text)
if shape == "array":
    assert isinstance(doc, list) and doc, doc
    doc = doc[0]
assert isinstance(doc, dict), doc
missing = [k for k in keys if k not in doc]
assert not missing, f"no {missing} in {sorted(doc)}"
