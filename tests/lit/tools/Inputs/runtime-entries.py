"""The disk cache's entries of runtime-library functions (keys tilejit.*),
from `tilejit cache ls --json` on stdin.

Usage:
  runtime-entries.py age           prints {file: inode} of each, sets its
                                   last use a day back
  runtime-entries.py loaded FILE   checks each entry FILE (age's output)
                                   names is the same file (a compile would
                                   publish a new one) and was used just now
  runtime-entries.py tamper        flips a byte in the middle of each
"""
import json
import os
import sys
import time

entries = [e for e in json.load(sys.stdin) if e["key"].startswith("tilejit.")]
assert entries, "no runtime-library entries"
mode = sys.argv[1]
if mode == "age":
    day_ago = time.time() - 86400
    inodes = {}
    for e in entries:
        inodes[e["file"]] = os.stat(e["file"]).st_ino
        os.utime(e["file"], (day_ago, day_ago))
    print(json.dumps(inodes))
elif mode == "loaded":
    inodes = json.load(open(sys.argv[2], encoding="utf-8"))
    for path, inode in inodes.items():
        st = os.stat(path)
        assert st.st_ino == inode, f"{path} was published again (compiled)"
        assert st.st_mtime > time.time() - 3600, f"{path} was not used"
elif mode == "tamper":
    for e in entries:
        with open(e["file"], "r+b") as f:
            f.seek(e["bytes"] // 2)
            b = f.read(1)
            f.seek(e["bytes"] // 2)
            f.write(bytes([b[0] ^ 0x40]))
else:
    sys.exit(f"unknown mode {mode}")
