"""gymnasium environments over the C++ scheduling MDP (rl/env; features in docs/rl.md).

Observation: {"candidates": float32 [K, F], "global": float32 [G]}; action: Discrete(K+1),
0..K-1 start that candidate (job, placement) now, K wait (masked only when nothing else
could ever happen; docs/rl.md). The legal actions are in info["action_mask"] and
env.action_masks() (the maskable-PPO convention). By default any action of the action
space is accepted: an illegal one is taken as wait, or, when wait is illegal too, as the
first legal action (docs/python.md, "Invalid actions").
"""
import math

import gymnasium
import numpy as np
from gymnasium import spaces

from . import _schedsim
from .config import MAX_SEED, _check_seed, load_config, scenario_path

_REWARD_KEYS = ("jobs_in_system", "slowdown", "makespan")


def _reward_weights(reward):
    if reward is None:
        return {}
    if not isinstance(reward, dict):
        raise TypeError(f"reward: expected a dict of weights with keys {', '.join(_REWARD_KEYS)}, got {type(reward).__name__}")
    for k, v in reward.items():
        if k not in _REWARD_KEYS:
            raise ValueError(f"reward: expected keys {', '.join(_REWARD_KEYS)}, got {k!r}")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise TypeError(f"reward.{k}: expected a finite number, got {v!r}")
    return {k: float(v) for k, v in reward.items()}


_MAX_CANDIDATES = 4096  # env.max_candidates' limit (rl/env/scheduling_env.cpp)
_MAX_ENVS = 65536  # VectorEnv sizes (docs/rl.md): far above any machine's useful count
_MAX_THREADS = 1024

# Seeds 0 .. EVAL_SEED_END-1 are for evaluation: every seed written by hand (a scenario's
# seed:, sweep seeds 1..N, held-out seeds 1..8, train.eval_seed_start). An unseeded reset
# never uses one: it draws from TRAIN_SEED_START .. TRAIN_SEED_END-1, whose top leaves
# room for a VectorEnv's auto-reset sequence (seed + num_envs x episode) below 2^63.
EVAL_SEED_END = 2**32
TRAIN_SEED_START = 2**32
TRAIN_SEED_END = 2**62

_INVALID_ACTION = ("remap", "raise")


def _check_invalid_action(invalid_action, penalty):
    if invalid_action == "wait":  # the earlier name; now the same rule as "remap"
        invalid_action = "remap"
    if invalid_action not in _INVALID_ACTION:
        raise ValueError(f"invalid_action: expected 'remap' (the default) or 'raise', got {invalid_action!r}")
    if isinstance(penalty, bool) or not isinstance(penalty, (int, float, np.integer, np.floating)) or not math.isfinite(penalty) or penalty < 0:
        raise ValueError(f"invalid_action_penalty: expected a finite number >= 0, got {penalty!r}")
    if penalty and invalid_action == "raise":
        raise ValueError("invalid_action_penalty: only meaningful with invalid_action='remap' (an illegal action raises with 'raise')")
    return invalid_action, float(penalty)


def legal_action(mask, action):
    """The action an env takes for `action` under `mask` (bool [K+1]): the action itself
    when legal, else wait (K) when wait is legal, else the first legal action."""
    if mask[action]:
        return action
    if mask[-1]:
        return len(mask) - 1
    return int(np.argmax(mask))


def legal_actions(masks, actions):
    """legal_action for each row of masks [N, K+1] and actions [N] (int32 out)."""
    actions = np.asarray(actions)
    rows = np.arange(len(masks))
    ok = masks[rows, actions]
    if ok.all():
        return actions.astype(np.int32, copy=False), ok
    fallback = np.where(masks[:, -1], masks.shape[1] - 1, np.argmax(masks, axis=1))
    return np.where(ok, actions, fallback).astype(np.int32), ok


