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
    (e.q()[0], e.v()[0], e.output().act_tau[0])
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
    e.output().readings[i]
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
            assert_eq!(io.layout.joints, ["hinge"]);
            assert!(io.layout.sensors.is_empty());
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
fn a_prescribed_hinge_follows_its_sine_and_reports_the_inverse_dynamics_torque() {
    use std::f64::consts::PI;
    let (a, f, off, ph) = (0.5, 1.0, 0.2, 0.3);
    let scene = pendulum(
        &format!("{{mode: prescribed, target: {{sine: {{amplitude: {a}, frequency: {f}, offset: {off}, phase: {ph}}}}}}}"),
        G,
    );
    let mut e = NativeEngine::new(&scene).unwrap();
    // the bob's inertia about the hinge: its own about the centre of mass (0.01) plus m l²
    // (parallel axes); the hinge torque that moves it along q(t) is I q̈ + m g l sin q
    let inertia = 0.01 + M * L * L;
    let w = 2.0 * PI * f;
    let q_of = |t: f64| off + a * (w * t + ph).sin();
    let torque = |t: f64| inertia * (-a * w * w * (w * t + ph).sin()) + M * G * L * q_of(t).sin();
    let peak = inertia * a * w * w + M * G * L;
    assert!((e.q()[0] - q_of(0.0)).abs() < 1e-15 && (e.v()[0] - (q_of(0.0) - q_of(-0.001)) / 0.001).abs() < 1e-12);
    let (mut worst_q, mut worst_tau): (f64, f64) = (0.0, 0.0);
    for n in 0..3000 {
        let t0 = n as f64 * 0.001;
        e.step().unwrap();
        let (q, _, tau) = hinge(&e);
        worst_q = worst_q.max((q - q_of(t0 + 0.001)).abs());
        // the step's mean torque: I times the second difference of q (≈ q̈ at the step's
        // start) plus gravity at the start
        let want = torque(t0);
        worst_tau = worst_tau.max((tau - want).abs());
        if want.abs() > 0.2 * peak {
            assert!((tau - want).abs() < 0.02 * want.abs(), "t {t0}: tau {tau} vs {want}");
        }
    }
    eprintln!("prescribed hinge: worst q error {worst_q:e}, worst torque error {worst_tau:e} of peak {peak}");
    assert!(worst_q < 1e-6, "position error {worst_q}");
    assert!(worst_tau < 0.02 * peak, "torque error {worst_tau} of {peak}");
}

#[test]
fn contacts_act_on_a_prescribed_joint_and_its_force_carries_the_load() {
    use std::f64::consts::PI;
    // a platform on a prescribed vertical slider lifts a box resting on it: the box rides
    // along (the contact acts) and the slider's force is (m_p + m_b)(g + ẍ)
    let (a, f) = (0.05, 0.5);
    let text = format!(
        r#"
name: lift
world: {{gravity: [0, 0, -9.81], dt: 0.001}}
bodies:
  - name: platform
    mass: 1
    inertia: [[0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]]
    joints: [{{name: lift, type: prismatic, axis: [0, 0, 1], actuator: {{mode: prescribed, target: {{sine: {{amplitude: {a}, frequency: {f}, offset: 0.5, phase: 0}}}}}}}}]
    shapes: [{{type: box, half_extents: [0.5, 0.5, 0.05]}}]
  - name: box
    mass: 2
    inertia: [[0.02, 0, 0], [0, 0.02, 0], [0, 0, 0.02]]
    joints: [{{type: free, q0: {{position: [0, 0, 0.65]}}, qd0: {{linear: [0, 0, {v0}]}}}}]
    shapes: [{{type: box, half_extents: [0.1, 0.1, 0.1]}}]
"#,
        v0 = a * 2.0 * PI * f
    );
    let mut e = NativeEngine::new(&Scene::from_str(&text, "lift.yaml").unwrap()).unwrap();
    let w = 2.0 * PI * f;
    run(&mut e, 500);
    let mut worst: f64 = 0.0;
    for n in 500..2500 {
        let t0 = n as f64 * 0.001;
        e.step().unwrap();
        let force = e.output().act_tau[0];
        let want = 3.0 * (G - a * w * w * (w * t0).sin());
        worst = worst.max((force - want).abs() / want);
        // the box sits on the platform (its bottom 0.05 above the platform's origin)
        let gap = e.q()[3] - 0.1 - (e.q()[0] + 0.05);
        assert!(gap.abs() < 2e-3, "t {t0}: gap {gap}");
    }
    eprintln!("prescribed slider under a box: worst relative force error {worst:e}");
    assert!(worst < 0.02, "slider force off by {worst}");
}

