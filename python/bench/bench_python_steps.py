"""Env steps per second from Python, the three ways a Python learner steps schedsim, in
one run (docs/benchmarks.md, "Python env steps/s"):

  single    one schedsim.SchedsimEnv (gymnasium.Env), reset when an episode ends
  sb3       schedsim.sb3.make_vec_env (SB3 VecEnv over the C++ VectorEnv), N envs
  sync      gymnasium.vector.SyncVectorEnv of N SchedsimEnv (gymnasium's own batching)
  vector    schedsim.VectorEnv directly (NEXT_STEP autoreset, copies), N envs, for reference

Every mode takes uniformly random legal actions (argmax of uniform noise x mask, the
mask from info / action_masks()), so the work per step is the same. Each mode runs for
--seconds of wall time; steps/s is reported per wall second and per CPU second of this
process (the second is steadier on a shared machine).

    PYTHONPATH=build/python:python python3 python/bench/bench_python_steps.py [--envs 8] [--seconds 5] [--scenario FILE]
"""
import argparse
import time

import gymnasium
import numpy as np

import schedsim


def choose(rng, masks):
    return (rng.random(masks.shape) * masks).argmax(axis=-1)


def bench_single(scenario, seconds, rng, envs):
    env = schedsim.make(scenario)
    _, info = env.reset(seed=2**32)
    yield
    steps = episodes = 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(100):
            _, _, term, trunc, info = env.step(int(choose(rng, info["action_mask"])))
            steps += 1
            if term or trunc:
                episodes += 1
                _, info = env.reset()
    yield steps, episodes


def bench_sb3(scenario, seconds, rng, envs):
    import schedsim.sb3  # imports stable_baselines3 and torch: before the clock starts

    venv = schedsim.sb3.make_vec_env(scenario, num_envs=envs, seed=0)
    venv.reset()
    yield
    steps = episodes = 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(20):
            masks = np.stack(venv.env_method("action_masks"))
            _, _, dones, _ = venv.step(choose(rng, masks))
            steps += envs
            episodes += int(dones.sum())
    yield steps, episodes


def bench_sync(scenario, seconds, rng, envs):
    venv = gymnasium.vector.SyncVectorEnv([lambda: schedsim.make(scenario) for _ in range(envs)])
    _, info = venv.reset(seed=[2**32 + i for i in range(envs)])
    yield
    steps = episodes = 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(20):
            _, _, term, trunc, info = venv.step(choose(rng, info["action_mask"]))
            steps += envs
            episodes += int((term | trunc).sum())
    yield steps, episodes


def bench_vector(scenario, seconds, rng, envs):
    venv = schedsim.VectorEnv(scenario, num_envs=envs)
    _, info = venv.reset(seed=2**32)
    yield
    steps = episodes = 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(20):
            _, _, term, trunc, info = venv.step(choose(rng, info["action_mask"]).astype(np.int32))
            steps += envs
            episodes += int((term | trunc).sum())
    yield steps, episodes


MODES = {"single": bench_single, "sb3": bench_sb3, "sync": bench_sync, "vector": bench_vector}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--envs", type=int, default=8)
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--scenario", default=None, help="default: the built-in default scenario (the envs' default)")
    p.add_argument("--modes", default="single,sb3,sync,vector")
    a = p.parse_args()
    rows = []
    for mode in a.modes.split(","):
        rng = np.random.default_rng(0)
        run = MODES[mode](a.scenario, a.seconds, rng, a.envs)
        next(run)  # build and reset (not timed)
        wall0, cpu0 = time.perf_counter(), time.process_time()
        steps, episodes = next(run)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        rows.append((mode, steps, episodes, wall, cpu))
    base = rows[0][1] / rows[0][4]
    print(f"| mode | envs | env steps | episodes ended | wall s | CPU s | steps/s (wall) | steps/s (CPU) | vs {rows[0][0]} (CPU) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for mode, steps, episodes, wall, cpu in rows:
        n = 1 if mode == "single" else a.envs
        print(f"| {mode} | {n} | {steps} | {episodes} | {wall:.2f} | {cpu:.2f} | {steps / wall:,.0f} | {steps / cpu:,.0f} | {steps / cpu / base:.2f}x |")


if __name__ == "__main__":
    main()
