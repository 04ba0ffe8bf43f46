//! The bundled demo robot's meshes: Solo-12's STL files from example-robot-data
//! (`assets/example-robot-data`, BSD), inside the binary and written once to a directory of the
//! system's temporary directory that the demo gives as its robot's package directory, so the
//! demo's page draws the real robot from wherever the binary runs. The meshes are looks only:
//! the demo collides through its own feet spheres and base box.

use std::path::PathBuf;

/// `(path below the package directory, bytes)` of one bundled file.
macro_rules! asset {
    ($path:literal) => {
        ($path, include_bytes!(concat!("../../assets/example-robot-data/", $path)).as_slice())
    };
}

/// The files, by their path inside the `example-robot-data` package.
const FILES: &[(&str, &[u8])] = &[
    asset!("robots/solo_description/meshes/stl/solo12/solo12_hip_fe_fl.stl"),
    asset!("robots/solo_description/meshes/stl/solo12/solo12_hip_fe_fr.stl"),
    asset!("robots/solo_description/meshes/stl/solo12/solo12_hip_fe_hl.stl"),
    asset!("robots/solo_description/meshes/stl/solo12/solo12_hip_fe_hr.stl"),
    asset!("robots/solo_description/meshes/stl/solo12/solo_12_base.stl"),
    asset!("robots/solo_description/meshes/stl/with_foot/solo_foot.stl"),
    asset!("robots/solo_description/meshes/stl/with_foot/solo_lower_leg_left_side.stl"),
    asset!("robots/solo_description/meshes/stl/with_foot/solo_lower_leg_right_side.stl"),
    asset!("robots/solo_description/meshes/stl/with_foot/solo_upper_leg_left_side.stl"),
    asset!("robots/solo_description/meshes/stl/with_foot/solo_upper_leg_right_side.stl"),
];

/// The directory holding the `example-robot-data` package with the demo's meshes, written on
/// first use (each file through a temporary name and a rename, so that concurrent runs never
/// read half a file); `None` when it cannot be written (the demo then runs without meshes and
/// says so).
pub fn package_dir() -> Option<PathBuf> {
    let dir = std::env::temp_dir().join(concat!("karakuri-", env!("CARGO_PKG_VERSION"), "-demo"));
    for (rel, bytes) in FILES {
        let path = dir.join("example-robot-data").join(rel);
        if std::fs::metadata(&path).is_ok_and(|m| m.len() == bytes.len() as u64) {
            continue;
        }
        std::fs::create_dir_all(path.parent()?).ok()?;
        let partial = path.with_extension(format!("partial-{}", std::process::id()));
        std::fs::write(&partial, bytes).ok()?;
        std::fs::rename(&partial, &path).ok()?;
    }
    Some(dir)
}