def _env_kwargs(max_candidates, reward_scale, max_steps, reward):
    """Arguments given (None = the scenario's `env:` map, or its default)."""
    out = {}
    for name, v in (("max_candidates", max_candidates), ("max_steps", max_steps)):
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{name}: expected an int, got {type(v).__name__} {v!r}")
        v = int(v)
        # The limits of the env: map (docs/config.md), checked here so that no value
        # reaches the extension that its int arguments cannot hold.
        if name == "max_candidates" and not 1 <= v <= _MAX_CANDIDATES:
            raise ValueError(f"max_candidates: expected an int in 1..{_MAX_CANDIDATES} (candidate rows per observation), got {v}")
        if name == "max_steps" and not 0 <= v < 2**63:
            raise ValueError(f"max_steps: expected an int in 0..2**63-1 (0 = no limit), got {v}")
        out[name] = v
    if reward_scale is not None:
        if isinstance(reward_scale, bool) or not isinstance(reward_scale, (int, float)):
            raise TypeError(f"reward_scale: expected a number, got {type(reward_scale).__name__} {reward_scale!r}")
        out["reward_scale"] = float(reward_scale)
    out.update(_reward_weights(reward))
    return out


# Bounds of the features (docs/rl.md, "Observation"), by column name: 0/1 flags and
# fractions of the devices in [0, 1], ln(1 + x) and counts in [0, inf), sin/cos in
# [-1, 1]; the others (priority, deadline slack, prices, extra columns) are unbounded.
_UNIT = (0.0, 1.0)
_NONNEG = (0.0, np.inf)
_CANDIDATE_BOUNDS = {
    "gpus_frac": _UNIT, "log_est_work_h": _NONNEG, "log_est_gpu_h": _NONNEG, "log_age_h": _NONNEG,
    "speed_vs_best": _NONNEG, "log_est_runtime_h": _NONNEG, "memory_use": _NONNEG, "has_deadline": _UNIT,
    "log2_nodes": _NONNEG, "cross_rack": _UNIT, "shares_node": _UNIT, "log_rank": _NONNEG, "blocked": _UNIT,
    "opt_packed": _UNIT, "opt_fastest_type": _UNIT, "opt_slowest_type": _UNIT, "opt_first_fit": _UNIT, "preempt": _UNIT,
    "log_attained_h": _NONNEG, "log_attained_gpu_h": _NONNEG, "migrate": _UNIT, "log_migrate_gain": _NONNEG,
}
_GLOBAL_BOUNDS = {
    "free_frac_type0": _UNIT, "free_frac_type1": _UNIT, "free_frac_type2": _UNIT, "free_frac_type3": _UNIT,
    "free_frac": _UNIT, "log_queue_len": _NONNEG, "queued_gpus_frac": _NONNEG, "log_queued_gpu_h": _NONNEG,
    "log_running": _NONNEG, "log_running_mean_remaining_h": _NONNEG, "time_of_day_sin": (-1.0, 1.0),
    "time_of_day_cos": (-1.0, 1.0),
}


def _bounds(names, count, table):
    low = np.full(count, -np.inf, np.float32)
    high = np.full(count, np.inf, np.float32)
    for i, name in enumerate(names[:count]):  # extra columns (cooling) stay unbounded
        low[i], high[i] = table.get(name, (-np.inf, np.inf))
    return low, high


def _spaces(shape):
    k, f, g = shape["num_candidates"], shape["candidate_features"], shape["global_features"]
    c_low, c_high = _bounds(_schedsim.candidate_feature_names(), f, _CANDIDATE_BOUNDS)
    g_low, g_high = _bounds(_schedsim.global_feature_names(), g, _GLOBAL_BOUNDS)
    obs = spaces.Dict(
        {
            "candidates": spaces.Box(np.broadcast_to(c_low, (k, f)), np.broadcast_to(c_high, (k, f)), (k, f), np.float32),
            "global": spaces.Box(g_low, g_high, (g,), np.float32),
        }
    )
    return obs, spaces.Discrete(k + 1)


