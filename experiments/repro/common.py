"""Shared pieces of the reproduction scripts (experiments/repro/NN_*.py).

Each script runs the schedsim CLI (`sweep`, `compare`, `run`), never re-implements the
simulation, and writes NAME.csv, NAME.md (claim next to measurement, then the detailed
table) and NAME*.png into the figures folder: OUT by default, the committed
docs/figures/repro only with --update-docs. `--quick` runs a small version and checks
the numbers (what ctest runs); exit status 77 means "skipped" and the reason is printed.
"""
import argparse
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
CONFIGS = os.path.join(ROOT, "experiments", "configs")
# The shared data folder: SCHEDSIM_DATA as for the CLI (docs/config.md#data-folder).
DATA = os.environ.get("SCHEDSIM_DATA") or os.path.normpath(os.path.join(ROOT, "..", "shared", "data"))
PUBLISHED = os.path.join(ROOT, "docs", "figures", "repro")
SKIP = 77  # ctest's SKIP_RETURN_CODE for these tests

try:
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt
except ImportError as e:
    plt = None
    MATPLOTLIB_ERROR = str(e)

sys.path.insert(0, os.path.join(ROOT, "app"))  # report.py, beside the `schedsim report` command
if plt is not None:
    from report import markdown_table, num_devices  # noqa: E402  (report.py needs matplotlib and pandas too)


def skip(reason):
    print(f"SKIPPED: {reason}")
    sys.exit(SKIP)


def parse_args(doc, name, extra=None):
    """The options every script has; `extra(parser)` adds the script's own."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "schedsim"), help="the schedsim binary (default build/schedsim)")
    ap.add_argument("--out", default=None, help=f"folder for the runs (default results/repro/{name}, or .../{name}_quick)")
    ap.add_argument("--figures", default=None, help="folder for the table and figures (default OUT)")
    ap.add_argument("--update-docs", action="store_true",
                    help="write the table and figures to the committed docs/figures/repro (the published ones) instead of OUT")
    ap.add_argument("--quick", action="store_true", help="a small version that checks its numbers (the ctest test)")
    ap.add_argument("--jobs", type=int, default=2, help="parallel runs of schedsim sweep (default 2)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the finished runs of an interrupted run in OUT (schedsim sweep resumes); by default they are redone")
    if extra:
        extra(ap)
    args = ap.parse_args()
    if args.out is None:
        args.out = os.path.join("results", "repro", name + ("_quick" if args.quick else ""))
    if args.update_docs and args.figures is not None:
        ap.error("--figures and --update-docs name two folders for the same files; give one")
    if args.update_docs and args.quick:
        ap.error("--update-docs publishes a full run's numbers; drop --quick")
    if args.figures is None:
        # The committed figures change only when asked: a trial run must not rewrite them.
        args.figures = PUBLISHED if args.update_docs else args.out
    if plt is None:
        message = f"needs matplotlib and pandas ({MATPLOTLIB_ERROR}); install them with: pip install matplotlib pandas"
        if args.quick:
            skip(message)
        sys.exit(f"{name}: {message}")
    if not os.access(args.cli, os.X_OK):
        sys.exit(f"{name}: no schedsim binary at {args.cli}; build it (README.md) or pass --cli")
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.figures, exist_ok=True)
    args.name = name
    args.started = time.time()
    return args


def run_cli(cli, *argv):
    """Runs schedsim; on failure stops with its stderr, so a bad scenario is named."""
    p = subprocess.run([cli, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"command failed (exit {p.returncode}): {' '.join([cli, *argv])}\n{p.stderr.strip()}")
    return p.stdout


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def read_json(path):
    with open(path) as f:
        return json.load(f)


def number(cell):
    """A CSV cell as a float; None when empty; the text itself when it is not a number."""
    if cell in ("", None):
        return None
    try:
        return float(cell)
    except ValueError:
        return cell


def sweep(args, grid, out_dir):
    """Runs `schedsim sweep` on `grid` (a dict, written as YAML's JSON subset to
    OUT/grid.yaml; a `scenario` path should be absolute) with `args.jobs` workers. Returns
    (sweep rows, summary rows), each cell of a metric as a float (None when empty), and each
    row's `label`: the name of its policy in `grid["policies"]` order when `labels` is given.
    Unless `args.resume`, earlier runs in OUT are removed first: the sweep would otherwise
    reuse them, even when they came from another binary or scenario."""
    labels = grid.pop("labels", None)
    if not args.resume:
        for folder in ("runs", "logs"):
            shutil.rmtree(os.path.join(out_dir, folder), ignore_errors=True)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "grid.yaml")
    with open(path, "w") as f:
        json.dump(grid, f, indent=1)
    run_cli(args.cli, "sweep", path, "--out", out_dir, "--jobs", str(args.jobs))
    tables = []
    for name in ("sweep.csv", "summary.csv"):
        rows = read_csv(os.path.join(out_dir, name))
        order = []
        for r in rows:  # policies appear in grid order within each parameter combination
            if r["policy"] not in order:
                order.append(r["policy"])
        for r in rows:
            r["label"] = labels[order.index(r["policy"])] if labels else r["policy"]
            for k, v in r.items():
                if k not in ("run_id", "policy", "label"):
                    r[k] = number(v)
        tables.append(rows)
    return tables


def run_results(out_dir, run_id):
    return read_json(os.path.join(out_dir, "runs", run_id, "results.json"))


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def fmt(v, digits=3):
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    return f"{v:.{digits}g}" if abs(v) < 10 ** digits else f"{v:,.0f}"


def pct(v):
    return "-" if v is None else f"{100 * v + 0.0:.1f}%"  # + 0.0: no "-0.0%"


# Student's t quantile t(0.975, df) for the 95% confidence interval of a mean over seeds.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        12: 2.179, 15: 2.131, 20: 2.086, 30: 2.042}


def t975(df):
    """t(0.975, df); between tabulated values the next smaller df's (a wider interval)."""
    return T975[max(k for k in T975 if k <= df)] if df < 30 else 1.96 + 2.4 / df


