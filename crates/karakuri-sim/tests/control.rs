//! The control loop against analytic answers: actuators (torque, position servo, velocity
//! servo) on a pendulum whose gravity torque is `m g l sin q`.

use karakuri_sim::{Engine, NativeEngine, Scene};

const M: f64 = 1.0;
const L: f64 = 0.5;
const G: f64 = 9.81;

/// A pendulum hinged about x at height 1 with its centre of mass `L` below the hinge, the
/// hinge driven by `actuator` (YAML flow mapping); gravity torque about x: `-m g l sin q`.
fn pendulum(actuator: &str, gravity: f64) -> Scene {
    pendulum_with(actuator, gravity, "")
}

/// [`pendulum`] with more keys of the hinge (`", damping: 0.5"`).
fn pendulum_with(actuator: &str, gravity: f64, more: &str) -> Scene {
    let text = format!(
        r#"
name: pendulum
world: {{gravity: [0, 0, {g}], dt: 0.001, duration: 1.0}}
bodies:
  - name: bob
    pose_in_parent: {{position: [0, 0, 1]}}
    mass: {M}
    com: [0, 0, -{L}]
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    joints:
      - {{name: hinge, type: revolute, axis: [1, 0, 0], actuator: {actuator}{more}}}
"#,
        g = -gravity
    );
    Scene::from_str(&text, "pendulum.yaml").unwrap()
}

fn run(e: &mut NativeEngine, steps: usize) {
    for _ in 0..steps {
        e.step().unwrap();
    }
}

/// The hinge's (q, dq, applied actuator torque).
fn hinge(e: &NativeEngine) -> (f64, f64, f64) {
    (e.q()[0], e.v()[0], e.work().act_tau[0])
}

/// The root of `kp (target − q) = m g l sin q` near `q` (Newton).
fn servo_equilibrium(kp: f64, target: f64, mut q: f64) -> f64 {
    for _ in 0..50 {
        let f = kp * (target - q) - M * G * L * q.sin();
        let df = -kp - M * G * L * q.cos();
        q -= f / df;
    }
    q
}

#[test]
fn position_servo_settles_where_the_spring_balances_gravity() {
    for (kp, kd) in [(50.0, 5.0), (1e5, 1e3)] {
        let scene = pendulum(&format!("{{mode: position, kp: {kp}, kd: {kd}, target: 1.0}}"), G);
        let mut e = NativeEngine::new(&scene).unwrap();
        run(&mut e, 10_000);
        let (q, dq, tau) = hinge(&e);
        let expect = servo_equilibrium(kp, 1.0, 1.0);
        assert!((q - expect).abs() < 1e-4, "kp {kp}: q {q} vs {expect}");
        assert!(dq.abs() < 1e-4, "kp {kp}: still moving at {dq}");
        // the applied torque is the gravity torque it holds
        let load = M * G * L * q.sin();
        assert!((tau - load).abs() < 1e-4 * load.max(1.0), "kp {kp}: tau {tau} vs {load}");
    }
}

#[test]
fn position_servo_is_stable_with_large_gains_and_no_damping_gain() {
    // kp = 1e6 with kd = 0 at dt = 1 ms: an explicit PD diverges (kp dt² / I ≫ 4); the implicit
    // one stays bounded and near its target
    let scene = pendulum("{mode: position, kp: 1.0e6, kd: 0, target: 0.3}", G);
    let mut e = NativeEngine::new(&scene).unwrap();
    run(&mut e, 2000);
    let (q, _, _) = hinge(&e);
    let expect = servo_equilibrium(1e6, 0.3, 0.3);
    assert!((q - expect).abs() < 1e-3, "q {q} vs {expect}");
}

#[test]
fn saturated_position_servo_holds_where_the_effort_limit_meets_gravity() {
    // a saturated servo is a constant torque: the hinge's own damping lets it settle
    let limit = 1.0;
    let scene = pendulum_with(
        &format!("{{mode: position, kp: 1000, kd: 50, target: 1.0, effort_limit: {limit}}}"),
        G,
        ", damping: 0.5",
    );
    let mut e = NativeEngine::new(&scene).unwrap();
    run(&mut e, 10_000);
    let (q, _, tau) = hinge(&e);
    let expect = (limit / (M * G * L)).asin();
    assert!((q - expect).abs() < 1e-4, "q {q} vs {expect}");
    assert!((tau - limit).abs() < 1e-9, "tau {tau}");
}

