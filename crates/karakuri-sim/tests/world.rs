//! World behaviour: determinism, resting bodies, stacks, contact modes, store/restore, joint
//! limits, the divergence guard and clear errors for bad scenes.

mod common;
use common::{error_of, ground_and, scene_path};


use karakuri::spatial::Vec3;
use karakuri_sim::{Scene, SimError, World};

fn yaml(text: &str) -> Scene {
    Scene::from_str(text, "test.yaml").unwrap()
}

const BOX: &str = r#"
    mass: 1.0
    inertia: [[0.006667, 0, 0], [0, 0.006667, 0], [0, 0, 0.006667]]
    shapes: [{type: box, half_extents: [0.1, 0.1, 0.1], material: m}]"#;

fn trajectory_bits(world: &mut World, steps: usize) -> Vec<u64> {
    let mut out = vec![];
    for _ in 0..steps {
        world.step().unwrap();
        for s in world.states() {
            out.extend(
                s.pose
                    .translation
                    .iter()
                    .chain(s.pose.rotation.iter())
                    .chain(s.linear.iter())
                    .map(|x| x.to_bits()),
            );
        }
    }
    out
}

#[test]
fn same_scene_gives_a_bit_identical_trajectory() {
    for name in ["05a_stack5.json", "09b_newton_cradle_gap.json"] {
        let scene = Scene::from_file(scene_path(name)).unwrap();
        let a = trajectory_bits(&mut World::new(scene.clone()).unwrap(), 600);
        let b = trajectory_bits(&mut World::new(scene).unwrap(), 600);
        assert!(a == b, "{name}: two runs differ");
    }
}

#[test]
fn a_box_resting_on_the_ground_for_10_s_drifts_less_than_0_1_mm() {
    let mut scene = yaml(&ground_and("", &format!(
        "  - name: box\n    joints: [{{type: free, q0: {{position: [0.3, -0.2, 0.1]}}}}]{BOX}"
    )));
    scene.world.duration = 10.0;
    let mut world = World::new(scene).unwrap();
    let p0 = world.state("box").unwrap().pose.translation;
    world.run(10.0).unwrap();
    let s = world.state("box").unwrap();
    let drift = (s.pose.translation - p0).norm();
    assert!(drift < 1e-4, "drift {drift} m");
    // the contact forces carry the weight
    let w = world.contact_wrenches()[world.body_index("box").unwrap()];
    assert!(
        (w.0.z - 9.81).abs() < 1e-3 && w.0.xy().norm() < 1e-6,
        "contact force {:?}",
        w.0
    );
    assert_eq!(
        world.contacts().len(),
        4,
        "a box on a plane touches at its four corners"
    );
}

#[test]
fn a_stack_of_10_boxes_stands_for_10_s() {
    let mut bodies = String::new();
    for i in 0..10 {
        bodies += &format!(
            "  - name: box{i}\n    joints: [{{type: free, q0: {{position: [0, 0, {}]}}}}]{BOX}\n",
            0.1 + 0.2 * i as f64
        );
    }
    let mut world = World::new(yaml(&ground_and("", &bodies))).unwrap();
    let p0: Vec<Vec3> = world.states().iter().map(|s| s.pose.translation).collect();
    let (mut drift, mut tilt): (f64, f64) = (0.0, 0.0);
    for _ in 0..10_000 {
        world.step().unwrap();
        for (s, p) in world.states().iter().zip(&p0).skip(1) {
            drift = drift.max((s.pose.translation - p).xy().norm());
            tilt = tilt.max(s.pose.rotation[(2, 2)].clamp(-1.0, 1.0).acos().to_degrees());
        }
    }
    let sink = p0[10].z - world.states()[10].pose.translation.z;
    assert!(
        drift < 1e-3 && tilt < 1.0 && sink.abs() < 0.015,
        "drift {drift} m, tilt {tilt} deg, top sink {sink} m"
    );
}

