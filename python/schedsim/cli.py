"""`python -m schedsim compare|sweep|evaluate ...`: the CLI's comparisons with Python
policies and agents ("py:module:function") among the built-in policies.

The C++ `schedsim` binary embeds no Python interpreter (its sweep runs each run as a
`schedsim run` process), so a run that calls Python goes through this entry point, which
drives the same C++ runner and writers through the extension (docs/python.md).
"""
import argparse
import os
import sys

_USAGE = """usage: python -m schedsim COMMAND ...

commands (Python policies and agents allowed as py:module:function):
  compare SCENARIO [--policies LIST] [--seeds SEEDS] [--out DIR] [--baseline LABEL] [--set KEY=VALUE]...
  sweep GRID.yaml [--out DIR]
  evaluate SCENARIO AGENT [--seeds SEEDS] [--out DIR] [--name LABEL] [--set KEY=VALUE]...

Every other command is the C++ CLI's (build/schedsim, or the installed schedsim command)."""


def _seeds(text):
    """"1-8" (a range), "1,5,9" or "7"."""
    out = []
    for part in text.split(","):
        part = part.strip()
        lo, dash, hi = part.partition("-")
        try:
            if dash:
                a, b = int(lo), int(hi)
                if b < a:
                    raise ValueError
                out += list(range(a, b + 1))
            else:
                out.append(int(part))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected seeds as N, N-M or N,M,..., got {text!r}") from None
    return out


def _policies(text):
    """Comma-separated specs; a {...} map may contain commas."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    specs = []
    for p in out:
        if p.startswith("{"):
            import yaml

            specs.append(yaml.safe_load(p))
        else:
            specs.append(p)
    return specs


def _print_table(table):
    try:
        print(table.to_string(index=False))
    except AttributeError:
        for row in table:
            print(row)


def _compare(args):
    import schedsim

    policies = args.policies if args.policies else ["fifo", "sjf"]
    c = schedsim.compare(args.scenario, policies, seeds=args.seeds, out=args.out, baseline=args.baseline, overrides=args.set)
    print(c)
    print(f"mean over {len(c.text)} seed(s):")
    _print_table(c.table)
    if args.out:
        print(f"results in {args.out}/ (per seed: seed_<N>/<policy>/results.json, jobs.csv, comparison.md)")


_GRID_KEYS = ("scenario", "parameters", "policies", "seeds")


def _sweep(args):
    import yaml

    import schedsim

    with open(args.grid, encoding="utf-8") as f:
        grid = yaml.safe_load(f)
    where = args.grid
    if not isinstance(grid, dict):
        raise ValueError(f"{where}: expected a map with keys {', '.join(_GRID_KEYS)}")
    unknown = [k for k in grid if k not in _GRID_KEYS]
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r} (expected {', '.join(_GRID_KEYS)})")
    if "scenario" not in grid or "seeds" not in grid:
        raise ValueError(f"{where}: expected the keys scenario and seeds")
    scenario = grid["scenario"]
    if isinstance(scenario, str):
        scenario = os.path.join(os.path.dirname(os.path.abspath(args.grid)), scenario)
    seeds = grid["seeds"]
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        if seeds < 1:
            raise ValueError(f"{where}: seeds: expected a positive count or a list of seeds, got {seeds}")
        seeds = list(range(1, seeds + 1))
    runs, summary = schedsim.sweep(scenario, grid.get("parameters"), grid.get("policies"), seeds, out=args.out)
    _print_table(summary)
    print(f"{len(runs)} runs; results in {args.out}/ (runs/<run id>/, sweep.csv, summary.csv)")


def _evaluate(args):
    import schedsim

    e = schedsim.evaluate(args.scenario, args.agent, seeds=args.seeds, out=args.out, name=args.name, overrides=args.set)
    _print_table(e.summary)
    print(f"{e.name}: {e.agent_decisions} agent decisions, {e.invalid_actions} invalid actions remapped")


def schedsim_errors():
    import schedsim

    return (schedsim.SimError,)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(_USAGE)
        return 0
    p = argparse.ArgumentParser(prog="python -m schedsim")
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compare", help="policies and agents on one scenario, over seeds")
    c.add_argument("scenario", nargs="?", default=None, help="a scenario file (default: the built-in default scenario)")
    c.add_argument("--policies", type=_policies, default=None, help="comma-separated: built-in specs and py:module:function (default fifo,sjf)")
    c.add_argument("--seeds", type=_seeds, default=None, help="N, N-M or N,M,... (default: the scenario's seed)")
    c.add_argument("--out", default=None)
    c.add_argument("--baseline", default=None)
    c.add_argument("--set", action="append", default=None, metavar="KEY=VALUE")
    s = sub.add_parser("sweep", help="a sweep grid whose policies may be py:module:function")
    s.add_argument("grid")
    s.add_argument("--out", default="results/sweep")
    e = sub.add_parser("evaluate", help="one agent or policy over seeds")
    e.add_argument("scenario")
    e.add_argument("agent", help="py:module:function (or module:function), or a built-in policy")
    e.add_argument("--seeds", type=_seeds, default=None)
    e.add_argument("--out", default=None)
    e.add_argument("--name", default=None)
    e.add_argument("--set", action="append", default=None, metavar="KEY=VALUE")
    if argv[0] not in ("compare", "sweep", "evaluate"):
        print(f"schedsim: error: python -m schedsim: command {argv[0]!r} is the C++ CLI's (run build/schedsim {argv[0]} or the "
              "installed schedsim command); this entry point has compare, sweep and evaluate", file=sys.stderr)
        return 2
    args = p.parse_args(argv)
    sys.path.insert(0, os.getcwd())  # py:module:function finds modules of the current folder
    try:
        {"compare": _compare, "sweep": _sweep, "evaluate": _evaluate}[args.command](args)
    except (schedsim_errors() + (ValueError, TypeError, ImportError, AttributeError, OSError)) as ex:
        print(f"schedsim: error: {ex}", file=sys.stderr)
        return 1
    return 0
