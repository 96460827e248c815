#!/usr/bin/env python3
"""Figures and a Markdown summary for a schedsim results folder.

    python3 app/report.py DIR [--out OUT] [--policies A,B] [--highlight A,B]
    (or: schedsim report DIR ...)

DIR is the output of `schedsim run`, `schedsim compare` or `schedsim sweep`. OUT
(default DIR/report) receives PNG figures and report.md:
  jct_cdf.png          JCT CDF per run (per policy for compare)
  timeline.png         queue length and GPU utilization over time (runs made with --timeline)
  gantt_<label>.png    which job ran on which devices (runs made with --timeline)
  energy.png           cumulative energy and CO2 over time (runs with an energy: map)
  learning_curve.png   every learning_curve.csv found under DIR (for a `schedsim train`
                       folder, the only figure, written into DIR itself)
  sweep_<metric>.png   sweep folders: metric mean and 95% CI against the offered-load
                       parameter if any (a key path ending in ...load...), else the first
                       (mean JCT in hours, GPU utilization, goodput)
  tradeoff_jct_emissions.png  CO2 and cost against mean JCT, one point per policy (or per
                       sweep group, with 95% CIs over seeds), for runs with an energy: map

--policies A,B keeps only those runs (compare labels or sweep policies), in that order;
--highlight A,B draws those bold and the others thin and faded. Every series has its
own colour and line style (and marker where points are few); legends sit outside the
axes, and a figure grows to fit its legend.
"""
import argparse
import json
import math
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt
    import matplotlib.ticker
    import pandas as pd
except ImportError as e:  # the CLI passes this message on
    sys.stderr.write(f"schedsim report: needs matplotlib and pandas ({e}); install them with: pip install matplotlib pandas\n")
    sys.exit(2)

# The summary metrics shown in the tables: (results.json key, column title, scale).
TABLE = [
    ("jobs_completed", "jobs", 1),
    ("mean_jct_s", "mean JCT (h)", 1 / 3600),
    ("median_jct_s", "median JCT (h)", 1 / 3600),
    ("p95_jct_s", "p95 JCT (h)", 1 / 3600),
    ("mean_queue_delay_s", "mean wait (h)", 1 / 3600),
    ("gpu_utilization", "GPU util", 1),
    ("makespan_s", "makespan (h)", 1 / 3600),
]
MAX_GANTT_SEGMENTS = 3000  # beyond this a chart is unreadable and slow to draw

# The same ten colours as the CLI's SVG figures (base/svg_plot.cpp), times four
# line styles: series i has colour i % 10 and style i // 10, so no two of the first 40
# series look alike; markers (for lines of few points) cycle independently.
COLORS = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#8c564b", "#7f7f7f", "#bcbd22"]
LINESTYLES = ["-", "--", ":", "-."]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "*", "h"]


