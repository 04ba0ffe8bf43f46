//! The scene's types: what a scene file holds, with its defaults. Each type reads and writes
//! itself through serde; the few whose file layout differs from their shape in memory (a
//! shape's `type` beside its sizes, a contact mode's `stiffness` beside its `mode`, a joint's
//! `q0` that is a pose or a number) go through one layout struct each (`scene/layout.rs`), used
//! both ways. Semantic checks (ranges, names, units) are in [`super::validate`].

use serde::{Deserialize, Serialize};

use super::layout::{ContactFile, JointFile, LinkedShapes, MaterialFile, Named, PairFile, ShapeFile};

/// A pose `{position, orientation}`: `x_parent = R(orientation) x_local + position`, the
/// quaternion in `[x, y, z, w]` order (unit).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Twist {
    /// Linear velocity (m/s).
    pub linear: [f64; 3],
    /// Angular velocity (rad/s).
    pub angular: [f64; 3],
}

/// `world`: gravity, time step, duration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorldParams {
    /// Gravity (m/s²), world axes.
    pub gravity: [f64; 3],
    /// Time step (s).
    pub dt: f64,
    /// Default duration of a run (s).
    pub duration: f64,
    /// Free text kept for the reader (the integrator used is `engine.integrator`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub integrator_hint: Option<String>,
}

impl Default for WorldParams {
    fn default() -> Self {
        WorldParams {
            gravity: [0.0, 0.0, -9.81],
            dt: 0.001,
            duration: 1.0,
            integrator_hint: None,
        }
    }
}

/// How a pair of shapes in contact is handled (in files: `mode`, with `stiffness` and `damping`
/// beside it for `penalty`).
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ContactFile", into = "ContactFile")]
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
    /// The fastest a contact's penetration correction may push its bodies apart (m/s), as
    /// PhysX's `maxDepenetrationVelocity`: a body starting deep inside another rises out at
    /// this speed instead of being launched by `error_correction_rate · depth / dt`.
    pub max_depenetration_speed: f64,
    /// Mode of every pair not listed in `contact_pairs`.
    pub mode: ContactMode,
    /// Free text kept for the reader.
    pub solver_hint: Option<String>,
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
            max_depenetration_speed: 0.2,
            mode: ContactMode::Lcp,
            solver_hint: None,
        }
    }
}

/// Integration scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Integrator {
    /// Semi-implicit (symplectic) Euler on the configuration manifold: the default.
    #[serde(alias = "semi-implicit", alias = "euler")]
    SemiImplicitEuler,
    /// Classical Runge–Kutta 4 (contact-free smooth systems only; falls back to semi-implicit
    /// Euler in a step that has contacts or joint limits active).
    Rk4,
}

/// The constraint solver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SolverKind {
    /// Projected Gauss–Seidel.
    Pgs,
    /// The direct solver (dense LDLᵀ with an active set) where the problem has no friction
    /// and at most `direct_max_rows` rows, PGS otherwise: the default.
    Auto,
}

/// The engine that steps a world.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// [`crate::NativeEngine`]: one karakuri model, Springhead's contacts, velocity-level LCP.
    #[default]
    Native,
    /// [`crate::rapier::RapierEngine`]: rapier3d-f64 (impulse-based, multibodies for hinge chains
    /// and robots); compiled only with karakuri-sim's `rapier` feature.
    Rapier,
}

/// `engine`: which engine steps the world and its numerical settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineParams {
    /// The engine (`type: native | rapier`; `name` is read as a synonym).
    #[serde(rename = "type", alias = "name")]
    pub kind: EngineKind,
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
    /// The loop error (m, rad) above which a step projects its end configuration back onto
    /// the loops (with `loop_projection`); below it the drift feed-forward keeps the loops.
    pub loop_tolerance: f64,
    /// Island sleeping: trees at rest stop costing anything until something acts on them.
    pub sleep: SleepParams,
}

/// `engine.sleep`: when resting trees fall asleep (see the native engine's `sleep` stage).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SleepParams {
    /// Whether trees may sleep at all.
    pub enabled: bool,
    /// Linear speed (m/s) every body of a tree stays below to count as still.
    pub linear: f64,
    /// Angular speed (rad/s) every body of a tree stays below to count as still.
    pub angular: f64,
    /// Time (s) all trees of an island must have been still for it to fall asleep.
    pub time: f64,
}

