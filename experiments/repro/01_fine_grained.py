#!/usr/bin/env python3
"""Generic vs fine-grained scheduling: GPU utilization and JCT on a multi-GPU-heavy workload.

    python3 experiments/repro/01_fine_grained.py [--quick] [--cli build/schedsim] [--out DIR] [--figures DIR]

Claim in the field: moving from a generic scheduler (FIFO, first fit) to fine-grained,
topology-aware gang scheduling with backfilling and preemption raises GPU utilization
from about 40-50% to 75% and more. schedsim sweeps the offered load of
experiments/repro/configs/fine_grained.yaml (128 H100, jobs of 1-128 GPUs, physics on)
under a ladder of policies with `schedsim sweep`, 5 seeds each (--quick: one load, two
policies, 3 seeds; checks utilization in (0, 1], fine-grained utilization above
FIFO's and its mean JCT below FIFO's). Each claim gets a verdict by common.VERDICT_RULE
from the mean and 95% CI over seeds.
"""
import os
import sys

import common
from common import plt

NAME = "01_fine_grained"
CONFIG = os.path.join(common.HERE, "configs", "fine_grained.yaml")
GENERIC = {"name": "fifo", "placement": "first_fit"}
FINE = {"name": "compose", "order": "las", "placement": "packed", "backfill": "easy", "preemption": True}
# The ladder: each step adds one ingredient of the fine-grained scheduler.
POLICIES = [("FIFO + first fit (generic)", GENERIC),
            ("FIFO + topology-aware packing", {"name": "fifo", "placement": "packed"}),
            ("FIFO + packing + EASY backfill", {"name": "compose", "order": "fifo", "placement": "packed", "backfill": "easy"}),
            ("LAS + packing + backfill + preemption (fine-grained)", FINE)]
HEADLINE_LOAD = 0.8