class Styles:
    """Colour, line style and marker per series; --highlight makes the others faint."""

    def __init__(self, highlight=()):
        self.highlight = set(highlight)

    def __call__(self, i, label=None, markers=False):
        st = {"color": COLORS[i % len(COLORS)], "linestyle": LINESTYLES[(i // len(COLORS)) % len(LINESTYLES)]}
        if i >= len(COLORS) * len(LINESTYLES):  # past 40 series: dash lengths keep them apart
            st["linestyle"] = (0, (2 + i // len(COLORS), 2))
        if markers:
            st["marker"] = MARKERS[i % len(MARKERS)]
        if self.highlight and label is not None:
            if label in self.highlight:
                st.update(linewidth=2.6, alpha=1.0, zorder=3)
            else:
                st.update(linewidth=1.0, alpha=0.35, zorder=2)
        return st


def legend_outside(fig, ax, n_entries, title=None):
    """The legend right of the axes; the figure grows so that it never overlaps or is cut."""
    if n_entries == 0:
        return
    ncol = 1 if n_entries <= 22 else 2
    rows = -(-n_entries // ncol)
    labels = ax.get_legend_handles_labels()[1]
    chars = max((len(l) for l in labels), default=8)
    need_h = 0.9 + 0.19 * rows  # inches: 8 pt rows plus the frame
    legend_w = ncol * (0.6 + 0.062 * chars)  # inches: swatch and text of 8 pt per column
    w, h = fig.get_size_inches()
    # Wider by the legend, so that the axes keep their width when tight_layout makes room.
    fig.set_size_inches(w + legend_w, max(h, need_h))
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=8, ncol=ncol, title=title, title_fontsize=8)


def short_value(v, limit=28):
    """A sweep value for a tick label: a YAML map written flat ("{name: sjf, placement: packed}"
    -> "sjf placement=packed"), cut at `limit` characters."""
    t = str(v).strip()
    if t.startswith("{") and t.endswith("}"):
        parts = split_labels(t[1:-1])
        out = []
        for p in parts:
            k, _, val = p.partition(":")
            k, val = k.strip(), val.strip()
            out.append(val if k == "name" else (f"{k}={val}" if val else k))
        t = " ".join(out)
    return t if len(t) <= limit else t[: limit - 1] + "\u2026"


METRIC_NAMES = {"mean_jct_s": "mean JCT", "median_jct_s": "median JCT", "p95_jct_s": "p95 JCT", "p99_jct_s": "p99 JCT",
                "mean_queue_delay_s": "mean wait", "gpu_utilization": "GPU utilization", "goodput": "goodput", "makespan_s": "makespan"}


def metric_axis(metric):
    """(scale, label) of a summary metric: times in hours, like the tables."""
    name = METRIC_NAMES.get(metric, metric[:-2].replace("_", " ") if metric.endswith("_s") else metric.replace("_", " "))
    if metric.endswith("_s"):
        return 1 / 3600, name + " (h)"
    return 1, name


def identical_to(runs, results):
    """label -> the first earlier run with the same results (summary, energy and every
    completed job's JCT), as compare's table marks them; such lines lie under the other's."""
    seen, same = {}, {}
    for label, d in runs:
        r = results[label]
        jobs = os.path.join(d, "jobs.csv")
        jct = tuple(sorted(pd.read_csv(jobs)["jct_s"].dropna())) if os.path.isfile(jobs) else None
        key = (json.dumps(r.get("summary"), sort_keys=True), json.dumps(r.get("energy"), sort_keys=True), jct)
        if key in seen:
            same[label] = seen[key]
        else:
            seen[key] = label
    return same


def fmt(v):
    """Six significant digits: what report.md shows (tests compare against results.json)."""
    return "-" if v is None else f"{v:.6g}"


def num_devices(config):
    return sum(n["count"] * n["devices_per_node"] for n in config["cluster"]["nodes"])


def find_runs(root):
    """(label, folder) of every run under root, in a stable order."""
    if os.path.isfile(os.path.join(root, "results.json")):
        return [(os.path.basename(os.path.normpath(root)), root)]
    if os.path.isfile(os.path.join(root, "comparison.csv")):  # compare: its own row order
        labels = []
        for label in sorted(os.listdir(root)):
            if os.path.isfile(os.path.join(root, label, "results.json")):
                labels.append(label)
        order = [str(p) for p in pd.read_csv(os.path.join(root, "comparison.csv"))["policy"]]
        labels.sort(key=lambda l: order.index(l) if l in order else len(order))
        return [(l, os.path.join(root, l)) for l in labels]
    runs_dir = os.path.join(root, "runs")
    if os.path.isdir(runs_dir):  # sweep: in sweep.csv's order
        ids = list(pd.read_csv(os.path.join(root, "sweep.csv"))["run_id"]) if os.path.isfile(os.path.join(root, "sweep.csv")) else sorted(os.listdir(runs_dir))
        return [(i, os.path.join(runs_dir, i)) for i in ids if os.path.isfile(os.path.join(runs_dir, i, "results.json"))]
    return []


def split_labels(text):
    """"fifo,compose(order=las,placement=packed)" -> two labels: commas inside () or {} stay."""
    out, depth, cur = [], 0, ""
    for ch in text or "":
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return [l for l in out if l]


def policies_of(root, runs):
    """Each run's policy: its label, or for a sweep its row's policy column in sweep.csv."""
    policy_of = {}
    sweep_csv = os.path.join(root, "sweep.csv")
    if os.path.isfile(sweep_csv):
        t = pd.read_csv(sweep_csv, dtype=str, keep_default_na=False)
        policy_of = dict(zip(t["run_id"], t["policy"]))
    return [policy_of.get(l, l) for l, _ in runs]


def select_runs(root, runs, keep):
    """The runs whose policy is in `keep`, in keep's order."""
    chosen = [(r, p) for r, p in zip(runs, policies_of(root, runs)) if p in keep]
    return [r for r, p in sorted(chosen, key=lambda rp: keep.index(rp[1]))]


def markdown_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def save(fig, out_dir, name, images):
    path = os.path.join(out_dir, name)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")  # the canvas takes in a legend outside the axes
    plt.close(fig)
    images.append(name)


def jct_cdf(runs, out_dir, images, styles, same=None):
    same = same or {}
    fig, ax = plt.subplots(figsize=(7, 4.5))
    drawn = 0
    for i, (label, d) in enumerate(runs):
        jobs = pd.read_csv(os.path.join(d, "jobs.csv"))
        jct = jobs.loc[jobs["status"] == "completed", "jct_s"].sort_values().to_numpy() / 3600
        if len(jct) == 0:
            continue
        y = [(k + 1) / len(jct) for k in range(len(jct))]
        ax.step(jct, y, where="post", label=shown(label, same), **styles(i, label))
        drawn += 1
    if not drawn:
        plt.close(fig)
        return
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))  # 0.01, 1, 100: not 10^-2
    ax.set_xlabel("job completion time (h, log scale)")
    ax.set_ylabel("fraction of jobs")
    ax.set_title("JCT CDF")
    ax.grid(True, alpha=0.3)
    legend_outside(fig, ax, drawn)
    save(fig, out_dir, "jct_cdf.png", images)


def shown(label, same):
    """A legend label: "edf (= fifo)" when the run's results equal an earlier run's."""
    return f"{label} (= {same[label]})" if same and label in same else label


def timeline(runs, results, out_dir, images, styles, same=None):
    have = [(i, l, d) for i, (l, d) in enumerate(runs) if os.path.isfile(os.path.join(d, "timeline.csv"))]
    if not have:
        return
    fig, (ax_q, ax_u) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for i, label, d in have:
        t = pd.read_csv(os.path.join(d, "timeline.csv"))
        n = num_devices(results[label]["config"])
        hours = t["time_s"] / 3600
        ax_q.step(hours, t["queue_length"], where="post", label=shown(label, same), **styles(i, label))
        ax_u.step(hours, t["busy_devices"] / n, where="post", label=shown(label, same), **styles(i, label))
    ax_q.set_ylabel("jobs waiting")
    ax_u.set_ylabel("GPU utilization (busy / all)")
    ax_u.set_xlabel("simulated time (h)")
    ax_q.set_title("Queue length and utilization over time")
    for ax in (ax_q, ax_u):
        ax.grid(True, alpha=0.3)
    legend_outside(fig, ax_q, len(have))
    save(fig, out_dir, "timeline.png", images)


def safe(label):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in label)


def gantt(runs, results, out_dir, images, notes):
    for label, d in runs:
        path = os.path.join(d, "allocations.csv")
        if not os.path.isfile(path):
            continue
        a = pd.read_csv(path, dtype={"job_id": str, "devices": str})
        if len(a) > MAX_GANTT_SEGMENTS:
            notes.append(f"gantt_{safe(label)}.png shows the first {MAX_GANTT_SEGMENTS} of {len(a)} placements")
            a = a.iloc[:MAX_GANTT_SEGMENTS]
        n = num_devices(results[label]["config"])
        fig, ax = plt.subplots(figsize=(9, max(3, min(12, 0.12 * n + 1))))
        cmap = plt.get_cmap("tab20")
        for k, row in enumerate(a.itertuples(index=False)):
            color = cmap(hash_color(row.job_id) % 20)
            width = (row.end_s - row.start_s) / 3600
            for dev in str(row.devices).split():
                ax.broken_barh([(row.start_s / 3600, width)], (int(dev) - 0.4, 0.8), facecolors=color, edgecolor="none")
        ax.set_ylim(-0.5, n - 0.5)
        ax.invert_yaxis()
        ax.set_xlabel("simulated time (h)")
        ax.set_ylabel("device")
        ax.set_title(f"Which job ran on which devices: {label}")
        save(fig, out_dir, f"gantt_{safe(label)}.png", images)


def hash_color(job_id):
    """A stable colour index per job (Python's hash() of str is salted per process)."""
    h = 0
    for ch in str(job_id):
        h = (h * 131 + ord(ch)) % 1000003
    return h


def energy(runs, results, out_dir, images, styles, same=None):
    have = [(i, l, d) for i, (l, d) in enumerate(runs) if results[l].get("energy")]
    if not have:
        return
    fig, (ax_e, ax_c) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    any_co2 = False
    for i, label, d in have:
        jobs = pd.read_csv(os.path.join(d, "jobs.csv")).sort_values("end_s", kind="stable")
        hours = jobs["end_s"] / 3600
        ax_e.step(hours, jobs["energy_kwh"].fillna(0).cumsum(), where="post", label=shown(label, same), **styles(i, label))
        if jobs["co2_kg"].notna().any():
            ax_c.step(hours, jobs["co2_kg"].fillna(0).cumsum(), where="post", label=shown(label, same), **styles(i, label))
            any_co2 = True
    ax_e.set_ylabel("job energy (kWh, cumulative)")
    ax_c.set_ylabel("CO2 (kg, cumulative)" if any_co2 else "no carbon signal")
    ax_c.set_xlabel("simulated time at job end (h)")
    ax_e.set_title("Energy and carbon of finished jobs over time")
    for ax in (ax_e, ax_c):
        ax.grid(True, alpha=0.3)
    legend_outside(fig, ax_e, len(have))
    save(fig, out_dir, "energy.png", images)


def learning_curves(root, out_dir, images, styles):
    found = []
    for dirpath, _, files in os.walk(root):
        # Skip the report's own output folder, unless the report is written into DIR itself.
        inside_out = os.path.abspath(out_dir) != os.path.abspath(root) and os.path.abspath(dirpath).startswith(os.path.abspath(out_dir))
        if "learning_curve.csv" in files and not inside_out:
            found.append(os.path.join(dirpath, "learning_curve.csv"))
    if not found:
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    n = 0
    for path in sorted(found):
        c = pd.read_csv(path)
        name = os.path.relpath(os.path.dirname(path), root)
        if name == ".":
            name = os.path.basename(os.path.abspath(root))
        if {"step", "mean_jct_s", "eval_mean_jct_s"} <= set(c.columns):
            # schedsim train: mean JCT of the training episodes and of the held-out evaluations.
            ax.plot(c["step"], c["mean_jct_s"] / 3600, label=f"{name}: training episodes", **styles(n), alpha=0.7)
            ev = c.dropna(subset=["eval_mean_jct_s"])
            ax.plot(ev["step"], ev["eval_mean_jct_s"] / 3600, label=f"{name}: held-out (greedy)", **styles(n + 1, markers=True))
            n += 2
            ax.set_xlabel("agent steps")
            ax.set_ylabel("mean JCT (h)")
            continue
        numeric = [k for k in c.columns if pd.api.types.is_numeric_dtype(c[k])]
        if len(numeric) < 2:
            continue
        x = numeric[0]
        for y in numeric[1:]:
            ax.plot(c[x], c[y], label=f"{name}: {y}", **styles(n))
            n += 1
        ax.set_xlabel(x)
    ax.set_title("Learning curves")
    ax.grid(True, alpha=0.3)
    legend_outside(fig, ax, n)
    save(fig, out_dir, "learning_curve.png", images)


def sweep_figures(root, out_dir, images, styles, keep):
    s = pd.read_csv(os.path.join(root, "summary.csv"), dtype=str, keep_default_na=False)
    cols = list(s.columns)
    params = cols[: cols.index("policy")]
    if not params:
        return
    if keep:
        s = s[s["policy"].isin(keep)]
        s = s.iloc[sorted(range(len(s)), key=lambda k: keep.index(s["policy"].iloc[k]))]
    # The x axis: an offered-load parameter when there is one (JCT against load), else the first.
    x = next((p for p in params if "load" in p.split(".")[-1]), params[0])
    others = [p for p in params if p != x]
    numeric_x = pd.to_numeric(s[x], errors="coerce").notna().all()
    categories = list(dict.fromkeys(s[x]))  # first-seen order
    for metric in ("mean_jct_s", "gpu_utilization", "goodput"):
        if f"{metric}_mean" not in cols:
            continue
        scale, what = metric_axis(metric)
        fig, ax = plt.subplots(figsize=(7, 4.5))
        n = 0
        for (policy, *rest), g in s.groupby(["policy"] + others, sort=False):
            label = policy if not rest else f"{policy} " + ", ".join(f"{p.split('.')[-1]}={short_value(v)}" for p, v in zip(others, rest))
            ys = pd.to_numeric(g[f"{metric}_mean"], errors="coerce") * scale
            if ys.isna().all():
                continue
            err = pd.to_numeric(g[f"{metric}_ci95"], errors="coerce").fillna(0) * scale
            xs = pd.to_numeric(g[x], errors="coerce") if numeric_x else [categories.index(v) for v in g[x]]
            ax.errorbar(xs, ys, yerr=err, capsize=3, label=label, **styles(n, policy, markers=True))
            n += 1
        if n == 0:
            plt.close(fig)
            continue
        if not numeric_x:  # map-valued or text parameters: short labels, slanted
            ax.set_xticks(range(len(categories)), [short_value(v) for v in categories], rotation=25, ha="right")
        ax.set_xlabel(x)
        ax.set_ylabel(f"{what}\n(mean, 95% CI over seeds)")
        ax.set_title(f"{what} against {x.split('.')[-1]}")
        ax.grid(True, alpha=0.3)
        legend_outside(fig, ax, n)
        save(fig, out_dir, f"sweep_{metric}.png", images)


# Two-sided 95% Student t quantiles for 1..30 degrees of freedom (then the normal 1.96).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def mean_ci(values):
    v = [x for x in values if x is not None and not (isinstance(x, float) and math.isnan(x))]
    if not v:
        return None, 0.0
    m = sum(v) / len(v)
    if len(v) < 2:
        return m, 0.0
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1))
    t = T975[len(v) - 2] if len(v) - 1 <= len(T975) else 1.96
    return m, t * sd / math.sqrt(len(v))