#[test]
fn a_saved_scene_reloads_to_the_same_simulation() {
    let dir = std::env::temp_dir().join(format!("karakuri-sim-save-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["05a_stack5.json", "08_fourbar.json", "09b_newton_cradle_gap.json"] {
        let scene = Scene::from_file(scene_path(name)).unwrap();
        for ext in ["json", "yaml"] {
            let path = dir.join(format!("{name}.{ext}"));
            scene.save(&path).unwrap();
            let mut back = Scene::from_file(&path).unwrap();
            back.source = scene.source.clone();
            assert_eq!(back, scene, "{name} through {ext}");
            let a = trajectory_bits(&mut World::new(scene.clone()).unwrap(), 200);
            let b = trajectory_bits(&mut World::new(back).unwrap(), 200);
            assert!(a == b, "{name} through {ext}: the reloaded scene simulates differently");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn contact_modes_none_and_penalty() {
    let ball = r#"
    mass: 1.0
    inertia: [[0.004, 0, 0], [0, 0.004, 0], [0, 0, 0.004]]
    shapes: [{type: sphere, radius: 0.1, material: m}]"#;
    let body = format!("  - name: ball\n    joints: [{{type: free, q0: {{position: [0, 0, 0.1]}}}}]{ball}\n");
    // none: falls through
    let mut s = yaml(&ground_and("", &body));
    s.contact_pairs.push(karakuri_sim::scene::PairSpec {
        bodies: ["ground".into(), "ball".into()],
        mode: karakuri_sim::scene::ContactMode::None,
    });
    let mut w = World::new(s).unwrap();
    w.run(0.5).unwrap();
    assert!(w.state("ball").unwrap().pose.translation.z < -0.5);
    // penalty: rests at the spring's deflection m g / k
    let mut s = yaml(&ground_and("", &body));
    s.contact.mode = karakuri_sim::scene::ContactMode::Penalty {
        stiffness: 1e5,
        damping: 1e3,
    };
    let mut w = World::new(s).unwrap();
    w.run(1.0).unwrap();
    let z = w.state("ball").unwrap().pose.translation.z;
    assert!((0.1 - z - 9.81 / 1e5).abs() < 2e-5, "penalty rest height {z}");
}

#[test]
fn shapes_rest_at_their_heights() {
    let ir = "[[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]";
    let bodies = format!(
        r#"  - name: capsule
    joints: [{{type: free, q0: {{position: [0, 0, 0.3]}}}}]
    mass: 1.0
    inertia: {ir}
    shapes: [{{type: capsule, radius: 0.05, half_length: 0.2, material: m}}]
  - name: cylinder
    joints: [{{type: free, q0: {{position: [1, 0, 0.3]}}}}]
    mass: 1.0
    inertia: {ir}
    shapes: [{{type: cylinder, radius: 0.1, half_length: 0.05, material: m}}]
  - name: hull
    joints: [{{type: free, q0: {{position: [2, 0, 0.3]}}}}]
    mass: 1.0
    inertia: {ir}
    shapes: [{{type: convex_mesh, material: m, vertices: [[-0.1,-0.1,-0.1],[0.1,-0.1,-0.1],[0.1,0.1,-0.1],[-0.1,0.1,-0.1],[0,0,0.2]]}}]
"#
    );
    let mut w = World::new(yaml(&ground_and("", &bodies))).unwrap();
    w.run(1.5).unwrap();
    // capsule standing on its cap, cylinder on its face, pyramid on its base
    for (name, h) in [("capsule", 0.25), ("cylinder", 0.05), ("hull", 0.1)] {
        let z = w.state(name).unwrap().pose.translation.z;
        assert!((z - h).abs() < 2e-3, "{name} rests at {z}, expected {h}");
    }
}

#[test]
fn joint_limits_stop_a_pendulum() {
    let s = yaml(
        r#"
name: limited
world: {gravity: [0, 0, -9.81], dt: 0.001}
bodies:
  - name: rod
    pose_in_parent: {position: [0, 0, 1]}
    joints: [{type: revolute, axis: [0, 1, 0], q0: 1.0, limits: [-0.3, 1.2]}]
    mass: 1.0
    com: [0, 0, -0.5]
    inertia: [[0.08, 0, 0], [0, 0.08, 0], [0, 0, 0.001]]
"#,
    );
    let mut w = World::new(s).unwrap();
    let mut low: f64 = 10.0;
    for _ in 0..2000 {
        w.step().unwrap();
        let r = w.state("rod").unwrap().pose.rotation;
        low = low.min(r[(0, 2)].atan2(r[(0, 0)]));
    }
    assert!(low > -0.3 - 2e-3, "swung past the lower limit: {low}");
}

#[test]
fn divergence_stops_with_the_step_time_and_body() {
    let mut s = yaml(&ground_and("", &format!(
        "  - name: box\n    joints: [{{type: free, q0: {{position: [0, 0, 1]}}}}]{BOX}"
    )));
    s.engine.max_speed = 3.0;
    let mut w = World::new(s).unwrap();
    let e = w.run(1.0).unwrap_err();
    match &e {
        SimError::Diverged { step, body, .. } => {
            assert_eq!(body, "box");
            assert!(*step > 250 && *step < 350, "{e}");
        }
        other => panic!("{other}"),
    }
    assert!(e.to_string().contains("step") && e.to_string().contains("box"));
}

fn bad(body: &str) -> String {
    error_of(&ground_and("", body), "bad.yaml")
}

#[test]
fn unknown_shape_is_an_error() {
    let e = bad("  - name: b\n    joints: [{type: free}]\n    mass: 1\n    inertia: [[1,0,0],[0,1,0],[0,0,1]]\n    shapes: [{type: torus, radius: 1}]");
    assert!(
        e.contains("bad.yaml") && e.contains("bodies[1].shapes[0].type") && e.contains("unknown value `torus`") && e.contains("`sphere`"),
        "{e}"
    );
}

#[test]
fn negative_mass_is_an_error() {
    let e = bad("  - name: b\n    joints: [{type: free}]\n    mass: -1\n    inertia: [[1,0,0],[0,1,0],[0,0,1]]");
    assert!(e.contains("bodies[1].mass") && e.contains("non-negative"), "{e}");
}

#[test]
fn non_unit_quaternion_is_an_error() {
    let e = bad("  - name: b\n    joints: [{type: free, q0: {orientation: [0, 0, 0.5, 0.5]}}]\n    mass: 1\n    inertia: [[1,0,0],[0,1,0],[0,0,1]]");
    assert!(
        e.contains("bodies[1].joints[0].q0.orientation") && e.contains("unit"),
        "{e}"
    );
}

#[test]
fn unknown_material_is_an_error() {
    let e = bad("  - name: b\n    joints: [{type: free}]\n    mass: 1\n    inertia: [[1,0,0],[0,1,0],[0,0,1]]\n    shapes: [{type: sphere, radius: 0.1, material: rubber}]");
    assert!(
        e.contains("bodies[1].shapes[0].material")
            && e.contains("unknown material 'rubber'")
            && e.contains("defined: m"),
        "{e}"
    );
}

#[test]
fn missing_urdf_is_an_error() {
    let e = error_of("name: r\nrobots:\n  - name: solo\n    urdf: does/not/exist.urdf\n", "bad.yaml");
    assert!(e.contains("robots[0].urdf") && e.contains("does/not/exist.urdf"), "{e}");
}

#[test]
fn unknown_keys_and_bad_inertia_are_errors() {
    let e = bad("  - name: b\n    joints: [{type: free}]\n    mass: 1\n    inertia: [[1,0,0],[0,1,0],[0,0,1]]\n    shapes: [{type: sphere, raduis: 0.1}]");
    assert!(
        e.contains("bodies[1].shapes[0].raduis") && e.contains("unknown key"),
        "{e}"
    );
    let e = bad("  - name: b\n    joints: [{type: free}]\n    mass: 1\n    inertia: [[1,0,0],[0,1,0],[0,0,5]]");
    assert!(e.contains("bodies[1].inertia") && e.contains("triangle"), "{e}");
}

/// Issue 13, item 8: a wrong-typed value with multi-byte characters is quoted in the error
/// (cut at a character boundary), not a panic.
#[test]
fn a_non_ascii_wrong_typed_value_is_an_error_not_a_panic() {
    let long = "é".repeat(60);
    for text in [format!("name: t\nworld: {{dt: \"{long}\"}}\n"), format!("name: t\nworld: {{dt: \"a{long}\"}}\n")] {
        let e = error_of(&text, "bad.yaml");
        assert!(e.contains("world.dt") && e.contains("expected a number") && e.contains("éé"), "{e}");
    }
}

/// Issue 13, item 9: a time step or duration whose step count no run can reach is refused at
/// load, and `World::run` bounds the count too.
#[test]
fn a_subnormal_dt_or_a_huge_duration_is_refused() {
    let e = error_of("name: t\nworld: {dt: 5e-324}\n", "bad.yaml");
    assert!(e.contains("world.dt") && e.contains("at least 1e-9"), "{e}");
    let e = error_of("name: t\nworld: {duration: 1e308}\n", "bad.yaml");
    assert!(e.contains("world.duration") && e.contains("more than the 1e9"), "{e}");
    let mut w = World::new(yaml(&ground_and("", ""))).unwrap();
    let e = w.run(1e308).unwrap_err().to_string();
    assert!(e.contains("more than the 1e9"), "{e}");
    assert!(w.run(f64::NAN).is_err());
}

/// Issue 12, item 4: saving is serialising the scene's own types, so every scene of the
/// repository (and the bundled demo) saved as JSON and as YAML beside itself reloads to the
/// same scene, field for field and bit for bit, and writes the same value tree again.
#[test]
fn every_scene_saves_and_reloads_bit_identical() {
    let dir = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/scenes"));
    let mut scenes: Vec<Scene> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json" || x == "yaml") && !p.to_string_lossy().contains(".saved-"))
        .map(|p| Scene::from_file(&p).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    assert!(scenes.len() >= 12, "{} scenes", scenes.len());
    // the CLI's bundled demo (a robot built into the binary)
    scenes.push(Scene::from_file(dir.join("../../crates/karakuri-cli/scenes/demo.yaml")).unwrap());
    for scene in &scenes {
        for ext in ["json", "yaml"] {
            let path = dir.join(format!("{}.saved-{}.{ext}", scene.name, std::process::id()));
            scene.save(&path).unwrap();
            let back = Scene::from_file(&path);
            std::fs::remove_file(&path).ok();
            let mut back = back.unwrap_or_else(|e| panic!("{} through {ext}: {e}", scene.name));
            back.source = scene.source.clone();
            assert_eq!(&back, scene, "{} through {ext}", scene.name);
            assert_eq!(back.to_value(), scene.to_value(), "{} through {ext}", scene.name);
        }
    }
}

/// Issue 12, item 4: the engine is an enum; an unknown one is named with the known ones.
#[test]
fn unknown_engine_is_an_error() {
    let e = error_of("name: t\nengine: {type: bullet}\n", "bad.yaml");
    assert!(e.contains("engine.type") && e.contains("unknown value `bullet`") && e.contains("`native`"), "{e}");
}

#[test]
fn layout_names_every_joint_and_sensor_component_with_its_offset() {
    let text = r#"
name: layout
world: {gravity: [0, 0, -9.81], dt: 0.001, duration: 0.01}
bodies:
  - name: bob
    pose_in_parent: {position: [0, 0, 1]}
    mass: 1.0
    com: [0, 0, -0.5]
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    joints:
      - {name: hinge, type: revolute, axis: [1, 0, 0], actuator: {mode: torque, target: 0}}
sensors:
  - {name: imu, type: accelerometer, body: bob}
  - {name: f, type: force, joint: hinge}
  - {name: gyro, type: rate_gyro, body: bob}
"#;
    let mut world = World::new(yaml(text)).unwrap();
    world.run(0.01).unwrap();
    let layout = world.layout();
    assert_eq!(layout.joints, ["hinge"]);
    assert_eq!(layout.actuated, [0]);
    assert_eq!(world.joint_index("hinge"), Some(0));
    assert_eq!(world.joint_index("nowhere"), None);
    let slots: Vec<(&str, usize, usize)> = layout.sensors.iter().map(|s| (s.name.as_str(), s.offset, s.width)).collect();
    assert_eq!(slots, [("imu", 0, 3), ("f", 3, 6), ("gyro", 9, 3)]);
    assert_eq!(layout.sensor_values(), 12);
    let columns: Vec<String> = layout.sensor_components().map(|(s, c)| format!("{s}.{c}")).collect();
    assert_eq!(columns.join(","), "imu.x,imu.y,imu.z,f.fx,f.fy,f.fz,f.tx,f.ty,f.tz,gyro.x,gyro.y,gyro.z");
    for s in &layout.sensors {
        assert_eq!(world.sensor(&s.name).unwrap().len(), s.width);
    }
}

/// The contact measures of a solve (ContactBench's Signorini, Coulomb and maximal
/// dissipation violations, `solver/measures.rs`) are ≈ 0 on boxes resting in a converged
/// stack, and not on the same stack solved by one sweep from no warm start (a truncated
/// solve: the boxes' weight has not reached the floor's contacts).
#[test]
fn contact_measures_vanish_at_rest_and_not_for_a_truncated_solve() {
    let worst = |max_iterations: usize, warm_start: bool| {
        let mut scene = Scene::from_file(scene_path("05a_stack5.json")).unwrap();
        scene.engine.sleep.enabled = false;
        scene.engine.max_iterations = max_iterations;
        scene.engine.warm_start = warm_start;
        let mut w = World::new(scene).unwrap();
        let mut m = [0.0_f64; 3];
        for _ in 0..500 {
            w.step().unwrap();
            let s = w.last_solve();
            for (x, y) in m.iter_mut().zip([s.signorini, s.coulomb, s.dissipation]) {
                *x = x.max(y);
            }
        }
        m
    };
    // one box's weight impulse per step is 1 kg · 9.81 · 1 ms ≈ 1e-2 N·s; converged rows move
    // at most the tolerance (1e-6 m/s): products below 1e-2 · 5 boxes · 1e-6
    let rest = worst(50, true);
    assert!(rest[0] < 1e-7 && rest[1] <= 1e-12 && rest[2] < 1e-7, "at rest: {rest:?}");
    let truncated = worst(1, false);
    assert!(truncated[0] > 1e-5 && truncated[2] > 1e-5, "one sweep: {truncated:?}");
}
