#!/usr/bin/env python3
"""Emissions, cost and mean JCT on four 2023 grids (experiments/configs/geo_four_regions.yaml)
for carbon-agnostic, temporal, spatial and spatio-temporal scheduling of the same training
workload next to autoscaled inference services; plus the inference variants (reactive
autoscaler, no lending). Runs the schedsim CLI once per row, writes OUT/geo_four_regions.csv,
OUT/geo_four_regions.md and OUT/geo_four_regions.svg (bars relative to carbon-agnostic),
and prints the table. Standard library only; needs ../shared/data beside the checkout.

  python3 experiments/geo_four_regions.py [--cli build/schedsim] [--out DIR] [--seed N]
"""
import argparse
import csv
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(ROOT, "experiments", "configs", "geo_four_regions.yaml")
SLACK = "slack_s: 43200, slack_factor: 0"
HOME = "{name: spatial, route: home}"
ROWS = [
    ("carbon-agnostic", "{name: inference, autoscaler: predictive, base: %s}" % HOME),
    ("temporal", "{name: inference, autoscaler: predictive, base: {name: carbon-aware, base: %s, %s}}" % (HOME, SLACK)),
    ("spatial", "{name: inference, autoscaler: predictive, base: {name: spatial}}"),
    ("spatio-temporal", "{name: inference, autoscaler: predictive, base: {name: spatio-temporal, %s}}" % SLACK),
    ("spatial, reactive autoscaler", "{name: inference, autoscaler: reactive, base: {name: spatial}}"),
    ("spatial, no lending", "{name: inference, autoscaler: predictive, lend: false, base: {name: spatial}}"),
]
MAIN = 4  # the first four rows go into the figure


def run(cli, policy, out, seed):
    cmd = [cli, "run", CONFIG, "--set", "policy=" + policy, "--out", out, "--quiet"]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    subprocess.run(cmd, check=True)
    with open(os.path.join(out, "results.json")) as f:
        r = json.load(f)
    e, s = r["energy"], r["summary"]
    inf = r["inference"]
    return {
        "jobs_co2_kg": e["jobs"]["co2_kg"], "facility_co2_kg": e["co2_kg"],
        "jobs_cost_usd": e["jobs"]["cost_usd"], "facility_cost_usd": e["cost_usd"],
        "jobs_energy_kwh": e["jobs"]["energy_kwh"], "mean_jct_h": s["mean_jct_s"] / 3600,
        "mean_wait_h": s["mean_queue_delay_s"] / 3600, "moves": s["moves"],
        "slo_violation_min": sum(i["slo_violation_minutes"] for i in inf),
        "replica_h": sum(i["replica_hours"] for i in inf),
        "borrowed_gpu_h": sum(i["borrowed_gpu_hours"] for i in inf),
        "co2_by_dc": {d["name"]: d["co2_kg"] for d in e["by_datacenter"]},
    }


def svg(rows, path):
    metrics = [("jobs_co2_kg", "jobs' CO2"), ("jobs_cost_usd", "jobs' cost"), ("mean_jct_h", "mean JCT")]
    colors = ["#777777", "#4c72b0", "#55a868", "#c44e52"]
    base = rows[0][1]
    w, h, left, top, bottom = 640, 320, 50, 30, 50
    group = (w - left - 20) / len(metrics)
    bar = group / (len(rows) + 1)
    vmax = max(r[1][m] / base[m] for r in rows for m, _ in metrics) * 1.1
    y = lambda v: top + (h - top - bottom) * (1 - v / vmax)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">' % (w, h)]
    out.append('<text x="%d" y="16">Four regions 2023: relative to carbon-agnostic (= 1)</text>' % left)
    out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="black" stroke-dasharray="3,3"/>' % (left, y(1), w - 20, y(1)))
    for k, (m, label) in enumerate(metrics):
        x0 = left + k * group + bar / 2
        for i, (name, r) in enumerate(rows):
            v = r[m] / base[m]
            out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>' % (x0 + i * bar, y(v), bar * 0.9, y(0) - y(v), colors[i]))
            out.append('<text x="%.1f" y="%.1f" font-size="9">%.2f</text>' % (x0 + i * bar, y(v) - 3, v))
        out.append('<text x="%.1f" y="%d">%s</text>' % (x0 + bar, h - bottom + 15, label))
    for i, (name, _) in enumerate(rows):
        out.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d">%s</text>' % (left + i * 140, h - 18, colors[i], left + i * 140 + 14, h - 9, name))
    out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="black"/></svg>' % (left, y(0), w - 20, y(0)))
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "schedsim"))
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "geo_four_regions"))
    ap.add_argument("--seed", type=int, default=None)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rows = []
    for i, (name, policy) in enumerate(ROWS):
        rows.append((name, run(a.cli, policy, os.path.join(a.out, "run%d" % i), a.seed)))
    cols = ["jobs_co2_kg", "facility_co2_kg", "jobs_cost_usd", "facility_cost_usd", "jobs_energy_kwh", "mean_jct_h", "mean_wait_h", "moves",
            "slo_violation_min", "replica_h", "borrowed_gpu_h"]
    with open(os.path.join(a.out, "geo_four_regions.csv"), "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["policy"] + cols + ["co2_kg_" + k for k in rows[0][1]["co2_by_dc"]])
        for name, r in rows:
            wr.writerow([name] + ["%.6g" % r[c] for c in cols] + ["%.6g" % v for v in r["co2_by_dc"].values()])
    lines = ["| policy | jobs CO2 (kg) | facility CO2 (kg) | jobs cost (USD) | facility cost (USD) | mean JCT (h) | SLO violation (min) | replica-hours | borrowed GPU-hours |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, r in rows:
        lines.append("| %s | %.1f | %.1f | %.1f | %.1f | %.2f | %.0f | %.0f | %.0f |" % (
            name, r["jobs_co2_kg"], r["facility_co2_kg"], r["jobs_cost_usd"], r["facility_cost_usd"], r["mean_jct_h"], r["slo_violation_min"],
            r["replica_h"], r["borrowed_gpu_h"]))
    with open(os.path.join(a.out, "geo_four_regions.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    svg(rows[:MAIN], os.path.join(a.out, "geo_four_regions.svg"))
    print("\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
