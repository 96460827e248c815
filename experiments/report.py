#!/usr/bin/env python3
"""Figures and a Markdown summary for a schedsim results folder.

    python3 experiments/report.py DIR [--out OUT]      (or: schedsim report DIR)

DIR is the output of `schedsim run`, `schedsim compare` or `schedsim sweep`. OUT
(default DIR/report) receives PNG figures and report.md:
  jct_cdf.png          JCT CDF per run (per policy for compare)
  timeline.png         queue length and GPU utilization over time (runs made with --timeline)
  gantt_<label>.png    which job ran on which devices (runs made with --timeline)
  energy.png           cumulative energy and CO2 over time (runs with an energy: map)
  learning_curve.png   every learning_curve.csv found under DIR (for a `schedsim train`
                       folder, the only figure, written into DIR itself)
  sweep_<metric>.png   sweep folders: metric mean and 95% CI against the first parameter
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


def markdown_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def save(fig, out_dir, name, images):
    path = os.path.join(out_dir, name)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    images.append(name)


def jct_cdf(runs, out_dir, images):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    drawn = False
    for label, d in runs:
        jobs = pd.read_csv(os.path.join(d, "jobs.csv"))
        jct = jobs.loc[jobs["status"] == "completed", "jct_s"].sort_values().to_numpy()
        if len(jct) == 0:
            continue
        y = [(i + 1) / len(jct) for i in range(len(jct))]
        ax.step(jct, y, where="post", label=label)
        drawn = True
    if not drawn:
        plt.close(fig)
        return
    ax.set_xscale("log")
    ax.set_xlabel("job completion time (s, log scale)")
    ax.set_ylabel("fraction of jobs")
    ax.set_title("JCT CDF")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, out_dir, "jct_cdf.png", images)


def timeline(runs, results, out_dir, images):
    have = [(l, d) for l, d in runs if os.path.isfile(os.path.join(d, "timeline.csv"))]
    if not have:
        return
    fig, (ax_q, ax_u) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for label, d in have:
        t = pd.read_csv(os.path.join(d, "timeline.csv"))
        n = num_devices(results[label]["config"])
        hours = t["time_s"] / 3600
        ax_q.step(hours, t["queue_length"], where="post", label=label)
        ax_u.step(hours, t["busy_devices"] / n, where="post", label=label)
    ax_q.set_ylabel("jobs waiting")
    ax_u.set_ylabel("GPU utilization (busy / all)")
    ax_u.set_xlabel("simulated time (h)")
    ax_q.set_title("Queue length and utilization over time")
    for ax in (ax_q, ax_u):
        ax.grid(True, alpha=0.3)
    ax_q.legend(fontsize=8)
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


def energy(runs, results, out_dir, images):
    have = [(l, d) for l, d in runs if results[l].get("energy")]
    if not have:
        return
    fig, (ax_e, ax_c) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    any_co2 = False
    for label, d in have:
        jobs = pd.read_csv(os.path.join(d, "jobs.csv")).sort_values("end_s", kind="stable")
        hours = jobs["end_s"] / 3600
        ax_e.step(hours, jobs["energy_kwh"].fillna(0).cumsum(), where="post", label=label)
        if jobs["co2_kg"].notna().any():
            ax_c.step(hours, jobs["co2_kg"].fillna(0).cumsum(), where="post", label=label)
            any_co2 = True
    ax_e.set_ylabel("job energy (kWh, cumulative)")
    ax_c.set_ylabel("CO2 (kg, cumulative)" if any_co2 else "no carbon signal")
    ax_c.set_xlabel("simulated time at job end (h)")
    ax_e.set_title("Energy and carbon of finished jobs over time")
    for ax in (ax_e, ax_c):
        ax.grid(True, alpha=0.3)
    ax_e.legend(fontsize=8)
    save(fig, out_dir, "energy.png", images)


def learning_curves(root, out_dir, images):
    found = []
    for dirpath, _, files in os.walk(root):
        # Skip the report's own output folder, unless the report is written into DIR itself.
        inside_out = os.path.abspath(out_dir) != os.path.abspath(root) and os.path.abspath(dirpath).startswith(os.path.abspath(out_dir))
        if "learning_curve.csv" in files and not inside_out:
            found.append(os.path.join(dirpath, "learning_curve.csv"))
    if not found:
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for path in sorted(found):
        c = pd.read_csv(path)
        name = os.path.relpath(os.path.dirname(path), root)
        if name == ".":
            name = os.path.basename(os.path.abspath(root))
        if {"step", "mean_jct_s", "eval_mean_jct_s"} <= set(c.columns):
            # schedsim train: mean JCT of the training episodes and of the held-out evaluations.
            ax.plot(c["step"], c["mean_jct_s"] / 3600, alpha=0.6, label=f"{name}: training episodes")
            ev = c.dropna(subset=["eval_mean_jct_s"])
            ax.plot(ev["step"], ev["eval_mean_jct_s"] / 3600, marker="o", label=f"{name}: held-out (greedy)")
            ax.set_xlabel("agent steps")
            ax.set_ylabel("mean JCT (h)")
            continue
        numeric = [k for k in c.columns if pd.api.types.is_numeric_dtype(c[k])]
        if len(numeric) < 2:
            continue
        x = numeric[0]
        for y in numeric[1:]:
            ax.plot(c[x], c[y], label=f"{name}: {y}")
        ax.set_xlabel(x)
    ax.set_title("Learning curves")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, out_dir, "learning_curve.png", images)


def sweep_figures(root, out_dir, images):
    s = pd.read_csv(os.path.join(root, "summary.csv"), dtype=str)
    cols = list(s.columns)
    params = cols[: cols.index("policy")]
    if not params:
        return
    x = params[0]
    for metric in ("mean_jct_s", "gpu_utilization"):
        if f"{metric}_mean" not in cols:
            continue
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for (policy, *rest), g in s.groupby(["policy"] + params[1:], sort=False):
            label = policy if not rest else f"{policy} " + ", ".join(f"{p}={v}" for p, v in zip(params[1:], rest))
            xs = pd.to_numeric(g[x], errors="coerce")
            ys = pd.to_numeric(g[f"{metric}_mean"], errors="coerce")
            err = pd.to_numeric(g[f"{metric}_ci95"], errors="coerce").fillna(0)
            if xs.notna().all():
                ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=label)
            else:
                ax.errorbar(range(len(g)), ys, yerr=err, marker="o", capsize=3, label=label)
                ax.set_xticks(range(len(g)), list(g[x]))
        ax.set_xlabel(x)
        ax.set_ylabel(f"{metric} (mean, 95% CI over seeds)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        save(fig, out_dir, f"sweep_{metric}.png", images)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="output folder of schedsim run, compare or sweep")
    ap.add_argument("--out", help="output folder (default: DIR/report)")
    args = ap.parse_args()
    root = args.dir
    out_dir = args.out or os.path.join(root, "report")
    runs = find_runs(root)
    if not runs and os.path.isfile(os.path.join(root, "learning_curve.csv")):
        # A `schedsim train` folder: its learning curve only.
        out_dir = args.out or root
        os.makedirs(out_dir, exist_ok=True)
        images = []
        learning_curves(root, out_dir, images)
        print(f"report: {', '.join(images)} in {out_dir}")
        return 0
    if not runs:
        sys.stderr.write(f"schedsim report: error: {root}: no results.json found (expected a run, compare or sweep folder)\n")
        return 1
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
        sweep_figures(root, out_dir, images)
    md.append("## Runs\n")
    rows = []
    for label, _ in runs:
        summ = results[label]["summary"]
        rows.append([label] + [fmt(None if summ.get(k) is None else summ[k] * scale) for k, _, scale in TABLE])
    md.append(markdown_table(["run"] + [t for _, t, _ in TABLE], rows))
    energy_rows = [[l, fmt(results[l]["energy"]["energy_kwh"]), fmt(results[l]["energy"]["co2_kg"]), fmt(results[l]["energy"]["cost_usd"])]
                   for l, _ in runs if results[l].get("energy")]
    if energy_rows:
        md.append("## Energy (facility)\n")
        md.append(markdown_table(["run", "energy (kWh)", "CO2 (kg)", "cost (USD)"], energy_rows))

    if not is_sweep or len(runs) <= 12:  # per-run figures; a big sweep gets its summary plots only
        jct_cdf(runs, out_dir, images)
        timeline(runs, results, out_dir, images)
        gantt(runs, results, out_dir, images, notes)
        energy(runs, results, out_dir, images)
    learning_curves(root, out_dir, images)
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
