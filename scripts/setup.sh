#!/usr/bin/env bash
# Installs what schedsim needs on Debian 12 when it is missing. Fast when nothing is
# missing (one dpkg query), so the run and test commands call it every time.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config ccache   # ccache: the pip-install test reuses the build's objects
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev catch2 libeigen3-dev pybind11-dev zlib1g-dev
  clang libclang-rt-14-dev    # scripts/sanitize.sh: ASan + UBSan and libFuzzer (docs/reliability.md)
  libtorch-dev libopenblas0   # without OpenBLAS, LibTorch falls back to reference BLAS (~10x slower)
  libgloo-dev                 # Gloo headers for LibTorch's c10d: distributed training (docs/rl_agents.md)
)

# One dpkg query for all of them ("name status" lines; unknown names print nothing).
status=$'\n'"$(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${packages[@]}" 2>/dev/null || true)"$'\n'
missing=()
for p in "${packages[@]}"; do
  if [[ $status != *$'\n'"$p installed"$'\n'* ]]; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "schedsim setup: installing ${missing[*]}" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# Python side, looked up in one interpreter start without importing anything (importing
# pandas, gymnasium and matplotlib takes seconds): the groups below with a module missing.
missing_python=""
if command -v python3 >/dev/null 2>&1; then
  missing_python=$(python3 -c '
import importlib.util
groups = {
    "tests": ["numpy", "gymnasium", "pytest", "pandas", "pybind11", "scikit_build_core"],
    "report": ["matplotlib", "pandas"],
    "ray": ["ray"],
    "rllib": ["tree", "lz4", "scipy", "pyarrow", "ormsgpack", "tensorboardX", "absl"],
}
print(" ".join(g for g, modules in groups.items()
               if any(importlib.util.find_spec(m) is None for m in modules)))
' || echo "tests report ray rllib")
fi
# The extension's tests and the gymnasium layer: from PyPI with the pip of the python3 on
# PATH. Use a virtual environment when that python3 is the system's (Debian refuses pip
# installs into it); without these the Python tests are not registered and everything
# else still builds and tests.
if [[ " $missing_python " == *" tests "* ]]; then
  echo "schedsim setup: pip installing numpy gymnasium pytest pandas pybind11 scikit-build-core for $(command -v python3)" >&2
  python3 -m pip install --quiet numpy gymnasium pytest pandas pybind11 scikit-build-core >&2 ||
    echo "schedsim setup: pip install failed; the Python tests will be skipped (see docs/python.md)" >&2
fi
# `schedsim report` draws with matplotlib and pandas from PyPI (never Debian python3-*).
if [[ " $missing_python " == *" report "* ]]; then
  echo "schedsim setup: pip install matplotlib pandas (for schedsim report)" >&2
  python3 -m pip install -q matplotlib pandas >&2 || echo "schedsim setup: warning: pip install matplotlib pandas failed; schedsim report will not work" >&2
fi
# `schedsim sweep --backend ray` and its test (ctest -L ray) use Ray from PyPI: about 16 s
# and 240 MB to install, 40 s of test. Without it the test reports "skipped".
if [[ " $missing_python " == *" ray "* ]]; then
  echo "schedsim setup: pip install ray (for schedsim sweep --backend ray)" >&2
  python3 -m pip install -q ray >&2 || echo "schedsim setup: warning: pip install ray failed; the Ray sweep test will be skipped" >&2
fi
# RLlib (the scale-out example, python/examples/rllib_ppo.py, and its test, ctest -L ray):
# the modules `import ray.rllib` needs beyond ray. Installed without their dependency
# resolution because `ray[rllib]` pins an older gymnasium than the one installed; without
# them the RLlib test reports "skipped" with the missing module.
if [[ " $missing_python " == *" rllib "* ]]; then
  echo "schedsim setup: pip install dm-tree lz4 scipy pyarrow ormsgpack tensorboardX absl-py (for RLlib)" >&2
  python3 -m pip install -q --no-deps dm-tree lz4 scipy pyarrow ormsgpack tensorboardX absl-py >&2 ||
    echo "schedsim setup: warning: pip install of RLlib's modules failed; the RLlib example test will be skipped" >&2
fi