impl Default for SleepParams {
    fn default() -> Self {
        SleepParams {
            enabled: true,
            linear: 0.01,
            angular: 0.05,
            time: 0.5,
        }
    }
}

impl Default for EngineParams {
    fn default() -> Self {
        EngineParams {
            kind: EngineKind::Native,
            integrator: Integrator::SemiImplicitEuler,
            solver: SolverKind::Auto,
            max_iterations: 50,
            tolerance: 1e-6,
            warm_start: true,
            direct_max_rows: 24,
            loop_correction_rate: 0.2,
            loop_projection: true,
            max_speed: 1e4,
            loop_tolerance: 1e-6,
            sleep: SleepParams::default(),
        }
    }
}

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

/// One joint of a body (in files: `type: free | revolute | prismatic`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "JointFile", into = "JointFile")]
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
        /// The joint's actuator, if it has one.
        actuator: Option<ActuatorSpec>,
        /// Coulomb friction (N·m or N): the joint sticks while the other torques on it stay
        /// within it.
        friction: f64,
    },
}

/// How an actuator drives its joint (Choreonoid's actuation modes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActuatorMode {
    /// The target is the joint torque (N·m) or force (N), clamped to the effort limit.
    #[default]
    Torque,
    /// PD servo `kp (target − q) + kd (target_v − dq)` integrated implicitly, effort-limited
    /// (`target_v`: the target's rate).
    Position,
    /// The joint is held at the target speed by a constraint row whose force is bounded by
    /// the effort limit.
    Velocity,
    /// Choreonoid's high-gain mode: the joint follows the target position exactly (a bilateral
    /// velocity row reaching the target at the step's end); the torque that makes it so is
    /// reported. The effort limit is not applied.
    Prescribed,
}

/// A sinusoidal target `offset + amplitude · sin(2π · frequency · t + phase)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Sine {
    /// Amplitude (joint units).
    pub amplitude: f64,
    /// Frequency (Hz).
    pub frequency: f64,
    /// Offset (joint units).
    pub offset: f64,
    /// Phase (rad).
    pub phase: f64,
}

/// A smooth move from `from` to `to` over `[start, start + duration]`, held before and after:
/// `from + (to − from) s(τ)`, `τ = (t − start) / duration`, with the minimum-jerk profile
/// `s = 10τ³ − 15τ⁴ + 6τ⁵` (zero speed and acceleration at both ends).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Ramp {
    /// Value before `start` (joint units).
    pub from: f64,
    /// Value from `start + duration` on (joint units).
    pub to: f64,
    /// When the move starts (s).
    pub start: f64,
    /// How long it takes (s; 0: a step).
    pub duration: f64,
}

/// An actuator's target: a constant, `{sine: {...}}`, `{ramp: {...}}` or `{table: FILE.csv}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Target {
    /// A constant.
    Value(f64),
    /// A sine of time.
    Sine {
        /// Its parameters.
        sine: Sine,
    },
    /// A minimum-jerk move between two values.
    Ramp {
        /// Its parameters.
        ramp: Ramp,
    },
    /// A `time, value` table, linearly interpolated, clamped outside its time range.
    Table {
        /// The table file (read when the scene is loaded).
        table: super::table::TableFile,
    },
}

impl Default for Target {
    fn default() -> Self {
        Target::Value(0.0)
    }
}

