#!/usr/bin/env python3
"""Per-job cross-validation of schedsim against the peers' own simulators.

Replays each peer run of ../shared/data/peers (see its README.md) with the scenario of
this folder that models it (`schedsim run`), matches jobs by id with the peer's per-job
output, and prints one table: average JCT of the peer and of schedsim, makespans, the
quantiles p10/p50/p90 of the per-job JCT ratio (schedsim / peer) and the share of jobs
whose JCT is within 1% of the peer's. Each run has targets (docs/validation.md states
them): the script exits 1 when a run misses one, 77 (skipped, reason printed) when the
shared data folder is absent, 2 on a usage or input error.

  python3 experiments/validation/validate.py [--cli build/schedsim] [--data DIR]
      [--only NAME] [--out DIR] [--csv FILE]
"""
import argparse
import csv
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SKIP = 77  # ctest's SKIP_RETURN_CODE

# One row per peer run: the scenario replaying it, the peer's per-job file (relative to
# the shared data folder), the trace the scenario reads (same), and the targets
# (docs/validation.md, "Targets"): |avg JCT ours / peer - 1| at most `avg_tol`, at least
# `within_1pct` of the jobs within 1% of the peer's JCT. None = reported, not checked.
TIRESIAS_TRACE = "peers/tiresias/philly_like_5000.csv"
RUNS = [
    {"name": "tiresias-fifo-count", "scenario": "tiresias_fifo_count.yaml", "peer": "peers/tiresias/fifo_count__5000.job.csv",
     "trace": TIRESIAS_TRACE, "avg_tol": 1e-9, "within_1pct": 1.0},
    {"name": "tiresias-dlas", "scenario": "tiresias_dlas.yaml", "peer": "peers/tiresias/dlas__5000.job.csv",
     "trace": TIRESIAS_TRACE, "avg_tol": 0.01, "within_1pct": 0.95},
    # Below the 95% aimed for: Tiresias' demotion timer for dlas-gpu fires late for
    # multi-GPU jobs (docs/validation.md, "dlas-gpu"); 89.54% measured.
    {"name": "tiresias-dlas-gpu", "scenario": "tiresias_dlas_gpu.yaml", "peer": "peers/tiresias/dlas-gpu__5000.job.csv",
     "trace": TIRESIAS_TRACE, "avg_tol": 0.01, "within_1pct": 0.89},
    {"name": "tiresias-fifo-yarn", "scenario": "tiresias_fifo_yarn.yaml", "peer": "peers/tiresias/fifo__5000.job.csv",
     "trace": TIRESIAS_TRACE, "avg_tol": 1e-9, "within_1pct": 1.0},
    # Gavel (stanford-futuredata/gavel c4fa400): targets avg JCT within 2%, per-job ratio
    # p10 >= 0.9 and p90 <= 1.1 (`ratio_band`). Gavel's output lists no JCT for the 1-2
    # jobs it marked failed: those are left out of both averages and reported (`peer_failed`).
    {"name": "gavel-fifo-perf", "scenario": "gavel_fifo_perf.yaml", "peer": "peers/gavel/fifo_perf__6263.out", "format": "gavel",
     "trace": "peers/gavel/continuous_lam1800_seed0_6263.trace", "avg_tol": 0.02, "within_1pct": None, "ratio_band": (0.9, 1.1)},
    {"name": "gavel-fifo-perf-nozero", "scenario": "gavel_fifo_perf_nozero.yaml", "peer": "peers/gavel/fifo_perf__nozero_6143.out", "format": "gavel",
     "trace": "peers/gavel/continuous_lam1800_seed0_nozero_6143.trace", "avg_tol": 0.02, "within_1pct": None, "ratio_band": (0.9, 1.1)},
    # Short of the 2% and 0.9-1.1 aimed for (docs/validation.md, "Gavel"): the max-min LP
    # has many optima and Gavel's interior-point solver (ECOS) returns another one than our
    # simplex with its small secondary objective; measured -7.98% / -6.31%, p10 0.676 /
    # 0.686. These targets guard against regressions from there.
    {"name": "gavel-las", "scenario": "gavel_las.yaml", "peer": "peers/gavel/max_min_fairness_perf__6263.out", "format": "gavel",
     "trace": "peers/gavel/continuous_lam1800_seed0_6263.trace", "avg_tol": 0.085, "within_1pct": None, "ratio_band": (0.67, 1.1)},
    {"name": "gavel-las-nozero", "scenario": "gavel_las_nozero.yaml", "peer": "peers/gavel/max_min_fairness_perf__nozero_6143.out", "format": "gavel",
     "trace": "peers/gavel/continuous_lam1800_seed0_nozero_6143.trace", "avg_tol": 0.07, "within_1pct": None, "ratio_band": (0.68, 1.1)},
]


