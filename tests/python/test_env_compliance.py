"""Gymnasium / SB3 compliance with default arguments (issue 27): any action accepted,
training seeds apart from evaluation seeds, finite bounds, pickling."""
import multiprocessing
import pickle

import numpy as np
import pytest

import schedsim

gymnasium = pytest.importorskip("gymnasium")
if not schedsim.HAS_ENV:
    pytest.skip("the extension was built without rl/env", allow_module_level=True)

from test_env import SMALL  # noqa: E402

from schedsim.env import EVAL_SEED_END, TRAIN_SEED_END, TRAIN_SEED_START, legal_action  # noqa: E402


def test_gymnasium_check_env_passes_with_defaults():
    from gymnasium.utils.env_checker import check_env

    check_env(schedsim.make(SMALL))
    check_env(schedsim.make(SMALL, render_mode="rgb_array"), skip_render_check=False)
    check_env(gymnasium.make("schedsim/default-v0").unwrapped)


def test_sb3_check_env_passes_with_defaults():
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker", reason="stable-baselines3 is not installed")
    sb3_checker.check_env(schedsim.make(SMALL), warn=False)
    sb3_checker.check_env(gymnasium.make("schedsim/default-v0").unwrapped, warn=False)


def test_illegal_actions_have_the_documented_meaning():
    # A masked row acts as wait; when wait is masked too, as the first legal action.
    assert legal_action(np.array([True, False, True]), 1) == 2
    assert legal_action(np.array([False, True, False, True, False]), 0) == 1
    assert legal_action(np.array([False, True, True, False]), 3) == 1
    assert legal_action(np.array([False, True, False, True]), 3) == 3
    # In an env: the same step as the remapped action, on a twin env.
    env = schedsim.make(SMALL, max_candidates=4)
    twin = schedsim.make(SMALL, max_candidates=4, invalid_action="raise")
    _, info = env.reset(seed=7)
    twin.reset(seed=7)
    seen_wait = seen_start = False
    rng = np.random.default_rng(0)
    for _ in range(300):
        mask = info["action_mask"]
        action = int(rng.integers(0, 5))
        expected = legal_action(mask, action)
        if not mask[action]:
            seen_wait |= expected == 4
            seen_start |= expected != 4
        obs, r, term, trunc, info = env.step(action)
        assert info["invalid_action"] == (not mask[action]) and info["action_taken"] == expected
        t_obs, t_r, t_term, t_trunc, _ = twin.step(expected)
        assert r == t_r and term == t_term and (obs["global"] == t_obs["global"]).all()
        if term or trunc:
            _, info = env.reset(seed=8)
            twin.reset(seed=8)
    assert seen_wait and seen_start  # both fallbacks were exercised


def test_invalid_action_penalty_is_subtracted_only_for_illegal_actions():
    plain = schedsim.make(SMALL, max_candidates=4)
    fined = schedsim.make(SMALL, max_candidates=4, invalid_action_penalty=0.5)
    _, info = plain.reset(seed=2)
    fined.reset(seed=2)
    rng = np.random.default_rng(1)
    illegal = 0
    for _ in range(100):
        action = int(rng.integers(0, 5))
        _, r, term, trunc, info = plain.step(action)
        _, f, *_ = fined.step(action)
        assert f == (r - 0.5 if info["invalid_action"] else r)
        illegal += info["invalid_action"]
        if term or trunc:
            break
    assert illegal > 0
    with pytest.raises(ValueError, match=r"invalid_action_penalty: expected a finite number >= 0, got -1"):
        schedsim.make(SMALL, invalid_action_penalty=-1)
    with pytest.raises(ValueError, match=r"invalid_action_penalty: only meaningful with invalid_action='remap'"):
        schedsim.make(SMALL, invalid_action="raise", invalid_action_penalty=1.0)
    with pytest.raises(ValueError, match=r"invalid_action: expected 'remap' \(the default\) or 'raise', got 'skip'"):
        schedsim.make(SMALL, invalid_action="skip")


