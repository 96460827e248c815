"""RLlib (Ray) PPO on schedsim: the scale-out path for Python RL.

    python python/examples/rllib_ppo.py --iterations 20 --env-runners 4
Each RLlib env runner (a Ray actor, on this machine or across a Ray cluster) builds its own
schedsim.SchedsimEnv from `env_config` (the env is picklable: it is re-created from its
config). The Dict observation is flattened by RLlib's FlattenObservations connector; the
action mask is not used here (any action is legal: a masked one is taken as wait).
After training, score the policy like a built-in one with schedsim.evaluate (see the end).
"""
import argparse
import time

import numpy as np
import ray
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.connectors.env_to_module import FlattenObservations
from ray.tune.registry import register_env

import schedsim

p = argparse.ArgumentParser()
p.add_argument("--scenario", default=None, help="a scenario file (default: the built-in default scenario)")
p.add_argument("--iterations", type=int, default=2)
p.add_argument("--env-runners", type=int, default=1)
p.add_argument("--batch", type=int, default=512, help="env steps per training iteration")
p.add_argument("--max-steps", type=int, default=0, help="truncate episodes after this many steps (0 = never)")
p.add_argument("--eval-seeds", default="1", help="held-out seeds to evaluate the trained policy on (N-M or N,M,...)")
a = p.parse_args()


def make_env(env_config):
    return schedsim.SchedsimEnv(env_config.get("scenario"), max_steps=env_config.get("max_steps") or None)


register_env("schedsim", make_env)
ray.init(num_cpus=max(2, a.env_runners + 1), include_dashboard=False, log_to_driver=False)
config = (
    PPOConfig()
    .environment("schedsim", env_config={"scenario": a.scenario, "max_steps": a.max_steps})
    .env_runners(num_env_runners=a.env_runners, env_to_module_connector=lambda env, spaces=None, device=None: FlattenObservations())
    .training(train_batch_size_per_learner=a.batch, minibatch_size=min(128, a.batch), num_epochs=2)
)
algo = config.build_algo()
start = time.monotonic()
for i in range(a.iterations):
    result = algo.train()
    ret = result.get("env_runners", {}).get("episode_return_mean", float("nan"))
    print(f"iteration {i + 1}: {result['num_env_steps_sampled_lifetime']} env steps, episode return mean {ret:.1f}")
print(f"{a.iterations} iterations in {time.monotonic() - start:.1f} s")

# The trained module as a schedsim agent: flatten the observation as the connector does
# (gymnasium's flatten of the Dict space: keys in sorted order), take the greedy action.
module = algo.get_module()
obs_space = schedsim.make(a.scenario).observation_space


def rllib_agent(obs, mask):
    import torch
    from gymnasium.spaces.utils import flatten

    x = torch.as_tensor(flatten(obs_space, obs)[None, :], dtype=torch.float32)
    logits = module.forward_inference({"obs": x})["action_dist_inputs"][0].detach().numpy()
    return int(np.argmax(np.where(mask, logits, -np.inf)))


from schedsim.cli import _seeds  # noqa: E402

e = schedsim.evaluate(a.scenario, rllib_agent, seeds=_seeds(a.eval_seeds), name="rllib-ppo")
print(f"rllib-ppo on seeds {a.eval_seeds}: mean JCT {e.row['mean_jct_s'] / 3600:.3f} h")
algo.stop()
ray.shutdown()
