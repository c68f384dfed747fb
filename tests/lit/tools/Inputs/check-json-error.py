"""Checks that a file is one JSON error object of tilejit's --json commands:
{"error": {"message": <containing TEXT>, "status": STATUS}}.

Usage: check-json-error.py FILE STATUS TEXT
"""
import json
import sys

path, status, text = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(path) as f:
    doc = json.load(f)
error = doc["error"]
assert set(error) == {"message", "status"}, error
assert error["status"] == status, error
assert text in error["message"], error
