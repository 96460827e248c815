"""simulate() is `schedsim run`: same results.json byte for byte, same jobs.csv records."""
import math
import subprocess

import pytest

import schedsim

pandas = pytest.importorskip("pandas")


def run_cli(cli, scenario, out, *args):
    subprocess.run([cli, "run", scenario, "--out", str(out), "--quiet", *args], check=True)
    return (out / "results.json").read_text(), pandas.read_csv(out / "jobs.csv", dtype={"job_id": str})


@pytest.mark.parametrize("policy", ["fifo", "sjf", "tiresias", "slurm-easy", "slurm"])
def test_results_json_equals_the_cli_byte_for_byte(cli, golden_yaml, tmp_path, policy):
    text, jobs_csv = run_cli(cli, golden_yaml, tmp_path, "--set", f"policy={policy}", "--seed", "9")
    r = schedsim.simulate(golden_yaml, policy=policy, seed=9)
    assert r.results_json == text  # the whole document, summary included
    assert r.policy == policy and r.seed == 9
    import json

    cli_summary = json.loads(text)["summary"]
    assert r.summary == cli_summary
    assert json.dumps(r.summary) == json.dumps(cli_summary)
    # Per-job records: the jobs.csv columns, same order, same values.
    assert_jobs_equal_the_csv(r.jobs, jobs_csv)


def assert_jobs_equal_the_csv(jobs, jobs_csv):
    """A JobTable holds the values pandas.read_csv reads from the CLI's jobs.csv, and its
    to_dataframe() is that DataFrame (columns, dtypes, values)."""
    assert isinstance(jobs, schedsim.JobTable)
    assert list(jobs.columns) == list(jobs_csv.columns)
    assert len(jobs) == len(jobs_csv)
    assert list(jobs["job_id"]) == list(jobs_csv["job_id"])
    for col in jobs.columns:
        if col in ("job_id", "status"):
            assert list(jobs[col]) == list(jobs_csv[col]), col
        else:
            ours, theirs = jobs[col].tolist(), jobs_csv[col].tolist()
            same = [a == b or (a != a and b != b) for a, b in zip(ours, theirs)]  # NaN: an empty cell
            assert all(same), (col, same.index(False))
    frame = jobs.to_dataframe()
    assert list(frame.dtypes) == list(jobs_csv.dtypes)
    pandas.testing.assert_frame_equal(frame, jobs_csv)
    assert jobs.equals(jobs_csv) and jobs.equals(jobs)


def test_energy_columns_equal_the_cli(cli, tmp_path):
    """With `energy:`, energy_kwh, cost_usd and co2_kg are the numbers the CLI writes
    ("%.9g"), not the unrounded doubles."""
    import pathlib

    config = pathlib.Path(__file__).resolve().parents[2] / "experiments" / "configs" / "carbon_de_lu.yaml"
    args = ["--set", "workload.synthetic.num_jobs=200", "--seed", "5"]
    _, jobs_csv = run_cli(cli, str(config), tmp_path, *args)
    r = schedsim.simulate(str(config), seed=5, overrides=["workload.synthetic.num_jobs=200"])
    assert jobs_csv["energy_kwh"].notna().all()
    assert_jobs_equal_the_csv(r.jobs, jobs_csv)


def test_policy_as_a_config_dict(golden_yaml):
    a = schedsim.simulate(golden_yaml, policy={"name": "fifo", "backfill": "easy"})
    b = schedsim.simulate(golden_yaml, overrides=["policy={name: fifo, backfill: easy}"])
    assert a.summary == b.summary
    assert a.results["config"]["policy"]["backfill"] == "easy"
    assert a.summary != schedsim.simulate(golden_yaml, policy="fifo").summary


def test_same_seed_same_result_other_seed_differs(golden_yaml):
    a = schedsim.simulate(golden_yaml, seed=3)
    b = schedsim.simulate(golden_yaml, seed=3)
    c = schedsim.simulate(golden_yaml, seed=4)
    assert a.results_json == b.results_json
    assert a.summary["mean_jct_s"] != c.summary["mean_jct_s"]


def test_summary_invariants(golden_yaml):
    r = schedsim.simulate(golden_yaml)
    s, jobs = r.summary, r.jobs
    assert s["jobs_completed"] == len(jobs) == 80
    assert math.isclose(s["mean_jct_s"], jobs["jct_s"].mean(), rel_tol=1e-12)
    assert math.isclose(s["allocated_gpu_hours"], jobs["gpu_s"].sum() / 3600, rel_tol=1e-12)
    # Exact in microsecond ticks; the seconds are doubles of them.
    assert (abs(jobs["jct_s"] - (jobs["end_s"] - jobs["submit_s"])) < 1e-6).all()