#[test]
fn torque_command_is_clamped_to_the_effort_limit() {
    // zero gravity: q̈ = τ / I_hinge, I_hinge = 0.01 + m l²
    let scene = pendulum("{mode: torque, target: 10.0, effort_limit: 3.0}", 0.0);
    let mut e = NativeEngine::new(&scene).unwrap();
    run(&mut e, 100);
    let (_, dq, tau) = hinge(&e);
    assert_eq!(tau, 3.0);
    let expect = 3.0 / (0.01 + M * L * L) * 0.1;
    assert!((dq - expect).abs() < 1e-9, "dq {dq} vs {expect}");
}

#[test]
fn velocity_servo_holds_its_speed_within_its_effort_limit() {
    // started at the target speed (reaching it from rest takes more than the limit in a step)
    let scene = pendulum_with("{mode: velocity, target: 2.0, effort_limit: 10.0}", G, ", qd0: 2.0");
    let mut e = NativeEngine::new(&scene).unwrap();
    let mut worst: f64 = 0.0;
    let mut peak_tau: f64 = 0.0;
    for _ in 0..3000 {
        e.step().unwrap();
        let (_, dq, tau) = hinge(&e);
        worst = worst.max((dq - 2.0).abs());
        peak_tau = peak_tau.max(tau.abs());
    }
    assert!(worst < 1e-4, "speed error {worst}");
    // it carried the pendulum over the top: the torque reached the gravity load m g l
    assert!(peak_tau > 0.95 * M * G * L && peak_tau <= 10.0, "peak torque {peak_tau}");
}

#[test]
fn velocity_servo_cannot_hold_its_speed_against_a_larger_load() {
    let limit = 2.0; // below m g l = 4.905
    let scene = pendulum_with(&format!("{{mode: velocity, target: 2.0, effort_limit: {limit}}}"), G, ", qd0: 2.0");
    let mut e = NativeEngine::new(&scene).unwrap();
    let mut worst: f64 = 0.0;
    for _ in 0..3000 {
        e.step().unwrap();
        let (_, dq, tau) = hinge(&e);
        worst = worst.max((dq - 2.0).abs());
        assert!(tau.abs() <= limit * (1.0 + 1e-12), "torque {tau} above the limit");
    }
    assert!(worst > 0.5, "speed held within {worst} though the load exceeds the limit");
}

#[test]
fn actuators_survive_save_and_reload() {
    let scene = pendulum(
        "{mode: position, kp: 50, kd: 5, target: {sine: {amplitude: 0.5, frequency: 1.5, offset: 0.1, phase: 0.2}}, effort_limit: 4}",
        G,
    );
    let path = std::env::temp_dir().join(format!("karakuri-actuator-{}.yaml", std::process::id()));
    scene.save(&path).unwrap();
    let back = Scene::from_file(&path).unwrap();
    std::fs::remove_file(&path).ok();
    assert_eq!(back.bodies, scene.bodies);
}

#[test]
fn bad_actuators_are_refused_with_their_path() {
    for (actuator, key) in [
        ("{mode: position, kp: -1}", "actuator.kp"),
        ("{mode: velocity, effort_limit: 0}", "actuator.effort_limit"),
        ("{mode: servo}", "actuator"),
    ] {
        let text = format!(
            "bodies:\n  - name: b\n    mass: 1\n    inertia: [[1,0,0],[0,1,0],[0,0,1]]\n    joints: [{{name: h, type: revolute, axis: [1, 0, 0], actuator: {actuator}}}]\n"
        );
        let err = Scene::from_str(&text, "bad.yaml").unwrap_err().to_string();
        assert!(err.contains(key), "{actuator}: {err}");
    }
}

/// The reading of the sensor `name`.
fn reading(e: &NativeEngine, name: &str) -> [f64; 6] {
    let i = e.sim_model().sensors.iter().position(|s| s.name == name).unwrap();
    e.work().readings[i]
}

fn close(got: [f64; 6], want: [f64; 6], tol: f64, what: &str) {
    for k in 0..6 {
        assert!((got[k] - want[k]).abs() <= tol, "{what}: {got:?} vs {want:?} (±{tol})");
    }
}

