"""load_mjcf and the qpos/qvel conversions, against MuJoCo itself when it is installed."""

import pathlib

import numpy as np
import pytest

import karakuri

DATA = pathlib.Path(__file__).resolve().parents[3] / "tests" / "data" / "mjcf"


def test_load_mjcf_names_and_sizes():
    model = karakuri.load_mjcf(DATA / "features" / "features.xml")
    assert (model.nq, model.nv) == (19, 17)
    assert karakuri.buildModelFromMJCF is karakuri.load_mjcf


def test_errors_name_file_line_and_element(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody>\n<body><joint axsi='1 0 0'/></body></worldbody></mujoco>")
    with pytest.raises(karakuri.MjcfError, match=r"bad.xml:2: <joint>: unknown attribute 'axsi'"):
        karakuri.load_mjcf(bad)


def test_conversions_round_trip():
    model = karakuri.load_mjcf(DATA / "features" / "features.xml")
    rng = np.random.default_rng(3)
    q = karakuri.random_configuration(model, seed=1)
    v = rng.uniform(-1, 1, model.nv)
    qpos = karakuri.to_mujoco_qpos(model, q)
    qvel = karakuri.to_mujoco_qvel(model, q, v)
    assert qpos[3] == q[6]  # the free joint's w first in MuJoCo
    np.testing.assert_allclose(karakuri.from_mujoco_qpos(model, qpos), q, atol=1e-15)
    np.testing.assert_allclose(karakuri.from_mujoco_qvel(model, qpos, qvel), v, atol=1e-14)


def test_mass_matrix_and_bias_equal_mujoco():
    mujoco = pytest.importorskip("mujoco")
    path = DATA / "dm_control" / "humanoid.xml"
    model = karakuri.load_mjcf(path)
    data = model.create_data()
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    d.qpos[:] = m.key_qpos[0] if m.nkey else m.qpos0
    q = karakuri.from_mujoco_qpos(model, d.qpos)
    mujoco.mj_forward(m, d)
    full = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, full)
    # at zero velocity the free joint's Jacobian is blockdiag(R, I): M_k = Aᵀ M A, bias_k = Aᵀ bias
    A = np.eye(m.nv)
    rotation = np.zeros(9)
    mujoco.mju_quat2Mat(rotation, d.qpos[3:7])
    A[:3, :3] = rotation.reshape(3, 3)
    np.testing.assert_allclose(karakuri.crba(model, data, q), A.T @ full @ A, rtol=0, atol=1e-12 * np.abs(full).max())
    zero = np.zeros(m.nv)
    np.testing.assert_allclose(karakuri.rnea(model, data, q, zero, zero), A.T @ d.qfrc_bias, atol=1e-12 * np.abs(d.qfrc_bias).max())


def test_world_from_an_mjcf_file_steps():
    # a lone .xml is a scene of that one robot: the file's timestep, its first keyframe (here
    # qpos0), MuJoCo's contact rules; gymnasium's hopper stands on its leg 2 s later
    world = karakuri.World.from_file(DATA / "gymnasium" / "hopper.xml")
    assert world.dt == pytest.approx(0.002) and world.time == 0.0
    torso = world.body_index("hopper/torso")
    z0 = world.positions[torso, 2]
    assert z0 == pytest.approx(1.25)  # the torso body's z in the file (rootz at 0)
    world.step(1000)
    assert world.time == pytest.approx(2.0)
    z = world.positions[torso, 2]
    assert 1.0 < z < 1.3, z
    assert world.contacts, "the foot rests on the floor"
    assert any("hopper/foot" in c["bodies"] for c in world.contacts), world.contacts
