"""The simulator from Python: joint states, sensors and commands of World against analytic
answers (a pendulum, tests/scenes/pendulum.yaml), Python controllers, errors, the GIL."""

import math
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import karakuri

PENDULUM = Path(__file__).resolve().parent / "scenes" / "pendulum.yaml"
M, L, G = 1.0, 0.5, 9.81  # the scene's bob mass, arm length (hinge to centre of mass), gravity
I_HINGE = 0.001 + M * L * L  # inertia about the hinge axis (y): the rod's own plus m l²


def gravity_torque(q):
    """Torque of gravity about the hinge's +y axis: the centre of mass at R_y(q) (0, 0, -l) =
    (-l sin q, 0, -l cos q) under (0, 0, -m g) gives (r x F)_y = r_z F_x - r_x F_z = -m g l sin q."""
    return -M * G * L * math.sin(q)


def pd_equilibrium(kp, target):
    """The q where the PD torque balances gravity, kp (target - q) = m g l sin q, by bisection
    on [0, target] (the left side falls, the right rises, opposite signs at the ends)."""
    f = lambda q: kp * (target - q) + gravity_torque(q)  # noqa: E731
    lo, hi = 0.0, target
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    return 0.5 * (lo + hi)


def test_names_arrays_and_sensors_at_rest():
    w = karakuri.World.from_file(PENDULUM)
    assert (w.joint_names, w.actuator_names, w.sensor_names) == (["hinge"], ["hinge"], ["imu", "gyro", "hinge_force"])
    assert w.joint_index("hinge") == 0 and w.dt == 0.001
    w.step()
    for a in (w.q, w.dq, w.tau):
        assert a.shape == (1,) and a.dtype == np.float64
    # hanging at rest: the accelerometer reads the support's push, +g up; the gyro nothing;
    # the hinge carries the weight, m g up, and no torque
    assert np.allclose(w.sensor("imu"), [0, 0, G], atol=1e-9)
    assert np.allclose(w.sensor("gyro"), 0, atol=1e-12)
    assert np.allclose(w.sensor("hinge_force"), [0, 0, M * G, 0, 0, 0], atol=1e-9)
    assert w.readings.shape == (3, 6) and np.array_equal(w.readings[2], w.sensor("hinge_force"))
    obs = w.observation()
    assert obs.shape == (len(w.observation_names),) == (2 + 3 + 3 + 6,)
    assert np.array_equal(obs, np.concatenate([w.q, w.dq, w.sensor("imu"), w.sensor("gyro"), w.sensor("hinge_force")]))


def test_a_torque_command_accelerates_by_tau_over_inertia():
    """From rest at q = 0 (no gravity torque), tau = 1 N m gives ddq = tau / I: after one
    semi-implicit Euler step dq = dt tau / I, exactly up to rounding."""
    for set_command in (
        lambda w: w.set_joint_target("hinge", 1.0),
        lambda w: w.set_targets(np.array([1.0])),
        lambda w: w.set_joint_torque("hinge", 1.0),
        lambda w: w.set_joint_torques([1.0]),
    ):
        w = karakuri.World.from_file(PENDULUM)
        set_command(w)
        w.step()
        assert w.dq[0] == pytest.approx(w.dt * 1.0 / I_HINGE, rel=1e-9)
        assert w.joint_state("hinge")[2] == pytest.approx(1.0)
        assert w.sensor("gyro")[1] == pytest.approx(w.dq[0], rel=1e-12)