/// A fresh directory under the system's temporary directory for one test's files.
fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("karakuri-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The pendulum scene written into `dir` with a hinge actuator, read back from its file.
fn pendulum_file(dir: &std::path::Path, actuator: &str) -> Result<Scene, karakuri_sim::SimError> {
    let text = format!(
        "world: {{gravity: [0, 0, -{G}], dt: 0.001}}\nbodies:\n  - name: bob\n    pose_in_parent: {{position: [0, 0, 1]}}\n    mass: {M}\n    com: [0, 0, -{L}]\n    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]\n    joints:\n      - {{name: hinge, type: revolute, axis: [1, 0, 0], actuator: {actuator}}}\n"
    );
    let path = dir.join("scene.yaml");
    std::fs::write(&path, text).unwrap();
    Scene::from_file(&path)
}

#[test]
fn a_table_target_is_interpolated_linearly_and_held_past_its_ends() {
    let dir = temp_dir("table");
    std::fs::create_dir_all(dir.join("tables")).unwrap();
    // header, a comment, three knots; relative to the scene file
    std::fs::write(dir.join("tables/q.csv"), "time,q\n# knots\n0.1, 0.0\n0.3, 0.4\n0.5, -0.2\n").unwrap();
    let scene = pendulum_file(&dir, "{mode: prescribed, target: {table: tables/q.csv}}").unwrap();
    let mut e = NativeEngine::new(&scene).unwrap();
    let want = |t: f64| {
        if t <= 0.1 {
            0.0
        } else if t <= 0.3 {
            0.4 * (t - 0.1) / 0.2
        } else if t <= 0.5 {
            0.4 - 0.6 * (t - 0.3) / 0.2
        } else {
            -0.2
        }
    };
    assert_eq!(e.q()[0], 0.0, "starts on the table's first value (clamped before its first time)");
    let mut worst: f64 = 0.0;
    for n in 1..=800 {
        e.step().unwrap();
        worst = worst.max((e.q()[0] - want(n as f64 * 0.001)).abs());
    }
    assert!(worst < 1e-12, "table followed within {worst}");
    // the rate is the segment's slope
    let table = match &scene.bodies[0].joints[0] {
        karakuri_sim::scene::JointSpec::Hinge { actuator: Some(a), .. } => a.target.clone(),
        _ => unreachable!(),
    };
    let (x, rate) = table.at(0.2);
    assert!((x - 0.2).abs() < 1e-15 && (rate - 2.0).abs() < 1e-14, "{x} {rate}");
    assert_eq!(table.at(0.6), (-0.2, 0.0));
    // a saved scene writes the path and reloads the same table from a new directory
    let other = dir.join("elsewhere");
    std::fs::create_dir_all(&other).unwrap();
    scene.save(other.join("copy.yaml")).unwrap();
    let back = Scene::from_file(other.join("copy.yaml")).unwrap();
    let back_table = match &back.bodies[0].joints[0] {
        karakuri_sim::scene::JointSpec::Hinge { actuator: Some(a), .. } => a.target.clone(),
        _ => unreachable!(),
    };
    match (&back_table, &table) {
        (karakuri_sim::scene::Target::Table { table: b }, karakuri_sim::scene::Target::Table { table: a }) => {
            assert_eq!(b.path, "../tables/q.csv");
            assert_eq!((&b.times, &b.values), (&a.times, &a.values));
        }
        _ => panic!("not a table: {back_table:?}"),
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_table_files_are_refused_naming_the_file_and_line() {
    let dir = temp_dir("bad-table");
    for (body, what) in [
        ("time,q\n0, 0\n0.1, x\n", "line 3: 'x' is not a number"),
        ("0, 0\n0.2, 1\n0.1, 2\n", "line 3: time 0.1 does not increase"),
        ("0, 0\n0.1, 1, 2\n", "line 2: expected 2 comma-separated numbers"),
        ("0, 0, 1\n", "line 1: expected 2 comma-separated numbers"),
        ("0, 0\n0.1, inf\n", "line 2: inf is not finite"),
        ("time,q\n", "has no rows"),
    ] {
        std::fs::write(dir.join("q.csv"), body).unwrap();
        let err = pendulum_file(&dir, "{mode: position, kp: 10, target: {table: q.csv}}").unwrap_err().to_string();
        assert!(err.contains("bodies[0].joints[0].actuator.target.table") && err.contains("q.csv") && err.contains(what), "{body:?}: {err}");
    }
    let err = pendulum_file(&dir, "{mode: position, kp: 10, target: {table: missing.csv}}").unwrap_err().to_string();
    assert!(err.contains("table file 'missing.csv' not found") && err.contains(&dir.join("missing.csv").display().to_string()), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A body at rest in zero gravity carrying a gyro and an accelerometer (both read exactly 0)
/// with the given `noise` keys (empty: none).
fn noisy_scene(gyro_noise: &str, acc_noise: &str) -> Scene {
    let text = format!(
        r#"
name: still
world: {{gravity: [0, 0, 0], dt: 0.001}}
bodies:
  - name: b
    mass: 1
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    joints: [{{type: free}}]
sensors:
  - {{name: gyro, type: rate_gyro, body: b{gyro_noise}}}
  - {{name: acc, type: accelerometer, body: b{acc_noise}}}
"#
    );
    Scene::from_str(&text, "still.yaml").unwrap()
}

fn readings(scene: &Scene, steps: usize) -> Vec<[f64; 6]> {
    let mut e = NativeEngine::new(scene).unwrap();
    let mut out = Vec::with_capacity(2 * steps);
    for _ in 0..steps {
        e.step().unwrap();
        out.extend_from_slice(&e.output().readings);
    }
    out
}

#[test]
fn sensor_noise_is_gaussian_with_its_bias_and_std_and_repeats_for_a_seed() {
    let (std, bias) = (0.1, [0.05, -0.02, 0.0]);
    let scene = noisy_scene(
        &format!(", noise: {{std: {std}, bias: [{}, {}, {}], seed: 7}}", bias[0], bias[1], bias[2]),
        ", noise: {std: [0.2, 0, 0.3], seed: 7}",
    );
    let n = 20_000;
    let a = readings(&scene, n);
    let b = readings(&scene, n);
    let bits = |r: &[[f64; 6]]| r.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&a), bits(&b), "same seed, same readings bit for bit");
    // the gyro: mean = bias within 5 standard errors, std within 3 %
    for k in 0..3 {
        let xs: Vec<f64> = a.iter().step_by(2).map(|r| r[k]).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
        let se = std / (n as f64).sqrt();
        assert!((mean - bias[k]).abs() < 5.0 * se, "gyro[{k}] mean {mean} vs {}", bias[k]);
        assert!((sd / std - 1.0).abs() < 0.03, "gyro[{k}] std {sd} vs {std}");
        // the unused components stay 0
        assert!(a.iter().step_by(2).all(|r| r[3..] == [0.0; 3]));
    }
    // the accelerometer: per-component std, 0 for y: exact there
    let acc: Vec<[f64; 6]> = a.iter().skip(1).step_by(2).copied().collect();
    assert!(acc.iter().all(|r| r[1] == 0.0));
    for (k, want) in [(0, 0.2), (2, 0.3)] {
        let sd = (acc.iter().map(|r| r[k] * r[k]).sum::<f64>() / n as f64).sqrt();
        assert!((sd / want - 1.0).abs() < 0.03, "acc[{k}] std {sd} vs {want}");
    }
    // sensors sharing a seed draw from streams of their own; another seed draws other numbers
    assert_ne!((a[0][0] - bias[0]) / std, a[1][0] / 0.2);
    let other = readings(&noisy_scene(", noise: {std: 0.1, seed: 8}", ""), 10);
    assert_ne!(other[0][0], a[0][0] - bias[0], "another seed draws other numbers");
}

#[test]
fn zero_noise_gives_exact_readings() {
    let exact = readings(&noisy_scene("", ""), 200);
    let zero = readings(&noisy_scene(", noise: {std: 0, bias: 0}", ", noise: {}"), 200);
    let bits = |r: &[[f64; 6]]| r.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&exact), bits(&zero));
}

#[test]
fn bad_sensor_noise_is_refused_with_its_path() {
    for (noise, key, what) in [
        ("{std: -1}", "sensors[0].noise.std", "non-negative"),
        ("{std: [0.1, 0.1]}", "sensors[0].noise.std", "a list of 3"),
        ("{bias: [0, 0, 0, 0, 0, 0]}", "sensors[0].noise.bias", "a list of 3"),
        ("{std: 0.1, colour: red}", "sensors[0].noise", "unknown key"),
        ("{seed: -3}", "sensors[0].noise", ""),
    ] {
        let text = format!(
            "bodies:\n  - name: b\n    mass: 1\n    inertia: [[1,0,0],[0,1,0],[0,0,1]]\n    joints: [{{type: free}}]\nsensors: [{{name: g, type: rate_gyro, body: b, noise: {noise}}}]\n"
        );
        let err = Scene::from_str(&text, "bad.yaml").unwrap_err().to_string();
        assert!(err.contains(key) && err.contains(what), "{noise}: {err}");
    }
}

#[test]
fn hold_posture_from_the_scene_holds_the_pendulum_where_its_pd_balances_gravity() {
    use karakuri_sim::World;
    let mut scene = pendulum_with("{mode: torque, effort_limit: 100}", G, ", q0: 0.5");
    scene.controllers = Scene::from_str("controllers: [{type: hold_posture, joints: [hinge], kp: 50, kd: 2}]", "c.yaml")
        .unwrap()
        .controllers;
    let mut w = World::new(scene).unwrap();
    w.run(10.0).unwrap();
    // kp (q0 − q) = m g l sin q
    let expect = servo_equilibrium(50.0, 0.5, 0.5);
    let q = w.joint_position("hinge").unwrap();
    assert!((q - expect).abs() < 1e-4, "q {q} vs {expect}");
    let mut states = vec![karakuri_sim::JointState::default(); 1];
    w.write_joint_states(&mut states);
    assert!((states[0].tau - M * G * L * expect.sin()).abs() < 1e-3, "{:?}", states[0]);
}

#[test]
fn hold_posture_of_a_whole_robot_keeps_its_joints_near_their_initial_positions() {
    use karakuri_sim::World;
    let text = r#"
name: solo
world: {gravity: [0, 0, -9.81], dt: 0.001}
robots:
  - name: solo
    urdf: builtin:solo12.urdf
    root: fixed
    collide: false
    q0: {FL_HFE: 0.8, FL_KFE: -1.6, HR_HFE: -0.8, HR_KFE: 1.6}
    actuators: [{joints: "*", mode: torque}]
controllers: [{type: hold_posture, robot: solo, kp: 5, kd: 0.05}]
"#;
    let mut w = World::new(Scene::from_str(text, "solo.yaml").unwrap()).unwrap();
    w.run(2.0).unwrap();
    for (name, q0) in [("solo/FL_HFE", 0.8), ("solo/FL_KFE", -1.6), ("solo/HR_KFE", 1.6), ("solo/FR_HAA", 0.0)] {
        let q = w.joint_position(name).unwrap();
        // the sag under a leg's weight (< 0.3 kg at < 0.2 m) is below m g l / kp ≈ 0.1 rad
        // (without the controller the legs fall by radians)
        assert!((q - q0).abs() < 0.1, "{name}: {q} vs {q0}");
        assert!(w.joint_velocity(name).unwrap().abs() < 1e-3);
    }
}

#[test]
fn a_trajectory_controller_plays_its_table_and_a_value_outside_the_limits_stops_it() {
    use karakuri_sim::World;
    let dir = temp_dir("trajectory");
    std::fs::write(dir.join("traj.csv"), "time,hinge\n0, 0\n0.2, 0.3\n0.4, -0.1\n").unwrap();
    let scene = pendulum_file(&dir, "{mode: prescribed}").unwrap();
    let text = "controllers: [{type: trajectory, table: traj.csv, joints: [hinge]}]";
    let mut scene = scene;
    let path = dir.join("c.yaml");
    std::fs::write(&path, text).unwrap();
    scene.controllers = Scene::from_file(&path).unwrap().controllers;
    let mut w = World::new(scene).unwrap();
    let want = |t: f64| if t <= 0.2 { 1.5 * t } else if t <= 0.4 { 0.3 - 2.0 * (t - 0.2) } else { -0.1 };
    let mut worst: f64 = 0.0;
    for n in 1..=600 {
        w.step().unwrap();
        worst = worst.max((w.joint_position("hinge").unwrap() - want(n as f64 * 0.001)).abs());
    }
    assert!(worst < 1e-12, "table followed within {worst}");
    // a table leaving the joint's range [-1, 1]: the command at t + dt > 2/3 s is 1.0+
    std::fs::write(dir.join("traj.csv"), "0, 0\n1, 1.5\n").unwrap();
    let text = "world: {dt: 0.001}\nbodies:\n  - {name: bob, mass: 1, inertia: [[0.01,0,0],[0,0.01,0],[0,0,0.01]], joints: [{name: hinge, type: revolute, axis: [1, 0, 0], limits: [-1, 1], actuator: {mode: position, kp: 100, kd: 5}}]}\ncontrollers: [{type: trajectory, table: traj.csv, joints: [hinge]}]\n";
    std::fs::write(&path, text).unwrap();
    let mut w = World::new(Scene::from_file(&path).unwrap()).unwrap();
    let err = w.run(1.0).unwrap_err().to_string();
    assert!(err.contains("'hinge'") && err.contains("t = 0.666") && err.contains("outside the joint's limits"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_controllers_are_refused_with_their_path() {
    use karakuri_sim::World;
    let pendulum_text = |actuator: &str, controller: &str| {
        format!(
            "world: {{dt: 0.001}}\nbodies:\n  - {{name: bob, mass: 1, inertia: [[0.01,0,0],[0,0.01,0],[0,0,0.01]], joints: [{{name: hinge, type: revolute, axis: [1, 0, 0], actuator: {actuator}}}]}}\ncontrollers: [{controller}]\n"
        )
    };
    // refused when the scene is read
    for (controller, key, what) in [
        ("{type: hold_posture, kp: 1}", "controllers[0]", "either `robot`"),
        ("{type: hold_posture, robot: r, joints: [hinge], kp: 1}", "controllers[0]", "either `robot`"),
        ("{type: hold_posture, joints: [hinge], kp: -1}", "controllers[0].kp", "non-negative"),
        ("{type: hold_posture, joints: [hinge], kp: 1, period: 0.0015}", "controllers[0].period", "whole number"),
        ("{type: hold_posture, joints: [hinge], kp: 1, gain: 2}", "controllers[0]", "unknown key"),
        ("{type: dance}", "controllers[0]", "unknown value"),
    ] {
        let err = Scene::from_str(&pendulum_text("{mode: torque}", controller), "bad.yaml").unwrap_err().to_string();
        assert!(err.contains(key) && err.contains(what), "{controller}: {err}");
    }
    // refused when the world is built (names and actuators)
    for (actuator, controller, key, what) in [
        ("{mode: torque}", "{type: hold_posture, joints: [elbow], kp: 1}", "controllers[0].joints", "'elbow'"),
        ("{mode: position, kp: 5}", "{type: hold_posture, joints: [hinge], kp: 1}", "controllers[0]", "hold_posture commands torques"),
        ("{mode: torque}", "{type: hold_posture, robot: solo, kp: 1}", "controllers[0].robot", "no robot 'solo'"),
    ] {
        let scene = Scene::from_str(&pendulum_text(actuator, controller), "bad.yaml").unwrap();
        let err = World::new(scene).err().unwrap().to_string();
        assert!(err.contains(key) && err.contains(what), "{controller}: {err}");
    }
}

/// A fixed-base URDF pendulum (the same bob: m = 1 at l = 0.5 below a hinge about x, 0.01
/// about its centre) with `<dynamics .../>` attributes, as a scene in `dir` starting at `q0`.
fn urdf_pendulum(dir: &std::path::Path, dynamics: &str, q0: f64, qd0: f64, gravity: f64) -> Scene {
    let urdf = format!(
        r#"<robot name="p">
  <link name="base"/>
  <link name="bob">
    <inertial><origin xyz="0 0 -{L}"/><mass value="{M}"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="hinge" type="continuous">
    <parent link="base"/><child link="bob"/><origin xyz="0 0 1"/><axis xyz="1 0 0"/>
    <dynamics {dynamics}/>
  </joint>
</robot>"#
    );
    std::fs::write(dir.join("p.urdf"), urdf).unwrap();
    let text = format!(
        "world: {{gravity: [0, 0, -{gravity}], dt: 0.001}}\nrobots:\n  - {{name: p, urdf: p.urdf, root: fixed, collide: false, q0: {{hinge: {q0}}}, v0: {{hinge: {qd0}}}}}\n"
    );
    std::fs::write(dir.join("p.yaml"), text).unwrap();
    Scene::from_file(dir.join("p.yaml")).unwrap()
}

/// The bob's inertia about the hinge (parallel axes).
const I_HINGE: f64 = 0.01 + M * L * L;

#[test]
fn urdf_damping_decays_a_hinge_velocity_exponentially() {
    let dir = temp_dir("urdf-damping");
    let b = 0.26;
    let mut e = NativeEngine::new(&urdf_pendulum(&dir, &format!(r#"damping="{b}""#), 0.0, 2.0, 0.0)).unwrap();
    let mut worst: f64 = 0.0;
    for n in 1..=1000 {
        e.step().unwrap();
        let want = 2.0 * (-b * n as f64 * 0.001 / I_HINGE).exp();
        worst = worst.max((e.v()[0] / want - 1.0).abs());
    }
    // implicit Euler: (1 + dt b / I)^-n against e^(-b t / I), relative n (dt b / I)² / 2 = 5e-4
    assert!(worst < 1e-3, "relative velocity error {worst}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn urdf_coulomb_friction_holds_a_hinge_below_it_and_lets_it_slide_above() {
    let dir = temp_dir("urdf-friction");
    let half_pi = std::f64::consts::FRAC_PI_2;
    let load = M * G * L; // the gravity torque at the horizontal
    // above the load: stuck exactly
    let mut e = NativeEngine::new(&urdf_pendulum(&dir, r#"friction="6""#, half_pi, 0.0, G)).unwrap();
    run(&mut e, 1000);
    assert!((e.q()[0] - half_pi).abs() < 1e-12 && e.v()[0].abs() < 1e-12, "moved: q {} dq {}", e.q()[0], e.v()[0]);
    // below: q̈ = -(m g l - f) / I (gravity pulls towards q = 0, friction resists)
    let f = 3.0;
    let mut e = NativeEngine::new(&urdf_pendulum(&dir, &format!(r#"friction="{f}""#), half_pi, 0.0, G)).unwrap();
    run(&mut e, 20);
    let want = -(load - f) / I_HINGE * 0.02;
    assert!((e.v()[0] / want - 1.0).abs() < 1e-3, "dq {} vs {want}", e.v()[0]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_scene_joint_with_friction_sticks_and_bad_friction_is_refused() {
    let scene = pendulum_with("{mode: torque, target: 4.0}", 0.0, ", friction: 5");
    let mut e = NativeEngine::new(&scene).unwrap();
    run(&mut e, 100);
    assert!(e.v()[0].abs() < 1e-12, "a 4 N·m torque moved a joint with 5 N·m friction");
    let text = "bodies:\n  - name: b\n    mass: 1\n    inertia: [[1,0,0],[0,1,0],[0,0,1]]\n    joints: [{name: h, type: revolute, axis: [1, 0, 0], friction: -1}]\n";
    let err = Scene::from_str(text, "bad.yaml").unwrap_err().to_string();
    assert!(err.contains("bodies[0].joints[0].friction") && err.contains("non-negative"), "{err}");
}

/// A custom joint force: a spring-damper written as a user would, with its derivatives.
struct UserSpring {
    k: f64,
    d: f64,
}

impl karakuri_sim::JointForces for UserSpring {
    fn forces(&self, _t: f64, q: &[f64], dq: &[f64], out: &mut [karakuri_sim::JointForce]) {
        out[0] = karakuri_sim::JointForce { tau: -self.k * q[0] - self.d * dq[0], dtau_dq: -self.k, dtau_ddq: -self.d };
    }
}

/// A torque growing with time, `c t`, with no derivatives (explicit).
struct Ramp(f64);

impl karakuri_sim::JointForces for Ramp {
    fn forces(&self, t: f64, _q: &[f64], _dq: &[f64], out: &mut [karakuri_sim::JointForce]) {
        out[0].tau = self.0 * t;
    }
}

#[test]
fn custom_joint_forces_act_as_the_scene_springs_do_and_see_the_time() {
    use karakuri_sim::World;
    // a stiff spring-damper in Rust = the scene's stiffness and damping, bit for bit
    let (k, d) = (1.0e4, 3.0);
    let mut scene_spring = World::new(pendulum_with("{mode: torque}", G, &format!(", q0: 0.4, stiffness: {k}, damping: {d}"))).unwrap();
    let mut user_spring = World::new(pendulum_with("{mode: torque}", G, ", q0: 0.4")).unwrap();
    user_spring.add_joint_forces(&["hinge"], Box::new(UserSpring { k, d })).unwrap();
    for _ in 0..2000 {
        scene_spring.step().unwrap();
        user_spring.step().unwrap();
        let (a, b) = (scene_spring.joint_position("hinge").unwrap(), user_spring.joint_position("hinge").unwrap());
        assert_eq!(a.to_bits(), b.to_bits(), "{a} vs {b}");
    }
    // k dt² / I = 38: stable because it is implicit; settled where k q = -m g l sin q
    let q = user_spring.joint_position("hinge").unwrap();
    assert!((k * q + M * G * L * q.sin()).abs() < 1e-6, "q {q}");
    // a torque c t in zero gravity: dq(t) = c t² / (2 I) (the step's sum of c t_k dt)
    let mut w = World::new(pendulum("{mode: torque}", 0.0)).unwrap();
    w.add_joint_forces(&["hinge"], Box::new(Ramp(2.0))).unwrap();
    w.run(1.0).unwrap();
    let want = 2.0 * 1.0 / (2.0 * I_HINGE);
    let dq = w.joint_velocity("hinge").unwrap();
    assert!((dq / want - 1.0).abs() < 2e-3, "dq {dq} vs {want}");
    assert!(matches!(w.add_joint_forces(&["elbow"], Box::new(Ramp(1.0))), Err(karakuri_sim::SimError::UnknownJoint { .. })));
}

#[test]
fn a_prescribed_target_leaving_the_joint_limits_is_refused_with_its_path() {
    let scene = pendulum_with("{mode: prescribed, target: {sine: {amplitude: 0.8, frequency: 1}}}", G, ", limits: [-0.5, 0.5]");
    let err = NativeEngine::new(&scene).err().unwrap().to_string();
    assert!(err.contains("bodies[0].joints[0].actuator.target") && err.contains("[-0.8, 0.8]") && err.contains("'hinge'"), "{err}");
    // within the limits: accepted
    let scene = pendulum_with("{mode: prescribed, target: {sine: {amplitude: 0.4, frequency: 1}}}", G, ", limits: [-0.5, 0.5]");
    assert!(NativeEngine::new(&scene).is_ok());
}

#[test]
fn noise_controllers_friction_and_prescribed_survive_save_and_reload() {
    let dir = temp_dir("save-control");
    std::fs::write(dir.join("traj.csv"), "0, 0\n1, 0.5\n").unwrap();
    let text = r#"
world: {dt: 0.001}
bodies:
  - name: bob
    mass: 1
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    joints: [{name: hinge, type: revolute, axis: [1, 0, 0], friction: 0.3, actuator: {mode: prescribed}}]
sensors: [{name: g, type: rate_gyro, body: bob, noise: {std: [0.1, 0.2, 0.3], bias: 0.01, seed: 9}}]
controllers:
  - {type: trajectory, table: traj.csv, joints: [hinge], period: 0.002}
  - {type: hold_posture, joints: [hinge], kp: 3, kd: 0.1}
"#;
    let path = dir.join("s.yaml");
    std::fs::write(&path, text).unwrap();
    let scene = Scene::from_file(&path).unwrap();
    let copy = dir.join("copy.yaml");
    scene.save(&copy).unwrap();
    let back = Scene::from_file(&copy).unwrap();
    assert_eq!((&back.bodies, &back.sensors, &back.controllers), (&scene.bodies, &scene.sensors, &scene.controllers));
    std::fs::remove_dir_all(&dir).ok();
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
