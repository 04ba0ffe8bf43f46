"""World.snapshot / restore: a restored world continues bit for bit as the uninterrupted one;
snapshots pickle; a snapshot of another scene is refused with the simulator's message."""

import pickle
from pathlib import Path

import numpy as np
import pytest

import karakuri

HERE = Path(__file__).resolve().parent
PENDULUM = HERE / "scenes" / "pendulum.yaml"
STACK = HERE.parents[2] / "tests" / "scenes" / "05a_stack5.json"


def trajectory(world, steps, every=10):
    rows = []
    for _ in range(steps // every):
        world.step(every)
        rows.append(np.concatenate([world.observation(), world.positions.ravel(), world.linear_velocities.ravel()]))
    return np.array(rows)


def pd(io):
    q, dq, _ = io.joint_state("hinge")
    io.set_target("hinge", 20.0 * (0.8 - q) - 2.0 * dq)


@pytest.mark.parametrize("scene", [PENDULUM, STACK])
def test_a_restored_world_continues_bit_for_bit(scene):
    world = karakuri.World.from_file(scene)
    if scene == PENDULUM:
        world.add_controller(pd, 0.005)
    world.step(333)
    snap = world.snapshot()
    assert snap.steps == 333 and snap.time == pytest.approx(0.333)
    ahead = trajectory(world, 700)
    # back in the same world
    world.restore(snap)
    assert world.steps == 333
    assert np.array_equal(trajectory(world, 700), ahead)
    # in a fresh world of the same scene, through pickle
    fresh = karakuri.World.from_file(scene)
    if scene == PENDULUM:
        fresh.add_controller(pd, 0.005)
    copy = pickle.loads(pickle.dumps(snap))
    assert copy == snap and isinstance(copy, karakuri.Snapshot)
    fresh.restore(copy)
    assert np.array_equal(trajectory(fresh, 700), ahead)
    assert karakuri.Snapshot.from_json(snap.to_json()) == snap


def test_a_snapshot_of_another_scene_is_refused():
    snap = karakuri.World.from_file(STACK).snapshot()
    world = karakuri.World.from_file(PENDULUM)
    world.step(5)
    with pytest.raises(ValueError, match="fingerprint"):
        world.restore(snap)
    assert world.steps == 5
    with pytest.raises(ValueError, match="not a karakuri checkpoint"):
        karakuri.Snapshot.from_json("{}")
    with pytest.raises(TypeError):
        world.restore("not a snapshot")
