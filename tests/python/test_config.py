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
    "information": {"estimates": {"source": "noisy", "sigma": 0.5}},
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


def _nested_dict(levels):
    """{"a": {"a": ... {}}} with `levels` dicts, built without recursion."""
    d = {}
    for _ in range(levels - 1):
        d = {"a": d}
    return d


def test_deeply_nested_dicts_are_refused_like_deep_yaml():
    import time

    # The YAML reader's limit applies to dicts too: 100,000 levels used to overflow the C
    # stack (killing the interpreter) and 8,000 took 35 s.
    for levels in (100_000, 8_000, 501):
        start = time.monotonic()
        with pytest.raises(schedsim.InputError) as e:
            schedsim.load_config({"workload": _nested_dict(levels)})
        assert time.monotonic() - start < 5
        assert str(e.value).startswith("<dict>: workload.a.a.a.a.a.a.a.a")
        assert str(e.value).endswith(
            ": lists and maps nested more than 500 levels deep, more than YAML scenarios allow; no scenario needs that: is this the right object?")
    # Lists count as levels too.
    deep_list = []
    for _ in range(2000):
        deep_list = [deep_list]
    with pytest.raises(schedsim.InputError, match="nested more than 500 levels deep"):
        schedsim.load_config({"workload": deep_list})
    # 500 levels are within the limit: the scenario is then refused for what it says.
    with pytest.raises(schedsim.InputError) as e:
        schedsim.load_config({"workload": _nested_dict(499)})
    assert "nested more than" not in str(e.value)
    # The same depth as YAML text is refused by the YAML reader.
    text = "workload: " + "[" * 2000 + "]" * 2000 + "\n"
    with pytest.raises(schedsim.InputError, match="nested about 500 levels deep"):
        schedsim.load_config(text)


def test_dicts_and_lists_that_contain_themselves_are_refused():
    d = {"seed": 1}
    d["cluster"] = d
    with pytest.raises(ValueError, match=r"^cluster: the config contains itself \(a dict or list that holds itself, directly or through others, is not a YAML document\)$"):
        schedsim.load_config(d)
    loop = []
    loop.append({"x": loop})
    with pytest.raises(ValueError, match=r"^workload\[0\]\.x: the config contains itself"):
        schedsim.load_config({"workload": loop})
    # The same object twice (not a cycle) is fine: it is written out twice.
    node = {"count": 1, "type": "V100", "devices_per_node": 4}
    cfg = schedsim.load_config({**GOLDEN_DICT, "cluster": {"nodes": [node, node]}})
    assert cfg.num_devices == 8


def test_random_nested_structures_give_a_clean_error_or_a_config():
    # A property test without a fuzzing library: seeded random trees of every type the
    # conversion accepts (and a few it does not), some very deep, some sharing or
    # containing themselves. Each either loads or raises TypeError/ValueError with the
    # key path; never anything else, never a crash.
    import random

    rng = random.Random(22)
    leaves = [None, True, False, 0, -1, 2**70, 1.5, float("nan"), float("inf"), "", "x", "1e3", "yes", b"bytes", object()]

    def tree(depth):
        r = rng.random()
        if depth <= 0 or r < 0.3:
            return rng.choice(leaves)
        if r < 0.65:
            return {rng.choice(["seed", "cluster", "workload", "policy", "a", 1, 2.5, True]): tree(depth - 1) for _ in range(rng.randint(0, 3))}
        if r < 0.9:
            return [tree(depth - 1) for _ in range(rng.randint(0, 3))]
        return tuple(tree(depth - 1) for _ in range(rng.randint(0, 2)))

    outcomes = {"ok": 0, "error": 0}
    for case in range(300):
        root = {k: tree(rng.randint(1, 8)) for k in rng.sample(["seed", "cluster", "workload", "policy", "energy", "x"], rng.randint(0, 3))}
        if case % 10 == 0:  # very deep along one branch
            root["workload"] = _nested_dict(rng.randint(400, 3000))
        if case % 13 == 0:  # a cycle
            inner = {"k": []}
            inner["k"].append(inner)
            root["cluster"] = inner
        try:
            schedsim.load_config(root)
            outcomes["ok"] += 1
        except (TypeError, ValueError) as e:  # schedsim.InputError is a ValueError
            assert str(e)
            outcomes["error"] += 1
    assert outcomes["error"] > 0


def test_resolved_shows_a_policy_that_the_information_level_refuses():
    # No estimates in the workload: information none, which sjf refuses when a run builds
    # it; resolving only fills in its options, so it still works and says so.
    cfg = schedsim.load_config({"cluster": {"nodes": [{"count": 1, "type": "V100", "devices_per_node": 4}]},
                                "workload": {"synthetic": {"num_jobs": 5}}, "policy": "sjf"})
    r = cfg.resolved()
    assert r["information"] == "none"
    assert r["policy"]["name"] == "sjf"
    with pytest.raises(schedsim.InputError, match="needs job duration information, but the scenario declares information: none"):
        schedsim.simulate(cfg)
