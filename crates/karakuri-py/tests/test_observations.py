"""Observations carry each floating base's and free body's state (issue 31): position,
quaternion, linear and angular velocity, checked against free flight worked out by hand, and
Batch gives every world's poses and velocities as World does."""

from pathlib import Path

import numpy as np
import pytest

import karakuri

HERE = Path(__file__).resolve().parent
TUMBLING = HERE / "scenes" / "tumbling.yaml"
PENDULUM = HERE / "scenes" / "pendulum.yaml"
G = 9.81
COMPONENTS = ["x", "y", "z", "qx", "qy", "qz", "qw", "vx", "vy", "vz", "wx", "wy", "wz"]


def base(world, name):
    """The 13 observation entries of one base, by name."""
    names = world.observation_names
    i = names.index(f"base:{name}:x")
    assert names[i : i + 13] == [f"base:{name}:{c}" for c in COMPONENTS]
    return world.observation()[i : i + 13]


def test_free_flight_is_observed_as_derived():
    """The box: thrown with v0 = (0.5, 0, 3) m/s and spinning at 2 rad/s about z, a principal
    axis, so its spin stays constant (Euler's equations with ω along a principal axis) and the
    rotation after t is 2t about z: q = (0, 0, sin t, cos t). Semi-implicit Euler adds g dt to
    the velocity each step, so vz = 3 − g t exactly (up to rounding) and x = 0.5 t. Solo-12
    falls from rest as one body (uniform gravity moves no joint): its base's vz = −g t."""
    w = karakuri.World.from_file(TUMBLING)
    assert [n.split(":")[1] for n in w.observation_names if n.endswith(":qw")] == ["box", "solo"]
    w.step(500)
    t = w.time
    assert abs(t - 0.5) < 1e-12
    box = base(w, "box")
    assert abs(box[0] - 0.5 * t) < 1e-9 and abs(box[1]) < 1e-12
    dt, n = w.dt, w.steps  # z_n = z0 + dt Σ_k v_k with v_k = 3 − g k dt
    assert abs(box[2] - (1 + 3.0 * t - G * dt * dt * n * (n + 1) / 2)) < 1e-9
    assert np.allclose(box[3:7], [0, 0, np.sin(t), np.cos(t)], atol=1e-9)
    assert np.allclose(box[7:10], [0.5, 0, 3.0 - G * t], atol=1e-9)
    assert np.allclose(box[10:13], [0, 0, 2.0], atol=1e-9)
    solo = base(w, "solo")
    assert np.allclose(solo[7:10], [0, 0, -G * t], atol=1e-9)
    assert np.allclose(solo[10:13], 0, atol=1e-9)
    assert abs(np.linalg.norm(solo[3:7]) - 1) < 1e-12 and solo[6] >= 0
    # the same numbers as the world's own getters
    k = w.body_names.index("box")
    assert np.array_equal(box[0:3], w.positions[k])
    assert np.array_equal(box[7:10], w.linear_velocities[k]) and np.array_equal(box[10:13], w.angular_velocities[k])


def test_a_hinged_body_is_no_base():
    w = karakuri.World.from_file(PENDULUM)
    assert not any(n.startswith("base:") for n in w.observation_names)


def test_batch_gives_poses_and_velocities_of_every_world():
    batch = karakuri.Batch(TUMBLING, 3, seed=1)
    singles = [karakuri.World.from_file(TUMBLING) for _ in range(3)]
    batch.step(steps=20)
    n, nb = 3, len(batch.body_names)
    assert batch.poses.shape == (n, nb, 4, 4)
    assert batch.linear_velocities.shape == batch.angular_velocities.shape == (n, nb, 3)
    obs = batch.observations()
    for i in range(n):
        assert np.array_equal(batch.poses[i, :, :3, 3], batch.positions[i])
    # world 0 of the first episode is the scene itself: a single world gives the same state
    singles[0].step(20)
    assert np.array_equal(batch.poses[0], singles[0].poses)
    assert np.array_equal(batch.linear_velocities[0], singles[0].linear_velocities)
    assert np.array_equal(batch.angular_velocities[0], singles[0].angular_velocities)
    assert np.array_equal(obs[0], singles[0].observation())


def test_the_gym_space_bounds_quaternions():
    pytest.importorskip("gymnasium")
    from karakuri.gym import KarakuriVectorEnv

    env = KarakuriVectorEnv(TUMBLING, 2)
    space, names = env.single_observation_space, env.observation_names
    for i, name in enumerate(names):
        quaternion = name.startswith("base:") and name.rsplit(":", 1)[1] in ("qx", "qy", "qz", "qw")
        assert (space.low[i], space.high[i]) == ((-1.0, 1.0) if quaternion else (-np.inf, np.inf)) or name.startswith("q:"), name
