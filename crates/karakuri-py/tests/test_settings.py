"""Settings changed while running (contact modes, materials, contact numbers, gravity) and the
accelerations of the last step, from Python, against analytic motion."""

import math

import numpy as np
import pytest

import karakuri

SCENE = """
name: t
world: {gravity: [0, 0, -9.81], dt: 0.001}
materials:
  m: {static_friction: 0.5, dynamic_friction: 0.5, restitution: 0.0}
bodies:
  - {name: ground, shapes: [{type: plane, material: m}]}
  - name: box
    mass: 1
    inertia: [[0.00667, 0, 0], [0, 0.00667, 0], [0, 0, 0.00667]]
    joints: [{type: free, q0: {position: [0, 0, 0.1]}, qd0: {linear: [3, 0, 0]}}]
    shapes: [{type: box, half_extents: [0.1, 0.1, 0.1], material: m}]
  - name: ball
    mass: 1
    inertia: [[0.004, 0, 0], [0, 0.004, 0], [0, 0, 0.004]]
    joints: [{type: free, q0: {position: [2, 0, 3]}}]
    shapes: [{type: sphere, radius: 0.1, material: m}]
"""


@pytest.fixture
def world(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(SCENE)
    return karakuri.World.from_file(str(path))


def test_accelerations_read_gravity_and_friction(world):
    with pytest.raises(ValueError):
        world.body_accelerations
    world.step(20)
    lin, ang = world.body_accelerations
    ball, box = world.body_index("ball"), world.body_index("box")
    assert np.allclose(lin[ball], [0, 0, -9.81], atol=1e-9)
    assert abs(lin[box][0] + 0.5 * 9.81) < 1e-5
    world.set_material(["box", "ground"], 0.1)
    world.step(5)
    assert abs(world.body_accelerations[0][box][0] + 0.1 * 9.81) < 1e-5
    world.set_gravity([0, 0, -3.0])
    assert world.gravity == [0, 0, -3.0]
    world.step()
    assert np.allclose(world.body_accelerations[0][ball], [0, 0, -3.0], atol=1e-9)
    assert len(world.joint_accelerations) == 0


def test_modes_and_numbers_are_checked(world):
    assert world.set_contact_mode("ball", "*", "none") == 2
    assert world.set_contact_mode(["box"], "ground", "penalty", stiffness=5000.0, damping=50.0) == 1
    with pytest.raises(ValueError, match="stiffness"):
        world.set_contact_mode("box", "ground", "penalty")
    with pytest.raises(ValueError, match="unknown contact mode"):
        world.set_contact_mode("box", "ground", "soft")
    with pytest.raises(ValueError, match="nobody"):
        world.set_contact_mode("box", "nobody", "lcp")
    world.set_contact_params(restitution_threshold_velocity=0.3)
    assert world.contact_params["restitution_threshold_velocity"] == 0.3
    with pytest.raises(ValueError, match="friction_threshold_velocity"):
        world.set_contact_params(friction_threshold_velocity=-1.0)
    with pytest.raises(ValueError, match="unknown contact parameter"):
        world.set_contact_params(stiffness=3.0)
    with pytest.raises(ValueError, match="gravity"):
        world.set_gravity([0, math.nan, 0])
    with pytest.raises(ValueError):
        world.set_material("box", -0.5)
