//! File layouts of the scene types whose shape in memory differs from their shape in a file,
//! each used both to read ( `TryFrom<Layout>` ) and to write ( `From<Type>` ), so the two
//! directions cannot drift apart:
//!
//! * a shape: `type` beside the geometry's keys and the common ones ([`ShapeFile`]); in
//!   `robots[].shapes` also the `link`;
//! * a contact mode: `mode`, with `stiffness` and `damping` beside it for `penalty`
//!   ([`ContactFile`], [`PairFile`]);
//! * a joint: `type: free | revolute | prismatic`, `q0`/`qd0` a pose and twist or numbers
//!   ([`JointFile`]);
//! * a material: `dynamic_friction` defaulting to `static_friction` ([`MaterialFile`]);
//! * name-keyed mappings read into ordered lists ([`Named`]).
//!
//! Conversion errors start with the key they concern in backticks (`` `radius`: missing ``):
//! `Scene::from_value` appends that key to the path serde reports, so errors stay located.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::types::{
    yes, ActuatorSpec, ContactMode, ContactParams, Geometry, JointSpec, Material, MeshFile, PairSpec, Pose, ShapeSpec, Twist,
};

/// `mode` in files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModeKind {
    /// [`ContactMode::None`].
    None,
    /// [`ContactMode::Lcp`].
    #[default]
    Lcp,
    /// [`ContactMode::Penalty`].
    Penalty,
}

fn mode_of(kind: ModeKind, stiffness: Option<f64>, damping: Option<f64>) -> Result<ContactMode, String> {
    match kind {
        ModeKind::Penalty => Ok(ContactMode::Penalty {
            stiffness: stiffness.ok_or("`stiffness`: missing (mode penalty needs it, N/m)")?,
            damping: damping.unwrap_or(0.0),
        }),
        _ if stiffness.is_some() => Err("`stiffness`: only mode penalty has a stiffness".into()),
        _ if damping.is_some() => Err("`damping`: only mode penalty has a damping".into()),
        ModeKind::None => Ok(ContactMode::None),
        ModeKind::Lcp => Ok(ContactMode::Lcp),
    }
}

fn mode_fields(m: ContactMode) -> (ModeKind, Option<f64>, Option<f64>) {
    match m {
        ContactMode::None => (ModeKind::None, None, None),
        ContactMode::Lcp => (ModeKind::Lcp, None, None),
        ContactMode::Penalty { stiffness, damping } => (ModeKind::Penalty, Some(stiffness), Some(damping)),
    }
}

/// `contact` as written.
#[derive(Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContactFile {
    error_correction_rate: f64,
    penetration_tolerance: f64,
    restitution_threshold_velocity: f64,
    friction_threshold_velocity: f64,
    exclude_parent_child: bool,
    prediction_distance: f64,
    max_depenetration_speed: f64,
    mode: ModeKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    stiffness: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    damping: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    solver_hint: Option<String>,
}

impl Default for ContactFile {
    fn default() -> Self {
        ContactParams::default().into()
    }
}

impl From<ContactParams> for ContactFile {
    fn from(c: ContactParams) -> Self {
        let (mode, stiffness, damping) = mode_fields(c.mode);
        ContactFile {
            error_correction_rate: c.error_correction_rate,
            penetration_tolerance: c.penetration_tolerance,
            restitution_threshold_velocity: c.restitution_threshold_velocity,
            friction_threshold_velocity: c.friction_threshold_velocity,
            exclude_parent_child: c.exclude_parent_child,
            prediction_distance: c.prediction_distance,
            max_depenetration_speed: c.max_depenetration_speed,
            mode,
            stiffness,
            damping,
            solver_hint: c.solver_hint,
        }
    }
}

impl TryFrom<ContactFile> for ContactParams {
    type Error = String;
    fn try_from(c: ContactFile) -> Result<Self, String> {
        Ok(ContactParams {
            error_correction_rate: c.error_correction_rate,
            penetration_tolerance: c.penetration_tolerance,
            restitution_threshold_velocity: c.restitution_threshold_velocity,
            friction_threshold_velocity: c.friction_threshold_velocity,
            exclude_parent_child: c.exclude_parent_child,
            prediction_distance: c.prediction_distance,
            max_depenetration_speed: c.max_depenetration_speed,
            mode: mode_of(c.mode, c.stiffness, c.damping)?,
            solver_hint: c.solver_hint,
        })
    }
}

/// A `contact_pairs` entry as written.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairFile {
    bodies: [String; 2],
    mode: ModeKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stiffness: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    damping: Option<f64>,
}

impl From<PairSpec> for PairFile {
    fn from(p: PairSpec) -> Self {
        let (mode, stiffness, damping) = mode_fields(p.mode);
        PairFile { bodies: p.bodies, mode, stiffness, damping }
    }
}