def fail_usage(message):
    print(f"validate.py: error: {message}", file=sys.stderr)
    sys.exit(2)


def read_jobs(path, id_col, submit_col, end_col, jct_col):
    """{job id: (submit, end, jct)} from a CSV file with those columns."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in (id_col, submit_col, end_col, jct_col) if c not in (reader.fieldnames or [])]
        if missing:
            fail_usage(f"{path}: missing column(s) {', '.join(missing)}; found {', '.join(reader.fieldnames or [])}")
        out = {}
        for line, row in enumerate(reader, start=2):
            try:
                out[row[id_col]] = (float(row[submit_col]), float(row[end_col]), float(row[jct_col]))
            except ValueError:
                fail_usage(f"{path}:{line}: expected numbers in {submit_col}, {end_col}, {jct_col}")
        return out


def read_gavel_out(path, trace_path):
    """{job id: (submit, end, jct)} from Gavel's stdout ("Job N: JCT" lines, N = the job's
    line in the trace, whose last field is its arrival time), and the ids of the trace's
    jobs Gavel lists no JCT for (its failed jobs)."""
    arrivals = []
    with open(trace_path) as f:
        for line, text in enumerate(f, start=1):
            fields = text.rstrip("\n").split("\t")
            try:
                arrivals.append(float(fields[-1]))
            except ValueError:
                fail_usage(f"{trace_path}:{line}: expected the arrival time as the last TAB-separated field")
    out = {}
    with open(path) as f:
        for line, text in enumerate(f, start=1):
            if not text.startswith("Job ") or ":" not in text or text.startswith("Job completion"):
                continue
            head, _, value = text.partition(":")
            try:
                n, jct = int(head[4:]), float(value)
            except ValueError:
                fail_usage(f"{path}:{line}: expected 'Job N: JCT', got {text.strip()!r}")
            if not 0 <= n < len(arrivals):
                fail_usage(f"{path}:{line}: job {n} is not in {trace_path} ({len(arrivals)} jobs)")
            out[str(n)] = (arrivals[n], arrivals[n] + jct, jct)
    failed = [str(n) for n in range(len(arrivals)) if str(n) not in out]
    return out, failed


def quantile(sorted_values, q):
    """Linear interpolation between closest ranks."""
    if not sorted_values:
        return math.nan
    pos = q * (len(sorted_values) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def compare(peer, ours):
    """Agreement numbers of two {id: (submit, end, jct)} maps; every peer job must be ours too."""
    missing = sorted(set(peer) - set(ours))
    extra = sorted(set(ours) - set(peer))
    common = [j for j in peer if j in ours]
    ratios = sorted(ours[j][2] / peer[j][2] if peer[j][2] > 0 else (1.0 if ours[j][2] == 0 else math.inf) for j in common)

    def makespan(jobs):
        return max(e for _, e, _ in jobs.values()) - min(s for s, _, _ in jobs.values())

    within = sum(1 for r in ratios if abs(r - 1.0) <= 0.01)
    return {
        "jobs": len(common), "missing": missing, "extra": extra,
        "avg_peer": sum(peer[j][2] for j in common) / max(1, len(common)),
        "avg_ours": sum(ours[j][2] for j in common) / max(1, len(common)),
        "makespan_peer": makespan(peer), "makespan_ours": makespan(ours),
        "p10": quantile(ratios, 0.10), "p50": quantile(ratios, 0.50), "p90": quantile(ratios, 0.90),
        "within_1pct": within / max(1, len(common)),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "schedsim"), help="the schedsim binary (default build/schedsim)")
    ap.add_argument("--data", default=os.environ.get("SCHEDSIM_DATA") or os.environ.get("SCHEDSIM_SHARED_DATA") or os.path.normpath(os.path.join(ROOT, "..", "shared", "data")),
                    help="the shared data folder (default $SCHEDSIM_DATA, else ../shared/data beside the checkout)")
    ap.add_argument("--only", action="append", help="run only this peer run (repeatable); names: " + ", ".join(r["name"] for r in RUNS))
    ap.add_argument("--out", default=None, help="keep the runs' result folders here (default: a temporary folder)")
    ap.add_argument("--csv", default=None, help="also write the table as CSV to this file")
    ap.add_argument("--no-check", action="store_true", help="print the table without checking the targets")
    ap.add_argument("--policy", action="append", default=[], metavar="RUN=POLICY",
                    help="replay run RUN with POLICY instead of its scenario's (a name or a YAML map; repeatable), e.g. to see how far another policy is")
    args = ap.parse_args()

    names = {r["name"] for r in RUNS}
    for n in args.only or []:
        if n not in names:
            fail_usage(f"--only {n}: unknown run; known runs: {', '.join(r['name'] for r in RUNS)}")
    runs = [r for r in RUNS if not args.only or r["name"] in args.only]
    policies = {}
    for p in args.policy:
        run, sep, policy = p.partition("=")
        if not sep or run not in names or not policy:
            fail_usage(f"--policy {p}: expected RUN=POLICY with RUN one of {', '.join(r['name'] for r in RUNS)}")
        policies[run] = policy
    if not os.path.isfile(args.cli):
        fail_usage(f"--cli {args.cli}: no such file; build first (cmake --build build --target schedsim)")
    if not os.path.isdir(os.path.join(args.data, "peers")):
        print(f"SKIPPED: the peers' outputs are absent ({os.path.join(args.data, 'peers')}); put the shared data folder beside the checkout or set SCHEDSIM_DATA")
        sys.exit(SKIP)

    out_root = args.out or tempfile.mkdtemp(prefix="schedsim-validate-")
    rows, failures = [], []
    for r in runs:
        out = os.path.join(out_root, r["name"])
        cmd = [args.cli, "run", os.path.join(HERE, r["scenario"]), "--data-dir", args.data, "--set", "workload.trace.path=" + os.path.join(args.data, r["trace"]),
               "--out", out, "--quiet"]
        if r["name"] in policies:
            cmd += ["--set", "policy=" + policies[r["name"]]]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"validate.py: error: {' '.join(cmd)} exited {done.returncode}:\n{done.stderr.strip()}", file=sys.stderr)
            sys.exit(1)
        ours = read_jobs(os.path.join(out, "jobs.csv"), "job_id", "submit_s", "end_s", "jct_s")
        peer_failed = []
        if r.get("format") == "gavel":
            peer, peer_failed = read_gavel_out(os.path.join(args.data, r["peer"]), os.path.join(args.data, r["trace"]))
            for j in peer_failed:  # Gavel's average leaves them out: so does the comparison
                ours.pop(j, None)
        else:
            peer = read_jobs(os.path.join(args.data, r["peer"]), "job_id", "submit_time", "end_time", "JCT")
        c = compare(peer, ours)
        c["name"] = r["name"]
        c["peer_failed"] = peer_failed
        rows.append(c)
        if peer_failed:
            print(f"{r['name']}: left out of the comparison: job(s) {', '.join(peer_failed)}, which the peer marked failed (no JCT)")
        if c["missing"] or c["extra"]:
            failures.append(f"{r['name']}: job ids differ: {len(c['missing'])} of the peer's missing (e.g. {c['missing'][:3]}), "
                            f"{len(c['extra'])} not in the peer's output (e.g. {c['extra'][:3]})")
        avg_err = abs(c["avg_ours"] / c["avg_peer"] - 1.0)
        if r["avg_tol"] is not None and avg_err > r["avg_tol"]:
            failures.append(f"{r['name']}: average JCT {c['avg_ours']:.1f} s vs the peer's {c['avg_peer']:.1f} s "
                            f"({avg_err:.2%} off; the target is at most {r['avg_tol']:.2%})")
        if r["within_1pct"] is not None and c["within_1pct"] < r["within_1pct"]:
            failures.append(f"{r['name']}: {c['within_1pct']:.2%} of jobs within 1% of the peer's JCT; the target is at least {r['within_1pct']:.0%}")
        band = r.get("ratio_band")
        if band and not (c["p10"] >= band[0] and c["p90"] <= band[1]):
            failures.append(f"{r['name']}: per-job JCT ratio p10-p90 {c['p10']:.4f}-{c['p90']:.4f}; the target is inside {band[0]}-{band[1]}")

    header = ["run", "jobs", "avg JCT peer (s)", "avg JCT ours (s)", "diff", "makespan peer (s)", "makespan ours (s)",
              "ratio p10", "ratio p50", "ratio p90", "within 1%"]
    table = [[c["name"], str(c["jobs"]), f"{c['avg_peer']:,.1f}", f"{c['avg_ours']:,.1f}", f"{c['avg_ours'] / c['avg_peer'] - 1:+.2%}",
              f"{c['makespan_peer']:,.0f}", f"{c['makespan_ours']:,.0f}", f"{c['p10']:.4f}", f"{c['p50']:.4f}", f"{c['p90']:.4f}",
              f"{c['within_1pct']:.2%}"] for c in rows]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for t in table:
        print("| " + " | ".join(t) + " |")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(header)
            w.writerows(table)
    if failures and not args.no_check:
        for f in failures:
            print(f"validate.py: target missed: {f}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
