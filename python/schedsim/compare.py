"""schedsim.compare() and schedsim.sweep(): built-in policies, Python policies and Python
agents side by side, over seeds, with the CLI's output files (docs/python.md)."""
import hashlib
import itertools
import json
import math
import os
from dataclasses import dataclass, field

import numpy as np

from . import _schedsim
from .evaluate import ROW_METRICS, _flat_summary, _folder, _frame, _scenario_cfg, _seeds, evaluate, label_of, resolve


@dataclass
class Comparison:
    """The outcome of compare().

    table     one row per policy: the mean over seeds of ROW_METRICS (a pandas DataFrame
              when pandas is installed, else a list of dicts), in the order given
    per_seed  one row per (policy, seed): every number of results.json's summary
    text      {seed: the table `schedsim compare` prints for that seed}
    evaluations  {label: the Evaluation of each policy}
    out       the folder written, or None
    """

    table: object
    per_seed: object
    text: dict
    evaluations: dict = field(default_factory=dict)
    out: object = None

    def __str__(self):
        return "\n".join(f"seed {s}:\n{t}" for s, t in self.text.items())


def _labels(policies, names):
    if names is not None and len(names) != len(policies):
        raise ValueError(f"names: expected one per policy ({len(policies)}), got {len(names)}")
    resolved = [resolve(p) for p in policies]
    labels = []
    for i, (spec, obj) in enumerate(zip(policies, resolved)):
        name = names[i] if names is not None else None
        if name is None and obj is not spec:  # loaded from "module:function": labelled by the spec
            name = spec[3:] if spec.startswith("py:") else spec
        labels.append(label_of(obj, name))
    if len(set(labels)) != len(labels):
        dup = sorted({x for x in labels if labels.count(x) > 1})
        raise ValueError(f"policies: each label once (pass names=[...] to tell them apart), got {', '.join(dup)} more than once")
    return resolved, labels


def compare(scenario=None, policies=None, seeds=None, *, out=None, names=None, baseline=None, overrides=None, max_candidates=None):
    """Runs `scenario` under each of `policies` for each seed; returns a Comparison.

    policies: a list of built-in names or spec dicts ("fifo", {"name": "sjf", "by":
        "estimate"}), schedsim.Policy objects, agents (agent(obs, mask) -> int, SB3
        models) and "py:module:function" strings naming any of these (see evaluate()).
    seeds: an int or a list of ints (None = the scenario's seed).
    out: a folder: out/seed_<seed>/ holds, per seed, what `schedsim compare --out` writes
        (a folder per policy label with results.json and jobs.csv, comparison.csv,
        comparison.md, jct_cdf.svg); out/per_seed.csv and out/summary.csv the two tables.
    names: labels for the policies (default: compare's label, the Policy's name, the
        function's name or the model's class name).
    baseline: the label the paired table of comparison.md compares with (default the first).
    """
    if not policies or isinstance(policies, (str, dict)):
        raise TypeError(f"policies: expected a non-empty list of policies and agents, got {policies!r}")
    policies = list(policies)
    resolved, labels = _labels(policies, names)
    base_index = 0
    if baseline is not None:
        if baseline not in labels:
            raise ValueError(f"baseline: expected one of {', '.join(labels)}, got {baseline!r}")
        base_index = labels.index(baseline)
    base_cfg = _scenario_cfg(scenario, overrides, None)
    seed_list = _seeds(seeds, base_cfg)
    if out is not None:
        out = os.fspath(out)
    evaluations = {label: [] for label in labels}
    text = {}
    if out is not None:
        # The tables of an earlier comparison go first (as `schedsim compare` does), so
        # that one that fails midway leaves no table that looks complete.
        _clear(out, ["per_seed.csv", "summary.csv"])
        for s in seed_list:
            _clear(os.path.join(out, f"seed_{s}"), ["comparison.csv", "comparison.md", "jct_cdf.svg"])
    for s in seed_list:
        seed_dir = None if out is None else os.path.join(out, f"seed_{s}")
        handles = []
        for obj, label in zip(resolved, labels):
            e = evaluate(_scenario_cfg(scenario, overrides, s), obj, seeds=None, name=label, max_candidates=max_candidates,
                         out=None if seed_dir is None else os.path.join(seed_dir, _folder(label)), _flat_out=True)
            evaluations[label].append(e)
            handles.append(e.handles[0])
        text[s] = _schedsim.comparison_table(handles, labels, False)
        if seed_dir is not None:
            _schedsim.write_comparison(handles, labels, _scenario_cfg(scenario, overrides, s)._scenario, seed_dir, base_index)
    per_seed, table = [], []
    merged = {}
    for label in labels:
        es = evaluations[label]
        flat = [_flat_summary(e.runs[0].summary) for e in es]
        per_seed += [{"policy": label, "seed": s, **f} for s, f in zip(seed_list, flat)]
        row = {"policy": label, "seeds": len(seed_list)}
        for k in ROW_METRICS:
            row[k] = float(np.mean([f[k] for f in flat]))
        table.append(row)
        merged[label] = _merge(es, seed_list)
    result = Comparison(table=_frame(table), per_seed=_frame(per_seed), text=text, evaluations=merged, out=out)
    if out is not None:
        _write_csv(os.path.join(out, "per_seed.csv"), per_seed)
        _write_csv(os.path.join(out, "summary.csv"), table)
    return result


