//! What the compile step makes of a scene ([`CompiledWorld`]) and the elements it holds, in
//! indices of the world model's q and v: both engines read these types, none of them knows an
//! engine.

use std::sync::Arc;

use karakuri::spatial::{Mat3, Se3, Vec3};
use karakuri::Model;
use nalgebra::DVector;
use serde::{Deserialize, Serialize};

use crate::collision::Collider;
use crate::engine::{ActuatorInfo, BodyInfo, JointInfo, RobotInfo, SensorInfo};
use crate::joint_forces::SpringDamper;
use crate::scene::{ActuatorMode, ContactParams, EngineParams, LoopKind, SensorKind, Target};

/// A simulated body: a scene body or a robot link, carried by a model joint.
#[derive(Clone, Debug)]
pub struct SimBody {
    /// Name.
    pub name: String,
    /// Model joint that moves it (0: static).
    pub joint: usize,
    /// Body frame in the joint frame.
    pub placement: Se3,
    /// Parent body (for parent/child collision exclusion).
    pub parent: Option<usize>,
    /// Mass.
    pub mass: f64,
    /// The centre of its collision shapes' bounding box in the joint frame and the box's
    /// smallest extent (m), for the tunnelling watch (None: no bounded shape).
    pub bounds: Option<(Vec3, f64)>,
}

/// A position range of a one-dof joint.
#[derive(Clone, Copy, Debug)]
pub struct Limit {
    /// Its velocity index.
    pub dof: usize,
    /// Its configuration index.
    pub iq: usize,
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
}

/// A linear combination of one-dof joint positions, `C(q) = Σ coef · q[iq] + offset`, held at
/// 0 (an MJCF `joint` or `tendon` equality) or within a range (a fixed tendon's `range`): one
/// bilateral row, or two unilateral ones (see `native::joint_rows`).
#[derive(Clone, Debug)]
pub struct LinearRow {
    /// What it comes from (`robot/tendon`, `robot/equality`), for messages.
    pub name: String,
    /// `(iq, dof, coef)` of each joint in it.
    pub terms: Vec<(usize, usize, f64)>,
    /// The constant term.
    pub offset: f64,
    /// `None`: `C = 0`; `Some((lo, hi))`: `lo ≤ C ≤ hi`.
    pub range: Option<(f64, f64)>,
}

impl LinearRow {
    /// `C(q)`.
    pub fn value(&self, q: &[f64]) -> f64 {
        self.terms.iter().fold(self.offset, |c, &(iq, _, coef)| c + coef * q[iq])
    }

    /// Its number of rows: 1 (equality) or 2 (range).
    pub fn rows(&self) -> usize {
        if self.range.is_some() { 2 } else { 1 }
    }
}

/// A spatial tendon of straight segments between body-fixed points, its length
/// `L = Σ |p_{i+1} − p_i|` held within `range` (two unilateral rows, see
/// `native::joint_rows::tendon_rows`).
#[derive(Clone, Debug)]
pub struct SpatialTendon {
    /// `robot/tendon`.
    pub name: String,
    /// Each point's joint and its position in that joint's frame, in order.
    pub points: Vec<(usize, Vec3)>,
    /// `(lo, hi)` of its length.
    pub range: (f64, f64),
}

/// A loop closure (Choreonoid's extra joint): anchor `pa` on joint `ja` and anchor `pb` on
/// joint `jb` (both in the joint frames), held together by the rows of its kind (see
/// `native::loops::loop_rows`).
#[derive(Clone, Copy, Debug)]
pub struct LoopSpec {
    /// Ball, revolute, piston or weld.
    pub kind: LoopKind,
    /// Joint of body A (0: the world).
    pub ja: usize,
    /// Anchor on A (joint frame).
    pub pa: Vec3,
    /// Joint of body B.
    pub jb: usize,
    /// Anchor on B (joint frame).
    pub pb: Vec3,
    /// Hinge or slider axis in A's joint frame (revolute, piston).
    pub axis_a: Vec3,
    /// The same axis in B's joint frame, from the initial configuration.
    pub axis_b: Vec3,
    /// B's joint axes in A's joint axes at the initial configuration, `R_aᵀ R_b` (weld: the
    /// relative orientation held).
    pub rel_rotation: Mat3,
}

impl LoopSpec {
    /// Its number of constraint rows: ball 3, piston 4, revolute 5, weld 6.
    pub fn rows(&self) -> usize {
        match self.kind {
            LoopKind::Ball => 3,
            LoopKind::Piston => 4,
            LoopKind::Revolute => 5,
            LoopKind::Weld => 6,
        }
    }
}

