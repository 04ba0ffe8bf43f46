//! MJCF robots (`robots: [{mjcf: …}]`): [`load_mjcf_robot`] reads the file with
//! [`karakuri::io::mjcf::load_world`], and each geom becomes an [`UrdfCollision`] on the
//! karakuri joint that moves its body ([`mjcf_collisions`]), as a URDF robot's `<collision>`
//! elements do, so the compile step's robot pass takes an MJCF source beside URDF.
//!
//! | MJCF geom | shape |
//! | --- | --- |
//! | plane (world body only) | [`Geometry::Plane`] |
//! | sphere, capsule, cylinder, box | the same, sizes as MuJoCo's (radius, half length, half extents) |
//! | ellipsoid | [`Geometry::ConvexMesh`] of 62 points on it (a warning says so) |
//! | mesh | [`Geometry::ConvexMesh`] of its file's vertices, scaled (its convex hull) |
//! | hfield without data (flat) | a box under z = 0 of the hfield's extents, `size[3]` deep |
//! | hfield with data | refused: replace it by a mesh or a plane |
//! | `contype = conaffinity = 0` | left out (MuJoCo never collides it) |
//!
//! Not carried yet: `contype`/`conaffinity` filtering between colliding geoms, `<contact>`
//! pairs and excludes, friction and `solref`/`solimp` (they are in the `MjcfWorld`).

use karakuri::io::mjcf::{GeomShape, MjcfWorld};
use karakuri::spatial::{Se3, Vec3};

use super::geometry::{read_mesh, UrdfCollision, UrdfRobot};
use super::{scene_error, Geometry, MeshFile, Scene};
use crate::SimError;

/// Loads robot `ri` of the scene from its `mjcf` file (relative to the scene): the robot (its
/// model, its geoms' collision shapes unless `collide` is false, the loader's remarks) and the
/// whole [`MjcfWorld`] (joint properties, keyframes, option).
pub fn load_mjcf_robot(scene: &Scene, ri: usize) -> Result<(UrdfRobot, MjcfWorld), SimError> {
    let rs = &scene.robots[ri];
    let file = scene.source.as_ref().map_or("<scene>".into(), |p| p.display().to_string());
    let mjcf = rs.mjcf.as_deref().unwrap_or_default();
    let err = |reason: String| scene_error(&file, &format!("robots[{ri}].mjcf"), reason);
    let path = scene.base_dir().join(mjcf);
    let path = if path.exists() { path } else { std::path::PathBuf::from(mjcf) };
    let world = karakuri::io::mjcf::load_world_with(&path, &crate::mesh::MeshFiles).map_err(|e| err(format!("cannot load '{mjcf}': {e}")))?;
    let mut warnings: Vec<String> = world.warnings.clone();
    let collisions = if rs.collide { mjcf_collisions(&world, &mut warnings).map_err(err)? } else { vec![] };
    not_carried(&world, &mut warnings);
    let warnings = warnings.into_iter().map(|w| format!("robots[{ri}] ('{mjcf}'): {w}")).collect();
    let looks = karakuri::io::urdf::Geometry::default();
    Ok((UrdfRobot { model: world.model.clone(), collisions, warnings, looks }, world))
}


/// One warning for each part of the file the simulator does not carry yet, so nothing is dropped
/// silently: contact filtering (geoms whose `contype` / `conaffinity` are not 1 / 1,
/// `<contact>` pairs and excludes: the scene's contact rules apply instead; the sensors,
/// equalities and tendon parts that have no counterpart are named by the compile step's
/// `mjcf_constraints`). Reads `world`; appends to `warnings`.
fn not_carried(world: &MjcfWorld, warnings: &mut Vec<String>) {
    let filtered = world.geoms.iter().filter(|g| g.contype != 1 || g.conaffinity != 1).count();
    let (pairs, excludes) = (world.contact_pairs.len(), world.contact_excludes.len());
    if filtered + pairs + excludes > 0 {
        warnings.push(format!(
            "contact filtering not simulated yet ({filtered} geom(s) with contype/conaffinity other than 1/1, \
             {pairs} <pair>, {excludes} <exclude>): the scene's contact rules apply (docs/MJCF.md)"
        ));
    }
}