impl Target {
    /// The smallest and largest value the target takes (a table's: over its rows).
    pub fn range(&self) -> (f64, f64) {
        match self {
            Target::Value(x) => (*x, *x),
            Target::Sine { sine: s } => (s.offset - s.amplitude.abs(), s.offset + s.amplitude.abs()),
            // the minimum-jerk profile stays between its ends
            Target::Ramp { ramp: r } => (r.from.min(r.to), r.from.max(r.to)),
            Target::Table { table } => {
                let column = table.values.iter().step_by(table.columns.max(1));
                column.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)))
            }
        }
    }

    /// The target at time `t` and its rate (a table's: the slope of its segment at `t`).
    pub fn at(&self, t: f64) -> (f64, f64) {
        match *self {
            Target::Value(x) => (x, 0.0),
            Target::Sine { sine: s } => {
                let w = 2.0 * std::f64::consts::PI * s.frequency;
                let (sn, cs) = (w * t + s.phase).sin_cos();
                (s.offset + s.amplitude * sn, s.amplitude * w * cs)
            }
            Target::Ramp { ramp: r } => {
                let tau = if r.duration > 0.0 {
                    ((t - r.start) / r.duration).clamp(0.0, 1.0)
                } else if t < r.start {
                    0.0
                } else {
                    1.0
                };
                let d = r.to - r.from;
                let s = tau * tau * tau * (10.0 + tau * (-15.0 + 6.0 * tau));
                let ds = if r.duration > 0.0 { 30.0 * tau * tau * (1.0 - tau) * (1.0 - tau) / r.duration } else { 0.0 };
                (r.from + d * s, d * ds)
            }
            Target::Table { ref table } => table.at(t, 0),
        }
    }
}

/// `bodies[].joints[].actuator`: the actuator of a 1-dof joint.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ActuatorSpec {
    /// Actuation mode.
    pub mode: ActuatorMode,
    /// Position gain (N·m/rad or N/m), `position` mode.
    pub kp: f64,
    /// Velocity gain (N·m·s/rad or N·s/m), `position` mode.
    pub kd: f64,
    /// Torque, position or speed, by mode.
    pub target: Target,
    /// Largest torque or force the actuator applies (`None`: the URDF's, else unlimited).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effort_limit: Option<f64>,
    /// Largest target speed (`None`: the URDF's, else unlimited).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub velocity_limit: Option<f64>,
}

/// Which joints of a robot an actuator entry covers: a list of names or `"*"` (every 1-dof
/// joint).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JointSelection {
    /// Joint names (URDF names, without the robot prefix).
    Names(Vec<String>),
    /// `"*"`.
    All(String),
}

/// `robots[].actuators[]`: actuators for some of a robot's joints. Entries apply in order: a
/// later entry replaces an earlier one on the joints they share (`"*"` first, then exceptions).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RobotActuatorSpec {
    /// The joints.
    pub joints: JointSelection,
    /// Actuation mode.
    #[serde(default)]
    pub mode: ActuatorMode,
    /// Position gain.
    #[serde(default)]
    pub kp: f64,
    /// Velocity gain.
    #[serde(default)]
    pub kd: f64,
    /// Target (one for every joint of the entry).
    #[serde(default)]
    pub target: Target,
    /// Effort limit (`None`: each joint's URDF limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort_limit: Option<f64>,
    /// Velocity limit (`None`: each joint's URDF limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub velocity_limit: Option<f64>,
}

impl RobotActuatorSpec {
    /// The actuator each selected joint gets.
    pub fn actuator(&self) -> ActuatorSpec {
        ActuatorSpec {
            mode: self.mode,
            kp: self.kp,
            kd: self.kd,
            target: self.target.clone(),
            effort_limit: self.effort_limit,
            velocity_limit: self.velocity_limit,
        }
    }
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodySpec {
    /// Unique name.
    pub name: String,
    /// `world` or an earlier body.
    #[serde(default = "world")]
    pub parent: String,
    /// Body frame in the parent frame at zero joint positions.
    #[serde(default)]
    pub pose_in_parent: Pose,
    /// Joints, applied in order.
    #[serde(default)]
    pub joints: Vec<JointSpec>,
    /// Mass (kg).
    #[serde(default)]
    pub mass: f64,
    /// Centre of mass, body frame.
    #[serde(default)]
    pub com: [f64; 3],
    /// Rotational inertia about the centre of mass, body axes.
    #[serde(default)]
    pub inertia: [[f64; 3]; 3],
    /// Shapes.
    #[serde(default)]
    pub shapes: Vec<ShapeSpec>,
    /// Redundant initial world pose, for cross-checking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_world_pose: Option<Pose>,
    /// A track surface (conveyor belt, crawler): its contacts get a tangential surface
    /// velocity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub track: Option<TrackSpec>,
}

/// `bodies[].track`: the body's surface moves at `speed · direction` relative to the body
/// (Choreonoid's crawlers and conveyors): at each of its contacts, the direction (body axes,
/// rotated with the body) projected onto the contact plane times the speed is the surface's
/// tangential velocity, which friction carries the other body along.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrackSpec {
    /// Direction of the surface's motion in the body's axes (unit).
    pub direction: [f64; 3],
    /// Speed (m/s) at the start; a command ([`crate::World::set_track_speed`], controllers)
    /// replaces it.
    #[serde(default)]
    pub speed: f64,
}