#[test]
fn accelerometer_at_rest_on_the_floor_reads_gravity_up_and_the_gyro_zero() {
    let text = r#"
name: resting
world: {gravity: [0, 0, -9.81], dt: 0.001}
bodies:
  - {name: ground, shapes: [{type: plane}]}
  - name: box
    mass: 2
    inertia: [[0.02, 0, 0], [0, 0.02, 0], [0, 0, 0.02]]
    joints: [{type: free, q0: {position: [0.3, -0.2, 0.1]}}]
    shapes: [{type: box, half_extents: [0.1, 0.1, 0.1]}]
sensors:
  - {name: imu, type: accelerometer, body: box, pose: {position: [0.05, 0.02, 0.08]}}
  - {name: gyro, type: rate_gyro, body: box}
  - {name: tilted, type: accelerometer, body: box, pose: {orientation: [0.7071067811865476, 0, 0, 0.7071067811865476]}}
"#;
    let mut e = NativeEngine::new(&Scene::from_str(text, "resting.yaml").unwrap()).unwrap();
    run(&mut e, 1000);
    close(reading(&e, "imu"), [0.0, 0.0, 9.81, 0.0, 0.0, 0.0], 0.02, "imu");
    close(reading(&e, "gyro"), [0.0; 6], 1e-4, "gyro");
    // turned +90° about x: world up e_z in sensor axes is Rᵀ e_z = (0, 1, 0)
    close(reading(&e, "tilted"), [0.0, 9.81, 0.0, 0.0, 0.0, 0.0], 0.02, "tilted");
}

#[test]
fn torque_free_spin_reads_the_spin_on_the_gyro_and_nothing_on_the_accelerometer() {
    let text = r#"
name: spin
world: {gravity: [0, 0, 0], dt: 0.001}
bodies:
  - name: top
    mass: 3
    inertia: [[0.1, 0, 0], [0, 0.2, 0], [0, 0, 0.3]]
    joints: [{type: free, q0: {position: [1, 2, 3]}, qd0: {angular: [0, 0, 5]}}]
sensors:
  - {name: gyro, type: rate_gyro, body: top, pose: {orientation: [0.7071067811865476, 0, 0, 0.7071067811865476]}}
  - {name: acc, type: accelerometer, body: top}
"#;
    let mut e = NativeEngine::new(&Scene::from_str(text, "spin.yaml").unwrap()).unwrap();
    for _ in 0..2000 {
        e.step().unwrap();
        // spin (0, 0, 5) in body axes; the sensor is turned +90° about x: Rᵀ e_z = (0, 1, 0)
        close(reading(&e, "gyro"), [0.0, 5.0, 0.0, 0.0, 0.0, 0.0], 1e-8, "gyro");
        close(reading(&e, "acc"), [0.0; 6], 1e-8, "accelerometer");
    }
}

#[test]
fn accelerometer_in_free_fall_reads_zero() {
    let text = r#"
name: fall
world: {gravity: [0, 0, -9.81], dt: 0.001}
bodies:
  - name: b
    mass: 1
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    joints: [{type: free, q0: {position: [0, 0, 10]}, qd0: {linear: [1, 0, 2]}}]
sensors: [{name: acc, type: accelerometer, body: b, pose: {position: [0.1, 0, 0]}}]
"#;
    let mut e = NativeEngine::new(&Scene::from_str(text, "fall.yaml").unwrap()).unwrap();
    for _ in 0..500 {
        e.step().unwrap();
        close(reading(&e, "acc"), [0.0; 6], 1e-9, "free fall");
    }
}

#[test]
fn force_sensor_at_a_hanging_pendulum_hinge_reads_its_weight_up_and_no_torque() {
    let mut scene = pendulum_with("{mode: torque, target: 0}", G, ", damping: 0.2");
    scene.sensors = Scene::from_str(
        "sensors: [{name: hinge_force, type: force, joint: hinge}]\nbodies: [{name: bob}]\n",
        "s.yaml",
    )
    .unwrap()
    .sensors;
    let mut e = NativeEngine::new(&scene).unwrap();
    run(&mut e, 500);
    close(reading(&e, "hinge_force"), [0.0, 0.0, M * G, 0.0, 0.0, 0.0], 1e-3, "hinge force");
}

#[test]
fn force_sensor_carries_a_servo_torque_and_the_weight_of_a_held_pendulum() {
    // held at q* by a position servo: the hinge passes the weight (world up, in the child's
    // axes rotated by q*) and the servo torque m g l sin q* about x
    let mut scene = pendulum("{mode: position, kp: 50, kd: 5, target: 1.0}", G);
    scene.sensors = Scene::from_str(
        "sensors: [{name: f, type: force, joint: hinge}]\nbodies: [{name: bob}]\n",
        "s.yaml",
    )
    .unwrap()
    .sensors;
    let mut e = NativeEngine::new(&scene).unwrap();
    run(&mut e, 10_000);
    let q = servo_equilibrium(50.0, 1.0, 1.0);
    // world up in child axes rotated by q about x: (0, sin q, cos q)
    let want = [0.0, M * G * q.sin(), M * G * q.cos(), M * G * L * q.sin(), 0.0, 0.0];
    close(reading(&e, "f"), want, 1e-3, "held pendulum");
}

