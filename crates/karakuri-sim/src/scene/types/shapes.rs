//! Materials and collision shapes: geometry, mesh files, and their file layouts (a shape's `type`
//! beside its keys: [`ShapeFile`]; `dynamic_friction` defaulting to `static_friction`:
//! [`MaterialFile`]).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::basics::{yes, Pose};

/// A material: Coulomb friction and Newton restitution (`dynamic_friction` defaults to
/// `static_friction`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "MaterialFile", into = "MaterialFile")]
pub struct Material {
    /// μ0.
    pub static_friction: f64,
    /// μ.
    pub dynamic_friction: f64,
    /// e.
    pub restitution: f64,
}

/// The material of shapes that name none, when the scene gives no `default_material`.
pub const DEFAULT_MATERIAL: Material = Material {
    static_friction: 0.5,
    dynamic_friction: 0.5,
    restitution: 0.0,
};

/// Geometry of a shape, in its own frame.
#[derive(Clone, Debug, PartialEq)]
pub enum Geometry {
    /// Sphere.
    Sphere {
        /// Radius (m).
        radius: f64,
    },
    /// Box.
    Box {
        /// Half side lengths (m).
        half_extents: [f64; 3],
    },
    /// Capsule along the shape's z.
    Capsule {
        /// Radius (m).
        radius: f64,
        /// Half length of the cylindrical part (m).
        half_length: f64,
    },
    /// Cylinder along the shape's z.
    Cylinder {
        /// Radius (m).
        radius: f64,
        /// Half length (m).
        half_length: f64,
    },
    /// Cone along the shape's z: its base (a disc) at `z = −half_length`, its apex at
    /// `+half_length` (Choreonoid's and parry's cone, centred on its height).
    Cone {
        /// Base radius (m).
        radius: f64,
        /// Half its height (m).
        half_length: f64,
    },
    /// Infinite plane, normal = shape +z, through the shape origin.
    Plane,
    /// Convex hull of points.
    ConvexMesh {
        /// Vertices (m), scaled (read from `file` by the geometry step when there is one).
        vertices: Vec<[f64; 3]>,
        /// The mesh file they were read from (`None`: given inline).
        file: Option<MeshFile>,
    },
    /// Triangle mesh (static bodies only).
    TriMesh {
        /// Vertices (m), scaled (read from `file` by the geometry step when there is one).
        vertices: Vec<[f64; 3]>,
        /// Triangles, counter-clockwise seen from outside.
        triangles: Vec<[u32; 3]>,
        /// The mesh file they were read from (`None`: given inline).
        file: Option<MeshFile>,
    },
}

impl Geometry {
    /// The homogeneous solid of a bounded primitive (sphere, box, capsule, cylinder, cone),
    /// for mass properties from a density; `None` for planes and meshes.
    pub fn solid(&self) -> Option<karakuri::spatial::Solid> {
        use karakuri::spatial::{Solid, Vec3};
        Some(match *self {
            Geometry::Sphere { radius } => Solid::Sphere { radius },
            Geometry::Box { half_extents: h } => Solid::Box { half_extents: Vec3::new(h[0], h[1], h[2]) },
            Geometry::Capsule { radius, half_length } => Solid::Capsule { radius, half_length },
            Geometry::Cylinder { radius, half_length } => Solid::Cylinder { radius, half_length },
            Geometry::Cone { radius, half_length } => Solid::Cone { radius, half_length },
            _ => return None,
        })
    }

    /// Points of a cone along z (its apex, then `n` points of its base circle): what draws
    /// it as a hull.
    pub fn cone_points(radius: f64, half_length: f64, n: usize) -> Vec<[f64; 3]> {
        let mut out = vec![[0.0, 0.0, half_length]];
        for k in 0..n {
            let a = std::f64::consts::TAU * k as f64 / n as f64;
            out.push([radius * a.cos(), radius * a.sin(), -half_length]);
        }
        out
    }
}

/// A mesh file behind a `convex_mesh` or `trimesh` shape: a saved scene writes this, not the
/// vertices.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshFile {
    /// The path as written (relative paths: relative to the scene file).
    pub path: String,
    /// Scale factors along x, y, z applied to the file's vertices.
    pub scale: [f64; 3],
}

/// A shape attached to a body (in files: `type` and the geometry's keys beside the others).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ShapeFile", into = "ShapeFile")]
pub struct ShapeSpec {
    /// Optional name.
    pub name: Option<String>,
    /// Geometry.
    pub geometry: Geometry,
    /// Pose in the body frame.
    pub pose: Pose,
    /// Material name (`None`: the default material).
    pub material: Option<String>,
    /// `false`: visual only.
    pub collide: bool,
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
    /// [`Geometry::Cone`].
    Cone,
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
        let kind = self.kind.ok_or("`type`: missing (sphere, box, capsule, cylinder, cone, plane, convex_mesh, trimesh)")?;
        let (name, keys): (&str, &[&str]) = match kind {
            ShapeKind::Sphere => ("sphere", &["radius"]),
            ShapeKind::Box => ("box", &["half_extents"]),
            ShapeKind::Capsule | ShapeKind::Cylinder | ShapeKind::Cone => ("capsule, cylinder or cone", &["radius", "half_length"]),
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
            ShapeKind::Cone => Geometry::Cone {
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
            Geometry::Cone { radius, half_length } => {
                (f.radius, f.half_length) = (Some(radius), Some(half_length));
                ShapeKind::Cone
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
