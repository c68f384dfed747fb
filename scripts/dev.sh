#!/usr/bin/env bash
# tilejit's one entry point for set-up, build, demo and tests.
#
#   scripts/dev.sh demo        install dependencies, build, run `tilejit demo`
#   scripts/dev.sh test        install dependencies, build, run the whole test suite
#   scripts/dev.sh sanitize    the test suite once more, in a clang-19 ASan + UBSan
#                              build that also holds the libFuzzer targets
#   scripts/dev.sh tsan        the threaded tests (caches, launches, streams) under TSan
#   scripts/dev.sh fuzz [S]    the libFuzzer targets (dsl, tir, aclnn) for S seconds in
#                              all (default 180): half to aclnn, a quarter to each other;
#                              reuses the sanitize build (builds it if absent)
#   scripts/dev.sh difftest [S] the differential tester (fuzz/difftest) for S seconds
#                              (default 3600): random programs, a summary, failures minimised
#   scripts/dev.sh bench       build, run `tilejit bench --report bench/results`
#                              (extra arguments go to it, e.g. --filter RE)
#   scripts/dev.sh deps        only install the dependencies
#
# Works as root on a fresh Debian 12 machine; the install step is idempotent
# and takes a second once everything is there. BUILD_DIR (default: build)
# and JOBS (default: nproc) may be set; the sanitize and fuzz build is
# ${BUILD_DIR}-asan.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}

packages=(
  build-essential cmake ninja-build ccache git pkg-config python3
  llvm-19-dev llvm-19-tools libzstd-dev zlib1g-dev libedit-dev libxml2-dev libffi-dev libcurl4-openssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libfmt-dev libcli11-dev nlohmann-json3-dev python3-matplotlib
  # The Python package (python/, docs/python.md): the extension, its
  # aclnn binding generated with libclang, its tests.
  # OpenBLAS: also the BLAS of the tests' torch references (their attention
  # matmuls), through the libblas.so.3 alternative it takes when installed
  # (unless an administrator chose another); correct on any BLAS, slower on
  # the reference one.
  python3-dev pybind11-dev libdlpack-dev python3-numpy python3-torch python3-pytest
  libclang-19-dev python3-clang-19 libopenblas0-openmp
)
# The benchmark report's peer: PyTorch on Debian's OpenBLAS (OpenMP), which
# `tilejit bench` puts first on the peer's LD_LIBRARY_PATH whatever the
# system's libblas.so.3 alternative is (a peer on the reference BLAS is
# reported as "no peer"). Listed here too so that the bench verb stands on
# its own should the list above drop it.
bench_packages=(python3-torch libopenblas0-openmp)
# clang for the sanitize and fuzz build (libFuzzer and the sanitizer runtimes
# come with libclang-rt, OpenMP for clang with libomp-19-dev). GCC builds use
# GCC's libgomp; Debian's libomp-dev is LLVM 14's and conflicts with
# libomp-19-dev (installing one removes the other), so it is not listed.
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

run_tests() { # dir, extra ctest args...
  local dir=$1; shift
  # libtilejit too: built by the examples' test otherwise, while the install
  # test, beside it, copies it.
  local targets=(tilejit tilejit-cli tile-opt tilejit-unit-tests tilejit-tests tilejit-fuzz-replay
                 tilejit-difftest tilejit-difftest-tests)
  # The Python package, where it is configured (not in the sanitizer builds).
  ninja -C "$dir" -t query tilejit-python >/dev/null 2>&1 && targets+=(tilejit-python)
  # The benchmark probes' test exists where the benchmarks are built.
  ninja -C "$dir" -t query tilejit-bench-tests >/dev/null 2>&1 && targets+=(tilejit-bench-tests)
  ninja -C "$dir" -j "$jobs" "${targets[@]}"
  TILEJIT_CACHE=off ctest --test-dir "$dir" -j "$jobs" --output-on-failure --timeout 900 "$@"
}

