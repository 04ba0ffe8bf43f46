"""A Gymnasium vector environment over :class:`karakuri.Batch` (needs ``gymnasium>=1.0``:
``pip install gymnasium``).

>>> import numpy as np
>>> from karakuri.gym import KarakuriVectorEnv
>>> env = KarakuriVectorEnv("pendulum.yaml", num_envs=64, seed=0,
...                         reward_fn=lambda obs, act, nxt: -nxt[:, 0] ** 2,
...                         termination_fn=lambda nxt: np.abs(nxt[:, 0]) > 2.5,
...                         max_episode_steps=500, frame_skip=10)
>>> obs, info = env.reset(seed=0)
>>> obs, reward, terminated, truncated, info = env.step(env.action_space.sample())

The N worlds step in Rust threads with the GIL released. Observations are the batch's rows
(``q``, ``dq``, the sensors' values, then each floating base's and free body's position,
quaternion ``x y z w``, linear and angular velocity; names in ``env.observation_names``, the
base entries ``base:<name>:<component>``); actions are the
actuators' targets (columns ``env.actuator_names``). The action space is a ``Box`` bounded by
each actuator's limits (effort limit for torque actuators, the joint's limits for position
actuators, velocity limit for velocity actuators); the observation space bounds ``q`` by the
joints' limits and quaternion components by [-1, 1] and leaves the rest unbounded. Rewards and terminations are the user's
callables over the batch arrays. Finished sub-environments reset on the next ``step``
(Gymnasium's ``AutoresetMode.NEXT_STEP``): that step ignores their action and returns their
first observation with reward 0.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, Optional, Tuple, Union

import numpy as np

try:
    import gymnasium
    from gymnasium import spaces
    from gymnasium.vector import AutoresetMode
except ImportError as e:  # pragma: no cover - exercised by a test that hides gymnasium
    raise ImportError(
        "karakuri.gym needs gymnasium >= 1.0, which is not installed: "
        "pip install gymnasium   (or: pip install 'karakuri-rbd[gym]')"
    ) from e

from . import Batch

__all__ = ["KarakuriVectorEnv"]

RewardFn = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
TerminationFn = Callable[[np.ndarray], np.ndarray]


class KarakuriVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` worlds of the scene file ``scene`` as a ``gymnasium.vector.VectorEnv``.

    Args:
        scene: the scene file (docs/SCENE_FORMAT.md); its actuators are the action columns.
        num_envs: number of worlds.
        reward_fn: ``reward_fn(obs, actions, next_obs) -> (num_envs,)`` rewards (default 0).
        termination_fn: ``termination_fn(next_obs) -> (num_envs,)`` bools (default never).
        max_episode_steps: truncate episodes after this many ``step`` calls (default never).
        frame_skip: simulation steps per ``step`` call (the actions held over them).
        seed: seeds the worlds' initial-state perturbations (see :class:`karakuri.Batch`);
            ``reset(seed=...)`` reseeds.
        perturb: perturb the initial states when seeded.
    """

    metadata: Dict[str, Any] = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        scene: Union[str, "os.PathLike[str]"],
        num_envs: int,
        *,
        reward_fn: Optional[RewardFn] = None,
        termination_fn: Optional[TerminationFn] = None,
        max_episode_steps: Optional[int] = None,
        frame_skip: int = 1,
        seed: Optional[int] = None,
        perturb: bool = True,
    ) -> None:
        if frame_skip < 1:
            raise ValueError(f"frame_skip must be at least 1, got {frame_skip}")
        self.batch = Batch(scene, num_envs, seed=seed, perturb=perturb)
        self.num_envs = num_envs
        self.reward_fn = reward_fn
        self.termination_fn = termination_fn
        self.max_episode_steps = max_episode_steps
        self.frame_skip = frame_skip
        self.observation_names = self.batch.observation_names
        self.actuator_names = self.batch.actuator_names

        low, high = self.batch.action_bounds
        self.single_action_space = spaces.Box(low, high, dtype=np.float64)
        obs_low = np.full(self.batch.obs_dim, -np.inf)
        obs_high = np.full(self.batch.obs_dim, np.inf)
        nj = len(self.batch.joint_names)
        obs_low[:nj], obs_high[:nj] = self.batch.joint_limits
        quaternion = [i for i, n in enumerate(self.observation_names) if n.startswith("base:") and n.rsplit(":", 1)[1] in ("qx", "qy", "qz", "qw")]
        obs_low[quaternion], obs_high[quaternion] = -1.0, 1.0
        self.single_observation_space = spaces.Box(obs_low, obs_high, dtype=np.float64)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, num_envs)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, num_envs)

        self._obs = self.batch.observations()
        self._episode_steps = np.zeros(num_envs, dtype=np.int64)
        self._autoreset = np.zeros(num_envs, dtype=bool)

    def reset(
        self, *, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None
    ) -> Tuple[np.ndarray, Dict[str, Any]]:
        """Rebuilds every world at the scene's (perturbed) initial state; ``seed`` reseeds
        the perturbations. Returns ``(obs, {})``."""
        super().reset(seed=seed)
        self._obs = self.batch.reset(seed=seed)
        self._episode_steps[:] = 0
        self._autoreset[:] = False
        return self._obs.copy(), {}

    def step(
        self, actions: np.ndarray
    ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Dict[str, Any]]:
        """Holds ``actions`` (``(num_envs, len(actuator_names))`` targets) over ``frame_skip``
        steps of every world. Returns ``(obs, rewards, terminations, truncations, {})``."""
        actions = np.asarray(actions, dtype=np.float64).reshape(self.action_space.shape)
        done = self._autoreset
        if done.any():
            # their action is ignored (they are rebuilt after the step): any valid command
            actions = actions.copy()
            actions[done] = np.clip(0.0, self.single_action_space.low, self.single_action_space.high)
        next_obs = self.batch.step(actions, steps=self.frame_skip)
        rewards = np.zeros(self.num_envs) if self.reward_fn is None else np.asarray(self.reward_fn(self._obs, actions, next_obs), dtype=np.float64)
        terminations = (
            np.zeros(self.num_envs, dtype=bool)
            if self.termination_fn is None
            else np.asarray(self.termination_fn(next_obs), dtype=bool).reshape(self.num_envs)
        )
        self._episode_steps += 1
        truncations = (
            np.zeros(self.num_envs, dtype=bool)
            if self.max_episode_steps is None
            else self._episode_steps >= self.max_episode_steps
        )
        if done.any():
            indices = np.flatnonzero(done)
            next_obs[indices] = self.batch.reset(indices=indices.tolist())[indices]
            rewards[indices] = 0.0
            terminations[indices] = False
            truncations[indices] = False
            self._episode_steps[indices] = 0
        self._autoreset = terminations | truncations
        self._obs = next_obs
        return next_obs.copy(), rewards, terminations, truncations, {}
