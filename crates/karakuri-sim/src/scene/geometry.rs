//! The geometry step: mesh files found and read for collision shapes, the scene's own
//! (`convex_mesh` / `trimesh` with a `file`) and a URDF robot's `<collision>` meshes alike,
//! through one function ([`read_mesh`]: resolve, read, scale, check).
//!
//! * [`load_scene_meshes`] (at scene load) reads every scene shape's `file` into its vertices
//!   and triangles; errors name `bodies[i].shapes[j].file`.
//! * [`load_robot`] (when an engine builds a robot) reads the URDF (a file, or one built into
//!   the binary, [`super::BUILTIN_URDFS`]) and turns its `<collision>` elements into
//!   [`Geometry`]s placed on joints, convex hulls read once per mesh file and scale.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use karakuri::io::urdf;
use karakuri::spatial::Se3;
use karakuri::Model;

use super::{builtin_urdf, scene_error, Geometry, RobotCollision, RobotRoot, Scene, ShapeSpec};
use crate::mesh::MeshData;
use crate::SimError;

/// Reads a mesh file for a collision shape: resolved, scaled and checked. `hull`: the points
/// must span a volume (a convex hull); otherwise the file must have triangles.
pub fn read_mesh(path: &Path, scale: [f64; 3], hull: bool) -> Result<MeshData, String> {
    let mesh = crate::mesh::load(path, scale)?;
    if hull {
        crate::mesh::check_hull_points(&mesh.vertices).map_err(|e| format!("'{}': {e}", path.display()))?;
    } else if mesh.triangles.is_empty() {
        return Err(format!("'{}': the mesh has no triangles", path.display()));
    }
    Ok(mesh)
}

/// Reads the mesh file of every scene shape that names one (bodies' and robots' extra shapes).
pub fn load_scene_meshes(scene: &mut Scene, file: &str) -> Result<(), SimError> {
    let base = scene.base_dir();
    let load = |at: String, s: &mut ShapeSpec| -> Result<(), SimError> {
        let hull = matches!(s.geometry, Geometry::ConvexMesh { .. });
        let (Geometry::ConvexMesh { file: Some(f), .. } | Geometry::TriMesh { file: Some(f), .. }) = &s.geometry else {
            return Ok(());
        };
        let at = format!("{at}.file");
        let resolved = crate::mesh::resolve(&base, &f.path);
        if !resolved.is_file() {
            let reason = format!("mesh file '{}' not found (tried '{}')", f.path, resolved.display());
            return Err(scene_error(file, &at, reason));
        }
        let mesh = read_mesh(&resolved, f.scale, hull).map_err(|e| scene_error(file, &at, e))?;
        match &mut s.geometry {
            Geometry::ConvexMesh { vertices, .. } => *vertices = mesh.vertices,
            Geometry::TriMesh { vertices, triangles, .. } => (*vertices, *triangles) = (mesh.vertices, mesh.triangles),
            _ => {}
        }
        Ok(())
    };
    for (bi, b) in scene.bodies.iter_mut().enumerate() {
        for (si, s) in b.shapes.iter_mut().enumerate() {
            load(format!("bodies[{bi}].shapes[{si}]"), s)?;
        }
    }
    for (ri, r) in scene.robots.iter_mut().enumerate() {
        for (si, (_, s)) in r.shapes.iter_mut().enumerate() {
            load(format!("robots[{ri}].shapes[{si}]"), s)?;
        }
    }
    Ok(())
}

/// A URDF robot's model and collision geometry.
pub struct UrdfRobot {
    /// The robot's own model (its root as `robots[].root` says).
    pub model: Model,
    /// Its collision shapes (as `robots[].collision` selects; none when `collide` is false).
    pub collisions: Vec<UrdfCollision>,
    /// The loader's remarks, each prefixed with the robot (`robots[i] ('file'): ...`).
    pub warnings: Vec<String>,
    /// Its URDF's `<visual>` and `<collision>` elements as read (mesh files located, not
    /// read): what a viewer draws (empty for other sources).
    pub looks: urdf::Geometry,
}

/// One `<collision>` element of a URDF robot.
pub struct UrdfCollision {
    /// The link it belongs to.
    pub link: String,
    /// The robot model's joint that moves it (0: fixed to the robot's root).
    pub parent_joint: usize,
    /// Its placement in that joint's frame.
    pub placement: Se3,
    /// The shape; a mesh is the [`Geometry::ConvexMesh`] of its file's vertices.
    pub geometry: Geometry,
    /// The index of the earlier element with the same mesh file and scale, if any (engines reuse
    /// its hull).
    pub same_mesh_as: Option<usize>,
}

