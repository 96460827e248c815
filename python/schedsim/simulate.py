"""schedsim.simulate(): one run, exactly as `schedsim run` does it."""
import json
from dataclasses import dataclass, field

from . import _schedsim
from .config import load_config


@dataclass
class SimulationResult:
    """The outcome of simulate().

    summary       dict equal to results.json["summary"] of the CLI for the same config and seed
    jobs          one record per finished job, in completion order (the columns of
                  jobs.csv): a pandas DataFrame when pandas is installed, else a dict of
                  columns (numpy arrays; job_id and status lists of str)
    results       the whole results.json document as a dict
    results_json  the exact text the CLI writes to results.json
    """

    summary: dict
    jobs: object
    results: dict
    results_json: str
    stats: dict = field(default_factory=dict)

    @property
    def policy(self):
        return self.results["policy"]

    @property
    def seed(self):
        return self.results["seed"]

    @property
    def warnings(self):
        return self.results["warnings"]


def _jobs_frame(text):
    """jobs.csv text -> a DataFrame (as pandas.read_csv reads the CLI's file), or without
    pandas a dict of columns: job_id and status as lists of str, the rest float64 arrays
    (empty cells, e.g. energy columns without `energy:`, are NaN)."""
    try:
        import pandas
    except ImportError:
        import csv
        import io

        import numpy

        rows = list(csv.reader(io.StringIO(text)))
        header, body = rows[0], rows[1:]
        out = {}
        for i, name in enumerate(header):
            values = [r[i] for r in body]
            if name in ("job_id", "status"):
                out[name] = values
            else:
                out[name] = numpy.array([float(v) if v != "" else numpy.nan for v in values], dtype=numpy.float64)
        return out
    import io

    return pandas.read_csv(io.StringIO(text), dtype={"job_id": str})


def simulate(config=None, policy=None, *, seed=None, overrides=None, check_invariants=False):
    """Runs a scenario to the end and returns a SimulationResult.

    config: anything load_config() accepts (path, YAML text, dict, Config, None = the
    built-in default). policy: None (the scenario's), a built-in policy name ("sjf"),
    a config dict ({"name": "sjf", "by": "estimate"}), or a Python policy object (a
    schedsim.Policy subclass instance, or anything with a decide(view) method).
    seed/overrides: as load_config. check_invariants: verify the kernel's invariants
    after every event (slow).

    The GIL is released while the simulation runs (and taken only around the calls into
    a Python policy).
    """
    if not isinstance(check_invariants, bool):
        raise TypeError(f"check_invariants: expected a bool, got {type(check_invariants).__name__}")
    cfg = load_config(config, overrides=overrides, seed=seed)
    out = _schedsim.simulate(cfg._scenario, policy, check_invariants)
    results = json.loads(out["results_json"])
    return SimulationResult(
        summary=results["summary"],
        jobs=_jobs_frame(out["jobs_csv"]),
        results=results,
        results_json=out["results_json"],
        stats=out["stats"],
    )
