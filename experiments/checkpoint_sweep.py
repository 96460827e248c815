#!/usr/bin/env python3
"""Goodput and mean JCT vs checkpoint interval (experiments/configs/llm_failures.yaml).

Runs the scenario once per fixed interval with the schedsim CLI (--set
failures.checkpoint.interval_s=...), once with the per-job Young-Daly interval, writes
OUT/sweep.csv and OUT/checkpoint_sweep.svg, and prints the table. Standard library only.

  python3 experiments/checkpoint_sweep.py [--cli build/schedsim] [--out DIR] [--quick] [--check]

--quick: fewer jobs and intervals (seconds). --check: exit non-zero unless goodput < 1 at
every interval and the goodput-optimal interval (vertex of a parabola fitted to goodput
against ln(interval)) lies within 25% of the Young-Daly interval of the mix, and the
per-job Young-Daly policy is within 0.5 percentage points of the best fixed interval.
"""
import argparse
import json
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(ROOT, "experiments", "configs", "llm_failures.yaml")

# The mix of the scenario (kept in step with llm_failures.yaml): GPU counts and shares,
# failure rates, checkpoint cost. Used for the Young-Daly reference line.
GPUS = {256: 0.5, 512: 0.5}
GPUS_PER_NODE = 8
MTBF_DEVICE_H = 50000.0
SPIKE_PER_GPU_H = 5.0e-6
CHECKPOINT_COST_S = 300.0


def failure_rate_per_h(gpus):
    """Spikes plus node failures of a job packed on gpus / 8 whole nodes."""
    nodes = gpus // GPUS_PER_NODE
    return SPIKE_PER_GPU_H * gpus + nodes * GPUS_PER_NODE / MTBF_DEVICE_H


def young_daly_s(rate_per_h):
    return math.sqrt(2.0 * CHECKPOINT_COST_S * 3600.0 / rate_per_h)


def mix_young_daly_s():
    # One interval for every job: minimise sum_j w_j (delta/tau + tau/(2 M_j)) with w_j the
    # job's GPU-hours (same duration distribution for all sizes: w ~ share * gpus), which
    # gives Young-Daly with the GPU-hour-weighted failure rate.
    w = {g: share * g for g, share in GPUS.items()}
    rate = sum(w[g] * failure_rate_per_h(g) for g in w) / sum(w.values())
    return young_daly_s(rate)


def run(cli, out_dir, sets):
    cmd = [cli, "run", CONFIG, "--quiet", "--out", out_dir] + [a for s in sets for a in ("--set", s)]
    subprocess.run(cmd, check=True)
    with open(os.path.join(out_dir, "results.json")) as f:
        return json.load(f)["summary"]


def fit_vertex(xs, ys):
    """Vertex of the least-squares parabola y = a x^2 + b x + c; None unless a peak (a < 0)."""
    n = len(xs)
    s = [sum(x ** k for x in xs) for k in range(5)]
    t = [sum(y * x ** k for x, y in zip(xs, ys)) for k in range(3)]
    m = [[s[4], s[3], s[2]], [s[3], s[2], s[1]], [s[2], s[1], s[0]]]
    r = [t[2], t[1], t[0]]

    def det(q):
        return (q[0][0] * (q[1][1] * q[2][2] - q[1][2] * q[2][1]) - q[0][1] * (q[1][0] * q[2][2] - q[1][2] * q[2][0])
                + q[0][2] * (q[1][0] * q[2][1] - q[1][1] * q[2][0]))

    d = det(m)
    coef = []
    for col in range(3):
        q = [row[:] for row in m]
        for i in range(3):
            q[i][col] = r[i]
        coef.append(det(q) / d)
    a, b = coef[0], coef[1]
    if n < 3 or a >= 0:
        return None
    return -b / (2 * a)


