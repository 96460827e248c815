#!/usr/bin/env python3
"""ctest: every figure kind of `schedsim report` (matplotlib) and of the CLI's own SVGs,
checked as a reviewer would look at them.

Draws, from tiny runs made here: a compare of 23 policies with an energy map and
--timeline (jct_cdf, timeline, energy, tradeoff_jct_emissions), a sweep over a
map-valued parameter with two policies (sweep_mean_jct_s, sweep_gpu_utilization,
sweep_goodput, tradeoff_jct_emissions) and a learning curve; and the compare's
jct_cdf.svg. For each figure:
  - the legend lies inside the saved canvas and does not overlap any axes,
  - the legend holds every series (none lost),
  - no two series of one axes share colour, line style and marker,
  - tick labels do not overlap one another, and times are in hours.
Also: --policies keeps only the named runs, in that order; --highlight fades the others.
Exits 77 (ctest: skipped) when matplotlib or pandas is missing.

    test_report_figures.py SCHEDSIM_BINARY WORK_DIR
"""
import contextlib
import importlib.util
import io
import os
import re
import shutil
import subprocess
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.colors as mcolors
    import matplotlib.figure
    import pandas  # noqa: F401
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.container import ErrorbarContainer
except ImportError as e:
    print(f"SKIP: schedsim report needs matplotlib and pandas ({e}); pip install matplotlib pandas")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT_PY = os.path.join(HERE, "..", "..", "app", "report.py")

SCENARIO = """
name: figures
seed: 3
information: oracle  # every policy runs (the figure needs 30+ series)
cluster:
  nodes:
    - {count: 2, type: V100, devices_per_node: 4}
workload:
  synthetic:
    num_jobs: 30
    arrival: {process: poisson, mean_interarrival_s: 300}
    duration_s: {dist: exponential, mean: 900}
    gpus: {1: 0.5, 2: 0.25, 4: 0.25}
energy: {}
signals:
  origin_utc: 2023-03-01T00:00:00Z
  carbon: {diurnal: {mean: 300, amplitude: 120, peak_hour_utc: 18}}
  price: {diurnal: {mean: 90, amplitude: 40, peak_hour_utc: 19}}
policy: fifo
"""

GRID = """
scenario: scenario.yaml
parameters:
  workload.synthetic.gpus: [{1: 0.5, 2: 0.25, 4: 0.25}, {1: 0.25, 2: 0.25, 4: 0.25, 8: 0.25}, {1: 1.0}]
policies: [fifo, sjf]
seeds: 2
"""

failures = []


def fail(msg):
    print("FAIL:", msg)
    failures.append(msg)


def load_report():
    spec = importlib.util.spec_from_file_location("schedsim_report", REPORT_PY)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Recorder:
    """Keeps each figure as report.py saves it, with the bbox_inches it was saved with."""

    def __init__(self):
        self.saved = []
        self._orig = matplotlib.figure.Figure.savefig

    def __enter__(self):
        rec = self

        def savefig(fig, fname, *a, **kw):
            rec._orig(fig, fname, *a, **kw)
            rec.saved.append((os.path.basename(str(fname)), fig, kw.get("bbox_inches")))

        matplotlib.figure.Figure.savefig = savefig
        return self

    def __exit__(self, *exc):
        matplotlib.figure.Figure.savefig = self._orig


def line_of(handle):
    return handle.lines[0] if isinstance(handle, ErrorbarContainer) else handle


def style_key(line):
    dashes = getattr(line, "_unscaled_dash_pattern", (None, None))[1]
    return (mcolors.to_hex(line.get_color()), line.get_linestyle(), tuple(dashes) if dashes else (), str(line.get_marker()))


