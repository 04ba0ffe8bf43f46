//! Scene files (`docs/SCENE_FORMAT.md`): the world, the engine, the contact model, materials,
//! bodies, robots by reference and loop constraints, read from JSON or YAML and written back.
//!
//! Reading goes through a generic value tree so that every error names the file, the path
//! inside it (`bodies[3].shapes[0].radius`) and the reason. Every parameter the simulation uses
//! is a field here, filled with its default when the file leaves it out, and [`Scene::to_value`]
//! writes all of them: a loaded-then-saved scene reloads to the same simulation.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::SimError;

/// A pose `{position, orientation}`: `x_parent = R(orientation) x_local + position`, the
/// quaternion in `[x, y, z, w]` order (unit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    /// Translation (m).
    pub position: [f64; 3],
    /// Unit quaternion `[x, y, z, w]`.
    pub orientation: [f64; 4],
}

impl Default for Pose {
    fn default() -> Self {
        Pose {
            position: [0.0; 3],
            orientation: [0.0, 0.0, 0.0, 1.0],
        }
    }
}

/// A velocity `{linear, angular}` in world axes (`linear`: velocity of the body-frame origin).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Twist {
    /// Linear velocity (m/s).
    pub linear: [f64; 3],
    /// Angular velocity (rad/s).
    pub angular: [f64; 3],
}

/// `world`: gravity, time step, duration.
#[derive(Clone, Debug, PartialEq)]
pub struct WorldParams {
    /// Gravity (m/s²), world axes.
    pub gravity: [f64; 3],
    /// Time step (s).
    pub dt: f64,
    /// Default duration of a run (s).
    pub duration: f64,
    /// Free text kept for the reader (the integrator used is `engine.integrator`).
    pub integrator_hint: Option<String>,
}

/// How a pair of shapes in contact is handled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ContactMode {
    /// No contact at all (the shapes pass through each other).
    None,
    /// Constraint-based (velocity-level LCP), Springhead's model: the default.
    Lcp,
    /// Spring-damper normal force with regularised Coulomb friction.
    Penalty {
        /// Normal stiffness (N/m).
        stiffness: f64,
        /// Normal damping (N·s/m).
        damping: f64,
    },
}

/// `contact`: Springhead's contact model in physical units.
#[derive(Clone, Debug, PartialEq)]
pub struct ContactParams {
    /// γ: fraction of the penetration beyond the tolerance removed per step.
    pub error_correction_rate: f64,
    /// d_tol: penetration left uncorrected (m).
    pub penetration_tolerance: f64,
    /// V_th: approach speed below which restitution is zero (m/s).
    pub restitution_threshold_velocity: f64,
    /// V_f: slip speed below which static friction applies (m/s).
    pub friction_threshold_velocity: f64,
    /// Bodies never collide with their parent or children.
    pub exclude_parent_child: bool,
    /// Contacts are detected this far before the shapes touch (m); such contacts only forbid
    /// closing the remaining gap within the step (speculative contacts).
    pub prediction_distance: f64,
    /// Mode of every pair not listed in `contact_pairs`.
    pub mode: ContactMode,
    /// Free text kept for the reader.
    pub solver_hint: Option<String>,
}

/// Integration scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Integrator {
    /// Semi-implicit (symplectic) Euler on the configuration manifold: the default.
    SemiImplicitEuler,
    /// Classical Runge–Kutta 4 (contact-free smooth systems only; falls back to semi-implicit
    /// Euler in a step that has contacts or joint limits active).
    Rk4,
}

/// The constraint solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolverKind {
    /// Projected Gauss–Seidel.
    Pgs,
    /// The direct solver (dense LDLᵀ with an active set) where the problem has no friction
    /// and at most `direct_max_rows` rows, PGS otherwise: the default.
    Auto,
}

/// `engine`: which engine steps the world and its numerical settings.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineParams {
    /// Engine name (`native`).
    pub kind: String,
    /// Integration scheme.
    pub integrator: Integrator,
    /// Constraint solver.
    pub solver: SolverKind,
    /// PGS iteration cap.
    pub max_iterations: usize,
    /// PGS stops when no row's velocity changes more than this in a sweep (m/s or rad/s).
    pub tolerance: f64,
    /// Start PGS from the previous step's impulses of the same contacts.
    pub warm_start: bool,
    /// Largest problem the direct solver takes.
    pub direct_max_rows: usize,
    /// Fraction of a loop constraint's position error removed per step (Baumgarte).
    pub loop_correction_rate: f64,
    /// Project the configuration back onto the loop constraints after each step.
    pub loop_projection: bool,
    /// Speed above which the state is declared diverged (m/s or rad/s).
    pub max_speed: f64,
}

/// A material: Coulomb friction and Newton restitution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Material {
    /// μ0.
    pub static_friction: f64,
    /// μ.
    pub dynamic_friction: f64,
    /// e.
    pub restitution: f64,
}

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
    /// Infinite plane, normal = shape +z, through the shape origin.
    Plane,
    /// Convex hull of points.
    ConvexMesh {
        /// Vertices (m), scaled (read from `file` when there is one).
        vertices: Vec<[f64; 3]>,
        /// The mesh file they were read from (`None`: given inline).
        file: Option<MeshFile>,
    },
    /// Triangle mesh (static bodies only).
    TriMesh {
        /// Vertices (m), scaled (read from `file` when there is one).
        vertices: Vec<[f64; 3]>,
        /// Triangles, counter-clockwise seen from outside.
        triangles: Vec<[u32; 3]>,
        /// The mesh file they were read from (`None`: given inline).
        file: Option<MeshFile>,
    },
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

/// A shape attached to a body.
#[derive(Clone, Debug, PartialEq)]
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

/// One joint of a body.
#[derive(Clone, Debug, PartialEq)]
pub enum JointSpec {
    /// Six degrees of freedom; the initial state in world axes.
    Free {
        /// Name.
        name: String,
        /// Initial world pose of the body frame.
        q0: Pose,
        /// Initial world velocity.
        qd0: Twist,
    },
    /// A hinge (`prismatic: false`) or slider about/along `axis` through `anchor`, child frame.
    Hinge {
        /// Name.
        name: String,
        /// `true` for a slider.
        prismatic: bool,
        /// Unit axis, child frame.
        axis: [f64; 3],
        /// Anchor point, child frame.
        anchor: [f64; 3],
        /// Initial position.
        q0: f64,
        /// Initial velocity.
        qd0: f64,
        /// Position limits.
        limits: Option<[f64; 2]>,
        /// Viscous damping (N·m·s/rad or N·s/m).
        damping: f64,
        /// Spring stiffness (N·m/rad or N/m).
        stiffness: f64,
        /// Spring rest position.
        spring_reference: f64,
        /// Armature (rotor inertia) added to the mass matrix diagonal.
        armature: f64,
    },
}

impl JointSpec {
    /// The joint's name.
    pub fn name(&self) -> &str {
        match self {
            JointSpec::Free { name, .. } | JointSpec::Hinge { name, .. } => name,
        }
    }
}

