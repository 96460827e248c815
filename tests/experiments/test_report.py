#!/usr/bin/env python3
"""ctest: `schedsim report` on a tiny `schedsim compare --timeline` output.

Checks that the figures exist and are valid PNGs of non-trivial size, and that the
numbers in report.md's run table equal results.json. Exits 77 (ctest: skipped) with
the reason when matplotlib or pandas is missing.

    test_report.py SCHEDSIM_BINARY WORK_DIR
"""
import json
import os
import shutil
import struct
import subprocess
import sys

try:
    import matplotlib  # noqa: F401
    import pandas  # noqa: F401
except ImportError as e:
    print(f"SKIP: schedsim report needs matplotlib and pandas ({e}); pip install matplotlib pandas")
    sys.exit(77)

SCENARIO = """
seed: 3
cluster:
  nodes:
    - {count: 2, type: V100, devices_per_node: 4}
workload:
  synthetic:
    num_jobs: 40
    arrival: {process: poisson, mean_interarrival_s: 120}
    duration_s: {dist: exponential, mean: 900}
    gpus: {1: 0.5, 2: 0.25, 4: 0.25}
energy: {}
information: oracle
policy: fifo
"""


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check_png(path):
    if not os.path.isfile(path):
        fail(f"missing {path}")
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        fail(f"{path} is not a PNG")
    width, height = struct.unpack(">II", data[16:24])
    if width < 200 or height < 200 or len(data) < 10000:
        fail(f"{path} is trivial: {width}x{height}, {len(data)} bytes")


def main():
    exe, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    scenario = os.path.join(work, "scenario.yaml")
    with open(scenario, "w") as f:
        f.write(SCENARIO)
    out = os.path.join(work, "cmp")
    subprocess.run([exe, "compare", scenario, "--policies", "fifo,sjf", "--timeline", "--quiet", "--out", out], check=True)
    r = subprocess.run([exe, "report", out], capture_output=True, text=True)
    print(r.stdout, r.stderr)
    if r.returncode != 0:
        fail(f"schedsim report exited {r.returncode}")
    rep = os.path.join(out, "report")
    for name in ["jct_cdf.png", "timeline.png", "gantt_fifo.png", "gantt_sjf.png", "energy.png"]:
        check_png(os.path.join(rep, name))
        print("ok", name)

    # The run table: one row per policy, numbers equal results.json (6 significant digits).
    md = open(os.path.join(rep, "report.md")).read().splitlines()
    start = md.index("## Runs") + 2
    header = [c.strip() for c in md[start].strip("|").split("|")]
    rows = {}
    for line in md[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = dict(zip(header, cells))
    if sorted(rows) != ["fifo", "sjf"]:
        fail(f"run rows {sorted(rows)}")
    checks = [("jobs", "jobs_completed", 1), ("mean JCT (h)", "mean_jct_s", 1 / 3600), ("p95 JCT (h)", "p95_jct_s", 1 / 3600),
              ("GPU util", "gpu_utilization", 1), ("makespan (h)", "makespan_s", 1 / 3600)]
    for policy, row in rows.items():
        summary = json.load(open(os.path.join(out, policy, "results.json")))["summary"]
        for title, key, scale in checks:
            want = summary[key] * scale
            got = float(row[title])
            if abs(got - want) > 5e-6 * abs(want):
                fail(f"{policy} {title}: report.md says {got}, results.json gives {want}")
    if rows["fifo"]["mean JCT (h)"] == rows["sjf"]["mean JCT (h)"]:
        fail("fifo and sjf have the same mean JCT: the table does not distinguish the runs")
    print("ok report.md table equals results.json")

    # The --timeline files are exact: the step function's integrals equal the summary.
    import pandas as pd
    for policy in rows:
        d = os.path.join(out, policy)
        summary = json.load(open(os.path.join(d, "results.json")))["summary"]
        t = pd.read_csv(os.path.join(d, "timeline.csv"))
        dt = t["time_s"].diff().shift(-1).fillna(0)
        busy_h = (t["busy_devices"] * dt).sum() / 3600
        in_system_s = ((t["queue_length"] + t["running_jobs"]) * dt).sum()
        a = pd.read_csv(os.path.join(d, "allocations.csv"), dtype={"job_id": str, "devices": str})
        placed_h = ((a["end_s"] - a["start_s"]) * a["devices"].str.split().str.len()).sum() / 3600
        want_h = summary["allocated_gpu_hours"]
        if abs(busy_h - want_h) > 1e-9 * want_h or abs(placed_h - want_h) > 1e-9 * want_h:
            fail(f"{policy}: busy device-hours {busy_h} / placed {placed_h}, results.json allocated_gpu_hours {want_h}")
        want_jct = summary["mean_jct_s"] * summary["jobs_completed"]
        if abs(in_system_s - want_jct) > 1e-9 * want_jct:
            fail(f"{policy}: integral of jobs in system {in_system_s} s, sum of JCTs {want_jct} s")
        if t["time_s"].is_monotonic_increasing is False or t["time_s"].duplicated().any():
            fail(f"{policy}: timeline.csv times are not strictly increasing")
    print("ok timeline.csv and allocations.csv integrate to the summary")


if __name__ == "__main__":
    main()
