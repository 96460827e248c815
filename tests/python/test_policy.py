"""Policies written in Python run inside the C++ simulator."""
import pytest

import schedsim


class PyFifo(schedsim.Policy):
    """The built-in fifo: arrival order, lowest-numbered free devices, head-of-line blocking."""

    name = "py-fifo"

    def decide(self, view):
        free = view.free_devices
        actions = []
        for job in view.pending:
            if job.num_gpus > len(free):
                break  # the head blocks
            actions.append(schedsim.Start(job, free[: job.num_gpus]))
            free = free[job.num_gpus:]
        return actions


@pytest.mark.parametrize("seed", [7, 8])
def test_python_fifo_reproduces_the_builtin_fifo(golden_yaml, seed):
    builtin = schedsim.simulate(golden_yaml, policy="fifo", seed=seed)
    py = schedsim.simulate(golden_yaml, policy=PyFifo(), seed=seed)
    assert py.summary == builtin.summary
    assert py.jobs.equals(builtin.jobs)
    assert py.policy == "py-fifo"
    assert py.results["config"]["policy"] == {"name": "py-fifo", "python_class": "test_policy.PyFifo"}
    assert py.stats["decision_points"] == builtin.stats["decision_points"]


def test_hooks_and_view_contents(golden_yaml):
    seen = {"queued": 0, "finished": 0, "decisions": 0}

    class Watch(PyFifo):
        def on_job_queued(self, view, job):
            seen["queued"] += 1
            assert job.status == "pending" and job.num_gpus in (1, 2, 4, 8)

        def on_job_finished(self, view, job):
            seen["finished"] += 1

        def decide(self, view):
            seen["decisions"] += 1
            assert view.num_devices == 16 and view.num_nodes == 2 and view.device_types == ["V100"]
            assert sum(view.free_per_node) == view.num_free == len(view.free_devices)
            assert view.node_devices(1) == list(range(8, 16)) and view.node_of(9) == 1
            busy = sum(len(j.devices) for j in view.running)
            assert busy + view.num_free == 16
            assert len(view.pending) == view.num_pending
            self.last_view = view
            return super().decide(view)

    w = Watch()
    r = schedsim.simulate(golden_yaml, policy=w)
    assert seen["queued"] == 80 and seen["finished"] == 80 and seen["decisions"] == r.stats["decision_points"]
    with pytest.raises(RuntimeError, match="decision point that is over"):
        w.last_view.pending  # noqa: B018


def test_exception_in_decide_surfaces_with_the_time(golden_yaml):
    class Broken(PyFifo):
        def decide(self, view):
            if view.now > 1000:
                raise ZeroDivisionError("boom")
            return super().decide(view)

    with pytest.raises(ZeroDivisionError, match="boom") as e:
        schedsim.simulate(golden_yaml, policy=Broken())
    (note,) = e.value.__notes__
    assert note.startswith("in schedsim policy 'py-fifo' decide() at t=")
    assert float(note.split("t=")[1].split(" ")[0]) > 1000


def test_illegal_action_is_a_policy_error(golden_yaml):
    class DoubleBook(schedsim.Policy):
        def decide(self, view):
            return [schedsim.Start(j, [0] * j.num_gpus) for j in view.pending[:1]] * 2

    with pytest.raises(schedsim.PolicyError, match="DoubleBook") as e:
        schedsim.simulate(golden_yaml, policy=DoubleBook())
    assert isinstance(e.value, schedsim.SimError)


def test_bad_return_values_are_type_errors(golden_yaml):
    class ReturnsInt(schedsim.Policy):
        def decide(self, view):
            return 3

    with pytest.raises(TypeError, match=r"decide\(\) must return a list of schedsim.Start.*got a int"):
        schedsim.simulate(golden_yaml, policy=ReturnsInt())

    class ReturnsTuples(schedsim.Policy):
        def decide(self, view):
            return [("start", 0, [0])]

    with pytest.raises(TypeError, match="got item 0 of type tuple"):
        schedsim.simulate(golden_yaml, policy=ReturnsTuples())
    with pytest.raises(TypeError, match="devices: expected a sequence of device ids"):
        schedsim.Start(0, 5)
    with pytest.raises(TypeError, match="job: expected a schedsim Job"):
        schedsim.Preempt("job-1")