def mean_ci(xs):
    """(mean, 95% CI half-width by Student's t) of the numbers in xs (None left out); the
    half-width is None with fewer than two numbers: one seed gives no interval."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return None, None
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, None
    return m, t975(len(xs) - 1) * stdev(xs) / math.sqrt(len(xs))


# The one rule by which every script judges a claim (printed beside each verdict).
VERDICT_RULE = ("reproduced: the mean over seeds lies in the claim's range and, where the claim has a direction, "
                "its 95% CI is clear of no effect; partly: the direction holds (CI clear of no effect) but the mean "
                "misses the range, or (a claim without a direction) the mean misses the range but its CI reaches it, "
                "or a single seed (no CI) lies in the range; not reproduced: otherwise, including a CI that covers no effect")


def verdict(mean_value, ci95, low=None, high=None, no_effect=None):
    """'reproduced', 'partly' or 'not reproduced' (VERDICT_RULE) for a measured mean with its
    95% CI half-width (None: one seed), against the claim's range [low, high] (None = open
    end) and the value that means "no effect" (None = a claim without a direction)."""
    if mean_value is None:
        return "not reproduced"
    lo = -math.inf if low is None else low
    hi = math.inf if high is None else high
    in_range = lo <= mean_value <= hi
    # The claimed side of "no effect" is where the claim's range lies.
    above = no_effect is not None and lo >= no_effect
    below = no_effect is not None and hi <= no_effect
    if not (above or below):
        clear = True  # no direction to establish
    elif ci95 is None:
        clear = None  # one seed: unknown
    else:
        clear = mean_value - ci95 > no_effect if above else mean_value + ci95 < no_effect
    if in_range and clear is True:
        return "reproduced"
    if clear is None:
        return "partly" if in_range else "not reproduced"
    if clear and (above or below):
        return "partly"  # the direction holds, the size misses
    if clear and ci95 is not None and mean_value - ci95 <= hi and mean_value + ci95 >= lo:
        return "partly"
    return "not reproduced"


def rule_text(low=None, high=None, no_effect=None, unit=lambda v: f"{v:g}"):
    """The claim's range and no-effect value as written next to the claim."""
    if low is not None and high is not None:
        r = f"in [{unit(low)}, {unit(high)}]"
    elif low is not None:
        r = f">= {unit(low)}"
    elif high is not None:
        r = f"<= {unit(high)}"
    else:
        r = "any"
    return r + ("" if no_effect is None else f"; no effect = {unit(no_effect)}")


def claim(what, published, values, how, low=None, high=None, no_effect=None, unit=lambda v: f"{v:.3g}"):
    """One row of the claim table: the claim, the published number, the measured mean
    ± 95% CI over `values` (one per seed), how it was measured, the range the verdict
    uses (next to the claim) and the verdict. Also printed, so that a log shows it."""
    m, h = mean_ci(values)
    n = len([v for v in values if v is not None])
    measured = "-" if m is None else unit(m) + ("" if h is None else f" ± {unit(h)}") + f" (n={n})"
    v = verdict(m, h, low, high, no_effect)
    print(f"claim: {what}: in the field {published}; measured {measured}; rule {rule_text(low, high, no_effect, unit)}; verdict: {v}")
    return [what, published, measured, how, rule_text(low, high, no_effect, unit), v]


