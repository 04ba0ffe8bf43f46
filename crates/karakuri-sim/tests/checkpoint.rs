//! Checkpoints (issue 15, item 8): a world restored from a snapshot (through its JSON text)
//! continues bit for bit as the uninterrupted one — contacts with warm start, servos, a
//! velocity servo row, sensors, a push in progress and a controller with state — and a
//! snapshot refuses another scene, a controller that cannot be checkpointed is named.

use karakuri::spatial::Vec3;
use karakuri_sim::{ControlIo, Controller, Scene, SimError, Snapshot, World};

const SCENE: &str = r#"
name: checkpointed
world: {dt: 0.001}
bodies:
  - {name: floor, shapes: [{type: plane}]}
  - name: a
    mass: 1
    inertia: [[0.006, 0, 0], [0, 0.006, 0], [0, 0, 0.006]]
    joints: [{type: free, q0: {position: [0, 0, 0.1]}}]
    shapes: [{type: box, half_extents: [0.1, 0.1, 0.1]}]
  - name: b
    mass: 1
    inertia: [[0.006, 0, 0], [0, 0.006, 0], [0, 0, 0.006]]
    joints: [{type: free, q0: {position: [0.02, 0, 0.31], orientation: [0, 0, 0.0998334, 0.9950042]}}]
    shapes: [{type: box, half_extents: [0.1, 0.1, 0.1]}]
  - name: servo
    mass: 1
    com: [0, 0, -0.5]
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    pose_in_parent: {position: [2, 0, 1]}
    joints: [{type: revolute, name: servo, axis: [1, 0, 0], actuator: {mode: position, kp: 100, kd: 5, target: {sine: {amplitude: 0.5, frequency: 1}}, effort_limit: 20}}]
  - name: wheel
    mass: 1
    com: [0, 0, -0.5]
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    pose_in_parent: {position: [4, 0, 1]}
    joints: [{type: revolute, name: wheel, axis: [1, 0, 0], actuator: {mode: velocity, target: 2, effort_limit: 3}}]
sensors:
  - {name: imu, type: accelerometer, body: b}
  - {name: f, type: force, joint: servo}
perturbations:
  - {body: b, force: [0, 3, 0], point: [0, 0, 0.1], start: 0.25, duration: 0.1}
"#;

fn world() -> World {
    World::new(Scene::from_str(SCENE, "checkpointed.yaml").unwrap()).unwrap()
}

/// An integrating controller of the servo's target from the box's accelerometer: its integral is
/// state a checkpoint must carry.
#[derive(Default)]
struct Integrating {
    integral: f64,
}

impl Controller for Integrating {
    fn update(&mut self, io: &mut ControlIo<'_>) {
        self.integral += io.sensor("imu").unwrap()[1] * 1e-3;
        let k = io.joint("servo").unwrap();
        io.commands[k] = Some(0.2 + 50.0 * self.integral.clamp(-0.01, 0.01) + 0.01 * io.states[k].tau);
    }
    fn save_state(&self) -> Result<serde_json::Value, String> {
        Ok(serde_json::json!({ "integral": self.integral }))
    }
    fn load_state(&mut self, state: &serde_json::Value) -> Result<(), String> {
        self.integral = state["integral"].as_f64().ok_or("no integral")?;
        Ok(())
    }
}

/// Every body's pose and velocity and every one-dof joint's state, as bits.
fn bits(w: &World) -> Vec<u64> {
    let mut out = vec![];
    for s in w.states() {
        let p = &s.pose;
        out.extend(p.translation.iter().chain(p.rotation.iter()).chain(s.linear.iter()).chain(s.angular.iter()).map(|x| x.to_bits()));
    }
    let mut joints = vec![karakuri_sim::JointState::default(); w.one_dof_joints().len()];
    w.write_joint_states(&mut joints);
    out.extend(joints.iter().flat_map(|j| [j.q, j.dq, j.tau]).map(f64::to_bits));
    out.extend(w.readings().iter().flatten().map(|x| x.to_bits()));
    out
}

