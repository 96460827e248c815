"""schedsim.advise(): the same plans as `schedsim advise`, byte for byte."""
import copy
import json
import subprocess

import pytest

import schedsim

SITE_NODES = [{"count": 2, "type": "A100-80GB", "devices_per_node": 8}, {"count": 2, "type": "H100-SXM", "devices_per_node": 8}]
JOB_DICT = {
    "scenario": {
        "seed": 1,
        "datacenters": {"sites": [
            {"name": "A", "provider": "pa", "nodes": SITE_NODES,
             "signals": {"origin_utc": "2023-01-01T00:00:00Z", "price": {"diurnal": {"mean": 60, "amplitude": 30, "peak_hour_utc": 18}}, "carbon": 100}},
            {"name": "B", "provider": "pb", "nodes": SITE_NODES,
             "signals": {"origin_utc": "2023-01-01T00:00:00Z", "price": 80, "carbon": {"diurnal": {"mean": 300, "amplitude": 200, "peak_hour_utc": 20}}}},
        ]},
        "market": {"offers": [
            {"datacenter": "A", "type": "A100-80GB", "on_demand_usd_h": 1.0,
             "spot": {"devices": 12, "usd_h": 0.4, "availability": {"model": "on_off", "mean_up_h": 6, "mean_down_h": 1, "fraction_reclaimed": 0.5}}},
            {"datacenter": "A", "type": "H100-SXM", "on_demand_usd_h": 2.5},
            {"datacenter": "B", "type": "A100-80GB", "on_demand_usd_h": 1.2},
            {"datacenter": "B", "type": "H100-SXM", "on_demand_usd_h": 2.2},
        ]},
        "physics": {},
        "failures": {"devices": {"mtbf_h": 2000, "restart_s": 120}, "checkpoint": {"interval": "young_daly"}},
        "workload": {"synthetic": {"num_jobs": 1}},
        "policy": "fifo",
    },
    "job": {
        "profile": "BERT-large",
        "reference": {"device_type": "A100-80GB", "devices": 8, "hours": 24},
        "device_counts": [4, 8, 16],
        "deadline_h": 120,
    },
    "search": {"start_step_h": 6, "latest_start_h": 48, "segments": 2, "split_at": [0.5]},
}
JOB = json.dumps(JOB_DICT, indent=1)  # JSON is YAML


@pytest.fixture
def job_file(tmp_path):
    p = tmp_path / "job.yaml"
    p.write_text(JOB)
    return p


def test_cli_and_python_give_the_same_plans(cli, job_file, tmp_path):
    out = tmp_path / "out"
    subprocess.run([cli, "advise", str(job_file), "--out", str(out), "--quiet"], check=True)
    cli_csv = (out / "plans.csv").read_text()
    r = schedsim.advise(job_file)
    assert r.plans_csv == cli_csv
    assert schedsim.advise(str(job_file)).plans_csv == cli_csv
    assert len(r.plans) == cli_csv.count("\n") - 1 > 100
    # Ranked by cost; the front holds the cheapest, the fastest and the cleanest plan.
    costs = [p["cost_usd"] for p in r.plans]
    assert costs == sorted(costs)
    front = r.pareto
    assert r.plans[0] in front
    assert min(r.plans, key=lambda p: (p["finish_h"], p["cost_usd"], p["co2_kg"])) in front
    assert min(r.plans, key=lambda p: (p["co2_kg"], p["finish_h"], p["cost_usd"])) in front
    assert all(p["finish_h"] <= 120 for p in r.plans)
    # A down period takes back half of the 12 spot devices: plans on 8 are reclaimed, plans
    # on 4 are not (6 remain), plans on 16 do not fit the offer.
    spot4 = [p for p in r.plans if p["seg1_kind"] == "spot" and p["devices"] == 4 and p["segments"] == 1]
    spot8 = [p for p in r.plans if p["seg1_kind"] == "spot" and p["devices"] == 8 and p["segments"] == 1]
    assert spot4 and all(p["spot_loss_risk"] == 0 for p in spot4)
    assert spot8 and all(0 < p["spot_loss_risk"] < 1 for p in spot8)
    # The same numbers for the objective the CLI is asked for.
    out2 = tmp_path / "out2"
    subprocess.run([cli, "advise", str(job_file), "--out", str(out2), "--quiet", "--objective", "emissions"], check=True)
    assert schedsim.advise(job_file, objective="emissions").plans_csv == (out2 / "plans.csv").read_text()


def test_dict_and_text_input(job_file):
    assert schedsim.advise(JOB_DICT).plans_csv == schedsim.advise(job_file).plans_csv
    assert schedsim.advise(JOB).plans_csv == schedsim.advise(job_file).plans_csv


def test_errors(job_file):
    doc = copy.deepcopy(JOB_DICT)
    doc["job"]["budget_usd"] = 1.0
    with pytest.raises(schedsim.InputError, match="no feasible plan among .* candidates: .* over the budget"):
        schedsim.advise(doc)
    doc = copy.deepcopy(JOB_DICT)
    doc["job"]["kinds"] = ["ondemand"]
    with pytest.raises(schedsim.InputError, match=r"job\.kinds\[0\]"):
        schedsim.advise(doc)
    with pytest.raises(schedsim.InputError, match="objective must be one of cost, finish, emissions"):
        schedsim.advise(job_file, objective="price")
