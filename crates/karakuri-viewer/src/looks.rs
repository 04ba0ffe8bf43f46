//! What each body looks like: the shapes drawn for it, in its body frame, as the JSON the page
//! reads (`{type, pose: [x, y, z, qx, qy, qz, qw], color: [r, g, b, a], layer, ...}`).
//!
//! * Scene bodies: their shapes (primitives, convex hulls, triangle meshes) as simulated.
//! * URDF links: the `<visual>` elements whose files are found and readable (STL, OBJ, COLLADA
//!   through `karakuri_sim::mesh`); for a link with a visual that is not, its
//!   `<collision>` shapes that are, then the scene's extra shapes on it, and when none of these
//!   is there, a stick figure ("bones": a capsule from the link's joint to each child joint
//!   and merged link). Every mesh not drawn is named in the page's notes with the paths tried.
//! * The `collision` layer (a toggle on the page) holds the collision shapes of robots.
//!
//! Meshes are stored once per file and scale (`meshes[k] = {v: float32 xyz, i: uint32}`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use karakuri::io::urdf::{Geometry as UrdfGeometry, GeometryObject, Shape as UrdfShape};
use karakuri::model::{FrameKind, Model};
use karakuri::spatial::{quat_to_xyzw, rotation_about, Se3, Vec3};
use karakuri_sim::scene::{Geometry, Pose, RobotCollision, ShapeSpec};
use serde_json::{json, Value};

use super::page::{f32s, u32s};

/// Colours of free bodies, in turn.
const PALETTE: [[f32; 4]; 7] = [
    [0.91, 0.51, 0.23, 1.0],
    [0.23, 0.56, 0.91, 1.0],
    [0.30, 0.70, 0.42, 1.0],
    [0.79, 0.31, 0.49, 1.0],
    [0.54, 0.44, 0.82, 1.0],
    [0.84, 0.69, 0.23, 1.0],
    [0.23, 0.70, 0.70, 1.0],
];
/// Static bodies.
pub const STATIC_GREY: [f32; 4] = [0.62, 0.64, 0.67, 1.0];
/// Robot links without a URDF colour.
const ROBOT_GREY: [f32; 4] = [0.80, 0.82, 0.86, 1.0];
/// Stick-figure bones.
const BONE_BLUE: [f32; 4] = [0.33, 0.45, 0.62, 1.0];

/// The free-body colour number `k`.
pub fn palette(k: usize) -> [f32; 4] {
    PALETTE[k % PALETTE.len()]
}

/// Meshes drawn by the page, each stored once, and notes on what could not be drawn.
#[derive(Default)]
pub struct MeshTable {
    /// `{v, i}` per mesh.
    pub meshes: Vec<Value>,
    by_file: BTreeMap<(PathBuf, [u64; 3]), Option<usize>>,
    /// What the page should tell (meshes not found or not readable).
    pub notes: Vec<String>,
}

impl MeshTable {
    /// Stores a mesh of vertices and triangles; its index.
    fn add(&mut self, vertices: &[[f64; 3]], triangles: &[[u32; 3]]) -> usize {
        self.meshes.push(json!({
            "v": f32s(vertices.iter().flatten().map(|&x| x as f32)),
            "i": u32s(triangles.iter().flatten().copied()),
        }));
        self.meshes.len() - 1
    }

    /// The mesh of a file (STL, OBJ or COLLADA) at a scale, read once; `None` (and a note) if unreadable.
    fn file(&mut self, path: &Path, scale: [f64; 3], what: &str) -> Option<usize> {
        let key = (path.to_path_buf(), scale.map(f64::to_bits));
        if let Some(k) = self.by_file.get(&key) {
            return *k;
        }
        let k = match karakuri_sim::mesh::load(path, scale) {
            Ok(m) => Some(self.add(&m.vertices, &m.triangles)),
            Err(e) => {
                self.notes.push(format!("{what}: not drawn: {e}"));
                None
            }
        };
        self.by_file.insert(key, k);
        k
    }

    /// The convex hull of points as a mesh (`None` if degenerate).
    fn hull(&mut self, points: &[[f64; 3]]) -> Option<usize> {
        use parry3d_f64::math::Vector;
        let pts: Vec<Vector> = points.iter().map(|p| Vector::new(p[0], p[1], p[2])).collect();
        let (v, t) = parry3d_f64::transformation::try_convex_hull(&pts).ok()?;
        let v: Vec<[f64; 3]> = v.iter().map(|p| [p.x, p.y, p.z]).collect();
        Some(self.add(&v, &t))
    }
}

