"""The TorchScript export of `schedsim train` (policy.ts) from Python's PyTorch, without
schedsim's C++ agent: a greedy episode of the gymnasium environment driven by policy.ts
makes exactly the decisions of `schedsim eval --policy rl:checkpoint.pt`, so its mean JCT
equals the CLI's. Needs PyTorch (pip install torch) and a CLI built with LibTorch."""
import json
import math
import pathlib
import subprocess

import numpy as np
import pytest

import schedsim

torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install torch): the TorchScript export is checked where it is")
if not schedsim.HAS_ENV:
    pytest.skip("this _schedsim extension has no RL environment (schedsim.HAS_ENV is False: built without rl/env), so there is no env to test", allow_module_level=True)

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCENARIO = str(ROOT / "experiments" / "configs" / "rl_train.yaml")
# A short run on a small workload: what is checked is the export, not the agent's quality.
OVERRIDES = ["workload.synthetic.num_jobs=30", "train.total_steps=3000", "train.eval_every=0", "train.eval_episodes=1"]
SEED = 3


def greedy(logits, mask):
    """schedsim's greedy rule: wait iff its logit >= logsumexp of the legal candidates'."""
    cand = logits[:-1].masked_fill(~mask[:-1], float("-inf"))
    if not bool(mask[:-1].any()):
        return len(mask) - 1
    if bool(mask[-1]) and float(logits[-1]) >= float(torch.logsumexp(cand, dim=0)):
        return len(mask) - 1
    return int(torch.argmax(cand))


def test_policy_ts_reproduces_the_cli_agent(cli, tmp_path):
    train = subprocess.run([cli, "train", SCENARIO, "-q", "--out", str(tmp_path / "train")] + sum((["--set", o] for o in OVERRIDES), []),
                           capture_output=True, text=True)
    if train.returncode != 0 and "libtorch" in train.stderr.lower():
        pytest.skip("the schedsim CLI was built without LibTorch: " + train.stderr.strip())
    assert train.returncode == 0, train.stderr
    evaluated = subprocess.run([cli, "eval", SCENARIO, "-q", "--seed", str(SEED), "--policy", f"rl:{tmp_path / 'train' / 'checkpoint.pt'}",
                                "--out", str(tmp_path / "eval")] + sum((["--set", o] for o in OVERRIDES), []),
                               capture_output=True, text=True)
    assert evaluated.returncode == 0, evaluated.stderr
    summary = json.loads((tmp_path / "eval" / "results.json").read_text())["summary"]

    policy = torch.jit.load(str(tmp_path / "train" / "policy.ts"))
    env = schedsim.make(SCENARIO, overrides=OVERRIDES)
    obs, info = env.reset(seed=SEED)
    total_reward, done = 0.0, False
    with torch.no_grad():
        while not done:
            cand = torch.from_numpy(np.asarray(obs["candidates"], dtype=np.float32))[None]
            glob = torch.from_numpy(np.asarray(obs["global"], dtype=np.float32))[None]
            mask = torch.from_numpy(np.asarray(info["action_mask"]).astype(bool))[None]
            logits, value = policy(cand, glob, mask)
            assert logits.shape == (1, env.action_space.n) and value.shape[0] == 1
            obs, reward, terminated, truncated, info = env.step(greedy(logits[0], mask[0]))
            total_reward += reward
            done = terminated or truncated
    # The return is -(total JCT in hours): the same decisions give the same mean JCT.
    mean_jct_s = -total_reward * 3600.0 / summary["jobs_completed"]
    assert math.isclose(mean_jct_s, summary["mean_jct_s"], rel_tol=1e-9), (mean_jct_s, summary["mean_jct_s"])
