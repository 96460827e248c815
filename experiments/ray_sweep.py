#!/usr/bin/env python3
"""The Ray backend of `schedsim sweep GRID.yaml --backend ray [--address ADDR]`.

`schedsim sweep` writes the runs still to do into DIR/logs/ray_pending.json and runs

    python3 ray_sweep.py DIR/logs/ray_pending.json

Each run becomes one Ray task (1 CPU, no retries) that executes the run's
`schedsim run ... --quiet` command, the one the local backend spawns, with `--out` set to
a temporary folder on the node that runs it, and returns the files written there and
what the run printed on stderr. This driver, on the machine that started the sweep, writes
them into DIR/runs/<id>/ (results.json last, each file through a temporary name and a
rename, so an interrupted sweep resumes as with the local backend) and DIR/logs/<id>.stderr.
The outputs do not travel through a shared file system; the schedsim binary and the
scenario's files must exist at the same paths on every node.

Protocol with schedsim (stdout, one JSON object per line): {"id", "ok", "reason"} once per
finished run, after its files are written, or {"error": message} when the sweep cannot
run at all (no Ray, no cluster at the address). Everything else goes to stderr.
"""
import json
import os
import sys

INSTALL_HINT = ("the Ray backend needs Ray for {python}: pip install 'schedsim[ray]' (or: {python} -m pip install ray), "
                "or run the sweep with the local backend (without --backend ray)")


def write_atomically(path, data):
    tmp = f"{path}.partial-{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def store_run(run, result):
    """Writes what a task returned as the local backend would: the log, then the run folder."""
    write_atomically(run["log"], result["stderr"])
    if result["returncode"] != 0:
        return
    os.makedirs(run["out"], exist_ok=True)
    names = sorted(result["files"], key=lambda n: (n == "results.json", n))  # results.json last: it marks the run done
    for name in names:
        path = os.path.join(run["out"], name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_atomically(path, result["files"][name])


def run_task(argv):
    """Runs one `schedsim run` into a node-local temporary folder; returns its files."""
    import ctypes
    import signal
    import shutil
    import subprocess
    import tempfile

    def die_with_worker():
        # If this Ray worker dies, the run dies too rather than running on unowned
        # (Linux only: elsewhere the run finishes on its own).
        prctl = getattr(ctypes.CDLL(None), "prctl", None)
        if prctl is not None:
            prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG

    out = tempfile.mkdtemp(prefix="schedsim-ray-")
    try:
        proc = subprocess.run(argv + ["--out", out], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              preexec_fn=die_with_worker)
        files = {}
        if proc.returncode == 0:
            for root, _, names in os.walk(out):
                for name in names:
                    path = os.path.join(root, name)
                    with open(path, "rb") as f:
                        files[os.path.relpath(path, out)] = f.read()
        return {"returncode": proc.returncode, "stderr": proc.stderr, "files": files}
    finally:
        shutil.rmtree(out, ignore_errors=True)


def failure_reason(returncode):
    if returncode < 0:
        return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    # The protocol gets a private copy of stdout; fd 1 becomes stderr, so that nothing Ray
    # or its child processes print can mix into the protocol.
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)

    def say(obj):
        proto.write(json.dumps(obj) + "\n")
        proto.flush()

    try:
        import ray
    except ImportError as e:
        say({"error": INSTALL_HINT.format(python=sys.executable) + f" ({e})"})
        return 1
    with open(sys.argv[1]) as f:
        request = json.load(f)
    runs = request["runs"]
    address = request["address"] or None
    workers = int(request["workers"])
    try:
        if address is None:
            # A new local instance (never an instance that happens to be running), with
            # as many CPUs as the sweep has workers: one run per CPU at a time.
            ray.init(address="local", num_cpus=workers, include_dashboard=False, log_to_driver=False, logging_level="WARNING")
        else:
            ray.init(address=address, log_to_driver=False, logging_level="WARNING")
    except Exception as e:  # Ray raises ConnectionError, ValueError, RuntimeError... with the reason
        say({"error": f"cannot start or reach Ray (address {address or 'local'}): {type(e).__name__}: {e}"})
        return 1

    task = ray.remote(num_cpus=1, max_retries=0)(run_task)
    # At most `workers` runs in flight (0: as many as the cluster has CPUs, at least 1).
    limit = workers if workers > 0 else max(1, int(ray.cluster_resources().get("CPU", 1)))
    in_flight = {}
    next_run = 0
    try:
        while next_run < len(runs) or in_flight:
            while next_run < len(runs) and len(in_flight) < limit:
                run = runs[next_run]
                in_flight[task.remote(run["argv"])] = run
                next_run += 1
            ready, _ = ray.wait(list(in_flight), num_returns=1)
            run = in_flight.pop(ready[0])
            try:
                result = ray.get(ready[0])
            except ray.exceptions.RayError as e:
                # The worker process or its node died (WorkerCrashedError, NodeDiedError,
                # ...): the run fails with Ray's explanation in its log, and the sweep
                # goes on with the others, as the local backend does for a failed run.
                reason = f"the Ray worker running it died: {type(e).__name__}"
                write_atomically(run["log"], f"schedsim sweep --backend ray: {reason}\n{e}\n".encode())
                say({"id": run["id"], "ok": False, "reason": reason})
                continue
            store_run(run, result)
            ok = result["returncode"] == 0
            say({"id": run["id"], "ok": ok, "reason": "" if ok else failure_reason(result["returncode"])})
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
