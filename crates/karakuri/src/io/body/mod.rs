//! Choreonoid's `.body` format (`format: ChoreonoidBody`, versions 1.x and 2.0) -> [`Model`]
//! ([`load`]) and the [`BodyModel`] the simulator reads (shapes, devices, standard pose, extra
//! joints, collision rules: [`load_body`]). What is read and what is refused: docs/BODY.md.
//!
//! YAML with anchors and aliases is read through saphyr-parser's events, each node keeping
//! its line, so every error names file, line and key ([`BodyError`]).

mod build;
mod elements;
mod links;
mod types;
mod values;
mod yaml;

use std::path::Path;



pub use types::{BodyDevice, BodyError, BodyGeometry, BodyJointKind, BodyLink, BodyModel, BodyShape, CollisionRules, DeviceKind, ExtraJoint, ExtraJointKind};

use crate::Model;

/// Reads a `.body` file and returns its dynamics model.
pub fn load(path: impl AsRef<Path>) -> Result<Model, BodyError> {
    load_body(path).map(|b| b.model)
}

/// Reads a `.body` file with everything beside the model.
pub fn load_body(path: impl AsRef<Path>) -> Result<BodyModel, BodyError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|e| BodyError::new(&path.display().to_string(), 0, "", format!("cannot read: {e}")))?;
    parse_str(&text, path)
}

/// Reads `.body` text; `source` names it in errors, and resources and sub-bodies are found
/// relative to its directory.
pub fn parse_str(text: &str, source: impl AsRef<Path>) -> Result<BodyModel, BodyError> {
    let source = source.as_ref();
    let mut warnings = vec![];
    let file = links::read_text(text, source, vec![source.to_path_buf()], &mut warnings)?;
    build::build(file, warnings)
}
