#!/usr/bin/env bash
# The reliability build (docs/reliability.md): clang with AddressSanitizer +
# UndefinedBehaviorSanitizer and libFuzzer coverage, without LibTorch and Python (see the
# doc for why), into build-sanitize/. Runs every C++ test there (the Catch2 suite, the
# command-line tests) and each fuzz target for SCHEDSIM_FUZZ_SECONDS (default 5).
# Any sanitizer report fails the test that triggered it; any compiler warning fails the
# build (-Werror).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SCHEDSIM_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
seconds="${SCHEDSIM_FUZZ_SECONDS:-5}"
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Paths relative to the checkout, as in test.sh: a fresh clone elsewhere reuses the objects.
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
fi
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only" -DSCHEDSIM_SANITIZE=ON -DSCHEDSIM_FUZZ=ON \
        -DSCHEDSIM_WITH_TORCH=OFF -DSCHEDSIM_BUILD_PYTHON=OFF -DSCHEDSIM_BUILD_TESTS=ON "${launcher[@]}" >&2
fi
# -Werror here (not at the first configure only), so that an older build-sanitize/
# gets it too: CI fails on any compiler warning (CMakeLists.txt, SCHEDSIM_WERROR).
cmake -B "$build" -DSCHEDSIM_FUZZ_SECONDS="$seconds" -DSCHEDSIM_WERROR=ON >/dev/null
cmake --build "$build" -j "$(nproc)" >&2
cd "$build"
# halt_on_error: the first report fails the test; detect_leaks: leaks are bugs too.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# Excluded: the two tests that bound the resident memory of streaming readers (ASan's
# shadow memory and allocation quarantine add tens of MiB, which is not the readers').
ctest -j "$(nproc)" --output-on-failure -E "^(streamed traces use memory independent of their length|unsorted traces longer than the in-memory limit are sorted through temporary runs)$" "$@"