impl TryFrom<PairFile> for PairSpec {
    type Error = String;
    fn try_from(p: PairFile) -> Result<Self, String> {
        Ok(PairSpec { mode: mode_of(p.mode, p.stiffness, p.damping)?, bodies: p.bodies })
    }
}

/// A material as written.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialFile {
    static_friction: f64,
    #[serde(default)]
    dynamic_friction: Option<f64>,
    #[serde(default)]
    restitution: f64,
}

impl From<Material> for MaterialFile {
    fn from(m: Material) -> Self {
        MaterialFile {
            static_friction: m.static_friction,
            dynamic_friction: Some(m.dynamic_friction),
            restitution: m.restitution,
        }
    }
}

impl From<MaterialFile> for Material {
    fn from(m: MaterialFile) -> Self {
        Material {
            static_friction: m.static_friction,
            dynamic_friction: m.dynamic_friction.unwrap_or(m.static_friction),
            restitution: m.restitution,
        }
    }
}

/// Shape `type`s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShapeKind {
    /// [`Geometry::Sphere`].
    Sphere,
    /// [`Geometry::Box`].
    Box,
    /// [`Geometry::Capsule`].
    Capsule,
    /// [`Geometry::Cylinder`].
    Cylinder,
    /// [`Geometry::Plane`].
    Plane,
    /// [`Geometry::ConvexMesh`].
    ConvexMesh,
    /// [`Geometry::TriMesh`].
    Trimesh,
}

/// A shape as written: `type`, the keys of its geometry and the common ones.
#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShapeFile {
    #[serde(rename = "type")]
    kind: Option<ShapeKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    link: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    radius: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    half_extents: Option<[f64; 3]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    half_length: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    vertices: Option<Vec<[f64; 3]>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    triangles: Option<Vec<[u32; 3]>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scale: Option<[f64; 3]>,
    #[serde(default)]
    pose: Pose,
    #[serde(default)]
    material: Option<String>,
    #[serde(default = "yes")]
    collide: bool,
}

impl ShapeFile {
    /// The geometry's keys that are present.
    fn geometry_keys(&self) -> Vec<&'static str> {
        let present = [
            ("radius", self.radius.is_some()),
            ("half_extents", self.half_extents.is_some()),
            ("half_length", self.half_length.is_some()),
            ("vertices", self.vertices.is_some()),
            ("triangles", self.triangles.is_some()),
            ("file", self.file.is_some()),
            ("scale", self.scale.is_some()),
        ];
        present.iter().filter(|(_, p)| *p).map(|(k, _)| *k).collect()
    }

    fn geometry(&mut self) -> Result<Geometry, String> {
        let kind = self.kind.ok_or("`type`: missing (sphere, box, capsule, cylinder, plane, convex_mesh, trimesh)")?;
        let (name, keys): (&str, &[&str]) = match kind {
            ShapeKind::Sphere => ("sphere", &["radius"]),
            ShapeKind::Box => ("box", &["half_extents"]),
            ShapeKind::Capsule | ShapeKind::Cylinder => ("capsule or cylinder", &["radius", "half_length"]),
            ShapeKind::Plane => ("plane", &[]),
            ShapeKind::ConvexMesh => ("convex_mesh", &["vertices", "file", "scale"]),
            ShapeKind::Trimesh => ("trimesh", &["vertices", "triangles", "file", "scale"]),
        };
        if let Some(k) = self.geometry_keys().into_iter().find(|k| !keys.contains(k)) {
            return Err(format!(
                "`{k}`: unknown key for a {name} (expected one of: type, name, pose, material, collide{}{})",
                if keys.is_empty() { "" } else { ", " },
                keys.join(", ")
            ));
        }
        let req = |x: Option<f64>, key: &str| x.ok_or_else(|| format!("`{key}`: missing"));
        Ok(match kind {
            ShapeKind::Sphere => Geometry::Sphere { radius: req(self.radius, "radius")? },
            ShapeKind::Box => Geometry::Box {
                half_extents: self.half_extents.ok_or("`half_extents`: missing")?,
            },
            ShapeKind::Capsule => Geometry::Capsule {
                radius: req(self.radius, "radius")?,
                half_length: req(self.half_length, "half_length")?,
            },
            ShapeKind::Cylinder => Geometry::Cylinder {
                radius: req(self.radius, "radius")?,
                half_length: req(self.half_length, "half_length")?,
            },
            ShapeKind::Plane => Geometry::Plane,
            ShapeKind::ConvexMesh => Geometry::ConvexMesh {
                file: self.mesh_file()?,
                vertices: self.vertices.take().unwrap_or_default(),
            },
            ShapeKind::Trimesh => {
                let file = self.mesh_file()?;
                if file.is_none() && self.triangles.is_none() {
                    return Err("`triangles`: missing".into());
                }
                Geometry::TriMesh {
                    file,
                    vertices: self.vertices.take().unwrap_or_default(),
                    triangles: self.triangles.take().unwrap_or_default(),
                }
            }
        })
    }

    /// `file` and `scale`, or `None` when the vertices are inline.
    fn mesh_file(&self) -> Result<Option<MeshFile>, String> {
        let Some(path) = &self.file else {
            if self.scale.is_some() {
                return Err("`scale`: applies to meshes read from a `file` (scale inline vertices yourself)".into());
            }
            if self.vertices.is_none() {
                return Err("`vertices`: missing (or give a mesh `file`)".into());
            }
            return Ok(None);
        };
        if self.vertices.is_some() {
            return Err("`vertices`: give either `vertices` or `file`, not both".into());
        }
        if self.triangles.is_some() {
            return Err("`triangles`: come from the mesh file when `file` is given".into());
        }
        Ok(Some(MeshFile { path: path.clone(), scale: self.scale.unwrap_or([1.0; 3]) }))
    }

    fn spec(mut self) -> Result<ShapeSpec, String> {
        Ok(ShapeSpec {
            geometry: self.geometry()?,
            name: self.name,
            pose: self.pose,
            material: self.material,
            collide: self.collide,
        })
    }
}