/// `[x, y, z, qx, qy, qz, qw]` of a placement.
pub fn pose7(x: &Se3) -> [f64; 7] {
    let q = quat_to_xyzw(&x.rotation);
    let p = x.translation;
    [p.x, p.y, p.z, q[0], q[1], q[2], q[3]]
}

/// A scene pose as a placement.
pub fn se3(p: &Pose) -> Se3 {
    Se3::new(
        karakuri::spatial::quat_from_xyzw(&p.orientation),
        Vec3::from(p.position),
    )
}

fn shape(kind: Value, pose: &Se3, color: [f32; 4], layer: &str) -> Value {
    let mut s = kind;
    s["pose"] = json!(pose7(pose));
    s["color"] = json!(color);
    s["layer"] = json!(layer);
    s
}

/// The shapes of a scene shape specification; `None` when it cannot be drawn.
pub fn scene_shape(spec: &ShapeSpec, color: [f32; 4], layer: &str, meshes: &mut MeshTable) -> Option<Value> {
    let kind = match &spec.geometry {
        Geometry::Sphere { radius } => json!({"type": "sphere", "r": radius}),
        Geometry::Box { half_extents } => json!({"type": "box", "half": half_extents}),
        Geometry::Capsule { radius, half_length } => {
            json!({"type": "capsule", "r": radius, "hl": half_length})
        }
        Geometry::Cylinder { radius, half_length } => {
            json!({"type": "cylinder", "r": radius, "hl": half_length})
        }
        Geometry::Cone { radius, half_length } => {
            json!({"type": "mesh", "mesh": meshes.hull(&Geometry::cone_points(*radius, *half_length, 24))?})
        }
        Geometry::Plane => json!({"type": "plane"}),
        Geometry::ConvexMesh { vertices, .. } => json!({"type": "mesh", "mesh": meshes.hull(vertices)?}),
        Geometry::TriMesh {
            vertices, triangles, ..
        } => {
            json!({"type": "mesh", "mesh": meshes.add(vertices, triangles)})
        }
    };
    Some(shape(kind, &se3(&spec.pose), color, layer))
}

/// A URDF shape, `None` if it is a mesh that is not found or not readable.
fn urdf_shape(g: &GeometryObject, color: [f32; 4], layer: &str, meshes: &mut MeshTable, what: &str) -> Option<Value> {
    let kind = match &g.shape {
        UrdfShape::Box { size } => json!({"type": "box", "half": [size.x / 2.0, size.y / 2.0, size.z / 2.0]}),
        UrdfShape::Sphere { radius } => json!({"type": "sphere", "r": radius}),
        UrdfShape::Cylinder { radius, length } => json!({"type": "cylinder", "r": radius, "hl": length / 2.0}),
        UrdfShape::Capsule { radius, length } => json!({"type": "capsule", "r": radius, "hl": length / 2.0}),
        UrdfShape::Mesh {
            filename,
            resolved,
            tried,
            scale,
        } => {
            let what = format!("{what} '{filename}'");
            let Some(file) = resolved else {
                let tried: Vec<String> = tried.iter().map(|p| format!("'{}'", p.display())).collect();
                meshes.notes.push(format!(
                    "{what}: not found (tried {})",
                    if tried.is_empty() {
                        "nothing".to_string()
                    } else {
                        tried.join(", ")
                    }
                ));
                return None;
            };
            json!({"type": "mesh", "mesh": meshes.file(file, [scale.x, scale.y, scale.z], &what)?})
        }
    };
    let color = g.material_rgba.map_or(color, |c| c.map(|x| x as f32));
    Some(shape(kind, &g.placement, color, layer))
}

/// How the shapes of a robot's links are chosen (see the module documentation).
pub struct RobotLooks<'a> {
    /// Name used in notes (`robot 'solo'`, or the URDF file).
    pub label: String,
    /// The robot's own model (from its URDF).
    pub model: &'a Model,
    /// Its URDF geometry.
    pub geometry: &'a UrdfGeometry,
    /// Extra collision shapes by link name (scene robots' `shapes`).
    pub extra: &'a [(String, ShapeSpec)],
    /// Which URDF collision elements the engine uses (`None`: none of them).
    pub collision: RobotCollision,
}

