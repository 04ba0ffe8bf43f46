//! Engines behind one trait, as Choreonoid's simulator items: an engine receives the world's
//! bodies (the [`Scene`]), builds its own representation once ([`Engine::load`]), then steps it
//! and writes the state back ([`Engine::write_states`]). [`crate::NativeEngine`] is the
//! reduced-coordinate engine of this crate; a wrapper around another physics library plugs in
//! by implementing the same trait and handing it to [`crate::World::with_engine`].

use std::time::Duration;

use karakuri::spatial::{Se3, Vec3};

use crate::scene::Scene;
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

/// Wall-clock time spent in each stage of the step pipeline.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimes {
    /// NaN / divergence guard.
    pub check_state: Duration,
    /// Kinematics, mass matrix and factorisation, collision, contact frames.
    pub position: Duration,
    /// Bias forces, passive forces.
    pub velocity: Duration,
    /// Actuation.
    pub actuation: Duration,
    /// Smooth acceleration and free velocity.
    pub acceleration: Duration,
    /// Constraint rows and solve.
    pub constraint: Duration,
    /// Configuration update.
    pub integrate: Duration,
    /// Body states, contact forces.
    pub sensors: Duration,
}

impl StageTimes {
    /// Adds another step's times.
    pub fn add(&mut self, o: &StageTimes) {
        self.check_state += o.check_state;
        self.position += o.position;
        self.velocity += o.velocity;
        self.actuation += o.actuation;
        self.acceleration += o.acceleration;
        self.constraint += o.constraint;
        self.integrate += o.integrate;
        self.sensors += o.sensors;
    }
    /// Sum of the stages.
    pub fn total(&self) -> Duration {
        self.check_state
            + self.position
            + self.velocity
            + self.actuation
            + self.acceleration
            + self.constraint
            + self.integrate
            + self.sensors
    }
}

/// A physics engine stepping a world.
pub trait Engine {
    /// Short name (`native`).
    fn name(&self) -> &str;
    /// Builds the engine's own representation of the scene's bodies (called once).
    fn load(&mut self, scene: &Scene) -> Result<Vec<BodyInfo>, SimError>;
    /// Non-fatal remarks of [`Engine::load`] (e.g. a URDF's repaired inertias), for the user.
    fn warnings(&self) -> &[String] {
        &[]
    }
    /// Advances by one time step.
    fn step(&mut self) -> Result<(), SimError>;
    /// Writes the current state of every body (in [`Engine::load`]'s order).
    fn write_states(&self, out: &mut [BodyState]);
    /// Simulated time (s).
    fn time(&self) -> f64;
    /// Steps taken.
    fn steps(&self) -> u64;
    /// The time step (s).
    fn dt(&self) -> f64;
    /// Contacts of the last step.
    fn contacts(&self) -> &[ContactInfo];
    /// Stage times of the last step.
    fn stage_times(&self) -> StageTimes;
    /// Total mechanical energy (kinetic + gravitational), J.
    fn energy(&self) -> f64;
    /// Sets joint torques (actuation) by joint name, applied from the next step on.
    fn set_joint_torque(&mut self, joint: &str, torque: f64) -> Result<(), SimError>;
}