/// A rigid body of the scene tree.
#[derive(Clone, Debug, PartialEq)]
pub struct BodySpec {
    /// Unique name.
    pub name: String,
    /// `world` or an earlier body.
    pub parent: String,
    /// Body frame in the parent frame at zero joint positions.
    pub pose_in_parent: Pose,
    /// Joints, applied in order.
    pub joints: Vec<JointSpec>,
    /// Mass (kg).
    pub mass: f64,
    /// Centre of mass, body frame.
    pub com: [f64; 3],
    /// Rotational inertia about the centre of mass, body axes.
    pub inertia: [[f64; 3]; 3],
    /// Shapes.
    pub shapes: Vec<ShapeSpec>,
    /// Redundant initial world pose, for cross-checking.
    pub initial_world_pose: Option<Pose>,
}

impl BodySpec {
    /// No joints and parent `world`.
    pub fn is_static(&self) -> bool {
        self.joints.is_empty() && self.parent == "world"
    }
}

/// How a robot's root link is attached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RobotRoot {
    /// Free-flying base.
    Floating,
    /// Root fixed to the world at `pose`.
    Fixed,
}

/// Which of a URDF's `<collision>` elements become collision shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RobotCollision {
    /// All of them: boxes, spheres, cylinders and capsules as such, meshes as the convex hull
    /// of the mesh file (a mesh file that cannot be found or read is an error): the default.
    Urdf,
    /// Boxes, spheres, cylinders and capsules only; meshes are skipped.
    Primitives,
    /// None (only the hand-added `shapes`).
    None,
}

/// A robot loaded from a URDF file.
#[derive(Clone, Debug, PartialEq)]
pub struct RobotSpec {
    /// Name, prefixed to its links' names (`name/link`).
    pub name: String,
    /// URDF path as written (relative to the scene file).
    pub urdf: String,
    /// Floating or fixed base.
    pub root: RobotRoot,
    /// Pose of the root link (initial world pose when floating).
    pub pose: Pose,
    /// Initial joint positions by joint name (the base is set by `pose`).
    pub q0: Vec<(String, f64)>,
    /// Initial joint velocities by joint name.
    pub v0: Vec<(String, f64)>,
    /// Initial base velocity in world axes (floating only).
    pub base_velocity: Twist,
    /// Material of its collision shapes.
    pub material: Option<String>,
    /// Collision shapes are used (`false`: visual robot, no contacts).
    pub collide: bool,
    /// Which of the URDF's `<collision>` elements are used.
    pub collision: RobotCollision,
    /// Directories searched for `package://` mesh files, as written (relative to the scene
    /// file); then the scene file's directory and `ROS_PACKAGE_PATH`.
    pub package_dirs: Vec<String>,
    /// Extra collision shapes by link name (`{link, type, ...}`), e.g. feet spheres for robots
    /// whose URDF collision meshes are not at hand.
    pub shapes: Vec<(String, ShapeSpec)>,
    /// Spring stiffness of every 1-dof joint towards its `q0` (a passive posture hold), N·m/rad.
    pub joint_stiffness: f64,
    /// Viscous damping of every 1-dof joint (added to the URDF's), N·m·s/rad.
    pub joint_damping: f64,
}

/// A loop-closure joint between two bodies (Choreonoid's extra joint).
#[derive(Clone, Debug, PartialEq)]
pub struct LoopConstraint {
    /// Name.
    pub name: String,
    /// `revolute` or `ball` (a revolute loop is a ball loop plus two rotational rows; planar
    /// loops only need the point rows).
    pub kind: String,
    /// First body.
    pub body_a: String,
    /// Anchor in `body_a`'s frame.
    pub anchor_a: [f64; 3],
    /// Second body.
    pub body_b: String,
    /// Anchor in `body_b`'s frame.
    pub anchor_b: [f64; 3],
    /// Hinge axis in `body_a`'s frame (revolute).
    pub axis_a: [f64; 3],
}

/// Per-pair contact settings.
#[derive(Clone, Debug, PartialEq)]
pub struct PairSpec {
    /// The two bodies.
    pub bodies: [String; 2],
    /// Their contact mode.
    pub mode: ContactMode,
}

/// A whole scene.
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    /// `karakuri-validation-scene` or `karakuri-scene`.
    pub schema: String,
    /// Schema version.
    pub schema_version: u64,
    /// Short name.
    pub name: String,
    /// World parameters.
    pub world: WorldParams,
    /// Contact model.
    pub contact: ContactParams,
    /// Engine.
    pub engine: EngineParams,
    /// Materials by name, in file order.
    pub materials: Vec<(String, Material)>,
    /// Used by shapes with no material.
    pub default_material: Material,
    /// Bodies, parents first.
    pub bodies: Vec<BodySpec>,
    /// Robots from URDF.
    pub robots: Vec<RobotSpec>,
    /// Loop closures.
    pub loop_constraints: Vec<LoopConstraint>,
    /// Body pairs that never collide.
    pub collision_exclude_pairs: Vec<[String; 2]>,
    /// Per-pair contact modes.
    pub contact_pairs: Vec<PairSpec>,
    /// Every other top-level key (title, description, conventions, expected values, ...),
    /// kept as written.
    pub extra: Map<String, Value>,
    /// The file it was read from, or the name given to [`Scene::from_str`] (relative mesh and
    /// URDF paths are resolved against its directory).
    pub source: Option<PathBuf>,
}

impl Default for ContactParams {
    fn default() -> Self {
        ContactParams {
            error_correction_rate: 0.2,
            penetration_tolerance: 0.001,
            restitution_threshold_velocity: 0.1,
            friction_threshold_velocity: 0.01,
            exclude_parent_child: true,
            prediction_distance: 0.01,
            mode: ContactMode::Lcp,
            solver_hint: None,
        }
    }
}

impl Default for EngineParams {
    fn default() -> Self {
        EngineParams {
            kind: "native".into(),
            integrator: Integrator::SemiImplicitEuler,
            solver: SolverKind::Auto,
            max_iterations: 50,
            tolerance: 1e-6,
            warm_start: true,
            direct_max_rows: 24,
            loop_correction_rate: 0.2,
            loop_projection: true,
            max_speed: 1e4,
        }
    }
}

/// The shortest time step a scene may ask for (s): below it the step count of any useful run
/// exceeds [`crate::world::MAX_STEPS`], and rates such as `γ / dt` leave the floating-point range.
pub const MIN_DT: f64 = 1e-9;

const DEFAULT_MATERIAL: Material = Material {
    static_friction: 0.5,
    dynamic_friction: 0.5,
    restitution: 0.0,
};

/// URDF files inside the binary, by the name a scene's `robots[].urdf` gives them: the bundled
/// demo's robot, so that the demo runs from a copied binary.
pub const BUILTIN_URDFS: &[(&str, &str)] = &[("builtin:solo12.urdf", include_str!("../../../tests/data/solo12.urdf"))];

/// The text of a built-in URDF (`builtin:<name>`), `None` for any other path.
pub fn builtin_urdf(path: &str) -> Option<&'static str> {
    BUILTIN_URDFS.iter().find(|(name, _)| *name == path).map(|(_, xml)| *xml)
}

