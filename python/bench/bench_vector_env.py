"""The Python side of the VectorEnv benchmark (docs/benchmarks.md, "Python VectorEnv"):
N environments through schedsim.VectorEnv, uniformly random legal actions chosen as
argmax(u x mask) with numpy, batched. Compare with schedsim_bench_vector_env (C++).

    PYTHONPATH=build/python:python python3 python/bench/bench_vector_env.py [num_envs=8] [calls=20000] [scenario.yaml]
"""
import sys
import time

import numpy as np

import schedsim


def main():
    num_envs = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    config = sys.argv[3] if len(sys.argv) > 3 else None
    venv = schedsim.VectorEnv(config, num_envs=num_envs)
    rng = np.random.default_rng(0)
    _, info = venv.reset(seed=0)
    mask = info["action_mask"]
    start = time.perf_counter()
    for _ in range(calls):
        actions = (rng.random(mask.shape) * mask).argmax(axis=1).astype(np.int32)
        _, _, _, _, info = venv.step(actions)
        mask = info["action_mask"]
    s = time.perf_counter() - start
    print(f"Python VectorEnv: {num_envs} envs, {calls} calls, {s:.3f} s, {calls * num_envs / s:.0f} env-steps/s, "
          f"{s / calls * 1e6:.2f} us per call")


if __name__ == "__main__":
    main()