def main():
    args = common.parse_args(__doc__, NAME)
    quick = args.quick
    loads = [HEADLINE_LOAD] if quick else [0.5, 0.6, 0.7, 0.8, 0.9]
    policies = [POLICIES[0], POLICIES[-1]] if quick else POLICIES
    config = common.resolved_config(args.cli, CONFIG, args.out)
    devices = common.num_devices(config)
    work = common.mean_gpu_seconds(config)  # GPU-seconds per job at reference speed
    interarrival = {load: round(work / (load * devices), 1) for load in loads}
    by_ia = {v: k for k, v in interarrival.items()}
    grid = {"scenario": os.path.abspath(CONFIG),
            "parameters": {"workload.synthetic.arrival.mean_interarrival_s": list(interarrival.values())},
            "policies": [p for _, p in policies], "labels": [l for l, _ in policies],
            "seeds": 3 if quick else 5}
    runs, summary = common.sweep(args, grid, args.out)
    for r in summary:
        r["load"] = by_ia[r["workload.synthetic.arrival.mean_interarrival_s"]]

    def cell(label, load, metric):
        return next(r for r in summary if r["label"] == label and r["load"] == load)[metric]

    generic, fine = policies[0][0], policies[-1][0]
    u_gen, u_fine = cell(generic, HEADLINE_LOAD, "gpu_utilization_mean"), cell(fine, HEADLINE_LOAD, "gpu_utilization_mean")
    j_gen, j_fine = cell(generic, HEADLINE_LOAD, "mean_jct_s_mean"), cell(fine, HEADLINE_LOAD, "mean_jct_s_mean")
    for r in runs:
        r["load"] = by_ia[r["workload.synthetic.arrival.mean_interarrival_s"]]

    def per_seed(label, load, metric):
        """{seed: value} of one policy at one load: the values the verdicts average."""
        return {r["seed"]: r[metric] for r in runs if r["label"] == label and r["load"] == load}

    seeds = sorted(per_seed(generic, HEADLINE_LOAD, "gpu_utilization"))
    how = f"offered load {HEADLINE_LOAD:g}, seeds {', '.join(f'{s:g}' for s in seeds)}"
    jg, jf = per_seed(generic, HEADLINE_LOAD, "mean_jct_s"), per_seed(fine, HEADLINE_LOAD, "mean_jct_s")
    # Each claim's rule: its range, and the value that means no effect.
    claims = [
        common.claim("GPU utilization, generic (FIFO + first fit)", "about 40-50%", list(per_seed(generic, HEADLINE_LOAD, "gpu_utilization").values()),
                     how + "; whole run (gpu_utilization)", low=0.40, high=0.50, unit=common.pct),
        common.claim("GPU utilization, fine-grained", "75% and more", list(per_seed(fine, HEADLINE_LOAD, "gpu_utilization").values()),
                     how + "; whole run (gpu_utilization)", low=0.75, unit=common.pct),
        common.claim("GPU utilization, fine-grained, drain excluded", "75% and more",
                     list(per_seed(fine, HEADLINE_LOAD, "window.gpu_utilization").values()),
                     how + "; measurement window (window.gpu_utilization: after 10% of the jobs, until the last arrival)", low=0.75, unit=common.pct),
        common.claim("utilization gain, fine-grained minus generic", "25 points or more (40-50% to 75%+)",
                     [per_seed(fine, HEADLINE_LOAD, "gpu_utilization")[s] - per_seed(generic, HEADLINE_LOAD, "gpu_utilization")[s] for s in seeds],
                     how + "; paired by seed, whole run", low=0.25, no_effect=0.0, unit=common.pct),
        common.claim("mean JCT, fine-grained vs generic", "lower", [1 - jf[s] / jg[s] for s in seeds],
                     how + f"; reduction 1 - JCT(fine) / JCT(generic), paired by seed ({j_fine / 3600:.2f} h vs {j_gen / 3600:.2f} h)",
                     low=0.0, high=1.0, no_effect=0.0, unit=common.pct),
    ]
    top = max(loads)
    if top != HEADLINE_LOAD:
        claims.append(common.claim(f"GPU utilization at offered load {top:g}, fine-grained", "75% and more", list(per_seed(fine, top, "gpu_utilization").values()),
                                   f"offered load {top:g}, seeds {', '.join(f'{s:g}' for s in seeds)}; utilization cannot exceed the offered load",
                                   low=0.75, unit=common.pct))
    header = ["offered load", "mean inter-arrival (s)", "policy", "GPU utilization", "± 95% CI", "mean JCT (h)", "± 95% CI", "mean wait (h)", "makespan (h)"]
    detail = [[f"{r['load']:g}", f"{r['workload.synthetic.arrival.mean_interarrival_s']:g}", r["label"],
               f"{r['gpu_utilization_mean']:.3f}", common.fmt(r["gpu_utilization_ci95"], 2),
               f"{r['mean_jct_s_mean'] / 3600:.2f}", common.fmt((r["mean_jct_s_ci95"] or 0) / 3600, 2),
               f"{r['mean_queue_delay_s_mean'] / 3600:.2f}", f"{r['makespan_s_mean'] / 3600:.1f}"] for r in summary]

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for label, _ in policies:
        rows = sorted((r for r in summary if r["label"] == label), key=lambda r: r["load"])
        xs = [r["load"] for r in rows]
        a.errorbar(xs, [r["gpu_utilization_mean"] for r in rows], yerr=[r["gpu_utilization_ci95"] or 0 for r in rows], marker="o", capsize=3, label=label)
        b.errorbar(xs, [r["mean_jct_s_mean"] / 3600 for r in rows], yerr=[(r["mean_jct_s_ci95"] or 0) / 3600 for r in rows], marker="o", capsize=3, label=label)
    a.axhspan(0.40, 0.50, color="grey", alpha=0.2, label="claim: generic 40-50%")
    a.axhline(0.75, color="grey", ls="--", label="claim: fine-grained 75%")
    a.set(xlabel="offered load (GPU-hours asked / GPU-hours available)", ylabel="GPU utilization", ylim=(0, 1), title="GPU utilization (whole run)")
    b.set(xlabel="offered load", ylabel="mean JCT (h)", yscale="log", title="mean JCT")
    a.legend(fontsize=7)
    common.save_figure(args, fig, "utilization_jct")

    notes = f"""
Scenario: `experiments/repro/configs/fine_grained.yaml` ({devices} H100, jobs of 1-128 GPUs with
physics on); the offered load sets `mean_interarrival_s` = E[GPUs] x E[duration] / (load x {devices})
= {work:.0f} GPU-s / (load x {devices}). GPU utilization is `gpu_utilization` of results.json:
device-time held by jobs / (devices x makespan), over the whole run including the drain at
the end. Generic FIFO blocks behind a wide job at the head of the queue while smaller jobs
could run; backfilling fills those holes and packing keeps whole nodes and racks free for
wide jobs, so the fine-grained scheduler keeps pace with the arrivals where FIFO falls
behind (its makespan grows and its utilization stays flat as the load rises). Packing
alone changes little here (FIFO's blocking dominates, and H100 nodes with 400 Gb/s NICs make
spread placements only slightly slower); backfilling brings most of the gain and LAS with
preemption the rest of the JCT gain. The confidence intervals over 5 seeds are wide because
a few very long, very wide jobs dominate each run.
"""
    common.write_tables(args, "Generic vs fine-grained scheduling", claims, header, detail, notes)

    checks = common.Checks()
    checks.expect(all(r["jobs_completed"] == r["jobs_arrived"] for r in runs), "every job must complete")
    checks.expect(all(0 < r["gpu_utilization"] <= 1 for r in runs), "GPU utilization must lie in (0, 1]")
    checks.expect(u_fine > u_gen + 0.1, f"fine-grained utilization {u_fine:.3f} must exceed FIFO's {u_gen:.3f} by 10 points")
    checks.expect(j_fine < j_gen, f"fine-grained mean JCT {j_fine:.0f} s must be below FIFO's {j_gen:.0f} s")
    return checks.finish(args)


if __name__ == "__main__":
    sys.exit(main())
