"""experiments/repro/08_coscheduling.py at its --quick size: the table's structure and the
invariants of the comparison (SLO attainment in [0, 1], static partitioning runs its peak
replicas for the whole span and lends nothing, every variant and seed has a row).

    python3 tests/experiments/test_repro_coscheduling.py CLI TMPDIR

Exit 77 (skipped, the reason printed): ../shared/data/azure_llm absent, or no matplotlib.
"""
import csv
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
cli, tmp = sys.argv[1], sys.argv[2]
script = os.path.join(ROOT, "experiments", "repro", "08_coscheduling.py")
p = subprocess.run([sys.executable, script, "--quick", "--cli", cli, "--out", tmp], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
print(p.stdout)
if p.returncode == 77:
    sys.exit(77)
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAILED:", what)


check(p.returncode == 0, f"08 --quick must pass its own checks, exit {p.returncode}")
detail_path = os.path.join(tmp, "08_coscheduling_detail.csv")
claims_path = os.path.join(tmp, "08_coscheduling.csv")
check(os.path.exists(detail_path) and os.path.exists(claims_path), "the claim and detail tables are written")
if os.path.exists(detail_path):
    rows = list(csv.DictReader(open(detail_path)))
    variants = [r["variant"] for r in rows]
    check(variants[:3] == ["static partitioning (peak replicas all day)", "reactive autoscaling", "predictive autoscaling"],
          f"the rows are static, reactive, predictive (then rl with LibTorch), got {variants}")
    for col in ("mean JCT (h)", "SLO attainment", "p99 TTFT (s)", "utilisation (training + serving)", "peak replicas", "replica-hours / span-hours",
                "borrowed GPU-hours", "cluster energy (MWh, replica devices at idle)", "serving energy (MWh, engine)"):
        check(col in rows[0], f"column '{col}'")
    for r in rows:
        check(0.0 <= float(r["SLO attainment"]) <= 1.0, f"{r['variant']}: SLO attainment {r['SLO attainment']} in [0, 1]")
        check(0.0 < float(r["utilisation (training + serving)"]) <= 1.0, f"{r['variant']}: utilisation in (0, 1]")
        finished, arrived = (int(x) for x in r["requests finished / arrived"].split(" / "))
        check(0 < finished <= arrived, f"{r['variant']}: requests finished {finished} of {arrived}")
    static = rows[0]
    check(static["peak replicas"] == "2", f"static partitioning runs the quick size's 2 replicas, got {static['peak replicas']}")
    check(abs(float(static["replica-hours / span-hours"]) - 2.0) < 1e-3, f"static partitioning holds 2 replicas all span, got {static['replica-hours / span-hours']}")
    check(float(static["borrowed GPU-hours"]) == 0.0, "static partitioning lends nothing")
    check(float(rows[1]["replica-hours / span-hours"]) <= 2.0 + 1e-9, "reactive holds at most the peak replicas")
if os.path.exists(claims_path):
    claims = list(csv.DictReader(open(claims_path)))
    check(len(claims) == 3 and all(c["verdict"] for c in claims), f"three claims with verdicts, got {len(claims)}")
print("FAILED" if failures else "OK: 08's table and invariants")
sys.exit(1 if failures else 0)