def tradeoff(root, runs, results, out_dir, images, styles, keep, same=None):
    """CO2 and cost against mean JCT: one point per policy (compare, run) or per sweep
    group (parameters x policy, mean and 95% CI over seeds)."""
    points = {}  # label -> {"jct": [...], "co2": [...], "cost": [...]}, in first-seen order
    order = []
    sweep_csv = os.path.join(root, "sweep.csv")
    group_of = {}
    if os.path.isfile(sweep_csv):
        t = pd.read_csv(sweep_csv, dtype=str, keep_default_na=False)
        params = list(t.columns[1 : list(t.columns).index("policy")])
        for _, r in t.iterrows():
            rest = ", ".join(f"{p.split('.')[-1]}={short_value(r[p], 16)}" for p in params)
            group_of[r["run_id"]] = (r["policy"], f"{r['policy']} {rest}".strip())
    for label, _ in runs:
        e = results[label].get("energy")
        jct = results[label]["summary"].get("mean_jct_s")
        if not e or jct is None:
            continue
        policy, group = group_of.get(label, (label, shown(label, same)))
        if group not in points:
            points[group] = {"policy": policy, "jct": [], "co2": [], "cost": [], "energy": []}
            order.append(group)
        points[group]["jct"].append(jct / 3600)
        points[group]["co2"].append(e.get("co2_kg"))
        points[group]["cost"].append(e.get("cost_usd"))
        points[group]["energy"].append(e.get("energy_kwh"))
    if not points:
        return
    have_co2 = any(c is not None for p in points.values() for c in p["co2"])
    have_cost = any(c is not None for p in points.values() for c in p["cost"])
    panels = [(k, t) for k, t, ok in (("co2", "CO2 (kg)", have_co2), ("cost", "electricity cost (USD)", have_cost)) if ok]
    if not panels:  # no carbon or price signal: the energy itself
        panels = [("energy", "facility energy (kWh)")]
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.5), squeeze=False)
    for ax, (key, title) in zip(axes[0], panels):
        for i, group in enumerate(order):
            p = points[group]
            x, xe = mean_ci(p["jct"])
            y, ye = mean_ci(p[key])
            if x is None or y is None:
                continue
            st = styles(i, p["policy"], markers=True)
            st.pop("linestyle", None)
            if xe or ye:  # over seeds: 95% CIs both ways
                ax.errorbar([x], [y], xerr=[xe], yerr=[ye], capsize=3, linestyle="none", markersize=7, label=group, **st)
            else:
                ax.plot([x], [y], linestyle="none", markersize=7, label=group, **st)
        ax.set_xlabel("mean JCT (h)")
        ax.set_ylabel(title)
        ax.set_title(f"{title.split(' (')[0]} against mean JCT")
        ax.grid(True, alpha=0.3)
    legend_outside(fig, axes[0][-1], len(order))
    save(fig, out_dir, "tradeoff_jct_emissions.png", images)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="output folder of schedsim run, compare or sweep")
    ap.add_argument("--out", help="output folder (default: DIR/report)")
    ap.add_argument("--policies", help="comma-separated: only these runs (compare labels, sweep policies), in this order")
    ap.add_argument("--highlight", help="comma-separated: draw these bold, the others thin and faded")
    args = ap.parse_args(argv)
    keep = split_labels(args.policies)
    styles = Styles(split_labels(args.highlight))
    root = args.dir
    out_dir = args.out or os.path.join(root, "report")
    runs = find_runs(root)
    if not runs and os.path.isfile(os.path.join(root, "learning_curve.csv")):
        # A `schedsim train` folder: its learning curve only.
        out_dir = args.out or root
        os.makedirs(out_dir, exist_ok=True)
        images = []
        learning_curves(root, out_dir, images, styles)
        print(f"report: {', '.join(images)} in {out_dir}")
        return 0
    if not runs:
        sys.stderr.write(f"schedsim report: error: {root}: no results.json found (expected a run, compare or sweep folder)\n")
        return 1
    if keep:
        chosen = select_runs(root, runs, keep)
        if not chosen:
            there = ", ".join(dict.fromkeys(policies_of(root, runs)))
            sys.stderr.write(f"schedsim report: error: --policies {args.policies}: no run of {root} has these policies (it has: {there})\n")
            return 1
        runs = chosen
    os.makedirs(out_dir, exist_ok=True)
    results = {}
    for label, d in runs:
        with open(os.path.join(d, "results.json")) as f:
            results[label] = json.load(f)

    images, notes = [], []
    is_sweep = os.path.isfile(os.path.join(root, "summary.csv"))
    md = [f"# schedsim report: {os.path.normpath(root)}\n"]
    if is_sweep:
        s = pd.read_csv(os.path.join(root, "summary.csv"), dtype=str, keep_default_na=False)
        md.append("## Sweep summary (mean and 95% CI half-width over seeds)\n")
        md.append(markdown_table(list(s.columns), [list(r) for r in s.itertuples(index=False)]))
        sweep_figures(root, out_dir, images, styles, keep)
    same = {} if is_sweep else identical_to(runs, results)  # a sweep's runs differ by design
    md.append("## Runs\n")
    rows = []
    for label, _ in runs:
        summ = results[label]["summary"]
        rows.append([label] + [fmt(None if summ.get(k) is None else summ[k] * scale) for k, _, scale in TABLE])
        if same:
            rows[-1].append(f"= {same[label]}" if label in same else "")
    md.append(markdown_table(["run"] + [t for _, t, _ in TABLE] + (["identical to"] if same else []), rows))
    if same:
        md.append(f"= NAME: {len(same)} of {len(runs)} runs have results identical to NAME's (summary, energy and the sorted JCTs of all completed jobs).\n")
    energy_rows = [[l, fmt(results[l]["energy"]["energy_kwh"]), fmt(results[l]["energy"]["co2_kg"]), fmt(results[l]["energy"]["cost_usd"])]
                   for l, _ in runs if results[l].get("energy")]
    if energy_rows:
        md.append("## Energy (facility)\n")
        md.append(markdown_table(["run", "energy (kWh)", "CO2 (kg)", "cost (USD)"], energy_rows))

    if not is_sweep or len(runs) <= 12:  # per-run figures; a big sweep gets its summary plots only
        jct_cdf(runs, out_dir, images, styles, same)
        timeline(runs, results, out_dir, images, styles, same)
        gantt(runs, results, out_dir, images, notes)
        energy(runs, results, out_dir, images, styles, same)
    tradeoff(root, runs, results, out_dir, images, styles, keep, same)
    learning_curves(root, out_dir, images, styles)
    if not any(os.path.isfile(os.path.join(d, "timeline.csv")) for _, d in runs):
        notes.append("no timeline.csv: run with --timeline for the queue, utilization and Gantt figures")

    md.append("## Figures\n")
    for name in images:
        md.append(f"![{name}]({name})\n")
    for n in notes:
        md.append(f"- {n}\n")
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write("\n".join(md))
    print(f"report: {len(images)} figures and report.md in {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