def write_tables(args, title, claims, detail_header, detail_rows, notes=""):
    """NAME.csv: the claim table (claim, published, measured, how measured).
    NAME.md: a title, the claim table, the detailed table and notes."""
    stem = os.path.join(args.figures, args.name)
    claim_header = ["claim", "in the field", "schedsim measures (mean ± 95% CI over seeds)", "how", "verdict rule", "verdict"]
    claims = [row if len(row) == len(claim_header) else row + ["", "no verdict (context)"] for row in claims]
    with open(stem + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(claim_header)
        w.writerows(claims)
    with open(stem + "_detail.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(detail_header)
        w.writerows(detail_rows)
    mode = "quick (--quick)" if args.quick else "full"
    text = [f"# {title}\n", f"Mode: {mode}. Command: `python3 experiments/repro/{args.name}.py{' --quick' if args.quick else ''}`.\n",
            markdown_table(claim_header, [[str(c) for c in row] for row in claims]),
            markdown_table(detail_header, [[str(c) for c in row] for row in detail_rows])]
    text.append(f"Verdicts: {VERDICT_RULE}.\n")
    if notes:
        text.append(notes.strip() + "\n")
    images = sorted(f for f in os.listdir(args.figures) if f.startswith(args.name) and f.endswith(".png"))
    text += [f"![{i}]({i})\n" for i in images]
    with open(stem + ".md", "w") as f:
        f.write("\n".join(text))
    print(markdown_table(claim_header, [[str(c) for c in row] for row in claims]))
    print(f"tables: {stem}.csv, {stem}.md, {stem}_detail.csv")


def save_figure(args, fig, suffix):
    path = os.path.join(args.figures, f"{args.name}_{suffix}.png")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    print(f"figure: {path}")


class Checks:
    """Collects failed sanity expectations (what the ctest tests check); `finish` prints
    them, or that they passed. The claims are judged apart, by `claim` / `verdict`."""

    def __init__(self):
        self.problems = []

    def expect(self, ok, message):
        if not ok:
            self.problems.append(message)
        return ok

    def within(self, measured, expected, rel_tol, what):
        ok = measured is not None and abs(measured - expected) <= rel_tol * abs(expected)
        return self.expect(ok, f"{what}: measured {measured}, expected {expected:.6g} within {100 * rel_tol:g}%")

    def finish(self, args):
        print(f"wall time: {time.time() - args.started:.1f} s")
        if self.problems:
            print("CHECK FAILED:\n  " + "\n  ".join(self.problems), file=sys.stderr)
            return 1
        # Sanity and direction checks only: whether the claims hold is the verdicts' job.
        print("sanity checks passed (not a verdict on the claims: see the verdicts above)")
        return 0


def resolved_config(cli, scenario, out_dir, *sets):
    """The scenario with every default filled in, as schedsim resolves it (from a one-job
    run, so no YAML parser is needed here)."""
    probe = os.path.join(out_dir, "probe")
    argv = ["run", scenario, "--quiet", "--out", probe, "--set", "workload.synthetic.num_jobs=1"]
    for s in sets:
        argv += ["--set", s]
    run_cli(cli, *argv)
    return read_json(os.path.join(probe, "results.json"))["config"]


def mean_gpu_seconds(config):
    """E[GPUs] x E[duration] of a synthetic workload (lognormal or exponential durations)."""
    w = config["workload"]["synthetic"]
    gpus = w["gpus"]
    mean_gpus = sum(int(k) * p for k, p in gpus.items()) if isinstance(gpus, dict) else float(gpus)
    d = w["duration_s"]
    mean_s = {"lognormal": lambda: d["median"] * math.exp(d["sigma"] ** 2 / 2),
              "exponential": lambda: d["mean"], "constant": lambda: d["value"]}[d["dist"]]()
    return mean_gpus * mean_s


def compare(cli, scenario, policies, out_dir, *extra):
    """Runs `schedsim compare` with one --policy per entry of `policies` (a name, "rl:PATH"
    or a dict, written as JSON, which YAML reads), and returns comparison.csv's rows in
    policy order, each with `results` (that run's results.json)."""
    argv = ["compare", scenario, "--quiet", "--out", out_dir, *extra]
    for p in policies:
        argv += ["--policy", p if isinstance(p, str) else json.dumps(p)]
    run_cli(cli, *argv)
    with open(os.path.join(out_dir, "comparison.csv")) as f:
        lines = f.read().splitlines()
    header = lines[0].split(",")
    rows = []
    for line in lines[1:]:
        # Split from the right: a policy label may itself hold commas (fifo(placement=a,b=c)).
        cells = line.rsplit(",", len(header) - 1)
        row = {k: (cells[0] if k == "policy" else number(v)) for k, v in zip(header, cells)}
        folder = "".join("_" if ch in "/\\:" else ch for ch in row["policy"])  # as compare names it
        row["results"] = read_json(os.path.join(out_dir, folder, "results.json"))
        rows.append(row)
    if len(rows) != len(policies):
        sys.exit(f"{out_dir}/comparison.csv has {len(rows)} rows for {len(policies)} policies")
    return rows


def has_torch(cli, scenario, out_dir):
    """Whether this schedsim can run learned schedulers (it was built with LibTorch)."""
    p = subprocess.run([cli, "eval", scenario, "--policy", "rl:" + os.path.join(out_dir, "no_such_agent.pt"), "--quiet",
                        "--out", os.path.join(out_dir, "probe_torch")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return "no LibTorch" not in p.stderr


def stdev(xs):
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else None
