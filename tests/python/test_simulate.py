"""simulate() is `schedsim run`: same results.json byte for byte, same jobs.csv records."""
import math
import subprocess

import pytest

import schedsim

pandas = pytest.importorskip("pandas")


def run_cli(cli, scenario, out, *args):
    subprocess.run([cli, "run", scenario, "--out", str(out), "--quiet", *args], check=True)
    return (out / "results.json").read_text(), pandas.read_csv(out / "jobs.csv", dtype={"job_id": str})


@pytest.mark.parametrize("policy", ["fifo", "sjf", "tiresias", "slurm-easy"])
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
    jobs = r.jobs
    assert list(jobs.columns) == list(jobs_csv.columns)
    assert list(jobs["job_id"]) == list(jobs_csv["job_id"])
    for col in jobs.columns:
        if col in ("job_id", "status"):
            assert list(jobs[col]) == list(jobs_csv[col]), col
        else:
            assert jobs[col].tolist() == jobs_csv[col].tolist(), col


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
    assert ((jobs["jct_s"] - (jobs["end_s"] - jobs["submit_s"])).abs() < 1e-6).all()


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
    assert isinstance(r.jobs, dict) and len(r.jobs["job_id"]) == 80 and r.jobs["jct_s"].dtype.name == "float64"


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