def overlaps(a, b):
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def check_mpl(name, fig, bbox_inches):
    FigureCanvasAgg(fig)  # report.py closed the figure: give it a canvas to measure on again
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    # The canvas the PNG holds: the figure, or with bbox_inches="tight" the tight box (+ pad).
    if bbox_inches == "tight":
        tb = fig.get_tightbbox(r)
        pad = matplotlib.rcParams["savefig.pad_inches"]
        canvas = matplotlib.transforms.Bbox.from_extents(tb.x0 - pad, tb.y0 - pad, tb.x1 + pad, tb.y1 + pad).transformed(fig.dpi_scale_trans)
    else:
        canvas = fig.bbox
    axes = [ax for ax in fig.axes if ax.get_visible()]
    for ax in axes:
        handles, labels = ax.get_legend_handles_labels()
        if not labels:
            continue
        keys = [style_key(line_of(h)) for h in handles]
        dup = {k for k in keys if keys.count(k) > 1}
        if dup:
            fail(f"{name}: {len(keys)} series, {len(keys) - len(set(keys))} share colour and style with another (e.g. {sorted(dup)[0]})")
    legends = [ax.get_legend() for ax in axes if ax.get_legend() is not None]
    labelled = max((len(ax.get_legend_handles_labels()[1]) for ax in axes), default=0)
    if labelled > 1 and not legends:
        fail(f"{name}: {labelled} series and no legend")
    for leg in legends:
        box = leg.get_window_extent(r)
        if not (box.x0 >= canvas.x0 - 0.5 and box.y0 >= canvas.y0 - 0.5 and box.x1 <= canvas.x1 + 0.5 and box.y1 <= canvas.y1 + 0.5):
            fail(f"{name}: legend {box.extents.round(1)} outside the canvas {canvas.extents.round(1)}")
        for ax in axes:
            if overlaps(box, ax.get_window_extent(r)):
                fail(f"{name}: the legend covers an axes (legend {box.extents.round(1)}, axes {ax.get_window_extent(r).extents.round(1)})")
        shown = [t.get_text() for t in leg.get_texts()]
        owner = leg.axes
        want = owner.get_legend_handles_labels()[1]
        if shown != want:
            fail(f"{name}: the legend shows {len(shown)} of {len(want)} series")
    for ax in axes:
        for which, labels in (("x", ax.get_xticklabels()), ("y", ax.get_yticklabels())):
            boxes = [t.get_window_extent(r) for t in labels if t.get_visible() and t.get_text()]
            for i in range(len(boxes)):
                for j in range(i + 1, len(boxes)):
                    if overlaps(boxes[i], boxes[j]):
                        fail(f"{name}: {which} tick labels '{labels[i].get_text()}' and '{labels[j].get_text()}' overlap")
        for t in ax.get_xticklabels():
            if len(t.get_text()) > 30:
                fail(f"{name}: x tick label of {len(t.get_text())} characters: {t.get_text()!r}")
        if re.search(r"\(s\b|seconds", ax.get_xlabel() + ax.get_ylabel()):
            fail(f"{name}: axis in seconds ({ax.get_xlabel()!r} / {ax.get_ylabel()!r}); the tables use hours")
    print("checked", name)


def check_svg(path, series):
    svg = open(path).read()
    root = re.search(r"<svg [^>]*>", svg).group(0)
    w = float(re.search(r'width="([0-9.]+)"', root).group(1))
    h = float(re.search(r'height="([0-9.]+)"', root).group(1))
    m = re.search(r'<rect class="legend-box" x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)" height="([0-9.]+)"', svg)
    if not m:
        fail(f"{path}: no legend box")
        return
    x, y, bw, bh = map(float, m.groups())
    if x < 0 or y < 0 or x + bw > w or y + bh > h:
        fail(f"{path}: legend box {x, y, bw, bh} outside the {w}x{h} canvas")
    labels = re.findall(r'<text class="legend-label" x="([0-9.]+)" y="([0-9.]+)">([^<]*)', svg)
    if len(labels) != series:
        fail(f"{path}: {len(labels)} legend entries for {series} series")
    for lx, ly, text in labels:
        if float(ly) + 3 > y + bh or float(lx) + 7.2 * len(text) > x + bw:
            fail(f"{path}: legend entry {text!r} outside its box")
    styles = re.findall(r'<polyline class="series" fill="none" stroke="([^"]+)" stroke-width="[0-9.]+"(?: stroke-dasharray="([^"]+)")?', svg)
    if len(styles) != series or len(set(styles)) != series:
        fail(f"{path}: {len(styles)} series, {len(set(styles))} distinct styles")
    if "(h, log scale)" not in svg:
        fail(f"{path}: the JCT axis is not in hours")
    print("checked", path)


def run_report(report, *args):
    """report.py's main() as `report.py ARGS` would run it."""
    saved = sys.argv
    sys.argv = [REPORT_PY, *args]
    try:
        return report.main()
    finally:
        sys.argv = saved


