"""The examples of python/examples run in a tiny mode (a few steps, one seed): the SB3 PPO
and MaskablePPO training scripts on the C++ vector env, the agent comparison, and the
notebook-style pandas/matplotlib example. Each skips, with the reason, without its
packages. (RLlib: test_example_rllib.py, label ray.)"""
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

import schedsim

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "python" / "examples"
GOLDEN = str(pathlib.Path(__file__).resolve().parents[1] / "golden" / "scenario.yaml")

if not schedsim.HAS_ENV:
    pytest.skip("this _schedsim extension has no RL environment (schedsim.HAS_ENV is False: built without rl/env), so there is no env to test", allow_module_level=True)


def need(*modules):
    for m in modules:
        if importlib.util.find_spec(m) is None:
            pytest.skip(f"needs the Python package {m!r} (pip install {m.replace('_', '-')})")


def run(script, *args, env=None):
    e = dict(os.environ, OMP_NUM_THREADS="1", **(env or {}))
    r = subprocess.run([sys.executable, str(EXAMPLES / script), *args], capture_output=True, text=True, env=e, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Both training scripts, 64 steps on 2 envs of the golden scenario each."""
    need("torch", "stable_baselines3", "sb3_contrib")
    d = tmp_path_factory.mktemp("agents")
    for algo in ("ppo", "maskable"):
        out = run("train_sb3.py", "--algo", algo, "--scenario", GOLDEN, "--steps", "64", "--envs", "2", "--n-steps", "32", "--save", str(d / f"{algo}.zip"))
        assert out.startswith(f"{algo}: 64 steps in ") and (d / f"{algo}.zip").exists()
    return d


def test_train_sb3_then_compare_with_heuristics(trained, tmp_path):
    out = run("compare_agents.py", "--scenario", GOLDEN, "--ppo", str(trained / "ppo.zip"), "--maskable", str(trained / "maskable.zip"),
              "--policies", "fifo,sjf", "--seeds", "1", "--out", str(tmp_path / "cmp"))
    assert "sb3-ppo: " in out and "sb3-maskable-ppo: " in out and "4 policies x 1 seeds in " in out
    for name in ("sb3-ppo", "sb3-maskable-ppo"):
        assert (tmp_path / "cmp" / "seed_1" / name / "results.json").exists()
        assert (tmp_path / "cmp" / "seed_1" / name / "jobs.csv").read_text().count("\n") == 81  # header + the 80 jobs
    assert "| sb3-maskable-ppo |" in (tmp_path / "cmp" / "seed_1" / "comparison.md").read_text()


def test_results_notebook_quick(tmp_path):
    need("pandas", "matplotlib")
    out = run("results_notebook.py", str(tmp_path), env={"SCHEDSIM_EXAMPLE_QUICK": "1"})
    assert "least_work" in out and (tmp_path / "jct.png").stat().st_size > 10_000
    assert sorted(p.name for p in (tmp_path / "seed_2").iterdir()) == ["comparison.csv", "comparison.md", "fifo", "jct_cdf.svg", "las",
                                                                       "least_work", "sjf"]