#[test]
fn bad_sensors_are_refused_with_their_path() {
    for (sensor, key) in [
        ("{name: a, type: accelerometer, body: nowhere}", "sensors[0].body"),
        ("{name: a, type: force, body: b}", "sensors[0].body"),
        ("{name: a, type: force}", "sensors[0].joint"),
        ("{name: a, type: thermometer, body: b}", "sensors[0]"),
    ] {
        let text = format!(
            "bodies:\n  - name: b\n    mass: 1\n    inertia: [[1,0,0],[0,1,0],[0,0,1]]\n    joints: [{{name: h, type: revolute, axis: [1, 0, 0]}}]\nsensors: [{sensor}]\n"
        );
        let err = Scene::from_str(&text, "bad.yaml").unwrap_err().to_string();
        assert!(err.contains(key), "{sensor}: {err}");
    }
    let text = "bodies:\n  - name: b\n    mass: 1\n    inertia: [[1,0,0],[0,1,0],[0,0,1]]\n    joints: [{name: h, type: revolute, axis: [1, 0, 0]}]\nsensors: [{name: a, type: force, joint: nope}]\n";
    let scene = Scene::from_str(text, "bad.yaml").unwrap();
    let err = NativeEngine::new(&scene).err().unwrap().to_string();
    assert!(err.contains("sensors[0].joint") && err.contains("nope"), "{err}");
}

#[test]
fn force_sensor_subtracts_contact_forces() {
    // a box resting on the floor on its free joint: the free joint transmits nothing, so its
    // momentum change, weight and contact forces must cancel
    let text = r#"
name: resting
world: {gravity: [0, 0, -9.81], dt: 0.001}
bodies:
  - {name: ground, shapes: [{type: plane}]}
  - name: box
    mass: 2
    inertia: [[0.02, 0, 0], [0, 0.02, 0], [0, 0, 0.02]]
    joints: [{type: free, name: base, q0: {position: [0, 0, 0.1]}}]
    shapes: [{type: box, half_extents: [0.1, 0.1, 0.1]}]
sensors: [{name: f, type: force, joint: base}]
"#;
    let mut e = NativeEngine::new(&Scene::from_str(text, "resting.yaml").unwrap()).unwrap();
    run(&mut e, 1000);
    close(reading(&e, "f"), [0.0; 6], 1e-6, "free joint on the floor");
}

#[test]
fn world_sets_targets_and_reads_sensors_by_name() {
    use karakuri_sim::{SimError, World};
    let mut scene = pendulum("{mode: position, kp: 50, kd: 5, target: 0.0}", G);
    scene.sensors = Scene::from_str(
        "sensors: [{name: f, type: force, joint: hinge}, {name: g, type: rate_gyro, body: bob}]\nbodies: [{name: bob}]\n",
        "s.yaml",
    )
    .unwrap()
    .sensors;
    let mut w = World::new(scene).unwrap();
    w.set_joint_target("hinge", 1.0).unwrap();
    w.run(10.0).unwrap();
    let q = servo_equilibrium(50.0, 1.0, 1.0);
    assert!((w.joint_position("hinge").unwrap() - q).abs() < 1e-4);
    let f = w.sensor("f").unwrap();
    assert_eq!(f.len(), 6);
    assert!((f[3] - M * G * L * q.sin()).abs() < 1e-3, "{f:?}");
    assert_eq!(w.sensor("g").unwrap().len(), 3);
    assert!(matches!(w.sensor("nope"), Err(SimError::UnknownSensor { .. })));
    let err = w.set_joint_target("hinge", f64::NAN).unwrap_err().to_string();
    assert!(err.contains("hinge") && err.contains("t = 10"), "{err}");
    let mut states = vec![karakuri_sim::JointState::default(); w.one_dof_joints().len()];
    w.write_joint_states(&mut states);
    assert_eq!(w.one_dof_joints(), ["hinge"]);
    assert!((states[0].tau - M * G * L * q.sin()).abs() < 1e-4);
}

