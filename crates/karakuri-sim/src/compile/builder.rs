//! The builder the passes share: the world's [`ModelBuilder`] while scene bodies and robots are
//! added to it, and what they record by world joint id (ids are the built model's joint
//! indices; its q and v indices are known only once it is built). Also the scene-error helpers
//! every pass uses.

use karakuri::spatial::{quat_from_xyzw, Se3, Vec3};
use karakuri::{Model, ModelBuilder, ModelError};

use super::model::{SimBody, Track};
use crate::scene::geometry::UrdfRobot;
use crate::scene::{ActuatorSpec, Pose, Scene};
use crate::SimError;

/// A scene pose as a placement.
pub(super) fn se3(p: &Pose) -> Se3 {
    Se3::new(quat_from_xyzw(&p.orientation), Vec3::from(p.position))
}

/// A scene triple as a vector.
pub(super) fn v3(a: &[f64; 3]) -> Vec3 {
    Vec3::new(a[0], a[1], a[2])
}

/// An error at `path` of the scene (its file named).
pub(super) fn scene_err(scene: &Scene, path: String, reason: impl Into<String>) -> SimError {
    SimError::Scene {
        file: scene.source.as_ref().map_or("<scene>".into(), |p| p.display().to_string()),
        path,
        reason: reason.into(),
    }
}

/// A model builder's error at `path` of the scene (a bad inertia says only its reason).
pub(super) fn model_err(scene: &Scene, path: String, e: ModelError) -> SimError {
    let reason = match e {
        ModelError::BadInertia { reason, .. } => reason,
        o => o.to_string(),
    };
    scene_err(scene, path, reason)
}

/// An initial value of a one-dof joint.
pub(super) struct JointValue {
    pub(super) joint: usize,
    pub(super) value: f64,
}

/// The initial state of a free flyer: pose and world velocities of its origin.
pub(super) struct FreeStart {
    pub(super) joint: usize,
    pub(super) pose: Pose,
    pub(super) linear: [f64; 3],
    pub(super) angular: [f64; 3],
}

/// The passive parameters of a one-dof joint.
pub(super) struct DofSetting {
    pub(super) joint: usize,
    pub(super) damping: f64,
    pub(super) stiffness: f64,
    pub(super) spring_reference: f64,
    pub(super) armature: f64,
    /// Coulomb friction (the scene's `friction`, the URDF's `<dynamics friction>`).
    pub(super) friction: f64,
}

/// A position range of a one-dof joint.
pub(super) struct LimitSetting {
    pub(super) joint: usize,
    pub(super) lower: f64,
    pub(super) upper: f64,
}

/// The actuator a scene body's joint declares.
pub(super) struct ActuatorSetting {
    pub(super) joint: usize,
    pub(super) spec: ActuatorSpec,
    /// A constant torque added to a position servo's (an MJCF actuator's; 0 for the scene's).
    pub(super) bias: f64,
}

/// A robot as grafted onto the world: its own model and geometry, and where its joints and
/// links went.
pub(super) struct Grafted {
    /// The robot as its source gave it.
    pub(super) robot: UrdfRobot,
    /// The robot's pose in the world (its root joint's frame for a fixed root).
    pub(super) base: Se3,
    /// World joint of each robot joint `(robot njoints)`; 0 for the robot's universe.
    pub(super) joint: Vec<usize>,
    /// World body of each robot joint's link `(robot njoints)`.
    pub(super) body: Vec<usize>,
}

impl Grafted {
    /// The world joint that carries robot joint `rj`'s frame, and a placement in that frame
    /// given in `rj`'s (the robot's universe sits at `base`).
    pub(super) fn on_world(&self, rj: usize, x: &Se3) -> (usize, Se3) {
        let placement = if rj == 0 { self.base.compose(x) } else { *x };
        (self.joint[rj], placement)
    }
}

