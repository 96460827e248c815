"""Where the reproduction scripts write (experiments/repro/common.py): the run folder by
default, the committed docs/figures/repro only with --update-docs, which --quick and
--figures refuse. Argument parsing only; nothing is run.

    python3 tests/experiments/test_repro_paths.py CLI TMPDIR
"""
import io
import os
import sys
from contextlib import redirect_stderr

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "experiments", "repro"))
import common  # noqa: E402

cli, tmp = sys.argv[1], sys.argv[2]
if common.plt is None:
    print(f"SKIPPED: parse_args needs matplotlib ({common.MATPLOTLIB_ERROR})")
    sys.exit(common.SKIP)
failures = []


def parse(*argv):
    sys.argv = ["NN_test.py", "--cli", cli, *argv]
    err = io.StringIO()
    try:
        with redirect_stderr(err):
            return common.parse_args("", "NN_test"), ""
    except SystemExit as e:
        return e.code, err.getvalue().strip().splitlines()[-1]


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAILED:", what)


out = os.path.join(tmp, "run")
args, _ = parse("--out", out)
check(args.figures == out, f"a full run writes its figures to --out, not docs: got {args.figures}")
args, _ = parse("--out", out, "--quick")
check(args.figures == out, f"--quick writes its figures to --out: got {args.figures}")
args, _ = parse("--out", out, "--figures", os.path.join(tmp, "figs"))
check(args.figures == os.path.join(tmp, "figs"), f"--figures DIR is used: got {args.figures}")
args, _ = parse("--out", out, "--update-docs")
check(args.figures == common.PUBLISHED, f"--update-docs writes docs/figures/repro: got {args.figures}")
code, msg = parse("--out", out, "--update-docs", "--quick")
check(code == 2 and msg == "NN_test.py: error: --update-docs publishes a full run's numbers; drop --quick", f"--update-docs --quick: {code} {msg!r}")
code, msg = parse("--out", out, "--update-docs", "--figures", tmp)
check(code == 2 and msg == "NN_test.py: error: --figures and --update-docs name two folders for the same files; give one",
      f"--update-docs --figures: {code} {msg!r}")
print("FAILED" if failures else "OK: the repro scripts write docs/figures only with --update-docs")
sys.exit(1 if failures else 0)