def test_policy_that_never_starts_anything_is_reported(golden_yaml):
    class Idle(schedsim.Policy):
        def decide(self, view):
            return []

    with pytest.raises(schedsim.PolicyError):
        schedsim.simulate(golden_yaml, policy=Idle())


def test_python_policy_sets_the_cooling_setpoint(tmp_path):
    """A Python policy reads the thermal state and sets the set-point (docs/energy.md)."""
    (tmp_path / "jobs.csv").write_text("job_id,submit_time_s,num_gpus,duration_s\nj,0,1,1000\n")
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "cluster: {nodes: [{count: 1, type: V100, devices_per_node: 1}]}\n"
        "workload: {trace: {path: jobs.csv, format: schedsim}}\n"
        "energy: {pue: 1.1, thermal: {outside_c: 30, setpoint_c: 20}}\n"
    )
    seen = []

    class Warm(PyFifo):
        name = "py-warm"

        def decide(self, view):
            seen.append(dict(view.thermal[0]))
            return super().decide(view) + ([schedsim.SetCooling(0, 30)] if view.now == 0 else [])

    r = schedsim.simulate(str(scenario), policy=Warm())
    assert seen[0]["outside_c"] == 30 and seen[0]["setpoint_c"] == 20 and seen[0]["max_setpoint_c"] == 35
    assert seen[-1]["setpoint_c"] == 30
    # 30 °C outside at 30 °C: lift 15 K, COP 0.5 x 303.15 / 15; the job's 300 W for 1000 s.
    pue = 1.15 + 15 / (0.5 * 303.15)
    th = r.results["energy"]["thermal"]
    assert th["mean_pue"] == pytest.approx(pue, rel=1e-12)
    assert th["by_datacenter"][0]["setpoint_changes"] == 1
    assert r.results["energy"]["energy_kwh"] == pytest.approx(300 * 1000 * pue / 3.6e6, rel=1e-12)

    class TooWarm(PyFifo):
        name = "py-too-warm"

        def decide(self, view):
            return [schedsim.SetCooling(0, 50)]

    with pytest.raises(schedsim.PolicyError, match="outside the allowed range"):
        schedsim.simulate(str(scenario), policy=TooWarm())


def test_jobs_show_only_what_the_information_level_allows(golden_yaml):
    """Job.duration_s is the truth only under information: oracle; otherwise the estimate
    (here the golden scenario's noisy one) or nothing. attained_work_s is always known."""
    import math

    class Look(PyFifo):
        def __init__(self):
            self.rows = []

        def decide(self, view):
            for j in view.pending + view.running:
                self.rows.append((j.duration_s, j.estimate_s, j.remaining_work_s, j.attained_work_s))
            return super().decide(view)

    looks, summaries = {}, {}
    for level in ["oracle", "none", None]:  # None: the golden scenario's own (noisy estimates)
        overrides = [] if level is None else [f"information={level}"]
        look = Look()
        summaries[level] = schedsim.simulate(schedsim.load_config(golden_yaml, overrides=overrides), policy=look).summary
        looks[level] = look.rows
    assert summaries["oracle"] == summaries["none"] == summaries[None]  # fifo asks for nothing
    assert all(d > 0 and r >= 0 and a >= 0 for d, _, r, a in looks["oracle"])
    assert all(math.isnan(d) and math.isnan(e) and math.isnan(r) and a >= 0 for d, e, r, a in looks["none"])
    assert all(math.isnan(d) and e > 0 and r >= 0.1 * e * (1 - 1e-12) for d, e, r, _ in looks[None])
