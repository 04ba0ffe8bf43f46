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
//! | hfield with data (world body) | [`Geometry::TriMesh`]: the closed solid of its grid ([`hfield_solid`]) |
//! | `contype = conaffinity = 0` | left out (MuJoCo never collides it), unless a `<pair>` names it |
//!
//! Which of a robot's geoms touch is MuJoCo's rule ([`MjcfContactRules`]): `contype` /
//! `conaffinity` bits, bodies welded together or parent and child (unless `<flag
//! filterparent="disable">`), `<exclude>`, and `<pair>`s (always tested, their own friction).
//! Friction is the sliding coefficient (`friction[0]`) of the geom of higher `priority`, else
//! the larger; `condim` 1 is frictionless; `margin` sets where contacts are made (the
//! collider's MJCF margins). `solref`/`solimp`, `gap` (the `margin − gap` stand-off), torsional
//! and rolling friction are not simulated (a warning counts the geoms that set them).

use karakuri::io::mjcf::{GeomShape, HeightGrid, Integrator, MjcfWorld};
use karakuri::io::urdf::{self, GeometryObject, Shape};
use karakuri::spatial::{Se3, Vec3};

use super::geometry::{read_mesh, UrdfCollision, UrdfRobot};
use super::mjcf_contacts::{kept_geoms, MjcfContactRules};
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
    let collide = rs.collide && !world.option.contact_disabled;
    let collisions = if collide { mjcf_collisions(&world, &mut warnings).map_err(err)? } else { vec![] };
    let kept = if collide { kept_geoms(&world) } else { vec![] };
    let rules = MjcfContactRules::of(&world, &kept);
    not_carried(&world, &mut warnings);
    let warnings = warnings.into_iter().map(|w| format!("robots[{ri}] ('{mjcf}'): {w}")).collect();
    let looks = mjcf_looks(&world);
    Ok((UrdfRobot { model: world.model.clone(), collisions, warnings, looks, mjcf: Some(rules) }, world))
}