impl Scene {
    /// Reads a scene from a `.json`, `.yaml` or `.yml` file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Scene, SimError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
        if !matches!(ext.as_str(), "json" | "yaml" | "yml") {
            let hint = match ext.as_str() {
                "urdf" | "xml" | "xacro" | "mjcf" | "sdf" => {
                    " (a robot model is not a scene: name it in a scene's robots[].urdf; MJCF and SDF are not read)"
                }
                _ => "",
            };
            return Err(SimError::Scene {
                file,
                path: String::new(),
                reason: format!(
                    "unknown scene format '{}': scene files are .json, .yaml or .yml{hint}",
                    if ext.is_empty() { "no extension".to_string() } else { format!(".{ext}") }
                ),
            });
        }
        let text = std::fs::read_to_string(path).map_err(|e| SimError::Scene {
            file: file.clone(),
            path: String::new(),
            reason: format!("cannot read the scene file: {e}"),
        })?;
        let mut scene = Scene::from_str(&text, &file)?;
        scene.source = Some(path.to_path_buf());
        Ok(scene)
    }

    /// Parses a scene; `file` names it in errors, relative paths in it (mesh files, URDF files)
    /// are resolved against its directory, and its extension (`.yaml`/`.yml`) selects YAML,
    /// anything else JSON.
    pub fn from_str(text: &str, file: &str) -> Result<Scene, SimError> {
        let lower = file.to_ascii_lowercase();
        let yaml = lower.ends_with(".yaml") || lower.ends_with(".yml");
        let value: Value = if yaml {
            serde_saphyr::from_str(text).map_err(|e| SimError::Scene {
                file: file.into(),
                path: String::new(),
                reason: format!("not valid YAML: {e}"),
            })?
        } else {
            serde_json::from_str(text).map_err(|e| SimError::Scene {
                file: file.into(),
                path: String::new(),
                reason: format!("not valid JSON: {e}"),
            })?
        };
        Scene::from_value(&value, file)
    }

    /// Builds a scene from a value tree (as read from JSON or YAML); `file` as in
    /// [`Scene::from_str`].
    pub fn from_value(value: &Value, file: &str) -> Result<Scene, SimError> {
        let r = Reader {
            file,
            path: String::new(),
            value,
        };
        let mut scene = parse_scene(&r)?;
        scene.source = Some(PathBuf::from(file));
        Ok(scene)
    }

    /// Writes every parameter (defaults included) as a value tree.
    pub fn to_value(&self) -> Value {
        write_scene(self)
    }

    /// Writes the scene to `path`, as YAML for `.yaml`/`.yml` and JSON otherwise. Relative
    /// file references (mesh files, URDF files, package directories) are rewritten relative to
    /// the new file's directory when it differs from the directory they were read against.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), SimError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let to_dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let v = self.rebased(&self.base_dir(), &to_dir).to_value();
        let text = if file.ends_with(".yaml") || file.ends_with(".yml") {
            serde_saphyr::to_string(&v).map_err(|e| SimError::Output(format!("{file}: {e}")))?
        } else {
            serde_json::to_string_pretty(&v).map_err(|e| SimError::Output(format!("{file}: {e}")))?
        };
        std::fs::write(path, text).map_err(|e| SimError::Output(format!("{file}: {e}")))
    }

    /// The material of a shape (its own or the default).
    pub fn material(&self, name: Option<&str>) -> Material {
        name.and_then(|n| self.materials.iter().find(|(k, _)| k == n))
            .map(|(_, m)| *m)
            .unwrap_or(self.default_material)
    }

    /// Index of a body by name.
    pub fn body_index(&self, name: &str) -> Option<usize> {
        self.bodies.iter().position(|b| b.name == name)
    }

    /// A copy whose relative file references, read against `from`, point to the same files
    /// from `to` (unchanged where either directory or the file cannot be resolved).
    fn rebased(&self, from: &Path, to: &Path) -> Scene {
        let mut s = self.clone();
        let (Ok(from_c), Ok(to_c)) = (from.canonicalize(), to.canonicalize()) else {
            return s;
        };
        if from_c == to_c {
            return s;
        }
        let fix = |p: &mut String| {
            if Path::new(p.as_str()).is_absolute() || p.contains("://") || builtin_urdf(p).is_some() {
                return;
            }
            if let Ok(target) = from_c.join(p.as_str()).canonicalize() {
                if let Some(r) = relative_path(&target, &to_c) {
                    *p = r.to_string_lossy().into_owned();
                }
            }
        };
        let fix_shape = |sh: &mut ShapeSpec| {
            if let Geometry::ConvexMesh { file: Some(f), .. } | Geometry::TriMesh { file: Some(f), .. } = &mut sh.geometry {
                fix(&mut f.path);
            }
        };
        for b in &mut s.bodies {
            b.shapes.iter_mut().for_each(fix_shape);
        }
        for r in &mut s.robots {
            fix(&mut r.urdf);
            r.package_dirs.iter_mut().for_each(fix);
            r.shapes.iter_mut().for_each(|(_, sh)| fix_shape(sh));
        }
        s
    }

    /// The directory relative paths are resolved against.
    pub fn base_dir(&self) -> PathBuf {
        self.source
            .as_ref()
            .and_then(|p| p.parent())
            .filter(|d| !d.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."))
    }
}

// ---------------------------------------------------------------------------------------------
// Reading with paths
// ---------------------------------------------------------------------------------------------

/// A value and where it is.
#[derive(Clone)]
struct Reader<'a> {
    file: &'a str,
    path: String,
    value: &'a Value,
}

