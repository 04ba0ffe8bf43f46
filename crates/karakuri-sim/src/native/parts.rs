//! The parts of the world's `SimModel` that the stage files define (a scene perturbation's
//! [`Push`], the joint-force sets and frictions, the sleep description): plain data below the
//! model that holds them, so that the model imports none of the stages that read them. Their
//! constructors from a built model are with their stages (`sleep.rs`, `external.rs`).

use serde::{Deserialize, Serialize};

use crate::joint_forces::JointForces;
use crate::sparse::Trees;

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
    /// Each collision shape's tree ([`crate::sparse::NONE`]: static) `(shapes)`.
    pub shape_tree: Vec<u32>,
    /// The trees each loop closure links ([`crate::sparse::NONE`]: the world) `(loops)`.
    pub loop_trees: Vec<[u32; 2]>,
}
