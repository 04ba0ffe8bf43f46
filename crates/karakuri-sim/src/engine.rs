//! Engines behind one trait, as Choreonoid's simulator items: an engine is built from the
//! world's [`crate::Scene`] (its own representation, once: `NativeEngine::new`), then
//! steps it and writes the state back ([`Engine::write_states`]). `NativeEngine` is
//! the reduced-coordinate engine of this crate; a wrapper around another physics library plugs
//! in by implementing the same trait and handing it to `World::with_engine`; the
//! world takes engines that are [`Send`], so worlds can be stepped on other threads
//! (`Batch`).
//!
//! The trait is narrow and index-based: an engine says once what it simulates
//! ([`Engine::describe`]: bodies, one-dof joints, sensors, tracks, robots) and what it can do
//! beyond stepping ([`Engine::capabilities`]); the world resolves every name to an index once,
//! through its [`crate::Layout`], and calls the engine with indices (decision 0052).

use std::sync::Arc;
use std::time::Duration;

use karakuri::spatial::{Se3, Vec3};

use crate::SimError;

/// What the world knows of a simulated body.
#[derive(Clone, Debug, PartialEq)]
pub struct BodyInfo {
    /// Name (`robot/link` for robot links).
    pub name: String,
    /// Never moves.
    pub is_static: bool,
    /// Joined to the world by a free joint (a free scene body, a robot's floating base): its
    /// pose and velocity are its own state.
    pub free: bool,
    /// Mass (kg).
    pub mass: f64,
}

/// The state of a body in the world.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyState {
    /// World placement of the body frame.
    pub pose: Se3,
    /// World velocity of the body-frame origin.
    pub linear: Vec3,
    /// World angular velocity.
    pub angular: Vec3,
}

impl Default for BodyState {
    fn default() -> Self {
        BodyState {
            pose: Se3::identity(),
            linear: Vec3::zeros(),
            angular: Vec3::zeros(),
        }
    }
}

/// What the world knows of a sensor.
#[derive(Clone, Debug, PartialEq)]
pub struct SensorInfo {
    /// Name.
    pub name: String,
    /// What it measures (accelerometers and gyros read 3 values, force sensors 6).
    pub kind: crate::scene::SensorKind,
}

/// What the world knows of a scene robot, for what draws it: its own model (as its source gave
/// it) and its URDF geometry (visual and collision elements, mesh files located, not read),
/// with the world body of each of its joints' links.
#[derive(Clone, Debug)]
pub struct RobotInfo {
    /// The robot's name (`robots[].name`).
    pub name: String,
    /// The robot's own model.
    pub model: karakuri::Model,
    /// Its URDF's `<visual>` and `<collision>` elements (empty for an MJCF robot).
    pub geometry: karakuri::io::urdf::Geometry,
    /// World body (index into the world's bodies) of each robot joint's link `(robot njoints)`.
    pub body: Vec<usize>,
}

/// The state of a one-dof joint after the last step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointState {
    /// Position (rad or m).
    pub q: f64,
    /// Velocity (rad/s or m/s).
    pub dq: f64,
    /// Torque (force) driving it over the last step: the user's plus its actuator's applied one.
    pub tau: f64,
}

/// Numerical trouble a run met so far, counted by the engine as it steps (nothing is
/// allocated per step): constraint solves that stopped before their tolerance (stiff mass
/// ratios), and bodies that moved more than their own size in one step (they may pass
/// through thin obstacles: reduce `dt`).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Diagnostics {
    /// Steps whose iterative solve ended at `engine.max_iterations` above `engine.tolerance`.
    pub unconverged_steps: u64,
    /// Of those, the steps whose final residual alone moves a contact more than
    /// `contact.penetration_tolerance` in the step (`residual · dt > d_tol`) or that have a
    /// contact deeper than `2 d_tol`: contacts may sink. Only these are warned of (a settled stack ends a few steps above a 1e-6 m/s
    /// tolerance with residuals of 1e-4 m/s, harmlessly).
    pub sinking_steps: u64,
    /// The largest final residual of those steps (m/s: the last sweep's largest row velocity
    /// change) and the step it came from.
    pub worst_residual: Option<(f64, u64)>,
    /// Steps in which some body moved more than its own size.
    pub fast_steps: u64,
    /// The first such event: the step, the body (index into the world's bodies), the distance
    /// its centre moved in the step (m) and its size (m, the smallest extent of its shapes'
    /// bounding box).
    pub first_fast: Option<(u64, usize, f64, f64)>,
}