#[test]
fn robot_actuators_by_name_and_star_with_urdf_effort_limits() {
    // fixed-base Solo-12 without gravity: every joint servoed to 0.3, FL_KFE then to -0.5
    let text = r#"
name: solo
world: {gravity: [0, 0, 0], dt: 0.001}
robots:
  - name: solo
    urdf: builtin:solo12.urdf
    root: fixed
    collide: false
    actuators:
      - {joints: "*", mode: position, kp: 20, kd: 1, target: 0.3}
      - {joints: [FL_KFE], mode: position, kp: 20, kd: 1, target: -0.5}
"#;
    let scene = Scene::from_str(text, "solo.yaml").unwrap();
    let mut e = NativeEngine::new(&scene).unwrap();
    let acts = &e.sim_model().actuators;
    assert_eq!(acts.len(), 12);
    // solo12.urdf gives effort="1000"
    assert!(acts.iter().all(|a| a.effort_limit == 1000.0));
    run(&mut e, 3000);
    let m = e.model();
    for a in &e.sim_model().actuators {
        let want = if a.name == "solo/FL_KFE" { -0.5 } else { 0.3 };
        let q = e.q()[a.iq];
        assert!((q - want).abs() < 1e-4, "{}: {q} vs {want}", a.name);
        assert_eq!(m.nvs[m.dof_joint[a.dof]], 1);
    }
    let bad = text.replace("[FL_KFE]", "[NOPE]");
    let err = NativeEngine::new(&Scene::from_str(&bad, "solo.yaml").unwrap()).err().unwrap().to_string();
    assert!(err.contains("robots[0].actuators[1].joints") && err.contains("NOPE"), "{err}");
    let bad = text.replace("\"*\"", "\"all\"");
    let err = NativeEngine::new(&Scene::from_str(&bad, "solo.yaml").unwrap()).err().unwrap().to_string();
    assert!(err.contains("\"*\""), "{err}");
}

/// A PD law in Rust through the controller interface, commanding torques.
struct Pd {
    kp: f64,
    kd: f64,
    target: f64,
    calls: Vec<f64>,
}

impl karakuri_sim::Controller for Pd {
    fn update(&mut self, io: &mut karakuri_sim::ControlIo<'_>) {
        self.calls.push(io.time);
        let k = io.joint("hinge").unwrap();
        let s = io.states[k];
        io.commands[k] = Some(self.kp * (self.target - s.q) - self.kd * s.dq);
    }
}

#[test]
fn a_controller_commanding_torques_holds_the_pendulum_at_the_analytic_angle() {
    use karakuri_sim::World;
    // the controller's PD is explicit, sampled every 2 ms: moderate gains
    let scene = pendulum("{mode: torque, target: 0, effort_limit: 100}", G);
    let mut w = World::new(scene).unwrap();
    let pd = Pd { kp: 50.0, kd: 2.0, target: 1.0, calls: Vec::new() };
    w.add_controller(Box::new(pd), 0.002).unwrap();
    w.run(10.0).unwrap();
    let q = w.joint_position("hinge").unwrap();
    let expect = servo_equilibrium(50.0, 1.0, 1.0);
    assert!((q - expect).abs() < 1e-4, "q {q} vs {expect}");
    assert!(matches!(
        w.add_controller(Box::new(Pd { kp: 0.0, kd: 0.0, target: 0.0, calls: vec![] }), 0.0015),
        Err(karakuri_sim::SimError::BadControlPeriod { .. })
    ));
}

#[test]
fn a_controller_is_called_every_period_from_the_start() {
    use std::sync::{Arc, Mutex};
    // controllers are Send (a World, and so a Batch of worlds, moves between threads)
    struct Log(Arc<Mutex<Vec<f64>>>);
    impl karakuri_sim::Controller for Log {
        fn update(&mut self, io: &mut karakuri_sim::ControlIo<'_>) {
            self.0.lock().unwrap().push(io.time);
            assert_eq!(io.joints, ["hinge"]);
            assert!(io.sensors.is_empty());
        }
    }
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut w = karakuri_sim::World::new(pendulum("{mode: torque}", G)).unwrap();
    w.add_controller(Box::new(Log(log.clone())), 0.01).unwrap();
    w.run(1.0).unwrap();
    let times = log.lock().unwrap();
    assert_eq!(times.len(), 100);
    for (k, t) in times.iter().enumerate() {
        assert!((t - 0.01 * k as f64).abs() < 1e-12, "call {k} at {t}");
    }
}

