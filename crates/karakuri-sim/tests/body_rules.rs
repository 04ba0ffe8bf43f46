//! A `.body` file's `collision_detection_rules` applied: SR1's `disabled_link_chain_level: 3`
//! turns off the pairs of links at most three joints apart, the others keep colliding; a
//! `disabled_links` entry and a `disabled_link_group` take their links out.

use std::path::{Path, PathBuf};

use karakuri_sim::{NativeEngine, Scene};

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(p)
}

/// Whether any collision shape of body `a` may touch one of body `b` (by world body name).
fn collide(e: &NativeEngine, a: &str, b: &str) -> bool {
    let c = &e.sim_model().collider;
    let body = |n: &str| e.bodies().iter().position(|x| x.name == n).unwrap_or_else(|| panic!("no body {n}"));
    let (a, b) = (body(a), body(b));
    let n = c.shapes.len();
    (0..n).any(|i| (0..n).any(|j| c.shapes[i].body == a && c.shapes[j].body == b && c.pair_mode(i, j).is_some()))
}

#[test]
fn sr1s_chain_level_turns_off_the_near_links() {
    let e = NativeEngine::new(&Scene::from_file(repo("tests/data/body/SR1/SR1.body")).unwrap()).unwrap();
    // along the left leg: WAIST – HIP_R – HIP_P – HIP_Y – KNEE – ANKLE_P – ANKLE_R
    // (the thigh and the foot: 3 apart from KNEE to ANKLE_R … the shin's ends)
    assert!(!collide(&e, "SR1/LLEG_HIP_P", "SR1/LLEG_ANKLE_P"), "3 joints apart: off");
    assert!(!collide(&e, "SR1/LLEG_KNEE", "SR1/LLEG_ANKLE_R"), "2 apart: off");
    // the two feet are 12 apart: they collide
    assert!(collide(&e, "SR1/LLEG_ANKLE_R", "SR1/RLEG_ANKLE_R"));
}

#[test]
fn disabled_links_and_groups_take_their_pairs_out() {
    let dir = std::env::temp_dir().join(format!("karakuri-rules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // a fixed base with three free-swinging arms that all overlap around the same point
    let arm = |name: &str, x: f64| format!(r#"
  -
    name: {name}
    parent: BASE
    translation: [ {x}, 0, 0.5 ]
    jointType: revolute
    jointAxis: [ 0, 1, 0 ]
    mass: 1.0
    inertia: [ 0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.01 ]
    elements:
      Shape:
        geometry: {{ type: Box, size: [ 0.5, 0.1, 0.1 ] }}"#);
    let text = |rules: &str| format!(r#"format: ChoreonoidBody
formatVersion: 1.0
name: Arms
links:
  -
    name: BASE
    jointType: fixed
    mass: 1.0
    inertia: [ 0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.01 ]
{}{}{}
collision_detection_rules:
{rules}
"#, arm("A", 0.0), arm("B", 0.6), arm("C", 1.2));
    let load = |rules: &str| {
        let path = dir.join("arms.body");
        std::fs::write(&path, text(rules)).unwrap();
        NativeEngine::new(&Scene::from_file(&path).unwrap()).unwrap()
    };
    let e = load("  - disabled_link_chain_level: 0");
    assert!(collide(&e, "arms/A", "arms/B") && collide(&e, "arms/B", "arms/C") && collide(&e, "arms/A", "arms/C"));
    let e = load("  - disabled_links: [ B ]");
    assert!(!collide(&e, "arms/A", "arms/B") && !collide(&e, "arms/B", "arms/C") && collide(&e, "arms/A", "arms/C"));
    let e = load("  - disabled_link_group: [ A, C ]");
    assert!(collide(&e, "arms/A", "arms/B") && collide(&e, "arms/B", "arms/C") && !collide(&e, "arms/A", "arms/C"));
    // siblings are 2 joints apart (up to the base, down again)
    let e = load("  - disabled_link_chain_level: 2");
    assert!(!collide(&e, "arms/A", "arms/B") && !collide(&e, "arms/A", "arms/C"));
    std::fs::remove_dir_all(&dir).ok();
}

/// A robot's self-collision switched off while running reaches every pair among its links
/// that the rules leave on, and back on restores the same pairs.
#[test]
fn self_collision_switches_the_robots_own_pairs() {
    let mut w = karakuri_sim::World::from_file(repo("tests/data/body/SR1/SR1.body")).unwrap();
    let off = w.set_self_collision("SR1", false).unwrap();
    let e = NativeEngine::new(&Scene::from_file(repo("tests/data/body/SR1/SR1.body")).unwrap()).unwrap();
    let c = &e.sim_model().collider;
    let n = c.shapes.len();
    let robot = |k: usize| e.bodies()[c.shapes[k].body].name.starts_with("SR1/");
    let own = (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))).filter(|&(i, j)| robot(i) && robot(j) && c.pair_mode(i, j).is_some()).count();
    assert!(own > 0 && off == own, "{off} pairs switched, {own} among SR1's links");
    w.run(0.2).unwrap();
    assert!(w.contacts().iter().all(|c| !(w.bodies()[c.body_a].name.starts_with("SR1/") && w.bodies()[c.body_b].name.starts_with("SR1/"))));
    assert_eq!(w.set_self_collision("SR1", true).unwrap(), own);
    assert!(w.set_self_collision("nobody", false).is_err());
}