/// Points on an ellipsoid's surface: 6 latitudes × 10 longitudes and the poles.
fn ellipsoid_points(s: [f64; 3]) -> Vec<[f64; 3]> {
    let mut out = vec![[0.0, 0.0, s[2]], [0.0, 0.0, -s[2]]];
    for i in 1..=6 {
        let theta = std::f64::consts::PI * i as f64 / 7.0;
        for k in 0..10 {
            let phi = 2.0 * std::f64::consts::PI * k as f64 / 10.0;
            out.push([s[0] * theta.sin() * phi.cos(), s[1] * theta.sin() * phi.sin(), s[2] * theta.cos()]);
        }
    }
    out
}

/// The collision shapes of an MJCF world's geoms (errors and warnings name the geom's file
/// and line). Hulls of the same mesh file and scale are read once (`same_mesh_as`).
pub fn mjcf_collisions(world: &MjcfWorld, warnings: &mut Vec<String>) -> Result<Vec<UrdfCollision>, String> {
    let mut out: Vec<UrdfCollision> = vec![];
    let mut meshes: Vec<(std::path::PathBuf, Vec3, usize)> = vec![];
    for (i, g) in world.geoms.iter().enumerate() {
        if g.contype == 0 && g.conaffinity == 0 {
            continue;
        }
        let (joint, mut placement) = world.geom_placement(i);
        let s = g.size;
        let mut same_mesh_as = None;
        let geometry = match &g.shape {
            GeomShape::Plane if g.body == 0 => Geometry::Plane,
            GeomShape::Plane => return Err(format!("{}: a plane on a moving body is not supported: use a thin box", g.at)),
            GeomShape::Sphere => Geometry::Sphere { radius: s[0] },
            GeomShape::Capsule => Geometry::Capsule { radius: s[0], half_length: s[1] },
            GeomShape::Cylinder => Geometry::Cylinder { radius: s[0], half_length: s[1] },
            GeomShape::Box => Geometry::Box { half_extents: s },
            GeomShape::Ellipsoid => {
                warnings.push(format!("{}: ellipsoid collides as the convex hull of 62 points on it", g.at));
                Geometry::ConvexMesh { vertices: ellipsoid_points(s), file: None }
            }
            GeomShape::Mesh { file, scale, .. } => {
                if let Some((_, _, first)) = meshes.iter().find(|(f, sc, _)| f == file && sc == scale) {
                    same_mesh_as = Some(*first);
                    out[*first].geometry.clone()
                } else {
                    let sc = [scale.x, scale.y, scale.z];
                    let mesh = read_mesh(file, sc, true).map_err(|e| format!("{}: {e}", g.at))?;
                    meshes.push((file.clone(), *scale, out.len()));
                    let path = file.display().to_string();
                    Geometry::ConvexMesh { vertices: mesh.vertices, file: Some(MeshFile { path, scale: sc }) }
                }
            }
            GeomShape::HeightField { flat: true, extents, .. } => {
                placement = placement.compose(&Se3::from_translation(Vec3::new(0.0, 0.0, -extents[3] / 2.0)));
                Geometry::Box { half_extents: [extents[0], extents[1], extents[3] / 2.0] }
            }
            GeomShape::HeightField { name, .. } => {
                return Err(format!("{}: height field '{name}' has elevation data, which is not supported: use a mesh (a static trimesh) or a plane", g.at))
            }
        };
        let link = world.body_names[g.body].clone();
        out.push(UrdfCollision { link, parent_joint: joint.0, placement, geometry, same_mesh_as });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(name: &str) -> MjcfWorld {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/mjcf").join(name);
        karakuri::io::mjcf::load_world(path).unwrap()
    }

    #[test]
    fn hopper_and_quadruped_geoms_become_shapes() {
        let w = model("gymnasium/hopper.xml");
        let mut warnings = vec![];
        let c = mjcf_collisions(&w, &mut warnings).unwrap();
        assert_eq!(c.len(), w.geoms.len());
        assert!(matches!(c[0].geometry, Geometry::Plane) && c[0].parent_joint == 0);
        assert!(c[1..].iter().all(|c| matches!(c.geometry, Geometry::Capsule { .. }) && c.parent_joint > 0));
        // dm_control's quadruped: a flat hfield floor (a box under z = 0), ellipsoids
        let w = model("dm_control/quadruped.xml");
        let c = mjcf_collisions(&w, &mut warnings).unwrap();
        let floor = c.iter().find(|c| c.link == "world" && matches!(c.geometry, Geometry::Box { .. })).unwrap();
        assert!(floor.placement.translation.z < 0.0);
        assert!(warnings.iter().any(|w| w.contains("ellipsoid")));
    }
}