fn world() -> String {
    "world".into()
}

impl BodySpec {
    /// No joints and parent `world`.
    pub fn is_static(&self) -> bool {
        self.joints.is_empty() && self.parent == "world"
    }
}

/// How a robot's root link is attached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RobotRoot {
    /// Free-flying base.
    #[default]
    #[serde(alias = "free")]
    Floating,
    /// Root fixed to the world at `pose`.
    Fixed,
}

/// Which of a URDF's `<collision>` elements become collision shapes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RobotCollision {
    /// All of them: boxes, spheres, cylinders and capsules as such, meshes as the convex hull
    /// of the mesh file (a mesh file that cannot be found or read is an error): the default.
    #[default]
    Urdf,
    /// Boxes, spheres, cylinders and capsules only; meshes are skipped.
    Primitives,
    /// None (only the hand-added `shapes`).
    None,
}

/// A robot loaded from a URDF file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RobotSpec {
    /// Name, prefixed to its links' names (`name/link`).
    pub name: String,
    /// URDF path as written (relative to the scene file), or `builtin:<name>` for a URDF inside
    /// the binary ([`super::BUILTIN_URDFS`]).
    pub urdf: String,
    /// Floating or fixed base.
    #[serde(default)]
    pub root: RobotRoot,
    /// Pose of the root link (initial world pose when floating).
    #[serde(default)]
    pub pose: Pose,
    /// Initial joint positions by joint name (the base is set by `pose`).
    #[serde(default, with = "Named")]
    pub q0: Vec<(String, f64)>,
    /// Initial joint velocities by joint name.
    #[serde(default, with = "Named")]
    pub v0: Vec<(String, f64)>,
    /// Initial base velocity in world axes (floating only).
    #[serde(default)]
    pub base_velocity: Twist,
    /// Material of its collision shapes.
    #[serde(default)]
    pub material: Option<String>,
    /// Collision shapes are used (`false`: visual robot, no contacts).
    #[serde(default = "yes")]
    pub collide: bool,
    /// Which of the URDF's `<collision>` elements are used.
    #[serde(default)]
    pub collision: RobotCollision,
    /// Directories searched for `package://` mesh files, as written (relative to the scene
    /// file); then the scene file's directory and `ROS_PACKAGE_PATH`.
    #[serde(default)]
    pub package_dirs: Vec<String>,
    /// Extra collision shapes by link name (`{link, type, ...}`), e.g. feet spheres for robots
    /// whose URDF collision meshes are not at hand.
    #[serde(default, with = "LinkedShapes")]
    pub shapes: Vec<(String, ShapeSpec)>,
    /// Spring stiffness of every 1-dof joint towards its `q0` (a passive posture hold), N·m/rad.
    #[serde(default)]
    pub joint_stiffness: f64,
    /// Viscous damping of every 1-dof joint (added to the URDF's), N·m·s/rad.
    #[serde(default)]
    pub joint_damping: f64,
    /// Actuators of its joints.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actuators: Vec<RobotActuatorSpec>,
    /// Keep self-collision between links that already overlap in the initial configuration
    /// (by default such pairs are excluded and listed in a warning, as MoveIt's "disabled
    /// collisions": CAD links often overlap by millimetres where they are joined).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_overlapping_self_collisions: bool,
}

pub(super) fn yes() -> bool {
    true
}

/// The kind of a loop-closure joint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoopKind {
    /// A ball loop plus two rotational rows about `axis_a`: the default.
    #[default]
    Revolute,
    /// Point rows only (planar loops need no more).
    Ball,
    /// Translation along `axis_a` and rotation about it free; the other four dofs held (the
    /// anchor of B stays on A's axis line, the axes stay aligned).
    Piston,
    /// All six dofs held: the anchors coincide and the relative orientation keeps its initial
    /// value.
    Weld,
}