@pytest.mark.parametrize("config", [SMALL, None], ids=["small", "default"])
def test_random_action_episodes_never_raise_and_stay_in_bounds(config):
    env = schedsim.make(config, max_candidates=8, max_steps=0 if config is SMALL else 400)
    for seed in range(10):
        obs, info = env.reset(seed=seed)
        env.action_space.seed(seed)
        while True:
            assert env.observation_space.contains(obs)
            assert info["action_mask"].any()
            obs, r, term, trunc, info = env.step(env.action_space.sample())
            assert np.isfinite(r)
            if term or trunc:
                break


def test_observation_bounds_are_finite_where_known():
    env = schedsim.make(SMALL, max_candidates=4)
    names = env.candidate_feature_names
    box = env.observation_space["candidates"]
    for name, low, high in (("blocked", 0, 1), ("gpus_frac", 0, 1), ("log_age_h", 0, np.inf), ("priority", -np.inf, np.inf)):
        i = names.index(name)
        assert (box.low[:, i] == low).all() and (box.high[:, i] == high).all(), name
    g = env.observation_space["global"]
    i = env.global_feature_names.index("time_of_day_sin")
    assert g.low[i] == -1 and g.high[i] == 1
    i = env.global_feature_names.index("price_now")
    assert g.low[i] == -np.inf and g.high[i] == np.inf


def test_unseeded_resets_draw_training_seeds_never_evaluation_seeds():
    assert EVAL_SEED_END <= TRAIN_SEED_START < TRAIN_SEED_END <= 2**63 - 1
    seeds = []
    for _ in range(3):  # fresh envs: the first unseeded reset too
        env = schedsim.make(SMALL, max_candidates=4)
        seeds += [env.reset()[1]["seed"] for _ in range(5)]
    assert all(TRAIN_SEED_START <= s < TRAIN_SEED_END for s in seeds)
    assert len(set(seeds)) == len(seeds)  # no two unseeded envs share their first episode
    env = schedsim.make(SMALL, max_candidates=4)
    assert env.reset(seed=3)[1]["seed"] == 3  # an explicit seed is used as given
    after = [env.reset()[1]["seed"] for _ in range(3)]
    env.reset(seed=3)
    assert [env.reset()[1]["seed"] for _ in range(3)] == after  # and fixes the later ones
    assert all(TRAIN_SEED_START <= s < TRAIN_SEED_END for s in after)


def test_env_pickles_by_its_arguments():
    env = schedsim.make(SMALL, max_candidates=4, max_steps=50, invalid_action_penalty=0.25, render_mode="ansi")
    copy = pickle.loads(pickle.dumps(env))
    assert copy.invalid_action_penalty == 0.25 and copy.render_mode == "ansi" and copy.action_space.n == 5
    a, _ = env.reset(seed=4)
    b, _ = copy.reset(seed=4)
    assert (a["candidates"] == b["candidates"]).all()
    for _ in range(20):
        ra = env.step(4)
        rb = copy.step(4)
        assert ra[1] == rb[1] and (ra[0]["global"] == rb[0]["global"]).all()
    # A parsed Config travels as its resolved dict; a registered env through gymnasium.
    parsed = schedsim.make(schedsim.load_config(SMALL), max_candidates=4)
    again = pickle.loads(pickle.dumps(parsed))
    assert (again.reset(seed=1)[0]["global"] == parsed.reset(seed=1)[0]["global"]).all()
    made = pickle.loads(pickle.dumps(gymnasium.make("schedsim/default-v0")))
    assert made.reset(seed=0)[0]["global"].shape == (16,)


def _small_env():
    return schedsim.make(SMALL, max_candidates=4, max_steps=30)


def test_async_vector_env_with_spawn():
    ctx = "spawn" if "spawn" in multiprocessing.get_all_start_methods() else None
    venv = gymnasium.vector.AsyncVectorEnv([_small_env] * 2, context=ctx)
    try:
        ref = gymnasium.vector.SyncVectorEnv([_small_env] * 2)
        obs, _ = venv.reset(seed=5)
        r_obs, _ = ref.reset(seed=5)
        assert (obs["global"] == r_obs["global"]).all()
        for _ in range(40):
            actions = venv.action_space.sample()
            obs, rew, term, trunc, _ = venv.step(actions)
            r_obs, r_rew, r_term, r_trunc, _ = ref.step(actions)
            assert (rew == r_rew).all() and (term == r_term).all() and (trunc == r_trunc).all()
            assert (obs["candidates"] == r_obs["candidates"]).all()
    finally:
        venv.close()