impl<'a> Reader<'a> {
    fn err<T>(&self, reason: impl Into<String>) -> Result<T, SimError> {
        Err(SimError::Scene {
            file: self.file.into(),
            path: self.path.clone(),
            reason: reason.into(),
        })
    }
    fn key_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }
    fn get(&self, key: &str) -> Option<Reader<'a>> {
        match self.value.get(key) {
            None | Some(Value::Null) => None,
            Some(v) => Some(Reader {
                file: self.file,
                path: self.key_path(key),
                value: v,
            }),
        }
    }
    fn req(&self, key: &str) -> Result<Reader<'a>, SimError> {
        match self.get(key) {
            Some(r) => Ok(r),
            None => Err(SimError::Scene {
                file: self.file.into(),
                path: self.key_path(key),
                reason: "missing".into(),
            }),
        }
    }
    fn object(&self) -> Result<&'a Map<String, Value>, SimError> {
        match self.value {
            Value::Object(m) => Ok(m),
            _ => self.err("expected a mapping"),
        }
    }
    fn items(&self) -> Result<Vec<Reader<'a>>, SimError> {
        match self.value {
            Value::Array(a) => Ok(a
                .iter()
                .enumerate()
                .map(|(i, v)| Reader {
                    file: self.file,
                    path: format!("{}[{i}]", self.path),
                    value: v,
                })
                .collect()),
            _ => self.err("expected a list"),
        }
    }
    fn f64(&self) -> Result<f64, SimError> {
        match self.value.as_f64() {
            Some(x) if x.is_finite() => Ok(x),
            Some(_) => self.err("must be finite"),
            None => self.err(format!("expected a number, found {}", short(self.value))),
        }
    }
    fn nonneg(&self) -> Result<f64, SimError> {
        let x = self.f64()?;
        if x < 0.0 {
            return self.err(format!("must be non-negative (found {x})"));
        }
        Ok(x)
    }
    fn positive(&self) -> Result<f64, SimError> {
        let x = self.f64()?;
        if x <= 0.0 {
            return self.err(format!("must be positive (found {x})"));
        }
        Ok(x)
    }
    fn bool(&self) -> Result<bool, SimError> {
        self.value
            .as_bool()
            .map_or_else(|| self.err("expected true or false"), Ok)
    }
    fn str(&self) -> Result<&'a str, SimError> {
        self.value.as_str().map_or_else(
            || self.err(format!("expected a string, found {}", short(self.value))),
            Ok,
        )
    }
    fn usize(&self) -> Result<usize, SimError> {
        self.value
            .as_u64()
            .map_or_else(|| self.err("expected a non-negative integer"), |x| Ok(x as usize))
    }
    fn vec<const N: usize>(&self) -> Result<[f64; N], SimError> {
        let items = self.items()?;
        if items.len() != N {
            return self.err(format!("expected {N} numbers, found {}", items.len()));
        }
        let mut out = [0.0; N];
        for (o, it) in out.iter_mut().zip(&items) {
            *o = it.f64()?;
        }
        Ok(out)
    }
    fn opt_f64(&self, key: &str, default: f64) -> Result<f64, SimError> {
        self.get(key).map_or(Ok(default), |r| r.f64())
    }
    fn opt_nonneg(&self, key: &str, default: f64) -> Result<f64, SimError> {
        self.get(key).map_or(Ok(default), |r| r.nonneg())
    }
    fn opt_bool(&self, key: &str, default: bool) -> Result<bool, SimError> {
        self.get(key).map_or(Ok(default), |r| r.bool())
    }
    fn opt_string(&self, key: &str) -> Result<Option<String>, SimError> {
        self.get(key).map(|r| r.str().map(str::to_string)).transpose()
    }
    fn opt_vec3(&self, key: &str, default: [f64; 3]) -> Result<[f64; 3], SimError> {
        self.get(key).map_or(Ok(default), |r| r.vec::<3>())
    }
    fn unit_axis(&self) -> Result<[f64; 3], SimError> {
        let a = self.vec::<3>()?;
        let n = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
        if (n - 1.0).abs() > 1e-6 {
            return self.err(format!("axis must be a unit vector (norm {n})"));
        }
        Ok([a[0] / n, a[1] / n, a[2] / n])
    }
    fn quat(&self) -> Result<[f64; 4], SimError> {
        let q = self.vec::<4>()?;
        let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
        if (n - 1.0).abs() > 1e-6 {
            return self.err(format!("quaternion [x, y, z, w] must be unit (norm {n:.9})"));
        }
        // normalise, but keep an already unit quaternion bit for bit (save/reload is exact)
        if (n * n - 1.0).abs() < 1e-14 {
            return Ok(q);
        }
        Ok([q[0] / n, q[1] / n, q[2] / n, q[3] / n])
    }
    fn pose(&self) -> Result<Pose, SimError> {
        self.object()?;
        Ok(Pose {
            position: self.opt_vec3("position", [0.0; 3])?,
            orientation: self.get("orientation").map_or(Ok([0.0, 0.0, 0.0, 1.0]), |r| r.quat())?,
        })
    }
    fn opt_pose(&self, key: &str) -> Result<Pose, SimError> {
        self.get(key).map_or(Ok(Pose::default()), |r| r.pose())
    }
    fn twist(&self) -> Result<Twist, SimError> {
        self.object()?;
        Ok(Twist {
            linear: self.opt_vec3("linear", [0.0; 3])?,
            angular: self.opt_vec3("angular", [0.0; 3])?,
        })
    }
    /// Errors on keys outside `known` (typos would otherwise be silently ignored).
    fn known_keys(&self, known: &[&str]) -> Result<(), SimError> {
        for k in self.object()?.keys() {
            if !known.contains(&k.as_str()) {
                return Err(SimError::Scene {
                    file: self.file.into(),
                    path: self.key_path(k),
                    reason: format!("unknown key (expected one of: {})", known.join(", ")),
                });
            }
        }
        Ok(())
    }
}

/// `target` relative to the directory `dir` (both absolute and canonical).
fn relative_path(target: &Path, dir: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let t: Vec<Component> = target.components().collect();
    let d: Vec<Component> = dir.components().collect();
    if t.first() != d.first() {
        return None; // another root or drive
    }
    let common = t.iter().zip(&d).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..d.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c.as_os_str());
    }
    Some(out)
}

/// The value as written, cut to 40 characters (characters, not bytes: a cut inside a multi-byte
/// character would panic).
fn short(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(40) {
        Some((end, _)) => format!("{}...", &s[..end]),
        None => s,
    }
}

const TOP_KEYS: &[&str] = &[
    "schema",
    "schema_version",
    "name",
    "world",
    "contact",
    "engine",
    "materials",
    "default_material",
    "bodies",
    "robots",
    "loop_constraints",
    "collision_exclude_pairs",
    "contact_pairs",
];

