#!/usr/bin/env python3
"""ctest: `schedsim sweep --backend ray` on a local 2-worker Ray instance.

1. The local backend (2 workers) runs the grid: the reference.
2. The Ray backend runs it; while it runs, the test kills (SIGKILL) the Ray worker process
   of one run. The sweep must fail within the test's timeout, name the run and its log,
   whose text says that the Ray worker died, and keep the runs that finished.
3. The Ray backend runs it again: it resumes (the first stderr line counts the runs
   already done), and then every file under runs/, every log, sweep.csv and summary.csv
   are byte-identical to the local backend's.

Exits 77 (ctest: skipped) with the reason when Ray is not installed.

    test_ray_sweep.py SCHEDSIM_BINARY WORK_DIR
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

try:
    import ray  # noqa: F401
except ImportError as e:
    print(f"SKIP: the Ray sweep backend needs Ray ({e}); pip install 'schedsim[ray]' or pip install ray")
    sys.exit(77)

BASE = """
seed: 7
cluster:
  nodes:
    - {count: 2, type: V100, devices_per_node: 8}
workload:
  synthetic:
    num_jobs: 100
    arrival: {process: poisson, mean_interarrival_s: 60}
    duration_s: {dist: exponential, mean: 600}
    gpus: {1: 0.6, 2: 0.2, 4: 0.2}
information: oracle
policy: fifo
"""

# 2 sizes x 2 policies x 2 seeds = 8 runs; the 30000-job runs take long enough (about
# half a second each) for the test to find and kill the worker of one of them.
GRID = """
scenario: base.yaml
parameters:
  workload.synthetic.num_jobs: [300, 30000]
policies: [fifo, {name: sjf, placement: packed}]
seeds: 2
"""
VICTIM_MARK = "workload.synthetic.num_jobs=30000"


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def sweep(cli, out, *extra):
    proc = subprocess.run([cli, "sweep", "grid.yaml", "--jobs", "2", "--out", out, *extra], capture_output=True, text=True, timeout=240)
    print(f"$ schedsim sweep grid.yaml --jobs 2 --out {out} {' '.join(extra)}  -> exit {proc.returncode}\n{proc.stderr}{proc.stdout}")
    return proc


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def parent_pid(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def kill_one_ray_worker(base_path, stop, killed):
    """Kills the Ray worker (the parent process) of the first slow run of this test's grid."""
    while not stop.is_set():
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            args = [a.decode(errors="replace") for a in cmdline(entry)]
            if len(args) > 3 and args[1] == "run" and args[2] == base_path and VICTIM_MARK in args:
                worker = parent_pid(entry)
                if worker and any("ray" in a.decode(errors="replace") for a in cmdline(worker)):
                    os.kill(worker, signal.SIGKILL)
                    killed.append(args)
                    return
        time.sleep(0.01)


def files_under(root):
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            path = os.path.join(d, n)
            out[os.path.relpath(path, root)] = path
    return out


def main():
    cli, work = os.path.abspath(sys.argv[1]), sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.chdir(work)
    with open("base.yaml", "w") as f:
        f.write(BASE)
    with open("grid.yaml", "w") as f:
        f.write(GRID)
    base_path = os.path.join(os.getcwd(), "base.yaml")

    local = sweep(cli, "local")
    if local.returncode != 0:
        fail("the local sweep failed")

    # A Ray worker dies mid-sweep: the sweep fails with a clear message, not a hang.
    stop, killed = threading.Event(), []
    killer = threading.Thread(target=kill_one_ray_worker, args=(base_path, stop, killed))
    killer.start()
    dying = sweep(cli, "ray", "--backend", "ray")
    stop.set()
    killer.join()
    if not killed:
        fail("never saw a Ray worker running a 30000-job run to kill")
    if dying.returncode != 1:
        fail(f"the sweep with a killed Ray worker exited {dying.returncode}, expected 1")
    m = re.search(r"(\d+) run\(s\) failed; their messages are in: ([^,;\s]+);", dying.stderr)
    if not m or m.group(1) != "1":
        fail("the sweep's error does not name exactly one failed run and its log")
    with open(m.group(2)) as f:
        log = f.read()
    if "the Ray worker running it died" not in log:
        fail(f"the failed run's log does not say that its Ray worker died: {log!r}")
    failed_id = os.path.basename(m.group(2))[: -len(".stderr")]
    if os.path.exists(os.path.join("ray", "runs", failed_id, "results.json")):
        fail("the failed run has a results.json")
    done = [r for r in os.listdir("ray/runs") if os.path.exists(os.path.join("ray/runs", r, "results.json"))]
    if len(done) != 7:
        fail(f"{len(done)} runs kept after the failure, expected the 7 others")

    # Resume on Ray; then everything equals the local backend's outputs.
    resumed = sweep(cli, "ray", "--backend", "ray")
    if resumed.returncode != 0:
        fail("the resumed Ray sweep failed")
    if "sweep: 8 runs, 7 already done, 1 to run on a local Ray instance with 2 worker(s)" not in resumed.stderr:
        fail("the resumed Ray sweep did not resume from the 7 finished runs")
    a, b = files_under("local/runs"), files_under("ray/runs")
    if sorted(a) != sorted(b) or len(a) != 16:
        fail(f"run files differ: local {sorted(a)} vs ray {sorted(b)}")
    compared = [(a[k], b[k]) for k in sorted(a)]
    compared += [(f"local/{t}", f"ray/{t}") for t in ("sweep.csv", "summary.csv")]
    for run in os.listdir("local/logs"):
        compared.append((f"local/logs/{run}", f"ray/logs/{run}"))
    for x, y in compared:
        with open(x, "rb") as f, open(y, "rb") as g:
            if f.read() != g.read():
                fail(f"{x} and {y} differ")
    with open("local/sweep.csv") as f:
        rows = f.read().splitlines()
    if len(rows) != 9:
        fail(f"sweep.csv has {len(rows)} lines, expected a header and 8 runs")
    print(f"OK: killed Ray worker failed run {failed_id} cleanly; after a resume, {len(compared)} files byte-identical to the local backend")
    return 0


if __name__ == "__main__":
    sys.exit(main())