/// One warning for each part of the file the simulator does not carry yet, so nothing is dropped
/// silently: contact softness and the friction beyond sliding (geoms and pairs whose
/// `solref`/`solimp` are not MuJoCo's defaults, `condim` 4 or 6: hard
/// contacts with sliding friction instead), the options karakuri does not honour (the
/// sensors, equalities and tendon parts without a counterpart are named by the compile step's
/// `mjcf_constraints`).
/// Reads `world`; appends to `warnings`.
fn not_carried(world: &MjcfWorld, warnings: &mut Vec<String>) {
    const SOLREF: [f64; 2] = [0.02, 1.0];
    const SOLIMP: [f64; 5] = [0.9, 0.95, 0.001, 0.5, 2.0];
    // the geoms that collide (a geom of contype = conaffinity = 0 in a <pair> is counted there)
    let geoms = || world.geoms.iter().filter(|g| g.contype != 0 || g.conaffinity != 0);
    let soft = geoms().filter(|g| g.solref != SOLREF || g.solimp != SOLIMP).count()
        + world.contact_pairs.iter().filter(|p| p.solref != SOLREF || p.solimp != SOLIMP).count();
    let standoff = geoms().filter(|g| g.margin - g.gap > 0.0).count() + world.contact_pairs.iter().filter(|p| p.margin - p.gap > 0.0).count();
    let condim = geoms().filter(|g| g.condim > 3).count() + world.contact_pairs.iter().filter(|p| p.condim > 3).count();
    if soft + standoff + condim > 0 {
        warnings.push(format!(
            "contacts are hard with sliding friction: {soft} geom(s)/pair(s) with their own solref/solimp, \
             {standoff} acting at margin - gap > 0 (they act at touching), {condim} with condim 4 or 6 (torsional/rolling friction) not simulated (docs/MJCF.md)"
        ));
    }
    let o = &world.option;
    let integrator = match o.integrator {
        Integrator::Euler => None,
        Integrator::Rk4 => Some("RK4: a lone .xml scene steps `auto` (RK4 in a smooth world, semi-implicit Euler with contacts, limits, actuators, springs or dampers)"),
        Integrator::Implicit | Integrator::ImplicitFast => {
            Some("implicit/implicitfast: stepped semi-implicit Euler, joint damping, springs and position servos implicit")
        }
    };
    if let Some(i) = integrator {
        warnings.push(format!("<option integrator> {i} (docs/MJCF.md)"));
    }
    if o.impratio != 1.0 {
        warnings.push(format!("<option impratio=\"{}\"> not simulated: hard contacts have no friction-to-normal impedance ratio", o.impratio));
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

/// A height field with data as a closed triangle mesh in the geom's frame, MuJoCo's solid: the
/// grid's surface (each cell split along its diagonal from (r, c) to (r + 1, c + 1), as
/// `mjc_ConvexHField`'s prisms), four walls down to `−extents[3]` and the bottom. Triangles
/// face outward.
pub fn hfield_solid(extents: &[f64; 4], grid: &HeightGrid) -> (Vec<[f64; 3]>, Vec<[u32; 3]>) {
    let (nr, nc) = (grid.nrow, grid.ncol);
    let [sx, sy, sz, base] = *extents;
    let mut v: Vec<[f64; 3]> = Vec::with_capacity(nr * nc + 4);
    for r in 0..nr {
        for c in 0..nc {
            let (x, y) = (sx * (2.0 * c as f64 / (nc - 1) as f64 - 1.0), sy * (2.0 * r as f64 / (nr - 1) as f64 - 1.0));
            v.push([x, y, f64::from(grid.at(r, c)) * sz]);
        }
    }
    let top = |r: usize, c: usize| (r * nc + c) as u32;
    let b = v.len() as u32;
    v.extend([[-sx, -sy, -base], [sx, -sy, -base], [sx, sy, -base], [-sx, sy, -base]]);
    let mut t = Vec::with_capacity(2 * (nr - 1) * (nc - 1) + 2 * (nr + nc) + 2);
    for r in 0..nr - 1 {
        for c in 0..nc - 1 {
            t.push([top(r, c), top(r, c + 1), top(r + 1, c + 1)]);
            t.push([top(r, c), top(r + 1, c + 1), top(r + 1, c)]);
        }
    }
    // each wall a fan from one bottom corner over its edge of the grid, closed by the other corner
    let walls: [(Vec<u32>, u32, u32); 4] = [
        ((0..nc).map(|c| top(0, c)).collect(), b, b + 1),
        ((0..nr).map(|r| top(r, nc - 1)).collect(), b + 1, b + 2),
        ((0..nc).rev().map(|c| top(nr - 1, c)).collect(), b + 2, b + 3),
        ((0..nr).rev().map(|r| top(r, 0)).collect(), b + 3, b),
    ];
    for (edge, first, last) in walls {
        for w in edge.windows(2) {
            t.push([first, w[1], w[0]]);
        }
        t.push([first, last, edge[edge.len() - 1]]);
    }
    t.extend([[b, b + 2, b + 1], [b, b + 3, b + 2]]);
    (v, t)
}

/// The collision shapes of an MJCF world's geoms (errors and warnings name the geom's file
/// and line). Hulls of the same mesh file and scale are read once (`same_mesh_as`).
pub fn mjcf_collisions(world: &MjcfWorld, warnings: &mut Vec<String>) -> Result<Vec<UrdfCollision>, String> {
    let mut out: Vec<UrdfCollision> = vec![];
    let mut meshes: Vec<(std::path::PathBuf, Vec3, usize)> = vec![];
    for i in kept_geoms(world) {
        let g = &world.geoms[i];
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
            GeomShape::HeightField { grid: None, extents, .. } => {
                placement = placement.compose(&Se3::from_translation(Vec3::new(0.0, 0.0, -extents[3] / 2.0)));
                Geometry::Box { half_extents: [extents[0], extents[1], extents[3] / 2.0] }
            }
            GeomShape::HeightField { grid: Some(grid), extents, name } => {
                if joint.0 != 0 {
                    return Err(format!("{}: height field '{name}' with elevation data on a moving body is not supported (triangle meshes are static)", g.at));
                }
                let (vertices, triangles) = hfield_solid(extents, grid);
                Geometry::TriMesh { vertices, triangles, file: None }
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

/// Half extent drawn for an infinite MJCF plane (`size` 0).
const PLANE_HALF: f64 = 5.0;

/// What a viewer draws of an MJCF robot: its geoms as URDF geometry objects on the joints that move them (an
/// ellipsoid is drawn as the sphere of its largest semi-axis, an infinite plane 10 m wide, a
/// height field as the box of its extents).
pub fn mjcf_looks(world: &MjcfWorld) -> urdf::Geometry {
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
