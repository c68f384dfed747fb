#!/usr/bin/env bash
# tilejit's one entry point for set-up, build, demo and tests.
#
#   scripts/dev.sh demo        install dependencies, build, run `tilejit demo`
#   scripts/dev.sh test        install dependencies, build, run the whole test suite
#   scripts/dev.sh sanitize    the test suite once more under ASan + UBSan
#   scripts/dev.sh tsan        the threaded tests (caches, launches, streams) under TSan
#   scripts/dev.sh fuzz [S]    each libFuzzer target for S seconds (default 60)
#   scripts/dev.sh bench       build, run `tilejit bench --report bench/results`
#                              (extra arguments go to it, e.g. --filter RE)
#   scripts/dev.sh deps        only install the dependencies
#
# Works as root on a fresh Debian 12 machine; the install step is idempotent
# and takes a second once everything is there. BUILD_DIR (default: build)
# and JOBS (default: nproc) may be set.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}

packages=(
  build-essential cmake ninja-build ccache git pkg-config python3
  llvm-19-dev llvm-19-tools libzstd-dev zlib1g-dev libedit-dev libxml2-dev libffi-dev libcurl4-openssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev libomp-dev
  libfmt-dev libcli11-dev nlohmann-json3-dev python3-matplotlib
)
# The benchmark report's peer: PyTorch on an optimised BLAS (bench only).
bench_packages=(python3-torch libopenblas0-openmp)
# libFuzzer comes with clang (fuzz only).
fuzz_packages=(clang-19 libclang-rt-19-dev libomp-19-dev)

install_deps() { # extra packages...
  local missing=()
  for p in "${packages[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "tilejit: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

configure() { # dir, extra cmake args...
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
}

run_tests() { # dir
  local dir=$1
  local targets=(tilejit-cli tile-opt tilejit-unit-tests tilejit-tests tilejit-fuzz-replay)
  # The benchmark probes' test exists where the benchmarks are built.
  ninja -C "$dir" -t query tilejit-bench-tests >/dev/null 2>&1 && targets+=(tilejit-bench-tests)
  ninja -C "$dir" -j "$jobs" "${targets[@]}"
  TILEJIT_CACHE=off ctest --test-dir "$dir" -j "$jobs" --output-on-failure --timeout 900
}

cmd=${1:-}
case "$cmd" in
  deps)
    install_deps ;;
  demo)
    install_deps
    configure "$build"
    ninja -C "$build" -j "$jobs" tilejit-cli
    "$build/tools/tilejit" demo ;;
  test)
    install_deps
    configure "$build" -DTILE_WERROR=ON -DTILE_ENABLE_ASSERTIONS=ON
    run_tests "$build" ;;
  sanitize)
    install_deps
    configure "${build}-asan" -DTILE_SANITIZE=address,undefined -DTILE_ENABLE_BENCH=OFF -DTILE_ENABLE_ASSERTIONS=ON
    ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 run_tests "${build}-asan" ;;
  fuzz)
    # The fuzzers in their own clang build (ASan + UBSan, the libraries with
    # -fsanitize=fuzzer-no-link): only the front end, the passes and codegen
    # are compiled. Each target starts from its seeds and the saved crashes;
    # a new crash stops the run and leaves its input in the build folder.
    install_deps "${fuzz_packages[@]}"
    secs=${2:-60}
    CC=clang-19 CXX=clang++-19 configure "${build}-fuzz" -DTILE_FUZZ=ON \
      -DTILE_SANITIZE=address,undefined -DTILE_WERROR=ON -DTILE_ENABLE_ASSERTIONS=ON \
      -DTILE_ENABLE_TESTS=OFF -DTILE_ENABLE_BENCH=OFF
    ninja -C "${build}-fuzz" -j "$jobs" tile-fuzz-dsl tile-fuzz-tir
    for t in dsl tir; do
      work=$(mktemp -d)
      cp fuzz/corpus/$t/* fuzz/regressions/$t/* "$work"/
      ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
        "${build}-fuzz/fuzz/tile-fuzz-$t" -max_total_time="$secs" -timeout=20 \
        -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
        -artifact_prefix="${build}-fuzz/crash-$t-" "$work"
      rm -rf "$work"
    done ;;
  tsan)
    # Only what the threaded tests need: the libraries and one test binary
    # (tests/CMakeLists.txt) of the kernel and disk caches, launches, the C
    # API's streams and executors and the stress test. libgomp is not built
    # with TSan, so its barriers are invisible to it and every OpenMP region
    # would read as a race among its own threads: one OpenMP thread per
    # launch (OMP_NUM_THREADS=1) leaves TSan a complete view of the
    # program's own threads (callers, stream workers, compiles).
    install_deps
    configure "${build}-tsan" -DTILE_SANITIZE=thread -DTILE_ENABLE_BENCH=OFF -DTILE_ENABLE_ASSERTIONS=ON
    ninja -C "${build}-tsan" -j "$jobs" tilejit-thread-tests
    OMP_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
      ctest --test-dir "${build}-tsan" -j "$jobs" --output-on-failure --timeout 900 \
      -R '^(AclRuntime|Threads|ThreadStress|KernelCache|KernelSource|TilingKey|DiskCache|RuntimeAbi)\.' ;;
  bench)
    install_deps "${bench_packages[@]}"
    configure "$build"
    ninja -C "$build" -j "$jobs" tilejit-cli
    "$build/tools/tilejit" bench --report bench/results "${@:2}" ;;
  *)
    sed -n '2,15p' "$0"; exit 2 ;;
esac
