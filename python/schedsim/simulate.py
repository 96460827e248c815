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


def _numbered_ids(prefix, numbers):
    """prefix + the decimal number, per row (the ids JobIdColumn stored as numbers)."""
    dtypes = getattr(numpy, "dtypes", None)
    if dtypes is not None and hasattr(dtypes, "StringDType"):
        text = numbers.astype(dtypes.StringDType())
        return numpy.strings.add(prefix, text) if prefix else text
    return numpy.array([prefix + str(n) for n in numbers.tolist()], dtype=object)


def _seconds(ticks):
    """Microsecond ticks -> float64 seconds as the C++ computes them (double(us) / 1e6,
    both steps rounded to nearest): the same bits."""
    return numpy.asarray(ticks, dtype=numpy.int64) / 1e6


def _whole_numbers_in_csv(column):
    """True when jobs.csv writes every value of this float column without a decimal point
    or exponent (whole seconds; "%.9g" below 1e9), so that read_csv infers int64."""
    if len(column) == 0 or not numpy.isfinite(column).all():
        return False
    return bool((numpy.floor(column) == column).all() and (numpy.abs(column) < 1e9).all())


class _Derived:
    """A column computed when first read: compute(take) from the table's stored arrays,
    take(name) giving the rows of the stored array `name` (one of `sources`)."""

    __slots__ = ("compute", "sources")

    def __init__(self, compute, *sources):
        self.compute = compute
        self.sources = sources


def _native_value(kind, value, dtype):
    """A native ("array", ndarray) or ("constant", value) as an array or a numpy scalar."""
    return value if kind == "array" else dtype(value)


