"""Stable-Baselines3 on the C++ vector environment, without a user wrapper:

    from stable_baselines3 import PPO
    import schedsim.sb3
    env = schedsim.sb3.make_vec_env("my_scenario.yaml", num_envs=8)
    PPO("MultiInputPolicy", env).learn(50_000)

sb3-contrib's MaskablePPO reads the masks through env_method("action_masks"). Importing
this module needs stable-baselines3 (pip install stable-baselines3).
"""
import time

import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from .env import VectorEnv


class SchedsimVecEnv(VecEnv):
    """An SB3 VecEnv over a schedsim.VectorEnv in SAME_STEP mode (SB3's autoreset):
    dones = terminated | truncated; infos[i] of an env that ended holds
    "terminal_observation", "TimeLimit.truncated" (truncated, not terminated) and
    "episode" {"r": return, "l": steps, "t": seconds since creation}, as SB3's Monitor
    writes it; "invalid_action" says whether env i's action was illegal (and remapped)."""

    def __init__(self, venv):
        if not isinstance(venv, VectorEnv):
            raise TypeError(f"venv: expected a schedsim.VectorEnv, got {type(venv).__name__}")
        if venv.autoreset_mode != AutoresetMode.SAME_STEP:
            raise ValueError("venv: SB3 resets an env in the step that ends it: build the VectorEnv with autoreset_mode='same_step'")
        self.venv = venv
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self._actions = None
        self._train_seed = None
        self._start_s = time.monotonic()

    def seed(self, seed=None):
        """SB3's seeding: makes the training workloads of the next reset and after
        reproducible. They stay training seeds (schedsim.env.TRAIN_SEED_START ...): SB3's
        seed (often 0) would otherwise run evaluation workloads. For chosen workload
        seeds, reset env.venv (the schedsim.VectorEnv) with seed=... instead."""
        if seed is None:
            seed = int(np.random.randint(0, np.iinfo(np.uint32).max, dtype=np.uint32))
        self._train_seed = int(seed)
        self._seeds = [self._train_seed + i for i in range(self.num_envs)]  # what SB3 expects back
        return self._seeds

    def reset(self):
        if self._train_seed is not None:
            self.venv.seed_training(self._train_seed)
            self._train_seed = None
        obs, info = self.venv.reset()
        self._reset_seeds()
        self.reset_infos = [{"seed": int(s)} for s in info["seed"]]
        self.venv.finished_episodes()  # episodes of the previous reset are not this one's
        return obs

    def step_async(self, actions):
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self):
        obs, rewards, terminated, truncated, info = self.venv.step(self._actions)
        dones = terminated | truncated
        infos = [{"invalid_action": bool(x)} for x in info["invalid_action"]]
        if dones.any():
            final = info["final_obs"]
            for i in np.flatnonzero(dones):
                infos[i]["terminal_observation"] = final[i]
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            elapsed = round(time.monotonic() - self._start_s, 6)
            for e in self.venv.finished_episodes():
                infos[e["env"]]["episode"] = {"r": e["episode_return"], "l": e["steps"], "t": elapsed}
        return obs, rewards.astype(np.float32, copy=False), dones, infos

    def close(self):
        self.venv.close()

    def _indices(self, indices):
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)

    def get_attr(self, attr_name, indices=None):
        # One VectorEnv holds every env: an attribute is the same for all of them.
        return [getattr(self.venv, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name, value, indices=None):
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        idx = self._indices(indices)
        if method_name == "action_masks":
            masks = self.venv.action_masks()
            return [masks[i] for i in idx]
        if method_name == "render":
            images = self.venv.render()
            return [images[i] for i in idx]
        raise AttributeError(f"env_method: SchedsimVecEnv supports 'action_masks' and 'render', got {method_name!r}")

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False] * len(self._indices(indices))

    def get_images(self):
        if self.venv.render_mode != "rgb_array":
            raise ValueError(f"get_images: needs render_mode='rgb_array', got {self.venv.render_mode!r}")
        return list(self.venv.render())


def make_vec_env(config=None, num_envs=8, *, seed=None, **kwargs):
    """An SB3 VecEnv of num_envs environments over `config` (anything load_config
    accepts), stepped in C++. seed: makes its training workloads reproducible (see
    SchedsimVecEnv.seed; they are always training seeds). Other keyword arguments as
    schedsim.VectorEnv (max_candidates, num_threads, invalid_action_penalty, ...)."""
    for fixed in ("autoreset_mode", "reward_dtype"):
        if fixed in kwargs:
            raise TypeError(f"{fixed}: fixed by SB3's VecEnv (same-step autoreset, float32 rewards)")
    venv = VectorEnv(config, num_envs, autoreset_mode=AutoresetMode.SAME_STEP, reward_dtype=np.float32, **kwargs)
    env = SchedsimVecEnv(venv)
    if seed is not None:
        env.seed(seed)
    return env