impl Diagnostics {
    /// One warning per kind of trouble met, for people (`bodies` names the bodies).
    pub fn warnings(&self, bodies: &[BodyInfo]) -> Vec<String> {
        let mut out = vec![];
        if let (Some((r, step)), true) = (self.worst_residual, self.sinking_steps > 0) {
            out.push(format!(
                "the contact solver did not converge in {} step(s) with residuals that can sink contacts past contact.penetration_tolerance (worst final residual {r:.3e} m/s, step {step}): raise engine.max_iterations or avoid large mass ratios between touching bodies",
                self.sinking_steps
            ));
        }
        if let Some((step, b, d, size)) = self.first_fast {
            let name = bodies.get(b).map_or("?", |b| b.name.as_str());
            out.push(format!(
                "body '{name}' moved {d:.3} m in step {step}, more than its size {size:.3} m ({} such step(s)): it may pass through obstacles; reduce world.dt",
                self.fast_steps
            ));
        }
        out
    }
}

/// A contact of the last step and the force it carried.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactInfo {
    /// First body (index into the world's bodies).
    pub body_a: usize,
    /// Second body.
    pub body_b: usize,
    /// Contact point (world).
    pub point: Vec3,
    /// Unit normal (world) from A to B.
    pub normal: Vec3,
    /// Penetration depth (m), negative for a gap.
    pub depth: f64,
    /// Mean force on B over the step (world, N); A receives its opposite.
    pub force: Vec3,
}