def test_a_python_pd_controller_holds_the_pendulum_at_the_analytic_equilibrium():
    kp, kd, target = 20.0, 2.0, 0.8
    calls = []

    def pd(io):
        calls.append(io.time)
        q, dq, _ = io.joint_state("hinge")
        io.set_target("hinge", kp * (target - q) - kd * dq)

    w = karakuri.World.from_file(PENDULUM)
    w.add_controller(pd, period=0.005)
    w.step(8000)
    q_star = pd_equilibrium(kp, target)
    assert 0.5 < q_star < target
    assert w.q[0] == pytest.approx(q_star, abs=1e-7)
    assert abs(w.dq[0]) < 1e-7
    # every 5 steps from t = 0, before the step
    assert len(calls) == 1600 and calls[:3] == pytest.approx([0.0, 0.005, 0.010])
    # the hinge carries the weight and the actuator's torque, m g l sin q*
    f = w.sensor("hinge_force")
    assert np.linalg.norm(f[:3]) == pytest.approx(M * G, rel=1e-6)
    assert f[4] == pytest.approx(-gravity_torque(q_star), rel=1e-6)


def test_gravity_compensation_holds_the_target_exactly():
    target = -0.6

    def hold(io):
        q, dq, _ = io.joint_state("hinge")
        io.set_targets(np.array([30.0 * (target - q) - 3.0 * dq - gravity_torque(q)]))

    w = karakuri.World.from_file(PENDULUM)
    w.add_controller(hold, period=0.001)
    w.step(6000)
    assert w.q[0] == pytest.approx(target, abs=1e-7)


def test_controller_exceptions_propagate_with_the_time():
    def failing(io):
        if io.time >= 0.05 - 1e-12:
            raise ZeroDivisionError("boom")
        io.set_target("hinge", 0.0)

    w = karakuri.World.from_file(PENDULUM)
    w.add_controller(failing, period=0.01)
    with pytest.raises(karakuri.ControllerError, match=r"t = 0\.05\d* s.*boom") as e:
        w.step(1000)
    assert isinstance(e.value.__cause__, ZeroDivisionError)
    assert w.steps == 50  # stopped before the step the failing call preceded

    w = karakuri.World.from_file(PENDULUM)
    w.add_controller(lambda io: io.set_target("hinge", 1e3), period=0.001)  # beyond effort_limit 40
    with pytest.raises(ValueError, match="hinge.*effort limit"):
        w.step()
    w = karakuri.World.from_file(PENDULUM)
    w.add_controller(lambda io: io.set_target("nope", 1.0), period=0.001)
    with pytest.raises(karakuri.ControllerError) as e:
        w.step()
    assert isinstance(e.value.__cause__, ValueError) and "nope" in str(e.value.__cause__)


def test_bad_inputs_raise_with_the_simulators_message():
    w = karakuri.World.from_file(PENDULUM)
    with pytest.raises(ValueError, match="control period 0.0015 s is not a positive whole number"):
        w.add_controller(lambda io: None, 0.0015)
    with pytest.raises(ValueError, match="callable"):
        w.add_controller(3, 0.001)
    with pytest.raises(ValueError, match="no sensor named 'nope'"):
        w.sensor("nope")
    with pytest.raises(ValueError, match="no one-dof joint named 'nope'"):
        w.joint_state("nope")
    with pytest.raises(ValueError, match=r"argument 'targets' must have shape \(nactuators,\) = \(1,\)"):
        w.set_targets(np.zeros(2))
    with pytest.raises(ValueError, match="not finite"):
        w.set_joint_target("hinge", float("nan"))
    with pytest.raises(ValueError, match="effort limit 40"):
        w.set_joint_target("hinge", 41.0)


def test_step_releases_the_gil():
    """While one thread steps a world for a long while, the main thread keeps running Python."""
    w = karakuri.World.from_file(PENDULUM)
    t = threading.Thread(target=w.step, args=(300_000,))
    start = time.perf_counter()
    t.start()
    ticks = 0
    while t.is_alive():
        ticks += 1
        time.sleep(0)
    elapsed = time.perf_counter() - start
    t.join()
    assert w.steps == 300_000
    # held, the main thread would get no turn during the one Rust call (it never yields the
    # GIL); released, it spins freely
    assert ticks > 1000, (ticks, elapsed)
