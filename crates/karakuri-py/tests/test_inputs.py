"""Bad inputs raise Python exceptions with a clear message; none crashes the interpreter.
Also: identities between the calls, aliases, and freshness of the values read from Data."""

import gc
from pathlib import Path

import numpy as np
import pytest

import karakuri

DATA = Path(__file__).resolve().parents[3] / "tests" / "data"


@pytest.fixture(scope="module")
def talos():
    model = karakuri.load_urdf(DATA / "talos_reduced.urdf", floating=True)
    return model, model.create_data()


@pytest.fixture(scope="module")
def ur5():
    model = karakuri.load_urdf(str(DATA / "ur5.urdf"))
    return model, model.create_data()


def test_model_attributes(talos):
    model, _ = talos
    assert (model.nq, model.nv, model.njoints) == (39, 38, 34)
    assert model.names[0] == "universe" and len(model.names) == model.njoints
    assert model.idx_q("root_joint") == 0 and model.idx_v("root_joint") == 0
    j = model.get_joint_id("head_2_joint")
    assert model.idx_q("head_2_joint") == model.idx_q(j) == model.idx_qs[j]
    assert model.idx_v("head_2_joint") == model.idx_vs[j]
    assert model.lower_position_limit.shape == (39,)
    assert np.allclose(model.gravity, [0, 0, -9.81])
    assert model.total_mass == pytest.approx(90.272192)


@pytest.mark.parametrize(
    "name, expected",
    [(f.stem, f.stem) for f in sorted((DATA / "bad").glob("*.urdf"))],
)
def test_bad_urdf_raises_the_located_message(name, expected):
    path = DATA / "bad" / f"{name}.urdf"
    with pytest.raises(karakuri.UrdfError) as e:
        karakuri.load_urdf(path)
    message = str(e.value)
    assert message.startswith(str(path)), message  # file:line: <element>: reason
    assert isinstance(e.value, ValueError)


def test_missing_urdf_raises():
    with pytest.raises(karakuri.UrdfError, match="cannot read"):
        karakuri.load_urdf("/nonexistent/robot.urdf")


def test_wrong_shapes_name_the_argument_and_shape(talos):
    model, data = talos
    q, v = karakuri.neutral(model), np.zeros(model.nv)
    with pytest.raises(ValueError, match=r"rnea: argument 'q' must have shape \(nq,\) = \(39,\), got \(38,\)"):
        karakuri.rnea(model, data, q[:-1], v, v)
    with pytest.raises(ValueError, match=r"argument 'a' must have shape \(nv,\) = \(38,\)"):
        karakuri.rnea(model, data, q, v, np.zeros((38, 1)))
    with pytest.raises(ValueError, match=r"argument 'tau' .*dtype"):
        karakuri.aba(model, data, q, v, v.astype(complex))
    with pytest.raises(ValueError, match=r"argument 'v' must be a float64 array"):
        karakuri.nle(model, data, q, "not a vector")
    with pytest.raises(ValueError, match=r"argument 'v' must have shape \(nv,\) = \(38,\), got a sequence of 3"):
        karakuri.nle(model, data, q, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"rnea: argument 'v' has NaN or infinite entries"):
        karakuri.rnea(model, data, q, np.full(model.nv, np.nan), v)
    with pytest.raises(TypeError):
        karakuri.crba(model, data)
    with pytest.raises(TypeError):
        karakuri.crba(model, "data", q)


def test_other_inputs_are_converted(ur5):
    model, data = ur5
    q = karakuri.neutral(model)
    ref = karakuri.gravity(model, data, q)
    assert np.array_equal(karakuri.gravity(model, data, list(q)), ref)
    assert np.array_equal(karakuri.gravity(model, data, q.astype(np.float32).astype(np.float64)), ref)
    assert np.array_equal(karakuri.gravity(model, data, np.zeros(model.nq, dtype=int)), ref)
    strided = np.zeros(2 * model.nq)
    strided[::2] = q
    assert np.array_equal(karakuri.gravity(model, data, strided[::2]), ref)