fn parse_scene(r: &Reader) -> Result<Scene, SimError> {
    r.object()?;
    let schema = r.opt_string("schema")?.unwrap_or_else(|| "karakuri-scene".into());
    let schema_version = r.get("schema_version").map_or(Ok(1), |v| v.usize())? as u64;
    let name = r.opt_string("name")?.unwrap_or_else(|| "scene".into());

    let world = match r.get("world") {
        Some(w) => {
            w.known_keys(&["gravity", "dt", "duration", "integrator_hint"])?;
            let dt = w.get("dt").map_or(Ok(0.001), |x| x.positive())?;
            if dt < MIN_DT {
                return w.req("dt")?.err(format!("must be at least {MIN_DT:e} s (found {dt:e})"));
            }
            let duration = w.get("duration").map_or(Ok(1.0), |x| x.nonneg())?;
            if let Err(e) = crate::world::step_count(duration, dt) {
                return w.req("duration")?.err(e.to_string());
            }
            WorldParams {
                gravity: w.opt_vec3("gravity", [0.0, 0.0, -9.81])?,
                dt,
                duration,
                integrator_hint: w.opt_string("integrator_hint")?,
            }
        }
        None => WorldParams {
            gravity: [0.0, 0.0, -9.81],
            dt: 0.001,
            duration: 1.0,
            integrator_hint: None,
        },
    };

    let d = ContactParams::default();
    let contact = match r.get("contact") {
        Some(c) => {
            c.known_keys(&[
                "error_correction_rate",
                "penetration_tolerance",
                "restitution_threshold_velocity",
                "friction_threshold_velocity",
                "exclude_parent_child",
                "prediction_distance",
                "mode",
                "stiffness",
                "damping",
                "solver_hint",
            ])?;
            let rate = c.opt_nonneg("error_correction_rate", d.error_correction_rate)?;
            if rate > 1.0 {
                return c.req("error_correction_rate")?.err("must be within [0, 1]");
            }
            ContactParams {
                error_correction_rate: rate,
                penetration_tolerance: c.opt_nonneg("penetration_tolerance", d.penetration_tolerance)?,
                restitution_threshold_velocity: c
                    .opt_nonneg("restitution_threshold_velocity", d.restitution_threshold_velocity)?,
                friction_threshold_velocity: c
                    .opt_nonneg("friction_threshold_velocity", d.friction_threshold_velocity)?,
                exclude_parent_child: c.opt_bool("exclude_parent_child", d.exclude_parent_child)?,
                prediction_distance: c.opt_nonneg("prediction_distance", d.prediction_distance)?,
                mode: parse_mode(&c)?.unwrap_or(ContactMode::Lcp),
                solver_hint: c.opt_string("solver_hint")?,
            }
        }
        None => d,
    };

    let de = EngineParams::default();
    let engine = match r.get("engine") {
        Some(e) => {
            e.known_keys(&[
                "type",
                "integrator",
                "solver",
                "max_iterations",
                "tolerance",
                "warm_start",
                "direct_max_rows",
                "loop_correction_rate",
                "loop_projection",
                "max_speed",
            ])?;
            let kind = e.opt_string("type")?.unwrap_or(de.kind.clone());
            if kind != "native" {
                return e
                    .req("type")?
                    .err(format!("unknown engine '{kind}' (available: native)"));
            }
            let integrator = match e.get("integrator") {
                None => de.integrator,
                Some(i) => match i.str()? {
                    "semi_implicit_euler" | "semi-implicit" | "euler" => Integrator::SemiImplicitEuler,
                    "rk4" => Integrator::Rk4,
                    o => return i.err(format!("unknown integrator '{o}' (semi_implicit_euler, rk4)")),
                },
            };
            let solver = match e.get("solver") {
                None => de.solver,
                Some(s) => match s.str()? {
                    "pgs" => SolverKind::Pgs,
                    "auto" => SolverKind::Auto,
                    o => return s.err(format!("unknown solver '{o}' (pgs, auto)")),
                },
            };
            EngineParams {
                kind,
                integrator,
                solver,
                max_iterations: e.get("max_iterations").map_or(Ok(de.max_iterations), |x| x.usize())?,
                tolerance: e.opt_nonneg("tolerance", de.tolerance)?,
                warm_start: e.opt_bool("warm_start", de.warm_start)?,
                direct_max_rows: e.get("direct_max_rows").map_or(Ok(de.direct_max_rows), |x| x.usize())?,
                loop_correction_rate: e.opt_nonneg("loop_correction_rate", de.loop_correction_rate)?,
                loop_projection: e.opt_bool("loop_projection", de.loop_projection)?,
                max_speed: e.get("max_speed").map_or(Ok(de.max_speed), |x| x.positive())?,
            }
        }
        None => de,
    };

    let mut materials = Vec::new();
    if let Some(m) = r.get("materials") {
        for (k, v) in m.object()? {
            let mr = Reader {
                file: r.file,
                path: m.key_path(k),
                value: v,
            };
            materials.push((k.clone(), parse_material(&mr)?));
        }
    }
    let default_material = match r.get("default_material") {
        Some(m) => parse_material(&m)?,
        None => DEFAULT_MATERIAL,
    };

    let mut bodies: Vec<BodySpec> = Vec::new();
    if let Some(bs) = r.get("bodies") {
        for br in bs.items()? {
            let b = parse_body(&br, &bodies, &materials)?;
            bodies.push(b);
        }
    }

    let mut robots = Vec::new();
    if let Some(rs) = r.get("robots") {
        for rr in rs.items()? {
            robots.push(parse_robot(&rr, &materials)?);
        }
    }

    let known_body = |rr: &Reader, name: &str| -> Result<(), SimError> {
        if bodies.iter().any(|b| b.name == name) || robots.iter().any(|ro| name.starts_with(&format!("{}/", ro.name))) {
            Ok(())
        } else {
            rr.err(format!("unknown body '{name}'"))
        }
    };

    let mut loop_constraints = Vec::new();
    if let Some(ls) = r.get("loop_constraints") {
        for lr in ls.items()? {
            let kind = lr.opt_string("type")?.unwrap_or_else(|| "revolute".into());
            if kind != "revolute" && kind != "ball" {
                return lr
                    .req("type")?
                    .err(format!("unknown loop constraint type '{kind}' (revolute, ball)"));
            }
            let body_a = lr.req("body_a")?.str()?.to_string();
            known_body(&lr.req("body_a")?, &body_a)?;
            let body_b = lr.req("body_b")?.str()?.to_string();
            known_body(&lr.req("body_b")?, &body_b)?;
            loop_constraints.push(LoopConstraint {
                name: lr
                    .opt_string("name")?
                    .unwrap_or_else(|| format!("loop{}", loop_constraints.len())),
                kind,
                body_a,
                anchor_a: lr.opt_vec3("anchor_a", [0.0; 3])?,
                body_b,
                anchor_b: lr.opt_vec3("anchor_b", [0.0; 3])?,
                axis_a: lr.get("axis_a").map_or(Ok([0.0, 0.0, 1.0]), |a| a.unit_axis())?,
            });
        }
    }

    let pair = |pr: &Reader| -> Result<[String; 2], SimError> {
        let items = pr.items()?;
        if items.len() != 2 {
            return pr.err("expected two body names");
        }
        let a = items[0].str()?.to_string();
        known_body(&items[0], &a)?;
        let b = items[1].str()?.to_string();
        known_body(&items[1], &b)?;
        Ok([a, b])
    };
    let mut collision_exclude_pairs = Vec::new();
    if let Some(ps) = r.get("collision_exclude_pairs") {
        for pr in ps.items()? {
            collision_exclude_pairs.push(pair(&pr)?);
        }
    }
    let mut contact_pairs = Vec::new();
    if let Some(ps) = r.get("contact_pairs") {
        for pr in ps.items()? {
            pr.known_keys(&["bodies", "mode", "stiffness", "damping"])?;
            let bodies = pair(&pr.req("bodies")?)?;
            let mode = parse_mode(&pr)?.map_or_else(|| pr.err("missing mode (none, lcp, penalty)"), Ok)?;
            contact_pairs.push(PairSpec { bodies, mode });
        }
    }

    let mut extra = Map::new();
    for (k, v) in r.object()? {
        if !TOP_KEYS.contains(&k.as_str()) {
            extra.insert(k.clone(), v.clone());
        }
    }

    Ok(Scene {
        schema,
        schema_version,
        name,
        world,
        contact,
        engine,
        materials,
        default_material,
        bodies,
        robots,
        loop_constraints,
        collision_exclude_pairs,
        contact_pairs,
        extra,
        source: None,
    })
}

fn parse_mode(r: &Reader) -> Result<Option<ContactMode>, SimError> {
    let Some(m) = r.get("mode") else { return Ok(None) };
    Ok(Some(match m.str()? {
        "none" => ContactMode::None,
        "lcp" => ContactMode::Lcp,
        "penalty" => ContactMode::Penalty {
            stiffness: r.req("stiffness")?.positive()?,
            damping: r.get("damping").map_or(Ok(0.0), |x| x.nonneg())?,
        },
        o => return m.err(format!("unknown contact mode '{o}' (none, lcp, penalty)")),
    }))
}

fn parse_material(m: &Reader) -> Result<Material, SimError> {
    m.known_keys(&["static_friction", "dynamic_friction", "restitution"])?;
    let static_friction = m.req("static_friction")?.nonneg()?;
    let dynamic_friction = m.get("dynamic_friction").map_or(Ok(static_friction), |x| x.nonneg())?;
    let restitution = m.opt_nonneg("restitution", 0.0)?;
    if restitution > 1.0 {
        return m
            .req("restitution")?
            .err(format!("restitution must be within [0, 1] (found {restitution})"));
    }
    Ok(Material {
        static_friction,
        dynamic_friction,
        restitution,
    })
}

fn check_material(r: &Reader, materials: &[(String, Material)]) -> Result<Option<String>, SimError> {
    match r.get("material") {
        None => Ok(None),
        Some(m) => {
            let name = m.str()?;
            if !materials.iter().any(|(k, _)| k == name) {
                let known: Vec<&str> = materials.iter().map(|(k, _)| k.as_str()).collect();
                return m.err(format!(
                    "unknown material '{name}' (defined: {})",
                    if known.is_empty() {
                        "none".into()
                    } else {
                        known.join(", ")
                    }
                ));
            }
            Ok(Some(name.to_string()))
        }
    }
}

