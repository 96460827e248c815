"""schedsim.evaluate / compare / sweep and `python -m schedsim compare|sweep|evaluate`:
any agent (obs, mask -> action) or Python policy scored like a built-in policy."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import schedsim
from schedsim import _schedsim

if not schedsim.HAS_ENV:
    pytest.skip("this _schedsim extension has no RL environment (schedsim.HAS_ENV is False: built without rl/env), so there is no env to test", allow_module_level=True)

# The default scenario (one GPU type, no signals), shortened so that each run takes ~0.1 s.
SMALL = ["workload.synthetic.num_jobs=300"]
NAMES = _schedsim.candidate_feature_names()
RANK, BLOCKED, FIRST_FIT, PREEMPT = (NAMES.index(n) for n in ("log_rank", "blocked", "opt_first_fit", "preempt"))

AGENT_MODULE = textwrap.dedent(
    """
    import schedsim

    NAMES = schedsim._schedsim.candidate_feature_names()
    RANK, FIRST_FIT, PREEMPT = (NAMES.index(n) for n in ("log_rank", "opt_first_fit", "preempt"))


    def fifo_agent(obs, mask):
        # fifo's rule read off the observation: the head of the arrival queue on its
        # first-fit devices (its packed row when first fit gives the same devices and the
        # env dropped the duplicate row), else wait (head-of-line blocking).
        c = obs["candidates"]
        k = len(mask) - 1
        head = [i for i in range(k) if mask[i] and c[i, RANK] == 0 and c[i, PREEMPT] == 0]
        if not head:
            return k
        ff = [i for i in head if c[i, FIRST_FIT] == 1]
        return ff[0] if ff else head[0]


    def always_wait(obs, mask):
        return len(mask) - 1


    class Greedy(schedsim.Policy):
        name = "greedy_py"

        def decide(self, view):
            free = view.free_devices
            actions = []
            for job in view.pending:
                if job.num_gpus <= len(free):  # every job that fits, in queue order
                    actions.append(schedsim.Start(job, free[: job.num_gpus]))
                    free = free[job.num_gpus:]
            return actions
    """
)


@pytest.fixture()
def agents(tmp_path, monkeypatch):
    (tmp_path / "eval_agents.py").write_text(AGENT_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("eval_agents", None)
    import eval_agents

    return eval_agents


def _without_policy(results):
    r = json.loads(json.dumps(results))
    r.pop("policy")
    r["config"].pop("policy")
    return r


def test_fifo_rule_agent_gives_exactly_fifos_results(agents, tmp_path):
    e = schedsim.evaluate(None, agents.fifo_agent, seeds=[1, 2, 3], overrides=SMALL, out=tmp_path / "agent", invalid_action="raise")
    assert e.name == "fifo_agent" and e.invalid_actions == 0 and e.agent_decisions > 300
    for seed, run in zip([1, 2, 3], e.runs):
        fifo = schedsim.simulate(None, "fifo", seed=seed, overrides=SMALL)
        assert run.summary == fifo.summary
        assert _without_policy(run.results) == _without_policy(fifo.results)
        assert run.results["policy"] == "fifo_agent"
        assert run.results["config"]["policy"] == {"name": "fifo_agent", "agent": "eval_agents:fifo_agent", "max_candidates": 16}
        # jobs.csv, written by the runner, byte for byte as fifo's
        written = (tmp_path / "agent" / f"seed_{seed}" / "jobs.csv").read_text()
        fifo_dir = tmp_path / "fifo" / str(seed)
        _schedsim.run_policy(schedsim.load_config(None, overrides=SMALL, seed=seed)._scenario, "fifo", str(fifo_dir))
        assert written == (fifo_dir / "jobs.csv").read_text()
        assert run.jobs.equals(fifo.jobs)
        assert (tmp_path / "agent" / f"seed_{seed}" / "results.json").read_text() == run.results_json
    assert list(e.summary["seed"]) == [1, 2, 3]
    assert e.row["policy"] == "fifo_agent" and e.row["seeds"] == 3
    assert e.row["mean_jct_s"] == pytest.approx(np.mean([r.summary["mean_jct_s"] for r in e.runs]), rel=1e-15)


def test_fifo_rule_agent_with_price_signals_same_schedule(agents, golden_yaml):
    # With price/carbon signals a waiting agent is also woken at each signal change (the
    # MDP's rule, as for the rl policy): the schedule is fifo's, and the energy totals
    # agree to rounding (the extra events split the energy integral differently).
    a = schedsim.evaluate(golden_yaml, agents.fifo_agent, seeds=1).runs[0]
    f = schedsim.simulate(golden_yaml, "fifo", seed=1)
    assert a.jobs.equals(f.jobs)
    assert {k: v for k, v in a.summary.items()} == f.summary
    assert a.results["energy"]["jobs"]["co2_kg"] == pytest.approx(f.results["energy"]["jobs"]["co2_kg"], rel=1e-12)
    assert a.stats["decision_points"] == 163 and f.stats["decision_points"] == 160


def test_compare_matches_the_cli_byte_for_byte(cli, agents, tmp_path):
    subprocess.run([cli, "compare", "--policies", "fifo,sjf", "--seed", "2", "--set", SMALL[0], "--out", str(tmp_path / "cli"), "-q"],
                   check=True)
    schedsim.compare(None, ["fifo", "sjf"], seeds=2, overrides=SMALL, out=tmp_path / "py")
    for f in ("fifo/results.json", "fifo/jobs.csv", "sjf/results.json", "sjf/jobs.csv", "comparison.md", "comparison.csv", "jct_cdf.svg"):
        assert (tmp_path / "cli" / f).read_bytes() == (tmp_path / "py" / "seed_2" / f).read_bytes(), f
    c = schedsim.compare(None, ["fifo", "sjf", agents.fifo_agent], seeds=[2, 3], overrides=SMALL, out=tmp_path / "agent")
    md = (tmp_path / "agent" / "seed_2" / "comparison.md").read_text()
    assert "| fifo_agent |" in md and "= fifo |" in md  # the agent's row, identical to fifo's
    assert list(c.table["policy"]) == ["fifo", "sjf", "fifo_agent"]
    assert c.table["mean_jct_s"][2] == c.table["mean_jct_s"][0]
    assert len(c.per_seed) == 6 and set(c.per_seed["seed"]) == {2, 3}
    assert (tmp_path / "agent" / "summary.csv").read_text().splitlines()[0].startswith("policy,seeds,jobs_completed,mean_jct_s")
    assert "fifo_agent" in c.text[3] and c.evaluations["fifo_agent"].agent_decisions > 0


def test_sb3_style_models(agents):
    seen = {}

    class Plain:  # SB3's predict(observation, state=None, episode_start=None, deterministic=False)
        def predict(self, observation, state=None, episode_start=None, deterministic=False):
            seen["plain"] = deterministic, sorted(observation)
            return np.array(len(observation["candidates"])), None  # wait

    class Masked:  # sb3-contrib's MaskablePPO.predict(..., action_masks=None)
        def predict(self, observation, state=None, episode_start=None, deterministic=False, action_masks=None):
            seen["masked"] = action_masks.dtype, action_masks.shape
            return np.array([int(np.flatnonzero(action_masks)[0])]), None

    e = schedsim.evaluate(None, Masked(), seeds=1, overrides=SMALL)
    assert e.name == "Masked" and e.invalid_actions == 0 and seen["masked"] == (np.dtype(bool), (17,))
    w = schedsim.evaluate(None, Plain(), seeds=1, overrides=SMALL)
    assert seen["plain"] == (True, ["candidates", "global"])
    # Waiting while nothing else can happen is masked: taken as the first legal row.
    assert w.invalid_actions > 0 and w.runs[0].summary["jobs_completed"] == 300


def test_agent_errors_name_the_agent_and_time(agents):
    with pytest.raises(ValueError, match=r"^agent 'bad' at t=[0-9.e+]+ s: expected an action in 0\.\.16 \(16 = wait\), got 17$"):
        schedsim.evaluate(None, lambda obs, mask: 17, seeds=1, name="bad", overrides=SMALL)
    with pytest.raises(TypeError, match=r"^agent 'bad': expected an int action, got str 'x'\nin schedsim agent 'bad' at t=[0-9.]+ s$"):
        schedsim.evaluate(None, lambda obs, mask: "x", seeds=1, name="bad", overrides=SMALL)
    with pytest.raises(schedsim.PolicyError, match=r"agent 'always_wait' at t=[0-9.e+]+ s: action 16 is masked \(legal: [01]+ 0; "
                                                   r"invalid_action='remap' takes it as wait\)"):
        schedsim.evaluate(None, agents.always_wait, seeds=1, overrides=SMALL, invalid_action="raise")
    e = schedsim.evaluate(None, agents.always_wait, seeds=1, overrides=SMALL)
    assert e.invalid_actions > 0 and e.runs[0].summary["jobs_completed"] == 300

    def boom(obs, mask):
        raise KeyError("inside the agent")

    with pytest.raises(KeyError) as info:
        schedsim.evaluate(None, boom, seeds=1, overrides=SMALL)
    assert any(n.startswith("in schedsim agent 'boom' at t=") for n in getattr(info.value, "__notes__", []))
    with pytest.raises(ValueError, match=r"^invalid_action: expected 'remap' \(the default\) or 'raise', got 'skip'$"):
        schedsim.evaluate(None, agents.always_wait, invalid_action="skip")
    with pytest.raises(ValueError, match=r"^seeds: each seed once, got \[1, 1\]$"):
        schedsim.evaluate(None, "fifo", seeds=[1, 1])
    with pytest.raises(TypeError, match=r"^agent: expected a callable agent\(obs, mask\) -> int, a model with \.predict\(obs\)"):
        schedsim.evaluate(None, 42, seeds=1)


def test_module_function_specs(agents):
    e = schedsim.evaluate(None, "eval_agents:fifo_agent", seeds=1, overrides=SMALL)
    assert e.name == "eval_agents:fifo_agent" and e.runs[0].summary == schedsim.simulate(None, "fifo", seed=1, overrides=SMALL).summary
    p = schedsim.evaluate(None, "py:eval_agents:Greedy", seeds=1, overrides=SMALL)  # a Policy class, instantiated
    assert p.runs[0].results["config"]["policy"]["python_class"] == "eval_agents.Greedy"
    with pytest.raises(ImportError, match=r"^agent 'py:no_such_module:f': cannot import module 'no_such_module': "):
        schedsim.evaluate(None, "py:no_such_module:f")
    with pytest.raises(AttributeError, match=r"^agent 'eval_agents:nope': module 'eval_agents' has no attribute 'nope'$"):
        schedsim.evaluate(None, "eval_agents:nope")
    with pytest.raises(ValueError, match=r"^agent: expected 'module:function' or 'py:module:function'"):
        schedsim.evaluate(None, "py:eval_agents")
    with pytest.raises(ValueError, match=r"^policies: each label once \(pass names=\[\.\.\.\] to tell them apart\), got fifo more than once$"):
        schedsim.compare(None, ["fifo", "fifo"])


def test_sweep_with_python_agents_and_resume(agents, tmp_path):
    runs, summary = schedsim.sweep(None, {"workload.synthetic.num_jobs": [100, 200]}, ["fifo", "py:eval_agents:fifo_agent"], [1, 2],
                                   out=tmp_path, overrides=SMALL)
    assert len(runs) == 8 and len(summary) == 4
    assert list(runs.columns[:4]) == ["run_id", "workload.synthetic.num_jobs", "policy", "seed"]
    by = summary.set_index(["workload.synthetic.num_jobs", "policy"])["mean_jct_s_mean"]
    assert by[("200", "fifo")] == by[("200", "eval_agents:fifo_agent")]
    assert sorted(set(runs["jobs_completed"])) == [100, 200]
    assert len(list((tmp_path / "runs").iterdir())) == 8
    stamp = {p: p.stat().st_mtime_ns for p in (tmp_path / "runs").glob("*/results.json")}
    again, _ = schedsim.sweep(None, {"workload.synthetic.num_jobs": [100, 200]}, ["fifo", "py:eval_agents:fifo_agent"], [1, 2],
                              out=tmp_path, overrides=SMALL)
    assert again.equals(runs)
    assert stamp == {p: p.stat().st_mtime_ns for p in (tmp_path / "runs").glob("*/results.json")}  # resumed: nothing rerun


def _module_cli(args, cwd):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "schedsim", *args], cwd=cwd, env=env, capture_output=True, text=True)


def test_python_m_schedsim_compare_sweep_evaluate(tmp_path):
    (tmp_path / "eval_agents.py").write_text(AGENT_MODULE)
    r = _module_cli(["compare", "--set", SMALL[0], "--policies", "fifo,py:eval_agents:fifo_agent,{name: fifo, placement: packed}",
                     "--seeds", "1-2", "--out", "cmp"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "eval_agents:fifo_agent" in r.stdout and "mean over 2 seed(s):" in r.stdout
    assert sorted(os.listdir(tmp_path / "cmp" / "seed_1")) == ["comparison.csv", "comparison.md", "eval_agents_fifo_agent", "fifo",
                                                               "fifo(placement=packed)", "jct_cdf.svg"]
    (tmp_path / "grid.yaml").write_text("scenario: %s\nparameters:\n  workload.synthetic.num_jobs: [50]\npolicies: [fifo, py:eval_agents:fifo_agent]\n"
                                        "seeds: 2\n" % pathlib.Path(schedsim.scenario_path("default")).resolve())
    r = _module_cli(["sweep", "grid.yaml", "--out", "sw"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "4 runs; results in sw/" in r.stdout and (tmp_path / "sw" / "sweep.csv").exists()
    r = _module_cli(["evaluate", schedsim.scenario_path("default"), "eval_agents:always_wait", "--seeds", "1", "--set", SMALL[0]], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "always_wait: " in r.stdout and " invalid actions remapped" in r.stdout
    r = _module_cli(["compare", "--policies", "py:eval_agents:nope", "--seeds", "1"], tmp_path)
    assert r.returncode == 1
    assert r.stderr == "schedsim: error: agent 'py:eval_agents:nope': module 'eval_agents' has no attribute 'nope'\n"
    r = _module_cli(["run"], tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("schedsim: error: python -m schedsim: command 'run' is the C++ CLI's")
    (tmp_path / "bad.yaml").write_text("scenario: x.yaml\nseeds: 1\npolcies: [fifo]\n")
    r = _module_cli(["sweep", "bad.yaml"], tmp_path)
    assert r.returncode == 1 and r.stderr == "schedsim: error: bad.yaml: unknown key 'polcies' (expected scenario, parameters, policies, seeds)\n"


def test_failed_compare_leaves_no_earlier_table(agents, tmp_path):
    schedsim.compare(None, ["fifo", agents.fifo_agent], seeds=[1, 2], overrides=SMALL, out=tmp_path)
    assert (tmp_path / "seed_2" / "comparison.md").exists() and (tmp_path / "summary.csv").exists()

    def fails(obs, mask):
        raise RuntimeError("agent failed")

    with pytest.raises(RuntimeError, match="^agent failed"):
        schedsim.compare(None, ["fifo", fails], seeds=[1, 2], overrides=SMALL, out=tmp_path, names=["fifo", "fifo_agent"])
    # The earlier tables are gone; fifo's seed-1 run (rerun before the failure) is complete.
    assert not any((tmp_path / f).exists() for f in ("summary.csv", "per_seed.csv", "seed_1/comparison.md", "seed_2/comparison.md",
                                                      "seed_2/comparison.csv", "seed_2/jct_cdf.svg"))
    assert (tmp_path / "seed_1" / "fifo" / "results.json").exists()
    assert not (tmp_path / "seed_1" / "fifo_agent" / "results.json").exists()  # cleared by the failed run, as the CLI's run does