# The one clang build of the sanitizers and the fuzzers: ASan + UBSan,
# assertions, warnings as errors, TILE_FUZZ=ON (every library compiled with
# -fsanitize=fuzzer-no-link, so the test binaries and the three
# tile-fuzz-* binaries share its objects). A folder left by an older GCC
# configuration is rebuilt from scratch (CMake cannot change compilers).
asan_dir="${build}-asan"
configure_asan() {
  install_deps "${fuzz_packages[@]}"
  if [ -f "$asan_dir/CMakeCache.txt" ] &&
     ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++-19' "$asan_dir/CMakeCache.txt"; then
    rm -rf "$asan_dir"
  fi
  CC=clang-19 CXX=clang++-19 configure "$asan_dir" -DTILE_FUZZ=ON \
    -DTILE_SANITIZE=address,undefined -DTILE_WERROR=ON -DTILE_ENABLE_ASSERTIONS=ON \
    -DTILE_ENABLE_BENCH=OFF
}
fuzz_targets=(dsl tir aclnn)

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
    # The whole suite (the fuzz regressions and seeds included) and the
    # fuzz binaries, in the one clang build (see configure_asan). The
    # operators' debug-mode re-run is left out (label sanitizer-skip in
    # tests/CMakeLists.txt): its host code is tilejit-tests' own, run here
    # already, and its bounds checks are in the JIT-compiled kernels, which
    # the sanitizers do not instrument; the test step runs it.
    configure_asan
    ninja -C "$asan_dir" -j "$jobs" "${fuzz_targets[@]/#/tile-fuzz-}"
    ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
      run_tests "$asan_dir" -LE sanitizer-skip ;;
  fuzz)
    # The fuzzers of the sanitize build, for S seconds in all: half to
    # aclnn (slow inputs: each is an operator call), a quarter to each of
    # dsl and tir. Each target starts from its seeds and the saved crashes;
    # a new crash stops the run and leaves its input in the build folder
    # (crash-TARGET-*), to be kept under fuzz/regressions/TARGET/.
    secs=${2:-180}
    configure_asan
    ninja -C "$asan_dir" -j "$jobs" "${fuzz_targets[@]/#/tile-fuzz-}"
    for t in "${fuzz_targets[@]}"; do
      # aclnn inputs are a 17-byte header and 4-byte edits: long ones at once
      # (libFuzzer's slow length ramp would keep them to a few edits).
      share=$((secs / 4)); limits=(-max_len=65536)
      [ "$t" = aclnn ] && share=$((secs - 2 * (secs / 4))) && limits=(-max_len=256 -len_control=0)
      work=$(mktemp -d)
      cp fuzz/corpus/$t/* "$work"/
      cp fuzz/regressions/$t/* "$work"/ 2>/dev/null || true
      ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
        "$asan_dir/fuzz/tile-fuzz-$t" -max_total_time="$share" -timeout=30 \
        -rss_limit_mb=4096 "${limits[@]}" -print_final_stats=1 \
        -artifact_prefix="$asan_dir/crash-$t-" "$work"
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
      -R '^(AclRuntime|Threads|ThreadStress|KernelCache|KernelSource|TilingKey|DiskCache|RuntimeAbi|CompileAsync)\.' ;;
  difftest)
    # A campaign of the differential tester (docs/fuzzing.md): random
    # programs from a seed derived from the time, each at AVX-512, AVX2, in
    # debug mode and interpreted; a summary (programs, features, failures
    # by class, programs not interpreted by reason) at the end, each failing
    # program minimised into fuzz/difftest/regressions/.
    secs=${2:-3600}
    install_deps
    configure "$build"
    ninja -C "$build" -j "$jobs" tilejit-difftest
    "$build/fuzz/difftest/tilejit-difftest" --seconds "$secs" --save fuzz/difftest/regressions ;;
  bench)
    install_deps "${bench_packages[@]}"
    configure "$build"
    ninja -C "$build" -j "$jobs" tilejit-cli
    "$build/tools/tilejit" bench --report bench/results "${@:2}" ;;
  *)
    sed -n '2,21p' "$0"; exit 2 ;;
esac
