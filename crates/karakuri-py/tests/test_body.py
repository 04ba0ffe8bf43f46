"""load_body and World.from_file on Choreonoid .body files (tests/data/body)."""

import math
import pathlib

import pytest

import karakuri

DATA = pathlib.Path(__file__).resolve().parents[3] / "tests" / "data" / "body"


def test_load_body_sr1():
    model = karakuri.load_body(DATA / "SR1" / "SR1.body")
    # a free root and 29 revolute joints; the masses SR1.body states sum to 130.8 kg
    assert (model.nq, model.nv) == (36, 35)
    assert math.isclose(model.total_mass, 130.8, rel_tol=1e-12)
    # LLEG_KNEE's jointRange [0, 150] degrees (SR1.body line 513)
    knee = model.idx_q("LLEG_KNEE")
    assert model.upper_position_limit[knee] == math.radians(150)


def test_body_errors_name_file_line_and_key(tmp_path):
    bad = tmp_path / "bad.body"
    bad.write_text("format: ChoreonoidBody\nformatVersion: 1.0\nlinks:\n  - name: A\n    jointType: hinge\n")
    with pytest.raises(karakuri.BodyError, match=r"bad.body:5: links\[0\].jointType: unknown joint type 'hinge'"):
        karakuri.load_body(bad)


def test_world_from_a_body_file():
    world = karakuri.World.from_file(str(DATA / "SR1" / "SR1.body"))
    world.step()
    assert "SR1/WaistGyro" in world.sensor_names
    assert "SR1/LLEG_KNEE" in world.joint_names


def test_tank_tracks_are_commanded_by_name():
    # Tank.body's TRACK_L and TRACK_R are pseudo_continuous_track links: tracks named after
    # them, their surface speed a command; at 0.3 m/s on both the Tank drives forward (+x) at
    # 0.3 m/s (the friction rows hold the tracks' bottom runs at -0.3 m/s against the floor)
    world = karakuri.World.from_file(str(DATA / "Tank" / "Tank.body"))
    assert world.track_names == ["Tank/TRACK_L", "Tank/TRACK_R"]
    for track in world.track_names:
        world.set_track_speed(track, 0.3)
    assert world.track_speed("Tank/TRACK_L") == 0.3
    with pytest.raises(ValueError, match="nope"):
        world.set_track_speed("nope", 0.1)
    world.step(round(1.5 / world.dt))
    v = world.linear_velocities[world.body_index("Tank/CHASSIS")]
    assert abs(v[0] - 0.3) < 0.01 and abs(v[1]) < 0.01, v