/// The actuator of a one-dof joint (see [`crate::scene::ActuatorSpec`]).
#[derive(Clone, Debug)]
pub struct Actuator {
    /// The world joint's name (`robot/joint` for robots).
    pub name: String,
    /// Its velocity index.
    pub dof: usize,
    /// Its configuration index.
    pub iq: usize,
    /// Mode.
    pub mode: ActuatorMode,
    /// Position gain.
    pub kp: f64,
    /// Velocity gain.
    pub kd: f64,
    /// A constant torque a position servo adds (an MJCF velocity or general actuator's
    /// `gear (gain · ctrl + bias₀)` at its held ctrl; 0 for scene actuators).
    pub bias: f64,
    /// Target as given in the scene (a command set through the world replaces it).
    pub target: Target,
    /// Largest |torque| (∞: unlimited).
    pub effort_limit: f64,
    /// Largest |target speed| (∞: unlimited).
    pub velocity_limit: f64,
}

/// A sensor, resolved onto the world model.
#[derive(Clone, Debug)]
pub struct Sensor {
    /// Name.
    pub name: String,
    /// What it measures.
    pub kind: SensorKind,
    /// The model joint whose frame carries it (joint sensors: the joint they measure).
    pub joint: usize,
    /// Actuator force: the actuator's index; 0 for the others.
    pub index: usize,
    /// A factor on the reading (actuator force: an MJCF actuator's `1 / gear`); 1 for the
    /// others.
    pub gain: f64,
    /// Sensor frame in that joint's frame.
    pub placement: Se3,
    /// Force, force3 and torque sensors: which joints are on the child side (the joint's
    /// subtree) `(njoints)`; empty for the others.
    pub subtree: Vec<bool>,
    /// Gaussian noise and bias of its readings (`None`: exact).
    pub noise: Option<Noise>,
}

/// A sensor's noise, per reading component (`[x, y, z, 0, 0, 0]` or `[fx .. tz]`).
#[derive(Clone, Copy, Debug)]
pub struct Noise {
    /// Standard deviations.
    pub std: [f64; 6],
    /// Biases.
    pub bias: [f64; 6],
    /// Seed of the sensor's stream (its stream is the sensor's index of this seed).
    pub seed: u64,
}

/// Per-dof passive parameters `(nv)` each (springs and dampers: [`Springs`]; Coulomb
/// friction: [`Friction`]).
#[derive(Clone, Debug)]
pub struct DofParams {
    /// Armature (rotor inertia) added to qH's diagonal.
    pub armature: Vec<f64>,
}

/// The scene's joint springs and dampers (and a URDF's damping) as one set of joint forces
/// over the one-dof joints that have any, in scene order.
#[derive(Clone, Debug, Default)]
pub struct Springs {
    /// The joints' configuration indices.
    pub iq: Vec<usize>,
    /// Their velocity indices.
    pub dof: Vec<usize>,
    /// Stiffness, damping and rest position per joint (same order).
    pub forces: SpringDamper,
}

/// A joint's Coulomb friction: `|τ| ≤ friction`, sticking below it.
#[derive(Clone, Copy, Debug)]
pub struct Friction {
    /// Its velocity index.
    pub dof: usize,
    /// The largest friction torque (N·m) or force (N).
    pub friction: f64,
}

/// A track surface (Choreonoid's pseudo continuous track: crawlers and conveyors), resolved
/// onto the world model: its surface turns about `axis` (see [`crate::scene::TrackSpec`]).
#[derive(Clone, Debug)]
pub struct Track {
    /// Its name for commands: the scene body's, or `robot/link`.
    pub name: String,
    /// Whose shapes it drives.
    pub owner: TrackOwner,
    /// The model joint that moves it (0: static).
    pub joint: usize,
    /// The axis the surface turns about, in the joint frame (unit).
    pub axis: Vec3,
    /// The scene's speed (m/s), the command until one is set.
    pub speed: f64,
    /// The friction coefficient across the belt, if the track has its own.
    pub lateral_friction: Option<f64>,
}

/// Whose collision shapes a [`Track`] drives.
#[derive(Clone, Debug, PartialEq)]
pub enum TrackOwner {
    /// A scene body's shapes (index into the scene's bodies).
    Body(usize),
    /// The shapes of robot `robot`'s link `link` (its URDF collisions and extra shapes).
    Link {
        /// The robot (index into the scene's robots).
        robot: usize,
        /// The link's name.
        link: String,
    },
}

/// A wrench on a body for the steps `from_step..to_step` (a step `k` runs from `t = k dt` to
/// `(k + 1) dt`). Plain arrays, so a state holding pushes serialises as it is.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Push {
    /// The body (index into the world's bodies).
    pub body: usize,
    /// The model joint that moves it.
    pub joint: usize,
    /// Where the force acts, in that joint's frame (m).
    pub point: [f64; 3],
    /// Force (N), world axes.
    pub force: [f64; 3],
    /// Torque (N·m), world axes.
    pub torque: [f64; 3],
    /// First step it acts in.
    pub from_step: u64,
    /// The step it no longer acts in.
    pub to_step: u64,
}

impl Push {
    /// Whether it acts in step `k`.
    pub fn active(&self, k: u64) -> bool {
        self.from_step <= k && k < self.to_step
    }
}