impl From<ShapeSpec> for ShapeFile {
    fn from(s: ShapeSpec) -> Self {
        let mut f = ShapeFile {
            name: s.name,
            pose: s.pose,
            material: s.material,
            collide: s.collide,
            ..ShapeFile::default()
        };
        let mesh = |f: &mut ShapeFile, file: Option<MeshFile>, vertices: Vec<[f64; 3]>| match file {
            Some(m) => {
                f.file = Some(m.path);
                f.scale = Some(m.scale);
                false
            }
            None => {
                f.vertices = Some(vertices);
                true
            }
        };
        f.kind = Some(match s.geometry {
            Geometry::Sphere { radius } => {
                f.radius = Some(radius);
                ShapeKind::Sphere
            }
            Geometry::Box { half_extents } => {
                f.half_extents = Some(half_extents);
                ShapeKind::Box
            }
            Geometry::Capsule { radius, half_length } => {
                (f.radius, f.half_length) = (Some(radius), Some(half_length));
                ShapeKind::Capsule
            }
            Geometry::Cylinder { radius, half_length } => {
                (f.radius, f.half_length) = (Some(radius), Some(half_length));
                ShapeKind::Cylinder
            }
            Geometry::Plane => ShapeKind::Plane,
            Geometry::ConvexMesh { vertices, file } => {
                mesh(&mut f, file, vertices);
                ShapeKind::ConvexMesh
            }
            Geometry::TriMesh { vertices, triangles, file } => {
                if mesh(&mut f, file, vertices) {
                    f.triangles = Some(triangles);
                }
                ShapeKind::Trimesh
            }
        });
        f
    }
}

impl TryFrom<ShapeFile> for ShapeSpec {
    type Error = String;
    fn try_from(f: ShapeFile) -> Result<Self, String> {
        if f.link.is_some() {
            return Err("`link`: only robots[].shapes are attached to links".into());
        }
        f.spec()
    }
}

/// A `robots[].shapes` entry: a shape and the link it is attached to.
#[derive(Deserialize)]
#[serde(try_from = "ShapeFile")]
struct LinkedShape(String, ShapeSpec);

impl TryFrom<ShapeFile> for LinkedShape {
    type Error = String;
    fn try_from(mut f: ShapeFile) -> Result<Self, String> {
        let link = f.link.take().ok_or("`link`: missing (the robot link the shape is attached to)")?;
        Ok(LinkedShape(link, f.spec()?))
    }
}

/// `robots[].shapes`: a list of shapes with their `link`.
pub struct LinkedShapes;

impl LinkedShapes {
    /// Writes `[{link, type, ...}]`.
    pub fn serialize<S: Serializer>(v: &[(String, ShapeSpec)], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|(link, sh)| ShapeFile { link: Some(link.clone()), ..ShapeFile::from(sh.clone()) }))
    }
    /// Reads `[{link, type, ...}]`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, ShapeSpec)>, D::Error> {
        Ok(Vec::<LinkedShape>::deserialize(d)?.into_iter().map(|LinkedShape(l, s)| (l, s)).collect())
    }
}

/// Joint `type`s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JointKind {
    /// [`JointSpec::Free`].
    Free,
    /// [`JointSpec::Hinge`], rotating.
    Revolute,
    /// [`JointSpec::Hinge`], sliding.
    Prismatic,
}

