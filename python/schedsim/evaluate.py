"""schedsim.evaluate(): run any agent (or policy) over seeds, with the CLI's outputs.

An *agent* maps an observation of the RL environment to an action: `agent(obs, mask)
-> int` with obs = {"candidates": float32 [K, F], "global": float32 [G]} (as
schedsim.make() returns it) and mask = bool [K + 1], or a Stable-Baselines3 model
(anything with .predict: MaskablePPO gets the mask as action_masks). It schedules
through the environment's MDP at the kernel's decision points, as the `rl` policy runs a
checkpoint, so a run writes the same results.json and jobs.csv as a built-in policy's
(the C++ runner writes them). docs/python.md, "Evaluating an agent".
"""
import importlib
import inspect
import json
import math
import operator
import os
from dataclasses import dataclass, field

import numpy as np

from . import _schedsim
from .config import load_config
from .simulate import JobTable, SimulationResult

# The columns of a comparison row (means over seeds), as compare's table shows them.
ROW_METRICS = ("jobs_completed", "mean_jct_s", "median_jct_s", "p95_jct_s", "mean_queue_delay_s", "gpu_utilization", "makespan_s",
               "mean_bounded_slowdown")


def _flat_summary(summary):
    """results.json's summary as one flat dict of numbers (window.* as sweep.csv names them)."""
    out = {}
    for k, v in summary.items():
        if isinstance(v, dict):
            for k2, v2 in v.items():
                if isinstance(v2, (int, float)) and not isinstance(v2, bool):
                    out[f"{k}.{k2}"] = v2
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[k] = v
    return out


def _frame(rows):
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows)


def load_object(spec):
    """The object named by "module:attr" (or "py:module:attr"; attr may be dotted)."""
    if not isinstance(spec, str):
        raise TypeError(f"agent: expected 'module:function', got {type(spec).__name__}")
    text = spec[3:] if spec.startswith("py:") else spec
    module, sep, attr = text.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"agent: expected 'module:function' or 'py:module:function' (an importable module and a name in it), got {spec!r}")
    try:
        obj = importlib.import_module(module)
    except ImportError as e:
        raise ImportError(f"agent {spec!r}: cannot import module {module!r}: {e}") from e
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise AttributeError(f"agent {spec!r}: module {module!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if inspect.isclass(obj):
        obj = obj()  # a Policy subclass (or an agent class) with a no-argument constructor
    return obj


def _is_policy(obj):
    return callable(getattr(obj, "decide", None))


def _is_builtin(obj):
    return obj is None or isinstance(obj, dict) or (isinstance(obj, str) and not obj.startswith("py:"))


def _to_action(a, who):
    """An agent's answer as an int: an int, a numpy integer, or a one-element integer
    array (what SB3's predict returns)."""
    if isinstance(a, np.ndarray):
        if a.size != 1:
            raise TypeError(f"agent {who!r}: expected one action (an int), got an array of shape {a.shape}")
        a = a.reshape(-1)[0]
    try:
        return operator.index(a)
    except TypeError:
        raise TypeError(f"agent {who!r}: expected an int action, got {type(a).__name__} {a!r}") from None


def agent_function(agent, name, deterministic=True):
    """The extension's act(candidates, global, mask) -> int for a callable agent or an
    SB3 model (predict(obs, deterministic=True), with action_masks= when it takes them)."""
    predict = getattr(agent, "predict", None)
    if callable(predict):
        try:
            masked = "action_masks" in inspect.signature(predict).parameters
        except (TypeError, ValueError):
            masked = False

        def act(candidates, global_, mask):
            obs = {"candidates": candidates, "global": global_}
            if masked:
                a, _ = predict(obs, action_masks=mask, deterministic=deterministic)
            else:
                a, _ = predict(obs, deterministic=deterministic)
            return _to_action(a, name)

        return act
    if not callable(agent):
        raise TypeError(f"agent: expected a callable agent(obs, mask) -> int, a model with .predict(obs), a schedsim.Policy, a built-in "
                        f"policy name or 'module:function', got {type(agent).__name__}")

    def act(candidates, global_, mask):
        return _to_action(agent({"candidates": candidates, "global": global_}, mask), name)

    return act


def _default_name(obj):
    if isinstance(obj, str):
        return obj[3:] if obj.startswith("py:") else obj
    if _is_policy(obj):
        return getattr(obj, "name", None) or type(obj).__name__
    if inspect.isfunction(obj) or inspect.ismethod(obj):
        return obj.__name__
    return type(obj).__name__


def _source(obj, spec):
    if isinstance(spec, str):
        return spec
    t = type(obj)
    if inspect.isfunction(obj):
        return f"{obj.__module__}:{obj.__qualname__}"
    return f"{t.__module__}:{t.__qualname__}"


def label_of(policy, name=None):
    """The label of a policy or agent in tables and folder names: compare's label for a
    built-in spec ("fifo", "fifo(placement=packed)"), else `name` or the object's name."""
    if name is not None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"name: expected a non-empty str, got {name!r}")
        return name
    if _is_builtin(policy):
        return "scenario" if policy is None else _schedsim.policy_label(policy)
    return _default_name(policy)


def _folder(label):
    return "".join("_" if c in "/\\:" else c for c in label)