/// Writes [`StageTimes`] from its list of stages (a field each, their names, the sum).
macro_rules! stage_times {
    ($($(#[$doc:meta])* $stage:ident),* $(,)?) => {
        /// Wall-clock time spent in each stage of a step, one field per stage function of the
        /// native step (`native/step.rs`, same names; other engines fill those that fit), zeros
        /// unless the timing is on ([`Engine::time_stages`], `World::time_stages`).
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        pub struct StageTimes {
            $($(#[$doc])* pub $stage: Duration,)*
        }

        impl StageTimes {
            /// The fields' names, in the native step's order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($stage)),*];

            /// Adds another step's times.
            pub fn add(&mut self, o: &StageTimes) {
                $(self.$stage += o.$stage;)*
            }

            /// Sum of the stages.
            pub fn total(&self) -> Duration {
                Duration::ZERO $(+ self.$stage)*
            }

            /// Each stage's name and time, in the native step's order.
            pub fn named(&self) -> Vec<(&'static str, Duration)> {
                vec![$((stringify!($stage), self.$stage)),*]
            }
        }
    };
}

stage_times!(
    /// The step's start state kept; islands an action wakes.
    start,
    /// Actuator commands (servo gains, explicit parts).
    actuator_commands,
    /// Sensor start (what the readings difference).
    sensor_start,
    /// Joint forces (springs, dampers, registered forces).
    joint_forces,
    /// Factorisation of the iteration matrix qH, world motion columns, collision.
    position,
    /// The whole RK4 step (RK4 worlds, contact-free steps).
    rk4,
    /// Actuation: user torques, actuator torques, pushes.
    actuation,
    /// Smooth acceleration.
    acceleration,
    /// Impact passes.
    impacts,
    /// Free velocity.
    free_velocity,
    /// Constraint rows and solve.
    constraint,
    /// Applied actuator torques.
    actuator_report,
    /// Split impulse (pseudo-velocity).
    split_impulse,
    /// Configuration update (SHAKE, `q ⊕ dt v`).
    integrate,
    /// NaN / divergence guard.
    check_state,
    /// Kinematics, Jacobians, mass matrix and bias forces at the new state
    /// (`compute_all_terms`), islands falling asleep.
    kinematics,
    /// Contact forces.
    contact_forces,
    /// Sensor readings.
    sensor_readings,
    /// Sensor noise.
    sensor_noise,
    /// Watch (diagnostics).
    watch,
);

/// What an engine can do beyond stepping, read once by the world, which refuses the rest
/// with [`SimError::Unsupported`] naming the engine and the feature (the engine's methods for
/// them are then never called).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// Checkpoints: [`Engine::save_state`] and [`Engine::restore_state`].
    pub checkpoints: bool,
    /// Pushes registered while running: [`Engine::apply_wrench`].
    pub wrenches: bool,
    /// Joint forces registered while running: [`Engine::add_joint_forces`].
    pub joint_forces: bool,
    /// Timing of the step's stages on demand: [`Engine::time_stages`].
    pub stage_timing: bool,
    /// Sleeping bodies: [`Report::sleeping`] counts them.
    pub sleep: bool,
    /// Track surfaces driven at a commanded speed: [`Engine::set_track_speed`].
    pub tracks: bool,
    /// Position servo commands: [`Engine::position_target`].
    pub position_targets: bool,
    /// Contact forces with their friction part ([`ContactInfo::force`]); without it, the
    /// normal part only.
    pub contact_friction: bool,
}

/// What an engine simulates, by name and index, read once by the world (which resolves every
/// name through the [`crate::Layout`] it builds from it: the engine's methods take indices).
#[derive(Clone, Debug, Default)]
pub struct Description {
    /// The bodies, in the order of [`Engine::write_states`].
    pub bodies: Vec<BodyInfo>,
    /// The one-dof joints' names (`robot/joint` for robots): the index `k` of the joint methods.
    pub joints: Vec<String>,
    /// Each one-dof joint's limits and actuator (same order).
    pub joint_infos: Vec<JointInfo>,
    /// The joints with more than one degree of freedom (name, dofs): named in errors only.
    pub other_joints: Vec<(String, usize)>,
    /// The sensors, in the order of [`Engine::readings`].
    pub sensors: Vec<SensorInfo>,
    /// The track surfaces (bodies with `track`) by name, in the order of
    /// [`Engine::track_speeds`].
    pub tracks: Vec<String>,
    /// The scene's robots as compiled (their own models and URDF geometry with mesh paths):
    /// what a viewer draws, without loading a file again.
    pub robots: Arc<[RobotInfo]>,
    /// Non-fatal remarks of building the engine (e.g. a URDF's repaired inertias), for the user.
    pub warnings: Vec<String>,
}

/// What an engine reports of its run so far, beside the state (no allocation).
#[derive(Clone, Copy, Debug, Default)]
pub struct Report {
    /// Numerical trouble met so far (engines that do not watch report none).
    pub diagnostics: Diagnostics,
    /// The last step's constraint solve: sweeps (the most over its islands) and final
    /// residual (engines without such a solve report zeros).
    pub last_solve: crate::solver::SolveStats,
    /// Stage times of the last step (zeros while [`Engine::time_stages`] is off).
    pub stage_times: StageTimes,
    /// How many bodies sleep after the last step (`engine.sleep`); `None` unless
    /// [`Capabilities::sleep`].
    pub sleeping: Option<usize>,
}

/// A physics engine stepping a world: index-based (joint `k` is the `k`-th of
/// [`Description::joints`], body `b` the `b`-th of [`Description::bodies`], track `k` the
/// `k`-th of [`Description::tracks`]; the world checks indices before it calls), with what
/// it can do beyond stepping in [`Capabilities`]. The methods of a capability an engine does
/// not have keep their defaults (an [`SimError::Unsupported`] error).
pub trait Engine {
    /// Short name (`native`).
    fn name(&self) -> &str;
    /// What it can do beyond stepping.
    fn capabilities(&self) -> Capabilities;
    /// What it simulates (allocates: read once, by the world).
    fn describe(&self) -> Description;
    /// Advances by one time step.
    fn step(&mut self) -> Result<(), SimError>;
    /// Writes the current state of every body (in [`Description::bodies`]' order).
    fn write_states(&self, out: &mut [BodyState]);
    /// The state of one-dof joint `k`.
    fn joint_state(&self, k: usize) -> JointState;
    /// The speed of each one-dof joint `k < out.len()` (`joint_state(k).dq`), in one call:
    /// what the world keeps before every step for its accelerations.
    fn write_joint_speeds(&self, out: &mut [f64]) {
        for (k, o) in out.iter_mut().enumerate() {
            *o = self.joint_state(k).dq;
        }
    }
    /// The state of each one-dof joint `k < out.len()` (`joint_state(k)`), in one call: what
    /// the world's [`crate::World::write_joint_states`] asks every step of a watched run.
    fn write_joint_states(&self, out: &mut [JointState]) {
        for (k, o) in out.iter_mut().enumerate() {
            *o = self.joint_state(k);
        }
    }
    /// The position target of each one-dof joint `k < out.len()` (`position_target(k)`), in
    /// one call.
    fn write_position_targets(&self, out: &mut [Option<f64>]) {
        for (k, o) in out.iter_mut().enumerate() {
            *o = self.position_target(k);
        }
    }
    /// Simulated time (s).
    fn time(&self) -> f64;
    /// Steps taken.
    fn steps(&self) -> u64;
    /// The time step (s).
    fn dt(&self) -> f64;
    /// Contacts of the last step.
    fn contacts(&self) -> &[ContactInfo];
    /// Each sensor's reading after the last step (sensor axes): `[x, y, z, 0, 0, 0]` for
    /// accelerometers and gyros, `[fx, fy, fz, tx, ty, tz]` for force sensors.
    fn readings(&self) -> &[[f64; 6]];
    /// Diagnostics, solve statistics, stage times and sleeping bodies (see [`Report`]).
    fn report(&self) -> Report;
    /// Total mechanical energy (kinetic + gravitational), J.
    fn energy(&self) -> f64;
    /// The torque (force) set on one-dof joint `k` by [`Engine::set_joint_torque`].
    fn joint_torque(&self, k: usize) -> f64;
    /// Sets the torque (force) of one-dof joint `k` (actuation), applied from the next step on.
    fn set_joint_torque(&mut self, k: usize, torque: f64);
    /// Sets the target of joint `k`'s actuator (torque, position or speed by its mode), used
    /// from the next step on; a target outside its bounds is [`SimError::BadCommand`], a joint
    /// without actuator [`SimError::NoActuator`].
    fn set_target(&mut self, k: usize, target: f64) -> Result<(), SimError>;
    /// The position joint `k`'s servo is commanded to now (`Some` for a position actuator;
    /// `None` for the others, and from engines without [`Capabilities::position_targets`]).
    fn position_target(&self, k: usize) -> Option<f64> {
        let _ = k;
        None
    }
    /// Each track's surface speed command (m/s).
    fn track_speeds(&self) -> &[f64] {
        &[]
    }
    /// Sets the surface speed (m/s) of track `k`, used from the next step on; a speed that
    /// is not finite is [`SimError::BadTrackSpeed`] ([`Capabilities::tracks`]).
    fn set_track_speed(&mut self, k: usize, speed: f64) -> Result<(), SimError> {
        let _ = (k, speed);
        Err(unsupported(self.name(), "track surfaces (set_track_speed)"))
    }
    /// Applies a wrench to body `body` for `duration` seconds (whole steps, at least one) from
    /// the next step on: `force` at the body frame's origin and `torque`, both in world axes
    /// ([`Capabilities::wrenches`]).
    fn apply_wrench(&mut self, body: usize, force: Vec3, torque: Vec3, duration: f64) -> Result<(), SimError> {
        let _ = (body, force, torque, duration);
        Err(unsupported(self.name(), "external wrenches (apply_wrench)"))
    }
    /// Registers extra joint forces on one-dof joints `joints` (see [`crate::joint_forces`]),
    /// applied from the next step on ([`Capabilities::joint_forces`]).
    fn add_joint_forces(&mut self, joints: &[usize], forces: Box<dyn crate::JointForces>) -> Result<(), SimError> {
        let _ = (joints, forces);
        Err(unsupported(self.name(), "custom joint forces (add_joint_forces)"))
    }
    /// Everything the engine's next steps depend on (its state, and what the last step
    /// reported: sensor readings, applied actuator torques, contacts, diagnostics), as a
    /// serialisable value with every number exact; `World::snapshot` wraps it
    /// ([`Capabilities::checkpoints`]).
    fn save_state(&self) -> Result<serde_json::Value, SimError> {
        Err(unsupported(self.name(), "checkpoints (save_state)"))
    }
    /// Sets the engine to a state [`Engine::save_state`] of the same world gave; checks it
    /// whole before changing anything (on an error the engine is as it was).
    fn restore_state(&mut self, state: &serde_json::Value) -> Result<(), SimError> {
        let _ = state;
        Err(unsupported(self.name(), "checkpoints (restore_state)"))
    }
    /// Turns the wall-clock timing of the step's stages ([`Report::stage_times`]) on or off
    /// ([`Capabilities::stage_timing`]). Off by default: reading the clock between the stages
    /// costs more than some of them on small worlds.
    fn time_stages(&mut self, on: bool) -> Result<(), SimError> {
        let _ = on;
        Err(unsupported(self.name(), "stage timing (time_stages)"))
    }
    /// Sets the one-dof joints' positions (`q`) and / or velocities (`dq`), each over
    /// [`Description::joints`] (the world checks lengths and values), the rest of the state
    /// kept; the next step starts from it. The default: [`SimError::Unsupported`].
    fn set_joint_states(&mut self, q: Option<&[f64]>, dq: Option<&[f64]>) -> Result<(), SimError> {
        let _ = (q, dq);
        Err(unsupported(self.name(), "setting joint positions and velocities"))
    }
    /// The derivatives of the next step at the state now, `A = ∂x⁺/∂x` and `B = ∂x⁺/∂u`
    /// (state and input order: [`crate::derivatives`]), into `out`; nothing of the world
    /// changes. An engine that cannot, or a step it cannot differentiate, is
    /// [`SimError::Unsupported`] naming what (the default: the engine).
    fn step_derivatives(&mut self, out: &mut crate::derivatives::StepDerivatives) -> Result<(), SimError> {
        let _ = out;
        Err(unsupported(self.name(), "step derivatives (step_derivatives)"))
    }
    /// Changes a setting while running (the world has resolved the names and checked the
    /// values), in effect from the next step on; the engine refreshes whatever it derived
    /// from it (pair tables, stage plans, the kinematic terms). Returns how many collision
    /// shape pairs a contact-mode or self-collision change reached (0 for the others). The
    /// default: [`SimError::Unsupported`] naming the setting.
    fn change(&mut self, setting: &Setting) -> Result<usize, SimError> {
        Err(unsupported(self.name(), &format!("changing {} while running", setting.what())))
    }
}

/// A setting changed while running ([`Engine::change`], `World::set_*`): bodies by index into
/// [`Description::bodies`].
#[derive(Clone, Debug, PartialEq)]
pub enum Setting {
    /// Gravity (m/s², world axes).
    Gravity(Vec3),
    /// The contact mode of every pair of a body of `a` with a body of `b` (`a` and `b` may
    /// overlap; a body is never paired with itself). Pairs the world never collides (shapes
    /// on one joint, `collision_exclude_pairs`, parent and child, links overlapping at load,
    /// MuJoCo's filters) stay off.
    ContactMode {
        /// First group.
        a: Vec<usize>,
        /// Second group.
        b: Vec<usize>,
        /// The mode.
        mode: crate::scene::ContactMode,
    },
    /// The material of every collision shape of these bodies (replacing a pair's own
    /// material, such as an MJCF robot's `<pair>`, where one of them is involved).
    Material {
        /// The bodies.
        bodies: Vec<usize>,
        /// Their material.
        material: crate::scene::Material,
    },
    /// The contact block's numbers: thresholds, tolerance, correction rate, prediction
    /// distance, depenetration speed (its `mode` and `exclude_parent_child` are the pair
    /// table's: [`Setting::ContactMode`]).
    Contact(crate::scene::ContactParams),
    /// Whether the pairs among `bodies` (a robot's links) collide (`false`: none does; `true`:
    /// as loaded, with the modes set since).
    SelfCollision {
        /// The robot's bodies.
        bodies: Vec<usize>,
        /// Collide among themselves.
        on: bool,
    },
}

impl Setting {
    /// What it changes, for messages.
    pub fn what(&self) -> &'static str {
        match self {
            Setting::Gravity(_) => "gravity",
            Setting::ContactMode { .. } => "contact modes",
            Setting::Material { .. } => "materials",
            Setting::Contact(_) => "contact parameters",
            Setting::SelfCollision { .. } => "self-collision",
        }
    }
}

/// The error for a feature `engine` does not have.
pub(crate) fn unsupported(engine: &str, what: &str) -> SimError {
    SimError::Unsupported {
        engine: engine.to_string(),
        what: what.to_string(),
    }
}

/// What the world knows of a one-dof joint's bounds and drive ([`Description::joint_infos`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointInfo {
    /// Position limits `[lower, upper]` (rad or m), if the joint has any.
    pub limits: Option<[f64; 2]>,
    /// Its actuator, if any.
    pub actuator: Option<ActuatorInfo>,
}

/// A joint actuator's mode and limits (see docs/SCENE_FORMAT.md, Actuators).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ActuatorInfo {
    /// What its target is: a torque, a position or a speed.
    pub mode: crate::scene::ActuatorMode,
    /// Largest |torque| (force) it applies (∞: unlimited).
    pub effort_limit: f64,
    /// Largest |target speed| (∞: unlimited).
    pub velocity_limit: f64,
}
