"""Score trained SB3 agents like built-in policies: one comparison table over held-out seeds.

    python python/examples/compare_agents.py --ppo ppo.zip --maskable maskable.zip --seeds 1-8 --out results/agents
The seeds 1..8 are evaluation seeds: training (schedsim.sb3, unseeded resets) never draws them.
"""
import argparse
import time

import schedsim
from schedsim.cli import _seeds

HEURISTICS = "fifo,sjf,srtf,las,slurm-easy,gittins,themis,gavel,tiresias-dlas"

p = argparse.ArgumentParser()
p.add_argument("--scenario", default=None, help="the scenario the agents trained on (default: the built-in default scenario)")
p.add_argument("--ppo", help="an SB3 PPO .zip")
p.add_argument("--maskable", help="an sb3-contrib MaskablePPO .zip")
p.add_argument("--policies", default=HEURISTICS)
p.add_argument("--seeds", type=_seeds, default=list(range(1, 9)))
p.add_argument("--out", default=None)
p.add_argument("--sampled", action="store_true", help="also each agent sampling its actions (deterministic=False; torch seeded with 0)")
a = p.parse_args()

policies, names = a.policies.split(","), a.policies.split(",")
if a.ppo:
    from stable_baselines3 import PPO

    policies.append(PPO.load(a.ppo, device="cpu"))
    names.append("sb3-ppo")
if a.maskable:
    from sb3_contrib import MaskablePPO

    policies.append(MaskablePPO.load(a.maskable, device="cpu"))
    names.append("sb3-maskable-ppo")

def sampled(model, masked):
    def act(obs, mask):
        kwargs = {"action_masks": mask} if masked else {}
        return model.predict(obs, deterministic=False, **kwargs)[0]

    return act


if a.sampled:
    import torch

    torch.manual_seed(0)
    for model, name in list(zip(policies, names))[len(a.policies.split(",")):]:
        policies.append(sampled(model, name == "sb3-maskable-ppo"))
        names.append(name + " (sampled)")

start = time.monotonic()
c = schedsim.compare(a.scenario, policies, seeds=a.seeds, names=names, out=a.out)
table = c.table.copy()
for col in ("mean_jct_s", "median_jct_s", "p95_jct_s", "mean_queue_delay_s", "makespan_s"):
    table[col.replace("_s", "_h")] = table.pop(col) / 3600
table = table.sort_values("mean_jct_h")
try:
    print(table.to_markdown(index=False, floatfmt=".3f"))  # needs the tabulate package
except ImportError:
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
for name in names[len(a.policies.split(",")):]:
    e = c.evaluations[name]
    print(f"{name}: {e.agent_decisions} decisions, {e.invalid_actions} masked actions remapped")
print(f"{len(policies)} policies x {len(a.seeds)} seeds in {time.monotonic() - start:.1f} s")