fn parse_body(r: &Reader, earlier: &[BodySpec], materials: &[(String, Material)]) -> Result<BodySpec, SimError> {
    r.known_keys(&[
        "name",
        "parent",
        "pose_in_parent",
        "joints",
        "mass",
        "com",
        "inertia",
        "shapes",
        "initial_world_pose",
    ])?;
    let name = r.req("name")?.str()?.to_string();
    if name == "world" || earlier.iter().any(|b| b.name == name) {
        return r.req("name")?.err(format!("body name '{name}' is already used"));
    }
    let parent = r
        .get("parent")
        .map_or(Ok("world".to_string()), |p| p.str().map(str::to_string))?;
    if parent != "world" && !earlier.iter().any(|b| b.name == parent) {
        return r.req("parent")?.err(format!(
            "unknown parent '{parent}' (parents must come before their children)"
        ));
    }
    let mut joints = Vec::new();
    if let Some(js) = r.get("joints") {
        let items = js.items()?;
        for (k, jr) in items.iter().enumerate() {
            let j = parse_joint(jr, &name, k)?;
            if matches!(j, JointSpec::Free { .. }) && (k > 0 || items.len() > 1) {
                return jr.err("a free joint must be the body's only joint");
            }
            if matches!(j, JointSpec::Free { .. }) && parent != "world" {
                return jr.err("a free joint needs parent 'world'");
            }
            joints.push(j);
        }
    }
    let is_static = joints.is_empty() && parent == "world";
    let mass = match r.get("mass") {
        Some(m) => {
            let x = m.f64()?;
            if x < 0.0 {
                return m.err(format!("mass must be non-negative (found {x})"));
            }
            x
        }
        None => 0.0,
    };
    let inertia = match r.get("inertia") {
        Some(ir) => {
            let rows = ir.items()?;
            if rows.len() != 3 {
                return ir.err("expected a 3x3 matrix");
            }
            let mut m = [[0.0; 3]; 3];
            for (i, row) in rows.iter().enumerate() {
                m[i] = row.vec::<3>()?;
            }
            for i in 0..3 {
                for j in 0..3 {
                    if (m[i][j] - m[j][i]).abs() > 1e-9 * (1.0 + m[i][j].abs()) {
                        return ir.err("inertia must be symmetric");
                    }
                }
                if m[i][i] < 0.0 {
                    return ir.err("inertia diagonal must be non-negative");
                }
            }
            m
        }
        None => [[0.0; 3]; 3],
    };
    if !is_static && joints.iter().any(|j| matches!(j, JointSpec::Free { .. })) && mass <= 0.0 {
        return r
            .get("mass")
            .unwrap_or_else(|| r.clone())
            .err("a free body needs a positive mass");
    }
    let mut shapes = Vec::new();
    if let Some(ss) = r.get("shapes") {
        for sr in ss.items()? {
            let s = parse_shape(&sr, materials)?;
            if matches!(s.geometry, Geometry::TriMesh { .. } | Geometry::Plane) && !is_static && s.collide {
                return sr
                    .req("type")?
                    .err("planes and triangle meshes are for static bodies only (use a box or a convex mesh)");
            }
            shapes.push(s);
        }
    }
    Ok(BodySpec {
        name,
        parent,
        pose_in_parent: r.opt_pose("pose_in_parent")?,
        joints,
        mass,
        com: r.opt_vec3("com", [0.0; 3])?,
        inertia,
        shapes,
        initial_world_pose: r.get("initial_world_pose").map(|p| p.pose()).transpose()?,
    })
}

fn parse_joint(r: &Reader, body: &str, k: usize) -> Result<JointSpec, SimError> {
    let ty = r.req("type")?;
    let name = r.opt_string("name")?.unwrap_or_else(|| format!("{body}_j{k}"));
    match ty.str()? {
        "free" => {
            r.known_keys(&["name", "type", "q0", "qd0"])?;
            Ok(JointSpec::Free {
                name,
                q0: r.opt_pose("q0")?,
                qd0: r.get("qd0").map_or(Ok(Twist::default()), |t| t.twist())?,
            })
        }
        t @ ("revolute" | "prismatic") => {
            r.known_keys(&[
                "name",
                "type",
                "axis",
                "anchor",
                "q0",
                "qd0",
                "limits",
                "damping",
                "stiffness",
                "spring_reference",
                "armature",
            ])?;
            let limits = match r.get("limits") {
                None => None,
                Some(l) => {
                    let lim = l.vec::<2>()?;
                    if lim[0] > lim[1] {
                        return l.err("lower limit above upper limit");
                    }
                    Some(lim)
                }
            };
            Ok(JointSpec::Hinge {
                name,
                prismatic: t == "prismatic",
                axis: r.req("axis")?.unit_axis()?,
                anchor: r.opt_vec3("anchor", [0.0; 3])?,
                q0: r.opt_f64("q0", 0.0)?,
                qd0: r.opt_f64("qd0", 0.0)?,
                limits,
                damping: r.opt_nonneg("damping", 0.0)?,
                stiffness: r.opt_nonneg("stiffness", 0.0)?,
                spring_reference: r.opt_f64("spring_reference", 0.0)?,
                armature: r.opt_nonneg("armature", 0.0)?,
            })
        }
        o => ty.err(format!("unknown joint type '{o}' (free, revolute, prismatic)")),
    }
}

fn parse_shape(r: &Reader, materials: &[(String, Material)]) -> Result<ShapeSpec, SimError> {
    parse_shape_with(r, materials, &[])
}

fn parse_shape_with(r: &Reader, materials: &[(String, Material)], more: &[&str]) -> Result<ShapeSpec, SimError> {
    let ty = r.req("type")?;
    let common: Vec<&str> = ["type", "name", "pose", "material", "collide"]
        .iter()
        .chain(more)
        .copied()
        .collect();
    let keys = |extra: &[&str]| -> Result<(), SimError> {
        let all: Vec<&str> = common.iter().chain(extra).copied().collect();
        r.known_keys(&all)
    };
    let geometry = match ty.str()? {
        "sphere" => {
            keys(&["radius"])?;
            Geometry::Sphere {
                radius: r.req("radius")?.positive()?,
            }
        }
        "box" => {
            keys(&["half_extents"])?;
            let he = r.req("half_extents")?;
            let h = he.vec::<3>()?;
            if h.iter().any(|x| *x <= 0.0) {
                return he.err("half extents must be positive");
            }
            Geometry::Box { half_extents: h }
        }
        "capsule" => {
            keys(&["radius", "half_length"])?;
            Geometry::Capsule {
                radius: r.req("radius")?.positive()?,
                half_length: r.req("half_length")?.nonneg()?,
            }
        }
        "cylinder" => {
            keys(&["radius", "half_length"])?;
            Geometry::Cylinder {
                radius: r.req("radius")?.positive()?,
                half_length: r.req("half_length")?.positive()?,
            }
        }
        "plane" => {
            keys(&[])?;
            Geometry::Plane
        }
        "convex_mesh" => {
            keys(&["vertices", "file", "scale"])?;
            if let Some((mesh, file)) = mesh_file(r)? {
                if let Err(e) = crate::mesh::check_hull_points(&mesh.vertices) {
                    return r.req("file")?.err(format!("'{}': {e}", file.path));
                }
                Geometry::ConvexMesh {
                    vertices: mesh.vertices,
                    file: Some(file),
                }
            } else {
                let vr = r.req("vertices")?;
                let vertices = vr
                    .items()?
                    .iter()
                    .map(|v| v.vec::<3>())
                    .collect::<Result<Vec<_>, _>>()?;
                if let Err(e) = crate::mesh::check_hull_points(&vertices) {
                    return vr.err(e);
                }
                Geometry::ConvexMesh { vertices, file: None }
            }
        }
        "trimesh" => {
            keys(&["vertices", "triangles", "file", "scale"])?;
            if let Some((mesh, file)) = mesh_file(r)? {
                if mesh.triangles.is_empty() {
                    return r.req("file")?.err(format!("'{}': the mesh has no triangles", file.path));
                }
                return finish_shape(
                    r,
                    materials,
                    Geometry::TriMesh {
                        vertices: mesh.vertices,
                        triangles: mesh.triangles,
                        file: Some(file),
                    },
                );
            }
            let vertices = r
                .req("vertices")?
                .items()?
                .iter()
                .map(|v| v.vec::<3>())
                .collect::<Result<Vec<_>, _>>()?;
            let tr = r.req("triangles")?;
            let mut triangles = Vec::new();
            for t in tr.items()? {
                let tri = t.vec::<3>()?;
                if tri
                    .iter()
                    .any(|&i| i < 0.0 || i.fract() != 0.0 || i as usize >= vertices.len())
                {
                    return t.err(format!(
                        "triangle indices must be integers below the vertex count {}",
                        vertices.len()
                    ));
                }
                triangles.push([tri[0] as u32, tri[1] as u32, tri[2] as u32]);
            }
            Geometry::TriMesh {
                vertices,
                triangles,
                file: None,
            }
        }
        o => {
            return ty.err(format!(
                "unknown shape type '{o}' (sphere, box, capsule, cylinder, plane, convex_mesh, trimesh)"
            ))
        }
    };
    finish_shape(r, materials, geometry)
}

