"""Config loading: YAML file, YAML text and dict give the same scenario, with the CLI's errors."""
import pathlib

import pytest

import schedsim

# tests/golden/scenario.yaml spelled as a dict.
GOLDEN_DICT = {
    "name": "golden",
    "seed": 7,
    "cluster": {"nodes": [{"count": 2, "type": "V100", "devices_per_node": 8}]},
    "workload": {
        "synthetic": {
            "num_jobs": 80,
            "arrival": {"process": "poisson", "mean_interarrival_s": 120},
            "duration_s": {"dist": "lognormal", "median": 600, "sigma": 1.2},
            "gpus": {1: 0.5, 2: 0.2, 4: 0.2, 8: 0.1},
        }
    },
    "energy": {"pue": 1.2},
    "signals": {
        "origin_utc": "2023-03-01T06:00:00Z",
        "price": {"diurnal": {"mean": 90, "amplitude": 40, "peak_hour_utc": 18}},
        "carbon": {"diurnal": {"mean": 350, "amplitude": 150, "peak_hour_utc": 19}},
    },
    "policy": "fifo",
}


def test_version_and_policies():
    assert schedsim.__version__ == "0.1.0"
    names = schedsim.policies()
    assert names[0] == "fifo" and "sjf" in names and "gandiva" in names
    info = schedsim.policy_info("sjf")
    assert info["name"] == "sjf" and any(o["name"] == "placement" for o in info["options"])
    with pytest.raises(ValueError, match="expected one of fifo"):
        schedsim.policy_info("nope")


def test_file_text_and_dict_resolve_the_same(golden_yaml):
    text = pathlib.Path(golden_yaml).read_text()
    configs = [
        schedsim.load_config(golden_yaml),
        schedsim.load_config(pathlib.Path(golden_yaml)),
        schedsim.load_config(text),
        schedsim.load_config(GOLDEN_DICT),
    ]
    resolved = [c.resolved() for c in configs]
    assert all(r == resolved[0] for r in resolved)
    assert resolved[0]["seed"] == 7 and resolved[0]["policy"]["name"] == "fifo"
    assert configs[0].num_devices == 16 and configs[0].name == "golden"
    # ... and run to the same summary.
    summaries = [schedsim.simulate(c).summary for c in configs]
    assert all(s == summaries[0] for s in summaries)
    assert summaries[0]["jobs_completed"] == 80


def test_overrides_and_seed_as_on_the_cli(golden_yaml):
    c = schedsim.load_config(golden_yaml, overrides=["policy=sjf", "cluster.nodes.0.count=3"], seed=11)
    r = c.resolved()
    assert r["policy"]["name"] == "sjf" and r["cluster"]["nodes"][0]["count"] == 3 and c.seed == 11
    assert c.num_devices == 24
    assert schedsim.load_config(golden_yaml).with_seed(5).seed == 5


def test_default_scenario():
    c = schedsim.load_config()
    assert c.num_devices == 128 and c.source == "built-in default scenario"


def test_unknown_key_gives_the_cli_message(tmp_path):
    bad = dict(GOLDEN_DICT, polcy="fifo")
    with pytest.raises(schedsim.InputError, match="did you mean 'policy'") as e:
        schedsim.load_config(bad)
    assert isinstance(e.value, ValueError) and isinstance(e.value, schedsim.SimError)
    # The same document from a file names file and line, like the CLI.
    p = tmp_path / "bad.yaml"
    p.write_text("seed: 1\npolcy: fifo\n")
    with pytest.raises(schedsim.InputError, match=r"bad\.yaml:2"):
        schedsim.load_config(str(p))


def test_wrong_value_names_the_key():
    bad = {**GOLDEN_DICT, "cluster": {"nodes": [{"count": -2, "type": "V100", "devices_per_node": 8}]}}
    with pytest.raises(schedsim.InputError, match=r"cluster\.nodes\[0\]\.count|count"):
        schedsim.load_config(bad)


def test_every_section_is_checked_on_load(tmp_path):
    # train: and env: are checked by load_config too, not only when training (issue 22).
    with pytest.raises(schedsim.InputError, match=r"train: unknown key 'total_step' \(did you mean 'total_steps'\?\)"):
        schedsim.load_config({**GOLDEN_DICT, "train": {"total_step": 5}})
    with pytest.raises(schedsim.InputError, match=r"env: unknown key 'max_candidate'"):
        schedsim.simulate({**GOLDEN_DICT, "env": {"max_candidate": 4}})
    # A key given twice and an octal-looking integer in a file are errors, not another run.
    p = tmp_path / "dup.yaml"
    p.write_text("seed: 1\nseed: 2\n")
    with pytest.raises(schedsim.InputError, match=r"dup\.yaml:2: duplicate key 'seed' \(first given on line 1\)"):
        schedsim.load_config(str(p))
    with pytest.raises(schedsim.InputError, match=r"--set workload\.synthetic\.num_jobs=0100: '0100' has a leading zero"):
        schedsim.load_config(GOLDEN_DICT, overrides=["workload.synthetic.num_jobs=0100"])


def test_missing_file():
    with pytest.raises(schedsim.InputError, match="no_such.yaml"):
        schedsim.load_config("no_such.yaml")


def test_bad_argument_types():
    with pytest.raises(TypeError, match="expected None, a path"):
        schedsim.load_config(42)
    with pytest.raises(TypeError, match="seed: expected a non-negative int, got str"):
        schedsim.load_config(GOLDEN_DICT, seed="7")
    with pytest.raises(ValueError, match="seed: expected a non-negative int, got -1"):
        schedsim.load_config(GOLDEN_DICT, seed=-1)
    # Seeds are 0 .. 2^63-1, as for the CLI's --seed and a scenario's seed: (issue 22).
    with pytest.raises(ValueError, match=r"seed: must be at most 9223372036854775807 \(2\^63-1, the seed range of the CLI and of results.json\), got 9223372036854775808"):
        schedsim.load_config(GOLDEN_DICT, seed=2**63)
    assert schedsim.load_config(GOLDEN_DICT, seed=2**63 - 1).seed == 2**63 - 1
    with pytest.raises(TypeError, match="overrides: expected a list"):
        schedsim.load_config(GOLDEN_DICT, overrides="policy=sjf")
    with pytest.raises(TypeError, match=r"cluster\.nodes\[0\]: expected a dict, list, str"):
        schedsim.load_config({**GOLDEN_DICT, "cluster": {"nodes": [object()]}})


@pytest.mark.parametrize("text", [
    "seed: 1\npolcy: fifo\n",  # unknown key
    "seed: -3\n",  # wrong value
    "seed: 1\ncluster: {nodes: [{count: 2, type: V100, devices_per_node: eight}]}\n",  # wrong type
])
def test_errors_are_the_clis_messages(cli, tmp_path, text):
    import subprocess

    p = tmp_path / "bad.yaml"
    p.write_text(text)
    r = subprocess.run([cli, "run", str(p), "--out", str(tmp_path / "out"), "--quiet"], capture_output=True, text=True)
    assert r.returncode != 0
    with pytest.raises(schedsim.InputError) as e:
        schedsim.load_config(str(p))
    assert r.stderr.strip() == f"schedsim: error: {e.value}"