def _clear(folder, files):
    if os.path.isdir(folder):
        _schedsim.clear_comparison(folder, files)


def _merge(evaluations, seed_list):
    """One Evaluation over all seeds from compare's one-seed Evaluations."""
    first = evaluations[0]
    runs = [e.runs[0] for e in evaluations]
    flat = [_flat_summary(r.summary) for r in runs]
    rows = [{"policy": first.name, "seed": s, **f} for s, f in zip(seed_list, flat)]
    row = {"policy": first.name, "seeds": len(seed_list), **{k: float(np.mean([f[k] for f in flat])) for k in ROW_METRICS}}
    return type(first)(name=first.name, runs=runs, summary=_frame(rows), row=row, out=None,
                       invalid_actions=sum(e.invalid_actions for e in evaluations),
                       agent_decisions=sum(e.agent_decisions for e in evaluations), handles=[h for e in evaluations for h in e.handles])


def _csv_value(v):
    if isinstance(v, float):
        return "" if math.isnan(v) else repr(v)
    return str(v)


def _write_csv(path, rows):
    """Rows (dicts) as CSV, columns in first-seen order, written via a temporary file."""
    cols = []
    for r in rows:
        cols += [k for k in r if k not in cols]
    lines = [",".join(cols)] + [",".join(_csv_value(r.get(c, "")) for c in cols) for r in rows]
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def _run_id(label, seed, values):
    digest = hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()[:10]
    return f"{_folder(label)}-s{seed}-{digest}"


def sweep(scenario=None, parameters=None, policies=None, seeds=None, *, out=None, names=None, overrides=None, max_candidates=None):
    """The cartesian product of parameter values x policies x seeds, in this process.

    parameters: {"key.path": [values...]} (each value applied as `--set key.path=VALUE`,
        a str taken as written, other values as YAML); None = no parameters.
    policies: as compare() (built-in specs, Policy objects, agents, "py:module:function");
        None = the scenario's policy.
    out: a folder: out/runs/<run id>/results.json and jobs.csv per run, out/sweep.csv
        (one row per run) and out/summary.csv (mean and standard deviation over seeds per
        parameter values and policy). Runs whose results.json exists are not redone.
    Returns (runs, summary): two DataFrames (lists of dicts without pandas).
    """
    parameters = dict(parameters or {})
    for k, v in parameters.items():
        if not isinstance(k, str) or isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
            raise TypeError(f"parameters: expected {{'key.path': [values]}}, got {k!r}: {v!r}")
        parameters[k] = list(v)
        if not parameters[k]:
            raise ValueError(f"parameters.{k}: expected at least one value")
    policies = [None] if policies is None else list(policies)
    resolved, labels = _labels(policies, names) if policies != [None] else ([None], ["scenario"])
    seed_list = _seeds(seeds, _scenario_cfg(scenario, overrides, None))
    keys = list(parameters)
    rows = []
    if out is not None:
        _clear(os.fspath(out), ["sweep.csv", "summary.csv"])
    for values in itertools.product(*(parameters[k] for k in keys)):
        sets = list(overrides or []) + [f"{k}={_yaml_text(v)}" for k, v in zip(keys, values)]
        for obj, label in zip(resolved, labels):
            for s in seed_list:
                rid = _run_id(label, s, [_yaml_text(v) for v in values])
                run_dir = None if out is None else os.path.join(os.fspath(out), "runs", rid)
                if run_dir is not None and os.path.exists(os.path.join(run_dir, "results.json")):
                    with open(os.path.join(run_dir, "results.json"), encoding="utf-8") as f:
                        summary = json.load(f)["summary"]
                else:
                    e = evaluate(_scenario_cfg(scenario, sets, s), obj, name=label, max_candidates=max_candidates, out=run_dir, _flat_out=True)
                    summary = e.runs[0].summary
                rows.append({"run_id": rid, **{k: _yaml_text(v) for k, v in zip(keys, values)}, "policy": label, "seed": s,
                             **_flat_summary(summary)})
    summary_rows = []
    group_keys = keys + ["policy"]
    groups = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in group_keys), []).append(r)
    for g, rs in groups.items():
        row = dict(zip(group_keys, g))
        row["seeds"] = len(rs)
        for m in ROW_METRICS:
            vals = np.array([r[m] for r in rs], dtype=float)
            row[f"{m}_mean"] = float(vals.mean())
            row[f"{m}_std"] = float(vals.std(ddof=1)) if len(vals) > 1 else 0.0
        summary_rows.append(row)
    if out is not None:
        _write_csv(os.path.join(os.fspath(out), "sweep.csv"), rows)
        _write_csv(os.path.join(os.fspath(out), "summary.csv"), summary_rows)
    return _frame(rows), _frame(summary_rows)


def _yaml_text(v):
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    return json.dumps(v)
