"""World.step_derivatives (decision record 0069) from Python against central differences of
the step, the state set with set_joint_positions / set_joint_velocities and the targets with
set_targets (snapshot and restore around each difference)."""

import numpy as np
import pytest

import karakuri

# A double pendulum under semi-implicit Euler: a position servo on the shoulder, a torque
# motor on the elbow, a damper and a spring.
ARM = """
engine: {integrator: semi_implicit_euler}
bodies:
  - name: upper
    mass: 1.2
    com: [0, 0, -0.4]
    inertia: [[0.05, 0, 0], [0, 0.05, 0], [0, 0, 0.002]]
    pose_in_parent: {position: [0, 0, 2]}
    joints: [{name: shoulder, type: revolute, axis: [0, 1, 0], q0: 0.6, qd0: -0.4, damping: 0.2,
              actuator: {mode: position, kp: 40, kd: 2, target: 0.3}}]
  - name: lower
    parent: upper
    mass: 0.8
    com: [0, 0, -0.3]
    inertia: [[0.03, 0, 0], [0, 0.03, 0], [0, 0, 0.001]]
    pose_in_parent: {position: [0, 0, -0.8]}
    joints: [{name: elbow, type: revolute, axis: [0, 1, 0], q0: -0.5, qd0: 1.1, stiffness: 2,
              actuator: {mode: torque, target: 0.5, effort_limit: 10}}]
"""


def world(tmp_path, text):
    path = tmp_path / "scene.yaml"
    path.write_text(text)
    return karakuri.World.from_file(str(path))


def step_from(w, snap, q, dq, u):
    w.restore(snap)
    w.set_joint_positions(q)
    w.set_joint_velocities(dq)
    w.set_targets(u)
    w.step()
    return np.concatenate([w.q, w.dq])


def central_a(w, snap, q, dq, u, eps):
    """A of the 2-dof worlds here by central differences of the step, ± eps on each of (q, dq)."""
    fd_a = np.zeros((4, 4))
    for c in range(4):
        e = np.zeros(4)
        e[c] = eps
        up = step_from(w, snap, q + e[:2], dq + e[2:], u)
        down = step_from(w, snap, q - e[:2], dq - e[2:], u)
        fd_a[:, c] = (up - down) / (2 * eps)
    return fd_a


def test_the_setters_set_the_state(tmp_path):
    w = world(tmp_path, ARM)
    w.set_joint_positions([0.1, 0.2])
    w.set_joint_velocities(np.array([-1.0, 2.0]))
    assert list(w.q) == [0.1, 0.2] and list(w.dq) == [-1.0, 2.0]
    with pytest.raises(ValueError, match="njoints"):
        w.set_joint_positions([0.1])


def test_a_and_b_match_central_differences(tmp_path):
    w = world(tmp_path, ARM)
    w.step(50)
    u = np.array([0.2, -0.3])
    w.set_targets(u)
    snap = w.snapshot()
    q, dq = w.q.copy(), w.dq.copy()
    A, B = w.step_derivatives()
    assert A.shape == (4, 4) and B.shape == (4, 2)
    x0 = step_from(w, snap, q, dq, u)
    fd_a = central_a(w, snap, q, dq, u, 1e-6)
    fd_b = np.zeros((4, 2))
    for c in range(2):
        e = np.zeros(2)
        e[c] = 1e-3
        fd_b[:, c] = (step_from(w, snap, q, dq, u + e) - step_from(w, snap, q, dq, u - e)) / 2e-3
    eye = np.eye(4)
    assert np.abs((A - eye) - (fd_a - eye)).max() < 1e-6 * np.abs(fd_a - eye).max()
    assert np.abs(B - fd_b).max() < 1e-6 * np.abs(fd_b).max()
    # the step is linear in u here: B times a change of targets is the change of the step
    assert np.allclose(step_from(w, snap, q, dq, u + [0.1, 0.1]) - x0, B @ [0.1, 0.1], atol=1e-12)


def test_contacts_the_method_does_not_cover_are_refused_by_name(tmp_path):
    # A box resting on the floor is differentiated (record 0078); a contact between two moving
    # boxes is not, and the refusal says which pairs are covered.
    w = world(tmp_path, """
bodies:
  - {name: floor, shapes: [{type: plane}]}
  - {name: a, mass: 1, inertia: [[0.01,0,0],[0,0.01,0],[0,0,0.01]], joints: [{type: free, q0: {position: [0, 0, 0.0995]}}],
     shapes: [{type: box, half_extents: [0.1, 0.1, 0.1]}]}
  - {name: b, mass: 1, inertia: [[0.01,0,0],[0,0.01,0],[0,0,0.01]], joints: [{type: free, q0: {position: [0.02, 0, 0.2985]}}],
     shapes: [{type: box, half_extents: [0.1, 0.1, 0.1]}]}
""")
    with pytest.raises(ValueError, match="static plane"):
        w.step_derivatives()