/// A loop-closure joint between two bodies (Choreonoid's extra joint): scene bodies, robot
/// links (`robot/link`) or `world`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopConstraint {
    /// Name (default `loop<index>`).
    #[serde(default)]
    pub name: String,
    /// Revolute, ball, piston or weld.
    #[serde(rename = "type", default)]
    pub kind: LoopKind,
    /// First body.
    pub body_a: String,
    /// Anchor in `body_a`'s frame.
    #[serde(default)]
    pub anchor_a: [f64; 3],
    /// Second body.
    pub body_b: String,
    /// Anchor in `body_b`'s frame.
    #[serde(default)]
    pub anchor_b: [f64; 3],
    /// Hinge (revolute) or slider (piston) axis in `body_a`'s frame.
    #[serde(default = "z_axis")]
    pub axis_a: [f64; 3],
    /// Free text kept for the reader.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

fn z_axis() -> [f64; 3] {
    [0.0, 0.0, 1.0]
}

/// Per-pair contact settings (in files: `{bodies, mode, stiffness, damping}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "PairFile", into = "PairFile")]
pub struct PairSpec {
    /// The two bodies.
    pub bodies: [String; 2],
    /// Their contact mode.
    pub mode: ContactMode,
}

/// What a sensor measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SensorKind {
    /// Proper acceleration of the sensor point (classical acceleration minus gravity) in sensor
    /// axes: +9.81 up at rest on the floor, 0 in free fall.
    Accelerometer,
    /// Angular velocity of its body in sensor axes.
    RateGyro,
    /// The wrench the parent side exerts on the child side through a joint, at the sensor
    /// origin, in sensor axes.
    Force,
}

/// `sensors[]`: a sensor on a body (accelerometer, rate gyro: `body`) or a joint (force:
/// `joint`); robot parts as `robot/name`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SensorSpec {
    /// Unique name (the CSV's column prefix).
    pub name: String,
    /// What it measures.
    #[serde(rename = "type")]
    pub kind: SensorKind,
    /// The body it is mounted on (accelerometer, rate gyro).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// The joint it measures (force).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joint: Option<String>,
    /// Pose in the body's frame (accelerometer, rate gyro) or in the joint's frame (force:
    /// origin at the joint, axes of the child side).
    #[serde(default)]
    pub pose: Pose,
    /// Gaussian noise and bias added to its readings (`None`: exact readings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<SensorNoise>,
}

/// A number for every component of a reading, or one per component (3 for accelerometers and
/// gyros, 6 for force sensors: `fx, fy, fz, tx, ty, tz`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PerComponent {
    /// The same for every component.
    All(f64),
    /// One per component.
    Each(Vec<f64>),
}

impl Default for PerComponent {
    fn default() -> Self {
        PerComponent::All(0.0)
    }
}

impl PerComponent {
    /// Component `k`'s value (`Each` lists are checked to have the reading's length).
    pub fn get(&self, k: usize) -> f64 {
        match self {
            PerComponent::All(x) => *x,
            PerComponent::Each(v) => v.get(k).copied().unwrap_or(0.0),
        }
    }
}

/// `sensors[].noise`: each reading component becomes `exact + bias + std · N(0, 1)`, the
/// normal numbers drawn from the sensor's own seeded stream (deterministic for a seed).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SensorNoise {
    /// Standard deviation (the reading's units), ≥ 0.
    pub std: PerComponent,
    /// Constant offset (the reading's units).
    pub bias: PerComponent,
    /// Seed of the noise; each sensor draws from its own stream of it (the stream numbered by
    /// its index in `sensors`), so sensors sharing a seed draw independent numbers.
    pub seed: u64,
}