/// A joint as written (a missing `name` is filled by validation: `<body>_j<index>`).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JointFile {
    #[serde(rename = "type")]
    kind: JointKind,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    q0: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    qd0: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    axis: Option<[f64; 3]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    anchor: Option<[f64; 3]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    limits: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    damping: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stiffness: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    spring_reference: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    armature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    actuator: Option<ActuatorSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    friction: Option<f64>,
}

fn number(v: &Option<Value>, key: &str) -> Result<f64, String> {
    match v {
        None => Ok(0.0),
        Some(x) => x.as_f64().ok_or_else(|| format!("`{key}`: expected a number, found {}", super::short(x))),
    }
}

fn typed<T: for<'de> Deserialize<'de> + Default>(v: Option<Value>, key: &str) -> Result<T, String> {
    let Some(x) = v else { return Ok(T::default()) };
    serde_path_to_error::deserialize(&x).map_err(|e| match e.path().to_string().as_str() {
        "." => format!("`{key}`: {}", e.inner()),
        inner => format!("`{key}.{inner}`: {}", e.inner()),
    })
}

impl TryFrom<JointFile> for JointSpec {
    type Error = String;
    fn try_from(j: JointFile) -> Result<Self, String> {
        if j.kind == JointKind::Free {
            let hinge_keys = [
                ("axis", j.axis.is_some()),
                ("anchor", j.anchor.is_some()),
                ("limits", j.limits.is_some()),
                ("damping", j.damping.is_some()),
                ("stiffness", j.stiffness.is_some()),
                ("spring_reference", j.spring_reference.is_some()),
                ("armature", j.armature.is_some()),
                ("actuator", j.actuator.is_some()),
                ("friction", j.friction.is_some()),
            ];
            if let Some((k, _)) = hinge_keys.iter().find(|(_, p)| *p) {
                return Err(format!("`{k}`: unknown key for a free joint (expected one of: name, type, q0, qd0)"));
            }
            return Ok(JointSpec::Free { name: j.name, q0: typed::<Pose>(j.q0, "q0")?, qd0: typed::<Twist>(j.qd0, "qd0")? });
        }
        Ok(JointSpec::Hinge {
            prismatic: j.kind == JointKind::Prismatic,
            axis: j.axis.ok_or("`axis`: missing (the unit axis in the child frame)")?,
            anchor: j.anchor.unwrap_or_default(),
            q0: number(&j.q0, "q0")?,
            qd0: number(&j.qd0, "qd0")?,
            limits: j.limits,
            damping: j.damping.unwrap_or(0.0),
            stiffness: j.stiffness.unwrap_or(0.0),
            spring_reference: j.spring_reference.unwrap_or(0.0),
            armature: j.armature.unwrap_or(0.0),
            actuator: j.actuator,
            friction: j.friction.unwrap_or(0.0),
            name: j.name,
        })
    }
}

impl From<JointSpec> for JointFile {
    fn from(j: JointSpec) -> Self {
        match j {
            JointSpec::Free { name, q0, qd0 } => JointFile {
                kind: JointKind::Free,
                name,
                q0: serde_json::to_value(q0).ok(),
                qd0: serde_json::to_value(qd0).ok(),
                axis: None,
                anchor: None,
                limits: None,
                damping: None,
                stiffness: None,
                spring_reference: None,
                armature: None,
                actuator: None,
                friction: None,
            },
            JointSpec::Hinge { name, prismatic, axis, anchor, q0, qd0, limits, damping, stiffness, spring_reference, armature, actuator, friction } => {
                JointFile {
                    kind: if prismatic { JointKind::Prismatic } else { JointKind::Revolute },
                    name,
                    q0: Some(q0.into()),
                    qd0: Some(qd0.into()),
                    axis: Some(axis),
                    anchor: Some(anchor),
                    limits,
                    damping: Some(damping),
                    stiffness: Some(stiffness),
                    spring_reference: Some(spring_reference),
                    armature: Some(armature),
                    actuator,
                    friction: (friction != 0.0).then_some(friction),
                }
            }
        }
    }
}

/// A mapping from names to values, kept as a list of pairs (materials, robot joint values).
pub struct Named;

impl Named {
    /// Writes `{name: value, ...}`.
    #[allow(clippy::ptr_arg)] // serde's `with` passes `&Vec<_>`
    pub fn serialize<T: Serialize, S: Serializer>(v: &Vec<(String, T)>, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(v.iter().map(|(k, x)| (k, x)))
    }
    /// Reads `{name: value, ...}` in the order given.
    pub fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(d: D) -> Result<Vec<(String, T)>, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Vec<(String, T)>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping of names to values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry()? {
                    out.push((k, v));
                }
                Ok(out)
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}
