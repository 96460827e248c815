"""experiments/repro/07_production_schedulers.py's pieces that decide what it runs: the
trace generator (deterministic per seed, the shares and sizes it documents) and the list
of presets, every one of which the CLI must register.

    python3 tests/experiments/test_repro_production.py CLI TMPDIR
"""
import csv
import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "experiments", "repro"))
cli, tmp = sys.argv[1], sys.argv[2]
try:
    spec = importlib.util.spec_from_file_location("repro07", os.path.join(ROOT, "experiments", "repro", "07_production_schedulers.py"))
    repro = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(repro)
except ImportError as e:  # common.py needs matplotlib and pandas
    print(f"SKIPPED: experiments/repro/common.py needs matplotlib and pandas (pip install matplotlib pandas; scripts/setup.sh installs them): {e}")
    sys.exit(77)
os.makedirs(tmp, exist_ok=True)
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAILED:", what)


a, b, c = (os.path.join(tmp, n) for n in ("a.csv", "b.csv", "c.csv"))
repro.write_trace(a, 1, 500)
repro.write_trace(b, 1, 500)
repro.write_trace(c, 2, 500)
check(open(a).read() == open(b).read(), "the same seed must give the same trace")
check(open(a).read() != open(c).read(), "another seed must give another trace")
rows = list(csv.DictReader(open(a)))
check(len(rows) == 500, f"500 jobs, got {len(rows)}")
sizes = {int(r["num_gpus"]) for r in rows}
check(sizes <= {1, 2, 4, 8, 16, 32, 64, 128, 256} and 256 in sizes and 1 in sizes, f"GPU counts 1-8 and gangs 16-256, got {sorted(sizes)}")
check(all(int(r["num_gpus"]) >= 16 or r["min_gpus"] == "" for r in rows), "only gangs are elastic")
check(all(r["min_gpus"] == "" or int(r["min_gpus"]) == int(r["num_gpus"]) // 2 for r in rows), "elastic gangs run on n/2 .. n")
check(len({r["user"] for r in rows}) > 20 and {r["group"] for r in rows} == set(repro.GROUPS), "users in the four groups")
# The committed trace is the seed-1 trace the script writes.
committed = os.path.join(ROOT, "experiments", "repro", "configs", "production_llm_trace.csv")
check(open(committed).read() == open(a).read(), "experiments/repro/configs/production_llm_trace.csv must equal write_trace(seed 1, 500 jobs)")
known = repro.known_policies(cli)
check(set(repro.POLICIES) | {"fifo", "slurm-easy"} <= known, f"`schedsim policies` must list the presets {repro.POLICIES}, got {sorted(known)}")
check(not any(n.startswith("option") for n in known), "option lines are not policy names")
print("FAILED" if failures else "OK: 07's traces and preset list")
sys.exit(1 if failures else 0)