def svg(rows, yd_s, path, title):
    """Two panels side by side: goodput and mean JCT (days) against the interval (h, log x)."""
    w, h, m = 420, 300, 55
    xs = [r["interval_s"] / 3600 for r in rows]
    lo, hi = math.log(min(xs) / 1.2), math.log(max(xs) * 1.2)

    def px(x, left):
        return left + m + (math.log(x) - lo) / (hi - lo) * (w - 1.5 * m)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * w}" height="{h + 30}" font-family="sans-serif" font-size="11">',
             f'<text x="{w}" y="16" text-anchor="middle" font-size="13">{title}</text>']
    panels = [("goodput", [r["goodput"] for r in rows], "goodput (useful / allocated GPU-h)", "{:.3f}"),
              ("jct", [r["mean_jct_s"] / 86400 for r in rows], "mean JCT (days)", "{:.2f}")]
    for k, (_, ys, label, fmt) in enumerate(panels):
        left = k * w
        ymin, ymax = min(ys), max(ys)
        pad = (ymax - ymin) * 0.1 or 0.01
        ymin, ymax = ymin - pad, ymax + pad

        def py(y):
            return 30 + (h - m) * (1 - (y - ymin) / (ymax - ymin))

        x0, x1, y0, y1 = left + m, left + w - m / 2, 30, 30 + h - m
        parts.append(f'<rect x="{x0}" y="{y0}" width="{x1 - x0}" height="{y1 - y0}" fill="none" stroke="#444"/>')
        for i in range(5):
            y = ymin + (ymax - ymin) * i / 4
            parts.append(f'<text x="{x0 - 4}" y="{py(y) + 4:.1f}" text-anchor="end">{fmt.format(y)}</text>')
        for x in xs:
            parts.append(f'<text x="{px(x, left):.1f}" y="{y1 + 14}" text-anchor="middle">{x:g}</text>')
        parts.append(f'<text x="{(x0 + x1) / 2}" y="{y1 + 30}" text-anchor="middle">checkpoint interval (hours, log scale)</text>')
        parts.append(f'<text x="{left + 12}" y="{(y0 + y1) / 2}" transform="rotate(-90 {left + 12} {(y0 + y1) / 2})" text-anchor="middle">{label}</text>')
        pts = " ".join(f"{px(x, left):.1f},{py(y):.1f}" for x, y in zip(xs, ys))
        parts.append(f'<polyline points="{pts}" fill="none" stroke="#1f77b4" stroke-width="2"/>')
        for x, y in zip(xs, ys):
            parts.append(f'<circle cx="{px(x, left):.1f}" cy="{py(y):.1f}" r="3" fill="#1f77b4"/>')
        xv = px(yd_s / 3600, left)
        parts.append(f'<line x1="{xv:.1f}" y1="{y0}" x2="{xv:.1f}" y2="{y1}" stroke="#d62728" stroke-dasharray="4,3"/>')
        parts.append(f'<text x="{xv + 3:.1f}" y="{y0 + 12}" fill="#d62728">Young–Daly {yd_s / 3600:.1f} h</text>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "schedsim"))
    ap.add_argument("--out", default=os.path.join("results", "checkpoint_sweep"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()

    hours = [2, 3, 4, 6, 8, 12] if args.quick else [0.5, 1, 1.5, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24]
    sets = ["workload.synthetic.num_jobs=80"] if args.quick else []
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for hr in hours:
        s = run(args.cli, os.path.join(args.out, f"interval_{hr:g}h"), sets + ["failures.checkpoint.interval=fixed", f"failures.checkpoint.interval_s={hr * 3600:g}"])
        rows.append(dict(interval_s=hr * 3600, **s))
    yd_policy = run(args.cli, os.path.join(args.out, "young_daly"), sets)
    yd = mix_young_daly_s()

    with open(os.path.join(args.out, "sweep.csv"), "w") as f:
        f.write("interval_s,goodput,mean_jct_s,restarts_loss_spike,restarts_device_failure,checkpoint_gpu_hours,lost_gpu_hours,restart_gpu_hours\n")
        for r in rows + [dict(interval_s="young_daly", **yd_policy)]:
            f.write(f'{r["interval_s"]},{r["goodput"]!r},{r["mean_jct_s"]!r},{r["restarts_loss_spike"]},{r["restarts_device_failure"]},'
                    f'{r["checkpoint_gpu_hours"]!r},{r["lost_gpu_hours"]!r},{r["restart_gpu_hours"]!r}\n')
    svg(rows, yd, os.path.join(args.out, "checkpoint_sweep.svg"),
        "LLM jobs (256/512 GPUs) on 1,024 H100: goodput and mean JCT vs checkpoint interval")

    print(f"{'interval':>10} {'goodput':>9} {'mean JCT (d)':>13} {'spikes':>7} {'failures':>9} {'ckpt GPU-h':>11} {'lost GPU-h':>11}")
    for r in rows + [dict(interval_s=None, **yd_policy)]:
        name = "per-job YD" if r["interval_s"] is None else f'{r["interval_s"] / 3600:g} h'
        print(f'{name:>10} {r["goodput"]:9.4f} {r["mean_jct_s"] / 86400:13.3f} {r["restarts_loss_spike"]:7d} {r["restarts_device_failure"]:9d}'
              f' {r["checkpoint_gpu_hours"]:11.0f} {r["lost_gpu_hours"]:11.0f}')
    vertex = fit_vertex([math.log(r["interval_s"]) for r in rows], [r["goodput"] for r in rows])
    best = max(rows, key=lambda r: r["goodput"])
    opt_s = math.exp(vertex) if vertex is not None else float("nan")
    print(f"Young-Daly for the mix: {yd / 3600:.2f} h (256 GPUs: {young_daly_s(failure_rate_per_h(256)) / 3600:.2f} h, "
          f"512 GPUs: {young_daly_s(failure_rate_per_h(512)) / 3600:.2f} h)")
    print(f"simulated optimum: {opt_s / 3600:.2f} h (fitted), best grid point {best['interval_s'] / 3600:g} h "
          f"with goodput {best['goodput']:.4f}; per-job Young-Daly goodput {yd_policy['goodput']:.4f}")
    print(f"figure: {os.path.join(args.out, 'checkpoint_sweep.svg')}")

    if args.check:
        problems = []
        if not all(0 < r["goodput"] < 1 for r in rows + [yd_policy]):
            problems.append("goodput must lie strictly between 0 and 1")
        if not all(r["restarts_device_failure"] > 0 and r["restarts_loss_spike"] > 0 for r in rows):
            problems.append("every run must see device failures and loss spikes")
        if vertex is None or abs(opt_s - yd) / yd > 0.25:
            problems.append(f"simulated optimum {opt_s:.0f} s is not within 25% of Young-Daly {yd:.0f} s")
        if yd_policy["goodput"] < best["goodput"] - 0.005:
            problems.append("per-job Young-Daly is more than 0.5 points of goodput below the best fixed interval")
        if problems:
            print("CHECK FAILED: " + "; ".join(problems), file=sys.stderr)
            return 1
        print("check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
