//! Choreonoid `.body` robots (`robots: [{body: …}]`, or a `.body` file alone as a scene):
//! [`load_body_robot`] reads the file with [`karakuri::io::body::load_body`], and each shape
//! that collides becomes an [`UrdfCollision`] on the karakuri joint that moves its link, as a
//! URDF robot's `<collision>` elements do.
//!
//! | `.body` geometry | shape |
//! | --- | --- |
//! | Box, Sphere | the same (half extents, radius) |
//! | Cylinder, Capsule (along y in Choreonoid) | the same, turned onto the shape's z |
//! | Cone (along y) | a cone, turned onto the shape's z |
//! | Extrusion | the convex hull of its cross-sections along the spine |
//! | STL / OBJ resource | the convex hull of its file's vertices, scaled |
//! | DAE resource | left out (not read), a warning says so |
//! | VRML resource | not read; `Visual` ones are drawn as the collision shapes (said once) |

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use karakuri::io::body::{BodyGeometry, BodyModel, DeviceKind};
use karakuri::spatial::{rotation_about, Se3, Vec3};

use super::geometry::{read_mesh, UrdfCollision, UrdfRobot};
use super::{scene_error, Geometry, MeshFile, Scene};
use crate::SimError;

/// Loads robot `ri` of the scene from its `body` file (relative to the scene): the robot (its
/// model, its collision shapes unless `collide` is false, the loader's remarks) and the whole
/// [`BodyModel`] (standard pose, devices, extra joints).
pub fn load_body_robot(scene: &Scene, ri: usize) -> Result<(UrdfRobot, BodyModel), SimError> {
    let rs = &scene.robots[ri];
    let file = scene.source.as_ref().map_or("<scene>".into(), |p| p.display().to_string());
    let rel = rs.body.as_deref().unwrap_or_default();
    let err = |reason: String| scene_error(&file, &format!("robots[{ri}].body"), reason);
    let path = scene.base_dir().join(rel);
    let path = if path.exists() { path } else { PathBuf::from(rel) };
    let body = karakuri::io::body::load_body(&path).map_err(|e| err(format!("cannot load '{rel}': {e}")))?;
    let mut warnings = body.warnings.clone();
    let collisions = if rs.collide { body_collisions(&body, &mut warnings).map_err(err)? } else { vec![] };
    not_simulated(&body, &mut warnings);
    let warnings = warnings.into_iter().map(|w| format!("robots[{ri}] ('{rel}'): {w}")).collect();
    let looks = body_looks(&body);
    Ok((UrdfRobot { model: body.model.clone(), collisions, warnings, looks, mjcf: None }, body))
}

/// A scene of one `.body` file alone: the body as robot `name` (the file's stem) on a floor
/// plane at z = 0, default gravity and step, a 2 s run. A free root is raised or lowered so
/// that its lowest collision shape touches the floor at the start (standard pose): the file's
/// root height is where it stands in Choreonoid's own project files, which may differ.
pub fn scene_of_body(path: &Path) -> Result<Scene, SimError> {
    let file = path.display().to_string();
    let body = karakuri::io::body::load_body(path).map_err(|e| scene_error(&file, "", format!("cannot load it as a Choreonoid body ({e})")))?;
    let mut lift = 0.0;
    if body.links.first().is_some_and(|l| l.kind == karakuri::io::body::BodyJointKind::Free) {
        let collisions = body_collisions(&body, &mut vec![]).map_err(|e| scene_error(&file, "", e))?;
        if let Some(z) = lowest_point(&body, &collisions) {
            lift = -z;
        }
    }
    let name = path.file_stem().map_or("robot".into(), |s| s.to_string_lossy().into_owned());
    let rel = path.file_name().map_or(file.clone(), |s| s.to_string_lossy().into_owned());
    let value = serde_json::json!({
        "name": name,
        "world": { "duration": 2.0 },
        "bodies": [{ "name": "floor", "shapes": [{ "type": "plane" }] }],
        "robots": [{ "name": name, "body": rel, "pose": { "position": [0.0, 0.0, lift] } }],
    });
    let mut scene = Scene::from_value(&value, &file)?;
    scene.source = Some(path.to_path_buf());
    Ok(scene)
}

