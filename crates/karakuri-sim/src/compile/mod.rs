//! The compile step: a scene becomes a [`CompiledWorld`], one karakuri [`karakuri::Model`] of
//! the whole world and everything both engines read of it (bodies, dof layout, actuators,
//! limits, sensors, loops, colliders, perturbations, initial state) in the world model's q and
//! v indices. Engine-neutral: the native engine derives its stage plan, sleep trees and
//! joint-force sets from it (`native::build`), rapier its rigid bodies, multibodies and
//! colliders (`rapier::build`); it imports neither.
//!
//! As MuJoCo's compiler and Pinocchio's parsers, it runs in passes over one builder
//! (`builder::Builder`): the passes before the model is built add joints and bodies and
//! record what they carry by joint id, the passes after it resolve those records into indices.
//!
//! ```text
//! bodies         scene bodies → free flyers, hinge chains, fixed frames (bodies.rs)
//! robots         each robot from its source (URDF), grafted as a subtree (robots.rs)
//!                its tracks: `tracks` entries, a .body's track links     (tracks.rs)
//!   → the world model
//! limits         position ranges                                        (limits.rs)
//! dofs           one-dof joints; armature, springs, friction            (dofs.rs)
//! actuators      bodies' joint actuators, robots' by name               (actuators.rs)
//!                an MJCF robot's other actuators as joint forces     (mjcf_actuators.rs)
//! initial        q0, v0                                                 (initial.rs)
//! colliders      shapes in joint frames, body bounds, pair table        (colliders.rs)
//!                each shape's track                                     (tracks.rs)
//! loops          loop closures                                          (loops.rs)
//!                an MJCF robot's connect and weld equalities       (mjcf_constraints.rs)
//! sensors        sensors; an MJCF robot's                  (sensors.rs, mjcf_constraints.rs)
//! perturbations  the scene's pushes, windows in steps                   (perturbations.rs)
//! ```
//!
//! A new robot source (MJCF, Choreonoid `.body`) is an arm of `robots::load` returning the
//! same robot model and geometry; a new kind of element is a pass and a field of
//! [`CompiledWorld`].

mod actuators;
mod bodies;
mod body_robot;
mod builder;
mod colliders;
mod dofs;
mod initial;
mod limits;
mod loops;
mod mjcf_actuators;
mod mjcf_constraints;
mod model;
mod perturbations;
mod robots;
mod sensors;
mod tracks;

pub use actuators::check_command;
pub use colliders::mean_material;
pub use mjcf_actuators::{ActuatorForce, ActuatorForceSet};
pub use perturbations::{push_on, window_steps};
pub use model::{
    joint_infos, other_joints, Actuator, CompiledWorld, DofParams, Friction, Limit, LinearRow, LoopSpec, Noise, Push, Sensor, SimBody, SpatialTendon, Springs, Track, TrackOwner,
};

use crate::engine::{BodyInfo, RobotInfo};
use crate::scene::Scene;
use crate::SimError;

/// Compiles a scene: the passes in order (see the module docs). Errors name the scene file
/// and the element.
pub fn compile(scene: &Scene) -> Result<CompiledWorld, SimError> {
    let mut b = builder::Builder::new(scene);
    bodies::scene_bodies(&mut b)?;
    robots::robots(&mut b)?;
    let model = b.build_model()?;
    let limits = limits::limits(&b, &model);
    let (one_dof, one_dof_names) = dofs::one_dof(&model);
    let (dofs, springs, frictions) = dofs::passive(&b, &model);
    let (actuators, one_dof_actuator) = actuators::actuators(&b, &model, &limits, &one_dof)?;
    let (q0, v0) = initial::initial_state(&b, &model, &actuators);
    let o_m_i = initial::placements(&model, &q0)?;
    let shapes = colliders::shapes(&b)?;
    let shape_track = tracks::shape_tracks(&b, &b.tracks);
    let mut loops = loops::loops(&b, &model, &o_m_i)?;
    loops.extend(mjcf_constraints::mjcf_loops(&mut b)?);
    let linear_rows = mjcf_constraints::mjcf_linear_rows(&mut b, &model);
    let spatial_tendons = mjcf_constraints::mjcf_spatial_tendons(&mut b, &model);
    let actuator_forces = mjcf_actuators::actuator_forces(std::mem::take(&mut b.actuator_forces), &model);
    let mjcf_sensors = mjcf_constraints::mjcf_sensors(&mut b, &model, &actuators);
    let mut bodies = std::mem::take(&mut b.bodies);
    colliders::bounds(&mut bodies, &shapes);
    let (mut sensors, mut sensor_infos) = sensors::sensors(scene, &model, &bodies, &actuators, mjcf_sensors)?;
    body_robot::finish_sensors(&mut b.body_sensors, &model);
    sensor_infos.extend(b.body_sensors.iter().map(|s| crate::engine::SensorInfo { name: s.name.clone(), kind: s.kind }));
    sensors.append(&mut b.body_sensors);
    let perturbations = perturbations::perturbations(scene, &bodies, scene.world.dt)?;
    let mut warnings = std::mem::take(&mut b.warnings);
    let collider = colliders::collider(&b, &bodies, shapes, &o_m_i, &mut warnings);
    let robots = std::mem::take(&mut b.robots)
        .into_iter()
        .zip(&scene.robots)
        .map(|(g, rs)| RobotInfo { name: rs.name.clone(), model: g.robot.model, geometry: g.robot.looks, body: g.body })
        .collect();
    let infos = bodies
        .iter()
        .map(|b| BodyInfo {
            name: b.name.clone(),
            is_static: b.joint == 0,
            free: matches!(model.joint_types[b.joint], karakuri::model::JointType::FreeFlyer),
            mass: b.mass,
        })
        .collect();
    Ok(CompiledWorld {
        model,
        dt: scene.world.dt,
        contact: scene.contact.clone(),
        engine: scene.engine.clone(),
        bodies,
        infos,
        dofs,
        springs,
        actuator_forces,
        frictions,
        limits,
        loops,
        linear_rows,
        spatial_tendons,
        actuators,
        sensors,
        sensor_infos,
        one_dof,
        one_dof_names,
        one_dof_actuator,
        collider,
        tracks: std::mem::take(&mut b.tracks),
        shape_track,
        perturbations,
        q0,
        v0,
        warnings,
        robots,
    })
}
