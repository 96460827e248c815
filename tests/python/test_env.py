"""The gymnasium environments: check_env, seeding, masks, render, VectorEnv = N single envs."""
import numpy as np
import pytest

import schedsim

gymnasium = pytest.importorskip("gymnasium", reason="gymnasium is not installed (pip install gymnasium; scripts/setup.sh installs it)")
if not schedsim.HAS_ENV:
    pytest.skip("this _schedsim extension has no RL environment (schedsim.HAS_ENV is False: built without rl/env), so there is no env to test", allow_module_level=True)

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
    """A uniformly random legal action for each row of `mask` (at least one is legal in every row)."""
    mask = np.atleast_2d(mask)
    return (rng.random(mask.shape) * mask).argmax(axis=1)


class MaskedSampling(gymnasium.spaces.Discrete):
    """The env's Discrete(K+1), sampling only legal actions (Discrete.sample's own mask
    argument filled from env.action_masks()): what a masked learner does."""

    def __init__(self, env):
        super().__init__(env.action_space.n)
        self._env = env

    def sample(self, mask=None, probability=None):
        if mask is None and probability is None:
            mask = self._env.action_masks().astype(np.int8)
        return super().sample(mask=mask, probability=probability)


def test_check_env_passes_on_the_raise_env_when_samples_respect_the_mask():
    # With invalid_action="raise" every check of gymnasium's checker passes once its
    # random actions are legal ones; unmasked, its first sampled action is a masked one,
    # and the env says so (docs/python.md). The default env passes as it is
    # (test_env_compliance.py).
    from gymnasium.utils.env_checker import check_env

    env = schedsim.make(SMALL, render_mode="rgb_array", max_candidates=4, invalid_action="raise")
    with pytest.raises(schedsim.PolicyError, match="is masked"):
        check_env(env)
    env = schedsim.make(SMALL, render_mode="rgb_array", max_candidates=4, invalid_action="raise")
    env.action_space = MaskedSampling(env)
    check_env(env, skip_render_check=False)
    env = gymnasium.make("schedsim/default-v0", max_candidates=8, invalid_action="raise")
    env.unwrapped.action_space = MaskedSampling(env.unwrapped)
    check_env(env.unwrapped)


def test_check_env_passes_with_invalid_actions_taken_as_wait():
    # "wait", the earlier name of the default "remap".
    from gymnasium.utils.env_checker import check_env

    env = schedsim.make(SMALL, invalid_action="wait", render_mode="rgb_array", max_candidates=4)
    assert env.invalid_action == "remap"
    check_env(env, skip_render_check=False)
    env = schedsim.make(SMALL, invalid_action="wait", render_mode="ansi", max_candidates=4)
    check_env(env.unwrapped, skip_render_check=False)