@dataclass
class Evaluation:
    """The outcome of evaluate(): one run per seed.

    name      the label (results.json's policy, the comparison table's row)
    runs      one SimulationResult per seed (summary, jobs, results, results_json)
    summary   one row per seed: seed and every number of results.json's summary
              (a pandas DataFrame when pandas is installed, else a list of dicts)
    row       the comparison-table row: name, seeds, and the mean over seeds of ROW_METRICS
    out       the folder written (None without out=)
    invalid_actions  the agent's masked actions, remapped (0 for a policy), over all seeds
    """

    name: str
    runs: list
    summary: object
    row: dict
    out: object = None
    invalid_actions: int = 0
    agent_decisions: int = 0
    handles: list = field(default_factory=list, repr=False)


def _seeds(seeds, cfg):
    if seeds is None:
        return [cfg.seed]
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        return [int(seeds)]
    try:
        out = [operator.index(s) for s in seeds]
    except TypeError:
        raise TypeError(f"seeds: expected an int or a list of ints, got {seeds!r}") from None
    if not out:
        raise ValueError("seeds: expected at least one seed, got an empty list")
    if len(set(out)) != len(out):
        raise ValueError(f"seeds: each seed once, got {out}")
    return out


def _scenario_cfg(scenario, overrides, seed):
    return load_config(scenario, overrides=overrides, seed=seed)


def _run_one(cfg, policy, label, source, out_dir, max_candidates, invalid_action, deterministic=True):
    if _is_builtin(policy):
        h = _schedsim.run_policy(cfg._scenario, policy, out_dir)
    elif _is_policy(policy):
        h = _schedsim.run_policy(cfg._scenario, policy, out_dir)
    else:
        act = agent_function(policy, label, deterministic)
        h = _schedsim.run_agent(cfg._scenario, act, label, source, max_candidates, invalid_action == "raise", out_dir)
    results = json.loads(h.results_json)
    run = SimulationResult(summary=results["summary"], jobs=JobTable._from_native(h.take_jobs()), results=results,
                           results_json=h.results_json, stats=h.stats)
    return h, run


def _row(name, seeds, flat):
    row = {"policy": name, "seeds": len(seeds)}
    for k in ROW_METRICS:
        vals = [f[k] for f in flat if k in f]
        row[k] = float(np.mean(vals)) if vals else math.nan
    return row


def evaluate(scenario=None, agent=None, seeds=None, *, out=None, name=None, overrides=None, max_candidates=None, invalid_action="remap",
             deterministic=True, _flat_out=False):
    """Runs `scenario` under `agent` for each seed; returns an Evaluation.

    scenario: anything load_config() accepts (None = the built-in default).
    agent: a callable agent(obs, mask) -> int; a model with .predict(obs) (SB3,
        sb3-contrib: MaskablePPO gets action_masks=mask; deterministic=True); a
        schedsim.Policy (decide(view)); a built-in policy name or spec dict; or
        "module:function" / "py:module:function" naming any of these (a class is
        instantiated with no arguments).
    seeds: an int or a list of ints (None = the scenario's seed).
    out: a folder: each seed's run writes out/seed_<seed>/results.json and jobs.csv,
        exactly as `schedsim run --out` does.
    name: the label (default: the built-in label, the Policy's name, the function's name
        or the model's class name).
    max_candidates: the agent's K when it differs from the scenario's `env:` map.
    invalid_action: "remap" (default: a masked action is taken as wait, or the first
        legal row when waiting is illegal, as the environment does) or "raise"
        (schedsim.PolicyError naming the time, action and mask).
    deterministic: passed to a model's predict (True: the greedy action; False samples
        from the policy with torch's global generator: seed it for repeatable runs).
    """
    if invalid_action not in ("remap", "raise"):
        raise ValueError(f"invalid_action: expected 'remap' (the default) or 'raise', got {invalid_action!r}")
    spec = agent
    agent = resolve(agent)
    label = label_of(agent, name if name is not None or agent is spec else _default_name(spec))
    base = _scenario_cfg(scenario, overrides, None)
    seed_list = _seeds(seeds, base)
    source = _source(agent, spec)
    if out is not None:
        out = os.fspath(out)
    runs, handles, flat = [], [], []
    for s in seed_list:
        cfg = _scenario_cfg(scenario, overrides, s)
        # compare()/sweep() name the run's own folder (_flat_out, one seed).
        folder = None if out is None else out if _flat_out else os.path.join(out, f"seed_{s}")
        h, run = _run_one(cfg, agent, label, source, folder, max_candidates, invalid_action, deterministic)
        runs.append(run)
        handles.append(h)
        flat.append(_flat_summary(run.summary))
    rows = [{"policy": label, "seed": s, **f} for s, f in zip(seed_list, flat)]
    return Evaluation(name=label, runs=runs, summary=_frame(rows), row=_row(label, seed_list, flat), out=out,
                      invalid_actions=sum(h.invalid_actions for h in handles), agent_decisions=sum(h.agent_decisions for h in handles),
                      handles=handles)


def resolve(policy):
    """A policy or agent argument with "module:function" strings loaded: a str starting
    with "py:" always names a Python object; another str with a colon does unless its
    head is a built-in policy (as in rl:FILE); other strs are built-in specs."""
    if isinstance(policy, str) and ":" in policy:
        head = policy.split(":", 1)[0]
        if policy.startswith("py:") or head not in {p["name"] for p in _schedsim.policies()}:
            return load_object(policy)
    return policy