/// `perturbations[]`: an external wrench on a body (or robot link, `robot/link`) from `start`
/// for `duration` seconds (both rounded to whole time steps; at least one step). `force` and
/// `torque` are in world axes; the force acts at the body-fixed `point` (body frame; default
/// the body frame's origin), so a force off the origin also turns the body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerturbationSpec {
    /// The body pushed (`robot/link` for a robot's link); not a static body.
    pub body: String,
    /// Force (N), world axes.
    #[serde(default)]
    pub force: [f64; 3],
    /// Torque (N·m), world axes.
    #[serde(default)]
    pub torque: [f64; 3],
    /// Where the force acts, body frame (m).
    #[serde(default)]
    pub point: [f64; 3],
    /// When it starts (s).
    #[serde(default)]
    pub start: f64,
    /// How long it lasts (s).
    pub duration: f64,
}

/// A whole scene. Top-level keys other than these fields are kept in `extra` as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Scene {
    /// `karakuri-validation-scene` or `karakuri-scene`.
    #[serde(default = "default_schema")]
    pub schema: String,
    /// Schema version.
    #[serde(default = "one")]
    pub schema_version: u64,
    /// Short name.
    #[serde(default = "default_name")]
    pub name: String,
    /// World parameters.
    #[serde(default)]
    pub world: WorldParams,
    /// Contact model.
    #[serde(default)]
    pub contact: ContactParams,
    /// Engine.
    #[serde(default)]
    pub engine: EngineParams,
    /// Materials by name (in the order of the file's mapping as read: sorted by name).
    #[serde(default, with = "Named")]
    pub materials: Vec<(String, Material)>,
    /// Used by shapes with no material.
    #[serde(default = "default_material")]
    pub default_material: Material,
    /// Bodies, parents first.
    #[serde(default)]
    pub bodies: Vec<BodySpec>,
    /// Robots from URDF.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub robots: Vec<RobotSpec>,
    /// Loop closures.
    #[serde(default)]
    pub loop_constraints: Vec<LoopConstraint>,
    /// Body pairs that never collide.
    #[serde(default)]
    pub collision_exclude_pairs: Vec<[String; 2]>,
    /// Per-pair contact modes.
    #[serde(default)]
    pub contact_pairs: Vec<PairSpec>,
    /// Sensors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sensors: Vec<SensorSpec>,
    /// External wrenches on bodies over time windows (pushes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub perturbations: Vec<PerturbationSpec>,
    /// Built-in controllers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub controllers: Vec<ControllerSpec>,
    /// Every other top-level key (title, description, conventions, expected values, ...),
    /// kept as written (read and written beside the fields above, see `Scene::from_value`).
    #[serde(skip)]
    pub extra: serde_json::Map<String, serde_json::Value>,
    /// The file it was read from, or the name given to `Scene::from_str` (relative mesh and
    /// URDF paths are resolved against its directory).
    #[serde(skip)]
    pub source: Option<std::path::PathBuf>,
}

/// The top-level keys of a scene (the fields of [`Scene`] that files hold).
pub const TOP_KEYS: &[&str] = &[
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
    "sensors",
    "perturbations",
    "controllers",
];

fn default_schema() -> String {
    "karakuri-scene".into()
}
fn one() -> u64 {
    1
}
fn default_name() -> String {
    "scene".into()
}
fn default_material() -> Material {
    DEFAULT_MATERIAL
}

/// `controllers[]`: a built-in controller (see `docs/SCENE_FORMAT.md`, Controllers), called
/// every `period` seconds (default: every step) before the step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ControllerSpec {
    /// A PD law holding joints at their initial positions: each commands the torque
    /// `kp (q0 − q) − kd dq` (clamped to its actuator's effort limit) to its `torque` actuator.
    HoldPosture {
        /// Every 1-dof joint of this robot.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        robot: Option<String>,
        /// These joints (world names: `robot/joint` for robots).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        joints: Option<Vec<String>>,
        /// Position gain (N·m/rad or N/m).
        kp: f64,
        /// Velocity gain (N·m·s/rad or N·s/m).
        #[serde(default)]
        kd: f64,
        /// Control period (s; `None`: the time step).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        period: Option<f64>,
    },
    /// Plays a joint trajectory table (`time` and one column per joint): each period, each
    /// joint's actuator target is set to the table's value one period ahead.
    Trajectory {
        /// The table file (relative to the scene file).
        table: super::table::TableFile,
        /// The joints of its columns, in order (world names).
        joints: Vec<String>,
        /// Control period (s; `None`: the time step).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        period: Option<f64>,
    },
}