def _check_options(options):
    if options is not None and (not isinstance(options, dict) or options):
        raise ValueError(f"options: this environment takes no reset options (expected None or {{}}), got {options!r}")


def _draw_seed(np_random, size=None):
    """A training seed (never an evaluation one: TRAIN_SEED_START .. TRAIN_SEED_END-1)."""
    if size is None:
        return int(np_random.integers(TRAIN_SEED_START, TRAIN_SEED_END))
    return [int(x) for x in np_random.integers(TRAIN_SEED_START, TRAIN_SEED_END, size=size)]


# Colours of the RGB view: free devices grey, busy ones by job (a fixed palette).
_FREE = np.array([200, 200, 200], np.uint8)
_PALETTE = np.array(
    [[31, 119, 180], [255, 127, 14], [44, 160, 44], [214, 39, 40], [148, 103, 189], [140, 86, 75], [227, 119, 194],
     [127, 127, 127], [188, 189, 34], [23, 190, 207]],
    np.uint8,
)


def render_text(state):
    """A text view of the cluster: one line per node, '.' free, a letter per job."""
    lines = [f"t={state['time_s']:.1f} s  pending {state['pending']}  running {state['running']}  done {state['jobs_completed']}"]
    owners = state["owners"]
    for n, (dtype, first, count) in enumerate(state["nodes"]):
        cells = "".join("." if o < 0 else chr(ord("A") + int(o) % 26) for o in owners[first:first + count])
        lines.append(f"node {n:3d} {dtype:>8}  {cells}")
    return "\n".join(lines) + "\n"


def render_rgb(state, cell=8):
    """An RGB image (uint8 [H, W, 3]) of the cluster: a row of cells per node, grey free,
    a colour per job; 1-pixel gaps between cells."""
    nodes = state["nodes"]
    owners = state["owners"]
    width = max(count for _, _, count in nodes)
    img = np.full((len(nodes) * cell, width * cell, 3), 255, np.uint8)
    for n, (_, first, count) in enumerate(nodes):
        for i in range(count):
            o = owners[first + i]
            img[n * cell:(n + 1) * cell - 1, i * cell:(i + 1) * cell - 1] = _FREE if o < 0 else _PALETTE[int(o) % len(_PALETTE)]
    return img