#[test]
fn a_restored_world_continues_bit_for_bit() {
    let mut a = world();
    a.add_controller(Box::new(Integrating::default()), 0.002).unwrap();
    a.run(0.2).unwrap();
    // an API push in progress across the checkpoint
    a.apply_wrench("a", Vec3::new(2.0, 0.0, 0.0), Vec3::new(0.0, 0.0, 0.1), 0.2).unwrap();
    a.run(0.1).unwrap();
    let snap = a.snapshot().unwrap();
    assert_eq!((snap.steps, snap.controllers.len()), (300, 1));
    let mut expect = vec![];
    for _ in 0..400 {
        a.step().unwrap();
        expect.push(bits(&a));
    }
    let text = snap.to_json();
    let mut b = world();
    b.add_controller(Box::new(Integrating::default()), 0.002).unwrap();
    b.restore(&Snapshot::from_json(&text, "mem").unwrap()).unwrap();
    assert_eq!((b.steps(), b.time()), (300, snap.time));
    for (k, e) in expect.iter().enumerate() {
        b.step().unwrap();
        assert!(&bits(&b) == e, "step {} after the checkpoint differs", k + 1);
    }
    // the scene's push and the contacts were in play
    assert!(!b.contacts().is_empty());
    // the comparison sees the controller's state: without it the run departs
    let mut lost = snap.clone();
    lost.controllers[0] = serde_json::json!({ "integral": 0.0 });
    let mut c = world();
    c.add_controller(Box::new(Integrating::default()), 0.002).unwrap();
    c.restore(&lost).unwrap();
    c.run(0.4).unwrap();
    assert!(&bits(&c) != expect.last().unwrap());
}

#[test]
fn a_snapshot_refuses_another_scene_and_leaves_the_world_as_it_was() {
    let mut a = world();
    a.run(0.05).unwrap();
    let snap = a.snapshot().unwrap();
    for (from, to) in [("mass: 1\n    com: [0, 0, -0.5]", "mass: 1.5\n    com: [0, 0, -0.5]"), ("dt: 0.001", "dt: 0.002")] {
        let other = SCENE.replacen(from, to, 1);
        let mut b = World::new(Scene::from_str(&other, "other.yaml").unwrap()).unwrap();
        let err = b.restore(&snap).unwrap_err().to_string();
        assert!(err.contains("fingerprint") && b.steps() == 0, "{err}");
    }
    // the duration is not part of the world: a resumed run may go on longer
    let longer = SCENE.replacen("dt: 0.001", "dt: 0.001, duration: 9", 1);
    let mut c = World::new(Scene::from_str(&longer, "longer.yaml").unwrap()).unwrap();
    c.restore(&snap).unwrap();
    // a tampered state is refused before anything changes
    let mut bad = snap.clone();
    bad.state["state"]["q"].as_array_mut().unwrap().pop();
    let mut d = world();
    let before = bits(&d);
    let err = d.restore(&bad).unwrap_err().to_string();
    assert!(err.contains("q has") && bits(&d) == before && d.steps() == 0, "{err}");
    // a controller count that differs
    let mut e = world();
    e.add_controller(Box::new(Integrating::default()), 0.001).unwrap();
    assert!(e.restore(&snap).unwrap_err().to_string().contains("controller"));
}

