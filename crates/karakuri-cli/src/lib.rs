//! The `karakuri` command's subcommands, as a library so benchmarks and tests can reuse them.

pub mod bench;
pub mod inspect;
pub mod mjcf;
pub mod simulate;
pub mod verify;
pub mod viewer;

use karakuri::io::urdf::{self, LoadOptions, Root};
use karakuri::Model;
use std::path::Path;

/// Loads a URDF for a subcommand and prints its warnings (inertias repaired or accepted, mimic
/// joints, mesh files not found, ...) on stderr as `warning: file: ...`.
pub fn load_urdf(path: &Path, root: Root) -> Result<Model, urdf::UrdfError> {
    let (model, geometry) = urdf::load_with(path, &LoadOptions { root, ..LoadOptions::default() })?;
    let file = path.display().to_string();
    for w in &geometry.warnings {
        if w.starts_with(&file) {
            eprintln!("warning: {w}");
        } else {
            eprintln!("warning: {file}: {w}");
        }
    }
    Ok(model)
}

/// Loads a Choreonoid `.body` file for a subcommand (its root joint is the file's: `--floating`
/// does not apply) and prints its warnings on stderr as `warning: ...`.
pub fn load_body(path: &Path) -> Result<Model, karakuri::io::body::BodyError> {
    let body = karakuri::io::body::load_body(path)?;
    for w in &body.warnings {
        eprintln!("warning: {w}");
    }
    Ok(body.model)
}

/// The repository's README, so that its Rust example compiles as a doctest (`cargo test --doc`).
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctest;