/// What the passes before the model is built (bodies, robots) add to; the later passes read it.
pub(super) struct Builder<'s> {
    pub(super) scene: &'s Scene,
    pub(super) model: ModelBuilder,
    /// Bodies so far (scene bodies first, in scene order: body `bi` is `bodies[bi]`).
    pub(super) bodies: Vec<SimBody>,
    /// The scene's robots, grafted, in scene order.
    pub(super) robots: Vec<Grafted>,
    /// Body pairs `(a, b)`, `a < b`, that never collide by a `.body` robot's
    /// `collision_detection_rules`.
    pub(super) rule_excluded: Vec<(usize, usize)>,
    /// Each robot's whole MJCF world (`None`: a URDF robot), in scene order.
    pub(super) mjcf_worlds: Vec<Option<karakuri::io::mjcf::MjcfWorld>>,
    /// Initial values of one-dof joints given by scene bodies.
    pub(super) q0: Vec<JointValue>,
    /// Initial speeds of one-dof joints given by scene bodies.
    pub(super) v0: Vec<JointValue>,
    /// Free flyers' initial states (free bodies, floating robots).
    pub(super) free_start: Vec<FreeStart>,
    /// One-dof joints' passive parameters, in the order the joints were added.
    pub(super) dofs: Vec<DofSetting>,
    /// Position ranges, in the order the joints were added.
    pub(super) limits: Vec<LimitSetting>,
    /// Scene bodies' joint actuators.
    pub(super) actuators: Vec<ActuatorSetting>,
    /// MJCF actuators carried as joint forces (tendons, activation dynamics, ...).
    pub(super) actuator_forces: Vec<super::mjcf_actuators::PendingForce>,
    /// Track surfaces (scene bodies', then robots').
    pub(super) tracks: Vec<Track>,
    /// Non-fatal remarks.
    pub(super) warnings: Vec<String>,
    /// `.body` robots' sensors (their force sensors' subtrees filled once the model is built).
    pub(super) body_sensors: Vec<super::model::Sensor>,
    /// `.body` robots' extra joints, after the scene's loop constraints.
    pub(super) body_loops: Vec<crate::scene::LoopConstraint>,
}

impl<'s> Builder<'s> {
    /// An empty world with the scene's name and gravity.
    pub(super) fn new(scene: &'s Scene) -> Builder<'s> {
        let mut model = ModelBuilder::new(&scene.name);
        model.set_gravity(v3(&scene.world.gravity));
        Builder {
            scene,
            model,
            bodies: Vec::new(),
            robots: Vec::new(),
            rule_excluded: Vec::new(),
            mjcf_worlds: Vec::new(),
            q0: Vec::new(),
            v0: Vec::new(),
            free_start: Vec::new(),
            dofs: Vec::new(),
            limits: Vec::new(),
            actuators: Vec::new(),
            actuator_forces: Vec::new(),
            tracks: Vec::new(),
            warnings: Vec::new(),
            body_sensors: Vec::new(),
            body_loops: Vec::new(),
        }
    }

    /// The world model, once every body and robot is in; a bad inertia names its scene element.
    pub(super) fn build_model(&mut self) -> Result<Model, SimError> {
        let b = std::mem::replace(&mut self.model, ModelBuilder::new(""));
        b.build().map_err(|e| {
            let at = match &e {
                ModelError::BadInertia { body, .. } => locate_model_body(self.scene, body),
                _ => "bodies".into(),
            };
            model_err(self.scene, at, e)
        })
    }
}

/// Where a body of the world model comes from in the scene: `bodies[i].joints[k]` for a scene
/// body's joint (its intermediate bodies are named `<body>#<k>`, the body itself carries the
/// last joint), `robots[i]` for a robot's link (`<robot>/<link>`), else `bodies`.
fn locate_model_body(scene: &Scene, name: &str) -> String {
    let (base, k) = match name.rsplit_once('#') {
        Some((b, k)) if k.parse::<usize>().is_ok() => (b, k.parse::<usize>().ok()),
        _ => (name, None),
    };
    if let Some(bi) = scene.bodies.iter().position(|b| b.name == base) {
        let n = scene.bodies[bi].joints.len();
        return match k.or(n.checked_sub(1)) {
            Some(k) => format!("bodies[{bi}].joints[{k}]"),
            None => format!("bodies[{bi}]"),
        };
    }
    let robot = scene.robots.iter().position(|r| name.starts_with(&format!("{}/", r.name)));
    robot.map_or_else(|| "bodies".into(), |ri| format!("robots[{ri}]"))
}