/// A scene compiled onto one karakuri [`Model`] of the whole world: everything either engine
/// needs that never changes once built, in the world model's indices (engine-neutral; the
/// native engine's `SimModel` adds its stage plan, sleep trees and joint-force sets, rapier
/// builds its rigid bodies, multibodies and colliders from it).
pub struct CompiledWorld {
    /// The world's multibody model (free bodies as free flyers, hinge chains, robots grafted
    /// as subtrees).
    pub model: Model,
    /// Time step (s).
    pub dt: f64,
    /// Contact model parameters.
    pub contact: ContactParams,
    /// Engine settings (integrator, solver, guards).
    pub engine: EngineParams,
    /// The bodies (scene bodies, then each robot's links), in the world's body order.
    pub bodies: Vec<SimBody>,
    /// What the world reports of each body (same order).
    pub infos: Vec<BodyInfo>,
    /// Per-dof passive parameters.
    pub dofs: DofParams,
    /// The scene's springs and dampers.
    pub springs: Springs,
    /// MJCF actuators carried as joint forces at their held ctrl (decision 0070).
    pub actuator_forces: Vec<super::mjcf_actuators::ActuatorForceSet>,
    /// Joints with Coulomb friction, in scene order.
    pub frictions: Vec<Friction>,
    /// Joint position ranges, in scene order.
    pub limits: Vec<Limit>,
    /// Loop closures (B's axis and relative orientation from the initial configuration).
    pub loops: Vec<LoopSpec>,
    /// Linear joint rows: MJCF joint and tendon equalities, fixed tendons' ranges.
    pub linear_rows: Vec<LinearRow>,
    /// Spatial tendons with a range (MJCF).
    pub spatial_tendons: Vec<SpatialTendon>,
    /// Joint actuators, in scene order (bodies' joints, then robots').
    pub actuators: Vec<Actuator>,
    /// Sensors, in scene order.
    pub sensors: Vec<Sensor>,
    /// What the world reports of each sensor (same order).
    pub sensor_infos: Vec<SensorInfo>,
    /// The one-dof joints (world joint index, in model order).
    pub one_dof: Vec<usize>,
    /// Names of [`CompiledWorld::one_dof`].
    pub one_dof_names: Vec<String>,
    /// Each one-dof joint's actuator, if any `(one_dof)`.
    pub one_dof_actuator: Vec<Option<usize>>,
    /// Collision shapes (in their joints' frames) and the pairs that may touch.
    pub collider: Collider,
    /// Track surfaces: scene bodies' in scene order, then each robot's.
    pub tracks: Vec<Track>,
    /// Each collision shape's track, if any `(collider shapes)`.
    pub shape_track: Vec<Option<usize>>,
    /// The scene's `perturbations`, windows in steps.
    pub perturbations: Vec<Push>,
    /// Initial configuration `(nq)`.
    pub q0: DVector<f64>,
    /// Initial velocity `(nv)`.
    pub v0: DVector<f64>,
    /// Non-fatal remarks (a URDF's repaired inertias, overlapping links, ...), each naming its
    /// robot.
    pub warnings: Vec<String>,
    /// The scene's robots, in scene order (shared: engines hand them to the world).
    pub robots: Arc<[RobotInfo]>,
}

impl CompiledWorld {
    /// Each one-dof joint's position limits and actuator, in [`CompiledWorld::one_dof`]'s order.
    pub fn joint_infos(&self) -> Vec<JointInfo> {
        joint_infos(&self.model, &self.one_dof, &self.one_dof_actuator, &self.actuators, &self.limits)
    }

    /// The joints with more than one degree of freedom, by name, with their dofs.
    pub fn other_joints(&self) -> Vec<(String, usize)> {
        other_joints(&self.model)
    }
}

/// Each one-dof joint's position limits and actuator (`one_dof`: world joint ids; `actuator`:
/// each one's actuator index, if any).
pub fn joint_infos(
    model: &Model,
    one_dof: &[usize],
    actuator: &[Option<usize>],
    actuators: &[Actuator],
    limits: &[Limit],
) -> Vec<JointInfo> {
    one_dof
        .iter()
        .zip(actuator)
        .map(|(&j, act)| {
            let iv = model.idx_v[j];
            JointInfo {
                limits: limits.iter().find(|l| l.dof == iv).map(|l| [l.lo, l.hi]),
                actuator: act.map(|a| {
                    let a = &actuators[a];
                    ActuatorInfo { mode: a.mode, effort_limit: a.effort_limit, velocity_limit: a.velocity_limit }
                }),
            }
        })
        .collect()
}

/// The joints of `model` with more than one degree of freedom (name, dofs).
pub fn other_joints(model: &Model) -> Vec<(String, usize)> {
    (1..model.njoints).filter(|&j| model.nvs[j] != 1).map(|j| (model.joint_names[j].clone(), model.nvs[j])).collect()
}