/// Loads robot `ri` of the scene: its URDF (path relative to the scene, or built in), its
/// `package_dirs` (then the scene's directory) for `package://` meshes, and its collision meshes.
pub fn load_robot(scene: &Scene, ri: usize) -> Result<UrdfRobot, SimError> {
    let rs = &scene.robots[ri];
    let file = scene.source.as_ref().map_or("<scene>".into(), |p| p.display().to_string());
    let err = |path: String, reason: String| scene_error(&file, &path, reason);
    let base = scene.base_dir();
    let opts = urdf::LoadOptions {
        root: match rs.root {
            RobotRoot::Floating => urdf::Root::FreeFlyer,
            RobotRoot::Fixed => urdf::Root::Fixed,
        },
        package_dirs: rs.package_dirs.iter().map(|d| crate::mesh::resolve(&base, d)).chain([base.clone()]).collect(),
    };
    let loaded = match builtin_urdf(&rs.urdf) {
        Some(xml) => urdf::parse_str(xml, &rs.urdf, &opts),
        None => {
            let path = base.join(&rs.urdf);
            let path = if path.exists() { path } else { PathBuf::from(&rs.urdf) };
            urdf::load_with(&path, &opts)
        }
    };
    let (model, geom) =
        loaded.map_err(|e| err(format!("robots[{ri}].urdf"), format!("cannot load '{}': {e}", rs.urdf)))?;
    let warnings = geom.warnings.iter().map(|w| format!("robots[{ri}] ('{}'): {w}", rs.urdf)).collect();
    let mut collisions = Vec::new();
    if !rs.collide || rs.collision == RobotCollision::None {
        return Ok(UrdfRobot { model, collisions, warnings, looks: geom });
    }
    let mut meshes: BTreeMap<(PathBuf, [u64; 3]), usize> = BTreeMap::new();
    for g in &geom.collisions {
        let geometry = match &g.shape {
            urdf::Shape::Box { size } => Geometry::Box { half_extents: [size.x / 2.0, size.y / 2.0, size.z / 2.0] },
            urdf::Shape::Sphere { radius } => Geometry::Sphere { radius: *radius },
            urdf::Shape::Cylinder { radius, length } => Geometry::Cylinder { radius: *radius, half_length: length / 2.0 },
            urdf::Shape::Capsule { radius, length } => Geometry::Capsule { radius: *radius, half_length: length / 2.0 },
            urdf::Shape::Mesh { .. } if rs.collision == RobotCollision::Primitives => continue,
            urdf::Shape::Mesh { filename, resolved, tried, scale } => {
                let at = || format!("robots[{ri}].collision");
                let what = || format!("link '{}': collision mesh '{filename}'", g.link);
                let Some(path) = resolved else {
                    let tried = if tried.is_empty() {
                        "nothing (only package://, file:// and plain paths are looked up)".to_string()
                    } else {
                        tried.iter().map(|p| format!("'{}'", p.display())).collect::<Vec<_>>().join(", ")
                    };
                    let reason = format!(
                        "{} not found; tried {tried} (add the directory holding the package to robots[{ri}].package_dirs, \
                         or set robots[{ri}].collision to primitives or none)",
                        what()
                    );
                    return Err(err(at(), reason));
                };
                let key = (path.clone(), [scale.x.to_bits(), scale.y.to_bits(), scale.z.to_bits()]);
                if let Some(&first) = meshes.get(&key) {
                    collisions.push(UrdfCollision {
                        link: g.link.clone(),
                        parent_joint: g.parent_joint.0,
                        placement: g.placement,
                        geometry: collisions[first].geometry.clone(),
                        same_mesh_as: Some(first),
                    });
                    continue;
                }
                let mesh = read_mesh(path, [scale.x, scale.y, scale.z], true)
                    .map_err(|e| err(at(), format!("{}: {e}", what())))?;
                meshes.insert(key, collisions.len());
                Geometry::ConvexMesh { vertices: mesh.vertices, file: None }
            }
        };
        collisions.push(UrdfCollision {
            link: g.link.clone(),
            parent_joint: g.parent_joint.0,
            placement: g.placement,
            geometry,
            same_mesh_as: None,
        });
    }
    Ok(UrdfRobot { model, collisions, warnings, looks: geom })
}
