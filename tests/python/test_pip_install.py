"""`pip install .` and `pip install -e .` give a working schedsim package whose extension
does not link LibTorch.

The wheel build (scikit-build-core) recompiles the non-Torch libraries in build-pip/;
with the CMake build's compiler and ccache launcher (passed by ctest as SCHEDSIM_CXX and
SCHEDSIM_CXX_LAUNCHER; scripts/test.sh turns ccache on) those compiles are cache hits, so
this costs about half a minute instead of a full rebuild (docs/python.md, "Tests").
"""
import glob
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# What the installed package must do: import from where it was installed, ship the
# scenarios, and give the CLI's summary.
CHECK = r"""
import json, sys
import schedsim
r = schedsim.simulate(sys.argv[1], policy="sjf", seed=9)
print(json.dumps({"file": schedsim.__file__, "extension": schedsim._schedsim.__file__,
                  "scenarios": schedsim.scenarios(), "summary": r.summary}))
"""


def build_env():
    """The environment of the pip build: no PYTHONPATH (the build tree must not leak in),
    the CMake build's compiler and launcher."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    launcher = os.environ.get("SCHEDSIM_CXX_LAUNCHER", "")
    if launcher:
        env["CMAKE_CXX_COMPILER_LAUNCHER"] = launcher
        env.setdefault("CCACHE_BASEDIR", str(ROOT))  # relative paths: build/ and build-pip/ objects match
    return env


def pip_install(python, *args):
    defines = []
    if os.environ.get("SCHEDSIM_CXX"):
        defines += ["-C", f"cmake.define.CMAKE_CXX_COMPILER={os.environ['SCHEDSIM_CXX']}"]
    if os.environ.get("SCHEDSIM_CXX_LAUNCHER"):
        defines += ["-C", f"cmake.define.CMAKE_CXX_COMPILER_LAUNCHER={os.environ['SCHEDSIM_CXX_LAUNCHER']}"]
    cmd = [str(python), "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-deps", *defines, *args]
    r = subprocess.run(cmd, env=build_env(), cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, f"{' '.join(cmd)} failed:\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"


def run_check(python, golden_yaml, cwd, extra_env=None):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(extra_env or {})
    r = subprocess.run([str(python), "-c", CHECK, golden_yaml], env=env, cwd=cwd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]
    return json.loads(r.stdout)


def cli_summary(cli, golden_yaml, out):
    subprocess.run([cli, "run", golden_yaml, "--out", str(out), "--quiet", "--set", "policy=sjf", "--seed", "9"], check=True)
    return json.loads((out / "results.json").read_text())["summary"]


def linked_libraries(path):
    """NEEDED entries (readelf) and every library the loader resolves (ldd)."""
    needed = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    resolved = subprocess.run(["ldd", path], capture_output=True, text=True, check=True).stdout
    return needed, resolved


@pytest.fixture(scope="module", autouse=True)
def build_backend():
    try:
        import pybind11  # noqa: F401
        import scikit_build_core  # noqa: F401
    except ImportError as e:
        pytest.skip(f"pip install . needs scikit-build-core and pybind11 in this Python (scripts/setup.sh installs them): {e}")
    for tool in ("readelf", "ldd"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (binutils / libc-bin)")


def test_pip_install_gives_a_working_package_without_libtorch(cli, golden_yaml, packaged_scenarios, tmp_path):
    site = tmp_path / "site"
    pip_install(sys.executable, "--target", str(site), str(ROOT))
    (ext,) = glob.glob(str(site / "schedsim" / "_schedsim*.so"))
    # Issue 27: no link-time optimisation (a minute-long link), and pybind11's headers from
    # a fixed folder of build-pip/, not from pip's per-install temporary build environment
    # (whose new path made every later install recompile the extension).
    ninja = (ROOT / "build-pip" / "build.ninja").read_text()
    assert "-flto" not in ninja
    assert sorted(set(re.findall(r"-isystem (\S*pybind11\S*)", ninja))) == [str(ROOT / "build-pip" / "pybind11-include")]
    needed, resolved = linked_libraries(ext)
    assert "(NEEDED)" in needed  # readelf did read the dynamic section
    # Library names only: ldd's load addresses are hex and may contain "c10" by chance.
    for text in (needed, resolved):
        assert not re.search(r"lib(torch|c10)", text), text
    assert "not found" not in resolved, resolved

    got = run_check(sys.executable, golden_yaml, tmp_path, {"PYTHONPATH": str(site)})
    assert got["file"] == str(site / "schedsim" / "__init__.py")
    assert got["extension"] == ext
    assert got["scenarios"] == packaged_scenarios
    assert got["summary"] == cli_summary(cli, golden_yaml, tmp_path / "cli")

    # A scenario reading the data folder is packaged with its files, paths made relative.
    if "carbon_de_lu" in got["scenarios"]:
        text = (site / "schedsim" / "scenarios" / "carbon_de_lu.yaml").read_text()
        assert "$SCHEDSIM_DATA/" not in text and "{file: data/carbon/DE-LU_2023_hourly.csv}" in text
        for f in ("carbon/DE-LU_2023_hourly.csv", "carbon/LICENSE", "prices/DE-LU_electricity_prices_2023.csv"):
            assert (site / "schedsim" / "scenarios" / "data" / f).is_file(), f


def test_editable_install_uses_the_source_tree(cli, golden_yaml, tmp_path):
    venv = tmp_path / "venv"
    # pip, numpy, scikit-build-core... come from this Python's site-packages (no ensurepip,
    # no download); the editable install goes into the venv.
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    pip_install(python, "-e", str(ROOT))
    got = run_check(python, golden_yaml, tmp_path)
    # The Python files are the checkout's (edits show without reinstalling); the
    # extension is the one built into the venv.
    assert got["file"] == str(ROOT / "python" / "schedsim" / "__init__.py")
    assert got["extension"].startswith(str(venv))
    needed, resolved = linked_libraries(got["extension"])
    assert "torch" not in needed and "torch" not in resolved
    assert got["summary"] == cli_summary(cli, golden_yaml, tmp_path / "cli")
    # The command line beside the package (scikit-build-core's scripts folder: the venv's
    # bin/; `pip install --target` above drops scripts, as for any wheel).
    version = subprocess.run([str(venv / "bin" / "schedsim"), "--version"], capture_output=True, text=True)
    assert (version.returncode, version.stdout) == (0, "schedsim 0.1.0\n")
    needed, resolved = linked_libraries(str(venv / "bin" / "schedsim"))
    assert not re.search(r"lib(torch|c10)", needed + resolved) and "not found" not in resolved, resolved
