//! MJCF files (`.xml`, `.mjcf`) for `karakuri inspect` and `karakuri view`, and the MJCF robots
//! of a replay page: the model with its geoms as drawable shapes, in the shape of a URDF's
//! geometry (every geom a visual; those that collide also a collision).

use std::path::Path;

use anyhow::{bail, Context, Result};
use karakuri::io::mjcf::{GeomShape, MjcfWorld};
use karakuri::io::urdf::{self, GeometryObject, Shape};
use karakuri::spatial::{Se3, Vec3};
use karakuri::Model;

/// Half extent drawn for an infinite MJCF plane (`size` 0).
const PLANE_HALF: f64 = 5.0;

/// A model file is MJCF by its extension (`.xml`, `.mjcf`); anything else is read as URDF.
pub fn is_mjcf(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("xml") || e.eq_ignore_ascii_case("mjcf"))
}

/// Loads an MJCF file: its model and geoms (see [`geometry`]); its warnings go to stderr as
/// `warning: ...`. `floating` is refused: an MJCF model says its free joints itself.
pub fn load(path: &Path, floating: bool) -> Result<(Model, urdf::Geometry)> {
    if floating {
        bail!("--floating adds a free joint to a URDF; an MJCF model has its own (<freejoint>)");
    }
    let world = karakuri::io::mjcf::load_world(path).with_context(|| format!("cannot load '{}'", path.display()))?;
    for w in &world.warnings {
        eprintln!("warning: {w}");
    }
    let geometry = geometry(&world);
    Ok((world.model, geometry))
}

/// The geoms of an MJCF world as URDF geometry objects on the joints that move them (an
/// ellipsoid is drawn as the sphere of its largest semi-axis, an infinite plane 10 m wide, a
/// height field as the box of its extents).
pub fn geometry(world: &MjcfWorld) -> urdf::Geometry {
    let mut out = urdf::Geometry::default();
    for (i, g) in world.geoms.iter().enumerate() {
        let (joint, mut placement) = world.geom_placement(i);
        let s = g.size;
        let shape = match &g.shape {
            GeomShape::Plane => {
                let half = |x: f64| if x > 0.0 { x } else { PLANE_HALF };
                placement = placement.compose(&Se3::from_translation(Vec3::new(0.0, 0.0, -0.005)));
                Shape::Box { size: Vec3::new(2.0 * half(s[0]), 2.0 * half(s[1]), 0.01) }
            }
            GeomShape::Sphere => Shape::Sphere { radius: s[0] },
            GeomShape::Capsule => Shape::Capsule { radius: s[0], length: 2.0 * s[1] },
            GeomShape::Cylinder => Shape::Cylinder { radius: s[0], length: 2.0 * s[1] },
            GeomShape::Box => Shape::Box { size: Vec3::new(2.0 * s[0], 2.0 * s[1], 2.0 * s[2]) },
            GeomShape::Ellipsoid => Shape::Sphere { radius: s[0].max(s[1]).max(s[2]) },
            GeomShape::Mesh { file, scale, .. } => Shape::Mesh {
                filename: file.display().to_string(),
                resolved: file.exists().then(|| file.clone()),
                tried: vec![file.clone()],
                scale: *scale,
            },
            GeomShape::HeightField { extents: e, .. } => {
                placement = placement.compose(&Se3::from_translation(Vec3::new(0.0, 0.0, (e[2] - e[3]) / 2.0)));
                Shape::Box { size: Vec3::new(2.0 * e[0], 2.0 * e[1], e[2] + e[3]) }
            }
        };
        let link = world.body_names[g.body].clone();
        let name = g.name.clone().unwrap_or_else(|| format!("{link}_geom{i}"));
        let object = GeometryObject { name, link, parent_joint: joint, placement, shape, material_rgba: None };
        if g.contype != 0 || g.conaffinity != 0 {
            out.collisions.push(object.clone());
        }
        out.visuals.push(object);
    }
    out.warnings = world.warnings.clone();
    out
}