def test_data_of_another_model_is_refused(talos, ur5):
    model, _ = ur5
    _, talos_data = talos
    q = karakuri.neutral(model)
    with pytest.raises(ValueError, match="data was created by another model"):
        karakuri.crba(model, talos_data, q)
    other = karakuri.load_urdf(DATA / "ur5.urdf")  # same file, another model object
    with pytest.raises(ValueError, match="another model"):
        karakuri.crba(other, ur5[1], q)


def test_unknown_joints_and_frames(ur5):
    model, data = ur5
    with pytest.raises(ValueError, match="no joint named 'nope'"):
        model.idx_q("nope")
    with pytest.raises(ValueError, match="out of range"):
        model.idx_v(99)
    karakuri.compute_joint_jacobians(model, data, karakuri.neutral(model))
    with pytest.raises(ValueError, match="no joint named"):
        karakuri.get_joint_jacobian(model, data, "nope", karakuri.ReferenceFrame.LOCAL)
    with pytest.raises(ValueError, match="ReferenceFrame"):
        karakuri.get_joint_jacobian(model, data, 1, "sideways")
    with pytest.raises(ValueError, match="no frame named"):
        karakuri.get_frame_jacobian(model, data, "nope", "local")


def test_stale_reads_raise(ur5):
    model, _ = ur5
    data = model.create_data()
    q = karakuri.random_configuration(model, seed=2)
    with pytest.raises(RuntimeError, match="forward_kinematics"):
        data.oMi
    with pytest.raises(RuntimeError, match="compute_joint_jacobians"):
        karakuri.get_joint_jacobian(model, data, 6, "world")
    karakuri.compute_joint_jacobians(model, data, q)
    karakuri.get_joint_jacobian(model, data, 6, "world")
    karakuri.rnea(model, data, karakuri.neutral(model), np.zeros(6), np.zeros(6))
    with pytest.raises(RuntimeError, match="compute_joint_jacobians"):
        karakuri.get_joint_jacobian(model, data, 6, "world")
    karakuri.forward_kinematics(model, data, q)
    with pytest.raises(RuntimeError, match=r"forward_kinematics\(model, data, q, v\)"):
        data.v
    M = karakuri.crba(model, data, q)
    assert np.array_equal(data.M, M)
    karakuri.rnea(model, data, karakuri.neutral(model), np.zeros(6), np.zeros(6))
    with pytest.raises(RuntimeError, match=r"crba\(model, data, q\)"):
        data.M


def test_identities(talos):
    model, data = talos
    rng = np.random.default_rng(0)
    q = karakuri.random_configuration(model, seed=5)
    v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
    tau = karakuri.rnea(model, data, q, v, a)
    assert np.abs(karakuri.aba(model, data, q, v, tau) - a).max() < 1e-9
    M = karakuri.crba(model, data, q)
    assert np.abs(M @ a + karakuri.nle(model, data, q, v) - tau).max() < 1e-9
    assert np.abs(karakuri.minverse(model, data, q) @ M - np.eye(model.nv)).max() < 1e-9
    assert karakuri.kinetic_energy(model, data, q, v) == pytest.approx(0.5 * v @ M @ v, rel=1e-12)
    dq = karakuri.difference(model, q, karakuri.integrate(model, q, 0.1 * v))
    assert np.abs(dq - 0.1 * v).max() < 1e-12
    J = karakuri.compute_joint_jacobians(model, data, q)
    assert J.shape == (6, model.nv)
    Jl = karakuri.get_joint_jacobian(model, data, "head_2_joint", karakuri.ReferenceFrame.LOCAL)
    karakuri.forward_kinematics(model, data, q, v)
    vel = data.v[model.get_joint_id("head_2_joint")]
    assert np.abs(Jl @ v - vel).max() < 1e-12
    Jc = karakuri.center_of_mass_jacobian(model, data, q)
    vcom = Jc @ v
    karakuri.center_of_mass(model, data, q, v)
    assert np.abs(data.vcom - vcom).max() < 1e-12


def test_results_are_new_arrays(ur5):
    model, data = ur5
    q0, q1 = karakuri.random_configuration(model, seed=1), karakuri.random_configuration(model, seed=2)
    g0 = karakuri.gravity(model, data, q0)
    g0_copy = g0.copy()
    karakuri.gravity(model, data, q1)
    assert np.array_equal(g0, g0_copy)