impl RobotLooks<'_> {
    /// The shapes of each joint's body (index = joint of `model`), in the joint frame.
    pub fn shapes(&self, meshes: &mut MeshTable) -> Vec<Vec<Value>> {
        let m = self.model;
        let mut out = vec![Vec::new(); m.njoints];
        let mut missing = vec![false; m.njoints];
        let mut has_visual = vec![false; m.njoints];
        for g in &self.geometry.visuals {
            let j = g.parent_joint.0;
            has_visual[j] = true;
            let what = format!("{}: link '{}': visual", self.label, g.link);
            match urdf_shape(g, ROBOT_GREY, "visual", meshes, &what) {
                Some(s) => out[j].push(s),
                None => missing[j] = true,
            }
        }
        for j in 0..m.njoints {
            if !(missing[j] || (!has_visual[j] && j > 0)) {
                continue;
            }
            let before = out[j].len();
            for g in self.geometry.collisions.iter().filter(|g| g.parent_joint.0 == j) {
                let what = format!("{}: link '{}': collision", self.label, g.link);
                if let Some(s) = urdf_shape(g, ROBOT_GREY, "visual", meshes, &what) {
                    out[j].push(s);
                }
            }
            let from_collisions = out[j].len() > before;
            for (link, spec) in self.extra {
                if let Some(f) = self.frame(link).filter(|f| f.parent_joint.0 == j) {
                    if let Some(mut s) = scene_shape(spec, ROBOT_GREY, "visual", meshes) {
                        s["pose"] = json!(pose7(&f.placement.compose(&se3(&spec.pose))));
                        out[j].push(s);
                    }
                }
            }
            if j > 0 && !from_collisions {
                out[j].extend(self.bones(j));
            }
        }
        // the collision layer: what the engine collides with
        for (j, shapes) in out.iter_mut().enumerate() {
            if self.collision != RobotCollision::None {
                for g in self.geometry.collisions.iter().filter(|g| g.parent_joint.0 == j) {
                    if self.collision == RobotCollision::Primitives && matches!(g.shape, UrdfShape::Mesh { .. }) {
                        continue;
                    }
                    let what = format!("{}: link '{}': collision", self.label, g.link);
                    if let Some(s) = urdf_shape(g, ROBOT_GREY, "collision", meshes, &what) {
                        shapes.push(s);
                    }
                }
            }
            for (link, spec) in self.extra {
                if let Some(f) = self.frame(link).filter(|f| f.parent_joint.0 == j) {
                    if let Some(mut s) = scene_shape(spec, ROBOT_GREY, "collision", meshes) {
                        s["pose"] = json!(pose7(&f.placement.compose(&se3(&spec.pose))));
                        shapes.push(s);
                    }
                }
            }
        }
        out
    }

    fn frame(&self, link: &str) -> Option<&karakuri::model::Frame> {
        self.model
            .frames
            .iter()
            .find(|f| f.name == link && f.kind == FrameKind::Body)
    }

    /// A capsule from joint `j`'s origin to each child joint and each link merged into its body,
    /// and a ball at the joint.
    fn bones(&self, j: usize) -> Vec<Value> {
        let m = self.model;
        let ends: Vec<Vec3> = m.children[j]
            .iter()
            .map(|&c| m.joint_placements[c].translation)
            .chain(
                m.frames
                    .iter()
                    .filter(|f| f.parent_joint.0 == j && f.kind == FrameKind::Body)
                    .map(|f| f.placement.translation),
            )
            .filter(|p| p.norm() > 1e-6)
            .collect();
        let longest = ends.iter().map(|p| p.norm()).fold(0.0, f64::max);
        let radius = (0.08 * longest).clamp(0.008, 0.03);
        let mut out = vec![shape(
            json!({"type": "sphere", "r": 1.4 * radius}),
            &Se3::identity(),
            BONE_BLUE,
            "visual",
        )];
        for p in ends {
            let len = p.norm();
            // capsule axis z onto the bone's direction, centred halfway
            let z = p / len;
            let axis = Vec3::z().cross(&z);
            let r = if axis.norm() < 1e-9 {
                if z.z > 0.0 {
                    karakuri::spatial::Mat3::identity()
                } else {
                    rotation_about(&Vec3::x(), std::f64::consts::PI)
                }
            } else {
                rotation_about(&axis.normalize(), z.z.clamp(-1.0, 1.0).acos())
            };
            out.push(shape(
                json!({"type": "capsule", "r": radius, "hl": len / 2.0}),
                &Se3::new(r, p / 2.0),
                BONE_BLUE,
                "visual",
            ));
        }
        out
    }
}