fn finish_shape(r: &Reader, materials: &[(String, Material)], geometry: Geometry) -> Result<ShapeSpec, SimError> {
    Ok(ShapeSpec {
        name: r.opt_string("name")?,
        geometry,
        pose: r.opt_pose("pose")?,
        material: check_material(r, materials)?,
        collide: r.opt_bool("collide", true)?,
    })
}

/// The `file` (and `scale`) of a mesh shape, read relative to the scene file's directory;
/// `None` when the shape has no `file`.
fn mesh_file(r: &Reader) -> Result<Option<(crate::mesh::MeshData, MeshFile)>, SimError> {
    let Some(fr) = r.get("file") else {
        if let Some(sr) = r.get("scale") {
            return sr.err("`scale` applies to meshes read from a `file` (scale inline vertices yourself)");
        }
        return Ok(None);
    };
    if let Some(vr) = r.get("vertices") {
        return vr.err("give either `vertices` or `file`, not both");
    }
    if let Some(tr) = r.get("triangles") {
        return tr.err("`triangles` come from the mesh file when `file` is given");
    }
    let path = fr.str()?.to_string();
    let scale = match r.get("scale") {
        None => [1.0; 3],
        Some(sr) => {
            let s = sr.vec::<3>()?;
            if s.contains(&0.0) {
                return sr.err("scale factors must be non-zero");
            }
            s
        }
    };
    let base = Path::new(r.file)
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let resolved = crate::mesh::resolve(&base, &path);
    if !resolved.is_file() {
        return fr.err(format!(
            "mesh file '{path}' not found (tried '{}')",
            resolved.display()
        ));
    }
    let mesh = crate::mesh::load(&resolved, scale).or_else(|e| fr.err(e))?;
    Ok(Some((mesh, MeshFile { path, scale })))
}

fn parse_robot(r: &Reader, materials: &[(String, Material)]) -> Result<RobotSpec, SimError> {
    r.known_keys(&[
        "name",
        "urdf",
        "root",
        "pose",
        "q0",
        "v0",
        "base_velocity",
        "material",
        "collide",
        "collision",
        "package_dirs",
        "shapes",
        "joint_stiffness",
        "joint_damping",
    ])?;
    let collision = match r.get("collision") {
        None => RobotCollision::Urdf,
        Some(x) => match x.str()? {
            "urdf" => RobotCollision::Urdf,
            "primitives" => RobotCollision::Primitives,
            "none" => RobotCollision::None,
            o => return x.err(format!("unknown collision source '{o}' (urdf, primitives, none)")),
        },
    };
    let package_dirs = match r.get("package_dirs") {
        None => vec![],
        Some(ds) => ds
            .items()?
            .iter()
            .map(|d| d.str().map(str::to_string))
            .collect::<Result<Vec<_>, _>>()?,
    };
    let root = match r.get("root") {
        None => RobotRoot::Floating,
        Some(x) => match x.str()? {
            "floating" | "free" => RobotRoot::Floating,
            "fixed" => RobotRoot::Fixed,
            o => return x.err(format!("unknown root '{o}' (floating, fixed)")),
        },
    };
    let named = |key: &str| -> Result<Vec<(String, f64)>, SimError> {
        let mut out = Vec::new();
        if let Some(m) = r.get(key) {
            for (k, v) in m.object()? {
                let vr = Reader {
                    file: r.file,
                    path: m.key_path(k),
                    value: v,
                };
                out.push((k.clone(), vr.f64()?));
            }
        }
        Ok(out)
    };
    Ok(RobotSpec {
        name: r.req("name")?.str()?.to_string(),
        urdf: r.req("urdf")?.str()?.to_string(),
        root,
        pose: r.opt_pose("pose")?,
        q0: named("q0")?,
        v0: named("v0")?,
        base_velocity: r.get("base_velocity").map_or(Ok(Twist::default()), |t| t.twist())?,
        material: check_material(r, materials)?,
        collide: r.opt_bool("collide", true)?,
        collision,
        package_dirs,
        joint_stiffness: r.opt_nonneg("joint_stiffness", 0.0)?,
        joint_damping: r.opt_nonneg("joint_damping", 0.0)?,
        shapes: match r.get("shapes") {
            None => vec![],
            Some(ss) => ss
                .items()?
                .iter()
                .map(|sr| {
                    Ok((
                        sr.req("link")?.str()?.to_string(),
                        parse_shape_with(sr, materials, &["link"])?,
                    ))
                })
                .collect::<Result<Vec<_>, SimError>>()?,
        },
    })
}

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

fn pose_v(p: &Pose) -> Value {
    json!({"position": p.position, "orientation": p.orientation})
}

fn mode_into(m: &ContactMode, obj: &mut Map<String, Value>) {
    match m {
        ContactMode::None => {
            obj.insert("mode".into(), json!("none"));
        }
        ContactMode::Lcp => {
            obj.insert("mode".into(), json!("lcp"));
        }
        ContactMode::Penalty { stiffness, damping } => {
            obj.insert("mode".into(), json!("penalty"));
            obj.insert("stiffness".into(), json!(stiffness));
            obj.insert("damping".into(), json!(damping));
        }
    }
}

fn material_v(m: &Material) -> Value {
    json!({"static_friction": m.static_friction, "dynamic_friction": m.dynamic_friction, "restitution": m.restitution})
}

