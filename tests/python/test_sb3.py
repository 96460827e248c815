"""schedsim.sb3: SB3 (and sb3-contrib) on the C++ vector env without a user wrapper."""
import numpy as np
import pytest

import schedsim

if not schedsim.HAS_ENV:
    pytest.skip("this _schedsim extension has no RL environment (schedsim.HAS_ENV is False: built without rl/env), so there is no env to test", allow_module_level=True)
pytest.importorskip("stable_baselines3", reason="stable-baselines3 is not installed (pip install stable-baselines3)")

import schedsim.sb3  # noqa: E402
from schedsim.env import TRAIN_SEED_END, TRAIN_SEED_START  # noqa: E402
from test_env import SMALL  # noqa: E402


def test_sb3_vec_env_steps_as_sb3_expects():
    env = schedsim.sb3.make_vec_env(SMALL, num_envs=3, seed=20, max_candidates=4, max_steps=6)
    obs = env.reset()
    seeds = [i["seed"] for i in env.reset_infos]
    # SB3's seed gives reproducible training workloads, never evaluation ones.
    assert all(TRAIN_SEED_START <= s < TRAIN_SEED_END for s in seeds) and len(set(seeds)) == 3
    again = schedsim.sb3.make_vec_env(SMALL, num_envs=3, seed=20, max_candidates=4)
    again.reset()
    assert [i["seed"] for i in again.reset_infos] == seeds
    other = schedsim.sb3.make_vec_env(SMALL, num_envs=3, seed=21, max_candidates=4)
    other.reset()
    assert [i["seed"] for i in other.reset_infos] != seeds
    ref = schedsim.make(SMALL, max_candidates=4, max_steps=6)
    r_obs, _ = ref.reset(seed=seeds[1])
    assert (obs["global"][1] == r_obs["global"]).all()
    for step in range(6):
        env.step_async(np.full(3, 4))
        obs, rew, dones, infos = env.step_wait()
        r_obs, r_rew, *_ = ref.step(4)
        assert rew.dtype == np.float32 and rew[1] == np.float32(r_rew)
    assert dones.all()
    assert (infos[1]["terminal_observation"]["global"] == r_obs["global"]).all()
    assert infos[1]["TimeLimit.truncated"] is True and infos[1]["episode"]["l"] == 6
    assert (obs["global"][1] == ref.reset(seed=seeds[1] + 3)[0]["global"]).all()  # autoreset: env 1's next seed
    masks = env.env_method("action_masks")
    assert len(masks) == 3 and masks[0].shape == (5,)
    assert env.has_attr("action_masks") and env.get_attr("render_mode") == [None] * 3
    env.close()


def test_ppo_trains_a_few_hundred_steps_on_it():
    from stable_baselines3 import PPO

    env = schedsim.sb3.make_vec_env(SMALL, num_envs=4, seed=100, max_candidates=4, max_steps=50)
    model = PPO("MultiInputPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu", verbose=0)
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512
    assert len(model.ep_info_buffer) >= 4  # episodes of 50 steps were logged from info["episode"]
    obs = env.reset()
    action, _ = model.predict(obs, deterministic=True)
    assert action.shape == (4,)


def test_maskable_ppo_trains_on_it():
    pytest.importorskip("sb3_contrib", reason="sb3-contrib is not installed (pip install sb3-contrib)")
    from sb3_contrib import MaskablePPO

    env = schedsim.sb3.make_vec_env(SMALL, num_envs=2, seed=5, max_candidates=4, max_steps=40, invalid_action="raise")
    model = MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=256)  # every sampled action legal: "raise" would say otherwise
    assert model.num_timesteps >= 256
