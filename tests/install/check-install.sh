#!/usr/bin/env bash
# Installs the build into a scratch prefix, then builds an outside program
# against it twice: with find_package(tilejit) and with pkg-config.
set -euo pipefail
build=$1; src=$(cd "$(dirname "$0")" && pwd); work=$build/install-check
rm -rf "$work"; mkdir -p "$work/consumer"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cp "$src/consumer.c" "$work/consumer/"
cp "$src/CMakeLists.txt.in" "$work/consumer/CMakeLists.txt"
cmake -S "$work/consumer" -B "$work/consumer/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_C_FLAGS="${CONSUMER_FLAGS:-}" >/dev/null
cmake --build "$work/consumer/build" >/dev/null
"$work/consumer/build/consumer"
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
cc ${CONSUMER_FLAGS:-} "$src/consumer.c" -o "$work/consumer-pc" $(pkg-config --cflags --libs tilejit)
"$work/consumer-pc"