class SchedsimEnv(gymnasium.Env):
    """One scheduling environment.

    config: anything schedsim.load_config accepts (its policy is ignored; its `env:`
        map, docs/config.md, gives the defaults of the next four arguments).
    max_candidates: K candidate rows per observation (action K = wait; default 16).
    reward_scale: seconds -> reward units of the time-integral terms (default 1/3600: hours).
    max_steps: truncate an episode after this many steps (0 = never, the default).
    reward: weights {"jobs_in_system": 1.0, "slowdown": 0.0, "makespan": 0.0}.
    invalid_action: "remap" (default: any action is accepted; an illegal one is taken as
        wait, or as the first legal action when wait is illegal too, see legal_action;
        info["invalid_action"] says it happened, info["action_taken"] what was done) or
        "raise" (an illegal action raises schedsim.PolicyError). "wait" is the earlier
        name of "remap".
    invalid_action_penalty: subtracted from the reward of a step whose action was
        illegal (default 0; "remap" only).
    render_mode: "ansi" (text) or "rgb_array".

    reset(seed=None): seed None draws the episode's workload seed from the training range
    (TRAIN_SEED_START .. TRAIN_SEED_END-1, never an evaluation seed 0 .. EVAL_SEED_END-1)
    with the env's generator, which a seeded reset fixes: reset(seed=s) runs workload s
    and makes every later unseeded reset reproducible.

    Pickling re-creates the env from its arguments (its episode is not carried over):
    what AsyncVectorEnv and RLlib workers need.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(self, config=None, *, max_candidates=None, reward_scale=None, max_steps=None, reward=None,
                 invalid_action="remap", invalid_action_penalty=0.0, render_mode=None, overrides=None):
        invalid_action, invalid_action_penalty = _check_invalid_action(invalid_action, invalid_action_penalty)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode: expected None, 'ansi' or 'rgb_array', got {render_mode!r}")
        self.config = load_config(config, overrides=overrides)
        self._env = _schedsim.Env(self.config._scenario, **_env_kwargs(max_candidates, reward_scale, max_steps, reward))
        self.observation_space, self.action_space = _spaces(self._env.shape)
        self.invalid_action = invalid_action
        self.invalid_action_penalty = invalid_action_penalty
        self.render_mode = render_mode
        self._mask = None
        # What pickling needs to build the same env again (a parsed Config travels as its
        # resolved dict, which loads back to the same scenario).
        self._init_args = dict(
            config=_picklable_config(config), max_candidates=max_candidates, reward_scale=reward_scale, max_steps=max_steps,
            reward=reward, invalid_action=invalid_action, invalid_action_penalty=invalid_action_penalty,
            render_mode=render_mode, overrides=overrides,
        )

    def __getstate__(self):
        return self._init_args

    def __setstate__(self, state):
        self.__init__(**state)

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            seed = _check_seed(seed)
        super().reset(seed=seed)
        _check_options(options)
        if seed is None:
            seed = _draw_seed(self.np_random)
        cand, glob, self._mask = self._env.reset(seed)
        return {"candidates": cand, "global": glob}, {"action_mask": self._mask.copy(), "seed": seed}

    def step(self, action):
        if self._mask is None:
            raise gymnasium.error.ResetNeeded("call reset() before step()")
        if isinstance(action, np.ndarray) and action.shape == ():
            action = action.item()
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
            raise TypeError(f"action: expected an int in 0..{self.action_space.n - 1}, got {type(action).__name__} {action!r}")
        action = int(action)
        if not 0 <= action < self.action_space.n:
            raise ValueError(f"action: expected an int in 0..{self.action_space.n - 1}, got {action}")
        invalid = not self._mask[action]
        if invalid and self.invalid_action == "remap":
            action = legal_action(self._mask, action)
        (cand, glob, self._mask), reward, terminated, truncated = self._env.step(action)
        if invalid:
            reward -= self.invalid_action_penalty
        info = {"action_mask": self._mask.copy(), "invalid_action": invalid, "action_taken": action}
        return {"candidates": cand, "global": glob}, float(reward), bool(terminated), bool(truncated), info

    def action_masks(self):
        """The legal actions now (bool [K+1]; the last is wait). At least one is legal."""
        if self._mask is None:
            raise gymnasium.error.ResetNeeded("call reset() before action_masks()")
        return self._mask.copy()

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() without a render_mode: pass render_mode='ansi' or 'rgb_array' to make()")
            return None
        if self._mask is None:
            raise gymnasium.error.ResetNeeded("call reset() before render()")
        state = self._env.state()
        return render_text(state) if self.render_mode == "ansi" else render_rgb(state)

    @property
    def candidate_feature_names(self):
        return _schedsim.candidate_feature_names()

    @property
    def global_feature_names(self):
        return _schedsim.global_feature_names()


def _picklable_config(config):
    from .config import Config

    return config.resolved() if isinstance(config, Config) else config


def make(config=None, **kwargs):
    """A SchedsimEnv (a gymnasium.Env) over `config`; keyword arguments as SchedsimEnv."""
    return SchedsimEnv(config, **kwargs)


_AutoresetMode = gymnasium.vector.AutoresetMode


def _autoreset_mode(mode):
    if isinstance(mode, str):
        for m in (_AutoresetMode.NEXT_STEP, _AutoresetMode.SAME_STEP):
            if mode.lower() in (m.value.lower(), m.name.lower()):
                return m
    if mode in (_AutoresetMode.NEXT_STEP, _AutoresetMode.SAME_STEP):
        return mode
    raise ValueError(f"autoreset_mode: expected gymnasium.vector.AutoresetMode.NEXT_STEP (the default) or SAME_STEP, got {mode!r}")


def _check_vector_seed(seed, num_envs):
    """reset(seed=...) of a VectorEnv: None, an int (env i gets seed + i) or num_envs ints."""
    if seed is None or isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return None if seed is None else _check_seed(seed)
    if isinstance(seed, (list, tuple, np.ndarray)):
        seeds = list(seed)
        if len(seeds) != num_envs:
            raise ValueError(f"seed: expected None, an int or a list of {num_envs} ints (one per env), got {len(seeds)} seeds")
        if any(s is None for s in seeds):
            raise ValueError("seed: a list of seeds must give every env an int (None entries are not supported)")
        return [_check_seed(s) for s in seeds]
    raise TypeError(f"seed: expected None, an int (env i gets seed + i) or a list of {num_envs} ints, got {type(seed).__name__} {seed!r}")


class VectorEnv(gymnasium.vector.VectorEnv):
    """num_envs environments stepped together in C++ with the GIL released.

    autoreset_mode: gymnasium.vector.AutoresetMode.NEXT_STEP (default, what gymnasium's
        vector wrappers expect: the step that ends env i returns its last observation;
        the next step resets env i instead of stepping it, ignoring its action, and
        returns the new episode's first observation with reward 0 and both flags false)
        or SAME_STEP (env i resets in the step that ends it: the returned observation is
        the new episode's first, info["final_obs"] / info["final_info"] hold the old
        one's last observation and mask). Also accepted as "next_step" / "same_step".
    Seeds: reset(seed=s) gives env i seed s + i, reset(seed=[s0, s1, ...]) env i seed s_i,
        reset() training seeds drawn from the generator (TRAIN_SEED_START ..
        TRAIN_SEED_END-1, never an evaluation seed). Env i's later episodes (autoresets)
        use seed_i + num_envs, seed_i + 2 num_envs, ...
    copy: True (default) returns fresh, writable arrays each step; False returns read-only
        views of the C++ buffers (no copies; overwritten by the next step or reset).
    reward_dtype: numpy dtype of the rewards (default float64; float32 allowed).
    invalid_action, invalid_action_penalty: as SchedsimEnv (an illegal action of env i is
        remapped by legal_action, info["invalid_action"][i] is True).
    render_mode: "ansi" or "rgb_array": render() returns a tuple, one view per env.
    Other arguments as SchedsimEnv; num_threads > 1 steps environments in parallel
    (results do not depend on it).
    """

    metadata = {"autoreset_mode": _AutoresetMode.NEXT_STEP, "render_modes": ["ansi", "rgb_array"]}

    def __init__(self, config=None, num_envs=8, *, num_threads=1, autoreset_mode=_AutoresetMode.NEXT_STEP, copy=True,
                 reward_dtype=np.float64, invalid_action="remap", invalid_action_penalty=0.0, render_mode=None,
                 max_candidates=None, reward_scale=None, max_steps=None, reward=None, overrides=None):
        for name, v in (("num_envs", num_envs), ("num_threads", num_threads)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"{name}: expected an int >= 1, got {type(v).__name__} {v!r}")
            if v < 1:
                raise ValueError(f"{name}: expected an int >= 1, got {v}")
            limit = _MAX_ENVS if name == "num_envs" else _MAX_THREADS
            if v > limit:
                raise ValueError(f"{name}: expected an int in 1..{limit}, got {v}")
        mode = _autoreset_mode(autoreset_mode)
        if not isinstance(copy, bool):
            raise TypeError(f"copy: expected True or False, got {copy!r}")
        try:
            self._reward_dtype = np.dtype(reward_dtype)
        except TypeError:
            self._reward_dtype = None
        if self._reward_dtype not in (np.dtype(np.float64), np.dtype(np.float32)):
            raise ValueError(f"reward_dtype: expected numpy.float64 (the default) or numpy.float32, got {reward_dtype!r}")
        self.invalid_action, self.invalid_action_penalty = _check_invalid_action(invalid_action, invalid_action_penalty)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode: expected None, 'ansi' or 'rgb_array', got {render_mode!r}")
        self.config = load_config(config, overrides=overrides)
        self._batch = _schedsim.EnvBatch(self.config._scenario, int(num_envs), int(num_threads), mode == _AutoresetMode.NEXT_STEP,
                                         **_env_kwargs(max_candidates, reward_scale, max_steps, reward))
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self.autoreset_mode = mode
        self.copy = copy
        self.render_mode = render_mode
        self.num_envs = int(num_envs)
        self.single_observation_space, self.single_action_space = _spaces(self._batch.shape)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = spaces.MultiDiscrete(np.full(self.num_envs, self.single_action_space.n))
        self._np_random = None
        self._reset_done = False
        # Views over the C++ buffers, made once: the buffers never move.
        (cand, glob, self._mask, self._rewards, self._terminated, self._truncated,
         self._pending) = self._batch.arrays()
        self._obs = {"candidates": cand, "global": glob}
        self._final = self._batch.final_arrays()
        self._every_env = np.ones(self.num_envs, bool)
        self._every_env.flags.writeable = False

    def _check_open(self):
        if self._batch is None:
            raise gymnasium.error.ClosedEnvironmentError("this VectorEnv is closed")

    def reset(self, *, seed=None, options=None):
        self._check_open()
        _check_options(options)
        seed = _check_vector_seed(seed, self.num_envs)
        if isinstance(seed, list):
            self._np_random = np.random.Generator(np.random.PCG64(seed))
            self.action_space.seed(seed[0])
            seeds = seed
        elif seed is not None:
            self._np_random, _ = gymnasium.utils.seeding.np_random(seed)
            self.action_space.seed(seed)
            seeds = [seed + i for i in range(self.num_envs)]
            if seeds[-1] > MAX_SEED:
                raise ValueError(f"seed: seed + num_envs - 1 must be at most {MAX_SEED}, got {seeds[-1]}")
        else:
            if self._np_random is None:
                self._np_random, _ = gymnasium.utils.seeding.np_random(None)
            seeds = _draw_seed(self._np_random, self.num_envs)
        self._batch.reset(seeds)
        self._reset_done = True
        info = {"action_mask": self._out(self._mask), "_action_mask": self._every_env, "seed": np.array(seeds, np.uint64),
                "_seed": self._every_env}
        return self._observation(), info

    def seed_training(self, seed):
        """Seeds the generator that unseeded resets draw their training seeds from (and the
        action space): reset() then runs reproducible training workloads, never an
        evaluation seed (what schedsim.sb3 does with SB3's seed)."""
        seed = _check_seed(seed)
        self._np_random, _ = gymnasium.utils.seeding.np_random(seed)
        self.action_space.seed(seed)

    def _out(self, a):
        return a.copy() if self.copy else a

    def _observation(self):
        if self.copy:
            return {"candidates": self._obs["candidates"].copy(), "global": self._obs["global"].copy()}
        return self._obs

    def step(self, actions):
        """actions: int [num_envs] (int32 avoids a conversion). Returns (obs, rewards,
        terminated, truncated, info) as gymnasium's vector API, in the autoreset mode
        chosen; info["action_mask"] the legal actions now, info["invalid_action"] which
        envs' actions were illegal (and remapped)."""
        self._check_open()
        if not self._reset_done:
            raise gymnasium.error.ResetNeeded("call reset() before step()")
        a = np.asarray(actions) if not isinstance(actions, np.ndarray) else actions
        invalid = None
        # Remapping needs valid indices; anything else goes to the extension as it is,
        # which names what is wrong.
        if (self.invalid_action == "remap" and a.ndim == 1 and a.shape[0] == self.num_envs and a.dtype.kind in "iu"
                and (a >= 0).all() and (a < self.single_action_space.n).all()):
            a, ok = legal_actions(self._mask, a)
            invalid = ~ok & ~self._pending
        pending = self._pending.copy() if self.autoreset_mode == _AutoresetMode.NEXT_STEP else None
        ended = self._batch.step(a, self.invalid_action == "raise")
        rewards = self._rewards.astype(self._reward_dtype, copy=self.copy or self._reward_dtype != np.float64)
        if invalid is None:
            invalid = np.zeros(self.num_envs, bool)
        elif self.invalid_action_penalty and invalid.any():
            if not rewards.flags.writeable:
                rewards = rewards.copy()
            rewards[invalid] -= self.invalid_action_penalty
        info = {"action_mask": self._out(self._mask), "_action_mask": self._every_env, "invalid_action": invalid,
                "_invalid_action": self._every_env}
        if pending is not None and pending.any():
            info["reset"], info["_reset"] = pending, self._every_env  # which envs began a new episode now
        if ended and self.autoreset_mode == _AutoresetMode.SAME_STEP:
            self._add_final(info)
        return self._observation(), rewards, self._out(self._terminated), self._out(self._truncated), info

    def _add_final(self, info):
        done = self._terminated | self._truncated
        cand, glob, mask = self._final
        final_obs = np.full(self.num_envs, None, dtype=object)
        for i in np.flatnonzero(done):
            final_obs[i] = {"candidates": cand[i].copy(), "global": glob[i].copy()}
        final_mask = np.zeros_like(mask)
        final_mask[done] = mask[done]
        info["final_obs"], info["_final_obs"] = final_obs, done
        info["final_info"], info["_final_info"] = {"action_mask": final_mask, "_action_mask": done.copy()}, done.copy()

    def action_masks(self):
        """Legal actions of every environment now (bool [num_envs, K+1]; a copy unless copy=False)."""
        self._check_open()
        return self._out(self._mask)

    def render(self):
        """One view per env (a tuple): text for "ansi", uint8 [H, W, 3] for "rgb_array"."""
        self._check_open()
        if self.render_mode is None:
            gymnasium.logger.warn("render() without a render_mode: pass render_mode='ansi' or 'rgb_array'")
            return None
        if not self._reset_done:
            raise gymnasium.error.ResetNeeded("call reset() before render()")
        draw = render_text if self.render_mode == "ansi" else render_rgb
        return tuple(draw(self._batch.state(i)) for i in range(self.num_envs))

    def close_extras(self, **kwargs):
        # Frees the environments and their buffers; views handed out keep theirs alive.
        self._batch = None
        self._obs = self._final = None

    def finished_episodes(self):
        """Episodes finished since the last call: env, seed, return, mean JCT (s), jobs, steps."""
        self._check_open()
        return self._batch.take_finished_episodes()


def _env_id(scenario):
    return "schedsim/" + scenario.replace("_", "-") + "-v0"


def env_scenarios():
    """The shipped scenarios the environment can step: all but those with inference
    services (a top-level `inference:` map), which the environment refuses (their
    autoscaler is a policy decorator; evaluate an agent there with rl:PATH under
    schedsim run/compare or schedsim.evaluate)."""
    import re

    from .config import scenarios

    out = []
    for scenario in scenarios():
        if scenario != "default":
            with open(scenario_path(scenario), encoding="utf-8") as f:
                if re.search(r"^inference:", f.read(), re.M):
                    continue
        out.append(scenario)
    return out


def register_envs():
    """Registers schedsim/<scenario>-v0 with gymnasium for every shipped scenario
    (schedsim.scenarios(), "_" written "-": schedsim/placement-topology-v0, ...;
    schedsim/default-v0 is the built-in default). Idempotent; loads nothing until
    gymnasium.make is called."""
    from .config import scenarios

    for scenario in env_scenarios():
        env_id = _env_id(scenario)
        if env_id in gymnasium.registry:
            continue
        config = None if scenario == "default" else scenario_path(scenario)
        gymnasium.register(id=env_id, entry_point="schedsim.env:SchedsimEnv", vector_entry_point="schedsim.env:VectorEnv",
                           kwargs={"config": config})