def main():
    exe, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    with open(os.path.join(work, "scenario.yaml"), "w") as f:
        f.write(SCENARIO)
    with open(os.path.join(work, "grid.yaml"), "w") as f:
        f.write(GRID)
    cmp = os.path.join(work, "cmp")
    # Every registered policy this scenario can run, plus placement variants: 20+ series.
    variants = []
    for p in ("sjf", "srtf", "slurm-easy", "las"):
        variants += ["--policy", "{name: %s, placement: packed}" % p]
    subprocess.run([exe, "compare", os.path.join(work, "scenario.yaml"), "--policies", "all", *variants, "--timeline", "--quiet", "--out", cmp], check=True)
    n_cmp = len(pandas.read_csv(os.path.join(cmp, "comparison.csv")))
    if n_cmp < 20:
        fail(f"only {n_cmp} policies compared")
    check_svg(os.path.join(cmp, "jct_cdf.svg"), n_cmp)

    sweep = os.path.join(work, "sweep")
    subprocess.run([exe, "sweep", os.path.join(work, "grid.yaml"), "--out", sweep, "--jobs", "1"], check=True, stdout=subprocess.DEVNULL)

    train = os.path.join(work, "train")
    os.makedirs(train)
    with open(os.path.join(train, "learning_curve.csv"), "w") as f:
        f.write("step,episodes,updates,wall_s,mean_jct_s,eval_mean_jct_s\n")
        for k in range(12):
            f.write(f"{1000 * k},{k},{k},{k},{7200 - 200 * k},{'' if k % 3 else 7000 - 150 * k}\n")

    report = load_report()
    with Recorder() as rec:
        if run_report(report, cmp) != 0:
            fail("report on the compare folder failed")
        if run_report(report, sweep) != 0:
            fail("report on the sweep folder failed")
        if run_report(report, train) != 0:
            fail("report on the train folder failed")
        kinds = sorted({n for n, _, _ in rec.saved if not n.startswith("gantt_")})
        for name, fig, bbox in rec.saved:
            if not name.startswith("gantt_"):
                check_mpl(name, fig, bbox)
    want = ["energy.png", "jct_cdf.png", "learning_curve.png", "sweep_gpu_utilization.png", "sweep_mean_jct_s.png", "timeline.png", "tradeoff_jct_emissions.png"]
    missing = [k for k in want if k not in kinds]
    if missing:
        fail(f"figure kinds not drawn: {missing} (drawn: {kinds})")

    # --policies: only those runs, in that order; --highlight: the others faded.
    sel = os.path.join(work, "selected")
    with Recorder() as rec:
        run_report(report, cmp, "--out", sel, "--policies", "sjf,fifo,sjf(placement=packed)", "--highlight", "sjf")
        figs = {n: f for n, f, _ in rec.saved}
    cdf = figs.get("jct_cdf.png")
    if cdf is None:
        fail("--policies: no jct_cdf.png")
    else:
        labels = cdf.axes[0].get_legend_handles_labels()[1]
        if labels != ["sjf", "fifo", "sjf(placement=packed) (= sjf)"]:  # identical runs say so
            fail(f"--policies: legend {labels}")
        lines = {l.get_label(): l for l in cdf.axes[0].get_lines()}
        if not (lines["sjf"].get_linewidth() > 2 * lines["fifo"].get_linewidth() and lines["fifo"].get_alpha() < 0.5):
            fail("--highlight: sjf is not drawn bolder than the others")
    md = open(os.path.join(sel, "report.md")).read()
    if "| fifo |" not in md or "| srtf |" in md:
        fail("--policies: report.md's run table is not restricted to the chosen policies")

    # A name that no run has: exit 1 and the runs there are, nothing drawn.
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = run_report(report, cmp, "--out", os.path.join(work, "none"), "--policies", "fifo_typo")
    want = f"schedsim report: error: --policies fifo_typo: no run of {cmp} has these policies (it has: fifo, sjf, srtf,"
    if rc != 1 or not err.getvalue().startswith(want) or os.path.exists(os.path.join(work, "none")):
        fail(f"--policies with an unknown name: exit {rc}, stderr {err.getvalue()!r}")

    if failures:
        print(f"{len(failures)} problem(s)")
        sys.exit(1)
    print("ok: every figure kind passes")


if __name__ == "__main__":
    main()
