//! Where an installed example-robot-data keeps its `robots/` directory, for the tests that use
//! the real robots: `urdf_example_robot_data.rs` here and, by `#[path]`, the CLI's
//! `view_meshes.rs`. `EXAMPLE_ROBOT_DATA_DIR` wins; else the `cmeel.prefix` of Python's site
//! packages (the `example-robot-data` wheel), else `/opt/openrobots` (robotpkg).

use std::path::{Path, PathBuf};

/// The installed example-robot-data's `robots/` directory, if any.
pub fn robots_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("EXAMPLE_ROBOT_DATA_DIR") {
        return Some(PathBuf::from(d)).filter(|d| d.is_dir());
    }
    let out = std::process::Command::new("python3")
        .args(["-c", "import site; print('\\n'.join(site.getsitepackages()))"])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|sp| Path::new(sp).join("cmeel.prefix/share/example-robot-data/robots"))
        .chain([PathBuf::from("/opt/openrobots/share/example-robot-data/robots")])
        .find(|d| d.is_dir())
}
