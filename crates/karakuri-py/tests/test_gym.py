"""karakuri.gym: the gymnasium.vector.VectorEnv adapter over Batch (skipped without gymnasium,
except the test of the how-to error when it is missing)."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

import karakuri

PENDULUM = Path(__file__).resolve().parent / "scenes" / "pendulum.yaml"


def test_without_gymnasium_the_import_error_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "gymnasium", None)  # makes `import gymnasium` fail
    monkeypatch.delitem(sys.modules, "karakuri.gym", raising=False)
    with pytest.raises(ImportError, match="pip install gymnasium"):
        importlib.import_module("karakuri.gym")


def make(n=3, **kw):
    gym = pytest.importorskip("karakuri.gym", exc_type=ImportError)
    return gym.KarakuriVectorEnv(PENDULUM, n, **kw)


def test_spaces_come_from_the_scene():
    pytest.importorskip("gymnasium")
    env = make()
    assert isinstance(env, __import__("gymnasium").vector.VectorEnv)
    assert env.single_action_space.shape == (1,) and env.action_space.shape == (3, 1)
    assert env.single_action_space.low.tolist() == [-40.0] and env.single_action_space.high.tolist() == [40.0]
    assert env.single_observation_space.shape == (14,) and env.observation_space.shape == (3, 14)
    assert env.single_observation_space.low[0] == -3.0 and env.single_observation_space.high[0] == 3.0
    assert np.isinf(env.single_observation_space.high[1:]).all()
    assert env.observation_names[:2] == ["q:hinge", "dq:hinge"]


def test_steps_follow_the_batch_and_episodes_autoreset():
    pytest.importorskip("gymnasium")
    target = 0.5
    env = make(
        seed=1,
        frame_skip=4,
        max_episode_steps=25,
        reward_fn=lambda obs, act, nxt: -((nxt[:, 0] - target) ** 2),
        termination_fn=lambda nxt: nxt[:, 0] > 0.3,
    )
    batch = karakuri.Batch(PENDULUM, 3, seed=1)
    obs, info = env.reset(seed=1)
    assert np.array_equal(obs, batch.reset(seed=1)) and info == {}
    assert env.observation_space.contains(obs)
    rng = np.random.default_rng(2)
    pushes = np.array([[0.0], [20.0], [-3.0]])  # world 1 swings past 0.3 rad and terminates
    seen_termination = seen_truncation = False
    for t in range(60):
        actions = pushes + rng.normal(0, 0.1, size=(3, 1))
        autoreset = env._autoreset.copy()
        obs, rew, term, trunc, _ = env.step(actions)
        assert obs.shape == (3, 14) and rew.shape == term.shape == trunc.shape == (3,)
        expected = batch.step(np.where(autoreset[:, None], 0.0, actions), steps=4)
        if autoreset.any():
            expected[autoreset] = batch.reset(indices=np.flatnonzero(autoreset).tolist())[autoreset]
            assert (rew[autoreset] == 0).all() and not term[autoreset].any()
        assert np.array_equal(obs, expected), t
        live = ~autoreset
        assert np.allclose(rew[live], -((obs[live, 0] - target) ** 2))
        assert np.array_equal(term[live], obs[live, 0] > 0.3)
        seen_termination |= bool(term.any())
        seen_truncation |= bool(trunc.any())
    assert seen_termination and seen_truncation
