"""Checks the C name of the release that libtilejit.so exports,
tilejit_version_string(): "tilejit <release> (LLVM <version>)", the release
and LLVM version that `tilejit --version` prints.

    check-version-string.py TILEJIT

The library is the one the build put beside tools/ (build/libtilejit.so).
"""
import ctypes
import os
import subprocess
import sys


def main(tilejit):
    library = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(tilejit))),
                           "libtilejit.so")
    lines = subprocess.run([tilejit, "--version"], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    release = lines[0].split()[1]
    llvm = next(l.split()[1] for l in lines if l.startswith("LLVM "))
    lib = ctypes.CDLL(library)
    lib.tilejit_version_string.restype = ctypes.c_char_p
    got = lib.tilejit_version_string().decode()
    want = f"tilejit {release} (LLVM {llvm})"
    if got != want:
        print(f"tilejit_version_string() is {got!r}, --version says {want!r}")
        return 1
    print(got)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
