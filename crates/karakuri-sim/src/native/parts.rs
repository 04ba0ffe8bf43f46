//! The parts of the world's `SimModel` that the stage files define (the joint-force sets
//! and frictions, the sleep description, the sensors' sets): plain data below the
//! model that holds them, so that the model imports none of the stages that read them. Their
//! constructors from a built model are with their stages (`sleep.rs`, `sensors.rs`).

use crate::joint_forces::JointForces;
use crate::solver::Trees;

/// A [`JointForces`] registered for some one-dof joints.
pub struct JointForceSet {
    /// The joints' configuration indices.
    pub iq: Vec<usize>,
    /// Their velocity indices.
    pub dof: Vec<usize>,
    /// The forces.
    pub forces: Box<dyn JointForces>,
}

/// A joint's Coulomb friction: `|τ| ≤ friction`, sticking below it.
#[derive(Clone, Copy, Debug)]
pub struct JointFriction {
    /// Its velocity index.
    pub dof: usize,
    /// The largest friction torque (N·m) or force (N).
    pub friction: f64,
}

/// The sleep settings and the tree structure the stages read, built once with the model.
#[derive(Clone, Debug, Default)]
pub struct SleepModel {
    /// `engine.sleep.enabled` (and the semi-implicit Euler step: RK4 steps keep every tree awake).
    pub enabled: bool,
    /// Linear speed below which a body is still (m/s).
    pub linear: f64,
    /// Angular speed below which a body is still (rad/s).
    pub angular: f64,
    /// Steps an island's trees must all have been still to fall asleep (`time / dt`, at least 1).
    pub steps: u32,
    /// The model's trees.
    pub trees: Trees,
    /// Whether each tree may sleep at all `(trees)`.
    pub sleepable: Vec<bool>,
    /// Whether each tree is held by the world whatever it touches: rooted at the universe by
    /// a joint that is not free, or closed onto the world by a loop `(trees)`.
    pub held: Vec<bool>,
    /// Each tree's configuration range `(start, len)` in `q` `(trees)`.
    pub q_range: Vec<(usize, usize)>,
    /// Each collision shape's tree ([`crate::solver::NONE`]: static) `(shapes)`.
    pub shape_tree: Vec<u32>,
    /// The trees each loop closure links ([`crate::solver::NONE`]: the world) `(loops)`.
    pub loop_trees: Vec<[u32; 2]>,
}

/// What the wrench sensors read, decided once at load (built in `sensors.rs`): each sensor's
/// twin and each wrench sensor's child-side joints, so that a stage computes each body's
/// momentum (and its weight's moment) once, however many subtrees hold it, and looks no twin
/// up.
#[derive(Clone, Debug, Default)]
pub struct SensorSets {
    /// Each sensor's twin: an earlier wrench sensor on the same subtree at the same placement,
    /// bit for bit, whose readings are its own `(sensors)`.
    pub twins: Vec<Option<usize>>,
    /// Each wrench sensor's child-side joints, increasing (others: empty) `(sensors)`.
    pub subtrees: Vec<Vec<usize>>,
    /// The joints on the child side of some wrench sensor without a twin, increasing.
    pub bodies: Vec<usize>,
}
