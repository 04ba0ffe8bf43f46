//! Engines behind one trait, as Choreonoid's simulator items: an engine is built from the
//! world's [`crate::Scene`] (its own representation, once: `NativeEngine::new`), then
//! steps it and writes the state back ([`Engine::write_states`]). `NativeEngine` is
//! the reduced-coordinate engine of this crate; a wrapper around another physics library plugs
//! in by implementing the same trait and handing it to `World::with_engine`; the
//! world takes engines that are [`Send`], so worlds can be stepped on other threads
//! (`Batch`).

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

/// A physics engine stepping a world.
pub trait Engine {
    /// Short name (`native`).
    fn name(&self) -> &str;
    /// The bodies it simulates, in the order of [`Engine::write_states`].
    fn bodies(&self) -> &[BodyInfo];
    /// Non-fatal remarks of building the engine (e.g. a URDF's repaired inertias), for the user.
    fn warnings(&self) -> &[String] {
        &[]
    }
    /// Advances by one time step.
    fn step(&mut self) -> Result<(), SimError>;
    /// Writes the current state of every body (in [`Engine::bodies`]' order).
    fn write_states(&self, out: &mut [BodyState]);
    /// Simulated time (s).
    fn time(&self) -> f64;
    /// Steps taken.
    fn steps(&self) -> u64;
    /// The time step (s).
    fn dt(&self) -> f64;
    /// Contacts of the last step.
    fn contacts(&self) -> &[ContactInfo];
    /// Stage times of the last step (zeros while [`Engine::time_stages`] is off).
    fn stage_times(&self) -> StageTimes;
    /// Numerical trouble met so far (engines that do not watch report none).
    fn diagnostics(&self) -> Diagnostics {
        Diagnostics::default()
    }
    /// The last step's constraint solve: sweeps (the most over its islands) and final
    /// residual (engines without such a solve report zeros).
    fn last_solve(&self) -> crate::solver::SolveStats {
        crate::solver::SolveStats::default()
    }
    /// Total mechanical energy (kinetic + gravitational), J.
    fn energy(&self) -> f64;
    /// The sensors, in the order of [`Engine::readings`].
    fn sensors(&self) -> &[SensorInfo] {
        &[]
    }
    /// Each sensor's reading after the last step (sensor axes): `[x, y, z, 0, 0, 0]` for
    /// accelerometers and gyros, `[fx, fy, fz, tx, ty, tz]` for force sensors.
    fn readings(&self) -> &[[f64; 6]] {
        &[]
    }
    /// The names of the one-dof joints, in the order of [`Engine::write_joint_states`].
    fn one_dof_joints(&self) -> &[String] {
        &[]
    }
    /// Writes the state of every one-dof joint.
    fn write_joint_states(&self, _out: &mut [JointState]) {}
    /// Sets the target of a joint's actuator (torque, position or speed by its mode), used from
    /// the next step on; a non-finite target is [`SimError::BadCommand`].
    fn set_joint_target(&mut self, joint: &str, _target: f64) -> Result<(), SimError> {
        Err(SimError::NoActuator {
            joint: joint.to_string(),
        })
    }
    /// [`Engine::set_joint_target`] for the `k`-th joint of [`Engine::one_dof_joints`].
    fn set_one_dof_target(&mut self, k: usize, target: f64) -> Result<(), SimError> {
        let name = self.one_dof_joints()[k].clone();
        self.set_joint_target(&name, target)
    }
    /// The mode and effort limit (∞: none) of the `k`-th one-dof joint's actuator (`None`: it
    /// has none, or the engine does not say).
    fn one_dof_actuator(&self, _k: usize) -> Option<(crate::scene::ActuatorMode, f64)> {
        None
    }
    /// Registers extra joint forces on the named one-dof joints (see
    /// [`crate::joint_forces`]), applied from the next step on.
    fn add_joint_forces(&mut self, _joints: &[&str], _forces: Box<dyn crate::JointForces>) -> Result<(), SimError> {
        Err(SimError::Unsupported {
            engine: self.name().to_string(),
            what: "custom joint forces (add_joint_forces)".into(),
        })
    }
    /// Position of a one-dof joint by name (rad or m).
    fn joint_position(&self, joint: &str) -> Result<f64, SimError>;
    /// Velocity of a one-dof joint by name (rad/s or m/s).
    fn joint_velocity(&self, joint: &str) -> Result<f64, SimError>;
    /// The torque (force) set on a one-dof joint by name.
    fn joint_torque(&self, joint: &str) -> Result<f64, SimError>;
    /// Sets the torque (force) of a one-dof joint by name (actuation), applied from the next
    /// step on.
    fn set_joint_torque(&mut self, joint: &str, torque: f64) -> Result<(), SimError>;
    /// Applies a wrench to body `body` (index into [`Engine::bodies`]) for `duration` seconds
    /// (whole steps, at least one) from the next step on: `force` at the body frame's origin
    /// and `torque`, both in world axes.
    fn apply_wrench(&mut self, _body: usize, _force: Vec3, _torque: Vec3, _duration: f64) -> Result<(), SimError> {
        Err(SimError::Unsupported {
            engine: self.name().to_string(),
            what: "external wrenches (apply_wrench)".into(),
        })
    }
    /// Writes, for every one-dof joint (in [`Engine::one_dof_joints`]' order), the position its
    /// servo is commanded to at the current time (`Some` for joints with a position
    /// actuator, `None` for the others): with [`Engine::write_joint_states`], the tracking
    /// error.
    fn write_position_targets(&self, out: &mut [Option<f64>]) {
        out.fill(None);
    }
    /// Everything the engine's next steps depend on (its state, and what the last step
    /// reported: sensor readings, applied actuator torques, contacts, diagnostics), as a
    /// serialisable value with every number exact; `World::snapshot` wraps it.
    fn save_state(&self) -> Result<serde_json::Value, SimError> {
        Err(SimError::Unsupported {
            engine: self.name().to_string(),
            what: "checkpoints (save_state)".into(),
        })
    }
    /// Sets the engine to a state [`Engine::save_state`] of the same world gave; checks it
    /// whole before changing anything (on an error the engine is as it was).
    fn restore_state(&mut self, _state: &serde_json::Value) -> Result<(), SimError> {
        Err(SimError::Unsupported {
            engine: self.name().to_string(),
            what: "checkpoints (restore_state)".into(),
        })
    }
    /// The track surfaces (bodies with `track`) by name, in the order of
    /// [`Engine::track_speeds`].
    fn tracks(&self) -> &[String] {
        &[]
    }
    /// Each track's surface speed command (m/s).
    fn track_speeds(&self) -> &[f64] {
        &[]
    }
    /// Sets the surface speed (m/s) of the `k`-th track of [`Engine::tracks`], used from the
    /// next step on; a speed that is not finite is [`SimError::BadTrackSpeed`].
    fn set_track_speed(&mut self, k: usize, speed: f64) -> Result<(), SimError> {
        let _ = (k, speed);
        Err(SimError::Unsupported {
            engine: self.name().to_string(),
            what: "track surfaces (set_track_speed)".into(),
        })
    }
    /// Each one-dof joint's position limits and actuator, in the order of
    /// [`Engine::one_dof_joints`] (what a caller sizes its command and observation bounds
    /// from; engines that do not know report none). Allocates: call it once, not per step.
    fn joint_infos(&self) -> Vec<JointInfo> {
        vec![JointInfo::default(); self.one_dof_joints().len()]
    }
    /// How many bodies sleep after the last step (`engine.sleep`: at rest, not collided,
    /// solved or integrated until something acts on them).
    fn sleeping_bodies(&self) -> Result<usize, SimError> {
        Err(SimError::Unsupported {
            engine: self.name().to_string(),
            what: "sleeping bodies (sleeping_bodies)".into(),
        })
    }
    /// Turns the wall-clock timing of the step's stages ([`Engine::stage_times`]) on or off.
    /// Off by default: reading the clock between the stages costs more than some of them on
    /// small worlds, and [`Engine::stage_times`] then reports zeros.
    fn time_stages(&mut self, on: bool) -> Result<(), SimError> {
        let _ = on;
        Err(SimError::Unsupported {
            engine: self.name().to_string(),
            what: "stage timing (time_stages)".into(),
        })
    }
}

/// What the world knows of a one-dof joint's bounds and drive ([`Engine::joint_infos`]).
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
