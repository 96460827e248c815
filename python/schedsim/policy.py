"""Policies written in Python, run inside the C++ simulator."""


class Policy:
    """Base class of a scheduling policy written in Python.

    The simulator calls decide(view) at every decision point (after all events of one
    instant). `view` (a schedsim.View, valid only during the call) shows the time,
    the pending and running jobs and the free devices; decide returns a list of
    actions: schedsim.Start(job, devices), schedsim.Preempt(job), schedsim.Move(job,
    devices), schedsim.SetCooling(datacenter, setpoint_c). The kernel validates them exactly as for a built-in policy and raises
    schedsim.PolicyError (naming the policy, the time and the action) for an illegal
    one. An exception raised in decide propagates out of schedsim.simulate() as is,
    with a note naming the policy and the decision time.

    Optional hooks, called only when a subclass defines them:
        on_job_queued(view, job)    a job entered the pending queue
        on_job_finished(view, job)  a job left the system

    `name` (default: the class name) is what results record as the policy.
    """

    name = None

    def decide(self, view):
        raise NotImplementedError(f"{type(self).__name__}.decide(view) must return a list of schedsim actions")
