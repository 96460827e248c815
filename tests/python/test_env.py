"""The gymnasium environments: check_env, seeding, masks, render, VectorEnv = N single envs."""
import numpy as np
import pytest

import schedsim

gymnasium = pytest.importorskip("gymnasium")
if not schedsim.HAS_ENV:
    pytest.skip("the extension was built without rl/env", allow_module_level=True)

# A small scenario: episodes of a few hundred steps.
SMALL = {
    "seed": 5,
    "cluster": {"nodes": [{"count": 2, "type": "V100", "devices_per_node": 4}]},
    "workload": {
        "synthetic": {
            "num_jobs": 40,
            "arrival": {"process": "poisson", "mean_interarrival_s": 100},
            "duration_s": {"dist": "lognormal", "median": 600, "sigma": 1.0},
            "gpus": {1: 0.6, 2: 0.2, 4: 0.2},
        }
    },
    "policy": "fifo",
}


def random_legal(rng, mask):
    """A uniformly random legal action for each row of `mask` (wait is always legal)."""
    mask = np.atleast_2d(mask)
    return (rng.random(mask.shape) * mask).argmax(axis=1)


def test_check_env_passes():
    from gymnasium.utils.env_checker import check_env

    env = schedsim.make(SMALL, invalid_action="wait", render_mode="rgb_array", max_candidates=4)
    check_env(env, skip_render_check=False)
    env = schedsim.make(SMALL, invalid_action="wait", render_mode="ansi", max_candidates=4)
    check_env(env.unwrapped, skip_render_check=False)


def test_spaces_and_mask():
    env = schedsim.make(SMALL, max_candidates=4)
    assert env.action_space == gymnasium.spaces.Discrete(5)
    obs, info = env.reset(seed=1)
    assert env.observation_space.contains(obs)
    assert obs["candidates"].shape == (4, len(env.candidate_feature_names))
    assert obs["global"].shape == (len(env.global_feature_names),)
    mask = env.action_masks()
    assert mask.dtype == bool and mask.shape == (5,) and mask[-1]
    assert (info["action_mask"] == mask).all()
    illegal = np.flatnonzero(~mask)
    if len(illegal):
        with pytest.raises(schedsim.PolicyError):
            env.step(int(illegal[0]))
    with pytest.raises(ValueError, match=r"action: expected an int in 0\.\.4, got 9"):
        env.step(9)
    with pytest.raises(TypeError, match="action: expected an int"):
        env.step("wait")


def episode(env, seed, rng):
    obs, info = env.reset(seed=seed)
    trace = [obs["global"].copy()]
    rewards = []
    while True:
        obs, r, term, trunc, info = env.step(int(random_legal(rng, info["action_mask"])[0]))
        trace.append(obs["global"].copy())
        rewards.append(r)
        if term or trunc:
            return trace, rewards


def test_reset_with_a_seed_is_reproducible():
    env = schedsim.make(SMALL, max_candidates=4)
    a = episode(env, 11, np.random.default_rng(0))
    b = episode(env, 11, np.random.default_rng(0))
    c = episode(env, 12, np.random.default_rng(0))
    assert len(a[0]) == len(b[0]) and all((x == y).all() for x, y in zip(a[0], b[0]))
    assert a[1] == b[1]
    assert a[1] != c[1]


def test_episode_return_is_minus_total_jct():
    # Always start the first legal candidate: the return is -(sum of JCTs) in hours.
    env = schedsim.make(SMALL, max_candidates=4)
    _, info = env.reset(seed=3)
    total = 0.0
    while True:
        _, r, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        total += r
        if term or trunc:
            break
    assert total < 0


def test_render_text_and_rgb():
    env = schedsim.make(SMALL, render_mode="ansi", max_candidates=4)
    env.reset(seed=2)
    text = env.render()
    assert text.startswith("t=") and text.count("\n") == 3  # header + 2 nodes
    env = schedsim.make(SMALL, render_mode="rgb_array", max_candidates=4)
    env.reset(seed=2)
    img = env.render()
    assert img.dtype == np.uint8 and img.shape == (16, 32, 3)


def test_gymnasium_make_registered_scenarios():
    env = gymnasium.make("schedsim/default-v0", max_candidates=8)
    obs, info = env.reset(seed=0)
    assert obs["candidates"].shape[0] == 8
    env = gymnasium.make("schedsim/placement-topology-v0")
    env.reset(seed=0)


def test_vector_env_equals_single_envs():
    n, seed, steps = 3, 100, 400
    venv = schedsim.VectorEnv(SMALL, num_envs=n, max_candidates=4)
    singles = [schedsim.make(SMALL, max_candidates=4) for _ in range(n)]
    episodes = [0] * n
    obs, info = venv.reset(seed=seed)
    s_obs = [env.reset(seed=seed + i) for i, env in enumerate(singles)]
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(steps):
        for i in range(n):
            assert (obs["candidates"][i] == s_obs[i][0]["candidates"]).all()
            assert (obs["global"][i] == s_obs[i][0]["global"]).all()
            assert (info["action_mask"][i] == s_obs[i][1]["action_mask"]).all()
        actions = random_legal(rng, info["action_mask"]).astype(np.int32)
        obs, rewards, term, trunc, info = venv.step(actions)
        for i, env in enumerate(singles):
            o, r, te, tr, inf = env.step(int(actions[i]))
            assert rewards[i] == np.float32(r) and term[i] == te and trunc[i] == tr
            if te or tr:  # same-step autoreset with the next seed of env i's sequence
                episodes[i] += 1
                ended += 1
                o, inf = env.reset(seed=seed + i + n * episodes[i])
            s_obs[i] = (o, inf)
    assert ended >= n  # the comparison crossed episode boundaries
    done = venv.finished_episodes()
    assert len(done) == ended and {d["env"] for d in done} == set(range(n))


def test_vector_env_arrays_are_views_and_threads_do_not_matter():
    a = schedsim.VectorEnv(SMALL, num_envs=4, max_candidates=4)
    b = schedsim.VectorEnv(SMALL, num_envs=4, num_threads=2, max_candidates=4)
    oa, ia = a.reset(seed=9)
    ob, ib = b.reset(seed=9)
    assert not oa["candidates"].flags.writeable and not oa["candidates"].flags.owndata
    rng = np.random.default_rng(2)
    for _ in range(200):
        act = random_legal(rng, ia["action_mask"]).astype(np.int32)
        oa, ra, ta, _, ia = a.step(act)
        ob, rb, tb, _, ib = b.step(act)
        assert (oa["global"] == ob["global"]).all() and (ra == rb).all() and (ta == tb).all()


def test_vector_env_argument_errors():
    with pytest.raises(ValueError, match="num_envs: expected an int >= 1, got 0"):
        schedsim.VectorEnv(SMALL, num_envs=0)
    with pytest.raises(TypeError, match="num_envs: expected an int"):
        schedsim.VectorEnv(SMALL, num_envs=2.5)
    venv = schedsim.VectorEnv(SMALL, num_envs=2, max_candidates=4)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions: expected shape \(2,\), got \(3,\)"):
        venv.step(np.zeros(3, np.int32))
    with pytest.raises(TypeError, match="actions: expected an integer array, got dtype float64"):
        venv.step(np.zeros(2))
