//! `SimModel::from_scene`: the compile step's [`CompiledWorld`] (the world's karakuri [`Model`],
//! bodies, dof layout, actuators, limits, sensors, loops, colliders, initial state), then what
//! only the native engine derives from it: the joint-force set of the scene's springs and
//! dampers, the friction rows, the track names, the sleep trees and the stage plan.

use std::sync::Arc;

use karakuri::Model;
use nalgebra::DVector;

use super::joint_forces::{JointForceSet, JointFriction};
use super::parts::SensorSets;
use super::plan::StagePlan;
use super::sleep::SleepModel;
use crate::collision::Collider;
use crate::compile::{compile, ActuatorForceSet, CompiledWorld, Springs};
use crate::engine::{BodyInfo, RobotInfo, SensorInfo};
use crate::scene::{ContactParams, EngineParams, Integrator, Scene};
use crate::SimError;

pub use crate::compile::{Actuator, DofParams, Limit, LinearRow, LoopSpec, SpatialTendon, Noise, Push, Sensor, SimBody, Track};

/// The description of a simulated world (MuJoCo's `mjModel`): built once by
/// [`SimModel::from_scene`], read by every stage, never written by a step. Its fields are the
/// [`CompiledWorld`]'s as they are (the model to `perturbations`, `tracks`; `frictions` as rows),
/// then the native engine's own (joint-force sets, track names, sleep, plan). A clone is what
/// a world's runtime settings change (`NativeEngine::change`: `Arc::make_mut`, so worlds that
/// share a model copy it on their first change; the joint-force sets are shared).
#[derive(Clone)]
pub struct SimModel {
    /// The world's multibody model.
    pub model: Model,
    /// Time step (s).
    pub dt: f64,
    /// Contact model parameters.
    pub contact: ContactParams,
    /// Engine settings (integrator, solver, guards).
    pub engine: EngineParams,
    /// Simulated bodies, in the world's body order.
    pub bodies: Vec<SimBody>,
    /// What the world reports of each body (same order).
    pub infos: Vec<BodyInfo>,
    /// Passive joint parameters.
    pub dofs: DofParams,
    /// Joint position ranges.
    pub limits: Vec<Limit>,
    /// Loop closures.
    pub loops: Vec<LoopSpec>,
    /// Linear joint rows (MJCF joint and tendon equalities, fixed tendons' ranges).
    pub linear_rows: Vec<LinearRow>,
    /// Spatial tendons with a range (MJCF).
    pub spatial_tendons: Vec<SpatialTendon>,
    /// Joint actuators, in scene order (bodies' joints, then robots').
    pub actuators: Vec<Actuator>,
    /// Sensors, in scene order.
    pub sensors: Vec<Sensor>,
    /// What the world reports of each sensor (same order).
    pub sensor_infos: Vec<SensorInfo>,
    /// The sensors' twins and the wrench sensors' subtrees, as lists (from `sensors`).
    pub sensor_sets: SensorSets,
    /// The one-dof joints (world joint index, in model order) and their names.
    pub one_dof: Vec<usize>,
    /// Names of [`SimModel::one_dof`].
    pub one_dof_names: Vec<String>,
    /// Each one-dof joint's actuator, if any `(one_dof)`.
    pub one_dof_actuator: Vec<Option<usize>>,
    /// Collision shapes and pairs.
    pub collider: Collider,
    /// Initial configuration `(nq)`.
    pub q0: DVector<f64>,
    /// Initial velocity `(nv)`.
    pub v0: DVector<f64>,
    /// Non-fatal remarks of building it (a URDF's repaired inertias, ...), each naming its robot.
    pub warnings: Vec<String>,
    /// The scene's `perturbations`, windows in steps.
    pub perturbations: Vec<Push>,
    /// Joint forces (the scene's springs and dampers first, then those registered on the
    /// world), evaluated by the joint-force stage.
    pub joint_forces: Arc<[JointForceSet]>,
    /// Joints with Coulomb friction (a bounded row each).
    pub frictions: Vec<JointFriction>,
    /// The dofs an MJCF actuator carried as a joint force drives (their trees never sleep).
    pub forced_dofs: Vec<usize>,
    /// Track surfaces, in scene order.
    pub tracks: Vec<Track>,
    /// Each collision shape's track, if any `(collider shapes)`.
    pub shape_track: Vec<Option<usize>>,
    /// Names of [`SimModel::tracks`].
    pub track_names: Vec<String>,
    /// The sleep settings and trees (see [`super::sleep`]).
    pub sleep: SleepModel,
    /// Which optional stages the step runs, from what the world holds ([`StagePlan::of`]).
    pub plan: StagePlan,
    /// The scene's robots as compiled (for the world's description; the step never reads them).
    pub robots: Arc<[RobotInfo]>,
}

