//! The stage plan (which optional stages a world runs, decided at load) and the opt-in stage
//! timing: a scene pays only for what it holds, and skipping changes no result.

mod common;

use common::scene_path;
use karakuri_sim::native::plan::StagePlan;
use karakuri_sim::{NativeEngine, Scene, World};

fn plan_of(name: &str) -> StagePlan {
    let scene = Scene::from_file(scene_path(name)).unwrap();
    NativeEngine::new(&scene).unwrap().sim_model().plan
}

#[test]
fn the_plan_follows_what_each_validation_scene_holds() {
    // a ball alone (its material's restitution 0, nothing to touch)
    let p = plan_of("01_free_fall.json");
    assert!(!p.contacts && !p.impacts, "{p:?}");
    // ball on ground, restitution 0.5: contacts and the impact passes
    let p = plan_of("02_bounce.json");
    assert!(p.contacts && p.impacts, "{p:?}");
    // box on an incline, restitution 0: contacts, no impact passes
    let p = plan_of("04a_incline_stick.json");
    assert!(p.contacts && !p.impacts, "{p:?}");
    // links without shapes, limits or servos: no constraint stage at all
    let p = plan_of("06_double_pendulum.json");
    assert!(!p.contacts && !p.impacts && !p.rows, "{p:?}");
    // the four-bar's loop is rows
    assert!(plan_of("08_fourbar.json").rows);
    assert!(plan_of("04a_incline_stick.json").rows);
    // the cradle: e = 1 between balls
    let p = plan_of("09b_newton_cradle_gap.json");
    assert!(p.contacts && p.impacts, "{p:?}");
    // none of them has joint forces, actuators, perturbations, tracks or sensors
    for name in ["01_free_fall.json", "02_bounce.json", "04a_incline_stick.json", "06_double_pendulum.json", "08_fourbar.json", "09b_newton_cradle_gap.json"] {
        let p = plan_of(name);
        assert!(!(p.joint_forces || p.actuators || p.perturbations || p.tracks || p.sensors || p.noise), "{name}: {p:?}");
    }
}

#[test]
fn a_loop_keeps_the_simultaneous_problem_so_no_impact_passes() {
    // an elastic ball on a four-bar's coupler would still be solved without the passes
    let text = r#"
world: {gravity: [0, 0, -9.81], dt: 0.001}
materials: {m: {static_friction: 0.5, dynamic_friction: 0.5, restitution: 0.8}}
bodies:
  - {name: ground, shapes: [{type: plane, material: m}]}
  - name: a
    mass: 1
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    pose_in_parent: {position: [0, 0, 1]}
    joints: [{name: ha, type: revolute, axis: [0, 1, 0]}]
    shapes: [{type: sphere, radius: 0.1, material: m}]
  - name: b
    mass: 1
    inertia: [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
    pose_in_parent: {position: [1, 0, 1]}
    joints: [{name: hb, type: revolute, axis: [0, 1, 0]}]
loop_constraints: [{type: ball, body_a: a, anchor_a: [0.5, 0, 0], body_b: b, anchor_b: [-0.5, 0, 0]}]
"#;
    let scene = Scene::from_str(text, "loop.yaml").unwrap();
    let p = NativeEngine::new(&scene).unwrap().sim_model().plan;
    assert!(p.contacts && !p.impacts, "{p:?}");
    // without the loop the same bodies get the passes
    let text = text.replace("loop_constraints: [{type: ball, body_a: a, anchor_a: [0.5, 0, 0], body_b: b, anchor_b: [-0.5, 0, 0]}]", "");
    let scene = Scene::from_str(&text, "no_loop.yaml").unwrap();
    assert!(NativeEngine::new(&scene).unwrap().sim_model().plan.impacts);
}

#[test]
fn stage_timing_is_off_until_asked() {
    let mut w = World::from_file(scene_path("09b_newton_cradle_gap.json")).unwrap();
    w.run(0.01).unwrap();
    assert_eq!(w.stage_times().total().as_nanos(), 0, "{:?}", w.stage_times());
    w.time_stages(true).unwrap();
    w.run(0.01).unwrap();
    let t = w.stage_times();
    assert!(t.kinematics.as_nanos() > 0 && t.constraint.as_nanos() > 0, "{t:?}");
    // off again: the sum stays where it was
    w.time_stages(false).unwrap();
    w.run(0.01).unwrap();
    assert_eq!(w.stage_times(), t);
}
