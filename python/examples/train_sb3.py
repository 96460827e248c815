"""Train SB3 PPO (no mask) or sb3-contrib MaskablePPO on the C++ vector env, no wrapper.

    python python/examples/train_sb3.py --algo maskable --steps 50000 --save agent.zip
Then score it like a built-in policy: schedsim.evaluate(None, MaskablePPO.load("agent.zip"), seeds=range(1, 9)).
"""
import argparse
import time

import schedsim.sb3

p = argparse.ArgumentParser()
p.add_argument("--algo", choices=["ppo", "maskable"], default="maskable")
p.add_argument("--scenario", default=None, help="a scenario file (default: the built-in default scenario)")
p.add_argument("--steps", type=int, default=50_000)
p.add_argument("--envs", type=int, default=8)
p.add_argument("--n-steps", type=int, default=256, help="rollout length per env")
p.add_argument("--seed", type=int, default=0)
p.add_argument("--save", default=None)
a = p.parse_args()

if a.algo == "ppo":
    from stable_baselines3 import PPO as Algo
else:
    from sb3_contrib import MaskablePPO as Algo

env = schedsim.sb3.make_vec_env(a.scenario, num_envs=a.envs, seed=a.seed)
model = Algo("MultiInputPolicy", env, n_steps=a.n_steps, batch_size=256, seed=a.seed, device="cpu", verbose=0)
start = time.monotonic()
model.learn(total_timesteps=a.steps)
print(f"{a.algo}: {model.num_timesteps} steps in {time.monotonic() - start:.1f} s")
if a.save:
    model.save(a.save)
