//! Helpers shared by the simulator's test files (each file uses some of them).
#![allow(dead_code)]

use std::path::PathBuf;

/// A validation scene: from `../shared/validation/scenes` when present, else the repository's
/// copy in `tests/scenes`.
pub fn scene_path(name: &str) -> PathBuf {
    let shared = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/validation/scenes"
    ))
    .join(name);
    if shared.exists() {
        return shared;
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/scenes")).join(name)
}

/// The error a scene (YAML or JSON text, named `file` in messages) is refused with, at load
/// or when the world is built; panics when it is accepted.
pub fn error_of(text: &str, file: &str) -> String {
    match karakuri_sim::Scene::from_str(text, file).and_then(karakuri_sim::World::new) {
        Ok(_) => panic!("scene accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// A YAML scene: `extra` top-level keys, material `m` (friction 0.5, no restitution), a ground
/// plane and `bodies` (YAML list items); gravity −9.81 z, dt 1 ms, 1 s.
pub fn ground_and(extra: &str, bodies: &str) -> String {
    format!(
        r#"
name: t
world: {{gravity: [0, 0, -9.81], dt: 0.001, duration: 1.0}}
materials:
  m: {{static_friction: 0.5, dynamic_friction: 0.5, restitution: 0.0}}
{extra}
bodies:
  - name: ground
    shapes: [{{type: plane, material: m}}]
{bodies}"#
    )
}
