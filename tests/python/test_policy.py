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