def test_the_ilqr_example_swings_the_cart_pole_up():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "ilqr_cartpole.py"
    spec = importlib.util.spec_from_file_location("ilqr_cartpole", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    costs, final = module.ilqr(iterations=100, log=lambda *_: None)
    assert all(b < a for a, b in zip(costs, costs[1:])), "iLQR's accepted steps lower the cost"
    assert costs[-1] < costs[0] / 50
    assert abs(final[1] - np.pi) < 0.05 and abs(final[0]) < 0.05, final


# A cart on a slider pushed by a motor, a pole hanging from it whose tip ball (r 5 cm) drags
# on the floor 0.5 mm deep (record 0078); pushed back, the pole swings down and the tip presses
# and slides, its normal row holding. Solves run to
# 1e-13 so that the step is its active set's exact solution.
DRAG = f"""
engine: {{integrator: semi_implicit_euler, tolerance: 1e-13, max_iterations: 20000}}
materials: {{m: {{static_friction: 0.2}}}}
bodies:
  - {{name: floor, shapes: [{{type: plane, material: m}}]}}
  - name: cart
    mass: 2
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    pose_in_parent: {{position: [0, 0, {np.cos(0.3) + 0.05 - 0.0005}]}}
    joints: [{{name: slide, type: prismatic, axis: [1, 0, 0], qd0: -0.3,
              actuator: {{mode: torque, target: -30, effort_limit: 100}}}}]
  - name: pole
    parent: cart
    mass: 0.5
    com: [0, 0, -0.5]
    inertia: [[0.04, 0, 0], [0, 0.04, 0], [0, 0, 0.001]]
    joints: [{{name: hinge, type: revolute, axis: [0, 1, 0], q0: 0.3, qd0: -0.1}}]
    shapes: [{{type: sphere, radius: 0.05, pose: {{position: [0, 0, -1]}}, material: m}}]
"""


def test_through_a_sliding_contact(tmp_path):
    w = world(tmp_path, DRAG)
    u = np.array([-30.0])
    w.set_targets(u)
    snap = w.snapshot()
    q, dq = w.q.copy(), w.dq.copy()
    A, B = w.step_derivatives()
    fd_a = central_a(w, snap, q, dq, u, 1e-7)
    e = np.array([1e-6])
    fd_b = (step_from(w, snap, q, dq, u + e) - step_from(w, snap, q, dq, u - e)) / 2e-6
    w.step()
    assert len(w.contacts) == 1 and w.contacts[0]["force"][2] > 0, "the tip pushes on the floor"
    eye = np.eye(4)
    assert np.abs(A - fd_a).max() < 1e-6 * np.abs(fd_a - eye).max()
    assert np.abs(B[:, 0] - fd_b).max() < 1e-6 * np.abs(fd_b).max()


def test_out_fills_the_given_arrays_with_the_same_derivatives():
    """``out=(A, B)`` fills arrays made once (C or Fortran order) with what the plain call
    returns, returns those arrays, and names a wrong shape or dtype."""
    import tempfile
    from pathlib import Path

    xml = Path(__file__).resolve().parents[3] / "tests/data/mjcf/dm_control/cheetah.xml"
    with tempfile.TemporaryDirectory() as tmp:
        scene = Path(tmp) / "cheetah.yaml"
        scene.write_text(f"name: cheetah\ncontact: {{mode: none}}\nrobots: [{{name: r, mjcf: {xml}, collision: none}}]\n")
        w = karakuri.World.from_file(str(scene))
    w.step(20)
    A, B = w.step_derivatives()
    for order in ["C", "F"]:
        out = (np.zeros(A.shape, order=order), np.zeros(B.shape, order=order))
        ra, rb = w.step_derivatives(out=out)
        assert ra is out[0] and rb is out[1]
        assert np.array_equal(ra, A) and np.array_equal(rb, B)
    with pytest.raises(ValueError, match=r"out\[0\] \(A\): shape \(3, 3\)"):
        w.step_derivatives(out=(np.zeros((3, 3)), np.zeros(B.shape)))
    with pytest.raises(ValueError, match=r"out\[1\] \(B\): a 2-D float64"):
        w.step_derivatives(out=(np.zeros(A.shape), np.zeros(B.shape, dtype=np.float32)))