class JobTable:
    """The per-job records of a run (the rows of the CLI's jobs.csv, in completion order)
    as columns: one read-only numpy array per jobs.csv column, each of len(table) rows.

    table["jct_s"]     a column (numpy array: float64 seconds; int32/uint32 counts;
                       job_id and status as strings, numpy.dtypes.StringDType)
    table[i]           row i as a dict {column: value}
    len(table), table.columns, iter(table) (the column names), "jct_s" in table,
    table.keys() / values() / items()
    table.to_dataframe()   a pandas DataFrame equal to pandas.read_csv(jobs.csv, dtype={"job_id": str})
    table.nbytes       bytes the table holds now

    A column whose every row holds the same value (e.g. preemptions under fifo; the energy
    columns, NaN, without `energy:`) is stored once and broadcast (numpy.broadcast_to).
    What simulate() stores is what the columns are computed from: the times as int64
    microsecond ticks, num_gpus in a byte while it fits, the job ids as numbers after a
    common prefix where they are, the status codes. A column that is a formula of those
    (submit_s = submit_us / 1e6, jct_s = (end_us - submit_us) / 1e6, queue_delay_s,
    gpu_s, job_id, status, num_gpus) is computed when it is first read, with the C++
    arithmetic (the same bits as jobs.csv), and then kept; the stored arrays no column
    still needs are then freed.
    """

    def __init__(self, columns, rows, sources=None):
        self._columns = dict(columns)  # name -> read-only ndarray, or _Derived until first read
        self._rows = rows
        self._sources = dict(sources or {})  # what the _Derived columns are computed from

    @classmethod
    def _from_native(cls, native):
        rows = native["rows"]
        sources = {}
        columns = {}

        kind, *payload = native["job_id"]
        if kind == "numbered":
            prefix = payload[0].decode("utf-8")
            sources["job_number"] = payload[1]
            columns["job_id"] = _Derived(lambda take: _numbered_ids(prefix, take("job_number")), "job_number")
        else:
            ascii_ids = native["ids_ascii"]
            sources["job_id_bytes"] = payload[0]
            columns["job_id"] = _Derived(
                lambda take: _string_array(take("job_id_bytes") if ascii_ids else numpy.char.decode(take("job_id_bytes"), "utf-8")), "job_id_bytes")
        for name in ("submit_us", "start_us", "end_us"):
            sources[name] = _native_value(*native[name], numpy.int64)
        for name in ("held_us", "device_us"):
            kind, value = native[name]
            if kind != "derived":
                sources[name] = _native_value(kind, value, numpy.int64)
        kind, value = native["num_gpus"]
        sources["num_gpus"] = _native_value(kind, value, numpy.int32)
        stored_held = "held_us" in sources

        def held(take):  # time holding devices: end - start where the C++ did not store it
            return take("held_us") if stored_held else take("end_us") - take("start_us")

        held_sources = ("held_us",) if stored_held else ("end_us", "start_us")
        names = native["status_names"]
        kind, value = native["status"]
        sources["status_code"] = _native_value(kind, value, numpy.uint8)

        def status(take):  # (a 1-row array for one code: a StringDType scalar would be a str)
            return _string_array(names)[numpy.atleast_1d(take("status_code"))]

        derived = {
            "submit_s": _Derived(lambda take: _seconds(take("submit_us")), "submit_us"),
            "start_s": _Derived(lambda take: _seconds(take("start_us")), "start_us"),
            "end_s": _Derived(lambda take: _seconds(take("end_us")), "end_us"),
            "jct_s": _Derived(lambda take: _seconds(take("end_us") - take("submit_us")), "end_us", "submit_us"),
            "queue_delay_s": _Derived(lambda take: _seconds((take("end_us") - take("submit_us")) - held(take)), "end_us", "submit_us", *held_sources),
            "status": _Derived(status, "status_code"),
        }
        if "device_us" in sources:
            derived["gpu_s"] = _Derived(lambda take: _seconds(take("device_us")), "device_us")
        else:
            derived["gpu_s"] = _Derived(lambda take: _seconds(numpy.asarray(take("num_gpus"), dtype=numpy.int64) * held(take)), "num_gpus", *held_sources)
        num_gpus = sources["num_gpus"]
        if numpy.ndim(num_gpus) == 0:
            derived["num_gpus"] = numpy.broadcast_to(num_gpus, (rows,))
        elif num_gpus.dtype == numpy.int32:
            derived["num_gpus"] = num_gpus  # stored as it is read
        else:
            derived["num_gpus"] = _Derived(lambda take: take("num_gpus").astype(numpy.int32), "num_gpus")

        for name in JOB_COLUMNS:
            if name in columns:
                continue
            if name in derived:
                column = derived[name]
            elif name not in native:  # the energy columns without `energy:`: empty cells
                column = numpy.broadcast_to(numpy.float64(numpy.nan), (rows,))
            else:
                kind, value = native[name]
                if kind == "constant":
                    dtype = numpy.uint32 if name in _INT_COLUMNS else numpy.float64
                    column = numpy.broadcast_to(numpy.array(value, dtype=dtype), (rows,))
                else:
                    column = value
            columns[name] = column
        for column in columns.values():
            if isinstance(column, numpy.ndarray) and column.flags.writeable:
                column.flags.writeable = False
        return cls(columns, rows, sources)

    def _compute(self, derived, key):
        """The rows `key` (a slice) of a derived column."""

        def take(name):
            value = self._sources[name]
            return value if numpy.ndim(value) == 0 else value[key]

        column = derived.compute(take)
        if all(numpy.ndim(self._sources[s]) == 0 for s in derived.sources):  # every source stored once: so is the column
            column = numpy.broadcast_to(numpy.reshape(column, (-1,)), (len(range(*key.indices(self._rows))),))
        if column.flags.writeable:
            column.flags.writeable = False
        return column

    def _column(self, name, keep=True):
        """Column `name`; a derived one is computed, and kept when `keep`."""
        column = self._columns[name]
        if not isinstance(column, _Derived):
            return column
        column = self._compute(column, slice(None))
        if keep:
            self._columns[name] = column
            needed = {s for c in self._columns.values() if isinstance(c, _Derived) for s in c.sources}
            for source in [s for s in self._sources if s not in needed]:
                del self._sources[source]
        return column

    @property
    def columns(self):
        return list(self._columns)

    @property
    def nbytes(self):
        """Bytes the table holds now: its columns read so far and the stored arrays the
        others are computed from (a column stored once: its one value)."""
        held = {}
        for c in list(self._columns.values()) + list(self._sources.values()):
            if not isinstance(c, _Derived):
                held[id(c)] = c
        # A broadcast column (stride 0) holds one value.
        return sum(numpy.asarray(c).itemsize if numpy.ndim(c) == 0 or c.strides[0] == 0 else c.nbytes for c in held.values())

    def __len__(self):
        return self._rows

    def __getitem__(self, key):
        if isinstance(key, str):
            if key not in self._columns:
                raise KeyError(f"no column {key!r}; the columns are {', '.join(self._columns)}")
            return self._column(key)
        if isinstance(key, (int, numpy.integer)):
            i = int(key)
            if not -self._rows <= i < self._rows:
                raise IndexError(f"row {i} out of range for {self._rows} jobs")
            i %= self._rows
            row = {}
            for name, c in self._columns.items():
                v = self._compute(c, slice(i, i + 1))[0] if isinstance(c, _Derived) else c[i]
                row[name] = v.item() if hasattr(v, "item") else v
            return row
        raise TypeError(f"a JobTable is indexed by a column name or a row number, not {type(key).__name__}")

    def __iter__(self):
        return iter(self._columns)

    def __contains__(self, name):
        return name in self._columns

    def keys(self):
        return self._columns.keys()

    def values(self):
        for name in self._columns:
            self._column(name)
        return self._columns.values()

    def items(self):
        for name in self._columns:
            self._column(name)
        return self._columns.items()

    def __reduce__(self):  # pickles as its columns (the derived ones computed)
        return (JobTable, ({name: self._column(name, keep=False) for name in self._columns}, self._rows))

    def equals(self, other):
        """Same columns, same values (NaN equal to NaN)."""
        if isinstance(other, JobTable):
            other = {name: other._column(name, keep=False) for name in other._columns}
        if list(other) != list(self._columns):
            return False
        for name in self._columns:
            c = self._column(name, keep=False)
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
        every column: several times the memory of the table (which computes no column
        for it that it did not hold already)."""
        import pandas

        data = {}
        for name in self._columns:
            c = self._column(name, keep=False)
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
