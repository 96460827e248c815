"""python/examples/rllib_ppo.py (RLlib PPO on schedsim.SchedsimEnv, then schedsim.evaluate)
for two small iterations. Ray's start-up alone takes ~30 s: ctest label ray (with
test_examples.py's label python). Skips, with the reason, when RLlib cannot be imported."""
import os
import pathlib
import subprocess
import sys

import pytest

import schedsim

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "python" / "examples"
GOLDEN = str(pathlib.Path(__file__).resolve().parents[1] / "golden" / "scenario.yaml")


def test_rllib_ppo_two_iterations():
    if not schedsim.HAS_ENV:
        pytest.skip("this _schedsim extension has no RL environment (schedsim.HAS_ENV is False: built without rl/env), so there is no env to test")
    try:
        import ray.rllib  # noqa: F401
        import torch  # noqa: F401
    except ImportError as e:  # e.g. ray without its rllib extra: No module named 'tree'
        pytest.skip(f"RLlib cannot be imported ({e}): scripts/setup.sh installs the modules it needs (docs/python.md, Examples)")
    env = dict(os.environ, OMP_NUM_THREADS="1", RAY_AUTH_MODE="disabled")
    r = subprocess.run([sys.executable, str(EXAMPLES / "rllib_ppo.py"), "--scenario", GOLDEN, "--iterations", "2", "--batch", "256"],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "iteration 2: 512 env steps" in r.stdout.replace(".0 env", " env")
    assert "rllib-ppo on seeds 1: mean JCT " in r.stdout