/// The lowest world z of the collision shapes with the root at its file placement and the
/// joints at the standard pose (else their initial values); `None` without shapes.
fn lowest_point(body: &BodyModel, collisions: &[UrdfCollision]) -> Option<f64> {
    let m = &body.model;
    let q = body.start_configuration();
    let mut data = karakuri::Data::new(m);
    karakuri::algorithms::forward_kinematics(m, &mut data, &q);
    let o_m_i = data.joint_placements().ok()?;
    let mut low: Option<f64> = None;
    for c in collisions {
        let w = o_m_i[c.parent_joint].compose(&c.placement);
        let r = w.rotation;
        let zc = w.translation.z;
        let z = match &c.geometry {
            Geometry::Box { half_extents: h } => zc - (0..3).map(|k| r[(2, k)].abs() * h[k]).sum::<f64>(),
            Geometry::Sphere { radius } => zc - radius,
            Geometry::Capsule { radius, half_length } => zc - r[(2, 2)].abs() * half_length - radius,
            Geometry::Cylinder { radius, half_length } => zc - r[(2, 2)].abs() * half_length - radius * (1.0 - r[(2, 2)].powi(2)).max(0.0).sqrt(),
            // the lowest of the apex and the base circle
            Geometry::Cone { radius, half_length } => {
                let base = zc - r[(2, 2)] * half_length - radius * (1.0 - r[(2, 2)].powi(2)).max(0.0).sqrt();
                base.min(zc + r[(2, 2)] * half_length)
            }
            Geometry::ConvexMesh { vertices, .. } => vertices.iter().map(|p| w.transform_point(&Vec3::from(*p)).z).fold(f64::INFINITY, f64::min),
            _ => continue,
        };
        low = Some(low.map_or(z, |l: f64| l.min(z)));
    }
    low
}

/// One warning per kind of thing read but not simulated: devices other than the four sensors,
/// VRML visuals (drawn as the collision shapes).
fn not_simulated(body: &BodyModel, warnings: &mut Vec<String>) {
    let others: Vec<String> = body.devices.iter().filter_map(|d| match &d.kind {
        DeviceKind::Other(kind) => Some(format!("'{}' ({kind})", d.name)),
        _ => None,
    }).collect();
    if !others.is_empty() {
        warnings.push(format!("devices not simulated: {}", others.join(", ")));
    }
    let vrml = body.shapes.iter().filter(|s| matches!(s.geometry, BodyGeometry::Vrml { .. })).count();
    if vrml > 0 {
        warnings.push(format!("{vrml} VRML resource(s) not read: the collision shapes are drawn instead"));
    }
}