fn write_scene(s: &Scene) -> Value {
    let mut top = Map::new();
    top.insert("schema".into(), json!(s.schema));
    top.insert("schema_version".into(), json!(s.schema_version));
    top.insert("name".into(), json!(s.name));
    for (k, v) in &s.extra {
        top.insert(k.clone(), v.clone());
    }
    let mut world = json!({"gravity": s.world.gravity, "dt": s.world.dt, "duration": s.world.duration});
    if let Some(h) = &s.world.integrator_hint {
        world["integrator_hint"] = json!(h);
    }
    top.insert("world".into(), world);
    let c = &s.contact;
    let mut contact = Map::new();
    contact.insert("error_correction_rate".into(), json!(c.error_correction_rate));
    contact.insert("penetration_tolerance".into(), json!(c.penetration_tolerance));
    contact.insert(
        "restitution_threshold_velocity".into(),
        json!(c.restitution_threshold_velocity),
    );
    contact.insert(
        "friction_threshold_velocity".into(),
        json!(c.friction_threshold_velocity),
    );
    contact.insert("exclude_parent_child".into(), json!(c.exclude_parent_child));
    contact.insert("prediction_distance".into(), json!(c.prediction_distance));
    mode_into(&c.mode, &mut contact);
    if let Some(h) = &c.solver_hint {
        contact.insert("solver_hint".into(), json!(h));
    }
    top.insert("contact".into(), Value::Object(contact));
    let e = &s.engine;
    top.insert(
        "engine".into(),
        json!({
            "type": e.kind,
            "integrator": match e.integrator { Integrator::SemiImplicitEuler => "semi_implicit_euler", Integrator::Rk4 => "rk4" },
            "solver": match e.solver { SolverKind::Pgs => "pgs", SolverKind::Auto => "auto" },
            "max_iterations": e.max_iterations,
            "tolerance": e.tolerance,
            "warm_start": e.warm_start,
            "direct_max_rows": e.direct_max_rows,
            "loop_correction_rate": e.loop_correction_rate,
            "loop_projection": e.loop_projection,
            "max_speed": e.max_speed,
        }),
    );
    let mut mats = Map::new();
    for (k, m) in &s.materials {
        mats.insert(k.clone(), material_v(m));
    }
    top.insert("materials".into(), Value::Object(mats));
    top.insert("default_material".into(), material_v(&s.default_material));
    top.insert("bodies".into(), Value::Array(s.bodies.iter().map(body_v).collect()));
    if !s.robots.is_empty() {
        top.insert("robots".into(), Value::Array(s.robots.iter().map(robot_v).collect()));
    }
    top.insert(
        "loop_constraints".into(),
        Value::Array(
            s.loop_constraints
                .iter()
                .map(|l| {
                    json!({"name": l.name, "type": l.kind, "body_a": l.body_a, "anchor_a": l.anchor_a,
                           "body_b": l.body_b, "anchor_b": l.anchor_b, "axis_a": l.axis_a})
                })
                .collect(),
        ),
    );
    top.insert("collision_exclude_pairs".into(), json!(s.collision_exclude_pairs));
    top.insert(
        "contact_pairs".into(),
        Value::Array(
            s.contact_pairs
                .iter()
                .map(|p| {
                    let mut o = Map::new();
                    o.insert("bodies".into(), json!(p.bodies));
                    mode_into(&p.mode, &mut o);
                    Value::Object(o)
                })
                .collect(),
        ),
    );
    Value::Object(top)
}

fn body_v(b: &BodySpec) -> Value {
    let joints: Vec<Value> = b
        .joints
        .iter()
        .map(|j| match j {
            JointSpec::Free { name, q0, qd0 } => json!({"name": name, "type": "free", "q0": pose_v(q0),
                "qd0": {"linear": qd0.linear, "angular": qd0.angular}}),
            JointSpec::Hinge {
                name,
                prismatic,
                axis,
                anchor,
                q0,
                qd0,
                limits,
                damping,
                stiffness,
                spring_reference,
                armature,
            } => {
                let mut o = json!({"name": name, "type": if *prismatic { "prismatic" } else { "revolute" },
                    "axis": axis, "anchor": anchor, "q0": q0, "qd0": qd0, "damping": damping, "stiffness": stiffness,
                    "spring_reference": spring_reference, "armature": armature});
                if let Some(l) = limits {
                    o["limits"] = json!(l);
                }
                o
            }
        })
        .collect();
    let shapes: Vec<Value> = b.shapes.iter().map(shape_v).collect();
    let mut o = json!({"name": b.name, "parent": b.parent, "pose_in_parent": pose_v(&b.pose_in_parent),
        "joints": joints, "mass": b.mass, "com": b.com, "inertia": b.inertia, "shapes": shapes});
    if let Some(p) = &b.initial_world_pose {
        o["initial_world_pose"] = pose_v(p);
    }
    o
}

fn shape_v(s: &ShapeSpec) -> Value {
    let mut o = Map::new();
    if let Some(n) = &s.name {
        o.insert("name".into(), json!(n));
    }
    let ty = match &s.geometry {
        Geometry::Sphere { radius } => {
            o.insert("radius".into(), json!(radius));
            "sphere"
        }
        Geometry::Box { half_extents } => {
            o.insert("half_extents".into(), json!(half_extents));
            "box"
        }
        Geometry::Capsule { radius, half_length } => {
            o.insert("radius".into(), json!(radius));
            o.insert("half_length".into(), json!(half_length));
            "capsule"
        }
        Geometry::Cylinder { radius, half_length } => {
            o.insert("radius".into(), json!(radius));
            o.insert("half_length".into(), json!(half_length));
            "cylinder"
        }
        Geometry::Plane => "plane",
        Geometry::ConvexMesh { vertices, file } => {
            match file {
                Some(f) => mesh_file_into(f, &mut o),
                None => {
                    o.insert("vertices".into(), json!(vertices));
                }
            }
            "convex_mesh"
        }
        Geometry::TriMesh {
            vertices,
            triangles,
            file,
        } => {
            match file {
                Some(f) => mesh_file_into(f, &mut o),
                None => {
                    o.insert("vertices".into(), json!(vertices));
                    o.insert("triangles".into(), json!(triangles));
                }
            }
            "trimesh"
        }
    };
    o.insert("type".into(), json!(ty));
    o.insert("pose".into(), pose_v(&s.pose));
    o.insert("material".into(), json!(s.material));
    o.insert("collide".into(), json!(s.collide));
    Value::Object(o)
}

fn mesh_file_into(f: &MeshFile, o: &mut Map<String, Value>) {
    o.insert("file".into(), json!(f.path));
    o.insert("scale".into(), json!(f.scale));
}

fn robot_v(r: &RobotSpec) -> Value {
    let named = |v: &[(String, f64)]| Value::Object(v.iter().map(|(k, x)| (k.clone(), json!(x))).collect());
    json!({"name": r.name, "urdf": r.urdf, "root": match r.root { RobotRoot::Floating => "floating", RobotRoot::Fixed => "fixed" },
        "pose": pose_v(&r.pose), "q0": named(&r.q0), "v0": named(&r.v0),
        "base_velocity": {"linear": r.base_velocity.linear, "angular": r.base_velocity.angular},
        "material": r.material, "collide": r.collide,
        "collision": match r.collision { RobotCollision::Urdf => "urdf", RobotCollision::Primitives => "primitives", RobotCollision::None => "none" },
        "package_dirs": r.package_dirs,
        "joint_stiffness": r.joint_stiffness, "joint_damping": r.joint_damping,
        "shapes": r.shapes.iter().map(|(link, sh)| {
            let mut v = shape_v(sh);
            v["link"] = json!(link);
            v
        }).collect::<Vec<_>>()})
}