def test_spaces_and_mask():
    env = schedsim.make(SMALL, max_candidates=4, invalid_action="raise")
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
    text_env = schedsim.make(SMALL, render_mode="ansi", max_candidates=4)
    rgb_env = schedsim.make(SMALL, render_mode="rgb_array", max_candidates=4)
    _, info = text_env.reset(seed=2)
    rgb_env.reset(seed=2)
    assert text_env.render() == "t=80.2 s  pending 1  running 0  done 0\nnode   0     V100  ....\nnode   1     V100  ....\n"
    img = rgb_env.render()
    assert img.dtype == np.uint8 and img.shape == (16, 32, 3)
    assert (img[:7, :7] == [200, 200, 200]).all()  # device 0 free: grey
    # Start jobs until some run: each busy device shows its job's letter and colour.
    for _ in range(30):
        action = int(np.flatnonzero(info["action_mask"])[0])
        _, _, _, _, info = text_env.step(action)
        rgb_env.step(action)
    state = text_env.unwrapped._env.state()
    busy = int((state["owners"] >= 0).sum())
    assert busy > 0
    lines = text_env.render().splitlines()
    assert lines[0].startswith(f"t={state['time_s']:.1f} s  pending {state['pending']}  running {state['running']}")
    cells = "".join(line.split()[-1] for line in lines[1:])
    assert len(cells) == 8 and sum(c != "." for c in cells) == busy
    assert all(c == "." or c == chr(ord("A") + int(o) % 26) for c, o in zip(cells, state["owners"]))
    img = rgb_env.render()
    grey = sum(bool((img[(d // 4) * 8, (d % 4) * 8] == [200, 200, 200]).all()) for d in range(8))
    assert grey == 8 - busy


def test_gymnasium_make_registered_scenarios():
    env = gymnasium.make("schedsim/default-v0", max_candidates=8)
    obs, info = env.reset(seed=0)
    assert obs["candidates"].shape[0] == 8


def test_scenarios_with_inference_services_are_not_registered_and_make_says_why():
    assert "geo_four_regions" in schedsim.scenarios()
    assert "geo_four_regions" not in schedsim.env.env_scenarios()
    assert "schedsim/geo-four-regions-v0" not in gymnasium.registry
    with pytest.raises(schedsim.InputError, match=r"inference: the RL environment does not run inference services"):
        schedsim.make(schedsim.scenario_path("geo_four_regions"))


@pytest.mark.parametrize("scenario", schedsim.env.env_scenarios())
def test_every_shipped_scenario_is_a_gymnasium_env(scenario):
    env_id = "schedsim/" + scenario.replace("_", "-") + "-v0"
    assert env_id in gymnasium.registry
    try:
        env = gymnasium.make(env_id)
        obs, info = env.reset(seed=0)
    except schedsim.InputError as e:
        if "cannot open" in str(e) and "shared/data" in str(e):
            pytest.skip(f"{scenario} needs data that is not here: {e}")
        raise
    expected = schedsim.make(None if scenario == "default" else schedsim.scenario_path(scenario))
    e_obs, _ = expected.reset(seed=0)
    assert (obs["global"] == e_obs["global"]).all() and (obs["candidates"] == e_obs["candidates"]).all()
    for _ in range(20):
        obs, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        assert env.observation_space.contains(obs)
        if term or trunc:
            break


@pytest.mark.parametrize("max_steps", [0, 37])  # episodes that terminate; that are truncated
def test_vector_env_equals_single_envs(max_steps):
    n, seed, steps = 3, 100, 400
    venv = schedsim.VectorEnv(SMALL, num_envs=n, max_candidates=4, max_steps=max_steps, autoreset_mode="same_step")
    singles = [schedsim.make(SMALL, max_candidates=4, max_steps=max_steps) for _ in range(n)]
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
            assert rewards[i] == r and term[i] == te and trunc[i] == tr
            assert ("final_obs" in info and info["_final_obs"][i]) == (te or tr)
            if te or tr:  # same-step autoreset with the next seed of env i's sequence
                # The old episode's last observation and mask, as gymnasium's SAME_STEP mode gives them.
                assert (info["final_obs"][i]["candidates"] == o["candidates"]).all()
                assert (info["final_obs"][i]["global"] == o["global"]).all()
                assert (info["final_info"]["action_mask"][i] == inf["action_mask"]).all() and info["final_info"]["_action_mask"][i]
                episodes[i] += 1
                ended += 1
                o, inf = env.reset(seed=seed + i + n * episodes[i])
            elif "final_obs" in info:
                assert info["final_obs"][i] is None and not info["final_info"]["_action_mask"][i]
            s_obs[i] = (o, inf)
    assert ended >= n  # the comparison crossed episode boundaries
    done = venv.finished_episodes()
    assert len(done) == ended and {d["env"] for d in done} == set(range(n))


def test_vector_env_arrays_are_views_and_threads_do_not_matter():
    a = schedsim.VectorEnv(SMALL, num_envs=4, max_candidates=4, copy=False)
    b = schedsim.VectorEnv(SMALL, num_envs=4, num_threads=2, max_candidates=4, copy=False)
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


def test_vector_env_final_obs_matches_gymnasiums_sync_vector_env():
    # gymnasium's own SAME_STEP vector env over single environments: the same rewards,
    # flags, final observations and final infos, in the same info layout. Episodes are
    # truncated after 5 steps, so every env ends in the same step.
    n, seed = 3, 40
    ours = schedsim.VectorEnv(SMALL, num_envs=n, max_candidates=4, max_steps=5, autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP)
    assert ours.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    ref = gymnasium.vector.SyncVectorEnv([lambda: schedsim.make(SMALL, max_candidates=4, max_steps=5)] * n,
                                         autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP)
    obs, info = ours.reset(seed=seed)
    r_obs, r_info = ref.reset(seed=seed)
    assert (obs["global"] == r_obs["global"]).all() and (info["action_mask"] == r_info["action_mask"]).all()
    rng = np.random.default_rng(3)
    for step in range(5):
        actions = random_legal(rng, info["action_mask"]).astype(np.int32)
        obs, rew, term, trunc, info = ours.step(actions)
        r_obs, r_rew, r_term, r_trunc, r_info = ref.step(actions)
        assert (rew == r_rew).all() and (term == r_term).all() and (trunc == r_trunc).all()
        if step < 4:
            assert "final_obs" not in info and "final_obs" not in r_info
            assert (obs["candidates"] == r_obs["candidates"]).all()
    assert trunc.all()
    for key in ("final_obs", "_final_obs", "final_info", "_final_info"):
        assert key in info and key in r_info, key
    assert (info["_final_obs"] == r_info["_final_obs"]).all() and (info["_final_info"] == r_info["_final_info"]).all()
    assert info["final_obs"].dtype == object and info["final_obs"].shape == (n,)
    for i in range(n):
        for part in ("candidates", "global"):
            assert (info["final_obs"][i][part] == r_info["final_obs"][i][part]).all()
    assert (info["final_info"]["action_mask"] == r_info["final_info"]["action_mask"]).all()
    assert (info["final_info"]["_action_mask"] == r_info["final_info"]["_action_mask"]).all()
    # Copies: the next step does not change them.
    kept = info["final_obs"][0]["global"].copy()
    ours.step(np.full(n, 4, np.int32))
    assert (info["final_obs"][0]["global"] == kept).all()


def test_vector_env_bad_action_leaves_every_env_as_it_was():
    venv = schedsim.VectorEnv(SMALL, num_envs=3, max_candidates=4, invalid_action="raise", copy=False)
    obs, info = venv.reset(seed=4)
    before = obs["global"].copy()
    mask = info["action_mask"]
    assert not mask[2].all()  # env 2 has a masked action to try
    actions = random_legal(np.random.default_rng(0), mask).astype(np.int32)
    actions[2] = int(np.flatnonzero(~mask[2])[0])
    with pytest.raises(schedsim.PolicyError, match=rf"actions: env 2: action {actions[2]} is masked"):
        venv.step(actions)
    with pytest.raises(ValueError, match=r"actions: expected values in 0\.\.4, got 7 for env 1"):
        venv.step(np.array([4, 7, 4], np.int32))
    assert (obs["global"] == before).all()  # nothing stepped
    single = schedsim.make(SMALL, max_candidates=4)
    s_obs, _ = single.reset(seed=4)
    actions[2] = 4
    obs, *_ = venv.step(actions)
    s_obs, *_ = single.step(int(actions[0]))
    assert (obs["global"][0] == s_obs["global"]).all()  # env 0 took one step, not two


def test_argument_limits_are_checked_before_anything_is_allocated():
    # max_candidates beyond the env: map's limit: a clear error, not 10**9 rows allocated.
    for k in (10**9, 2**40, 0, 4097):
        with pytest.raises(ValueError, match=rf"max_candidates: expected an int in 1\.\.4096 \(candidate rows per observation\), got {k}$"):
            schedsim.make(SMALL, max_candidates=k)
        with pytest.raises(ValueError, match=r"max_candidates: expected an int in 1\.\.4096"):
            schedsim.VectorEnv(SMALL, num_envs=2, max_candidates=k)
    assert schedsim.make(SMALL, max_candidates=4096).action_space.n == 4097
    with pytest.raises(ValueError, match=r"max_steps: expected an int in 0\.\.2\*\*63-1 \(0 = no limit\), got 1180591620717411303424$"):
        schedsim.make(SMALL, max_steps=2**70)
    with pytest.raises(ValueError, match=r"num_envs: expected an int in 1\.\.65536, got 1099511627776$"):
        schedsim.VectorEnv(SMALL, num_envs=2**40)
    with pytest.raises(ValueError, match=r"num_threads: expected an int in 1\.\.1024, got 1099511627776$"):
        schedsim.VectorEnv(SMALL, num_envs=2, num_threads=2**40)
    env = schedsim.make(SMALL, max_candidates=4)
    with pytest.raises(ValueError, match=r"seed: must be at most 9223372036854775807 \(2\^63-1, the seed range of the CLI and of results.json\), got 1180591620717411303424$"):
        env.reset(seed=2**70)
    venv = schedsim.VectorEnv(SMALL, num_envs=2, max_candidates=4)
    with pytest.raises(ValueError, match=r"seed: must be at most 9223372036854775807 \(2\^63-1"):
        venv.reset(seed=2**70)


def test_no_binding_message_reaches_users():
    # Every documented entry point checks its arguments itself: no pybind11
    # "incompatible function arguments" or "Unable to cast" text.
    calls = [
        lambda: schedsim.make(SMALL, max_candidates=2**40),
        lambda: schedsim.make(SMALL, max_steps=2**70),
        lambda: schedsim.make(SMALL, reward_scale="x"),
        lambda: schedsim.make(SMALL).reset(seed=2**70),
        lambda: schedsim.make(SMALL).reset(seed="1"),
        lambda: schedsim.VectorEnv(SMALL, num_envs=2**40),
        lambda: schedsim.VectorEnv(SMALL, num_envs="a"),
        lambda: schedsim.VectorEnv(SMALL, num_envs=2, num_threads=2**40),
        lambda: schedsim.VectorEnv(SMALL, num_envs=2).reset(seed=2**70),
        lambda: schedsim.load_config(SMALL, seed=2**70),
        lambda: schedsim.load_config(SMALL).with_seed(2**70),
        lambda: schedsim.simulate(SMALL, seed=2**70),
        lambda: schedsim.simulate(SMALL, policy=123),
        lambda: schedsim.ledger_verify(5),
        lambda: schedsim.ledger_verify("x.csv", key_file=3),
    ]
    for call in calls:
        with pytest.raises((TypeError, ValueError)) as e:
            call()
        text = str(e.value)
        assert "incompatible function arguments" not in text and "incompatible constructor arguments" not in text
        assert "Unable to cast" not in text