/// The collision shapes of a body's shapes that collide (errors and warnings name the shape's
/// file and line). Hulls of the same mesh file and scale are read once (`same_mesh_as`).
pub fn body_collisions(body: &BodyModel, warnings: &mut Vec<String>) -> Result<Vec<UrdfCollision>, String> {
    let y_to_z = Se3::new(rotation_about(&Vec3::x(), -std::f64::consts::FRAC_PI_2), Vec3::zeros());
    let mut out: Vec<UrdfCollision> = vec![];
    let mut meshes: BTreeMap<(PathBuf, [u64; 3]), usize> = BTreeMap::new();
    for s in body.shapes.iter().filter(|s| s.collision) {
        let mut placement = s.placement;
        let mut same_mesh_as = None;
        let geometry = match &s.geometry {
            BodyGeometry::Box { size } => Geometry::Box { half_extents: [size[0] / 2.0, size[1] / 2.0, size[2] / 2.0] },
            BodyGeometry::Sphere { radius } => Geometry::Sphere { radius: *radius },
            BodyGeometry::Cylinder { radius, height } => {
                placement = placement.compose(&y_to_z);
                Geometry::Cylinder { radius: *radius, half_length: height / 2.0 }
            }
            BodyGeometry::Capsule { radius, height } => {
                placement = placement.compose(&y_to_z);
                Geometry::Capsule { radius: *radius, half_length: height / 2.0 }
            }
            BodyGeometry::Cone { radius, height } => {
                placement = placement.compose(&y_to_z);
                Geometry::Cone { radius: *radius, half_length: height / 2.0 }
            }
            BodyGeometry::Points { vertices } => {
                crate::mesh::check_hull_points(vertices).map_err(|e| format!("{}: extrusion: {e}", s.at))?;
                Geometry::ConvexMesh { vertices: vertices.clone(), file: None }
            }
            BodyGeometry::Mesh { path, .. } if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("dae")) => {
                warnings.push(format!("{}: COLLADA resource '{}' is not read: shape left out", s.at, path.display()));
                continue;
            }
            BodyGeometry::Mesh { path, scale } => {
                let key = (path.clone(), scale.map(f64::to_bits));
                if let Some(&first) = meshes.get(&key) {
                    same_mesh_as = Some(first);
                    out[first].geometry.clone()
                } else {
                    let mesh = read_mesh(path, *scale, true).map_err(|e| format!("{}: {e}", s.at))?;
                    meshes.insert(key, out.len());
                    let file = Some(MeshFile { path: path.display().to_string(), scale: *scale });
                    Geometry::ConvexMesh { vertices: mesh.vertices, file }
                }
            }
            BodyGeometry::Vrml { .. } => continue,
        };
        let link = body.links[s.link].name.clone();
        out.push(UrdfCollision { link, parent_joint: s.joint, placement, geometry, same_mesh_as });
    }
    Ok(out)
}

/// A `.body` robot's shapes as URDF visuals and collisions, what a viewer draws: boxes,
/// spheres, cylinders and capsules (turned from Choreonoid's y axis onto z) and mesh files;
/// cones, extrusions and VRML resources are not drawn (the page draws its collisions instead).
pub fn body_looks(body: &karakuri::io::body::BodyModel) -> karakuri::io::urdf::Geometry {
    use karakuri::io::body::BodyGeometry as G;
    let y_to_z = karakuri::spatial::Se3::new(karakuri::spatial::rotation_about(&karakuri::spatial::Vec3::x(), -std::f64::consts::FRAC_PI_2), karakuri::spatial::Vec3::zeros());
    let mut out = karakuri::io::urdf::Geometry { visuals: vec![], collisions: vec![], warnings: vec![] };
    for (k, s) in body.shapes.iter().enumerate() {
        let (shape, turn) = match &s.geometry {
            G::Box { size } => (karakuri::io::urdf::Shape::Box { size: (*size).into() }, false),
            G::Sphere { radius } => (karakuri::io::urdf::Shape::Sphere { radius: *radius }, false),
            G::Cylinder { radius, height } => (karakuri::io::urdf::Shape::Cylinder { radius: *radius, length: *height }, true),
            G::Capsule { radius, height } => (karakuri::io::urdf::Shape::Capsule { radius: *radius, length: *height }, true),
            G::Mesh { path, scale } => {
                let filename = path.display().to_string();
                (karakuri::io::urdf::Shape::Mesh { filename, resolved: Some(path.clone()), tried: vec![path.clone()], scale: (*scale).into() }, false)
            }
            _ => continue,
        };
        let placement = if turn { s.placement.compose(&y_to_z) } else { s.placement };
        let link = body.links[s.link].name.clone();
        let g = karakuri::io::urdf::GeometryObject { name: format!("{link}_{k}"), link, parent_joint: karakuri::model::JointId(s.joint), placement, shape, material_rgba: None };
        if s.visual {
            out.visuals.push(g.clone());
        }
        if s.collision {
            out.collisions.push(g);
        }
    }
    out
}