#[test]
fn a_controller_returning_nan_or_too_much_torque_is_stopped_naming_joint_and_time() {
    struct Bad(f64);
    impl karakuri_sim::Controller for Bad {
        fn update(&mut self, io: &mut karakuri_sim::ControlIo<'_>) {
            if io.time > 0.0495 {
                io.commands[0] = Some(self.0);
            }
        }
    }
    for (command, what) in [(f64::NAN, "not finite"), (7.0, "exceeds the effort limit 5")] {
        let mut w = karakuri_sim::World::new(pendulum("{mode: torque, effort_limit: 5}", G)).unwrap();
        w.add_controller(Box::new(Bad(command)), 0.01).unwrap();
        let err = w.run(1.0).unwrap_err().to_string();
        assert!(err.contains("'hinge'") && err.contains("t = 0.05") && err.contains(what), "{err}");
    }
    // a position command outside the joint's limits
    let scene = pendulum_with("{mode: position, kp: 10}", G, ", limits: [-1, 1]");
    let mut w = karakuri_sim::World::new(scene).unwrap();
    w.add_controller(Box::new(Bad(1.5)), 0.01).unwrap();
    let err = w.run(1.0).unwrap_err().to_string();
    assert!(err.contains("'hinge'") && err.contains("outside the joint's limits"), "{err}");
}

/// A `ramp` target: the minimum-jerk profile (half way at mid-time with 15/8 of the mean
/// rate), held before and after; a stiff servo on it ends at `to`.
#[test]
fn a_ramp_target_is_minimum_jerk_and_held() {
    use karakuri_sim::scene::{Ramp, Target};
    let r = Target::Ramp { ramp: Ramp { from: -1.0, to: 2.0, start: 0.5, duration: 2.0 } };
    assert_eq!(r.at(0.0), (-1.0, 0.0));
    assert_eq!(r.at(3.0), (2.0, 0.0));
    let (x, rate) = r.at(1.5);
    assert!((x - 0.5).abs() < 1e-15 && (rate - 1.875 * 3.0 / 2.0).abs() < 1e-14, "{x} {rate}");
    // the profile's derivative is the rate it reports
    let h = 1e-6;
    let fd = (r.at(1.0 + h).0 - r.at(1.0 - h).0) / (2.0 * h);
    assert!((fd - r.at(1.0).1).abs() < 1e-8);
    let scene = pendulum("{mode: position, kp: 2000, kd: 50, target: {ramp: {from: 0, to: 0.6, start: 0.1, duration: 0.5}}}", 0.0);
    let mut e = NativeEngine::new(&scene).unwrap();
    run(&mut e, 1500);
    assert!((hinge(&e).0 - 0.6).abs() < 1e-6, "{:?}", hinge(&e));
    let bad = "bodies: [{name: b, mass: 1, inertia: [[1,0,0],[0,1,0],[0,0,1]], joints: [{type: revolute, axis: [1,0,0], actuator: {mode: position, target: {ramp: {to: 1, duration: -1}}}}]}]";
    let err = Scene::from_str(bad, "bad.yaml").unwrap_err().to_string();
    assert!(err.contains("target.ramp.duration"), "{err}");
}

#[test]
fn joint_infos_report_limits_and_actuators_in_joint_order() {
    use karakuri_sim::scene::ActuatorMode;
    use karakuri_sim::{ActuatorInfo, JointInfo, World};
    let scene = pendulum_with("{mode: velocity, effort_limit: 3, velocity_limit: 2}", G, ", limits: [-1, 1.5]");
    let world = World::new(scene).unwrap();
    assert_eq!(world.one_dof_joints(), ["hinge"]);
    let infos = world.joint_infos();
    assert_eq!(
        infos,
        [JointInfo {
            limits: Some([-1.0, 1.5]),
            actuator: Some(ActuatorInfo {
                mode: ActuatorMode::Velocity,
                effort_limit: 3.0,
                velocity_limit: 2.0
            })
        }]
    );
    // an unlimited, unactuated hinge; out-of-range index commands are refused
    let text = "name: p\nbodies:\n  - {name: b, pose_in_parent: {position: [0, 0, 1]}, mass: 1, com: [0, 0, -0.5], inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]], joints: [{name: h, type: revolute, axis: [1, 0, 0]}]}\n";
    let mut world = World::new(Scene::from_str(text, "p.yaml").unwrap()).unwrap();
    assert_eq!(world.joint_infos(), [JointInfo::default()]);
    assert!(world.set_one_dof_target(0, 1.0).unwrap_err().to_string().contains("has no actuator"));
    assert!(world.set_one_dof_target(1, 1.0).unwrap_err().to_string().contains("out of range"));
}
