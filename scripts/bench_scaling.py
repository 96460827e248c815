#!/usr/bin/env python3
"""Scaling of the kernel benchmark: wall time vs number of jobs and vs cluster size.

    python3 scripts/bench_scaling.py [--schedsim build/schedsim] [--repeats 3] [--quick]

Runs `schedsim bench kernel --policies fifo` (Poisson arrivals at 80% load, 8-GPU nodes,
physics off; docs/benchmarks.md) for 1e4..1e7 jobs on 10,000 GPUs and for 1e6 jobs on
104..100,000 GPUs, keeps the best of --repeats runs of each point, and writes
bench_scaling.csv and bench_scaling.png into --out (default build/bench_scaling); only
--update-docs writes the committed docs/figures/ ones.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_point(schedsim, jobs, gpus, repeats):
    best = None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.json")
        for _ in range(repeats):
            subprocess.run([schedsim, "bench", "kernel", "--policies", "fifo", "--jobs", str(jobs), "--gpus", str(gpus), "--json", path],
                           check=True, stdout=subprocess.DEVNULL)
            with open(path) as f:
                r = json.load(f)[0]
            if best is None or r["wall_s"] < best["wall_s"]:
                best = r
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--schedsim", default=os.path.join(ROOT, "build", "schedsim"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="small sizes only (seconds), for a smoke test")
    ap.add_argument("--out", default=None, help="output folder (default build/bench_scaling)")
    ap.add_argument("--update-docs", action="store_true", help="write the committed docs/figures/bench_scaling.{csv,png} (not with --quick or --out)")
    args = ap.parse_args()
    if args.update_docs and (args.quick or args.out):
        ap.error("--update-docs publishes a full run into docs/figures; drop --quick and --out")
    if args.out is None:
        args.out = os.path.join(ROOT, "docs", "figures") if args.update_docs else os.path.join(ROOT, "build", "bench_scaling")

    jobs_axis = [10_000, 30_000, 100_000, 300_000, 1_000_000, 3_000_000, 10_000_000]
    gpus_axis = [104, 1_000, 10_000, 100_000]
    fixed_jobs, fixed_gpus = 1_000_000, 10_000
    if args.quick:
        jobs_axis, gpus_axis, fixed_jobs = [10_000, 30_000], [104, 1_000], 20_000

    rows = []
    for n in jobs_axis:
        r = run_point(args.schedsim, n, fixed_gpus, args.repeats)
        rows.append(("jobs", r))
        print(f"jobs={n:>10,} gpus={fixed_gpus:>7,}  wall={r['wall_s']:.3f} s  {r['per_s'] / 1e6:.2f} M events/s  RSS {r['peak_rss_mib']:.0f} MiB", flush=True)
    for g in gpus_axis:
        r = run_point(args.schedsim, fixed_jobs, g, args.repeats)
        rows.append(("gpus", r))
        print(f"jobs={fixed_jobs:>10,} gpus={g:>7,}  wall={r['wall_s']:.3f} s  {r['per_s'] / 1e6:.2f} M events/s  RSS {r['peak_rss_mib']:.0f} MiB", flush=True)

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "bench_scaling.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["sweep", "jobs", "gpus", "events", "wall_s", "ns_per_event", "peak_rss_mib"])
        for sweep, r in rows:
            w.writerow([sweep, r["jobs"], r["gpus"], r["events"], f"{r['wall_s']:.4f}", f"{1e9 * r['wall_s'] / r['events']:.1f}",
                        f"{r['peak_rss_mib']:.0f}"])

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    jr = [r for s, r in rows if s == "jobs"]
    x = [r["jobs"] for r in jr]
    y = [r["wall_s"] for r in jr]
    a.loglog(x, y, "o-", label="fifo, 10,000 GPUs")
    ref = y[len(y) // 2] / x[len(x) // 2]
    a.loglog(x, [ref * v for v in x], "--", color="gray", label="linear in jobs")
    a.set_xlabel("jobs")
    a.set_ylabel("wall time (s)")
    a.set_title("Kernel: wall time vs jobs")
    a.grid(True, which="both", alpha=0.3)
    a.legend()
    gr = [r for s, r in rows if s == "gpus"]
    b.semilogx([r["gpus"] for r in gr], [1e9 * r["wall_s"] / r["events"] for r in gr], "o-", label=f"fifo, {fixed_jobs:,} jobs")
    b.set_xlabel("GPUs in the cluster")
    b.set_ylabel("wall time per event (ns)")
    b.set_ylim(bottom=0)
    b.set_title("Kernel: cost per event vs cluster size")
    b.grid(True, which="both", alpha=0.3)
    b.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "bench_scaling.png"), dpi=110)
    print("wrote", os.path.join(args.out, "bench_scaling.png"))


if __name__ == "__main__":
    sys.exit(main())
