"""Batch: N worlds stepped in Rust threads give, bit for bit, the trajectories of N single
Worlds given the same commands; layout, bounds, seeds, resets and errors."""

from pathlib import Path

import numpy as np
import pytest

import karakuri

HERE = Path(__file__).resolve().parent
PENDULUM = HERE / "scenes" / "pendulum.yaml"
SCENES = HERE.parents[2] / "tests" / "scenes"


def test_the_batch_gives_the_trajectories_of_single_worlds():
    n, calls, frame = 4, 60, 5
    rng = np.random.default_rng(0)
    actions = rng.uniform(-6.0, 6.0, size=(calls, n, 1))
    batch = karakuri.Batch(PENDULUM, n)
    singles = [karakuri.World.from_file(PENDULUM) for _ in range(n)]
    assert batch.observations().shape == (n, batch.obs_dim)
    for c in range(calls):
        obs = batch.step(actions[c], steps=frame)
        for i, w in enumerate(singles):
            w.set_targets(actions[c, i])
            w.step(frame)
            assert np.array_equal(obs[i], w.observation()), (c, i)
    assert np.array_equal(batch.times, [w.time for w in singles])
    assert np.array_equal(batch.positions, np.stack([w.positions for w in singles]))
    # the commands made the worlds differ: the comparison is not between copies of one run
    assert np.ptp(obs[:, 0]) > 0.1


def test_a_batch_with_contacts_matches_single_worlds():
    batch = karakuri.Batch(SCENES / "05a_stack5.json", 3)
    single = karakuri.World.from_file(SCENES / "05a_stack5.json")
    assert batch.num_actuators == 0
    for _ in range(20):
        batch.step(np.zeros((3, 0)), steps=25)
        single.step(25)
    assert all(np.array_equal(batch.positions[i], single.positions) for i in range(3))


def test_layout_names_and_bounds():
    batch = karakuri.Batch(PENDULUM, 2)
    world = karakuri.World.from_file(PENDULUM)
    assert len(batch) == batch.num_worlds == 2
    assert batch.observation_names == world.observation_names
    assert batch.observation_names[:2] == ["q:hinge", "dq:hinge"] and batch.obs_dim == 14
    assert (batch.joint_names, batch.actuator_names, batch.sensor_names) == (world.joint_names, world.actuator_names, world.sensor_names)
    lo, hi = batch.action_bounds
    assert lo.tolist() == [-40.0] and hi.tolist() == [40.0]  # the torque actuator's effort_limit
    lo, hi = batch.joint_limits
    assert lo.tolist() == [-3.0] and hi.tolist() == [3.0]
    assert batch.dt == world.dt


def test_seeds_perturb_reproducibly_and_reset_restarts():
    a = karakuri.Batch(PENDULUM, 3, seed=7)
    b = karakuri.Batch(PENDULUM, 3, seed=7)
    unperturbed = karakuri.World.from_file(PENDULUM).observation()
    obs = a.observations()
    assert np.array_equal(obs, b.observations())
    assert np.array_equal(obs[0], unperturbed)  # world 0 of the first episode is the scene
    assert 0 < abs(obs[1, 0]) <= 1e-3 and 0 < abs(obs[2, 0]) <= 1e-3 and obs[1, 0] != obs[2, 0]
    assert np.array_equal(karakuri.Batch(PENDULUM, 3, seed=7, perturb=False).observations()[:, 0], [0, 0, 0])
    a.step(steps=100)
    again = a.reset()  # new episodes: new perturbations
    assert np.array_equal(a.times, [0, 0, 0]) and not np.array_equal(again, obs)
    assert np.array_equal(a.reset(seed=7), obs)  # reseeded: the first episode again
    a.step(steps=10)
    part = a.reset(indices=[1])
    assert a.times.tolist() == [0.01, 0.0, 0.01]
    assert part[1, 1] == 0.0


def test_bad_inputs_raise():
    batch = karakuri.Batch(PENDULUM, 3)
    with pytest.raises(ValueError, match=r"argument 'actions' must have shape \(3, 1\), got \[3, 2\]"):
        batch.step(np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"must have shape \(3, 1\)"):
        batch.step([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="NaN"):
        batch.step(np.full((3, 1), np.nan))
    with pytest.raises(ValueError, match="world 2: joint 'hinge'.*effort limit 40"):
        batch.step(np.array([[0.0], [1.0], [50.0]]))
    with pytest.raises(ValueError, match="out of range"):
        batch.reset(indices=[3])
    with pytest.raises(ValueError, match="at least 1"):
        karakuri.Batch(PENDULUM, 0)
    with pytest.raises(karakuri.SceneError):
        karakuri.Batch(HERE / "missing.yaml", 2)
    # a Fortran-ordered or integer array is read as well
    obs = batch.step(np.asfortranarray(np.ones((3, 1), dtype=np.int64)))
    assert obs.shape == (3, 14)


def test_step_releases_the_gil():
    import threading

    batch = karakuri.Batch(PENDULUM, 4)
    t = threading.Thread(target=batch.step, kwargs={"steps": 100_000})
    t.start()
    ticks = 0
    while t.is_alive():
        ticks += 1
    t.join()
    assert batch.times.tolist() == pytest.approx([100.0] * 4)
    assert ticks > 1000  # held, the main thread would get no turn during the one Rust call
