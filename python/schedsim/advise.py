"""schedsim.advise(): the compute advisor, exactly as `schedsim advise` runs it."""
import csv
import io
import os
from dataclasses import dataclass, field

from . import _schedsim
from .config import _looks_like_yaml

_TEXT_COLUMNS = {"plan", "start_utc", "finish_utc", "seg1_region", "seg1_device_type", "seg1_kind", "seg1_provider",
                 "seg2_region", "seg2_device_type", "seg2_kind", "seg2_provider"}
_INT_COLUMNS = {"rank", "pareto", "segments", "devices"}


@dataclass
class AdviseResult:
    """The outcome of advise().

    plans        one dict per feasible plan, best first (the columns of plans.csv, numbers
                 as float/int; empty fields of one-segment plans as None)
    plans_csv    the exact text the CLI writes to plans.csv
    table        the ranked table the CLI prints
    pareto_svg   the figure `schedsim advise --plot` writes
    evaluated    candidate plans evaluated
    rejected     (reason, count) for the candidates dropped
    """

    plans: list
    plans_csv: str
    table: str
    pareto_svg: str
    evaluated: int
    rejected: list = field(default_factory=list)

    @property
    def pareto(self):
        """The plans on the Pareto front of (finish, cost, emissions), in rank order."""
        return [p for p in self.plans if p["pareto"] == 1]

    def to_dataframe(self):
        """The plans as a pandas DataFrame (needs pandas)."""
        import pandas as pd

        return pd.read_csv(io.StringIO(self.plans_csv))


def _parse(value, column):
    if value == "":
        return None
    if column in _TEXT_COLUMNS:
        return value
    if column in _INT_COLUMNS:
        return int(value)
    return float(value)


def advise(job, *, objective="cost", top=10):
    """Plans a training job over the market of a scenario (docs/market.md, "Advisor").

    job: a path (str or os.PathLike) to a job YAML file, YAML text, or a dict with the
    same structure. objective: "cost", "finish" or "emissions" (the ranking).
    top: rows of the text table (0 = all); every feasible plan is in `plans`.

    Raises schedsim.InputError with the CLI's message for a bad job file and when no
    plan is feasible.
    """
    if not isinstance(objective, str):
        raise TypeError(f"objective: expected str, got {type(objective).__name__}")
    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        raise TypeError(f"top: expected a non-negative int, got {top!r}")
    if isinstance(job, dict):
        out = _schedsim.advise_dict(job, objective, top)
    elif isinstance(job, os.PathLike):
        out = _schedsim.advise_file(os.fspath(job), objective, top)
    elif isinstance(job, str):
        if not os.path.exists(job) and _looks_like_yaml(job):
            out = _schedsim.advise_string(job, "<string>", objective, top)
        else:
            out = _schedsim.advise_file(job, objective, top)
    else:
        raise TypeError(f"job: expected a path, YAML text or a dict, got {type(job).__name__}")
    if out["no_feasible_message"]:
        raise _schedsim.InputError("advise: " + out["no_feasible_message"])
    rows = list(csv.DictReader(io.StringIO(out["plans_csv"])))
    plans = [{k: _parse(v, k) for k, v in row.items()} for row in rows]
    return AdviseResult(plans=plans, plans_csv=out["plans_csv"], table=out["table"], pareto_svg=out["pareto_svg"],
                        evaluated=out["evaluated"], rejected=[tuple(r) for r in out["rejected"]])