def test_errors(golden_yaml):
    with pytest.raises(schedsim.InputError, match="unknown policy 'nope'|nope"):
        schedsim.simulate(golden_yaml, policy="nope")
    with pytest.raises(TypeError, match="expected a policy name"):
        schedsim.simulate(golden_yaml, policy=42)
    with pytest.raises(TypeError, match="check_invariants: expected a bool"):
        schedsim.simulate(golden_yaml, check_invariants="yes")
    # A job larger than the cluster: the kernel's error, as a SimError.
    with pytest.raises(schedsim.SimError, match="cluster"):
        schedsim.simulate(golden_yaml, overrides=["cluster.nodes.0.count=1", "cluster.nodes.0.devices_per_node=2"])


def test_jobs_without_pandas_are_columns(golden_yaml, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas":
            raise ImportError("no pandas here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    r = schedsim.simulate(golden_yaml)
    assert len(r.jobs) == 80 and len(r.jobs["job_id"]) == 80 and r.jobs["jct_s"].dtype.name == "float64"
    with pytest.raises(ImportError, match="no pandas here"):
        r.jobs.to_dataframe()


def test_jobs_are_numpy_columns_not_objects(golden_yaml):
    """The shape of the result: one numpy array of len(jobs) rows per jobs.csv column, no
    object dtype (no Python object per job), read-only; rows and dict access still work."""
    import numpy

    r = schedsim.simulate(golden_yaml, policy="tiresias")
    jobs = r.jobs
    assert list(jobs) == list(jobs.columns) == list(jobs.keys())
    assert len(jobs.columns) == 20
    for name, column in jobs.items():
        assert isinstance(column, numpy.ndarray), name
        assert column.shape == (80,), name
        assert column.dtype != object, name
        assert not column.flags.writeable, name
    assert jobs["job_id"].dtype == numpy.dtypes.StringDType()
    assert jobs["num_gpus"].dtype == numpy.int32 and jobs["preemptions"].dtype == numpy.uint32
    assert jobs["preemptions"].max() > 0 and jobs["preemptions"].strides == (4,)
    # Without `energy:` the energy columns are empty cells (NaN), stored once; so is a
    # column whose every row holds the same value (no preemptions under fifo).
    fifo = schedsim.simulate(None, overrides=["workload.synthetic.num_jobs=50", "policy=fifo"]).jobs
    assert len(fifo) == 50 and fifo["energy_kwh"].shape == (50,)
    assert numpy.isnan(fifo["energy_kwh"]).all() and fifo["energy_kwh"].strides == (0,)
    assert fifo["preemptions"].tolist() == [0] * 50 and fifo["preemptions"].strides == (0,)
    assert list(fifo["status"]) == ["completed"] * 50 and fifo["status"].strides == (0,)
    assert fifo.nbytes < 50 * 80
    row = jobs[3]
    assert row["job_id"] == jobs["job_id"][3] and row["jct_s"] == jobs["jct_s"][3] and isinstance(row["num_gpus"], int)
    assert jobs[-1]["job_id"] == jobs["job_id"][79]
    with pytest.raises(IndexError, match="row 80 out of range for 80 jobs"):
        jobs[80]
    with pytest.raises(KeyError, match="no column 'jct'; the columns are job_id, submit_s"):
        jobs["jct"]
    assert repr(jobs).startswith("JobTable(80 jobs x 20 columns: job_id, submit_s,")
    assert r.to_dataframe().shape == (80, 20)


def test_memory_per_job_is_bounded(tmp_path):
    """Bytes per job, not wall time or RSS: on 20,000 fifo jobs simulate() returns 29 bytes a
    job (int64 submit, start and end ticks, the synthetic ids "0", "1", ... as uint32
    numbers, num_gpus in a byte; issue 28: at most 2x what the CLI keeps) and allocates
    almost nothing through Python's allocators (tracemalloc; the C++ vectors are outside
    its view, nbytes counts them); reading every column brings the table to the 68 bytes a
    job of the full float64 / int32 / StringDType columns, and frees the stored arrays."""
    import tracemalloc

    import numpy

    n = 20000
    overrides = [f"workload.synthetic.num_jobs={n}", "workload.synthetic.arrival.mean_interarrival_s=120", "policy=fifo"]
    schedsim.simulate(None, overrides=["workload.synthetic.num_jobs=10"])  # imports, caches
    tracemalloc.start()
    try:
        r = schedsim.simulate(None, overrides=overrides)
        _, peak_bytes = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    jobs = r.jobs
    assert len(jobs) == n
    assert peak_bytes / n <= 2, peak_bytes / n
    # What simulate() returns (docs/benchmarks.md, "fourth pass"): 4 + 3 x 8 + 1 bytes a
    # job, and one value of each constant column: the status code (1), checkpoint_gpu_s,
    # the four counters (4 each), periodic_checkpoint_gpu_s, restart_gpu_s, lost_gpu_s and
    # the three empty energy columns (8 each): 73 bytes in all.
    assert jobs.nbytes == 29 * n + 73
    row = jobs[5]  # a row is computed alone: nothing is kept
    assert row["jct_s"] == row["end_s"] - row["submit_s"] or abs(row["jct_s"] - (row["end_s"] - row["submit_s"])) < 1e-6
    assert jobs.nbytes == 29 * n + 73
    # A derived column is kept once read (the same array next time) ...
    submit = jobs["submit_s"]
    assert submit is jobs["submit_s"] and submit.dtype == numpy.float64 and not submit.flags.writeable
    assert jobs.nbytes == (29 + 8) * n + 73
    # ... and a stored array goes when no column left to compute needs it: submit ticks
    # after submit_s, jct_s and queue_delay_s (int64 ticks 8 bytes, the columns 8 each).
    jobs["jct_s"]
    jobs["queue_delay_s"]
    assert jobs.nbytes == (29 + 3 * 8 - 8) * n + 73
    # Every column read: the full table, as the numpy arrays of the jobs.csv dtypes.
    per_row = {name: c.itemsize for name, c in jobs.items() if c.strides[0] != 0}
    assert per_row == {"job_id": 16, "submit_s": 8, "start_s": 8, "end_s": 8, "num_gpus": 4, "jct_s": 8, "queue_delay_s": 8, "gpu_s": 8}
    assert jobs["job_id"].dtype == jobs["status"].dtype == numpy.dtypes.StringDType()
    assert jobs["num_gpus"].dtype == numpy.int32
    assert jobs.nbytes == 68 * n + 88
    assert jobs._sources == {}


def _trace_scenario(tmp_path, rows, policy, extra=""):
    """A scenario replaying a schedsim-format trace of `rows` (job_id, submit, num_gpus,
    duration, gpu_milli, status, min_gpus, max_gpus) on 2 nodes of 8 GPUs."""
    lines = ["job_id,submit_time_s,num_gpus,duration_s,gpu_milli,status,min_gpus,max_gpus"]
    lines += [",".join(str(v) for v in row) for row in rows]
    (tmp_path / "trace.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    path = tmp_path / "scenario.yaml"
    path.write_text(f"""seed: 3
cluster:
  nodes:
    - {{count: 2, type: V100, devices_per_node: 8}}
workload:
  trace: {tmp_path / "trace.csv"}
policy: {policy}
{extra}""", encoding="utf-8")
    return str(path)


def _odd_trace_rows():
    """Ids that are not one prefix and a number (non-ASCII, leading zeros, no digits),
    fractional GPUs (device time = held time x the share), trace-recorded failed and
    killed jobs (not in the summary's JCT samples)."""
    rows = []
    for i in range(60):
        job_id = ["j\u00f6b-%d" % i, "job-%03d" % i, "x" * (1 + i % 5), str(i)][i % 4]
        fractional = i % 3 == 0
        status = ["completed", "failed", "completed", "killed", "completed"][i % 5]
        rows.append((job_id, 37 * i, 1 if fractional else 1 + i % 8, 100 + (i * 7919) % 3000, 250 * (1 + i % 3) if fractional else "", status, "", ""))
    return rows


@pytest.mark.parametrize("case", ["odd-ids-shares-outcomes", "elastic", "llm-failures", "recorded-status-tiresias"])
def test_columns_and_summary_equal_the_cli_for_every_layout(cli, golden_yaml, tmp_path, case):
    """Whatever the columns store (numbered ids or bytes; num_gpus in a byte or int32; held
    and device time derived or stored), every column equals the CLI's jobs.csv and the
    summary (computed from the columns' samples) its results.json, bit for bit."""
    import json
    import pathlib

    import numpy

    root = pathlib.Path(__file__).resolve().parents[2]
    overrides = []
    if case == "odd-ids-shares-outcomes":
        config = _trace_scenario(tmp_path, _odd_trace_rows(), "fifo", "failures: {}\n")
    elif case == "elastic":
        rows = [(f"e{i}", 50 * i, 2 + i % 3, 600 + (i * 613) % 4000, "", "", 1, 8) for i in range(40)]
        config = _trace_scenario(tmp_path, rows, "elastic-goodput", "information: oracle\n")
    elif case == "llm-failures":  # 256 and 512 GPUs a job, restarts and rollbacks
        config = str(root / "experiments" / "configs" / "llm_failures.yaml")
        overrides = ["workload.synthetic.num_jobs=40"]
    else:
        config = golden_yaml
        overrides = ["policy=tiresias", "failures={}", "workload.synthetic.recorded_status={completed: 0.7, failed: 0.2, killed: 0.1}"]
    args = [a for o in overrides for a in ("--set", o)]
    text, jobs_csv = run_cli(cli, config, tmp_path / "out", *args)
    r = schedsim.simulate(config, overrides=overrides)
    assert r.results_json == text
    assert r.summary == json.loads(text)["summary"]
    stored = set(r.jobs._sources)
    assert_jobs_equal_the_csv(r.jobs, jobs_csv)
    # Bit for bit (== would take -0.0 for 0.0): the float columns as the file's doubles.
    fresh = schedsim.simulate(config, overrides=overrides).jobs
    for name in ("submit_s", "start_s", "end_s", "jct_s", "queue_delay_s", "gpu_s"):
        assert fresh[name].tobytes() == jobs_csv[name].to_numpy(dtype=numpy.float64).tobytes(), name
    s = r.summary
    if case == "odd-ids-shares-outcomes":
        assert "job_id_bytes" in stored and "device_us" in stored  # ids as bytes; shares: device time stored
        assert s["jobs_failed"] == 12 and s["jobs_killed"] == 12 and s["jobs_completed"] == 36
    elif case == "elastic":
        assert "job_number" in stored and "device_us" in stored  # e0, e1, ...; resized jobs' device time stored
    elif case == "llm-failures":
        assert r.jobs["num_gpus"].max() == 512 and "held_us" in stored
        assert s["restarts_device_failure"] + s["restarts_loss_spike"] > 0
    else:
        assert s["jobs_failed"] > 0 and s["jobs_killed"] > 0 and "held_us" in stored


def test_ledger_verify(cli, tmp_path):
    """A market run's ledger verifies with the totals of results.json; an edited row fails."""
    import json
    import pathlib

    config = pathlib.Path(__file__).resolve().parents[2] / "experiments" / "configs" / "market_two_clouds.yaml"
    out = tmp_path / "run"
    subprocess.run([cli, "run", str(config), "--quiet", "--set", "workload.synthetic.num_jobs=30", "--out", str(out)], check=True)
    check = schedsim.ledger_verify(out / "ledger.csv")
    assert check["ok"], check["problem"]
    market = json.loads((out / "results.json").read_text())["market"]
    assert check["rows"] == market["ledger"]["rows"] == 2
    assert check["compute_usd"] == market["compute_usd"]
    assert check["energy_kwh"] == market["ledger"]["energy_kwh"]
    lines = (out / "ledger.csv").read_text().split("\n")
    lines[3] = lines[3].replace(",cloud-b,", ",cloud-c,")
    (tmp_path / "edited.csv").write_text("\n".join(lines))
    bad = schedsim.ledger_verify(tmp_path / "edited.csv")
    assert not bad["ok"]
    assert bad["problem"].endswith("edited.csv:4: row 2: row_hash does not match the row's contents (the row was edited)")
    with pytest.raises(schedsim.InputError, match="cannot open the ledger"):
        schedsim.ledger_verify(tmp_path / "missing.csv")


def test_string_columns_without_numpy_stringdtype(golden_yaml, monkeypatch):
    """numpy < 2 has no StringDType: job_id and status are then object arrays of str, with
    the same values."""
    import numpy

    expected = schedsim.simulate(golden_yaml).jobs
    monkeypatch.delattr(numpy.dtypes, "StringDType")
    jobs = schedsim.simulate(golden_yaml).jobs
    for name in ("job_id", "status"):
        assert jobs[name].dtype == object
        assert all(type(v) is str for v in jobs[name])
        assert list(jobs[name]) == list(expected[name])
    assert jobs.equals(expected)
