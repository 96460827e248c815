"""The GIL is released while C++ runs: another Python thread keeps running meanwhile."""
import threading
import time

import schedsim


def ticks_during(call):
    """Runs call() while a second Python thread records timestamps; returns the
    timestamps that fall strictly inside the call (away from its ends) and its duration."""
    stamps, stop = [], threading.Event()

    def ticker():
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.001)  # gives the GIL up; getting it back needs the C++ side to have released it

    t = threading.Thread(target=ticker)
    t.start()
    time.sleep(0.01)
    begin = time.perf_counter()
    call()
    end = time.perf_counter()
    stop.set()
    t.join()
    margin = 0.2 * (end - begin)
    return [s for s in stamps if begin + margin < s < end - margin], end - begin


def test_simulate_releases_the_gil():
    # A run long enough (a few tenths of a second) that a held GIL would show as a gap.
    cfg = schedsim.load_config(overrides=["workload.synthetic.num_jobs=400000", "policy=fifo"])
    inside, seconds = ticks_during(lambda: schedsim.simulate(cfg))
    assert seconds > 0.05
    # With the GIL held there would be none; released, the ticker runs about every ms.
    assert len(inside) >= 10, (len(inside), seconds)


def test_vector_env_step_releases_the_gil():
    if not schedsim.HAS_ENV:
        import pytest

        pytest.skip("this _schedsim extension has no RL environment (schedsim.HAS_ENV is False: built without rl/env), so there is no env to test")
    import numpy as np

    # Many environments make one step call long (tens of ms); its work is all C++.
    venv = schedsim.VectorEnv(None, num_envs=8000)
    inside, seconds = ticks_during(lambda: venv.reset(seed=0))
    assert seconds > 0.01 and len(inside) >= 3, (len(inside), seconds)
    wait = np.full(venv.num_envs, venv.single_action_space.n - 1, np.int32)
    inside, seconds = ticks_during(lambda: venv.step(wait))
    assert seconds > 0.01 and len(inside) >= 3, (len(inside), seconds)
