"""The Python side of the VectorEnv benchmark (docs/benchmarks.md, "Python VectorEnv"):
N environments through schedsim.VectorEnv, uniformly random legal actions chosen as
argmax(u x mask) with numpy, batched. Compare with schedsim_bench_vector_env (C++).

    PYTHONPATH=build/python:python python3 python/bench/bench_vector_env.py [num_envs=8] [calls=20000] [scenario.yaml] [--split]

--split also times the two halves of each call apart (numpy's action choice; the
VectorEnv.step call, C++ stepping included), which adds two clock reads per call.
"""
import sys
import time

import numpy as np

import schedsim


def main():
    split = "--split" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--split"]
    num_envs = int(args[0]) if len(args) > 0 else 8
    calls = int(args[1]) if len(args) > 1 else 20000
    config = args[2] if len(args) > 2 else None
    # The zero-copy views and same-step autoreset this benchmark has always measured.
    venv = schedsim.VectorEnv(config, num_envs=num_envs, copy=False, autoreset_mode="same_step", invalid_action="raise")
    rng = np.random.default_rng(0)
    _, info = venv.reset(seed=0)
    mask = info["action_mask"]
    clock = time.perf_counter
    choice_s = 0.0
    start = clock()
    if split:
        for _ in range(calls):
            a = clock()
            actions = (rng.random(mask.shape) * mask).argmax(axis=1).astype(np.int32)
            choice_s += clock() - a
            _, _, _, _, info = venv.step(actions)
            mask = info["action_mask"]
    else:
        for _ in range(calls):
            actions = (rng.random(mask.shape) * mask).argmax(axis=1).astype(np.int32)
            _, _, _, _, info = venv.step(actions)
            mask = info["action_mask"]
    s = clock() - start
    print(f"Python VectorEnv: {num_envs} envs, {calls} calls, {s:.3f} s, {calls * num_envs / s:.0f} env-steps/s, "
          f"{s / calls * 1e6:.2f} us per call")
    if split:
        print(f"  of which action choice (numpy) {choice_s / calls * 1e6:.2f} us, VectorEnv.step {(s - choice_s) / calls * 1e6:.2f} us per call")


if __name__ == "__main__":
    main()
