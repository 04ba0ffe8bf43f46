//! Helpers shared by the simulator's test files.

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
