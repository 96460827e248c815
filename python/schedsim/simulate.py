"""schedsim.simulate(): one run, exactly as `schedsim run` does it."""
import json
from dataclasses import dataclass, field

import numpy

from . import _schedsim
from .config import load_config


# The columns of jobs.csv, in its order.
JOB_COLUMNS = (
    "job_id", "submit_s", "start_s", "end_s", "num_gpus", "jct_s", "queue_delay_s", "status", "gpu_s", "checkpoint_gpu_s",
    "preemptions", "moves", "loss_spike_restarts", "failure_restarts", "periodic_checkpoint_gpu_s", "restart_gpu_s",
    "lost_gpu_s", "energy_kwh", "cost_usd", "co2_kg",
)
_INT_COLUMNS = ("num_gpus", "preemptions", "moves", "loss_spike_restarts", "failure_restarts")
_STR_COLUMNS = ("job_id", "status")


def _string_array(values):
    """str values -> numpy's variable-width StringDType (numpy >= 2: 16 bytes a value up to
    15 bytes long, no Python object each), else an object array of str."""
    dtypes = getattr(numpy, "dtypes", None)
    if dtypes is not None and hasattr(dtypes, "StringDType"):
        return numpy.asarray(values).astype(dtypes.StringDType())
    return numpy.array([v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in numpy.asarray(values).tolist()], dtype=object)


def _whole_numbers_in_csv(column):
    """True when jobs.csv writes every value of this float column without a decimal point
    or exponent (whole seconds; "%.9g" below 1e9), so that read_csv infers int64."""
    if len(column) == 0 or not numpy.isfinite(column).all():
        return False
    return bool((numpy.floor(column) == column).all() and (numpy.abs(column) < 1e9).all())


class JobTable:
    """The per-job records of a run (the rows of the CLI's jobs.csv, in completion order)
    as columns: one read-only numpy array per jobs.csv column, each of len(table) rows.

    table["jct_s"]     a column (numpy array: float64 seconds; int32/uint32 counts;
                       job_id and status as strings, numpy.dtypes.StringDType)
    table[i]           row i as a dict {column: value}
    len(table), table.columns, iter(table) (the column names), "jct_s" in table,
    table.keys() / values() / items()
    table.to_dataframe()   a pandas DataFrame equal to pandas.read_csv(jobs.csv, dtype={"job_id": str})
    table.nbytes       bytes held by the columns

    A column whose every row holds the same value (e.g. preemptions under fifo; the energy
    columns, NaN, without `energy:`) is stored once and broadcast (numpy.broadcast_to).
    """

    def __init__(self, columns, rows):
        self._columns = columns
        self._rows = rows

    @classmethod
    def _from_native(cls, native):
        rows = native["rows"]
        names = native["status_names"]
        columns = {}
        for name in JOB_COLUMNS:
            if name == "job_id":
                ids = native["job_id"]
                if not native["ids_ascii"]:
                    ids = numpy.char.decode(ids, "utf-8")
                column = _string_array(ids)
            elif name not in native:  # the energy columns without `energy:`: empty cells
                column = numpy.broadcast_to(numpy.float64(numpy.nan), (rows,))
            else:
                kind, value = native[name]
                if name == "status":
                    table = _string_array(names)
                    column = numpy.broadcast_to(table[value : value + 1], (rows,)) if kind == "constant" else table[value]
                elif kind == "constant":
                    dtype = numpy.int32 if name == "num_gpus" else numpy.uint32 if name in _INT_COLUMNS else numpy.float64
                    column = numpy.broadcast_to(numpy.array(value, dtype=dtype), (rows,))
                else:
                    column = value
            if column.flags.writeable:
                column.flags.writeable = False
            columns[name] = column
        return cls(columns, rows)

    @property
    def columns(self):
        return list(self._columns)

    @property
    def nbytes(self):
        """Bytes the columns hold (a broadcast column: its one value)."""
        # A broadcast column (stride 0) holds one value.
        return sum(c.itemsize if c.ndim and c.strides[0] == 0 else c.nbytes for c in self._columns.values())

    def __len__(self):
        return self._rows

    def __getitem__(self, key):
        if isinstance(key, str):
            try:
                return self._columns[key]
            except KeyError:
                raise KeyError(f"no column {key!r}; the columns are {', '.join(self._columns)}") from None
        if isinstance(key, (int, numpy.integer)):
            i = int(key)
            if not -self._rows <= i < self._rows:
                raise IndexError(f"row {i} out of range for {self._rows} jobs")
            return {name: c[i].item() if hasattr(c[i], "item") else c[i] for name, c in self._columns.items()}
        raise TypeError(f"a JobTable is indexed by a column name or a row number, not {type(key).__name__}")

    def __iter__(self):
        return iter(self._columns)

    def __contains__(self, name):
        return name in self._columns

    def keys(self):
        return self._columns.keys()

    def values(self):
        return self._columns.values()

    def items(self):
        return self._columns.items()

    def equals(self, other):
        """Same columns, same values (NaN equal to NaN)."""
        if isinstance(other, JobTable):
            other = other._columns
        if list(other) != list(self._columns):
            return False
        for name, c in self._columns.items():
            o = numpy.asarray(other[name])
            if len(o) != len(c):
                return False
            if name in _STR_COLUMNS:
                if not (c == o.astype(c.dtype)).all():
                    return False
            elif not numpy.array_equal(c, o, equal_nan=c.dtype.kind == "f"):
                return False
        return True

    def to_dataframe(self):
        """A pandas DataFrame with the columns and dtypes pandas.read_csv gives for the
        CLI's jobs.csv (read with dtype={"job_id": str}): job_id and status as str, the
        counts as int64, the rest float64 but for a column of whole numbers only (e.g.
        checkpoint_gpu_s all 0), int64 as read_csv infers it. It holds a Python str per job_id and copies
        every column: several times the memory of the table."""
        import pandas

        data = {}
        for name, c in self._columns.items():
            if name in _STR_COLUMNS:
                data[name] = pandas.Series(c.astype(object), dtype=str)
            elif name in _INT_COLUMNS or _whole_numbers_in_csv(c):
                data[name] = c.astype(numpy.int64)
            else:
                data[name] = numpy.array(c, dtype=numpy.float64)
        return pandas.DataFrame(data)

    def __repr__(self):
        return f"JobTable({self._rows} jobs x {len(self._columns)} columns: {', '.join(self._columns)})"


@dataclass
class SimulationResult:
    """The outcome of simulate().

    summary       dict equal to results.json["summary"] of the CLI for the same config and seed
    jobs          a JobTable: the records of the CLI's jobs.csv (one per finished job, in
                  completion order) as numpy columns; jobs.to_dataframe() for pandas
    results       the whole results.json document as a dict
    results_json  the exact text the CLI writes to results.json
    """

    summary: dict
    jobs: JobTable
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

    def to_dataframe(self):
        """The per-job records as a pandas DataFrame (what `jobs` was before it became a
        JobTable): jobs.to_dataframe()."""
        return self.jobs.to_dataframe()


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
        jobs=JobTable._from_native(out["jobs"]),
        results=results,
        results_json=out["results_json"],
        stats=out["stats"],
    )