impl SimModel {
    /// Builds the world of a scene: compiles it ([`compile`]), then derives the native
    /// engine's own parts ([`SimModel::from_compiled`]). Errors name the scene file and the
    /// element.
    pub fn from_scene(scene: &Scene) -> Result<SimModel, SimError> {
        let sim = SimModel::from_compiled(compile(scene)?);
        if sim.engine.integrator == Integrator::Rk4 {
            if let Some(what) = sim.plan.not_smooth(false) {
                return Err(SimError::Scene {
                    file: scene.source.as_ref().map_or("scene".to_string(), |p| p.display().to_string()),
                    path: "engine.integrator".into(),
                    reason: format!(
                        "rk4 steps smooth worlds only (it has no constraint stage), and this one has {what}; \
                         use semi_implicit_euler, or auto (the default: RK4 where it applies)"
                    ),
                });
            }
        }
        Ok(sim)
    }

    /// The native engine's model of a compiled scene: the compiled parts as they are, the
    /// springs as the first joint-force set, the friction rows, the track names, the sleep
    /// trees and the stage plan.
    pub fn from_compiled(w: CompiledWorld) -> SimModel {
        let plan = StagePlan::of(&w);
        let track_names = w.tracks.iter().map(|t| t.name.clone()).collect();
        let forced_dofs = w.actuator_forces.iter().flat_map(|a| a.dof.iter().copied()).collect();
        let mut sim = SimModel {
            forced_dofs,
            joint_forces: spring_set(w.springs, w.actuator_forces),
            frictions: w.frictions.iter().map(|f| JointFriction { dof: f.dof, friction: f.friction }).collect(),
            model: w.model,
            dt: w.dt,
            contact: w.contact,
            engine: w.engine,
            bodies: w.bodies,
            infos: w.infos,
            dofs: w.dofs,
            limits: w.limits,
            loops: w.loops,
            linear_rows: w.linear_rows,
            spatial_tendons: w.spatial_tendons,
            actuators: w.actuators,
            sensor_sets: SensorSets::new(&w.sensors),
            sensors: w.sensors,
            sensor_infos: w.sensor_infos,
            one_dof: w.one_dof,
            one_dof_names: w.one_dof_names,
            one_dof_actuator: w.one_dof_actuator,
            collider: w.collider,
            q0: w.q0,
            v0: w.v0,
            warnings: w.warnings,
            perturbations: w.perturbations,
            track_names,
            tracks: w.tracks,
            shape_track: w.shape_track,
            sleep: Default::default(),
            plan,
            robots: w.robots,
        };
        sim.sleep = SleepModel::new(&sim);
        sim
    }

    /// The name of the body a joint moves (for error messages).
    pub fn body_of_joint(&self, joint: usize) -> &str {
        self.bodies
            .iter()
            .find(|b| b.joint == joint)
            .map_or(&self.model.body_names[joint], |b| &b.name)
    }
}

/// The scene's springs and dampers as the world's first joint-force set (none without any),
/// then each MJCF actuator carried as a joint force.
fn spring_set(springs: Springs, actuators: Vec<ActuatorForceSet>) -> Arc<[JointForceSet]> {
    let mut sets = Vec::with_capacity(1 + actuators.len());
    if !springs.dof.is_empty() {
        let Springs { iq, dof, forces } = springs;
        sets.push(JointForceSet { iq, dof, forces: Box::new(forces) });
    }
    for a in actuators {
        sets.push(JointForceSet { iq: a.iq, dof: a.dof, forces: Box::new(a.forces) });
    }
    sets.into()
}

