"""The minimal simulator binding (World.from_file, step, time, dt, body states) against the
analytic answers of the validation scenes (tests/scenes, copies of ../shared/validation)."""

import json
from pathlib import Path

import numpy as np
import pytest

import karakuri

SCENES = Path(__file__).resolve().parents[3] / "tests" / "scenes"


def expected(scene, check):
    return next(e for e in json.loads((SCENES / scene).read_text())["expected"] if e["id"] == check)


def test_free_fall_matches_the_analytic_answers():
    world = karakuri.World.from_file(SCENES / "01_free_fall.json")
    assert world.dt == pytest.approx(0.001) and world.time == 0.0
    assert world.body_names == ["ball"]
    i = world.body_index("ball")
    w0 = world.angular_velocities[i].copy()
    world.step(1000)
    assert world.steps == 1000 and world.time == pytest.approx(1.0)
    for check, value in [
        ("z_at_T", world.positions[i, 2]),
        ("vz_at_T", world.linear_velocities[i, 2]),
        ("x_at_T", world.positions[i, 0]),
        ("omega_change", np.abs(world.angular_velocities[i] - w0).max()),
    ]:
        e = expected("01_free_fall.json", check)
        assert abs(value - e["analytic"]) <= e["tolerance"], (check, value)
    pose = world.poses[i]
    assert pose.shape == (4, 4) and np.allclose(pose[:3, 3], world.positions[i])
    assert np.allclose(pose[:3, :3] @ pose[:3, :3].T, np.eye(3))


def test_bounce_reports_contacts():
    world = karakuri.World.from_file(SCENES / "02_bounce.json")
    seen = []
    for _ in range(3000):
        world.step()
        seen += world.contacts
        if seen:
            break
    assert seen, "the ball never touched the floor"
    c = seen[0]
    assert set(c) == {"bodies", "point", "normal", "depth", "force"} and len(c["bodies"]) == 2


def test_bad_scene_raises_a_located_error(tmp_path):
    bad = tmp_path / "bad.json"
    scene = json.loads((SCENES / "01_free_fall.json").read_text())
    scene["bodies"][0]["shapes"][0]["radius"] = -1.0
    bad.write_text(json.dumps(scene))
    with pytest.raises(karakuri.SceneError, match=r"bad\.json: bodies\[0\]\.shapes\[0\]\.radius"):
        karakuri.World.from_file(bad)
    with pytest.raises(karakuri.SceneError):
        karakuri.World.from_file(tmp_path / "missing.json")
    world = karakuri.World.from_file(SCENES / "01_free_fall.json")
    with pytest.raises(ValueError, match="no body named"):
        world.body_index("nope")
    with pytest.raises(ValueError):
        world.set_joint_torque("nope", 1.0)
