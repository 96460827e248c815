#!/usr/bin/env python3
"""The advisor's "show it" experiment (docs/market.md, "Advisor"): a GPT-2-1.5B run as
large as two weeks on 512 A100-80GB, planned across the four 2023 regions of
experiments/configs/advise_four_regions_scenario.yaml with on-demand and spot offers.
Runs `schedsim advise`, then writes OUT/plans.csv (every feasible plan), OUT/pareto.md
(the Pareto front as a Markdown table, by finish time), OUT/advise_pareto.png (cost
against finish, colored by emissions, the front outlined; needs matplotlib) and, with
--docs, copies the figure to docs/figures/advise_pareto.png.

  python3 experiments/advise_four_regions.py [--cli build/schedsim] [--out DIR] [--docs]

Needs ../shared/data beside the checkout: without it the script says so and exits 0.
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JOB = os.path.join(ROOT, "experiments", "configs", "advise", "advise_512gpu_2weeks.yaml")
DATA = os.path.normpath(os.path.join(ROOT, "..", "shared", "data"))
REGIONS = ["DE-LU", "US-CAL-CISO", "SG", "JP-TK"]


def data_missing():
    need = [os.path.join(DATA, "carbon", r + "_2023_hourly.csv") for r in REGIONS]
    need += [os.path.join(DATA, "prices", r + "_electricity_prices_2023.csv") for r in REGIONS]
    return [p for p in need if not os.path.exists(p)]


def short(plan):
    """The plan label without the providers, for the table."""
    out = []
    for part in plan.split(" -> "):
        out.append(part.split(" (")[0])
    return " → ".join(out)


def markdown(front):
    lines = ["| plan | start | finish | duration (h) | cost (USD) | CO₂ (t) | energy (MWh) | spot loss risk |",
             "|---|---|---|---|---|---|---|---|"]
    for p in front:
        lines.append("| %s | %s | %s | %.0f | %s | %.1f | %.0f | %.2f |" % (
            short(p["plan"]), p["start_utc"][:10], p["finish_utc"][:13].replace("T", " ") + "h",
            float(p["finish_h"]) - float(p["start_h"]), format(round(float(p["cost_usd"])), ","),
            float(p["co2_kg"]) / 1000, float(p["energy_kwh"]) / 1000, float(p["spot_loss_risk"])))
    return "\n".join(lines) + "\n"


def figure(plans, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("advise_four_regions: matplotlib not installed; no PNG figure (plans.csv and pareto.md are written)")
        return False
    fig, ax = plt.subplots(figsize=(8, 5), dpi=120)
    x = [float(p["finish_h"]) / 24 for p in plans]
    y = [float(p["cost_usd"]) / 1e6 for p in plans]
    c = [float(p["co2_kg"]) / 1000 for p in plans]
    sc = ax.scatter(x, y, c=c, s=6, cmap="viridis_r", alpha=0.6, linewidths=0)
    front = sorted((p for p in plans if p["pareto"] == "1"), key=lambda p: float(p["finish_h"]))
    ax.scatter([float(p["finish_h"]) / 24 for p in front], [float(p["cost_usd"]) / 1e6 for p in front],
               c=[float(p["co2_kg"]) / 1000 for p in front], cmap="viridis_r", s=40, edgecolors="black", linewidths=0.8,
               vmin=min(c), vmax=max(c), label="Pareto front (finish, cost, CO₂)")
    ax.set_xlabel("expected finish (days after 2023-03-01 00:00 UTC)")
    ax.set_ylabel("cost (million USD)")
    ax.set_title("GPT-2-1.5B, 2 weeks on 512 A100s: %d feasible plans over 4 regions" % len(plans))
    fig.colorbar(sc, ax=ax, label="emissions (t CO₂)")
    ax.legend(loc="upper right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "schedsim"))
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "advise_four_regions"))
    ap.add_argument("--docs", action="store_true", help="also copy the figure to docs/figures/advise_pareto.png")
    args = ap.parse_args()
    missing = data_missing()
    if missing:
        print("advise_four_regions: skipped: the 2023 signal data are not there (%s); put ../shared/data beside the checkout" % missing[0])
        return 0
    subprocess.run([args.cli, "advise", JOB, "--out", args.out, "--plot", "--top", "15"], check=True)
    with open(os.path.join(args.out, "plans.csv")) as f:
        plans = list(csv.DictReader(f))
    front = sorted((p for p in plans if p["pareto"] == "1"), key=lambda p: (float(p["finish_h"]), float(p["cost_usd"])))
    table = markdown(front)
    with open(os.path.join(args.out, "pareto.md"), "w") as f:
        f.write(table)
    print("\nPareto front (%d of %d feasible plans), by finish:\n" % (len(front), len(plans)))
    print(table)
    png = os.path.join(args.out, "advise_pareto.png")
    if figure(plans, png) and args.docs:
        shutil.copyfile(png, os.path.join(ROOT, "docs", "figures", "advise_pareto.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