def test_aliases_are_the_same_functions():
    assert karakuri.computeMinverse is karakuri.minverse
    assert karakuri.inverse_dynamics is karakuri.rnea
    assert karakuri.computeGeneralizedGravity is karakuri.gravity
    assert karakuri.getJointJacobian is karakuri.get_joint_jacobian
    assert karakuri.mass_matrix is karakuri.crba
    assert karakuri.forward_dynamics is karakuri.aba


def test_hybrid_extremes(talos):
    model, data = talos
    rng = np.random.default_rng(1)
    q = karakuri.random_configuration(model, seed=9)
    v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    everything = list(range(1, model.njoints))
    qdd, t = karakuri.hybrid_dynamics(model, data, q, v, tau, everything)
    assert np.abs(qdd - karakuri.aba(model, data, q, v, tau)).max() < 1e-9
    assert np.array_equal(t, tau)
    with pytest.raises(ValueError, match="method"):
        karakuri.hybrid_dynamics(model, data, q, v, tau, everything, method="magic")
    with pytest.raises(ValueError, match="no joint named"):
        karakuri.hybrid_dynamics(model, data, q, v, tau, ["nope"])


def test_constraint_set(talos):
    model, data = talos
    rng = np.random.default_rng(2)
    q = karakuri.random_configuration(model, seed=4)
    v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    cs = karakuri.ConstraintSet(model)
    cs.add_frame_contact_6d("leg_left_6_joint", name="left")
    cs.add_frame_contact_6d("leg_right_6_joint", np.eye(4), name="right")
    assert len(cs) == 2 and cs.rows == 12 and cs.find("right") == 1
    direct = cs.forward_dynamics(data, q, v, tau)
    # Kokkevis twice in a row (regression: ABA's base acceleration leaked into kinematics)
    for _ in range(2):
        assert np.abs(cs.forward_dynamics(data, q, v, tau, method="kokkevis") - direct).max() < 1e-8
    assert np.abs(cs.G @ direct - cs.gamma).max() < 1e-8
    assert cs.report["rank"] == 12 and cs.forces.shape == (2, 6)
    v_plus = cs.compute_impulses(data, q, v, method="null_space")
    assert np.abs(cs.G @ v_plus).max() < 1e-9
    with pytest.raises(ValueError, match="method must be"):
        cs.forward_dynamics(data, q, v, tau, method="magic")
    with pytest.raises(ValueError, match="not a rotation"):
        cs.add_frame_contact_6d(1, 2 * np.eye(4))
    with pytest.raises(ValueError, match="normal"):
        cs.add_contact(1, [0, 0, 0], [0, 0, 0])
    with pytest.raises(ValueError, match=r"shape \(k, 6\)"):
        cs.add_loop_constraint(1, None, 2, None, np.eye(3))
    # the same contact twice: rank-deficient but consistent, answered by the fallback
    twice = karakuri.ConstraintSet(model)
    twice.add_point_contact_3d("leg_left_6_joint")
    twice.add_point_contact_3d("leg_left_6_joint")
    twice.forward_dynamics(data, q, v, tau)
    assert twice.report["rank"] == 3 and twice.report["fallback"]
    empty = karakuri.ConstraintSet(model)
    with pytest.raises(ValueError, match="empty"):
        empty.forward_dynamics(data, q, v, tau)


def test_nothing_crashes_on_garbage(ur5):
    model, data = ur5
    garbage = [None, "x", object(), np.array([np.nan] * 6), np.zeros((2, 3)), {}, 1.5]
    for g in garbage:
        for call in (
            lambda: karakuri.rnea(model, data, g, g, g),
            lambda: karakuri.crba(model, data, g),
            lambda: karakuri.get_joint_jacobian(model, data, g, g),
            lambda: karakuri.integrate(model, g, g),
            lambda: model.idx_q(g),
        ):
            try:
                call()
            except (ValueError, TypeError, RuntimeError):
                pass
    gc.collect()
