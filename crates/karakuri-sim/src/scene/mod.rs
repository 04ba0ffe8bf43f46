//! Scene files (`docs/SCENE_FORMAT.md`): the world, the engine, the contact model, materials,
//! bodies, robots by reference and loop constraints, read from JSON or YAML and written back.
//!
//! A scene is read in three steps:
//!
//! 1. **Types** ([`types`], serde): the file's value tree becomes the typed [`Scene`]; a key
//!    the type does not have is an error (`deny_unknown_fields`), a key left out takes its
//!    default, a wrong type or unknown kind names the path inside the file
//!    (`bodies[3].shapes[0].radius: invalid type: ...`, through `serde_path_to_error`).
//! 2. **Checks** ([`validate`]): ranges, units, names and references, with the same paths.
//! 3. **Geometry** ([`geometry`]): mesh files are found and read, for scene shapes here and for
//!    URDF collision meshes when an engine loads a robot, by the same functions.
//!
//! Writing is serialising the same types ([`Scene::to_value`]), so every parameter the
//! simulation uses is written, defaults included, and a saved scene reloads bit for bit.

mod file;
pub mod geometry;
pub mod body_geometry;
pub mod mjcf_contacts;
pub mod mjcf_geometry;
pub mod table;
pub mod types;
pub mod validate;

use serde_json::Value;

pub use types::*;

use crate::SimError;

/// The shortest time step a scene may ask for (s): below it the step count of any useful run
/// exceeds [`validate::MAX_STEPS`], and rates such as `γ / dt` leave the floating-point range.
pub const MIN_DT: f64 = 1e-9;

/// The largest coordinate or size a scene may give (m): 1000 km. Beyond it f64 keeps fewer than
/// the ~1e-10 m of resolution contacts need, and energies such as m g z leave the range.
pub const MAX_EXTENT: f64 = 1e6;

/// The largest gravity a scene may give (m/s², about 1000 g).
pub const MAX_GRAVITY: f64 = 1e4;

/// URDF files inside the binary, by the name a scene's `robots[].urdf` gives them: the bundled
/// demo's robot, so that the demo runs from a copied binary.
pub const BUILTIN_URDFS: &[(&str, &str)] = &[("builtin:solo12.urdf", include_str!("../../../../tests/data/solo12.urdf"))];

/// The text of a built-in URDF (`builtin:<name>`), `None` for any other path.
pub fn builtin_urdf(path: &str) -> Option<&'static str> {
    BUILTIN_URDFS.iter().find(|(name, _)| *name == path).map(|(_, xml)| *xml)
}

/// A scene error at `path` inside `file`.
pub(crate) fn scene_error(file: &str, path: &str, reason: impl Into<String>) -> SimError {
    SimError::Scene { file: file.into(), path: path.into(), reason: reason.into() }
}

/// The value as written, cut to 40 characters (characters, not bytes: a cut inside a multi-byte
/// character would panic).
pub(crate) fn short(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(40) {
        Some((end, _)) => format!("{}...", &s[..end]),
        None => s,
    }
}
