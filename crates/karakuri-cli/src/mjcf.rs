//! MJCF files (`.xml`, `.mjcf`) for `karakuri inspect` and `karakuri view`, and the MJCF robots
//! of a replay page: the model with its geoms as drawable shapes, in the shape of a URDF's
//! geometry (every geom a visual; those that collide also a collision).

use std::path::Path;

use anyhow::{bail, Context, Result};
use karakuri::io::urdf;
use karakuri::Model;

/// A model file is MJCF by its extension (`.xml`, `.mjcf`); anything else is read as URDF.
pub fn is_mjcf(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("xml") || e.eq_ignore_ascii_case("mjcf"))
}

/// Loads an MJCF file (meshes read for their inertia where a body needs it): its model and
/// geoms (see [`karakuri_sim::scene::mjcf_geometry::mjcf_looks`]); its warnings go to stderr as
/// `warning: ...`. `floating` is refused: an MJCF model says its free joints itself.
pub fn load(path: &Path, floating: bool) -> Result<(Model, urdf::Geometry)> {
    if floating {
        bail!("--floating adds a free joint to a URDF; an MJCF model has its own (<freejoint>)");
    }
    let world = karakuri::io::mjcf::load_world_with(path, &karakuri_sim::mesh::MeshFiles).with_context(|| format!("cannot load '{}'", path.display()))?;
    for w in &world.warnings {
        eprintln!("warning: {w}");
    }
    let geometry = karakuri_sim::scene::mjcf_geometry::mjcf_looks(&world);
    Ok((world.model, geometry))
}
