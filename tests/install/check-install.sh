#!/usr/bin/env bash
# Installs the build into a scratch prefix, checks that every installed
# header compiles on its own and that the library exports nothing outside
# the tilejit and acl/aclnn names, then builds two outside programs (the C
# API, the C++ API) against it twice: with find_package(tilejit) and with
# pkg-config.
set -euo pipefail
build=$1; src=$(cd "$(dirname "$0")" && pwd); work=$build/install-check
rm -rf "$work"; mkdir -p "$work/consumer"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
prefix=$work/prefix
# docs/tutorial.md shows consumer_api.cpp verbatim.
awk '/^```cpp$/ { n++; if (n == 1) { on = 1; next } } on && /^```$/ { exit } on' \
  "$src/../../docs/tutorial.md" | cmp -s - "$src/consumer_api.cpp" \
  || { echo "FAIL: docs/tutorial.md's program differs from tests/install/consumer_api.cpp"; exit 1; }
# Each installed header on its own: the C API's as C and as C++, the C++
# API's as C++ (with the package's include flags only).
for h in $(cd "$prefix/include" && find . -name '*.h' | sort); do
  h=${h#./}
  case $h in
    tilejit/*) langs="c++" ;;
    *) langs="c c++" ;;
  esac
  for lang in $langs; do
    std=$([ $lang = c ] && echo -std=c11 || echo -std=c++20)
    echo "#include <$h>" | ${CC:-cc} -x $lang $std -fsyntax-only -Wall -Werror \
      -I"$prefix/include" - \
      || { echo "FAIL: installed header $h does not compile on its own ($lang)"; exit 1; }
  done
done
# Exported symbols: the aclnn-compatible C API, tilejit_* runtime entry
# points and the tilejit:: C++ API, nothing else.
lib=$(ls "$prefix"/lib*/libtilejit.so | head -1)
stray=$(nm -D --defined-only "$lib" | awk '{print $3}' | c++filt \
  | grep -Ev '^(acl|tilejit_|tilejit::)' || true)
[ -z "$stray" ] || { echo "FAIL: libtilejit.so exports symbols outside its API:"; echo "$stray" | head -20; exit 1; }
cp "$src/consumer.c" "$src/consumer_api.cpp" "$work/consumer/"
cp "$src/CMakeLists.txt.in" "$work/consumer/CMakeLists.txt"
cmake -S "$work/consumer" -B "$work/consumer/build" -G Ninja \
  ${CC:+-DCMAKE_C_COMPILER="$CC"} ${CXX:+-DCMAKE_CXX_COMPILER="$CXX"} \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_C_FLAGS="${CONSUMER_FLAGS:-}" \
  -DCMAKE_CXX_FLAGS="${CONSUMER_FLAGS:-}" >/dev/null
cmake --build "$work/consumer/build" >/dev/null
"$work/consumer/build/consumer"
"$work/consumer/build/consumer_api"
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
${CC:-cc} ${CONSUMER_FLAGS:-} "$src/consumer.c" -o "$work/consumer-pc" $(pkg-config --cflags --libs tilejit)
"$work/consumer-pc"
${CXX:-c++} -std=c++20 ${CONSUMER_FLAGS:-} "$src/consumer_api.cpp" -o "$work/consumer-api-pc" \
  $(pkg-config --cflags --libs tilejit)
"$work/consumer-api-pc"
# The Python package, where the build has it: installed at Debian's
# P/lib/python3/dist-packages, importable from there alone (its extensions
# find P/lib/libtilejit.so through their RPATH), a kernel compiled and run.
if ls "$build"/python/tilejit/_tilejit*.so >/dev/null 2>&1; then
  python=${PYTHON:-/usr/bin/python3}
  (cd "$work" && PYTHONPATH="$prefix/lib/python3/dist-packages" "$python" - "$prefix" <<'PY'
import os, sys
import numpy as np
import tilejit
prefix = os.path.realpath(sys.argv[1])
assert os.path.realpath(tilejit.__file__).startswith(prefix), tilejit.__file__
src = """
kernel scale<T: f32|f16, BN: i64 = 64>(x: gm<T>[N], y: gm<T>[N], a: f32) grid(cdiv(N, BN)) {
  let i = program_id(0) * BN;
  store(y, [i], cast<T>(cast<f32>(load(x, [i], [BN])) * a));
}
"""
k = tilejit.compile(src, "scale", T=np.float32)
x = np.arange(100, dtype=np.float32)
y = np.zeros(100, np.float32)
k(x, y, 3.0)
assert (y == 3 * x).all()
print("python consumer ok:", tilejit.version(), k.key)
PY
  ) || { echo "FAIL: the installed Python package does not import or run"; exit 1; }
fi