#[test]
fn a_controller_that_cannot_be_checkpointed_is_named() {
    struct Plain;
    impl Controller for Plain {
        fn update(&mut self, _: &mut ControlIo<'_>) {}
    }
    let mut w = world();
    w.add_controller(Box::new(Integrating::default()), 0.001).unwrap();
    w.add_controller(Box::new(Plain), 0.001).unwrap();
    let err = w.snapshot().unwrap_err();
    assert!(matches!(err, SimError::Checkpoint(_)));
    let text = err.to_string();
    assert!(text.contains("controller 1") && text.contains("cannot be checkpointed"), "{text}");
}

#[test]
fn checkpoint_numbers_round_trip_every_bit() {
    // SplitMix64 over raw bit patterns: every finite double (subnormals, extremes, -0) prints
    // and reads back to the same bits
    let mut x: u64 = 0x1234_5678;
    let mut values = vec![0.0, -0.0, f64::MIN_POSITIVE, 5e-324, f64::MAX, f64::MIN, 0.1, 1.0 / 3.0];
    while values.len() < 20_000 {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        let v = f64::from_bits(z ^ (z >> 31));
        if v.is_finite() {
            values.push(v);
        }
    }
    let text = serde_json::to_string(&values).unwrap();
    let back: Vec<f64> = serde_json::from_str(&text).unwrap();
    for (a, b) in values.iter().zip(&back) {
        assert_eq!(a.to_bits(), b.to_bits(), "{a:e} came back as {b:e}");
    }
    // and a whole snapshot through a file
    let mut w = world();
    w.run(0.3).unwrap();
    let snap = w.snapshot().unwrap();
    let path = std::env::temp_dir().join(format!("karakuri-ckpt-{}.json", std::process::id()));
    snap.write(&path).unwrap();
    assert_eq!(Snapshot::read(&path).unwrap(), snap);
    std::fs::write(&path, "{\"format\": \"other\"}").unwrap();
    assert!(Snapshot::read(&path).unwrap_err().to_string().contains("not a karakuri checkpoint"));
    std::fs::remove_file(&path).ok();
}

/// The scene's built-in controllers hold nothing but what the scene gives them: a world
/// running `hold_posture` checkpoints and resumes bit for bit.
#[test]
fn a_world_with_the_scenes_built_in_controllers_resumes_bit_for_bit() {
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
controllers: [{type: hold_posture, robot: solo, kp: 5, kd: 0.05, period: 0.002}]
"#;
    let scene = karakuri_sim::Scene::from_str(text, "solo.yaml").unwrap();
    let mut a = World::new(scene.clone()).unwrap();
    a.run(0.3).unwrap();
    let snap = Snapshot::from_json(&a.snapshot().unwrap().to_json(), "mem").unwrap();
    a.run(0.3).unwrap();
    let mut b = World::new(scene).unwrap();
    b.restore(&snap).unwrap();
    b.run(0.3).unwrap();
    assert_eq!(bits(&a), bits(&b));
    assert!(a.joint_velocity("solo/FL_KFE").unwrap() != 0.0, "the controller moved the robot");
}

#[test]
fn a_checkpoint_in_the_layout_before_the_step_outputs_struct_still_loads() {
    // before issue 27 the run's counters sat beside the state ("diagnostics") and the last
    // solve's statistics were not saved
    let mut a = world();
    a.run(0.3).unwrap();
    let snap = a.snapshot().unwrap();
    let mut old = snap.clone();
    let st = old.state.as_object_mut().unwrap();
    let diagnostics = st["state"].as_object_mut().unwrap().remove("diagnostics").unwrap();
    st.insert("diagnostics".into(), diagnostics);
    st.remove("last_solve");
    let mut b = world();
    b.restore(&Snapshot::from_json(&old.to_json(), "old").unwrap()).unwrap();
    assert_eq!(b.diagnostics(), a.diagnostics());
    assert_eq!(b.contacts(), a.contacts());
    for _ in 0..100 {
        a.step().unwrap();
        b.step().unwrap();
        assert!(bits(&a) == bits(&b));
    }
    // and the new layout round-trips the outputs whole, the last solve included
    let mut c = world();
    c.restore(&snap).unwrap();
    assert_eq!((c.last_solve().iterations, c.last_solve().residual.to_bits()), {
        let mut d = world();
        d.run(0.3).unwrap();
        (d.last_solve().iterations, d.last_solve().residual.to_bits())
    });
}
